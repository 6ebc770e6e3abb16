//! One mailbox transfer to one SubDevice, whatever its protocol: the glue between the
//! protocol client (a [`Transfer`]), the mailbox exchange ([`super::exchange`]) and whoever
//! carries datagrams — the blocking bus ([`super::blocking`]) or the acyclic frame engine
//! during cycling ([`MailboxJob::drive`], used by the runtime's service and the supervisor's
//! startup transfers alike).
//!
//! Each cycle a job sends at most two datagrams (e.g. a read of a waiting message and its
//! write), which ride in the same acyclic frame, and takes their answers in the next cycle.

use super::exchange::{Exchange, MailboxArea, Plan, Sm1, StepKind};
use super::op::MailboxOp;
use super::transfer::{Failure, Next, Transfer};
use crate::error::{Error, Who};
use crate::frame::{FrameEngine, Handle, Status};
use ecat_wire::coe::EmergencyRepr;
use ecat_wire::Command;

/// Default time one mailbox answer may take.
pub const MAILBOX_TIMEOUT_NS: u64 = 1_000_000_000;

/// What a read datagram carries out (read without allocating).
static ZEROS: [u8; ecat_wire::datagram::MAX_DATA] = [0; ecat_wire::datagram::MAX_DATA];

/// A datagram the job wants carried: (command, station, register, data to write or zeros to
/// read into).
pub type JobDatagram = (Command, u16, u16, Vec<u8>);

/// A mailbox transfer in progress. See the module documentation.
#[derive(Debug)]
pub struct MailboxJob {
    who: Who,
    transfer: Box<dyn Transfer>,
    exchange: Exchange,
    result: Option<Result<Vec<u8>, Error>>,
    emergencies: Vec<EmergencyRepr>,
    unsolicited: Vec<Vec<u8>>,
    /// Datagrams in flight (engine path), in frame order.
    inflight: [Option<(StepKind, Handle)>; 2],
    /// Listening only (one read of SM1), no transfer behind.
    listening: bool,
    /// The exchange posts a message (no answer awaited).
    posting: bool,
}

/// The former name of [`MailboxJob`] (it carries SDO transfers and every other protocol).
pub type SdoJob = MailboxJob;

impl MailboxJob {
    /// Start `op` on the SubDevice `who` with mailbox `area`, continuing its mailbox counter.
    pub fn new(
        who: Who,
        area: MailboxArea,
        op: impl Into<MailboxOp>,
        counter: u8,
        now: u64,
    ) -> MailboxJob {
        let transfer = op.into().transfer(area, counter);
        Self::with_transfer(who, area, transfer, now)
    }

    /// Start a transfer built by the caller.
    pub fn with_transfer(
        who: Who,
        area: MailboxArea,
        mut transfer: Box<dyn Transfer>,
        now: u64,
    ) -> MailboxJob {
        let first = transfer.start();
        let mut job = MailboxJob {
            who,
            exchange: Exchange::receive_only(area, 0, now, transfer.timeout_ns()),
            transfer,
            result: None,
            emergencies: Vec::new(),
            unsolicited: Vec::new(),
            inflight: [None, None],
            listening: false,
            posting: false,
        };
        job.follow(first, now);
        job
    }

    /// Read SM1 once: a message the SubDevice sent on its own (emergency) is waiting.
    pub fn listen(who: Who, area: MailboxArea, counter: u8, now: u64) -> MailboxJob {
        let mut job = Self::with_transfer(who, area, Box::new(Idle(counter)), now);
        job.exchange = Exchange::listen(area, now);
        job.listening = true;
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

    /// Messages of other protocols the SubDevice sent meanwhile (whole mailbox messages).
    pub fn take_unsolicited(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.unsolicited)
    }

    fn follow(&mut self, next: Next, now: u64) {
        let (accepts, timeout) = (self.accepts(), self.transfer.timeout_ns());
        self.posting = matches!(next, Next::Post(_));
        // The exchange and the message buffer are reused: no allocation per message.
        match next {
            Next::Post(msg) => {
                self.exchange.restart(Some(&msg), true, 0, now, timeout);
                self.transfer.recycle(msg);
            }
            Next::Send(msg) => {
                self.exchange
                    .restart(Some(&msg), false, accepts, now, timeout);
                self.transfer.recycle(msg);
            }
            Next::Receive => self.exchange.restart(None, false, accepts, now, timeout),
            Next::Done(data) => self.result = Some(Ok(data)),
            Next::Failed(f) => self.result = Some(Err(self.error(f))),
        }
    }

    fn accepts(&self) -> u16 {
        (0..16u8)
            .filter(|&k| self.transfer.accepts(k))
            .fold(0, |m, k| m | 1 << k)
    }

    fn error(&self, f: Failure) -> Error {
        let who = self.who.clone();
        match f {
            Failure::Abort(code) => Error::SdoAbort {
                who,
                what: self
                    .transfer
                    .describe()
                    .trim_start_matches("SDO ")
                    .to_string(),
                code,
            },
            Failure::Refused(reason) | Failure::Protocol(reason) => Error::Mailbox {
                who,
                what: self.transfer.describe(),
                reason,
            },
        }
    }

    /// The datagrams to carry now (at most two, for one frame), given what is known of SM1.
    pub fn plan(&mut self, now: u64, sm1: Sm1) -> Plan {
        if self.result.is_some() {
            return [None, None];
        }
        let plan = self.exchange.plan(now, sm1);
        if plan[0].is_none() {
            self.settle(now);
        }
        plan
    }

    /// The datagram of step `kind` of the current plan.
    pub fn datagram(&mut self, kind: StepKind) -> JobDatagram {
        let s = self.exchange.step(kind);
        let data = if s.read_len > 0 {
            vec![0; s.read_len]
        } else {
            s.data.to_vec()
        };
        (s.command, s.station, s.ado, data)
    }

    /// Take the answer to step `kind` (answers in the order planned; WKC 0 for a lost one).
    pub fn answer(&mut self, kind: StepKind, data: &[u8], wkc: u16, now: u64) {
        self.exchange.answer(kind, data, wkc);
        self.settle(now);
    }

    /// One cycle on the acyclic frame engine: [`MailboxJob::collect`] then
    /// [`MailboxJob::submit`]. Returns what `submit` returns.
    pub fn drive(&mut self, engine: &mut FrameEngine, now: u64, sm1: Sm1) -> bool {
        self.collect(engine, now) && self.submit(engine, now, sm1)
    }

    /// Take the answers to the datagrams in flight from the engine, if all have come.
    /// Returns false while one is still in flight.
    pub fn collect(&mut self, engine: &mut FrameEngine, now: u64) -> bool {
        if self
            .inflight
            .iter()
            .flatten()
            .any(|&(_, h)| engine.status(h) == Status::Pending)
        {
            return false;
        }
        for slot in &mut self.inflight {
            let Some((kind, h)) = slot.take() else {
                continue;
            };
            match engine.response(h) {
                Some((d, w)) if engine.status(h) == Status::Done => {
                    self.exchange.answer(kind, d, w)
                }
                _ => self.exchange.answer(kind, &[], 0),
            }
            engine.release(h);
        }
        self.settle(now);
        true
    }

    /// Submit this cycle's datagrams (after [`MailboxJob::collect`] said none is in flight).
    /// Returns true if SM0 was written or SM1 read (what the cyclic SM1 status showed before
    /// is stale then).
    pub fn submit(&mut self, engine: &mut FrameEngine, now: u64, sm1: Sm1) -> bool {
        if self.inflight.iter().any(|s| s.is_some()) {
            return false;
        }
        let mut sent = false;
        for (i, kind) in self.plan(now, sm1).into_iter().enumerate() {
            let Some(kind) = kind else { continue };
            let s = self.exchange.step(kind);
            let adr = s.station as u32 | (s.ado as u32) << 16;
            let data = if s.read_len > 0 {
                ZEROS.get(..s.read_len).unwrap_or(&ZEROS)
            } else {
                s.data
            };
            let r = engine.submit_with(s.command, adr, data, 0);
            if let Ok(h) = r {
                self.inflight[i] = Some((kind, h));
                sent |= matches!(kind, StepKind::Write | StepKind::Read);
            }
        }
        sent
    }

    fn settle(&mut self, now: u64) {
        self.emergencies.extend(self.exchange.take_emergencies());
        self.unsolicited.extend(self.exchange.take_unsolicited());
        let Some(r) = self.exchange.result() else {
            return;
        };
        match r {
            Ok(_) if self.listening => self.result = Some(Ok(Vec::new())),
            Ok(_) if self.posting => {
                let next = self.transfer.on_posted();
                self.follow(next, now);
            }
            Ok(msg) => {
                let next = self.transfer.on_response(msg);
                self.follow(next, now);
            }
            Err(e) => {
                self.result = Some(Err(Error::Mailbox {
                    who: self.who.clone(),
                    what: self.transfer.describe(),
                    reason: e.to_string(),
                }))
            }
        }
    }
}

/// The transfer behind a listening job: nothing to send, keeps the counter.
#[derive(Debug)]
struct Idle(u8);

impl Transfer for Idle {
    fn start(&mut self) -> Next {
        Next::Receive
    }
    fn on_response(&mut self, _: &[u8]) -> Next {
        Next::Done(Vec::new())
    }
    fn counter(&self) -> u8 {
        self.0
    }
    fn describe(&self) -> String {
        "read of a message the SubDevice sent on its own".into()
    }
    fn accepts(&self, _: u8) -> bool {
        false
    }
}
