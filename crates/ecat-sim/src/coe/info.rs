//! The SDO Information server (reference §6.6): OD lists, object and entry descriptions.
//!
//! * Get OD list: list type 0 answers the five counts (all, RxPDO-mappable, TxPDO-mappable,
//!   backup, settings); 1..5 the indices of the matching objects (an object matches 2..5 if
//!   any of its entries has the access bit). Long lists are split into fragments that fill
//!   the send mailbox (SM1 size − 12 bytes of words each, the first starting with the list
//!   type), `incomplete` set and fragments-left counting down to 0; the mailbox queues them
//!   and hands them out one per SM1 read. Another list type → info error 0x06090030
//!   (our choice).
//! * Get object description: index, data type, highest subindex, object code, name.
//! * Get entry description: the fixed part, then only the optional values requested (unit
//!   u32; default/min/max in the entry's byte width, for integers), then the name; the
//!   response's value-info says which are there. Strings give no min/max.
//! * A description longer than the send mailbox goes out in fragments as real devices send
//!   it ([`fragments`]): every message repeats the info header (same opcode, `incomplete`
//!   set but on the last, fragments-left counting down to 0) followed by the next part of
//!   the description's bytes, the first part starting with the fixed fields.
//! * Unknown object → info error 0x06020000; unknown subindex → 0x06090011; a request we
//!   do not serve (a response opcode) → 0x05040001.

use super::od::{Entry, Object, Od};
use ecat_wire::coe::info::{
    self as wire, value_info, EntryDescriptionRepr, ObjectAccess, ObjectDescriptionRepr,
    OdListType, SdoInfo,
};
use ecat_wire::coe::{DataType, SdoAbortCode as Abort};

fn error(code: Abort) -> Vec<u8> {
    let mut b = [0u8; 32];
    let n = wire::emit_info_error(&mut b, 0, code).unwrap_or(0);
    b[..n].to_vec()
}

fn matches(o: &Object, list: u16) -> bool {
    let any = |bit: u16| o.entries.iter().any(|e| e.access & bit != 0);
    match list {
        1 => true,
        2 => any(ObjectAccess::RXPDO),
        3 => any(ObjectAccess::TXPDO),
        4 => any(ObjectAccess::BACKUP),
        5 => any(ObjectAccess::SETTINGS),
        _ => false,
    }
}

/// Answer one SDO Information request; returns the reply messages (several fragments for a
/// long OD list). `mbx` is the send mailbox size (SM1).
pub(crate) fn handle(od: &Od, m: &[u8], mbx: usize) -> Vec<Vec<u8>> {
    let Ok((_, req)) = wire::parse_info(m) else {
        return vec![error(Abort::BAD_COMMAND)];
    };
    match req {
        SdoInfo::OdListRequest { list_type } => od_list(od, list_type, mbx),
        SdoInfo::ObjectDescriptionRequest { index } => {
            let Some(o) = od.object(index) else {
                return vec![error(Abort::NO_OBJECT)];
            };
            let d = ObjectDescriptionRepr {
                index,
                data_type: o.dtype,
                max_subindex: o.max_subindex(),
                object_code: o.code,
                name: o.name.as_bytes(),
            };
            let mut b = vec![0u8; HEAD + d.len()];
            let n = wire::emit_object_description_response(&mut b, 0, &d).unwrap_or(0);
            b.truncate(n);
            fragments(b, mbx)
        }
        SdoInfo::EntryDescriptionRequest {
            index,
            subindex,
            value_info: vi,
        } => {
            let Some(o) = od.object(index) else {
                return vec![error(Abort::NO_OBJECT)];
            };
            let Some(e) = o.entry(subindex) else {
                return vec![error(Abort::NO_SUBINDEX)];
            };
            let (vi, data) = entry_data(e, vi);
            let d = EntryDescriptionRepr {
                index,
                subindex,
                value_info: vi,
                data_type: e.dtype,
                bit_len: e.bits,
                access: ObjectAccess(e.access),
                data: &data,
            };
            let mut b = vec![0u8; HEAD + EntryDescriptionRepr::FIXED_LEN + data.len()];
            let n = wire::emit_entry_description_response(&mut b, 0, &d).unwrap_or(0);
            b.truncate(n);
            fragments(b, mbx)
        }
        _ => vec![error(Abort::BAD_COMMAND)],
    }
}

/// The optional values and the name of an entry description; returns the value-info sent.
fn entry_data(e: &Entry, requested: u8) -> (u8, Vec<u8>) {
    let mut vi = requested & 0x7F;
    let mut data = Vec::new();
    if vi & value_info::UNIT != 0 {
        data.extend_from_slice(&e.unit.to_le_bytes());
    }
    if vi & value_info::DEFAULT != 0 {
        data.extend_from_slice(&e.default);
    }
    let width = e.value.len();
    let limit = |v: Option<i64>, signed_min: bool| -> Vec<u8> {
        let v = v.unwrap_or(match (e.is_signed(), signed_min) {
            (true, true) => -(1i64 << (e.bits.clamp(1, 64) - 1).min(62)),
            (true, false) => (1i64 << (e.bits.clamp(1, 64) - 1).min(62)) - 1,
            (false, true) => 0,
            (false, false) => -1,
        });
        v.to_le_bytes()[..width.min(8)].to_vec()
    };
    if e.is_string() {
        vi &= !(value_info::MIN | value_info::MAX);
    }
    if vi & value_info::MIN != 0 {
        data.extend_from_slice(&limit(e.min, true));
    }
    if vi & value_info::MAX != 0 {
        data.extend_from_slice(&limit(e.max, false));
    }
    data.extend_from_slice(e.name.as_bytes());
    (vi, data)
}

/// Mailbox header, CoE header and SDO Information header: the bytes every fragment repeats.
const HEAD: usize = 6 + 2 + wire::HEADER_LEN;

/// Split a whole SDO Information response `msg` (mailbox header included) into messages of
/// at most `mbx` bytes (see the module documentation); one message if it fits.
fn fragments(msg: Vec<u8>, mbx: usize) -> Vec<Vec<u8>> {
    let per = mbx.saturating_sub(HEAD).max(1);
    if msg.len() <= HEAD || msg.len() - HEAD <= per {
        return vec![msg];
    }
    let Ok(h) = wire::SdoInfoHeaderRepr::parse(&msg[HEAD - wire::HEADER_LEN..HEAD]) else {
        return vec![msg];
    };
    let parts: Vec<&[u8]> = msg[HEAD..].chunks(per).collect();
    let count = parts.len();
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let mut m = Vec::with_capacity(HEAD + part.len());
            m.extend_from_slice(&msg[..HEAD]);
            m.extend_from_slice(part);
            let len = (m.len() - 6) as u16;
            m[0..2].copy_from_slice(&len.to_le_bytes());
            let left = (count - 1 - i) as u16;
            let fh = wire::SdoInfoHeaderRepr {
                incomplete: left > 0,
                fragments_left: left,
                ..h
            };
            let _ = fh.emit(&mut m[HEAD - wire::HEADER_LEN..HEAD]);
            m
        })
        .collect()
}

fn od_list(od: &Od, list: OdListType, mbx: usize) -> Vec<Vec<u8>> {
    let words: Vec<u16> = match list.0 {
        0 => (1..=5)
            .map(|t| od.objects().iter().filter(|o| matches(o, t)).count() as u16)
            .collect(),
        1..=5 => od
            .objects()
            .iter()
            .filter(|o| matches(o, list.0))
            .map(|o| o.index)
            .collect(),
        _ => return vec![error(Abort::VALUE_RANGE)],
    };
    // Words per message: mailbox − 6 (mailbox header) − 2 (CoE) − 4 (info header).
    let per = (mbx.saturating_sub(12) / 2).max(2);
    // The first fragment also carries the list type.
    let mut chunks: Vec<&[u16]> = Vec::new();
    let first = words.len().min(per - 1);
    chunks.push(&words[..first]);
    chunks.extend(words[first..].chunks(per));
    let count = chunks.len();
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut b = vec![0u8; mbx.max(32)];
            let lt = (i == 0).then_some(list);
            let left = (count - 1 - i) as u16;
            let n = wire::emit_od_list_response(&mut b, 0, left, lt, c).unwrap_or(0);
            b.truncate(n);
            b
        })
        .collect()
}

/// Data type code of an object description for a record of PDO mapping entries.
pub const PDO_MAPPING: DataType = DataType(0x0021);
/// Data type code of the identity record (0x1018).
pub const IDENTITY: DataType = DataType(0x0023);
