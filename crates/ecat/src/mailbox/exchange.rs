//! One mailbox exchange: write a request into SM0, wait for the answer in SM1, read it.
//!
//! Sans-IO: [`Exchange::next`] says which datagram to send now (or nothing: waiting), and
//! [`Exchange::answer`] takes what came back. Steps:
//! - **write**: FPWR of the whole SM0 area (the last byte marks the mailbox full); WKC 0 means
//!   the SubDevice has not read the previous message yet: try again;
//! - **poll**: FPRD of the SM1 status byte until "mailbox full" (one byte per poll, so polling
//!   costs almost nothing on the wire);
//! - **read**: FPRD of the whole SM1 area (reading the last byte frees it). Emergencies that
//!   arrive meanwhile are kept aside and polling goes on; a mailbox error reply (type 0) ends
//!   the exchange with its decoded detail;
//! - **repeat**: if nothing arrives in time, toggle the repeat-request bit (0x080E bit 1) once
//!   and wait for the acknowledge (0x080F bit 1) — the SubDevice then puts its last answer
//!   into SM1 again (a lost read is recovered without resending the request).
//!
//! Exchanges that only receive (further fragments of an SDO Information answer) skip the write.

use ecat_wire::coe::{parse_coe, CoeService, EmergencyRepr};
use ecat_wire::mailbox::{parse_message, MailboxErrorCode, MailboxErrorRepr, MailboxType};
use ecat_wire::register::sm;
use ecat_wire::Command;

/// Where a SubDevice's mailbox is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MailboxArea {
    /// Station address.
    pub station: u16,
    /// SM0 (MainDevice → SubDevice) start and length.
    pub out: (u16, u16),
    /// SM1 (SubDevice → MainDevice) start and length.
    pub inp: (u16, u16),
}

/// Why an exchange failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExchangeError {
    /// No answer within the timeout, even after a repeat request.
    Timeout {
        /// Milliseconds waited.
        ms: u64,
    },
    /// The SubDevice answered with a mailbox error reply.
    MailboxError(MailboxErrorCode),
    /// The SubDevice stopped answering datagrams (WKC 0 where 1 was needed).
    NoAnswer,
    /// The answer could not be parsed.
    Garbled,
}

impl std::fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExchangeError::Timeout { ms } => write!(f, "no answer in the mailbox within {ms} ms"),
            ExchangeError::MailboxError(c) => write!(f, "mailbox error reply {c}"),
            ExchangeError::NoAnswer => {
                f.write_str("the SubDevice does not answer its mailbox registers")
            }
            ExchangeError::Garbled => f.write_str("the mailbox answer cannot be decoded"),
        }
    }
}

/// A datagram the exchange wants sent: command, station, register, and either data to write
/// or a length to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step<'a> {
    /// FPRD or FPWR.
    pub command: Command,
    /// Station address.
    pub station: u16,
    /// Register / memory address.
    pub ado: u16,
    /// For writes: the data. For reads: empty (see `read_len`).
    pub data: &'a [u8],
    /// For reads: bytes to read.
    pub read_len: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Write,
    Poll,
    Read,
    RepeatRead,
    RepeatWrite { activate: u8 },
    RepeatWait { want: bool },
    Done,
    Failed,
}

/// One request/answer exchange over a mailbox. See the module documentation.
#[derive(Debug)]
pub struct Exchange {
    area: MailboxArea,
    request: Vec<u8>,
    state: State,
    deadline: u64,
    timeout_ns: u64,
    repeated: bool,
    scratch: [u8; 1],
    response: Vec<u8>,
    emergencies: Vec<EmergencyRepr>,
    error: Option<ExchangeError>,
}

impl Exchange {
    /// Send `message` (a whole mailbox message, header included) and wait for the answer.
    pub fn new(area: MailboxArea, message: &[u8], now: u64, timeout_ns: u64) -> Exchange {
        let mut request = vec![0u8; area.out.1 as usize];
        let n = message.len().min(request.len());
        request[..n].copy_from_slice(&message[..n]);
        Exchange {
            area,
            request,
            state: State::Write,
            deadline: now + timeout_ns,
            timeout_ns,
            repeated: false,
            scratch: [0],
            response: Vec::new(),
            emergencies: Vec::new(),
            error: None,
        }
    }

    /// Only wait for the next message (no request), e.g. a further SDO Information fragment.
    pub fn receive_only(area: MailboxArea, now: u64, timeout_ns: u64) -> Exchange {
        let mut e = Exchange::new(area, &[], now, timeout_ns);
        e.request.clear();
        e.state = State::Poll;
        e
    }

    /// True when finished (successfully or not).
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done | State::Failed)
    }

    /// The answer (a whole mailbox message) once done, or the error.
    pub fn result(&self) -> Option<Result<&[u8], ExchangeError>> {
        match self.state {
            State::Done => Some(Ok(&self.response)),
            State::Failed => Some(Err(self.error.clone().unwrap_or(ExchangeError::Garbled))),
            _ => None,
        }
    }

    /// Emergencies received while waiting.
    pub fn take_emergencies(&mut self) -> Vec<EmergencyRepr> {
        std::mem::take(&mut self.emergencies)
    }

    fn fail(&mut self, e: ExchangeError) {
        self.error = Some(e);
        self.state = State::Failed;
    }

    /// The datagram to send now, if any.
    pub fn next(&mut self, now: u64) -> Option<Step<'_>> {
        if matches!(
            self.state,
            State::Poll | State::Write | State::RepeatWait { .. }
        ) && now > self.deadline
        {
            if self.repeated || self.state == State::Write {
                let ms = self.timeout_ns * if self.repeated { 2 } else { 1 } / 1_000_000;
                self.fail(ExchangeError::Timeout { ms });
                return None;
            }
            self.repeated = true;
            self.deadline = now + self.timeout_ns;
            self.state = State::RepeatRead;
        }
        let st = self.area.station;
        let (sm1_start, sm1_len) = self.area.inp;
        let read = |ado, len| Step {
            command: Command::Fprd,
            station: st,
            ado,
            data: &[],
            read_len: len,
        };
        Some(match self.state {
            State::Write => Step {
                command: Command::Fpwr,
                station: st,
                ado: self.area.out.0,
                data: &self.request,
                read_len: 0,
            },
            State::Poll => read(sm(1) + 5, 1),
            State::Read => read(sm1_start, sm1_len as usize),
            State::RepeatRead => read(sm(1) + 6, 1),
            State::RepeatWrite { activate } => {
                self.scratch[0] = activate;
                Step {
                    command: Command::Fpwr,
                    station: st,
                    ado: sm(1) + 6,
                    data: &self.scratch,
                    read_len: 0,
                }
            }
            State::RepeatWait { .. } => read(sm(1) + 7, 1),
            State::Done | State::Failed => return None,
        })
    }

    /// Take the answer to the last datagram from [`Exchange::next`].
    pub fn answer(&mut self, data: &[u8], wkc: u16, now: u64) {
        let _ = now;
        match self.state {
            State::Write => {
                if wkc == 1 {
                    self.state = State::Poll;
                }
                // WKC 0: SM0 still full; write again next time.
            }
            State::Poll => match (wkc, data.first()) {
                (1, Some(s)) if s & 0x08 != 0 => self.state = State::Read,
                (1, _) => {}
                _ => self.fail(ExchangeError::NoAnswer),
            },
            State::Read => {
                if wkc != 1 {
                    self.state = State::Poll;
                    return;
                }
                self.take_message(data);
            }
            State::RepeatRead => match (wkc, data.first()) {
                (1, Some(&a)) => self.state = State::RepeatWrite { activate: a ^ 0x02 },
                _ => self.fail(ExchangeError::NoAnswer),
            },
            State::RepeatWrite { activate } => {
                if wkc == 1 {
                    self.state = State::RepeatWait {
                        want: activate & 0x02 != 0,
                    };
                } else {
                    self.fail(ExchangeError::NoAnswer);
                }
            }
            State::RepeatWait { want } => match (wkc, data.first()) {
                (1, Some(&p)) if (p & 0x02 != 0) == want => self.state = State::Poll,
                (1, _) => {}
                _ => self.fail(ExchangeError::NoAnswer),
            },
            State::Done | State::Failed => {}
        }
    }

    fn take_message(&mut self, data: &[u8]) {
        let Ok((h, payload)) = parse_message(data) else {
            self.fail(ExchangeError::Garbled);
            return;
        };
        let total = 6 + payload.len();
        match h.kind {
            MailboxType::Err => {
                let code = MailboxErrorRepr::parse(payload)
                    .map(|e| e.detail)
                    .unwrap_or(MailboxErrorCode(0));
                self.fail(ExchangeError::MailboxError(code));
            }
            MailboxType::Coe => {
                if let Ok((_, coe, body)) = parse_coe(&data[..total]) {
                    if coe.service == CoeService::Emergency {
                        if let Ok(e) = EmergencyRepr::parse(body) {
                            if self.emergencies.len() < 64 {
                                self.emergencies.push(e);
                            }
                        }
                        self.state = State::Poll;
                        return;
                    }
                }
                self.response.clear();
                self.response.extend_from_slice(&data[..total]);
                self.state = State::Done;
            }
            _ => {
                self.response.clear();
                self.response.extend_from_slice(&data[..total]);
                self.state = State::Done;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat_wire::coe::sdo::{emit_expedited_upload_response, emit_upload_request};

    const AREA: MailboxArea = MailboxArea {
        station: 0x1001,
        out: (0x1000, 128),
        inp: (0x1080, 128),
    };

    #[test]
    fn write_poll_read() {
        let mut req = [0u8; 16];
        let n = emit_upload_request(&mut req, 1, 0x1018, 1, false).unwrap();
        let mut x = Exchange::new(AREA, &req[..n], 0, 1_000_000);
        let s = x.next(0).unwrap();
        assert_eq!(
            (s.command, s.ado, s.data.len()),
            (Command::Fpwr, 0x1000, 128)
        );
        assert_eq!(&s.data[..n], &req[..n]);
        x.answer(&[], 0, 1); // SM0 full: write again
        assert_eq!(x.next(1).unwrap().command, Command::Fpwr);
        x.answer(&[], 1, 2);
        let s = x.next(2).unwrap();
        assert_eq!((s.command, s.ado, s.read_len), (Command::Fprd, 0x080D, 1));
        x.answer(&[0x00], 1, 3);
        x.answer(&[0x08], 1, 4);
        let s = x.next(4).unwrap();
        assert_eq!((s.ado, s.read_len), (0x1080, 128));
        let mut resp = [0u8; 128];
        emit_expedited_upload_response(&mut resp, 1, 0x1018, 1, false, &[2, 0, 0, 0]).unwrap();
        x.answer(&resp, 1, 5);
        assert!(x.is_done());
        let r = x.result().unwrap().unwrap();
        assert_eq!(r.len(), 16);
    }

    #[test]
    fn timeout_repeats_once_then_fails() {
        let mut x = Exchange::new(AREA, &[0u8; 16], 0, 1000);
        x.next(0);
        x.answer(&[], 1, 0);
        x.next(10);
        x.answer(&[0], 1, 10);
        let s = x.next(2000).unwrap();
        assert_eq!((s.ado, s.read_len), (0x080E, 1), "repeat: read activate");
        x.answer(&[0x01], 1, 2000);
        let s = x.next(2001).unwrap();
        assert_eq!(
            (s.command, s.ado, s.data),
            (Command::Fpwr, 0x080E, &[0x03][..])
        );
        x.answer(&[], 1, 2001);
        assert_eq!(x.next(2002).unwrap().ado, 0x080F);
        x.answer(&[0x02], 1, 2002);
        assert_eq!(x.next(2003).unwrap().ado, 0x080D, "back to polling");
        x.answer(&[0], 1, 2003);
        assert!(x.next(4000).is_none());
        assert_eq!(
            x.result().unwrap().unwrap_err(),
            ExchangeError::Timeout { ms: 0 }
        );
    }

    #[test]
    fn mailbox_error_reply_and_emergency() {
        let mut x = Exchange::new(AREA, &[0u8; 16], 0, 1_000_000);
        x.next(0);
        x.answer(&[], 1, 0);
        x.next(0);
        x.answer(&[8], 1, 0);
        // An emergency first: kept aside, polling goes on.
        let mut m = [0u8; 128];
        ecat_wire::coe::emit_emergency(
            &mut m,
            1,
            &EmergencyRepr {
                error_code: 0x8611,
                error_register: 0x80,
                data: [1, 2, 3, 4, 5],
            },
        )
        .unwrap();
        x.next(0);
        x.answer(&m, 1, 0);
        assert_eq!(x.take_emergencies().len(), 1);
        x.next(0);
        x.answer(&[8], 1, 0);
        let mut e = [0u8; 128];
        ecat_wire::mailbox::emit_error_reply(&mut e, 2, MailboxErrorCode(0x0002)).unwrap();
        x.next(0);
        x.answer(&e, 1, 0);
        assert_eq!(
            x.result().unwrap().unwrap_err(),
            ExchangeError::MailboxError(MailboxErrorCode(2))
        );
    }
}
