//! The FoE client (File access over EtherCAT): read and write a file, as ETG.1000.6 and SOEM
//! do it.
//!
//! - **write**: WRQ (password, name) → ACK 0 → DATA 1, 2, … each with as many bytes as SM0
//!   allows (mailbox size − 12) and acknowledged with its number; a packet shorter than that
//!   ends the file (a file whose length is a multiple of it ends with an empty packet). BUSY
//!   asks for the last packet again.
//! - **read**: RRQ (password, name) → DATA 1, 2, … each acknowledged; a packet shorter than
//!   what SM1 allows is the last, and its ACK is posted without waiting for an answer. BUSY
//!   means wait.
//! - an ERR packet ends the transfer with its code and text (file not found, access denied
//!   for a wrong password, …).
//!
//! Transfers are sans-IO [`Transfer`]s carried by the one mailbox engine ([`super::job`]).

use super::exchange::MailboxArea;
use super::transfer::{message_in, post_in, Failure, Next, Transfer};
use ecat_wire::foe::{emit_foe, max_data, parse_foe, FoeRepr};
use ecat_wire::mailbox::MailboxType;

/// Largest file a read keeps (bytes); longer ones fail rather than exhaust memory.
pub const MAX_FILE: usize = 256 << 20;
/// BUSY answers tolerated in a row before giving up.
const MAX_BUSY: u32 = 10_000;
/// Time one answer may take: a device may erase flash before acknowledging.
const TIMEOUT_NS: u64 = 10_000_000_000;

/// An FoE request.
#[derive(Clone, PartialEq, Eq)]
pub enum FoeOp {
    /// Read the file `name`.
    Read {
        /// File name as the SubDevice knows it.
        name: String,
        /// Password (0 = none).
        password: u32,
    },
    /// Write `data` as the file `name`.
    Write {
        /// File name.
        name: String,
        /// Password (0 = none).
        password: u32,
        /// The file's bytes.
        data: Vec<u8>,
    },
}

impl std::fmt::Debug for FoeOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl FoeOp {
    /// Short description, e.g. `FoE write of 'fw.efw' (1024 bytes)`.
    pub fn describe(&self) -> String {
        match self {
            FoeOp::Read { name, .. } => format!("FoE read of '{name}'"),
            FoeOp::Write { name, data, .. } => {
                format!("FoE write of '{name}' ({} bytes)", data.len())
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Waiting for the answer to the request.
    Request,
    /// Write: packet `n` sent (0 = the WRQ), `final` if it ended the file.
    Sent {
        packet: u32,
        last: bool,
    },
    /// Read: the next packet expected.
    Receiving {
        packet: u32,
    },
    Finished,
}

/// One FoE transfer. See the module documentation.
#[derive(Debug)]
pub struct FoeTransfer {
    op: FoeOp,
    out_size: usize,
    in_size: usize,
    counter: u8,
    stage: Stage,
    data: Vec<u8>,
    busy: u32,
    /// The buffer of the last message sent, for the next one.
    spare: Vec<u8>,
}

impl FoeTransfer {
    /// A transfer over the mailbox `area`, continuing the mailbox counter from `counter`.
    pub fn new(op: FoeOp, area: MailboxArea, counter: u8) -> FoeTransfer {
        FoeTransfer {
            op,
            out_size: area.out.1 as usize,
            in_size: area.inp.1 as usize,
            counter,
            stage: Stage::Request,
            data: Vec::new(),
            busy: 0,
            spare: Vec::new(),
        }
    }

    fn send(&mut self, repr: FoeRepr<'_>) -> Next {
        message_in(&mut self.spare, self.out_size, &mut self.counter, |b, c| {
            emit_foe(b, c, &repr)
        })
    }

    fn fail(&mut self, f: Failure) -> Next {
        self.stage = Stage::Finished;
        Next::Failed(f)
    }

    fn protocol(&mut self, what: String) -> Next {
        self.fail(Failure::Protocol(what))
    }

    /// Data packet `packet` of the file being written (and whether it ends the file).
    fn packet(&mut self, packet: u32) -> Next {
        let FoeOp::Write { data, .. } = &self.op else {
            return self.protocol("not a write".into());
        };
        let max = max_data(self.out_size);
        if max == 0 {
            return self.protocol(format!(
                "a {} byte mailbox carries no FoE data",
                self.out_size
            ));
        }
        let start = (packet as usize - 1) * max;
        let end = (start + max).min(data.len());
        let chunk = data.get(start..end).unwrap_or(&[]);
        self.stage = Stage::Sent {
            packet,
            last: chunk.len() < max,
        };
        let repr = FoeRepr::Data {
            packet,
            data: chunk,
        };
        message_in(&mut self.spare, self.out_size, &mut self.counter, |b, c| {
            emit_foe(b, c, &repr)
        })
    }
}

fn error_text(code: ecat_wire::foe::FoeErrorCode, text: Option<&str>) -> String {
    match text.map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) => format!("FoE error {code}: {t}"),
        None => format!("FoE error {code}"),
    }
}

impl Transfer for FoeTransfer {
    fn start(&mut self) -> Next {
        let (name, password, write) = match &self.op {
            FoeOp::Read { name, password } => (name.clone(), *password, false),
            FoeOp::Write { name, password, .. } => (name.clone(), *password, true),
        };
        if write {
            self.stage = Stage::Sent {
                packet: 0,
                last: false,
            };
            self.send(FoeRepr::WriteRequest {
                password,
                name: name.as_bytes(),
            })
        } else {
            self.stage = Stage::Receiving { packet: 1 };
            self.send(FoeRepr::ReadRequest {
                password,
                name: name.as_bytes(),
            })
        }
    }

    fn on_response(&mut self, msg: &[u8]) -> Next {
        let repr = match parse_foe(msg) {
            Ok((_, r)) => r,
            Err(e) => return self.protocol(format!("FoE answer cannot be decoded ({e})")),
        };
        if let FoeRepr::Error { code, .. } = repr {
            return self.fail(Failure::Refused(error_text(code, repr.text())));
        }
        match (self.stage, repr) {
            (_, FoeRepr::Busy { .. }) => {
                self.busy += 1;
                if self.busy > MAX_BUSY {
                    return self.protocol(format!(
                        "the SubDevice stayed busy ({MAX_BUSY} BUSY answers)"
                    ));
                }
                match self.stage {
                    // Send the last data packet again (before any data: keep waiting).
                    Stage::Sent { packet, .. } if packet > 0 => self.packet(packet),
                    _ => Next::Receive,
                }
            }
            (Stage::Sent { packet, last }, FoeRepr::Ack { packet: a }) if a == packet => {
                self.busy = 0;
                if last {
                    self.stage = Stage::Finished;
                    Next::Done(Vec::new())
                } else {
                    self.packet(packet + 1)
                }
            }
            (Stage::Sent { packet, .. }, FoeRepr::Ack { packet: a }) => {
                self.protocol(format!("acknowledge of packet {a} where {packet} was sent"))
            }
            (Stage::Receiving { packet }, FoeRepr::Data { packet: p, data }) => {
                if p != packet {
                    return self.protocol(format!("data packet {p} where {packet} was due"));
                }
                if self.data.len() + data.len() > MAX_FILE {
                    return self.protocol(format!("the file is longer than {MAX_FILE} bytes"));
                }
                self.data.extend_from_slice(data);
                self.busy = 0;
                let ack = FoeRepr::Ack { packet: p };
                if data.len() < max_data(self.in_size) {
                    self.stage = Stage::Finished;
                    post_in(&mut self.spare, self.out_size, &mut self.counter, |b, c| {
                        emit_foe(b, c, &ack)
                    })
                } else {
                    self.stage = Stage::Receiving { packet: p + 1 };
                    self.send(ack)
                }
            }
            (_, other) => self.protocol(format!("unexpected FoE {} packet", other.opcode().name())),
        }
    }

    fn on_posted(&mut self) -> Next {
        Next::Done(std::mem::take(&mut self.data))
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        self.spare = buf;
    }

    fn counter(&self) -> u8 {
        self.counter
    }

    fn describe(&self) -> String {
        self.op.describe()
    }

    fn accepts(&self, kind: u8) -> bool {
        kind == MailboxType::Foe as u8
    }

    fn timeout_ns(&self) -> u64 {
        TIMEOUT_NS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat_wire::foe::FoeErrorCode;

    const AREA: MailboxArea = MailboxArea {
        station: 0x1001,
        out: (0x1000, 32),
        inp: (0x1080, 32),
    };

    fn msg(r: FoeRepr<'_>) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        let n = emit_foe(&mut b, 1, &r).unwrap();
        b.truncate(n);
        b
    }

    fn sent(n: Next) -> Vec<u8> {
        match n {
            Next::Send(m) | Next::Post(m) => m,
            other => panic!("expected a message, got {other:?}"),
        }
    }

    #[test]
    fn write_in_packets_with_busy_and_final_empty_packet() {
        let file: Vec<u8> = (0..40u8).collect(); // 2 × 20 bytes: ends with an empty packet
        let op = FoeOp::Write {
            name: "fw.bin".into(),
            password: 0x1234,
            data: file.clone(),
        };
        let mut t = FoeTransfer::new(op, AREA, 0);
        let m = sent(t.start());
        assert_eq!(
            parse_foe(&m).unwrap().1,
            FoeRepr::WriteRequest {
                password: 0x1234,
                name: b"fw.bin"
            }
        );
        let mut got = Vec::new();
        let mut next = t.on_response(&msg(FoeRepr::Ack { packet: 0 }));
        let mut busy_once = true;
        let mut packets = 0;
        loop {
            let m = match next {
                Next::Done(_) => break,
                n => sent(n),
            };
            let FoeRepr::Data { packet, data } = parse_foe(&m).unwrap().1 else {
                panic!("data expected")
            };
            if busy_once && packet == 2 {
                busy_once = false;
                next = t.on_response(&msg(FoeRepr::Busy { done: 1, entire: 3 }));
                continue; // the same packet again
            }
            packets += 1;
            got.extend_from_slice(data);
            next = t.on_response(&msg(FoeRepr::Ack { packet }));
        }
        assert_eq!(got, file);
        assert_eq!(packets, 3, "20 + 20 + an empty last packet");
    }

    #[test]
    fn read_posts_the_last_ack_and_errors_have_text() {
        let op = FoeOp::Read {
            name: "log".into(),
            password: 0,
        };
        let mut t = FoeTransfer::new(op.clone(), AREA, 0);
        sent(t.start());
        let a = sent(t.on_response(&msg(FoeRepr::Data {
            packet: 1,
            data: &[7; 20],
        })));
        assert_eq!(parse_foe(&a).unwrap().1, FoeRepr::Ack { packet: 1 });
        assert_eq!(
            t.on_response(&msg(FoeRepr::Busy { done: 0, entire: 0 })),
            Next::Receive
        );
        match t.on_response(&msg(FoeRepr::Data {
            packet: 2,
            data: &[8; 3],
        })) {
            Next::Post(m) => assert_eq!(parse_foe(&m).unwrap().1, FoeRepr::Ack { packet: 2 }),
            other => panic!("{other:?}"),
        }
        let Next::Done(d) = t.on_posted() else {
            panic!()
        };
        assert_eq!(d.len(), 23);
        let mut t = FoeTransfer::new(op, AREA, 0);
        sent(t.start());
        let e = t.on_response(&msg(FoeRepr::Error {
            code: FoeErrorCode::NOT_FOUND,
            text: b"no such file\0",
        }));
        assert_eq!(
            e,
            Next::Failed(Failure::Refused(
                "FoE error 0x8001 (file not found): no such file".into()
            ))
        );
    }
}
