//! Servo drive profile over EtherCAT (mailbox type 5): the 4-byte SoE header, IDNs and their
//! text form, element flags, attributes, variable-length lists and the SoE error codes.
//!
//! Layout after the mailbox header: `opcode:3 incomplete:1 error:1 drive:3 | element flags u8 |
//! u16 IDN (or fragments left while incomplete) | data`. A long value travels in fragments:
//! every fragment but the last has `incomplete` set and counts the fragments still to come in
//! place of the IDN; the last one carries the IDN again. An error response has `error` set and
//! ends with a `u16` error code (SOEM reads it from the last two bytes).
//!
//! IDNs: bit 15 selects product (`P`) or standard (`S`) parameters, bits 14..12 the parameter
//! set, bits 11..0 the number; [`Idn`] prints and parses the usual `S-0-0001` / `P-0-0150`.
//! Variable-length elements (names, units, list values) are lists: `u16 current length | u16
//! maximum length | bytes` ([`ListHeader`]).

use crate::mailbox::{self, MailboxHeaderRepr, MailboxType};
use crate::{le16, le32, put16, Error, Result};
use core::fmt;
use core::str::FromStr;

/// Bytes of the SoE header.
pub const HEADER_LEN: usize = 4;
/// Offset of the SoE data in a whole mailbox message (6 + 4).
pub const DATA_OFFSET: usize = mailbox::HEADER_LEN + HEADER_LEN;

/// The most data bytes one SoE message carries in a mailbox of `mailbox_size` bytes.
pub fn max_data(mailbox_size: usize) -> usize {
    mailbox_size.saturating_sub(DATA_OFFSET)
}

/// SoE operation (bits 2..0 of header byte 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SoeOpcode {
    /// 1: read request.
    ReadRequest = 1,
    /// 2: read response.
    ReadResponse = 2,
    /// 3: write request.
    WriteRequest = 3,
    /// 4: write response.
    WriteResponse = 4,
    /// 5: notification (SubDevice → MainDevice).
    Notification = 5,
    /// 6: emergency (SubDevice → MainDevice).
    Emergency = 6,
}

impl SoeOpcode {
    /// Decode the 3-bit opcode; `None` for the reserved 0 and 7.
    pub fn from_u8(v: u8) -> Option<SoeOpcode> {
        use SoeOpcode::*;
        Some(match v & 7 {
            1 => ReadRequest,
            2 => ReadResponse,
            3 => WriteRequest,
            4 => WriteResponse,
            5 => Notification,
            6 => Emergency,
            _ => return None,
        })
    }
    /// Short name.
    pub fn name(self) -> &'static str {
        use SoeOpcode::*;
        match self {
            ReadRequest => "read request",
            ReadResponse => "read response",
            WriteRequest => "write request",
            WriteResponse => "write response",
            Notification => "notification",
            Emergency => "emergency",
        }
    }
}

/// Element flags (header byte 1): which parts of an IDN a request addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Elements(pub u8);

impl Elements {
    /// 0x01: data state.
    pub const DATA_STATE: Self = Self(0x01);
    /// 0x02: name (list of characters).
    pub const NAME: Self = Self(0x02);
    /// 0x04: attribute (u32).
    pub const ATTRIBUTE: Self = Self(0x04);
    /// 0x08: unit (list of characters).
    pub const UNIT: Self = Self(0x08);
    /// 0x10: minimum input value.
    pub const MIN: Self = Self(0x10);
    /// 0x20: maximum input value.
    pub const MAX: Self = Self(0x20);
    /// 0x40: operation data (the value).
    pub const VALUE: Self = Self(0x40);
    /// 0x80: default value.
    pub const DEFAULT: Self = Self(0x80);

    /// All flags with their names, in bit order.
    pub const ALL: [(Elements, &'static str); 8] = [
        (Self::DATA_STATE, "data state"),
        (Self::NAME, "name"),
        (Self::ATTRIBUTE, "attribute"),
        (Self::UNIT, "unit"),
        (Self::MIN, "minimum"),
        (Self::MAX, "maximum"),
        (Self::VALUE, "value"),
        (Self::DEFAULT, "default"),
    ];

    /// Whether every flag of `other` is set here.
    pub fn contains(self, other: Elements) -> bool {
        self.0 & other.0 == other.0
    }
    /// The name of a single flag (`None` for none or several).
    pub fn name(self) -> Option<&'static str> {
        Self::ALL.iter().find(|(e, _)| *e == self).map(|(_, n)| *n)
    }
    /// Parse an element name as used on command lines (`value`, `name`, `attribute`, `unit`,
    /// `min`/`minimum`, `max`/`maximum`, `default`, `state`/`data state`).
    pub fn from_name(s: &str) -> Option<Elements> {
        Some(match s {
            "value" | "data" => Self::VALUE,
            "name" => Self::NAME,
            "attribute" | "attr" => Self::ATTRIBUTE,
            "unit" => Self::UNIT,
            "min" | "minimum" => Self::MIN,
            "max" | "maximum" => Self::MAX,
            "default" => Self::DEFAULT,
            "state" | "data state" => Self::DATA_STATE,
            _ => return None,
        })
    }
}

/// An identification number (IDN): `S-set-number` or `P-set-number`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Idn(pub u16);

impl Idn {
    /// Build from its parts; `None` if `set > 7` or `number > 4095`.
    pub fn new(product: bool, set: u8, number: u16) -> Option<Idn> {
        if set > 7 || number > 0x0FFF {
            return None;
        }
        Some(Idn((product as u16) << 15 | (set as u16) << 12 | number))
    }
    /// Product-specific (`P`) rather than standard (`S`).
    pub fn is_product(self) -> bool {
        self.0 & 0x8000 != 0
    }
    /// Parameter set 0..7.
    pub fn set(self) -> u8 {
        ((self.0 >> 12) & 7) as u8
    }
    /// Number 0..4095.
    pub fn number(self) -> u16 {
        self.0 & 0x0FFF
    }
}

impl fmt::Display for Idn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_product() { 'P' } else { 'S' };
        write!(f, "{kind}-{}-{:04}", self.set(), self.number())
    }
}

impl FromStr for Idn {
    type Err = Error;
    /// Accepts `S-0-0001`, `P-0-150` (either case) or the raw number in decimal or `0x` hex;
    /// [`Error::BadValue`] otherwise.
    fn from_str(s: &str) -> Result<Idn> {
        let s = s.trim();
        let mut parts = s.split('-');
        let (Some(k), Some(set), Some(num), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            let raw = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(h) => u16::from_str_radix(h, 16),
                None => s.parse(),
            };
            return raw.map(Idn).map_err(|_| Error::BadValue);
        };
        let product = match k {
            "S" | "s" => false,
            "P" | "p" => true,
            _ => return Err(Error::BadValue),
        };
        let set: u8 = set.parse().map_err(|_| Error::BadValue)?;
        let num: u16 = num.parse().map_err(|_| Error::BadValue)?;
        Idn::new(product, set, num).ok_or(Error::BadValue)
    }
}

/// An SoE error code (the `u16` at the end of an error response).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SoeErrorCode(pub u16);

impl SoeErrorCode {
    /// 0x1001: IDN not present.
    pub const NO_IDN: Self = Self(0x1001);
    /// 0x1009: invalid access to element 1.
    pub const INVALID_ELEMENT_1: Self = Self(0x1009);
    /// 0x2001: no name.
    pub const NO_NAME: Self = Self(0x2001);
    /// 0x4001: no unit.
    pub const NO_UNIT: Self = Self(0x4001);
    /// 0x5001: no minimum input value.
    pub const NO_MIN: Self = Self(0x5001);
    /// 0x6001: no maximum input value.
    pub const NO_MAX: Self = Self(0x6001);
    /// 0x7002: operation data too short.
    pub const DATA_TOO_SHORT: Self = Self(0x7002);
    /// 0x7003: operation data too long.
    pub const DATA_TOO_LONG: Self = Self(0x7003);
    /// 0x7004: operation data read only.
    pub const DATA_READ_ONLY: Self = Self(0x7004);
    /// 0x7005: operation data write-protected in this state.
    pub const DATA_WRITE_PROTECTED: Self = Self(0x7005);
    /// 0x7006: operation data smaller than the minimum.
    pub const DATA_BELOW_MIN: Self = Self(0x7006);
    /// 0x7007: operation data greater than the maximum.
    pub const DATA_ABOVE_MAX: Self = Self(0x7007);
    /// 0x7008: invalid operation data.
    pub const DATA_INVALID: Self = Self(0x7008);
    /// 0x8001: no default value.
    pub const NO_DEFAULT: Self = Self(0x8001);
    /// 0x800A: invalid drive number.
    pub const INVALID_DRIVE: Self = Self(0x800A);
    /// 0x800B: general error.
    pub const GENERAL: Self = Self(0x800B);
    /// 0x800C: no element addressed.
    pub const NO_ELEMENT: Self = Self(0x800C);

    /// The text for this code.
    pub fn description(self) -> &'static str {
        match self.0 {
            0x0000 => "no error",
            0x1001 => "IDN not present",
            0x1009 => "invalid access to element 1",
            0x2001 => "no name",
            0x2002 => "name transmission too short",
            0x2003 => "name transmission too long",
            0x2004 => "name cannot be changed (read only)",
            0x2005 => "name is write-protected at this time",
            0x3002 => "attribute transmission too short",
            0x3003 => "attribute transmission too long",
            0x3004 => "attribute cannot be changed (read only)",
            0x3005 => "attribute is write-protected at this time",
            0x4001 => "no unit",
            0x4002 => "unit transmission too short",
            0x4003 => "unit transmission too long",
            0x4004 => "unit cannot be changed (read only)",
            0x4005 => "unit is write-protected at this time",
            0x5001 => "no minimum input value",
            0x5002 => "minimum input value transmission too short",
            0x5003 => "minimum input value transmission too long",
            0x5004 => "minimum input value cannot be changed (read only)",
            0x5005 => "minimum input value is write-protected at this time",
            0x6001 => "no maximum input value",
            0x6002 => "maximum input value transmission too short",
            0x6003 => "maximum input value transmission too long",
            0x6004 => "maximum input value cannot be changed (read only)",
            0x6005 => "maximum input value is write-protected at this time",
            0x7002 => "operation data transmission too short",
            0x7003 => "operation data transmission too long",
            0x7004 => "operation data cannot be changed (read only)",
            0x7005 => "operation data is write-protected at this time (state)",
            0x7006 => "operation data is smaller than the minimum input value",
            0x7007 => "operation data is greater than the maximum input value",
            0x7008 => "invalid operation data: configured IDN not supported",
            0x7009 => "operation data write-protected by a password",
            0x700A => "operation data write-protected, it is configured cyclically",
            0x700B => "invalid indirect addressing (data container, list handling)",
            0x700C => "operation data write-protected due to other settings",
            0x7010 => "procedure command already active",
            0x7011 => "procedure command not interruptible",
            0x7012 => "procedure command not executable at this time (state)",
            0x7013 => "procedure command not executable (invalid or false parameters)",
            0x7014 => "no data state",
            0x8001 => "no default value",
            0x8002 => "default value transmission too long",
            0x8004 => "default value cannot be changed (read only)",
            0x800A => "invalid drive number",
            0x800B => "general error",
            0x800C => "no element addressed",
            _ => "unknown SoE error",
        }
    }
}

impl fmt::Display for SoeErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04X} ({})", self.0, self.description())
    }
}

/// The attribute element of an IDN (u32), decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IdnAttribute(pub u32);

impl IdnAttribute {
    /// Build from the fields most drives fill: `length_code` (bits 18..16: 1 = 2 bytes,
    /// 2 = 4 bytes, 3 = 8 bytes, 4..7 = list of 1/2/4/8-byte items), `display` (bits 22..20)
    /// and `decimals` (bits 27..24), with conversion factor 1 and no write protection.
    pub fn new(length_code: u8, display: u8, decimals: u8) -> IdnAttribute {
        IdnAttribute(
            1 | ((length_code as u32 & 7) << 16)
                | ((display as u32 & 7) << 20)
                | ((decimals as u32 & 0xF) << 24),
        )
    }
    /// Conversion factor (bits 15..0).
    pub fn conversion_factor(self) -> u16 {
        self.0 as u16
    }
    /// Length code (bits 18..16).
    pub fn length_code(self) -> u8 {
        ((self.0 >> 16) & 7) as u8
    }
    /// Fixed value length in bytes, or `None` for variable-length lists (and the reserved
    /// code 0).
    pub fn fixed_len(self) -> Option<usize> {
        match self.length_code() {
            1 => Some(2),
            2 => Some(4),
            3 => Some(8),
            _ => None,
        }
    }
    /// Item size of a variable-length list (1, 2, 4 or 8), `None` for fixed values.
    pub fn list_item_len(self) -> Option<usize> {
        match self.length_code() {
            4 => Some(1),
            5 => Some(2),
            6 => Some(4),
            7 => Some(8),
            _ => None,
        }
    }
    /// Procedure command (bit 19) rather than a parameter.
    pub fn is_command(self) -> bool {
        self.0 & (1 << 19) != 0
    }
    /// Display format (bits 22..20): 0 binary, 1 unsigned, 2 signed, 3 hex, 4 text, 5 IDN,
    /// 6 float.
    pub fn display(self) -> u8 {
        ((self.0 >> 20) & 7) as u8
    }
    /// Decimal places (bits 27..24).
    pub fn decimals(self) -> u8 {
        ((self.0 >> 24) & 0xF) as u8
    }
    /// Write-protected in communication phase 2, 3, 4 (bits 28, 29, 30).
    pub fn write_protected(self) -> [bool; 3] {
        [28, 29, 30].map(|b| self.0 & (1 << b) != 0)
    }
}

/// The head of a variable-length element: `u16 current length | u16 maximum length` in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListHeader {
    /// Bytes of data that follow.
    pub current: u16,
    /// Bytes the element can hold.
    pub max: u16,
}

impl ListHeader {
    /// Bytes of the list header.
    pub const LEN: usize = 4;
    /// Split a list element into its header and its `current` bytes; [`Error::Truncated`] if
    /// fewer follow.
    pub fn parse(b: &[u8]) -> Result<(ListHeader, &[u8])> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        let h = ListHeader {
            current: le16(b, 0),
            max: le16(b, 2),
        };
        let data = b
            .get(Self::LEN..Self::LEN + h.current as usize)
            .ok_or(Error::Truncated)?;
        Ok((h, data))
    }
    /// Write a list element (header and `data`, with `max`); returns its length.
    pub fn emit(b: &mut [u8], data: &[u8], max: u16) -> Result<usize> {
        let current = u16::try_from(data.len()).map_err(|_| Error::BadLength)?;
        let len = Self::LEN + data.len();
        if b.len() < len {
            return Err(Error::NoSpace);
        }
        put16(b, 0, current);
        put16(b, 2, max.max(current));
        b[Self::LEN..len].copy_from_slice(data);
        Ok(len)
    }
}

/// A checked view over the SoE part of a message (the mailbox payload).
#[derive(Debug, Clone, Copy)]
pub struct SoePacket<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> SoePacket<T> {
    /// Wrap a mailbox payload; [`Error::Truncated`] if shorter than the SoE header.
    pub fn new_checked(buf: T) -> Result<Self> {
        if buf.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(SoePacket { buf })
    }
    /// Raw opcode (0..7).
    pub fn opcode_raw(&self) -> u8 {
        self.buf.as_ref()[0] & 7
    }
    /// More fragments follow (bit 3).
    pub fn incomplete(&self) -> bool {
        self.buf.as_ref()[0] & 0x08 != 0
    }
    /// Error response (bit 4).
    pub fn error(&self) -> bool {
        self.buf.as_ref()[0] & 0x10 != 0
    }
    /// Drive number (bits 7..5).
    pub fn drive_no(&self) -> u8 {
        self.buf.as_ref()[0] >> 5
    }
    /// Element flags.
    pub fn elements(&self) -> Elements {
        Elements(self.buf.as_ref()[1])
    }
    /// IDN, or fragments left when [`incomplete`](Self::incomplete).
    pub fn idn_or_fragments(&self) -> u16 {
        le16(self.buf.as_ref(), 2)
    }
    /// The bytes after the header.
    pub fn data(&self) -> &[u8] {
        &self.buf.as_ref()[HEADER_LEN..]
    }
}

/// A decoded SoE message; `data` borrows from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoeRepr<'a> {
    /// Operation.
    pub opcode: SoeOpcode,
    /// More fragments follow.
    pub incomplete: bool,
    /// Error response: `data` ends with a `u16` error code.
    pub error: bool,
    /// Drive number 0..7.
    pub drive_no: u8,
    /// Element flags.
    pub elements: Elements,
    /// IDN (complete messages) or fragments left (incomplete ones).
    pub idn_or_fragments: u16,
    /// The bytes after the header.
    pub data: &'a [u8],
}

impl<'a> SoeRepr<'a> {
    /// A request or response for `idn` (complete, no error, drive 0).
    pub fn new(opcode: SoeOpcode, elements: Elements, idn: Idn, data: &'a [u8]) -> Self {
        SoeRepr {
            opcode,
            incomplete: false,
            error: false,
            drive_no: 0,
            elements,
            idn_or_fragments: idn.0,
            data,
        }
    }

    /// Decode a checked packet; [`Error::BadValue`] for a reserved opcode.
    pub fn parse<T: AsRef<[u8]>>(p: &'a SoePacket<T>) -> Result<Self> {
        Self::parse_bytes(p.buf.as_ref())
    }

    /// Decode a mailbox payload (SoE header and data).
    pub fn parse_bytes(b: &'a [u8]) -> Result<Self> {
        let p = SoePacket::new_checked(b)?;
        Ok(SoeRepr {
            opcode: SoeOpcode::from_u8(p.opcode_raw()).ok_or(Error::BadValue)?,
            incomplete: p.incomplete(),
            error: p.error(),
            drive_no: p.drive_no(),
            elements: p.elements(),
            idn_or_fragments: p.idn_or_fragments(),
            data: &b[HEADER_LEN..],
        })
    }

    /// The IDN of a complete message (`None` while fragments follow).
    pub fn idn(&self) -> Option<Idn> {
        (!self.incomplete).then_some(Idn(self.idn_or_fragments))
    }

    /// Fragments still to come (`0` for a complete message).
    pub fn fragments_left(&self) -> u16 {
        if self.incomplete {
            self.idn_or_fragments
        } else {
            0
        }
    }

    /// The error code of an error response (the last two data bytes); `None` if the error
    /// flag is clear or the data is shorter than 2 bytes.
    pub fn error_code(&self) -> Option<SoeErrorCode> {
        let n = self.data.len();
        (self.error && n >= 2).then(|| SoeErrorCode(le16(self.data, n - 2)))
    }

    /// Bytes this message takes after the mailbox header.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.data.len()
    }

    /// Write the header and data at the start of `b`; returns the length.
    /// [`Error::BadValue`] if the drive number exceeds 7.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        if b.len() < len {
            return Err(Error::NoSpace);
        }
        if self.drive_no > 7 {
            return Err(Error::BadValue);
        }
        b[0] = self.opcode as u8
            | (self.incomplete as u8) << 3
            | (self.error as u8) << 4
            | self.drive_no << 5;
        b[1] = self.elements.0;
        put16(b, 2, self.idn_or_fragments);
        b[HEADER_LEN..len].copy_from_slice(self.data);
        Ok(len)
    }
}

/// Split a whole SoE mailbox message into its mailbox header and SoE message;
/// [`Error::BadValue`] if it is not of type SoE or the opcode is reserved.
pub fn parse_soe(msg: &[u8]) -> Result<(MailboxHeaderRepr, SoeRepr<'_>)> {
    let (mbx, payload) = mailbox::parse_typed(msg, MailboxType::Soe)?;
    Ok((mbx, SoeRepr::parse_bytes(payload)?))
}

/// Write a whole SoE message (mailbox header with `counter`, SoE header, data); returns its
/// length.
pub fn emit_soe(buf: &mut [u8], counter: u8, repr: &SoeRepr<'_>) -> Result<usize> {
    let len = repr.buffer_len();
    mailbox::emit_typed(buf, MailboxType::Soe, counter, len, |p| repr.emit(p))
}

/// Read a little-endian value of 2, 4 or 8 bytes as `u64` (SoE operation data); `None` for
/// other lengths.
pub fn value_u64(data: &[u8]) -> Option<u64> {
    Some(match data.len() {
        2 => le16(data, 0) as u64,
        4 => le32(data, 0) as u64,
        8 => le32(data, 0) as u64 | (le32(data, 4) as u64) << 32,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::string::ToString;

    #[test]
    fn idn_text_form() {
        assert_eq!(Idn(1).to_string(), "S-0-0001");
        assert_eq!(Idn(0x8096).to_string(), "P-0-0150");
        assert_eq!(Idn(0xF0FF).to_string(), "P-7-0255");
        assert_eq!("S-0-0001".parse::<Idn>(), Ok(Idn(1)));
        assert_eq!("P-0-0150".parse::<Idn>(), Ok(Idn(0x8096)));
        assert_eq!("p-1-15".parse::<Idn>(), Ok(Idn(0x900F)));
        assert_eq!("32918".parse::<Idn>(), Ok(Idn(0x8096)));
        assert_eq!("0x8096".parse::<Idn>(), Ok(Idn(0x8096)));
        for bad in [
            "X-0-0001", "S-8-0001", "S-0-4096", "S-0", "S-0-1-2", "", "70000",
        ] {
            assert_eq!(bad.parse::<Idn>(), Err(Error::BadValue), "{bad}");
        }
        assert_eq!(Idn::new(false, 8, 1), None);
    }

    #[test]
    fn read_request_bytes() {
        let mut b = [0xA5u8; 12];
        let r = SoeRepr {
            drive_no: 1,
            ..SoeRepr::new(SoeOpcode::ReadRequest, Elements::VALUE, Idn(0x0010), &[])
        };
        let n = emit_soe(&mut b, 3, &r).unwrap();
        assert_eq!(n, 10);
        assert_eq!(
            &b[..11],
            &[4, 0, 0, 0, 0, 0x35, 0x21, 0x40, 0x10, 0x00, 0xA5]
        );
        let (h, back) = parse_soe(&b[..n]).unwrap();
        assert_eq!((h.kind, h.counter), (MailboxType::Soe, 3));
        assert_eq!(back, r);
        assert_eq!(back.idn(), Some(Idn(0x10)));
        assert_eq!(back.error_code(), None);
    }

    #[test]
    fn error_response_and_fragments() {
        let code = 0x1001u16.to_le_bytes();
        let r = SoeRepr {
            error: true,
            ..SoeRepr::new(SoeOpcode::ReadResponse, Elements::VALUE, Idn(7), &code)
        };
        let mut b = [0u8; 16];
        let n = emit_soe(&mut b, 1, &r).unwrap();
        let (_, back) = parse_soe(&b[..n]).unwrap();
        assert_eq!(back.error_code(), Some(SoeErrorCode::NO_IDN));
        assert_eq!(
            back.error_code().unwrap().to_string(),
            "0x1001 (IDN not present)"
        );
        let frag = SoeRepr {
            incomplete: true,
            idn_or_fragments: 2,
            ..SoeRepr::new(SoeOpcode::WriteRequest, Elements::VALUE, Idn(0), b"abc")
        };
        assert_eq!((frag.idn(), frag.fragments_left()), (None, 2));
        assert_eq!(SoeErrorCode(0x7777).description(), "unknown SoE error");
        assert_eq!(
            SoeRepr::new(SoeOpcode::ReadRequest, Elements(0), Idn(0), &[]).emit(&mut [0; 3]),
            Err(Error::NoSpace)
        );
        let bad = SoeRepr {
            drive_no: 8,
            ..SoeRepr::new(SoeOpcode::ReadRequest, Elements(0), Idn(0), &[])
        };
        assert_eq!(bad.emit(&mut [0; 4]), Err(Error::BadValue));
        assert_eq!(
            SoeRepr::parse(&SoePacket::new_checked([0u8; 4]).unwrap()),
            Err(Error::BadValue)
        );
        assert_eq!(
            SoePacket::new_checked([0u8; 3]).unwrap_err(),
            Error::Truncated
        );
    }

    #[test]
    fn attribute_list_and_elements() {
        let a = IdnAttribute::new(2, 2, 3);
        assert_eq!(
            (a.fixed_len(), a.list_item_len(), a.display(), a.decimals()),
            (Some(4), None, 2, 3)
        );
        assert_eq!(a.conversion_factor(), 1);
        assert!(!a.is_command());
        assert_eq!(a.write_protected(), [false; 3]);
        assert_eq!(IdnAttribute::new(4, 4, 0).list_item_len(), Some(1));
        let mut b = [0u8; 16];
        let n = ListHeader::emit(&mut b, b"Name", 8).unwrap();
        assert_eq!(&b[..n], &[4, 0, 8, 0, b'N', b'a', b'm', b'e']);
        let (h, d) = ListHeader::parse(&b[..n]).unwrap();
        assert_eq!((h.current, h.max, d), (4, 8, &b"Name"[..]));
        assert_eq!(ListHeader::parse(&b[..n - 1]), Err(Error::Truncated));
        assert_eq!(Elements::from_name("max"), Some(Elements::MAX));
        assert_eq!(Elements::MAX.name(), Some("maximum"));
        assert!(Elements(0x42).contains(Elements::NAME));
        assert_eq!(value_u64(&[1, 2]), Some(0x0201));
        assert_eq!(value_u64(&[1, 0, 0, 0, 0, 0, 0, 1]), Some(1 | 1 << 56));
        assert_eq!(value_u64(&[1, 2, 3]), None);
    }

    proptest! {
        #[test]
        fn round_trip(op in 1u8..7, inc: bool, err: bool, drive in 0u8..8, el: u8, idn: u16,
                      data in proptest::collection::vec(any::<u8>(), 0..64), cnt in 0u8..8) {
            let r = SoeRepr {
                opcode: SoeOpcode::from_u8(op).unwrap(),
                incomplete: inc, error: err, drive_no: drive,
                elements: Elements(el), idn_or_fragments: idn, data: &data,
            };
            let mut b = [0u8; 80];
            let n = emit_soe(&mut b, cnt, &r).unwrap();
            let (h, back) = parse_soe(&b[..n]).unwrap();
            prop_assert_eq!(h.counter, cnt);
            prop_assert_eq!(back, r);
        }

        #[test]
        fn idn_text_round_trip(idn: u16) {
            let s = Idn(idn).to_string();
            prop_assert_eq!(s.parse::<Idn>(), Ok(Idn(idn)));
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok((_, r)) = parse_soe(&b) {
                let _ = (r.error_code(), r.idn(), r.fragments_left());
                let _ = ListHeader::parse(r.data);
            }
        }
    }
}
