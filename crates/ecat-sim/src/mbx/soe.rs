//! The SoE server: a drive's IDNs with their elements (value, name, attribute, unit,
//! minimum, maximum, default), read and written in fragments, with the SoE error codes.
//!
//! * Read: the elements asked for come back concatenated in element-bit order (data state
//!   u16, name list, attribute u32, unit list, min, max, value, default); more than SM1 size
//!   − 10 bytes go out in several read responses, all but the last marked incomplete with
//!   the number of fragments still to come in place of the IDN.
//! * Write: only the value can be written; incomplete fragments are collected without an
//!   answer (as SOEM and IgH send them) and the last one is answered. Checks: IDN present
//!   (0x1001), drive 0 (0x800A), an element addressed (0x800C), other elements read only
//!   (0x2004 name, 0x3004 attribute, 0x4004 unit, 0x5004 min, 0x6004 max, 0x8004 default),
//!   value read only (0x7004), written only in PREOP when the IDN says so (0x7005), length of
//!   a fixed value (0x7002 short, 0x7003 long), range (0x7006 below min, 0x7007 above max).
//! * Missing elements: no minimum 0x5001, no maximum 0x6001, no default 0x8001, no unit
//!   0x4001.
//!
//! The IDN set ([`default_idns`]) is that of a small SERCOS drive: cycle time, diagnostics,
//! telegram type, the IDN list, command and feedback values, a vendor parameter with limits
//! and a long list (to exercise fragments). On a device with a CoE drive model the feedback
//! IDNs follow its actual values ([`SoeServer::sync_from_od`]).

use super::{reply, Answers, MbxCtx};
use ecat_wire::al::AlState;
use ecat_wire::mailbox::MailboxErrorCode;
use ecat_wire::soe::{
    self as wire, Elements, Idn, IdnAttribute, ListHeader, SoeErrorCode, SoeOpcode, SoeRepr,
};
use std::collections::BTreeMap;

/// How an IDN's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// Read only.
    No,
    /// Only in PREOP (SERCOS phase 2 parameters).
    PreOp,
    /// In any state.
    Always,
}

/// One IDN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdnEntry {
    /// Name element.
    pub name: String,
    /// Attribute element (the value's length and display format).
    pub attribute: IdnAttribute,
    /// Unit element ("" = none).
    pub unit: String,
    /// Minimum input value (signed; fixed-length values only).
    pub min: Option<i64>,
    /// Maximum input value.
    pub max: Option<i64>,
    /// Default value bytes.
    pub default: Option<Vec<u8>>,
    /// Operation data: the fixed-length bytes, or the items of a list (without the list
    /// header).
    pub value: Vec<u8>,
    /// Capacity of a list value in bytes.
    pub list_max: u16,
    /// Who may write the value.
    pub write: Write,
}

impl IdnEntry {
    fn fixed(name: &str, len_code: u8, display: u8, unit: &str, value: i64, write: Write) -> Self {
        let attribute = IdnAttribute::new(len_code, display, 0);
        let n = attribute.fixed_len().unwrap_or(4);
        IdnEntry {
            name: name.into(),
            attribute,
            unit: unit.into(),
            min: None,
            max: None,
            default: Some(value.to_le_bytes()[..n].to_vec()),
            value: value.to_le_bytes()[..n].to_vec(),
            list_max: 0,
            write,
        }
    }

    fn list(name: &str, item_code: u8, display: u8, value: Vec<u8>, cap: u16, w: Write) -> Self {
        IdnEntry {
            name: name.into(),
            attribute: IdnAttribute::new(item_code, display, 0),
            unit: String::new(),
            min: None,
            max: None,
            default: None,
            value,
            list_max: cap,
            write: w,
        }
    }

    fn with_limits(mut self, min: i64, max: i64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }

    fn encode_num(&self, v: i64) -> Vec<u8> {
        let n = self.attribute.fixed_len().unwrap_or(4);
        v.to_le_bytes()[..n].to_vec()
    }

    /// The value as a signed number (fixed-length values; sign-extended for signed display).
    pub fn number(&self) -> Option<i64> {
        let v = wire::value_u64(&self.value)? as i64;
        let bits = self.value.len() as u32 * 8;
        Some(if self.attribute.display() == 2 && bits < 64 {
            (v << (64 - bits)) >> (64 - bits)
        } else {
            v
        })
    }

    fn list_element(data: &[u8], max: u16) -> Vec<u8> {
        let mut b = vec![0u8; ListHeader::LEN + data.len()];
        let _ = ListHeader::emit(&mut b, data, max);
        b
    }

    fn value_bytes(&self) -> Vec<u8> {
        match self.attribute.fixed_len() {
            Some(_) => self.value.clone(),
            None => Self::list_element(&self.value, self.list_max),
        }
    }

    /// The bytes of `elements` in element-bit order, or the error of the first one missing.
    fn read(&self, elements: Elements) -> Result<Vec<u8>, SoeErrorCode> {
        if elements.0 == 0 {
            return Err(SoeErrorCode::NO_ELEMENT);
        }
        let mut out = Vec::new();
        for (e, _) in Elements::ALL {
            if !elements.contains(e) {
                continue;
            }
            let part = match e {
                Elements::DATA_STATE => 0u16.to_le_bytes().to_vec(),
                Elements::NAME => Self::list_element(self.name.as_bytes(), self.name.len() as u16),
                Elements::ATTRIBUTE => self.attribute.0.to_le_bytes().to_vec(),
                Elements::UNIT if self.unit.is_empty() => return Err(SoeErrorCode::NO_UNIT),
                Elements::UNIT => Self::list_element(self.unit.as_bytes(), self.unit.len() as u16),
                Elements::MIN => self.encode_num(self.min.ok_or(SoeErrorCode::NO_MIN)?),
                Elements::MAX => self.encode_num(self.max.ok_or(SoeErrorCode::NO_MAX)?),
                Elements::VALUE => self.value_bytes(),
                _ => self.default.clone().ok_or(SoeErrorCode::NO_DEFAULT)?,
            };
            out.extend_from_slice(&part);
        }
        Ok(out)
    }

    /// Write the value from `data` (as sent: fixed bytes, or a list with its header).
    fn write(
        &mut self,
        elements: Elements,
        data: &[u8],
        state: AlState,
    ) -> Result<(), SoeErrorCode> {
        if elements.0 == 0 {
            return Err(SoeErrorCode::NO_ELEMENT);
        }
        if elements != Elements::VALUE {
            let first = Elements::ALL
                .iter()
                .find(|(e, _)| elements.contains(*e) && *e != Elements::VALUE);
            return Err(match first.map(|(e, _)| *e) {
                Some(Elements::NAME) => SoeErrorCode(0x2004),
                Some(Elements::ATTRIBUTE) => SoeErrorCode(0x3004),
                Some(Elements::UNIT) => SoeErrorCode(0x4004),
                Some(Elements::MIN) => SoeErrorCode(0x5004),
                Some(Elements::MAX) => SoeErrorCode(0x6004),
                Some(Elements::DEFAULT) => SoeErrorCode(0x8004),
                _ => SoeErrorCode::INVALID_ELEMENT_1,
            });
        }
        match self.write {
            Write::No => return Err(SoeErrorCode::DATA_READ_ONLY),
            Write::PreOp if state != AlState::PreOp => {
                return Err(SoeErrorCode::DATA_WRITE_PROTECTED)
            }
            _ => {}
        }
        let Some(n) = self.attribute.fixed_len() else {
            let (_, items) = ListHeader::parse(data).map_err(|_| SoeErrorCode::DATA_TOO_SHORT)?;
            if items.len() > self.list_max as usize {
                return Err(SoeErrorCode::DATA_TOO_LONG);
            }
            self.value = items.to_vec();
            return Ok(());
        };
        if data.len() < n {
            return Err(SoeErrorCode::DATA_TOO_SHORT);
        }
        if data.len() > n {
            return Err(SoeErrorCode::DATA_TOO_LONG);
        }
        let old = std::mem::replace(&mut self.value, data.to_vec());
        let v = self.number().unwrap_or(0);
        let err = if self.min.is_some_and(|m| v < m) {
            Some(SoeErrorCode::DATA_BELOW_MIN)
        } else if self.max.is_some_and(|m| v > m) {
            Some(SoeErrorCode::DATA_ABOVE_MAX)
        } else {
            None
        };
        if let Some(e) = err {
            self.value = old;
            return Err(e);
        }
        Ok(())
    }
}

/// Display format codes of the attribute (bits 22..20).
mod display {
    pub const UNSIGNED: u8 = 1;
    pub const SIGNED: u8 = 2;
    pub const HEX: u8 = 3;
    pub const TEXT: u8 = 4;
    pub const IDN: u8 = 5;
}

/// Fixed-length IDNs of the simulated drive: (product, number, name, length code, display,
/// unit, value, write, limits).
type FixedIdn = (
    bool,
    u16,
    &'static str,
    u8,
    u8,
    &'static str,
    i64,
    Write,
    Option<(i64, i64)>,
);

const FIXED_IDNS: &[FixedIdn] = {
    use display::*;
    use Write::*;
    &[
        (
            false,
            1,
            "Control unit cycle time (tScyc)",
            1,
            UNSIGNED,
            "us",
            1000,
            PreOp,
            Some((125, 65000)),
        ),
        (false, 11, "Class 1 diagnostic", 1, HEX, "", 0, No, None),
        (false, 12, "Class 2 diagnostic", 1, HEX, "", 0, No, None),
        (
            false,
            15,
            "Telegram type",
            1,
            UNSIGNED,
            "",
            7,
            PreOp,
            Some((0, 7)),
        ),
        (
            false,
            36,
            "Velocity command value",
            2,
            SIGNED,
            "rpm",
            0,
            Always,
            None,
        ),
        (
            false,
            40,
            "Velocity feedback value 1",
            2,
            SIGNED,
            "rpm",
            0,
            No,
            None,
        ),
        (
            false,
            47,
            "Position command value",
            2,
            SIGNED,
            "inc",
            0,
            Always,
            None,
        ),
        (
            false,
            51,
            "Position feedback value 1",
            2,
            SIGNED,
            "inc",
            0,
            No,
            None,
        ),
        (
            false,
            103,
            "Modulo value",
            2,
            UNSIGNED,
            "inc",
            1 << 20,
            PreOp,
            Some((1, 1 << 30)),
        ),
        (
            true,
            150,
            "Current limit",
            2,
            UNSIGNED,
            "mA",
            500,
            Always,
            Some((0, 1000)),
        ),
    ]
};

/// The IDNs of the simulated SoE drive: the fixed-length ones of `FIXED_IDNS`, two texts, a 600-byte list (to
/// exercise fragments) and S-0-0017, the list of all IDNs.
pub fn default_idns() -> BTreeMap<u16, IdnEntry> {
    use display::*;
    let id = |product: bool, n: u16| Idn::new(product, 0, n).map_or(n, |i| i.0);
    let mut m = BTreeMap::new();
    for &(product, n, name, len, disp, unit, value, write, limits) in FIXED_IDNS {
        let mut e = IdnEntry::fixed(name, len, disp, unit, value, write);
        if let Some((lo, hi)) = limits {
            e = e.with_limits(lo, hi);
        }
        m.insert(id(product, n), e);
    }
    let text = |name: &str, v: &[u8]| IdnEntry::list(name, 4, TEXT, v.to_vec(), 64, Write::No);
    m.insert(
        id(false, 30),
        text("Manufacturer version", b"ecat-sim SoE drive 1.0"),
    );
    m.insert(id(false, 140), text("Controller type", b"ECAT-SOE-DRIVE"));
    let trace = (0..600u32).map(|i| i as u8).collect();
    m.insert(
        id(true, 200),
        IdnEntry::list("Trace buffer", 4, HEX, trace, 1024, Write::Always),
    );
    let s17 = id(false, 17);
    let list: Vec<u8> = m
        .keys()
        .chain([s17].iter())
        .flat_map(|k| k.to_le_bytes())
        .collect();
    m.insert(
        s17,
        IdnEntry::list(
            "IDN-list of all operation data",
            5,
            IDN,
            list,
            512,
            Write::No,
        ),
    );
    m
}

/// A write collected from fragments.
#[derive(Debug, Clone, Default)]
struct Pending {
    data: Vec<u8>,
    elements: u8,
}

/// The SoE server of one device.
#[derive(Debug, Clone)]
pub struct SoeServer {
    /// The IDNs by raw number.
    pub idns: BTreeMap<u16, IdnEntry>,
    pending: Option<Pending>,
}

impl Default for SoeServer {
    fn default() -> Self {
        SoeServer {
            idns: default_idns(),
            pending: None,
        }
    }
}

fn response<'a>(op: SoeOpcode, req: &SoeRepr<'_>, idn: u16, data: &'a [u8]) -> SoeRepr<'a> {
    SoeRepr {
        opcode: op,
        incomplete: false,
        error: false,
        drive_no: req.drive_no,
        elements: req.elements,
        idn_or_fragments: idn,
        data,
    }
}

impl SoeServer {
    /// The mailbox closed: a write in fragments is dropped.
    pub fn close(&mut self) {
        self.pending = None;
    }

    /// Copy the drive model's actual values from its CoE dictionary into the feedback IDNs
    /// (S-0-0051 position from 0x6064, S-0-0040 velocity from 0x606C), so SoE reads see the
    /// same motor as the process data.
    pub fn sync_from_od(&mut self, od: &crate::coe::Od) {
        for (idn, index) in [(51u16, 0x6064u16), (40, 0x606C)] {
            if let (Some(v), Some(e)) = (od.get(index, 0), self.idns.get_mut(&idn)) {
                e.value = e.encode_num(v);
            }
        }
    }

    /// The value of IDN `idn` as a number (tests, device models).
    pub fn number(&self, idn: Idn) -> Option<i64> {
        self.idns.get(&idn.0).and_then(IdnEntry::number)
    }

    /// Answer one SoE message.
    pub fn handle(&mut self, msg: &[u8], ctx: &MbxCtx) -> Answers {
        let Ok((_, req)) = wire::parse_soe(msg) else {
            return Err(MailboxErrorCode::SERVICE_NOT_SUPPORTED);
        };
        let (op, result) = match req.opcode {
            SoeOpcode::ReadRequest => (
                SoeOpcode::ReadResponse,
                self.entry(&req).and_then(|e| e.read(req.elements)),
            ),
            SoeOpcode::WriteRequest => {
                let p = self.pending.get_or_insert_with(Pending::default);
                p.data.extend_from_slice(req.data);
                p.elements = req.elements.0;
                if req.incomplete {
                    return Ok(vec![]);
                }
                let p = self.pending.take().unwrap_or_default();
                let written = self
                    .entry(&req)
                    .and_then(|e| e.write(Elements(p.elements), &p.data, ctx.state));
                (SoeOpcode::WriteResponse, written.map(|()| Vec::new()))
            }
            _ => return Err(MailboxErrorCode::SERVICE_NOT_SUPPORTED),
        };
        let tx = ctx.tx_size;
        let idn = req.idn_or_fragments;
        Ok(match result {
            Ok(data) => fragments(op, &req, idn, &data, tx),
            Err(code) => {
                let c = code.0.to_le_bytes();
                let r = SoeRepr {
                    error: true,
                    ..response(op, &req, idn, &c)
                };
                vec![reply(tx, |b| wire::emit_soe(b, 0, &r))]
            }
        })
    }

    /// The IDN a complete request names (drive 0 only).
    fn entry(&mut self, req: &SoeRepr<'_>) -> Result<&mut IdnEntry, SoeErrorCode> {
        if req.drive_no != 0 {
            return Err(SoeErrorCode::INVALID_DRIVE);
        }
        self.idns
            .get_mut(&req.idn_or_fragments)
            .ok_or(SoeErrorCode::NO_IDN)
    }
}

/// Responses `op` carrying `data`, in as many fragments as the send mailbox needs.
fn fragments(op: SoeOpcode, req: &SoeRepr<'_>, idn: u16, data: &[u8], tx: usize) -> Vec<Vec<u8>> {
    let max = wire::max_data(tx).max(2);
    let chunks: Vec<&[u8]> = if data.is_empty() {
        vec![&[]]
    } else {
        data.chunks(max).collect()
    };
    let n = chunks.len();
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let left = (n - 1 - i) as u16;
            let r = SoeRepr {
                incomplete: left > 0,
                ..response(op, req, if left > 0 { left } else { idn }, c)
            };
            reply(tx, |b| wire::emit_soe(b, 0, &r))
        })
        .collect()
}
