//! The SoE client (Servo drive profile over EtherCAT): read and write IDN elements.
//!
//! - **read**: a read request for the IDN with the element flags (value, name, attribute,
//!   unit, minimum, maximum, default); a long answer arrives in fragments (`incomplete` set,
//!   fragments left in place of the IDN) which are gathered without further requests.
//! - **write**: a value longer than SM0 allows is sent in fragments, posted one after the other
//!   without waiting (as SOEM does); the drive answers the last one.
//! - an error response ends the transfer with the SoE error code and its text (IDN not present,
//!   data read only, …).
//!
//! Every request names the drive number (0..7) of a multi-axis SubDevice.

use super::exchange::MailboxArea;
use super::transfer::{message, post, Failure, Next, Transfer};
use crate::error::Error;
use ecat_wire::mailbox::MailboxType;
use ecat_wire::soe::{
    emit_soe, max_data, parse_soe, Elements, Idn, SoeErrorCode, SoeOpcode, SoeRepr,
};

/// Largest answer a read keeps (bytes).
const MAX_VALUE: usize = 1 << 20;

/// An SoE request.
#[derive(Clone, PartialEq, Eq)]
pub enum SoeOp {
    /// Read `elements` of `idn`.
    Read {
        /// Drive number 0..7.
        drive: u8,
        /// The IDN.
        idn: Idn,
        /// Which elements (usually [`Elements::VALUE`]).
        elements: Elements,
    },
    /// Write `data` to `elements` of `idn`.
    Write {
        /// Drive number 0..7.
        drive: u8,
        /// The IDN.
        idn: Idn,
        /// Which elements (usually [`Elements::VALUE`]).
        elements: Elements,
        /// The bytes (little-endian value, or a list with its header).
        data: Vec<u8>,
    },
}

impl std::fmt::Debug for SoeOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

fn elements_text(e: Elements) -> String {
    let names: Vec<&str> = Elements::ALL
        .iter()
        .filter(|(f, _)| e.contains(*f))
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        "no element".into()
    } else {
        names.join("+")
    }
}

impl SoeOp {
    /// Short description, e.g. `SoE read of S-0-0001 (value) of drive 0`.
    pub fn describe(&self) -> String {
        match self {
            SoeOp::Read {
                drive,
                idn,
                elements,
            } => format!(
                "SoE read of {idn} ({}) of drive {drive}",
                elements_text(*elements)
            ),
            SoeOp::Write {
                drive,
                idn,
                elements,
                data,
            } => format!(
                "SoE write of {} bytes to {idn} ({}) of drive {drive}",
                data.len(),
                elements_text(*elements)
            ),
        }
    }
}

/// The reason of a transfer the drive refused with `code`, e.g. `SoE error 0x1001 (IDN not
/// present)`.
fn refusal(code: SoeErrorCode) -> String {
    format!("{REFUSAL}{:04X} ({})", code.0, code.description())
}

const REFUSAL: &str = "SoE error 0x";

/// The SoE error code of a failed SoE request (`None` if the drive did not refuse it with an
/// error code: timeout, garbled answer, other protocol ...).
pub fn error_code(e: &Error) -> Option<SoeErrorCode> {
    let Error::Mailbox { what, reason, .. } = e else {
        return None;
    };
    let hex = reason.strip_prefix(REFUSAL)?.get(..4)?;
    what.starts_with("SoE ")
        .then(|| u16::from_str_radix(hex, 16).ok().map(SoeErrorCode))
        .flatten()
}

/// One SoE transfer. See the module documentation.
#[derive(Debug)]
pub struct SoeTransfer {
    op: SoeOp,
    out_size: usize,
    counter: u8,
    /// Write: bytes sent so far.
    offset: usize,
    data: Vec<u8>,
    finished: bool,
}

impl SoeTransfer {
    /// A transfer over the mailbox `area`, continuing the mailbox counter from `counter`.
    pub fn new(op: SoeOp, area: MailboxArea, counter: u8) -> SoeTransfer {
        SoeTransfer {
            op,
            out_size: area.out.1 as usize,
            counter,
            offset: 0,
            data: Vec::new(),
            finished: false,
        }
    }

    fn fail(&mut self, f: Failure) -> Next {
        self.finished = true;
        Next::Failed(f)
    }

    /// The next write fragment (posted) or the last one (answered).
    fn write_fragment(&mut self) -> Next {
        let SoeOp::Write {
            drive,
            idn,
            elements,
            data,
        } = &self.op
        else {
            return self.fail(Failure::Protocol("not a write".into()));
        };
        let max = max_data(self.out_size);
        if max == 0 {
            return self.fail(Failure::Protocol(format!(
                "a {} byte mailbox carries no SoE data",
                self.out_size
            )));
        }
        let rest = data.len() - self.offset;
        let n = rest.min(max);
        let chunk = data[self.offset..self.offset + n].to_vec();
        let left = (rest - n).div_ceil(max) as u16;
        let repr = SoeRepr {
            incomplete: left > 0,
            drive_no: *drive,
            idn_or_fragments: if left > 0 { left } else { idn.0 },
            ..SoeRepr::new(SoeOpcode::WriteRequest, *elements, *idn, &chunk)
        };
        self.offset += n;
        let emit = |b: &mut [u8], c| emit_soe(b, c, &repr);
        if left > 0 {
            post(self.out_size, &mut self.counter, emit)
        } else {
            message(self.out_size, &mut self.counter, emit)
        }
    }
}

impl Transfer for SoeTransfer {
    fn start(&mut self) -> Next {
        match self.op.clone() {
            SoeOp::Read {
                drive,
                idn,
                elements,
            } => {
                let repr = SoeRepr {
                    drive_no: drive,
                    ..SoeRepr::new(SoeOpcode::ReadRequest, elements, idn, &[])
                };
                message(self.out_size, &mut self.counter, |b, c| {
                    emit_soe(b, c, &repr)
                })
            }
            SoeOp::Write { .. } => self.write_fragment(),
        }
    }

    fn on_posted(&mut self) -> Next {
        self.write_fragment()
    }

    fn on_response(&mut self, msg: &[u8]) -> Next {
        let r = match parse_soe(msg) {
            Ok((_, r)) => r,
            Err(e) => {
                return self.fail(Failure::Protocol(format!(
                    "SoE answer cannot be decoded ({e})"
                )))
            }
        };
        if r.error {
            let text = match r.error_code() {
                Some(c) => refusal(c),
                None => "SoE error without a code".into(),
            };
            return self.fail(Failure::Refused(text));
        }
        let (want, idn) = match &self.op {
            SoeOp::Read { idn, .. } => (SoeOpcode::ReadResponse, *idn),
            SoeOp::Write { idn, .. } => (SoeOpcode::WriteResponse, *idn),
        };
        if r.opcode != want {
            return self.fail(Failure::Protocol(format!(
                "SoE {} where a {} was due",
                r.opcode.name(),
                want.name()
            )));
        }
        if want == SoeOpcode::WriteResponse {
            self.finished = true;
            return Next::Done(Vec::new());
        }
        if self.data.len() + r.data.len() > MAX_VALUE {
            return self.fail(Failure::Protocol(format!(
                "the answer is longer than {MAX_VALUE} bytes"
            )));
        }
        self.data.extend_from_slice(r.data);
        if r.incomplete {
            return Next::Receive;
        }
        if r.idn() != Some(idn) {
            return self.fail(Failure::Protocol(format!(
                "answer for IDN {} where {idn} was asked",
                Idn(r.idn_or_fragments)
            )));
        }
        self.finished = true;
        Next::Done(std::mem::take(&mut self.data))
    }

    fn counter(&self) -> u8 {
        self.counter
    }

    fn describe(&self) -> String {
        self.op.describe()
    }

    fn accepts(&self, kind: u8) -> bool {
        kind == MailboxType::Soe as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AREA: MailboxArea = MailboxArea {
        station: 0x1001,
        out: (0x1000, 20),
        inp: (0x1080, 20),
    };

    fn resp(r: SoeRepr<'_>) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        let n = emit_soe(&mut b, 1, &r).unwrap();
        b.truncate(n);
        b
    }

    #[test]
    fn read_gathers_fragments_and_decodes_errors() {
        let idn: Idn = "P-0-0150".parse().unwrap();
        let op = SoeOp::Read {
            drive: 2,
            idn,
            elements: Elements::NAME,
        };
        let mut t = SoeTransfer::new(op.clone(), AREA, 0);
        let Next::Send(m) = t.start() else { panic!() };
        let (_, q) = parse_soe(&m).unwrap();
        assert_eq!(
            (q.opcode, q.drive_no, q.idn(), q.elements),
            (SoeOpcode::ReadRequest, 2, Some(idn), Elements::NAME)
        );
        let first = SoeRepr {
            incomplete: true,
            idn_or_fragments: 1,
            ..SoeRepr::new(SoeOpcode::ReadResponse, Elements::NAME, idn, b"abcd")
        };
        assert_eq!(t.on_response(&resp(first)), Next::Receive);
        let last = SoeRepr::new(SoeOpcode::ReadResponse, Elements::NAME, idn, b"ef");
        assert_eq!(t.on_response(&resp(last)), Next::Done(b"abcdef".to_vec()));
        let mut t = SoeTransfer::new(op, AREA, 0);
        t.start();
        let err = SoeRepr {
            error: true,
            ..SoeRepr::new(SoeOpcode::ReadResponse, Elements::NAME, idn, &[0x01, 0x10])
        };
        assert_eq!(
            t.on_response(&resp(err)),
            Next::Failed(Failure::Refused(
                "SoE error 0x1001 (IDN not present)".into()
            ))
        );
    }

    #[test]
    fn long_write_is_posted_in_fragments() {
        let idn = Idn(1);
        let data: Vec<u8> = (0..25).collect(); // 10 bytes per message in a 20-byte mailbox
        let op = SoeOp::Write {
            drive: 0,
            idn,
            elements: Elements::VALUE,
            data: data.clone(),
        };
        let mut t = SoeTransfer::new(op, AREA, 0);
        let mut got = Vec::new();
        let mut next = t.start();
        let mut lefts = Vec::new();
        loop {
            match next {
                Next::Post(m) => {
                    let (_, r) = parse_soe(&m).unwrap();
                    assert!(r.incomplete);
                    lefts.push(r.fragments_left());
                    got.extend_from_slice(r.data);
                    next = t.on_posted();
                }
                Next::Send(m) => {
                    let (_, r) = parse_soe(&m).unwrap();
                    assert_eq!(r.idn(), Some(idn));
                    got.extend_from_slice(r.data);
                    break;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(got, data);
        assert_eq!(lefts, [2, 1]);
        let ok = SoeRepr::new(SoeOpcode::WriteResponse, Elements::VALUE, idn, &[]);
        assert_eq!(t.on_response(&resp(ok)), Next::Done(Vec::new()));
    }

    #[test]
    fn error_code_is_found_in_the_failure_of_an_soe_request_only() {
        let who = crate::error::Who {
            position: 2,
            station: 0x1003,
            name: String::new(),
        };
        let failed = |what: &str, reason: String| Error::Mailbox {
            who: who.clone(),
            what: what.into(),
            reason,
        };
        let e = failed("SoE read of S-0-0009", refusal(SoeErrorCode::NO_IDN));
        assert_eq!(error_code(&e), Some(SoeErrorCode(0x1001)));
        assert!(e.to_string().contains("0x1001 (IDN not present)"), "{e}");
        let e = failed("FoE read of 'x'", refusal(SoeErrorCode::NO_IDN));
        assert_eq!(error_code(&e), None);
        let e = failed(
            "SoE read of S-0-0009",
            "the SubDevice does not answer".into(),
        );
        assert_eq!(error_code(&e), None);
    }
}
