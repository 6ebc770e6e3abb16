//! SDO Information (CoE service 8): reading a SubDevice's object dictionary.
//!
//! After the CoE header comes a 4-byte info header (`opcode:7 incomplete:1 | reserved |
//! u16 fragments left`) and the opcode's payload. Long answers arrive in fragments, each with
//! `incomplete` set except the last, fragments-left counting down to 0; only the first
//! fragment of an OD list carries the list type, so [`SdoInfo::OdListResponse`] hands back the
//! raw `u16` words and the caller (which knows whether this is the first fragment) splits
//! them with [`U16List::split_first`].
//!
//! OD list types follow SOES/Synapticon (2 = RxPDO-mappable, 3 = TxPDO-mappable,
//! 4 = backup, 5 = settings), not Wireshark's older labels; see the reference's CONFLICT note
//! and the test `list_types_follow_soes_not_wireshark`.

use super::{emit_coe, parse_coe, CoeService, DataType, SdoAbortCode, DATA_OFFSET};
use crate::{le16, le32, put16, put32, Error, Result};

/// Bytes of the info header.
pub const HEADER_LEN: usize = 4;

/// SDO Information opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SdoInfoOpcode {
    /// 1: get OD list request.
    OdListRequest = 1,
    /// 2: get OD list response.
    OdListResponse = 2,
    /// 3: get object description request.
    ObjectDescriptionRequest = 3,
    /// 4: get object description response.
    ObjectDescriptionResponse = 4,
    /// 5: get entry description request.
    EntryDescriptionRequest = 5,
    /// 6: get entry description response.
    EntryDescriptionResponse = 6,
    /// 7: SDO info error.
    Error = 7,
}

impl SdoInfoOpcode {
    /// Decode bits 6:0; `None` for undefined opcodes.
    pub fn from_u8(v: u8) -> Option<Self> {
        use SdoInfoOpcode::*;
        Some(match v & 0x7F {
            1 => OdListRequest,
            2 => OdListResponse,
            3 => ObjectDescriptionRequest,
            4 => ObjectDescriptionResponse,
            5 => EntryDescriptionRequest,
            6 => EntryDescriptionResponse,
            7 => Error,
            _ => return None,
        })
    }
}

/// The decoded info header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdoInfoHeaderRepr {
    /// Opcode.
    pub opcode: SdoInfoOpcode,
    /// More fragments follow.
    pub incomplete: bool,
    /// Fragments still to come.
    pub fragments_left: u16,
}

impl SdoInfoHeaderRepr {
    /// A complete (single-fragment) header for `opcode`.
    pub fn new(opcode: SdoInfoOpcode) -> Self {
        SdoInfoHeaderRepr {
            opcode,
            incomplete: false,
            fragments_left: 0,
        }
    }
    /// Decode 4 bytes; [`Error::BadValue`] for an undefined opcode.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(SdoInfoHeaderRepr {
            opcode: SdoInfoOpcode::from_u8(b[0]).ok_or(Error::BadValue)?,
            incomplete: b[0] & 0x80 != 0,
            fragments_left: le16(b, 2),
        })
    }
    /// Encode 4 bytes.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < HEADER_LEN {
            return Err(Error::NoSpace);
        }
        b[0] = self.opcode as u8 | (self.incomplete as u8) << 7;
        b[1] = 0;
        put16(b, 2, self.fragments_left);
        Ok(())
    }
}

/// Which objects a Get OD list request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OdListType(pub u16);

impl OdListType {
    /// 0: the five counts (all, RxPDO-mappable, TxPDO-mappable, backup, settings).
    pub const COUNTS: Self = Self(0);
    /// 1: all objects.
    pub const ALL: Self = Self(1);
    /// 2: RxPDO-mappable objects.
    pub const RXPDO_MAPPABLE: Self = Self(2);
    /// 3: TxPDO-mappable objects.
    pub const TXPDO_MAPPABLE: Self = Self(3);
    /// 4: objects stored for device replacement (backup).
    pub const BACKUP: Self = Self(4);
    /// 5: startup parameters (settings).
    pub const SETTINGS: Self = Self(5);

    /// A short description.
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "counts",
            1 => "all objects",
            2 => "RxPDO-mappable",
            3 => "TxPDO-mappable",
            4 => "backup",
            5 => "settings",
            _ => "unknown list type",
        }
    }
}

/// Object code of an object description.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObjectCode(pub u8);

impl ObjectCode {
    /// NULL.
    pub const NULL: Self = Self(0);
    /// DOMAIN.
    pub const DOMAIN: Self = Self(2);
    /// DEFTYPE.
    pub const DEFTYPE: Self = Self(5);
    /// DEFSTRUCT.
    pub const DEFSTRUCT: Self = Self(6);
    /// VAR.
    pub const VAR: Self = Self(7);
    /// ARRAY.
    pub const ARRAY: Self = Self(8);
    /// RECORD.
    pub const RECORD: Self = Self(9);

    /// Its name (`VAR`, `ARRAY`, …).
    pub fn name(self) -> &'static str {
        match self.0 {
            0 => "NULL",
            2 => "DOMAIN",
            5 => "DEFTYPE",
            6 => "DEFSTRUCT",
            7 => "VAR",
            8 => "ARRAY",
            9 => "RECORD",
            _ => "UNKNOWN",
        }
    }
}

/// Value-info bits of an entry description request/response.
pub mod value_info {
    /// Access rights (always returned).
    pub const ACCESS: u8 = 0x01;
    /// Object category (always returned).
    pub const CATEGORY: u8 = 0x02;
    /// PDO mappable (always returned).
    pub const MAPPABLE: u8 = 0x04;
    /// Unit type (u32).
    pub const UNIT: u8 = 0x08;
    /// Default value.
    pub const DEFAULT: u8 = 0x10;
    /// Minimum value.
    pub const MIN: u8 = 0x20;
    /// Maximum value.
    pub const MAX: u8 = 0x40;
}

/// Object access word of an entry description.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ObjectAccess(pub u16);

impl ObjectAccess {
    /// Readable in PREOP.
    pub const READ_PREOP: u16 = 0x0001;
    /// Readable in SAFEOP.
    pub const READ_SAFEOP: u16 = 0x0002;
    /// Readable in OP.
    pub const READ_OP: u16 = 0x0004;
    /// Writable in PREOP.
    pub const WRITE_PREOP: u16 = 0x0008;
    /// Writable in SAFEOP.
    pub const WRITE_SAFEOP: u16 = 0x0010;
    /// Writable in OP.
    pub const WRITE_OP: u16 = 0x0020;
    /// RxPDO mappable.
    pub const RXPDO: u16 = 0x0040;
    /// TxPDO mappable.
    pub const TXPDO: u16 = 0x0080;
    /// Backup.
    pub const BACKUP: u16 = 0x0100;
    /// Settings.
    pub const SETTINGS: u16 = 0x0200;
    /// Readable in all states.
    pub const READ_ALL: u16 = 0x0007;
    /// Writable in all states.
    pub const WRITE_ALL: u16 = 0x0038;

    /// True if all bits of `mask` are set.
    pub fn has(self, mask: u16) -> bool {
        self.0 & mask == mask
    }
}

/// A list of little-endian `u16` words (OD list payloads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct U16List<'a> {
    data: &'a [u8],
}

impl<'a> U16List<'a> {
    /// Wrap bytes (an odd trailing byte is ignored).
    pub fn new(data: &'a [u8]) -> Self {
        U16List {
            data: &data[..data.len() & !1],
        }
    }
    /// Number of words.
    pub fn len(&self) -> usize {
        self.data.len() / 2
    }
    /// True if there are no words.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// Word `i`.
    pub fn get(&self, i: usize) -> Option<u16> {
        (i < self.len()).then(|| le16(self.data, 2 * i))
    }
    /// The first word (the list type in a first fragment) and the rest.
    pub fn split_first(&self) -> Option<(u16, U16List<'a>)> {
        let first = self.get(0)?;
        Some((first, U16List::new(&self.data[2..])))
    }
    /// Iterate the words.
    pub fn iter(&self) -> impl Iterator<Item = u16> + 'a {
        self.data
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
    }
}

/// Get object description response payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectDescriptionRepr<'a> {
    /// Object index.
    pub index: u16,
    /// Data type.
    pub data_type: DataType,
    /// Highest subindex.
    pub max_subindex: u8,
    /// Object code.
    pub object_code: ObjectCode,
    /// Name (ASCII, rest of the message).
    pub name: &'a [u8],
}

impl<'a> ObjectDescriptionRepr<'a> {
    /// Bytes before the name.
    pub const FIXED_LEN: usize = 6;
    /// Decode the payload after the info header.
    pub fn parse(b: &'a [u8]) -> Result<Self> {
        if b.len() < Self::FIXED_LEN {
            return Err(Error::Truncated);
        }
        Ok(ObjectDescriptionRepr {
            index: le16(b, 0),
            data_type: DataType(le16(b, 2)),
            max_subindex: b[4],
            object_code: ObjectCode(b[5]),
            name: &b[6..],
        })
    }
    /// Payload length.
    pub fn len(&self) -> usize {
        Self::FIXED_LEN + self.name.len()
    }
    /// Never true (the fixed part is always there).
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Encode into `b` (at least [`len`](Self::len) bytes).
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < self.len() {
            return Err(Error::NoSpace);
        }
        put16(b, 0, self.index);
        put16(b, 2, self.data_type.0);
        b[4] = self.max_subindex;
        b[5] = self.object_code.0;
        b[6..self.len()].copy_from_slice(self.name);
        Ok(())
    }
}

/// Get entry description response payload. `data` holds the optional values the request asked
/// for (unit, default, min, max) and then the name; split it with
/// [`EntryDescriptionRepr::fields`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryDescriptionRepr<'a> {
    /// Object index.
    pub index: u16,
    /// Subindex.
    pub subindex: u8,
    /// Value info (which optional values are present).
    pub value_info: u8,
    /// Data type.
    pub data_type: DataType,
    /// Length in bits.
    pub bit_len: u16,
    /// Access rights and mappability.
    pub access: ObjectAccess,
    /// Optional values, then the name.
    pub data: &'a [u8],
}

/// The parts of [`EntryDescriptionRepr::data`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryFields<'a> {
    /// Unit type, if requested.
    pub unit: Option<u32>,
    /// Default value, if requested (`ceil(bit_len / 8)` bytes).
    pub default: Option<&'a [u8]>,
    /// Minimum value, if requested.
    pub min: Option<&'a [u8]>,
    /// Maximum value, if requested.
    pub max: Option<&'a [u8]>,
    /// Name (ASCII).
    pub name: &'a [u8],
}

impl<'a> EntryDescriptionRepr<'a> {
    /// Bytes before `data`.
    pub const FIXED_LEN: usize = 10;
    /// Decode the payload after the info header.
    pub fn parse(b: &'a [u8]) -> Result<Self> {
        if b.len() < Self::FIXED_LEN {
            return Err(Error::Truncated);
        }
        Ok(EntryDescriptionRepr {
            index: le16(b, 0),
            subindex: b[2],
            value_info: b[3],
            data_type: DataType(le16(b, 4)),
            bit_len: le16(b, 6),
            access: ObjectAccess(le16(b, 8)),
            data: &b[10..],
        })
    }
    /// Payload length.
    pub fn len(&self) -> usize {
        Self::FIXED_LEN + self.data.len()
    }
    /// Never true (the fixed part is always there).
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Encode into `b` (at least [`len`](Self::len) bytes).
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < self.len() {
            return Err(Error::NoSpace);
        }
        put16(b, 0, self.index);
        b[2] = self.subindex;
        b[3] = self.value_info;
        put16(b, 4, self.data_type.0);
        put16(b, 6, self.bit_len);
        put16(b, 8, self.access.0);
        b[10..self.len()].copy_from_slice(self.data);
        Ok(())
    }
    /// Split `data` by `value_info`: unit (4 bytes), default, min, max (each
    /// `ceil(bit_len / 8)` bytes), then the name. [`Error::Truncated`] if `data` is too short.
    pub fn fields(&self) -> Result<EntryFields<'a>> {
        let vlen = (self.bit_len as usize).div_ceil(8);
        let mut rest = self.data;
        let mut take = |bit: u8, n: usize| -> Result<Option<&'a [u8]>> {
            if self.value_info & bit == 0 {
                return Ok(None);
            }
            let (v, r) = rest.split_at_checked(n).ok_or(Error::Truncated)?;
            rest = r;
            Ok(Some(v))
        };
        let unit = take(value_info::UNIT, 4)?.map(|u| le32(u, 0));
        let default = take(value_info::DEFAULT, vlen)?;
        let min = take(value_info::MIN, vlen)?;
        let max = take(value_info::MAX, vlen)?;
        Ok(EntryFields {
            unit,
            default,
            min,
            max,
            name: rest,
        })
    }
}

/// A whole SDO Information message, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdoInfo<'a> {
    /// Get OD list request.
    OdListRequest {
        /// Which list.
        list_type: OdListType,
    },
    /// Get OD list response fragment: the raw words (the first fragment starts with the list
    /// type).
    OdListResponse {
        /// The words of this fragment.
        words: U16List<'a>,
    },
    /// Get object description request.
    ObjectDescriptionRequest {
        /// Object index.
        index: u16,
    },
    /// Get object description response.
    ObjectDescriptionResponse(ObjectDescriptionRepr<'a>),
    /// Get entry description request.
    EntryDescriptionRequest {
        /// Object index.
        index: u16,
        /// Subindex.
        subindex: u8,
        /// What to include (see [`value_info`]).
        value_info: u8,
    },
    /// Get entry description response.
    EntryDescriptionResponse(EntryDescriptionRepr<'a>),
    /// SDO info error.
    Error {
        /// Why.
        code: SdoAbortCode,
    },
}

/// Parse a whole mailbox message as SDO Information (CoE service 8).
pub fn parse_info(msg: &[u8]) -> Result<(SdoInfoHeaderRepr, SdoInfo<'_>)> {
    let (_, coe, body) = parse_coe(msg)?;
    if coe.service != CoeService::SdoInfo {
        return Err(Error::BadValue);
    }
    let h = SdoInfoHeaderRepr::parse(body)?;
    let p = &body[HEADER_LEN..];
    let need = |n: usize| {
        if p.len() < n {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    };
    let info = match h.opcode {
        SdoInfoOpcode::OdListRequest => {
            need(2)?;
            SdoInfo::OdListRequest {
                list_type: OdListType(le16(p, 0)),
            }
        }
        SdoInfoOpcode::OdListResponse => SdoInfo::OdListResponse {
            words: U16List::new(p),
        },
        SdoInfoOpcode::ObjectDescriptionRequest => {
            need(2)?;
            SdoInfo::ObjectDescriptionRequest { index: le16(p, 0) }
        }
        SdoInfoOpcode::ObjectDescriptionResponse => {
            SdoInfo::ObjectDescriptionResponse(ObjectDescriptionRepr::parse(p)?)
        }
        SdoInfoOpcode::EntryDescriptionRequest => {
            need(4)?;
            SdoInfo::EntryDescriptionRequest {
                index: le16(p, 0),
                subindex: p[2],
                value_info: p[3],
            }
        }
        SdoInfoOpcode::EntryDescriptionResponse => {
            SdoInfo::EntryDescriptionResponse(EntryDescriptionRepr::parse(p)?)
        }
        SdoInfoOpcode::Error => {
            need(4)?;
            SdoInfo::Error {
                code: SdoAbortCode(le32(p, 0)),
            }
        }
    };
    Ok((h, info))
}

/// Write the mailbox, CoE and info headers and return the `len`-byte payload to fill.
pub fn emit_info<'a>(
    buf: &'a mut [u8],
    counter: u8,
    header: &SdoInfoHeaderRepr,
    len: usize,
) -> Result<&'a mut [u8]> {
    let body = emit_coe(buf, counter, CoeService::SdoInfo, HEADER_LEN + len)?;
    header.emit(body)?;
    Ok(&mut body[HEADER_LEN..])
}

fn total(len: usize) -> usize {
    DATA_OFFSET + HEADER_LEN + len
}

/// Client: Get OD list request.
pub fn emit_od_list_request(buf: &mut [u8], counter: u8, list_type: OdListType) -> Result<usize> {
    let h = SdoInfoHeaderRepr::new(SdoInfoOpcode::OdListRequest);
    put16(emit_info(buf, counter, &h, 2)?, 0, list_type.0);
    Ok(total(2))
}

/// Client: Get object description request.
pub fn emit_object_description_request(buf: &mut [u8], counter: u8, index: u16) -> Result<usize> {
    let h = SdoInfoHeaderRepr::new(SdoInfoOpcode::ObjectDescriptionRequest);
    put16(emit_info(buf, counter, &h, 2)?, 0, index);
    Ok(total(2))
}

/// Client: Get entry description request.
pub fn emit_entry_description_request(
    buf: &mut [u8],
    counter: u8,
    index: u16,
    subindex: u8,
    value_info: u8,
) -> Result<usize> {
    let h = SdoInfoHeaderRepr::new(SdoInfoOpcode::EntryDescriptionRequest);
    let p = emit_info(buf, counter, &h, 4)?;
    put16(p, 0, index);
    p[2] = subindex;
    p[3] = value_info;
    Ok(total(4))
}

/// Server: one Get OD list response fragment. `list_type` is `Some` on the first fragment
/// only; `incomplete` is set when `fragments_left > 0`.
pub fn emit_od_list_response(
    buf: &mut [u8],
    counter: u8,
    fragments_left: u16,
    list_type: Option<OdListType>,
    words: &[u16],
) -> Result<usize> {
    let h = SdoInfoHeaderRepr {
        opcode: SdoInfoOpcode::OdListResponse,
        incomplete: fragments_left > 0,
        fragments_left,
    };
    let n = 2 * (words.len() + list_type.is_some() as usize);
    let p = emit_info(buf, counter, &h, n)?;
    let first = list_type.map(|t| t.0);
    for (i, w) in first.iter().chain(words).enumerate() {
        put16(p, 2 * i, *w);
    }
    Ok(total(n))
}

/// Server: Get object description response (single fragment).
pub fn emit_object_description_response(
    buf: &mut [u8],
    counter: u8,
    d: &ObjectDescriptionRepr<'_>,
) -> Result<usize> {
    let h = SdoInfoHeaderRepr::new(SdoInfoOpcode::ObjectDescriptionResponse);
    d.emit(emit_info(buf, counter, &h, d.len())?)?;
    Ok(total(d.len()))
}

/// Server: Get entry description response (single fragment).
pub fn emit_entry_description_response(
    buf: &mut [u8],
    counter: u8,
    d: &EntryDescriptionRepr<'_>,
) -> Result<usize> {
    let h = SdoInfoHeaderRepr::new(SdoInfoOpcode::EntryDescriptionResponse);
    d.emit(emit_info(buf, counter, &h, d.len())?)?;
    Ok(total(d.len()))
}

/// Server: SDO info error with an abort code.
pub fn emit_info_error(buf: &mut [u8], counter: u8, code: SdoAbortCode) -> Result<usize> {
    let h = SdoInfoHeaderRepr::new(SdoInfoOpcode::Error);
    put32(emit_info(buf, counter, &h, 4)?, 0, code.0);
    Ok(total(4))
}

#[cfg(test)]
mod tests;
