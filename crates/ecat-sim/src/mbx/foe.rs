//! The FoE server: a file store per device, read and write with the mailbox's packet size,
//! busy replies, error codes and a password; in BOOT, files written are firmware.
//!
//! * Read (RRQ): the file goes out in data packets of SM1 size − 12 bytes (the send mailbox,
//!   as IgH reads them; SOEM uses its SM0 size, the same on every device with equal
//!   mailboxes); a shorter packet ends it, and a file whose length is a multiple of the
//!   packet size ends with an empty packet. Each packet waits for the acknowledge of the one
//!   before; the acknowledge of the last ends the transfer.
//! * Write (WRQ): acknowledged with 0; each data packet must carry the next number (else
//!   error 0x8005) and is acknowledged with its number; a packet shorter than SM0 size − 12
//!   ends the file, which is then stored (replacing one of the same name). With
//!   [`FoeServer::busy_replies`] set, the first data packet of a write is answered with that
//!   many BUSY replies first (a flash being erased); the writer sends it again.
//! * Errors: unknown file → 0x8001, password mismatch → 0x8002, file larger than
//!   [`FoeServer::max_file`] → 0x8003, data or acknowledge without a transfer or an unknown
//!   opcode → 0x8004, wrong packet number → 0x8005. Each error packet carries its text and
//!   ends the transfer. An error from the MainDevice ends the transfer silently.
//! * BOOT: every file written is firmware ([`FoeServer::firmware`], also kept in the store);
//!   files can be read in BOOT too.
//! * Password: when [`FoeServer::password`] is set, requests must carry it; otherwise any
//!   password is accepted.

use super::{reply, Answers, MbxCtx};
use ecat_wire::al::AlState;
use ecat_wire::foe::{self as wire, FoeErrorCode, FoeRepr};
use ecat_wire::mailbox::MailboxErrorCode;
use std::collections::BTreeMap;

/// The transfer in progress.
#[derive(Debug, Clone, Default)]
enum Transfer {
    #[default]
    Idle,
    /// Sending `data`; packet `sent` is out and waits for its acknowledge.
    Read {
        data: Vec<u8>,
        sent: u32,
        max: usize,
    },
    /// Receiving `name`; the next packet must be `next`.
    Write {
        name: String,
        data: Vec<u8>,
        next: u32,
        busy_left: u32,
        boot: bool,
    },
}

/// FoE server state and file store of one device.
#[derive(Debug, Clone)]
pub struct FoeServer {
    /// Files by name (from the network file, or written by the MainDevice).
    pub files: BTreeMap<String, Vec<u8>>,
    /// The last file written in BOOT: (name, bytes).
    pub firmware: Option<(String, Vec<u8>)>,
    /// Password requests must carry (`None`: any).
    pub password: Option<u32>,
    /// BUSY replies sent before the first data packet of a write is taken.
    pub busy_replies: u32,
    /// Largest file the store takes (default 16 MiB); larger writes fail with "disk full".
    pub max_file: usize,
    /// Files completely written since power-on (statistics for tests).
    pub writes_completed: u32,
    transfer: Transfer,
}

impl Default for FoeServer {
    fn default() -> Self {
        FoeServer {
            files: BTreeMap::new(),
            firmware: None,
            password: None,
            busy_replies: 0,
            max_file: 16 << 20,
            writes_completed: 0,
            transfer: Transfer::Idle,
        }
    }
}

fn error(tx: usize, code: FoeErrorCode, text: &str) -> Vec<u8> {
    let room = wire::max_data(tx);
    let t = &text.as_bytes()[..text.len().min(room)];
    reply(tx, |b| {
        wire::emit_foe(b, 0, &FoeRepr::Error { code, text: t })
    })
}

impl FoeServer {
    /// The mailbox closed: the transfer in progress ends.
    pub fn close(&mut self) {
        self.transfer = Transfer::Idle;
    }

    /// Whether a transfer is in progress.
    pub fn busy(&self) -> bool {
        !matches!(self.transfer, Transfer::Idle)
    }

    fn data_packet(tx: usize, data: &[u8], packet: u32, max: usize) -> Vec<u8> {
        let start = (packet as usize - 1) * max;
        let end = (start + max).min(data.len());
        let chunk = data.get(start..end).unwrap_or(&[]);
        reply(tx, |b| {
            wire::emit_foe(
                b,
                0,
                &FoeRepr::Data {
                    packet,
                    data: chunk,
                },
            )
        })
    }

    fn check_password(&self, given: u32) -> bool {
        !matches!(self.password, Some(p) if p != given)
    }

    /// Answer one FoE message.
    pub fn handle(&mut self, msg: &[u8], ctx: &MbxCtx) -> Answers {
        let tx = ctx.tx_size;
        let repr = match wire::parse_foe(msg) {
            Ok((_, r)) => r,
            Err(ecat_wire::Error::BadValue) => {
                self.transfer = Transfer::Idle;
                return Ok(vec![error(tx, FoeErrorCode::ILLEGAL, "unknown FoE opcode")]);
            }
            Err(_) => return Err(MailboxErrorCode::SIZE_TOO_SHORT),
        };
        let out = match repr {
            FoeRepr::ReadRequest { password, name } => self.read_request(password, name, ctx),
            FoeRepr::WriteRequest { password, name } => self.write_request(password, name, ctx),
            FoeRepr::Data { packet, data } => self.data(packet, data, ctx),
            FoeRepr::Ack { packet } => self.ack(packet, ctx),
            FoeRepr::Error { .. } => {
                self.transfer = Transfer::Idle;
                None
            }
            FoeRepr::Busy { .. } => Some(error(tx, FoeErrorCode::ILLEGAL, "BUSY is not a request")),
        };
        Ok(out.into_iter().collect())
    }

    fn read_request(&mut self, password: u32, name: &[u8], ctx: &MbxCtx) -> Option<Vec<u8>> {
        let tx = ctx.tx_size;
        self.transfer = Transfer::Idle;
        if !self.check_password(password) {
            return Some(error(tx, FoeErrorCode::ACCESS_DENIED, "wrong password"));
        }
        let name = String::from_utf8_lossy(name).into_owned();
        let Some(data) = self.files.get(&name) else {
            return Some(error(tx, FoeErrorCode::NOT_FOUND, "file not found"));
        };
        let max = wire::max_data(tx);
        if max == 0 {
            return Some(error(tx, FoeErrorCode::ILLEGAL, "mailbox too small"));
        }
        let first = Self::data_packet(tx, data, 1, max);
        self.transfer = Transfer::Read {
            data: data.clone(),
            sent: 1,
            max,
        };
        Some(first)
    }

    fn write_request(&mut self, password: u32, name: &[u8], ctx: &MbxCtx) -> Option<Vec<u8>> {
        let tx = ctx.tx_size;
        self.transfer = Transfer::Idle;
        if !self.check_password(password) {
            return Some(error(tx, FoeErrorCode::ACCESS_DENIED, "wrong password"));
        }
        let name = String::from_utf8_lossy(name).into_owned();
        if name.is_empty() {
            return Some(error(tx, FoeErrorCode::ILLEGAL, "empty file name"));
        }
        self.transfer = Transfer::Write {
            name,
            data: Vec::new(),
            next: 1,
            busy_left: self.busy_replies,
            boot: ctx.state == AlState::Boot,
        };
        Some(reply(tx, |b| {
            wire::emit_foe(b, 0, &FoeRepr::Ack { packet: 0 })
        }))
    }

    fn data(&mut self, packet: u32, bytes: &[u8], ctx: &MbxCtx) -> Option<Vec<u8>> {
        let tx = ctx.tx_size;
        let max_file = self.max_file;
        let Transfer::Write {
            name,
            data,
            next,
            busy_left,
            boot,
        } = &mut self.transfer
        else {
            return Some(error(
                tx,
                FoeErrorCode::ILLEGAL,
                "data without a write request",
            ));
        };
        if packet != *next {
            self.transfer = Transfer::Idle;
            return Some(error(
                tx,
                FoeErrorCode::PACKET_NUMBER,
                "packet number wrong",
            ));
        }
        if *busy_left > 0 {
            *busy_left -= 1;
            let done = data.len().min(u16::MAX as usize) as u16;
            return Some(reply(tx, |b| {
                wire::emit_foe(b, 0, &FoeRepr::Busy { done, entire: 100 })
            }));
        }
        if data.len() + bytes.len() > max_file {
            self.transfer = Transfer::Idle;
            return Some(error(tx, FoeErrorCode::DISK_FULL, "disk full"));
        }
        data.extend_from_slice(bytes);
        *next += 1;
        let ack = reply(tx, |b| wire::emit_foe(b, 0, &FoeRepr::Ack { packet }));
        if bytes.len() < wire::max_data(ctx.rx_size) {
            let (name, data, boot) = (std::mem::take(name), std::mem::take(data), *boot);
            if boot {
                self.firmware = Some((name.clone(), data.clone()));
            }
            self.files.insert(name, data);
            self.writes_completed += 1;
            self.transfer = Transfer::Idle;
        }
        Some(ack)
    }

    fn ack(&mut self, packet: u32, ctx: &MbxCtx) -> Option<Vec<u8>> {
        let tx = ctx.tx_size;
        let Transfer::Read { data, sent, max } = &mut self.transfer else {
            return Some(error(
                tx,
                FoeErrorCode::ILLEGAL,
                "acknowledge without a read",
            ));
        };
        if packet != *sent {
            self.transfer = Transfer::Idle;
            return Some(error(
                tx,
                FoeErrorCode::PACKET_NUMBER,
                "packet number wrong",
            ));
        }
        // The packet just acknowledged was the last one when it was shorter than `max`.
        let sent_len = data
            .len()
            .saturating_sub((*sent as usize - 1) * *max)
            .min(*max);
        if sent_len < *max {
            self.transfer = Transfer::Idle;
            return None;
        }
        *sent += 1;
        Some(Self::data_packet(tx, data, *sent, *max))
    }
}
