//! The mailbox layer: the 6-byte header that starts every mailbox message, the session
//! counter, and the mailbox error reply (type 0).
//!
//! Layout: `length u16 | address u16 | channel:6 priority:2 | type:4 counter:3 reserved:1`,
//! then `length` bytes of protocol data. [`MailboxHeader`] is a checked view over a whole
//! message (header plus the `length` bytes it announces); [`MailboxHeaderRepr`] is the decoded
//! header. A message usually sits at the start of a larger SyncManager buffer; the view only
//! looks at what the header announces.

use crate::{le16, put16, Error, Result};
use core::fmt;

/// Bytes of the mailbox header.
pub const HEADER_LEN: usize = 6;

/// Mailbox protocol (header byte 5, bits 3:0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MailboxType {
    /// 0x0: mailbox error reply.
    Err = 0x0,
    /// 0x1: ADS over EtherCAT.
    Aoe = 0x1,
    /// 0x2: Ethernet over EtherCAT.
    Eoe = 0x2,
    /// 0x3: CANopen over EtherCAT.
    Coe = 0x3,
    /// 0x4: File access over EtherCAT.
    Foe = 0x4,
    /// 0x5: Servo drive profile over EtherCAT.
    Soe = 0x5,
    /// 0xF: vendor specific.
    Voe = 0xF,
}

impl MailboxType {
    /// Decode the type nibble; `None` for the reserved values 6–0xE.
    pub fn from_u8(v: u8) -> Option<MailboxType> {
        use MailboxType::*;
        Some(match v & 0x0F {
            0x0 => Err,
            0x1 => Aoe,
            0x2 => Eoe,
            0x3 => Coe,
            0x4 => Foe,
            0x5 => Soe,
            0xF => Voe,
            _ => return None,
        })
    }
    /// Short name (`ERR`, `AoE`, `EoE`, `CoE`, `FoE`, `SoE`, `VoE`).
    pub fn name(self) -> &'static str {
        use MailboxType::*;
        match self {
            Err => "ERR",
            Aoe => "AoE",
            Eoe => "EoE",
            Coe => "CoE",
            Foe => "FoE",
            Soe => "SoE",
            Voe => "VoE",
        }
    }
}

/// The next mailbox counter after `c`: 1 → 2 → … → 7 → 1. Counter 0 means "not used", so 0
/// (or any invalid value) is followed by 1.
pub fn next_counter(c: u8) -> u8 {
    if (1..7).contains(&c) {
        c + 1
    } else {
        1
    }
}

/// A checked view over one mailbox message.
#[derive(Debug, Clone, Copy)]
pub struct MailboxHeader<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> MailboxHeader<T> {
    /// Wrap a buffer starting with a mailbox message; checks that the header and the `length`
    /// bytes it announces fit ([`Error::Truncated`] otherwise). The buffer may be longer.
    pub fn new_checked(buf: T) -> Result<Self> {
        let b = buf.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        if b.len() < HEADER_LEN + le16(b, 0) as usize {
            return Err(Error::Truncated);
        }
        Ok(MailboxHeader { buf })
    }
    /// Bytes of data after the header.
    pub fn length(&self) -> u16 {
        le16(self.buf.as_ref(), 0)
    }
    /// Station address of the originator.
    pub fn address(&self) -> u16 {
        le16(self.buf.as_ref(), 2)
    }
    /// Channel (bits 5:0 of byte 4).
    pub fn channel(&self) -> u8 {
        self.buf.as_ref()[4] & 0x3F
    }
    /// Priority 0..3 (bits 7:6 of byte 4).
    pub fn priority(&self) -> u8 {
        self.buf.as_ref()[4] >> 6
    }
    /// Raw type nibble.
    pub fn type_code(&self) -> u8 {
        self.buf.as_ref()[5] & 0x0F
    }
    /// Decoded type, `None` if reserved.
    pub fn mailbox_type(&self) -> Option<MailboxType> {
        MailboxType::from_u8(self.type_code())
    }
    /// Counter 0..7.
    pub fn counter(&self) -> u8 {
        (self.buf.as_ref()[5] >> 4) & 0x07
    }
    /// The `length` bytes after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buf.as_ref()[HEADER_LEN..HEADER_LEN + self.length() as usize]
    }
    /// Header plus payload.
    pub fn total_len(&self) -> usize {
        HEADER_LEN + self.length() as usize
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> MailboxHeader<T> {
    /// The payload, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = self.total_len();
        &mut self.buf.as_mut()[HEADER_LEN..end]
    }
    /// Set the counter (0..7; higher bits are dropped).
    pub fn set_counter(&mut self, c: u8) {
        let b = &mut self.buf.as_mut()[5];
        *b = (*b & 0x8F) | ((c & 0x07) << 4);
    }
}

/// The decoded mailbox header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MailboxHeaderRepr {
    /// Bytes of data after the header.
    pub length: u16,
    /// Station address of the originator (0 for the master).
    pub address: u16,
    /// Channel, 0..63 (0 in practice).
    pub channel: u8,
    /// Priority, 0..3.
    pub priority: u8,
    /// Protocol.
    pub kind: MailboxType,
    /// Counter, 0..7 (0 = not used).
    pub counter: u8,
}

impl MailboxHeaderRepr {
    /// A header for `kind` with `length` data bytes and `counter`, channel/priority/address 0.
    pub fn new(kind: MailboxType, length: u16, counter: u8) -> Self {
        MailboxHeaderRepr {
            length,
            address: 0,
            channel: 0,
            priority: 0,
            kind,
            counter,
        }
    }

    /// Decode a checked header; [`Error::BadValue`] for a reserved type.
    pub fn parse<T: AsRef<[u8]>>(h: &MailboxHeader<T>) -> Result<Self> {
        Ok(MailboxHeaderRepr {
            length: h.length(),
            address: h.address(),
            channel: h.channel(),
            priority: h.priority(),
            kind: h.mailbox_type().ok_or(Error::BadValue)?,
            counter: h.counter(),
        })
    }

    /// Write the 6 header bytes; [`Error::BadValue`] if channel > 63, priority > 3 or
    /// counter > 7.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < HEADER_LEN {
            return Err(Error::NoSpace);
        }
        if self.channel > 0x3F || self.priority > 3 || self.counter > 7 {
            return Err(Error::BadValue);
        }
        put16(b, 0, self.length);
        put16(b, 2, self.address);
        b[4] = self.channel | (self.priority << 6);
        b[5] = self.kind as u8 | (self.counter << 4);
        Ok(())
    }
}

/// Parse the header of a whole message and return it with its payload.
pub fn parse_message(msg: &[u8]) -> Result<(MailboxHeaderRepr, &[u8])> {
    let h = MailboxHeader::new_checked(msg)?;
    let repr = MailboxHeaderRepr::parse(&h)?;
    Ok((repr, &msg[HEADER_LEN..h.total_len()]))
}

/// Parse a whole message that must be of `kind` and return its header and payload;
/// [`Error::BadValue`] if it is of another type.
pub fn parse_typed(msg: &[u8], kind: MailboxType) -> Result<(MailboxHeaderRepr, &[u8])> {
    let (h, payload) = parse_message(msg)?;
    if h.kind != kind {
        return Err(Error::BadValue);
    }
    Ok((h, payload))
}

/// Write a whole message of `kind` with `counter` whose `len` payload bytes `fill` writes;
/// returns the message length.
pub fn emit_typed(
    buf: &mut [u8],
    kind: MailboxType,
    counter: u8,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<usize>,
) -> Result<usize> {
    fill(emit_message(buf, kind, counter, len)?)?;
    Ok(HEADER_LEN + len)
}

/// Write a header for `kind` with `counter` and `len` payload bytes, and return the payload
/// area to fill (not cleared).
pub fn emit_message(
    buf: &mut [u8],
    kind: MailboxType,
    counter: u8,
    len: usize,
) -> Result<&mut [u8]> {
    let length = u16::try_from(len).map_err(|_| Error::BadLength)?;
    if buf.len() < HEADER_LEN + len {
        return Err(Error::NoSpace);
    }
    MailboxHeaderRepr::new(kind, length, counter).emit(buf)?;
    Ok(&mut buf[HEADER_LEN..HEADER_LEN + len])
}

/// Detail code of a mailbox error reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MailboxErrorCode(pub u16);

impl MailboxErrorCode {
    /// Syntax of the 6-byte mailbox header wrong.
    pub const SYNTAX: Self = Self(0x0001);
    /// Mailbox protocol not supported.
    pub const UNSUPPORTED_PROTOCOL: Self = Self(0x0002);
    /// Channel field invalid.
    pub const INVALID_CHANNEL: Self = Self(0x0003);
    /// Service not supported.
    pub const SERVICE_NOT_SUPPORTED: Self = Self(0x0004);
    /// Invalid mailbox header.
    pub const INVALID_HEADER: Self = Self(0x0005);
    /// Length of received data too short.
    pub const SIZE_TOO_SHORT: Self = Self(0x0006);
    /// No more memory in the SubDevice.
    pub const NO_MORE_MEMORY: Self = Self(0x0007);
    /// Inconsistent data length.
    pub const INVALID_SIZE: Self = Self(0x0008);
    /// Service in work.
    pub const SERVICE_IN_WORK: Self = Self(0x0009);

    /// The text for this code.
    pub fn description(self) -> &'static str {
        match self.0 {
            0x0001 => "syntax of the mailbox header wrong",
            0x0002 => "mailbox protocol not supported",
            0x0003 => "channel field invalid",
            0x0004 => "service not supported",
            0x0005 => "invalid mailbox header",
            0x0006 => "length of received data too short",
            0x0007 => "no more memory in SubDevice",
            0x0008 => "inconsistent data length",
            0x0009 => "service in work",
            _ => "unknown mailbox error",
        }
    }
}

impl fmt::Display for MailboxErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04X} ({})", self.0, self.description())
    }
}

/// The payload of a mailbox error reply: `u16 0x0001` then `u16 detail`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MailboxErrorRepr {
    /// The detail code.
    pub detail: MailboxErrorCode,
}

impl MailboxErrorRepr {
    /// Payload length.
    pub const LEN: usize = 4;
    /// The fixed service word of an error reply.
    pub const SERVICE: u16 = 0x0001;

    /// Decode the payload of a type-0 message; [`Error::BadValue`] if the service word is not
    /// 0x0001.
    pub fn parse(payload: &[u8]) -> Result<Self> {
        if payload.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        if le16(payload, 0) != Self::SERVICE {
            return Err(Error::BadValue);
        }
        Ok(MailboxErrorRepr {
            detail: MailboxErrorCode(le16(payload, 2)),
        })
    }
    /// Encode the 4 payload bytes.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < Self::LEN {
            return Err(Error::NoSpace);
        }
        put16(b, 0, Self::SERVICE);
        put16(b, 2, self.detail.0);
        Ok(())
    }
}

/// Write a whole mailbox error reply (header + 4 bytes); returns its length (10).
pub fn emit_error_reply(buf: &mut [u8], counter: u8, detail: MailboxErrorCode) -> Result<usize> {
    let p = emit_message(buf, MailboxType::Err, counter, MailboxErrorRepr::LEN)?;
    MailboxErrorRepr { detail }.emit(p)?;
    Ok(HEADER_LEN + MailboxErrorRepr::LEN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::format;

    #[test]
    fn header_matches_reference_example() {
        // CoE, counter 3, length 10 -> `0A 00 00 00 00 33`.
        let mut b = [0xA5u8; 8];
        MailboxHeaderRepr::new(MailboxType::Coe, 10, 3)
            .emit(&mut b)
            .unwrap();
        assert_eq!(b, [0x0A, 0x00, 0x00, 0x00, 0x00, 0x33, 0xA5, 0xA5]);
        let mut msg = [0u8; 16];
        msg[..6].copy_from_slice(&b[..6]);
        let h = MailboxHeader::new_checked(&msg[..]).unwrap();
        let r = MailboxHeaderRepr::parse(&h).unwrap();
        assert_eq!(r, MailboxHeaderRepr::new(MailboxType::Coe, 10, 3));
        assert_eq!(h.payload().len(), 10);
    }

    #[test]
    fn header_fields_and_limits() {
        let b = [0x04, 0x00, 0x01, 0x10, 0xC5, 0x7F];
        let mut full = [0u8; 10];
        full[..6].copy_from_slice(&b);
        let h = MailboxHeader::new_checked(&full[..]).unwrap();
        assert_eq!((h.address(), h.channel(), h.priority()), (0x1001, 5, 3));
        assert_eq!((h.mailbox_type(), h.counter()), (Some(MailboxType::Voe), 7));
        assert_eq!(
            MailboxHeader::new_checked(&b[..]).unwrap_err(),
            Error::Truncated
        );
        assert_eq!(
            MailboxHeader::new_checked(&b[..5]).unwrap_err(),
            Error::Truncated
        );
        let mut r = [0u8; 6];
        r[..6].copy_from_slice(&[0, 0, 0, 0, 0, 0x06]);
        let h = MailboxHeader::new_checked(&r[..]).unwrap();
        assert_eq!(MailboxHeaderRepr::parse(&h), Err(Error::BadValue));
        let bad = MailboxHeaderRepr {
            counter: 8,
            ..MailboxHeaderRepr::new(MailboxType::Coe, 0, 0)
        };
        assert_eq!(bad.emit(&mut [0; 6]), Err(Error::BadValue));
        assert_eq!(
            MailboxHeaderRepr::new(MailboxType::Coe, 0, 0).emit(&mut [0; 5]),
            Err(Error::NoSpace)
        );
        let mut m = [0u8; 6];
        let mut v = MailboxHeader::new_checked(&mut m[..]).unwrap();
        v.set_counter(5);
        assert_eq!(v.counter(), 5);
    }

    #[test]
    fn counter_sequence() {
        let mut c = 0;
        let mut seen = std::vec::Vec::new();
        for _ in 0..9 {
            c = next_counter(c);
            seen.push(c);
        }
        assert_eq!(seen, [1, 2, 3, 4, 5, 6, 7, 1, 2]);
        assert_eq!(next_counter(9), 1);
    }

    #[test]
    fn error_reply() {
        let mut b = [0xA5u8; 12];
        let n = emit_error_reply(&mut b, 1, MailboxErrorCode::UNSUPPORTED_PROTOCOL).unwrap();
        assert_eq!(n, 10);
        assert_eq!(
            &b[..11],
            &[0x04, 0, 0, 0, 0, 0x10, 0x01, 0x00, 0x02, 0x00, 0xA5]
        );
        let (h, p) = parse_message(&b).unwrap();
        assert_eq!(h.kind, MailboxType::Err);
        let e = MailboxErrorRepr::parse(p).unwrap();
        assert_eq!(
            format!("{}", e.detail),
            "0x0002 (mailbox protocol not supported)"
        );
        assert_eq!(MailboxErrorRepr::parse(&[2, 0, 1, 0]), Err(Error::BadValue));
        assert_eq!(MailboxErrorRepr::parse(&[1, 0, 1]), Err(Error::Truncated));
        assert_eq!(
            MailboxErrorCode(0x0042).description(),
            "unknown mailbox error"
        );
        assert_eq!(MailboxErrorCode(9).description(), "service in work");
    }

    proptest! {
        #[test]
        fn header_round_trip(len in 0u16..64, addr: u16, ch in 0u8..64, pr in 0u8..4,
                             t in prop::sample::select(&[0u8, 1, 2, 3, 4, 5, 15][..]),
                             cnt in 0u8..8) {
            let r = MailboxHeaderRepr {
                length: len, address: addr, channel: ch, priority: pr,
                kind: MailboxType::from_u8(t).unwrap(), counter: cnt,
            };
            let mut b = [0u8; 70];
            r.emit(&mut b).unwrap();
            let h = MailboxHeader::new_checked(&b[..]).unwrap();
            prop_assert_eq!(MailboxHeaderRepr::parse(&h).unwrap(), r);
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..32)) {
            if let Ok((_, p)) = parse_message(&b) {
                let _ = MailboxErrorRepr::parse(p);
            }
        }
    }
}
