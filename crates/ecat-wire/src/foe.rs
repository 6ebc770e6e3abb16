//! File access over EtherCAT (mailbox type 4): the 6-byte FoE header, the six operations, the
//! error codes with their texts, and whole-message helpers.
//!
//! Layout after the mailbox header: `opcode u8 | reserved u8 | u32 field | data`. The `u32`
//! field is the password (read/write request), the packet number (data, ack), the error code
//! (error) or `u16 done | u16 entire` progress (busy). [`FoePacket`] is a checked view over
//! the FoE part of a message; [`FoeRepr`] is the decoded operation, borrowing its variable
//! data (file name, file bytes, error text) from the buffer.
//!
//! Transfer rules (ETG.1000.6, as SOEM and SOES implement them): a data packet carries at
//! most [`max_data`] bytes (mailbox size − 12); a shorter packet ends the file, so a file
//! whose length is a multiple of the maximum ends with an empty data packet. The reader
//! acknowledges each data packet with its number, a write request is acknowledged with 0,
//! and a busy reply asks the writer to send the last packet again.
//!
//! Error codes: the reference's conflict table says to emit `0x8000 + n` and accept the bare
//! `n` too; [`FoeErrorCode::normalized`] maps `0..=0xC` onto the `0x8000` range.

use crate::mailbox::{self, MailboxHeaderRepr, MailboxType};
use crate::{le16, le32, put16, put32, Error, Result};
use core::fmt;

/// Bytes of the FoE header (opcode, reserved, u32 field).
pub const HEADER_LEN: usize = 6;
/// Offset of the FoE data in a whole mailbox message (6 + 6).
pub const DATA_OFFSET: usize = mailbox::HEADER_LEN + HEADER_LEN;

/// The most file bytes one data packet carries in a mailbox of `mailbox_size` bytes
/// (`mailbox_size − 12`, 0 for mailboxes too small to carry any).
pub fn max_data(mailbox_size: usize) -> usize {
    mailbox_size.saturating_sub(DATA_OFFSET)
}

/// FoE operation code (byte 0 of the FoE header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FoeOpcode {
    /// 1: read request (password, file name).
    ReadRequest = 1,
    /// 2: write request (password, file name).
    WriteRequest = 2,
    /// 3: data (packet number, file bytes).
    Data = 3,
    /// 4: acknowledge (packet number).
    Ack = 4,
    /// 5: error (code, optional text).
    Error = 5,
    /// 6: busy (progress done / entire).
    Busy = 6,
}

impl FoeOpcode {
    /// Decode an opcode byte; `None` for 0 and 7..=255.
    pub fn from_u8(v: u8) -> Option<FoeOpcode> {
        use FoeOpcode::*;
        Some(match v {
            1 => ReadRequest,
            2 => WriteRequest,
            3 => Data,
            4 => Ack,
            5 => Error,
            6 => Busy,
            _ => return None,
        })
    }
    /// Short name as in the specification (`RRQ`, `WRQ`, `DATA`, `ACK`, `ERR`, `BUSY`).
    pub fn name(self) -> &'static str {
        use FoeOpcode::*;
        match self {
            ReadRequest => "RRQ",
            WriteRequest => "WRQ",
            Data => "DATA",
            Ack => "ACK",
            Error => "ERR",
            Busy => "BUSY",
        }
    }
}

/// An FoE error code (the `u32` field of an error packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FoeErrorCode(pub u32);

impl FoeErrorCode {
    /// 0x8000: not defined (vendor specific, see the error text).
    pub const NOT_DEFINED: Self = Self(0x8000);
    /// 0x8001: file not found.
    pub const NOT_FOUND: Self = Self(0x8001);
    /// 0x8002: access denied (e.g. wrong password).
    pub const ACCESS_DENIED: Self = Self(0x8002);
    /// 0x8003: disk full.
    pub const DISK_FULL: Self = Self(0x8003);
    /// 0x8004: illegal operation.
    pub const ILLEGAL: Self = Self(0x8004);
    /// 0x8005: packet number wrong.
    pub const PACKET_NUMBER: Self = Self(0x8005);
    /// 0x8006: file already exists.
    pub const ALREADY_EXISTS: Self = Self(0x8006);
    /// 0x8007: no user.
    pub const NO_USER: Self = Self(0x8007);
    /// 0x8008: only allowed in the BOOT state.
    pub const BOOTSTRAP_ONLY: Self = Self(0x8008);
    /// 0x8009: not allowed in the BOOT state.
    pub const NOT_BOOTSTRAP: Self = Self(0x8009);
    /// 0x800A: no rights.
    pub const NO_RIGHTS: Self = Self(0x800A);
    /// 0x800B: program error.
    pub const PROGRAM_ERROR: Self = Self(0x800B);
    /// 0x800C: checksum error.
    pub const CHECKSUM: Self = Self(0x800C);

    /// The code in the `0x8000` range: the bare values `0..=0xC` some devices send are mapped
    /// to `0x8000 + n`; everything else is unchanged.
    pub fn normalized(self) -> Self {
        if self.0 <= 0x0C {
            Self(0x8000 + self.0)
        } else {
            self
        }
    }

    /// The text for this code (bare `0..=0xC` codes get the text of `0x8000 + n`).
    pub fn description(self) -> &'static str {
        match self.normalized().0 {
            0x8000 => "not defined",
            0x8001 => "file not found",
            0x8002 => "access denied",
            0x8003 => "disk full",
            0x8004 => "illegal operation",
            0x8005 => "packet number wrong",
            0x8006 => "file already exists",
            0x8007 => "no user",
            0x8008 => "only allowed in BOOT (bootstrap) state",
            0x8009 => "not allowed in BOOT (bootstrap) state",
            0x800A => "no rights",
            0x800B => "program error",
            0x800C => "checksum error",
            _ => "unknown FoE error",
        }
    }
}

impl fmt::Display for FoeErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04X} ({})", self.0, self.description())
    }
}

/// A checked view over the FoE part of a message (the mailbox payload).
#[derive(Debug, Clone, Copy)]
pub struct FoePacket<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> FoePacket<T> {
    /// Wrap a mailbox payload; [`Error::Truncated`] if it is shorter than the FoE header.
    /// All of the buffer after the header is the packet's data.
    pub fn new_checked(buf: T) -> Result<Self> {
        if buf.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(FoePacket { buf })
    }
    /// Raw opcode byte.
    pub fn opcode_raw(&self) -> u8 {
        self.buf.as_ref()[0]
    }
    /// Decoded opcode, `None` if undefined.
    pub fn opcode(&self) -> Option<FoeOpcode> {
        FoeOpcode::from_u8(self.opcode_raw())
    }
    /// The `u32` field (password, packet number or error code).
    pub fn field(&self) -> u32 {
        le32(self.buf.as_ref(), 2)
    }
    /// Busy progress: bytes (or units) done.
    pub fn busy_done(&self) -> u16 {
        le16(self.buf.as_ref(), 2)
    }
    /// Busy progress: entire amount.
    pub fn busy_entire(&self) -> u16 {
        le16(self.buf.as_ref(), 4)
    }
    /// The bytes after the header (file name, file data or error text).
    pub fn data(&self) -> &[u8] {
        &self.buf.as_ref()[HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> FoePacket<T> {
    /// Set the opcode byte and clear the reserved byte.
    pub fn set_opcode(&mut self, op: FoeOpcode) {
        let b = self.buf.as_mut();
        b[0] = op as u8;
        b[1] = 0;
    }
    /// Set the `u32` field.
    pub fn set_field(&mut self, v: u32) {
        put32(self.buf.as_mut(), 2, v);
    }
    /// The bytes after the header, writable.
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buf.as_mut()[HEADER_LEN..]
    }
}

/// A decoded FoE packet; variable data borrows from the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoeRepr<'a> {
    /// Read request: the MainDevice asks for a file.
    ReadRequest {
        /// Password (0 = none).
        password: u32,
        /// File name, no terminator.
        name: &'a [u8],
    },
    /// Write request: the MainDevice announces a file.
    WriteRequest {
        /// Password (0 = none).
        password: u32,
        /// File name, no terminator.
        name: &'a [u8],
    },
    /// A packet of file data.
    Data {
        /// Packet number, starting at 1.
        packet: u32,
        /// File bytes.
        data: &'a [u8],
    },
    /// Acknowledge of a data packet (or 0 for a write request).
    Ack {
        /// Packet number acknowledged.
        packet: u32,
    },
    /// The transfer failed.
    Error {
        /// Error code.
        code: FoeErrorCode,
        /// Optional text (may be empty; often NUL-terminated).
        text: &'a [u8],
    },
    /// Not ready; the writer sends the last packet again.
    Busy {
        /// Progress done.
        done: u16,
        /// Progress entire.
        entire: u16,
    },
}

impl<'a> FoeRepr<'a> {
    /// Decode a checked packet; [`Error::BadValue`] for an undefined opcode.
    pub fn parse<T: AsRef<[u8]>>(p: &'a FoePacket<T>) -> Result<Self> {
        Self::parse_bytes(p.buf.as_ref())
    }

    /// Decode a mailbox payload (FoE header and data).
    pub fn parse_bytes(b: &'a [u8]) -> Result<Self> {
        let p = FoePacket::new_checked(b)?;
        let field = p.field();
        let data = &b[HEADER_LEN..];
        Ok(match p.opcode().ok_or(Error::BadValue)? {
            FoeOpcode::ReadRequest => FoeRepr::ReadRequest {
                password: field,
                name: data,
            },
            FoeOpcode::WriteRequest => FoeRepr::WriteRequest {
                password: field,
                name: data,
            },
            FoeOpcode::Data => FoeRepr::Data {
                packet: field,
                data,
            },
            FoeOpcode::Ack => FoeRepr::Ack { packet: field },
            FoeOpcode::Error => FoeRepr::Error {
                code: FoeErrorCode(field),
                text: data,
            },
            FoeOpcode::Busy => FoeRepr::Busy {
                done: p.busy_done(),
                entire: p.busy_entire(),
            },
        })
    }

    /// The opcode of this packet.
    pub fn opcode(&self) -> FoeOpcode {
        match self {
            FoeRepr::ReadRequest { .. } => FoeOpcode::ReadRequest,
            FoeRepr::WriteRequest { .. } => FoeOpcode::WriteRequest,
            FoeRepr::Data { .. } => FoeOpcode::Data,
            FoeRepr::Ack { .. } => FoeOpcode::Ack,
            FoeRepr::Error { .. } => FoeOpcode::Error,
            FoeRepr::Busy { .. } => FoeOpcode::Busy,
        }
    }

    fn variable(&self) -> &'a [u8] {
        match *self {
            FoeRepr::ReadRequest { name, .. } | FoeRepr::WriteRequest { name, .. } => name,
            FoeRepr::Data { data, .. } => data,
            FoeRepr::Error { text, .. } => text,
            FoeRepr::Ack { .. } | FoeRepr::Busy { .. } => &[],
        }
    }

    /// Bytes this packet takes after the mailbox header.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.variable().len()
    }

    /// Write the packet (header and data) at the start of `b`; returns its length.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        if b.len() < len {
            return Err(Error::NoSpace);
        }
        let mut p = FoePacket::new_checked(&mut b[..len])?;
        p.set_opcode(self.opcode());
        match *self {
            FoeRepr::ReadRequest { password: v, .. }
            | FoeRepr::WriteRequest { password: v, .. }
            | FoeRepr::Data { packet: v, .. }
            | FoeRepr::Ack { packet: v } => p.set_field(v),
            FoeRepr::Error { code, .. } => p.set_field(code.0),
            FoeRepr::Busy { done, entire } => {
                put16(p.buf, 2, done);
                put16(p.buf, 4, entire);
            }
        }
        p.data_mut().copy_from_slice(self.variable());
        Ok(len)
    }

    /// The variable data as text (file name or error text) with trailing NULs removed, or
    /// `None` if it is not UTF-8.
    pub fn text(&self) -> Option<&'a str> {
        let v = self.variable();
        let end = v.iter().position(|&c| c == 0).unwrap_or(v.len());
        core::str::from_utf8(&v[..end]).ok()
    }
}

/// Split a whole FoE mailbox message into its mailbox header and FoE packet;
/// [`Error::BadValue`] if it is not of type FoE or the opcode is undefined.
pub fn parse_foe(msg: &[u8]) -> Result<(MailboxHeaderRepr, FoeRepr<'_>)> {
    let (mbx, payload) = mailbox::parse_typed(msg, MailboxType::Foe)?;
    Ok((mbx, FoeRepr::parse_bytes(payload)?))
}

/// Write a whole FoE message (mailbox header with `counter`, FoE packet); returns its length.
pub fn emit_foe(buf: &mut [u8], counter: u8, repr: &FoeRepr<'_>) -> Result<usize> {
    let len = repr.buffer_len();
    mailbox::emit_typed(buf, MailboxType::Foe, counter, len, |p| repr.emit(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::format;

    #[test]
    fn read_request_bytes() {
        let mut b = [0xA5u8; 24];
        let r = FoeRepr::ReadRequest {
            password: 0x1234_5678,
            name: b"fw.bin",
        };
        let n = emit_foe(&mut b, 2, &r).unwrap();
        assert_eq!(n, 18);
        assert_eq!(
            &b[..19],
            &[
                12, 0, 0, 0, 0, 0x24, 1, 0, 0x78, 0x56, 0x34, 0x12, b'f', b'w', b'.', b'b', b'i',
                b'n', 0xA5
            ]
        );
        let (h, back) = parse_foe(&b[..n]).unwrap();
        assert_eq!((h.kind, h.counter, h.length), (MailboxType::Foe, 2, 12));
        assert_eq!(back, r);
        assert_eq!(back.text(), Some("fw.bin"));
    }

    #[test]
    fn busy_error_and_limits() {
        let mut b = [0u8; 32];
        let n = emit_foe(&mut b, 1, &FoeRepr::Busy { done: 3, entire: 9 }).unwrap();
        assert_eq!(&b[6..n], &[6, 0, 3, 0, 9, 0]);
        let e = FoeRepr::Error {
            code: FoeErrorCode::NOT_FOUND,
            text: b"no such file\0",
        };
        let n = emit_foe(&mut b, 1, &e).unwrap();
        let (_, back) = parse_foe(&b[..n]).unwrap();
        assert_eq!(back, e);
        assert_eq!(back.text(), Some("no such file"));
        assert_eq!(
            format!("{}", FoeErrorCode::NOT_FOUND),
            "0x8001 (file not found)"
        );
        // Bare codes decode like the 0x8000 range.
        assert_eq!(FoeErrorCode(2).description(), "access denied");
        assert_eq!(FoeErrorCode(2).normalized(), FoeErrorCode::ACCESS_DENIED);
        assert_eq!(FoeErrorCode(0x9999).description(), "unknown FoE error");
        assert_eq!(
            FoeRepr::parse_bytes(&[7, 0, 0, 0, 0, 0]),
            Err(Error::BadValue)
        );
        assert_eq!(
            FoeRepr::parse_bytes(&[3, 0, 0, 0, 0]),
            Err(Error::Truncated)
        );
        assert_eq!(max_data(128), 116);
        assert_eq!(max_data(8), 0);
        // Not FoE.
        b[5] = 0x13;
        assert_eq!(parse_foe(&b[..n]).unwrap_err(), Error::BadValue);
        assert_eq!(
            emit_foe(
                &mut [0u8; 12],
                1,
                &FoeRepr::Data {
                    packet: 1,
                    data: b"x"
                }
            ),
            Err(Error::NoSpace)
        );
        let buf = [4u8, 0, 9, 0, 0, 0];
        let p = FoePacket::new_checked(&buf[..]).unwrap();
        assert_eq!(FoeRepr::parse(&p), Ok(FoeRepr::Ack { packet: 9 }));
    }

    fn any_repr(op: u8, field: u32, data: &[u8]) -> FoeRepr<'_> {
        match op % 6 {
            0 => FoeRepr::ReadRequest {
                password: field,
                name: data,
            },
            1 => FoeRepr::WriteRequest {
                password: field,
                name: data,
            },
            2 => FoeRepr::Data {
                packet: field,
                data,
            },
            3 => FoeRepr::Ack { packet: field },
            4 => FoeRepr::Error {
                code: FoeErrorCode(field),
                text: data,
            },
            _ => FoeRepr::Busy {
                done: field as u16,
                entire: (field >> 16) as u16,
            },
        }
    }

    proptest! {
        #[test]
        fn round_trip(op: u8, field: u32, data in proptest::collection::vec(any::<u8>(), 0..64),
                      cnt in 0u8..8) {
            let r = any_repr(op, field, &data);
            let mut b = [0u8; 80];
            let n = emit_foe(&mut b, cnt, &r).unwrap();
            let (h, back) = parse_foe(&b[..n]).unwrap();
            prop_assert_eq!(h.counter, cnt);
            prop_assert_eq!(back, r);
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok((_, r)) = parse_foe(&b) {
                let _ = r.text();
            }
            let _ = FoeRepr::parse_bytes(&b);
        }
    }
}
