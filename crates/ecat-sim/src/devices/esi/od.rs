//! The object dictionary of an ESI-built device.
//!
//! Order of construction (each step may replace what the one before made):
//! 1. every object of the ESI `Dictionary` with every sub-item: its default value
//!    (little-endian bytes, zero-filled to the entry's size; strings keep their text), the
//!    SDO-information access word from its flags (read/write per state, RxPDO/TxPDO mapping,
//!    backup, setting), min and max; sub-index 0 of an array or record without a default
//!    holds the highest sub-index;
//! 2. an object or entry for every PDO entry the dictionary lacks (TxPDO entries read-only
//!    and TxPDO-mappable, RxPDO entries writable and RxPDO-mappable), so the process data
//!    always has somewhere to live — except where the ESI's PDO names a sub-index of an
//!    object that is a single value of the same size (the Synapticon file maps 0x60FF:05
//!    while its dictionary and its own 0x1600 default say 0x60FF:00): then sub-index 0;
//! 3. the standard objects the dictionary lacks: 0x1000 (profile number), 0x1001, 0x1008,
//!    0x1018, 0x1C00, 0x1C32/0x1C33 (as the catalogue devices have them, `coe::standard`);
//!    0x1018 always carries the device's identity and the serial number;
//! 4. always: the PDO mapping objects (0x16xx/0x1Axx) from the ESI PDOs and the assignment
//!    objects (0x1C10 + n) from their default `Sm`, so the dictionary, the SII and the
//!    PREOP→SAFEOP size check agree. A mapping object is writable in PREOP with room for 8
//!    entries when the ESI allows PDO configuration (`CoE@PdoConfig`) and the PDO is not
//!    `Fixed`; assignments are writable in PREOP when it allows `PdoAssign`. The
//!    dictionary's name for the object is kept.

use crate::coe::od::{access, Entry, Object, Od};
use crate::coe::standard::sync_params;
use ecat_config::esi::{self, ObjectKind, PdoDir, SmKind};
use ecat_config::Device;
use ecat_wire::coe::info::ObjectCode;
use ecat_wire::coe::DataType;
use std::sync::Arc;

const U8: DataType = DataType::UNSIGNED8;
const U16: DataType = DataType::UNSIGNED16;
const U32: DataType = DataType::UNSIGNED32;

/// The CoE data type of an ESI type name (0 for a type the dictionary defines itself).
fn dtype_of(name: &str) -> DataType {
    DataType(esi::base_type_code(name).unwrap_or(0))
}

/// The value bytes of an entry of `bits` bits (strings: the default text).
fn value_bytes(dtype: DataType, bits: u32, default: Option<&[u8]>) -> Vec<u8> {
    let string = matches!(dtype.0, 0x0009..=0x000B);
    let n = (bits as usize).div_ceil(8);
    match default {
        Some(d) if string => d.to_vec(),
        Some(d) => {
            let mut v = vec![0; n.max(if bits == 0 { d.len() } else { 0 })];
            let k = v.len().min(d.len());
            v[..k].copy_from_slice(&d[..k]);
            v
        }
        None => vec![0; n],
    }
}

/// One live entry from ESI data.
fn entry(
    sub: u8,
    name: &str,
    type_name: &str,
    bits: u32,
    access: u16,
    default: Option<&[u8]>,
) -> Entry {
    let dtype = dtype_of(type_name);
    let value = value_bytes(dtype, bits, default);
    let bits = if bits == 0 {
        (value.len() * 8) as u16
    } else {
        bits.min(u16::MAX as u32) as u16
    };
    let mut e = Entry {
        sub,
        name: name.into(),
        dtype,
        bits,
        access,
        default: value.as_slice().into(),
        value,
        min: None,
        max: None,
        unit: 0,
    };
    if !e.is_string() {
        // Mask bits above the width (a BOOL default of 0xFF is 1).
        let v = e.int();
        e.set_int(v);
        e.default = e.value.as_slice().into();
    }
    e
}

/// The live object of one ESI dictionary object.
pub fn object(o: &esi::Object) -> Object {
    if o.kind == ObjectKind::Var || o.sub_items.is_empty() {
        let mut e = entry(
            0,
            &o.name,
            &o.type_name,
            o.bit_size,
            o.flags.sdo_info_access(),
            o.default.as_deref(),
        );
        (e.min, e.max) = (o.min, o.max);
        return Object {
            index: o.index,
            name: o.name.as_str().into(),
            code: ObjectCode::VAR,
            dtype: e.dtype,
            entries: vec![e],
        };
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(o.sub_items.len());
    for s in &o.sub_items {
        if entries.iter().any(|e| e.sub == s.subindex) {
            continue;
        }
        let mut e = entry(
            s.subindex,
            &s.name,
            &s.type_name,
            s.bit_size,
            s.flags.sdo_info_access(),
            s.default.as_deref(),
        );
        (e.min, e.max) = (s.min, s.max);
        entries.push(e);
    }
    entries.sort_by_key(|e| e.sub);
    let top = entries.iter().map(|e| e.sub).max().unwrap_or(0);
    let si0_default = o
        .sub_items
        .iter()
        .any(|s| s.subindex == 0 && s.default.is_some());
    match entries.first_mut() {
        Some(e) if e.sub == 0 => {
            if !si0_default {
                e.set_int(top as i64);
                e.default = e.value.as_slice().into();
            }
        }
        _ => entries.insert(
            0,
            Entry::new_int(0, "SubIndex 000", U8, access::RO, top as i64),
        ),
    }
    let (code, dtype) = match o.kind {
        ObjectKind::Array => (
            ObjectCode::ARRAY,
            entries.get(1).map_or(DataType(0), |e| e.dtype),
        ),
        _ => (ObjectCode::RECORD, DataType(0)),
    };
    Object {
        index: o.index,
        name: o.name.as_str().into(),
        code,
        dtype,
        entries,
    }
}

fn var(index: u16, name: &str, e: Entry) -> Object {
    Object {
        index,
        name: name.into(),
        code: ObjectCode::VAR,
        dtype: e.dtype,
        entries: vec![Entry {
            name: name.into(),
            ..e
        }],
    }
}

fn array(index: u16, name: impl Into<Arc<str>>, dtype: DataType, entries: Vec<Entry>) -> Object {
    Object {
        index,
        name: name.into(),
        code: ObjectCode::ARRAY,
        dtype,
        entries,
    }
}

fn sub_name(k: usize) -> String {
    format!("SubIndex {:03}", k.min(255))
}

/// Step 2: make sure every PDO entry has an object entry behind it; returns the entries as
/// they are mapped (index, sub-index, bits) per PDO, in `dev.pdos` order.
fn pdo_objects(dev: &Device, od: &mut Od) -> Vec<Vec<(u16, u8, u16)>> {
    let mut out = Vec::with_capacity(dev.pdos.len());
    for p in &dev.pdos {
        let rx = p.dir == PdoDir::Rx;
        let acc = if rx {
            access::RW | access::RX
        } else {
            access::RO | access::TX
        };
        let mut mapped = Vec::with_capacity(p.entries.len());
        for e in &p.entries {
            let (index, mut sub, bits) = (e.index, e.subindex, e.bit_len);
            if index != 0 && od.entry(index, sub).is_none() {
                match od.object_mut(index) {
                    Some(o) if o.code == ObjectCode::VAR => {
                        if o.entries.first().is_some_and(|v| v.bits == bits) {
                            sub = 0;
                        }
                    }
                    Some(o) => {
                        let typ = e.data_type.as_deref().unwrap_or("");
                        let new = entry(sub, &e.name, typ, bits as u32, acc, None);
                        let at = o.entries.partition_point(|x| x.sub < sub);
                        o.entries.insert(at, new);
                        let top = o.max_subindex() as i64;
                        if let Some(s0) = o.entry_mut(0) {
                            if s0.int() < top {
                                s0.set_int(top);
                                s0.default = s0.value.as_slice().into();
                            }
                        }
                    }
                    None => {
                        let typ = e.data_type.as_deref().unwrap_or("");
                        let new = entry(sub, &e.name, typ, bits as u32, acc, None);
                        let obj = if sub == 0 {
                            var(index, &e.name, new)
                        } else {
                            let name = if p.name.is_empty() { &e.name } else { &p.name };
                            Object {
                                index,
                                name: name.as_str().into(),
                                code: ObjectCode::RECORD,
                                dtype: DataType(0),
                                entries: vec![Entry::subindex0(sub, access::RO), new],
                            }
                        };
                        od.insert(obj);
                    }
                }
            }
            mapped.push((index, sub, bits));
        }
        out.push(mapped);
    }
    out
}

/// Step 3: standard objects the dictionary lacks, and the identity.
fn standard_objects(dev: &Device, od: &mut Od, serial: u32) {
    let ro = access::RO;
    if od.object(0x1000).is_none() {
        let profile = dev.profiles.first().copied().unwrap_or(0) & 0xFFFF;
        od.insert(var(
            0x1000,
            "Device type",
            Entry::new_int(0, "", U32, ro, profile as i64),
        ));
    }
    if od.object(0x1001).is_none() {
        let e = Entry::new_int(0, "", U8, ro | access::TX, 0);
        od.insert(var(0x1001, "Error register", e));
    }
    if od.object(0x1008).is_none() {
        let name = dev.name(1033).to_string();
        let mut e = Entry::new_int(0, "", DataType::VISIBLE_STRING, ro, 0);
        e.bits = (name.len() * 8).min(u16::MAX as usize) as u16;
        e.value = name.into_bytes();
        e.default = e.value.as_slice().into();
        od.insert(var(0x1008, "Device name", e));
    }
    let ids = [
        (1, "Vendor ID", dev.vendor_id),
        (2, "Product code", dev.product_code.unwrap_or(0)),
        (3, "Revision", dev.revision),
        (4, "Serial number", serial),
    ];
    if od.object(0x1018).is_none() {
        let mut entries = vec![Entry::subindex0(4, ro)];
        for (s, n, _) in ids {
            entries.push(Entry::new_int(s, n, U32, ro, 0));
        }
        od.insert(Object {
            index: 0x1018,
            name: "Identity".into(),
            code: ObjectCode::RECORD,
            dtype: crate::coe::info::IDENTITY,
            entries,
        });
    }
    for (s, _, v) in ids {
        if let Some(e) = od.entry_mut(0x1018, s) {
            e.set_int(v as i64);
            e.default = e.value.as_slice().into();
        }
    }
    if od.object(0x1C00).is_none() {
        let mut types = vec![Entry::subindex0(dev.sms.len().min(255) as u8, ro)];
        for (i, s) in dev.sms.iter().enumerate().take(32) {
            let t = match s.kind {
                SmKind::MBoxOut => 1,
                SmKind::MBoxIn => 2,
                SmKind::Outputs => 3,
                SmKind::Inputs => 4,
                _ => 0,
            };
            types.push(Entry::new_int(i as u8 + 1, sub_name(i + 1), U8, ro, t));
        }
        od.insert(array(0x1C00, "Sync manager type", U8, types));
    }
    let dc = !dev.dc.is_empty();
    let has_outputs = dev.rx_pdos().next().is_some();
    if dev.sms.get(2).is_some_and(|s| s.kind == SmKind::Outputs) && od.object(0x1C32).is_none() {
        od.insert(sync_params(0x1C32, 1, dc));
    }
    if dev.sms.get(3).is_some_and(|s| s.kind == SmKind::Inputs) && od.object(0x1C33).is_none() {
        od.insert(sync_params(0x1C33, if has_outputs { 0x22 } else { 1 }, dc));
    }
}

/// Step 4: mapping and assignment objects from the ESI PDOs.
fn pdo_config(dev: &Device, od: &mut Od, mapped: &[Vec<(u16, u8, u16)>]) {
    let coe = dev.mailbox.as_ref().and_then(|m| m.coe).unwrap_or_default();
    for (p, entries) in dev.pdos.iter().zip(mapped) {
        let configurable = coe.pdo_config && !p.fixed;
        let acc = if configurable {
            access::RW_PREOP | access::SETTINGS
        } else {
            access::RO
        };
        let room = if configurable {
            entries.len().max(8)
        } else {
            entries.len()
        }
        .min(254);
        let mut list = vec![Entry::subindex0(entries.len().min(255) as u8, acc)];
        for k in 0..room {
            let w = entries.get(k).map_or(0, |&(i, s, b)| {
                (i as u32) << 16 | (s as u32) << 8 | (b.min(255) as u32)
            });
            list.push(Entry::new_int(
                k as u8 + 1,
                sub_name(k + 1),
                U32,
                acc,
                w as i64,
            ));
        }
        let kind = if p.dir == PdoDir::Rx {
            "RxPDO"
        } else {
            "TxPDO"
        };
        let name = match od.object(p.index) {
            Some(o) if !o.name.is_empty() => o.name.clone(),
            _ => format!("{kind}-Map {}", p.name).into(),
        };
        od.insert(Object {
            index: p.index,
            name,
            code: ObjectCode::RECORD,
            dtype: crate::coe::info::PDO_MAPPING,
            entries: list,
        });
    }
    for (n, s) in dev.sms.iter().enumerate().take(32) {
        let dir = match s.kind {
            SmKind::Outputs => PdoDir::Rx,
            SmKind::Inputs => PdoDir::Tx,
            _ => continue,
        };
        let acc = if coe.pdo_assign {
            access::RW_PREOP | access::SETTINGS
        } else {
            access::RO
        };
        let default: Vec<u16> = dev
            .default_pdos(n as u8)
            .filter(|p| p.dir == dir)
            .map(|p| p.index)
            .collect();
        let room = dev
            .pdos
            .iter()
            .filter(|p| p.dir == dir)
            .count()
            .clamp(default.len().max(1), 254);
        let mut list = vec![Entry::subindex0(default.len().min(255) as u8, acc)];
        for k in 0..room {
            let v = default.get(k).copied().unwrap_or(0);
            list.push(Entry::new_int(
                k as u8 + 1,
                sub_name(k + 1),
                U16,
                acc,
                v as i64,
            ));
        }
        let index = crate::coe::pdo::assign_index(n as u8);
        let name = match od.object(index) {
            Some(o) if !o.name.is_empty() => o.name.clone(),
            _ if dir == PdoDir::Rx => "RxPDO assign".into(),
            _ => "TxPDO assign".into(),
        };
        od.insert(array(index, name, U16, list));
    }
}

/// The object dictionary of `dev` with serial number `serial` (see the module note).
pub fn build(dev: &Device, serial: u32) -> Od {
    let mut od = Od::new();
    if let Some(d) = &dev.dictionary {
        for o in &d.objects {
            od.insert(object(o));
        }
    }
    let mapped = pdo_objects(dev, &mut od);
    standard_objects(dev, &mut od, serial);
    pdo_config(dev, &mut od, &mapped);
    od
}
