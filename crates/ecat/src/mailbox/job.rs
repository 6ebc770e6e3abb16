//! One SDO transfer to one SubDevice, stepped one datagram at a time: the glue between the
//! SDO client ([`super::sdo`]), the mailbox exchange ([`super::exchange`]) and whoever carries
//! datagrams (the blocking bus, or the acyclic frame engine during cycling).

use super::exchange::{Exchange, MailboxArea};
use super::sdo::{Next, SdoError, SdoOp, SdoTransfer};
use crate::error::{Error, Who};
use ecat_wire::coe::EmergencyRepr;
use ecat_wire::Command;

/// Default time one mailbox answer may take.
pub const MAILBOX_TIMEOUT_NS: u64 = 1_000_000_000;

/// A datagram the job wants carried: (command, station, register, data to write or zeros to
/// read into).
pub type JobDatagram = (Command, u16, u16, Vec<u8>);

/// An SDO transfer in progress.
#[derive(Debug)]
pub struct SdoJob {
    who: Who,
    area: MailboxArea,
    transfer: SdoTransfer,
    exchange: Exchange,
    timeout_ns: u64,
    result: Option<Result<Vec<u8>, Error>>,
    emergencies: Vec<EmergencyRepr>,
}

impl SdoJob {
    /// Start `op` on the SubDevice `who` with mailbox `area`, continuing its mailbox counter.
    pub fn new(who: Who, area: MailboxArea, op: SdoOp, counter: u8, now: u64) -> SdoJob {
        let mut transfer = SdoTransfer::new(op, area.out.1, counter);
        let first = transfer.start();
        let mut job = SdoJob {
            who,
            area,
            exchange: Exchange::receive_only(area, now, MAILBOX_TIMEOUT_NS),
            transfer,
            timeout_ns: MAILBOX_TIMEOUT_NS,
            result: None,
            emergencies: Vec::new(),
        };
        job.follow(first, now);
        job
    }

    /// The mailbox counter to continue with after this job.
    pub fn counter(&self) -> u8 {
        self.transfer.counter()
    }

    /// Finished?
    pub fn is_done(&self) -> bool {
        self.result.is_some()
    }

    /// The result once done.
    pub fn take_result(&mut self) -> Option<Result<Vec<u8>, Error>> {
        self.result.take()
    }

    /// Emergencies the SubDevice sent meanwhile.
    pub fn take_emergencies(&mut self) -> Vec<EmergencyRepr> {
        std::mem::take(&mut self.emergencies)
    }

    fn what(&self) -> String {
        self.transfer.op().describe()
    }

    fn follow(&mut self, next: Next, now: u64) {
        match next {
            Next::Send(msg) => self.exchange = Exchange::new(self.area, &msg, now, self.timeout_ns),
            Next::Receive => {
                self.exchange = Exchange::receive_only(self.area, now, self.timeout_ns)
            }
            Next::Done(data) => self.result = Some(Ok(data)),
            Next::Failed(SdoError::Abort(code)) => {
                self.result = Some(Err(Error::SdoAbort {
                    who: self.who.clone(),
                    what: self.what(),
                    code,
                }))
            }
            Next::Failed(SdoError::Protocol(reason)) => {
                self.result = Some(Err(Error::Mailbox {
                    who: self.who.clone(),
                    what: self.what(),
                    reason,
                }))
            }
        }
    }

    /// The next datagram to carry, if any is needed now.
    pub fn next_datagram(&mut self, now: u64) -> Option<JobDatagram> {
        if self.result.is_some() {
            return None;
        }
        let step = match self.exchange.next(now) {
            Some(s) => (
                s.command,
                s.station,
                s.ado,
                if s.read_len > 0 {
                    vec![0; s.read_len]
                } else {
                    s.data.to_vec()
                },
            ),
            None => {
                self.settle(now);
                return None;
            }
        };
        Some(step)
    }

    /// Take the answer to the last datagram.
    pub fn answer(&mut self, data: &[u8], wkc: u16, now: u64) {
        self.exchange.answer(data, wkc, now);
        self.settle(now);
    }

    fn settle(&mut self, now: u64) {
        self.emergencies.extend(self.exchange.take_emergencies());
        let Some(r) = self.exchange.result() else {
            return;
        };
        match r {
            Ok(msg) => {
                let msg = msg.to_vec();
                let next = self.transfer.on_response(&msg);
                self.follow(next, now);
            }
            Err(e) => {
                self.result = Some(Err(Error::Mailbox {
                    who: self.who.clone(),
                    what: self.what(),
                    reason: e.to_string(),
                }))
            }
        }
    }
}
