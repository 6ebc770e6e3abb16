//! The CoE object dictionary of a device (`Profile/Dictionary`).
//!
//! ESI describes objects in two layers: `DataTypes` (base types, records with `SubItem`s,
//! arrays with `ArrayInfo`) and `Objects`, whose `Type` names a data type and whose
//! `Info` holds the defaults (`DefaultData` as little-endian hex bytes, or `DefaultValue` as a
//! number), `MinValue`/`MaxValue`, and for structured objects one `Info/SubItem` per sub-index
//! in order. We resolve this at parse time into flat [`Object`]s with [`SubItem`]s that carry
//! their own subindex, type, bit size/offset, access rights and default bytes, which is what a
//! simulated SubDevice or a master naming objects needs. Access rights ([`Access`]) keep the
//! per-state restrictions (`ReadRestrictions`/`WriteRestrictions`) and convert to the SDO
//! information access word.

use super::datatype::is_signed;
use super::xml::{child, child_text, children, parse_int, text, Ctx};
use crate::error::Result;
use roxmltree::Node;
use std::collections::HashMap;

/// AL states in which an access is allowed (bit 0 PREOP, bit 1 SAFEOP, bit 2 OP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct States(pub u8);

impl States {
    /// PREOP.
    pub const PREOP: u8 = 1;
    /// SAFEOP.
    pub const SAFEOP: u8 = 2;
    /// OP.
    pub const OP: u8 = 4;
    /// All three.
    pub const ALL: States = States(7);
    /// None.
    pub const NONE: States = States(0);

    /// Parse a restriction such as `PreOP`, `PreOP_SafeOP`, `SafeOP_OP` (unknown words are
    /// ignored).
    pub fn parse(s: &str) -> States {
        let mut v = 0;
        for w in s.split(['_', ',', ' ']) {
            match w.to_ascii_lowercase().as_str() {
                "preop" => v |= Self::PREOP,
                "safeop" => v |= Self::SAFEOP,
                "op" => v |= Self::OP,
                _ => {}
            }
        }
        States(v)
    }
}

/// Access rights of an object or sub-item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Access {
    /// States in which it can be read.
    pub read: States,
    /// States in which it can be written.
    pub write: States,
}

impl Access {
    /// Read-only in every state.
    pub const RO: Access = Access {
        read: States::ALL,
        write: States::NONE,
    };
}

/// PDO mapping capability of an object or sub-item (`PdoMapping` R, T or RT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct PdoMapping {
    /// Can be mapped into an RxPDO (outputs).
    pub rx: bool,
    /// Can be mapped into a TxPDO (inputs).
    pub tx: bool,
}

/// The `Flags` of an object or sub-item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Flags {
    /// Access rights.
    pub access: Access,
    /// PDO mapping capability.
    pub pdo_mapping: PdoMapping,
    /// Stored in non-volatile memory (`Backup`).
    pub backup: bool,
    /// A setting (`Setting`).
    pub setting: bool,
}

impl Flags {
    /// The SDO-information access word: bits 0–2 read in PREOP/SAFEOP/OP, bits 3–5 write in
    /// PREOP/SAFEOP/OP, bit 6 RxPDO mappable, bit 7 TxPDO mappable, bit 8 backup, bit 9 setting.
    pub fn sdo_info_access(&self) -> u16 {
        let mut v = (self.access.read.0 & 7) as u16 | (((self.access.write.0 & 7) as u16) << 3);
        if self.pdo_mapping.rx {
            v |= 1 << 6;
        }
        if self.pdo_mapping.tx {
            v |= 1 << 7;
        }
        if self.backup {
            v |= 1 << 8;
        }
        if self.setting {
            v |= 1 << 9;
        }
        v
    }
}

/// Kind of object (the SDO-information object code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// A single value (object code 7).
    Var,
    /// Sub-items of one type (object code 8).
    Array,
    /// Sub-items of different types (object code 9).
    Record,
}

/// One data type of `Dictionary/DataTypes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataType {
    /// Name (`UINT`, `DT1018`, `DT1C12ARR`, ...).
    pub name: String,
    /// Element type of an array type.
    pub base_type: Option<String>,
    /// Size in bits.
    pub bit_size: u32,
    /// `ArrayInfo`: (lower bound, number of elements).
    pub array: Option<(u32, u32)>,
    /// Sub-items of a record type.
    pub sub_items: Vec<DataTypeSubItem>,
}

/// One `SubItem` of a record data type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataTypeSubItem {
    /// `SubIdx`, absent for an array member that expands to several sub-indices.
    pub subindex: Option<u8>,
    /// Name.
    pub name: String,
    /// Type name.
    pub type_name: String,
    /// Size in bits.
    pub bit_size: u32,
    /// Offset in bits within the record.
    pub bit_offset: u32,
    /// Flags, when given.
    pub flags: Option<Flags>,
}

/// One object of the dictionary, resolved against its data type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// Index.
    pub index: u16,
    /// Name.
    pub name: String,
    /// Type name.
    pub type_name: String,
    /// Size in bits (of the whole object for records and arrays).
    pub bit_size: u32,
    /// Var, array or record.
    pub kind: ObjectKind,
    /// Object-level flags.
    pub flags: Flags,
    /// Default value bytes (little-endian) of a Var object.
    pub default: Option<Vec<u8>>,
    /// Minimum of a Var object.
    pub min: Option<i64>,
    /// Maximum of a Var object.
    pub max: Option<i64>,
    /// Sub-items of an array or record, in order, sub-index 0 first.
    pub sub_items: Vec<SubItem>,
}

impl Object {
    /// The sub-item with `subindex`.
    pub fn sub_item(&self, subindex: u8) -> Option<&SubItem> {
        self.sub_items.iter().find(|s| s.subindex == subindex)
    }
}

/// One sub-item of an array or record object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubItem {
    /// Sub-index.
    pub subindex: u8,
    /// Name.
    pub name: String,
    /// Type name.
    pub type_name: String,
    /// Size in bits.
    pub bit_size: u32,
    /// Offset in bits within the object.
    pub bit_offset: u32,
    /// Flags (the data type's sub-item flags, else the object's).
    pub flags: Flags,
    /// Default value bytes (little-endian).
    pub default: Option<Vec<u8>>,
    /// Minimum.
    pub min: Option<i64>,
    /// Maximum.
    pub max: Option<i64>,
}

/// A device's object dictionary.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dictionary {
    /// Data types in file order.
    pub data_types: Vec<DataType>,
    /// Objects in file order.
    pub objects: Vec<Object>,
}

impl Dictionary {
    /// The object with `index`.
    pub fn object(&self, index: u16) -> Option<&Object> {
        self.objects.iter().find(|o| o.index == index)
    }

    /// The data type called `name`.
    pub fn data_type(&self, name: &str) -> Option<&DataType> {
        self.data_types.iter().find(|d| d.name == name)
    }
}

/// Read `Dictionary`.
pub(crate) fn parse_dictionary(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<Dictionary> {
    let mut data_types = Vec::new();
    if let Some(dts) = child(node, "DataTypes") {
        for dt in children(dts, "DataType") {
            data_types.push(parse_data_type(cx, dt)?);
        }
    }
    let by_name: HashMap<&str, &DataType> =
        data_types.iter().map(|d| (d.name.as_str(), d)).collect();
    let mut objects = Vec::new();
    if let Some(objs) = child(node, "Objects") {
        for o in children(objs, "Object") {
            objects.push(parse_object(cx, o, &by_name)?);
        }
    }
    Ok(Dictionary {
        data_types,
        objects,
    })
}

fn opt_u32(cx: &Ctx<'_, '_>, node: Node<'_, '_>, name: &str) -> Result<Option<u32>> {
    cx.child_fit::<u32>(node, name)
}

fn parse_data_type(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<DataType> {
    let name = child_text(node, "Name")
        .ok_or_else(|| cx.invalid(node, "<DataType>: expected a <Name> child"))?;
    let array = match child(node, "ArrayInfo") {
        Some(a) => Some((
            opt_u32(cx, a, "LBound")?.unwrap_or(0),
            opt_u32(cx, a, "Elements")?.unwrap_or(0),
        )),
        None => None,
    };
    let mut sub_items = Vec::new();
    for s in children(node, "SubItem") {
        let subindex = cx.child_fit::<u8>(s, "SubIdx")?;
        sub_items.push(DataTypeSubItem {
            subindex,
            name: child_text(s, "Name").unwrap_or("").to_string(),
            type_name: child_text(s, "Type").unwrap_or("").to_string(),
            bit_size: opt_u32(cx, s, "BitSize")?.unwrap_or(0),
            bit_offset: opt_u32(cx, s, "BitOffs")?.unwrap_or(0),
            flags: child(s, "Flags").map(parse_flags),
        });
    }
    Ok(DataType {
        name: name.to_string(),
        base_type: child_text(node, "BaseType").map(str::to_string),
        bit_size: opt_u32(cx, node, "BitSize")?.unwrap_or(0),
        array,
        sub_items,
    })
}

fn parse_flags(node: Node<'_, '_>) -> Flags {
    let mut f = Flags {
        access: Access::RO,
        ..Default::default()
    };
    if let Some(a) = child(node, "Access") {
        let (mut read, mut write) = match text(a).to_ascii_lowercase().as_str() {
            "rw" => (States::ALL, States::ALL),
            "wo" => (States::NONE, States::ALL),
            _ => (States::ALL, States::NONE),
        };
        if let Some(r) = a.attribute("ReadRestrictions") {
            read = States(read.0 & States::parse(r).0);
        }
        if let Some(w) = a.attribute("WriteRestrictions") {
            write = States(write.0 & States::parse(w).0);
        }
        f.access = Access { read, write };
    }
    if let Some(p) = child_text(node, "PdoMapping") {
        let p = p.to_ascii_uppercase();
        f.pdo_mapping = PdoMapping {
            rx: p.contains('R'),
            tx: p.contains('T'),
        };
    }
    f.backup = child_text(node, "Backup").is_some_and(|t| t != "0");
    f.setting = child_text(node, "Setting").is_some_and(|t| t != "0");
    f
}

/// Default, min and max read from an `Info` element for a value of `bit_size` bits.
struct Values {
    default: Option<Vec<u8>>,
    min: Option<i64>,
    max: Option<i64>,
}

fn parse_values(
    cx: &Ctx<'_, '_>,
    info: Option<Node<'_, '_>>,
    type_name: &str,
    bit_size: u32,
) -> Result<Values> {
    let mut v = Values {
        default: None,
        min: None,
        max: None,
    };
    let Some(info) = info else { return Ok(v) };
    let nbytes = (bit_size as usize).div_ceil(8).clamp(1, 8);
    if let Some(d) = child(info, "DefaultData") {
        v.default = cx.optional(d, cx.hex(d))?;
    } else if let Some(d) = child(info, "DefaultValue") {
        let t = text(d);
        v.default = Some(match parse_int(t) {
            Some(n) => n.to_le_bytes()[..nbytes].to_vec(),
            // Strings and values we cannot read as a number are kept as their text.
            None => t.as_bytes().to_vec(),
        });
    } else if let Some(d) = child(info, "DefaultString") {
        v.default = Some(text(d).as_bytes().to_vec());
    }
    let signed = is_signed(type_name);
    let num = |name: &str, data: &str| -> Result<Option<i64>> {
        if let Some(n) = child(info, name) {
            return cx.optional(n, cx.int(n));
        }
        if let Some(n) = child(info, data) {
            let b = cx.optional(n, cx.hex(n))?;
            return Ok(b.map(|b| le_int(&b, signed)));
        }
        Ok(None)
    };
    v.min = num("MinValue", "MinData")?;
    v.max = num("MaxValue", "MaxData")?;
    Ok(v)
}

fn le_int(b: &[u8], signed: bool) -> i64 {
    let n = b.len().min(8);
    let mut buf = [0u8; 8];
    buf[..n].copy_from_slice(&b[..n]);
    if signed && n > 0 && n < 8 && b[n - 1] & 0x80 != 0 {
        buf[n..].fill(0xFF);
    }
    i64::from_le_bytes(buf)
}

fn parse_object(
    cx: &Ctx<'_, '_>,
    node: Node<'_, '_>,
    types: &HashMap<&str, &DataType>,
) -> Result<Object> {
    let index_node =
        child(node, "Index").ok_or_else(|| cx.invalid(node, "<Object>: expected an <Index>"))?;
    let index = cx.int(index_node)?;
    let index = cx.fit::<u16>(index_node, index)?;
    let type_name = child_text(node, "Type").unwrap_or("").to_string();
    let bit_size = opt_u32(cx, node, "BitSize")?.unwrap_or(0);
    let flags = child(node, "Flags").map(parse_flags).unwrap_or(Flags {
        access: Access::RO,
        ..Default::default()
    });
    let info = child(node, "Info");
    let (kind, mut sub_items) = resolve_subs(types.get(type_name.as_str()).copied(), types, flags);
    let mut obj = Object {
        index,
        name: child_text(node, "Name").unwrap_or("").to_string(),
        type_name: type_name.clone(),
        bit_size,
        kind,
        flags,
        default: None,
        min: None,
        max: None,
        sub_items: Vec::new(),
    };
    if kind == ObjectKind::Var {
        let v = parse_values(cx, info, &type_name, bit_size)?;
        obj.default = v.default;
        obj.min = v.min;
        obj.max = v.max;
    } else if let Some(info) = info {
        // One Info/SubItem per sub-item, in order; matched by name where the names agree
        // (a file that skips one stays aligned), else by position.
        let mut used = vec![false; sub_items.len()];
        for (k, si) in children(info, "SubItem").enumerate() {
            let name = child_text(si, "Name").unwrap_or("");
            let at = if sub_items.get(k).is_some_and(|s| s.name == name) && !used[k] {
                Some(k)
            } else {
                (0..sub_items.len())
                    .find(|&j| !used[j] && !name.is_empty() && sub_items[j].name == name)
                    .or((k < sub_items.len() && !used[k]).then_some(k))
            };
            let Some(j) = at else { continue };
            used[j] = true;
            let sub = &mut sub_items[j];
            let v = parse_values(cx, child(si, "Info"), &sub.type_name, sub.bit_size)?;
            sub.default = v.default;
            sub.min = v.min;
            sub.max = v.max;
        }
    }
    obj.sub_items = sub_items;
    Ok(obj)
}

/// Expand a data type into sub-items: record members, with array members expanded into
/// one sub-item per element.
fn resolve_subs(
    dt: Option<&DataType>,
    types: &HashMap<&str, &DataType>,
    obj_flags: Flags,
) -> (ObjectKind, Vec<SubItem>) {
    let Some(dt) = dt else {
        return (ObjectKind::Var, Vec::new());
    };
    let mut subs = Vec::new();
    let mut from_array = false;
    if dt.sub_items.is_empty() {
        let Some((lbound, n)) = dt.array else {
            return (ObjectKind::Var, Vec::new());
        };
        // A bare array type: sub-index 0 holds the count.
        subs.push(count_sub(obj_flags));
        expand_array(dt, lbound, n, 16, obj_flags, types, &mut subs);
        return (ObjectKind::Array, subs);
    }
    for (pos, m) in dt.sub_items.iter().enumerate() {
        let flags = m.flags.unwrap_or(obj_flags);
        let member_type = types.get(m.type_name.as_str()).copied();
        match (
            m.subindex,
            member_type.and_then(|t| t.array.map(|a| (t, a))),
        ) {
            (None, Some((arr, (lbound, n)))) => {
                from_array = true;
                expand_array(arr, lbound, n, m.bit_offset, flags, types, &mut subs);
            }
            (sub, _) => subs.push(SubItem {
                subindex: sub.unwrap_or(pos.min(255) as u8),
                name: m.name.clone(),
                type_name: m.type_name.clone(),
                bit_size: m.bit_size,
                bit_offset: m.bit_offset,
                flags,
                default: None,
                min: None,
                max: None,
            }),
        }
    }
    let kind = if from_array {
        ObjectKind::Array
    } else {
        ObjectKind::Record
    };
    (kind, subs)
}

fn count_sub(flags: Flags) -> SubItem {
    SubItem {
        subindex: 0,
        name: "SubIndex 000".into(),
        type_name: "USINT".into(),
        bit_size: 8,
        bit_offset: 0,
        flags: Flags {
            pdo_mapping: PdoMapping::default(),
            ..flags
        },
        default: None,
        min: None,
        max: None,
    }
}

fn expand_array(
    arr: &DataType,
    lbound: u32,
    n: u32,
    offset: u32,
    flags: Flags,
    types: &HashMap<&str, &DataType>,
    out: &mut Vec<SubItem>,
) {
    let base = arr.base_type.clone().unwrap_or_default();
    let elem_bits = types
        .get(base.as_str())
        .map(|t| t.bit_size)
        .filter(|&b| b > 0)
        .unwrap_or(arr.bit_size.checked_div(n).unwrap_or(0));
    for k in 0..n.min(255) {
        let sub = lbound + k;
        if sub > 255 {
            break;
        }
        out.push(SubItem {
            subindex: sub as u8,
            name: format!("SubIndex {sub:03}"),
            type_name: base.clone(),
            bit_size: elem_bits,
            bit_offset: offset.saturating_add(k.saturating_mul(elem_bits)),
            flags,
            default: None,
            min: None,
            max: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_access_word() {
        assert_eq!(States::parse("PreOP_SafeOP").0, 3);
        assert_eq!(States::parse("OP").0, 4);
        let f = Flags {
            access: Access {
                read: States::ALL,
                write: States(States::PREOP),
            },
            pdo_mapping: PdoMapping {
                rx: true,
                tx: false,
            },
            ..Default::default()
        };
        assert_eq!(f.sdo_info_access(), 0x07 | 0x08 | 0x40);
    }

    #[test]
    fn le_ints() {
        assert_eq!(le_int(&[0xff, 0xff], true), -1);
        assert_eq!(le_int(&[0xff, 0xff], false), 0xffff);
    }
}
