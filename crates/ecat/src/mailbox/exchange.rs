//! One mailbox exchange: write a request into SM0, wait for the answer in SM1, read it.
//!
//! Sans-IO: [`Exchange::plan`] says which datagrams to send this cycle (at most two, so they
//! ride in one frame), [`Exchange::step`] gives each one's bytes, and [`Exchange::answer`]
//! takes what came back, in order. Steps:
//! - **write**: FPWR of the whole SM0 area (the last byte marks the mailbox full); WKC 0 means
//!   the SubDevice has not read the previous message yet: try again. When the cyclic SM1
//!   status says a message is already waiting (an emergency), its read rides in the same
//!   frame;
//! - **wait**: what the MainDevice knows of SM1's "mailbox full" bit ([`Sm1`]) decides. From a
//!   cyclic frame that passed the SubDevice after our last access (an FMMU maps the bit into
//!   the process image, see [`crate::runtime`]): full → read, empty → send nothing. Unknown
//!   (no mapping, or no fresh observation yet): read SM1 speculatively for the first
//!   [`SPECULATIVE_READS`] tries — a read of an empty mailbox SM is refused with WKC 0 and
//!   changes nothing on a real ESC — then poll the SM1 status byte (FPRD 0x080D, one byte);
//! - **read**: FPRD of the whole SM1 area (reading the last byte frees it). Emergencies and
//!   messages of other protocols that arrive meanwhile are kept aside and waiting goes on; a
//!   mailbox error reply (type 0) ends the exchange with its decoded detail;
//! - **repeat**: if nothing arrives in time, toggle the repeat-request bit (0x080E bit 1) once
//!   and wait for the acknowledge (0x080F bit 1) — the SubDevice then puts its last answer
//!   into SM1 again (a lost read is recovered without resending the request).
//!
//! Exchanges that only receive (further fragments) skip the write; a *listening* exchange
//! ([`Exchange::listen`]) reads SM1 once (a message the SubDevice sent on its own).

use ecat_wire::coe::{parse_coe, CoeService, EmergencyRepr};
use ecat_wire::mailbox::{parse_message, MailboxErrorCode, MailboxErrorRepr, MailboxType};
use ecat_wire::register::sm;
use ecat_wire::Command;

/// Reads of SM1 tried right after a write before falling back to polling its status byte,
/// when the cyclic frames do not tell whether it is full.
pub const SPECULATIVE_READS: u8 = 2;

/// Unsolicited messages kept per exchange (beyond this they are dropped).
const KEEP: usize = 16;

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

/// What the MainDevice knows of SM1's "mailbox full" bit now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sm1 {
    /// Nothing fresh (no cyclic mapping, or not observed since the last access).
    Unknown,
    /// A message waits.
    Full,
    /// Nothing waits.
    Empty,
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

/// Which datagram of an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// FPWR of SM0 (the request).
    Write,
    /// FPRD of the SM1 status byte.
    Status,
    /// FPRD of the whole SM1 area.
    Read,
    /// FPRD of SM1 activate (repeat request, first step).
    RepeatRead,
    /// FPWR of SM1 activate with the repeat bit toggled.
    RepeatWrite,
    /// FPRD of SM1 PDI control (repeat acknowledge).
    RepeatWait,
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

/// The datagrams of one cycle, in frame order.
pub type Plan = [Option<StepKind>; 2];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Write,
    /// Waiting for the answer: reads tried so far, and whether the status byte said full.
    Wait {
        tries: u8,
        full: bool,
    },
    RepeatRead,
    RepeatWrite {
        activate: u8,
    },
    RepeatWait {
        want: bool,
    },
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
    /// Mailbox types (bit per type) that answer this exchange.
    accepts: u16,
    /// Listening: end after one read, whatever it brings.
    once: bool,
    /// Posting: end once SM0 took the message.
    post: bool,
    scratch: [u8; 1],
    response: Vec<u8>,
    emergencies: Vec<EmergencyRepr>,
    unsolicited: Vec<Vec<u8>>,
    error: Option<ExchangeError>,
}

impl Exchange {
    /// Send `message` (a whole mailbox message, header included) and wait for the answer, a
    /// message of a type in `accepts` (bit n for mailbox type n).
    pub fn new(
        area: MailboxArea,
        message: &[u8],
        accepts: u16,
        now: u64,
        timeout_ns: u64,
    ) -> Exchange {
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
            accepts,
            once: false,
            post: false,
            scratch: [0],
            response: Vec::new(),
            emergencies: Vec::new(),
            unsolicited: Vec::new(),
            error: None,
        }
    }

    /// Start over with the next message of the same transfer, keeping the buffers (no
    /// allocation once they have grown to the mailbox size): `Some(message)` to send (or post,
    /// with `post`), `None` to only wait for the next message, as [`Exchange::new`],
    /// [`Exchange::post`] and [`Exchange::receive_only`] do. Emergencies and messages kept
    /// aside stay until taken.
    pub fn restart(
        &mut self,
        message: Option<&[u8]>,
        post: bool,
        accepts: u16,
        now: u64,
        timeout_ns: u64,
    ) {
        self.request.clear();
        self.state = State::Wait {
            tries: 0,
            full: false,
        };
        if let Some(m) = message {
            let size = self.area.out.1 as usize;
            let n = m.len().min(size);
            self.request.extend_from_slice(&m[..n]);
            self.request.resize(size, 0);
            self.state = State::Write;
        }
        self.deadline = now + timeout_ns;
        self.timeout_ns = timeout_ns;
        self.repeated = false;
        self.accepts = accepts;
        self.once = false;
        self.post = post && message.is_some();
        self.response.clear();
        self.error = None;
    }

    /// Write `message` and end once the SubDevice's SM0 took it (no answer awaited).
    pub fn post(area: MailboxArea, message: &[u8], now: u64, timeout_ns: u64) -> Exchange {
        let mut e = Exchange::new(area, message, 0, now, timeout_ns);
        e.post = true;
        e
    }

    /// Only wait for the next message (no request), e.g. a further fragment.
    pub fn receive_only(area: MailboxArea, accepts: u16, now: u64, timeout_ns: u64) -> Exchange {
        let mut e = Exchange {
            request: Vec::new(),
            ..Exchange::new(area, &[], accepts, now, timeout_ns)
        };
        e.state = State::Wait {
            tries: 0,
            full: false,
        };
        e
    }

    /// Read SM1 once (the cyclic status said full): emergencies and other messages the
    /// SubDevice sent on its own are kept aside ([`Exchange::take_emergencies`],
    /// [`Exchange::take_unsolicited`]); finished after that one read.
    pub fn listen(area: MailboxArea, now: u64) -> Exchange {
        let mut e = Exchange::receive_only(area, 0, now, 0);
        e.once = true;
        e.deadline = u64::MAX;
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

    /// Messages of other protocols (or sent unasked) received while waiting.
    pub fn take_unsolicited(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.unsolicited)
    }

    fn fail(&mut self, e: ExchangeError) {
        self.error = Some(e);
        self.state = State::Failed;
    }

    /// The datagrams to send now (none: waiting, or finished), given what is known of SM1.
    pub fn plan(&mut self, now: u64, sm1: Sm1) -> Plan {
        if matches!(
            self.state,
            State::Wait { .. } | State::Write | State::RepeatWait { .. }
        ) && now > self.deadline
        {
            if self.repeated || self.state == State::Write {
                let ms = self.timeout_ns * if self.repeated { 2 } else { 1 } / 1_000_000;
                self.fail(ExchangeError::Timeout { ms });
                return [None, None];
            }
            self.repeated = true;
            self.deadline = now + self.timeout_ns;
            self.state = State::RepeatRead;
        }
        match self.state {
            State::Write if sm1 == Sm1::Full => [Some(StepKind::Read), Some(StepKind::Write)],
            State::Write => [Some(StepKind::Write), None],
            State::Wait { full: true, .. } => [Some(StepKind::Read), None],
            State::Wait { tries, .. } => match sm1 {
                Sm1::Full => [Some(StepKind::Read), None],
                Sm1::Empty => [None, None],
                Sm1::Unknown if tries < SPECULATIVE_READS || self.once => {
                    [Some(StepKind::Read), None]
                }
                Sm1::Unknown => [Some(StepKind::Status), None],
            },
            State::RepeatRead => [Some(StepKind::RepeatRead), None],
            State::RepeatWrite { .. } => [Some(StepKind::RepeatWrite), None],
            State::RepeatWait { .. } => [Some(StepKind::RepeatWait), None],
            State::Done | State::Failed => [None, None],
        }
    }

    /// The datagram of step `kind`.
    pub fn step(&mut self, kind: StepKind) -> Step<'_> {
        let st = self.area.station;
        let read = |ado, len| Step {
            command: Command::Fprd,
            station: st,
            ado,
            data: &[],
            read_len: len,
        };
        match kind {
            StepKind::Write => Step {
                command: Command::Fpwr,
                station: st,
                ado: self.area.out.0,
                data: &self.request,
                read_len: 0,
            },
            StepKind::Status => read(sm(1) + 5, 1),
            StepKind::Read => read(self.area.inp.0, self.area.inp.1 as usize),
            StepKind::RepeatRead => read(sm(1) + 6, 1),
            StepKind::RepeatWrite => {
                if let State::RepeatWrite { activate } = self.state {
                    self.scratch[0] = activate;
                }
                Step {
                    command: Command::Fpwr,
                    station: st,
                    ado: sm(1) + 6,
                    data: &self.scratch,
                    read_len: 0,
                }
            }
            StepKind::RepeatWait => read(sm(1) + 7, 1),
        }
    }

    /// Take the answer to step `kind` (in the order planned). A step that got no answer at
    /// all (lost frame) is answered with WKC 0.
    pub fn answer(&mut self, kind: StepKind, data: &[u8], wkc: u16) {
        match (kind, self.state) {
            (_, State::Done | State::Failed) => {}
            (StepKind::Write, State::Write) => {
                if wkc == 1 && self.post {
                    self.response.clear();
                    self.state = State::Done;
                } else if wkc == 1 {
                    self.state = State::Wait {
                        tries: 0,
                        full: false,
                    };
                }
                // WKC 0: SM0 still full; write again next time.
            }
            // Read before our request went out: whatever it is, it is not our answer.
            (StepKind::Read, State::Write) if wkc == 1 => self.keep_aside(data),
            (StepKind::Read, State::Wait { tries, .. }) => {
                if wkc == 1 {
                    self.take_message(data);
                } else {
                    self.state = State::Wait {
                        tries: tries.saturating_add(1),
                        full: false,
                    };
                }
                if self.once && !self.is_done() {
                    self.state = State::Done;
                }
            }
            (StepKind::Status, State::Wait { tries, .. }) => match (wkc, data.first()) {
                (1, Some(s)) => {
                    self.state = State::Wait {
                        tries,
                        full: s & 0x08 != 0,
                    }
                }
                _ => self.fail(ExchangeError::NoAnswer),
            },
            (StepKind::RepeatRead, State::RepeatRead) => match (wkc, data.first()) {
                (1, Some(&a)) => self.state = State::RepeatWrite { activate: a ^ 0x02 },
                _ => self.fail(ExchangeError::NoAnswer),
            },
            (StepKind::RepeatWrite, State::RepeatWrite { activate }) => {
                if wkc == 1 {
                    self.state = State::RepeatWait {
                        want: activate & 0x02 != 0,
                    };
                } else {
                    self.fail(ExchangeError::NoAnswer);
                }
            }
            (StepKind::RepeatWait, State::RepeatWait { want }) => match (wkc, data.first()) {
                (1, Some(&p)) if (p & 0x02 != 0) == want => {
                    self.state = State::Wait {
                        tries: 0,
                        full: false,
                    }
                }
                (1, _) => {}
                _ => self.fail(ExchangeError::NoAnswer),
            },
            _ => {} // an answer to a step of an earlier state: nothing to learn
        }
    }

    /// An emergency, or a message nobody asked for: kept for the caller.
    fn keep_aside(&mut self, data: &[u8]) {
        let Ok((h, payload)) = parse_message(data) else {
            return;
        };
        let total = 6 + payload.len();
        if h.kind == MailboxType::Coe {
            if let Ok((_, coe, body)) = parse_coe(&data[..total]) {
                if coe.service == CoeService::Emergency {
                    if let Ok(e) = EmergencyRepr::parse(body) {
                        if self.emergencies.len() < 64 {
                            self.emergencies.push(e);
                        }
                    }
                    return;
                }
            }
        }
        if self.unsolicited.len() < KEEP {
            self.unsolicited.push(data[..total].to_vec());
        }
    }

    fn take_message(&mut self, data: &[u8]) {
        let Ok((h, payload)) = parse_message(data) else {
            self.fail(ExchangeError::Garbled);
            return;
        };
        let total = 6 + payload.len();
        let emergency = h.kind == MailboxType::Coe
            && parse_coe(&data[..total]).is_ok_and(|(_, c, _)| c.service == CoeService::Emergency);
        if h.kind == MailboxType::Err && !self.once {
            let code = MailboxErrorRepr::parse(payload)
                .map(|e| e.detail)
                .unwrap_or(MailboxErrorCode(0));
            self.fail(ExchangeError::MailboxError(code));
        } else if emergency || self.accepts & (1 << (h.kind as u16)) == 0 {
            self.keep_aside(data);
            self.state = State::Wait {
                tries: 0,
                full: false,
            };
        } else {
            self.response.clear();
            self.response.extend_from_slice(&data[..total]);
            self.state = State::Done;
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
    const COE: u16 = 1 << 3;
    use StepKind::*;

    fn one(x: &mut Exchange, now: u64, sm1: Sm1) -> StepKind {
        match x.plan(now, sm1) {
            [Some(k), None] => k,
            other => panic!("expected one step, got {other:?}"),
        }
    }

    fn answer() -> [u8; 128] {
        let mut resp = [0u8; 128];
        emit_expedited_upload_response(&mut resp, 1, 0x1018, 1, false, &[2, 0, 0, 0]).unwrap();
        resp
    }

    #[test]
    fn write_then_speculative_reads_then_status_polls() {
        let mut req = [0u8; 16];
        let n = emit_upload_request(&mut req, 1, 0x1018, 1, false).unwrap();
        let mut x = Exchange::new(AREA, &req[..n], COE, 0, 1_000_000);
        assert_eq!(one(&mut x, 0, Sm1::Unknown), Write);
        let s = x.step(Write);
        assert_eq!(
            (s.command, s.ado, s.data.len()),
            (Command::Fpwr, 0x1000, 128)
        );
        assert_eq!(&s.data[..n], &req[..n]);
        x.answer(Write, &[], 0); // SM0 full: write again
        assert_eq!(one(&mut x, 1, Sm1::Unknown), Write);
        x.answer(Write, &[], 1);
        // Nothing known of SM1: read it right away (an empty mailbox answers WKC 0).
        for t in 0..SPECULATIVE_READS {
            assert_eq!(one(&mut x, 2, Sm1::Unknown), Read, "speculative read {t}");
            let s = x.step(Read);
            assert_eq!((s.command, s.ado, s.read_len), (Command::Fprd, 0x1080, 128));
            x.answer(Read, &[], 0);
        }
        // Then the one-byte status poll.
        assert_eq!(one(&mut x, 3, Sm1::Unknown), Status);
        let s = x.step(Status);
        assert_eq!((s.ado, s.read_len), (0x080D, 1));
        x.answer(Status, &[0x00], 1);
        assert_eq!(one(&mut x, 4, Sm1::Unknown), Status);
        x.answer(Status, &[0x08], 1);
        assert_eq!(one(&mut x, 5, Sm1::Unknown), Read);
        x.answer(Read, &answer(), 1);
        assert!(x.is_done());
        assert_eq!(x.result().unwrap().unwrap().len(), 16);
    }

    #[test]
    fn cyclic_status_steers_reads_and_shares_the_frame_with_the_write() {
        let mut x = Exchange::new(AREA, &[0x0a, 0, 0, 0, 0, 0x03], COE, 0, 1_000_000);
        // A message already waits in SM1: read it in the same frame as the write.
        assert_eq!(x.plan(0, Sm1::Full), [Some(Read), Some(Write)]);
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
        x.answer(Read, &m, 1);
        x.answer(Write, &[], 1);
        assert_eq!(x.take_emergencies().len(), 1);
        assert!(!x.is_done(), "the emergency is not the answer");
        // Known empty: nothing sent; known full: read.
        assert_eq!(x.plan(1, Sm1::Empty), [None, None]);
        assert_eq!(one(&mut x, 2, Sm1::Full), Read);
        x.answer(Read, &answer(), 1);
        assert!(x.is_done());
    }

    #[test]
    fn repeat_request_after_timeout() {
        let mut x = Exchange::new(AREA, &[0u8; 16], COE, 0, 1000);
        x.plan(0, Sm1::Unknown);
        x.answer(Write, &[], 1);
        assert_eq!(x.plan(10, Sm1::Empty), [None, None]);
        assert_eq!(one(&mut x, 2000, Sm1::Empty), RepeatRead);
        assert_eq!(x.step(RepeatRead).ado, 0x080E);
        x.answer(RepeatRead, &[0x01], 1);
        assert_eq!(one(&mut x, 2001, Sm1::Empty), RepeatWrite);
        let s = x.step(RepeatWrite);
        assert_eq!(
            (s.command, s.ado, s.data),
            (Command::Fpwr, 0x080E, &[0x03][..])
        );
        x.answer(RepeatWrite, &[], 1);
        assert_eq!(one(&mut x, 2002, Sm1::Empty), RepeatWait);
        assert_eq!(x.step(RepeatWait).ado, 0x080F);
        x.answer(RepeatWait, &[0x02], 1);
        assert_eq!(x.plan(2003, Sm1::Empty), [None, None], "back to waiting");
        assert_eq!(x.plan(4000, Sm1::Empty), [None, None]);
        assert_eq!(
            x.result().unwrap().unwrap_err(),
            ExchangeError::Timeout { ms: 0 }
        );
    }

    #[test]
    fn mailbox_error_reply_and_other_protocols() {
        let mut x = Exchange::new(AREA, &[0u8; 16], COE, 0, 1_000_000);
        x.plan(0, Sm1::Unknown);
        x.answer(Write, &[], 1);
        // A message of another protocol (type 4, FoE) is kept aside; waiting goes on.
        let mut foe = [0u8; 128];
        foe[..6].copy_from_slice(&[4, 0, 0, 0, 0, 0x14]);
        one(&mut x, 0, Sm1::Full);
        x.answer(Read, &foe, 1);
        assert_eq!(x.take_unsolicited().len(), 1);
        assert!(!x.is_done());
        let mut e = [0u8; 128];
        ecat_wire::mailbox::emit_error_reply(&mut e, 2, MailboxErrorCode(0x0002)).unwrap();
        one(&mut x, 0, Sm1::Full);
        x.answer(Read, &e, 1);
        assert_eq!(
            x.result().unwrap().unwrap_err(),
            ExchangeError::MailboxError(MailboxErrorCode(2))
        );
    }

    #[test]
    fn listening_reads_once() {
        let mut x = Exchange::listen(AREA, 0);
        assert_eq!(one(&mut x, 0, Sm1::Full), Read);
        x.answer(Read, &[], 0); // stale status: nothing there
        assert!(x.is_done());
    }
}
