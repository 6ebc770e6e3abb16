//! The standard communication objects every CoE device gets, generated from its
//! `DeviceSpec` (the same description its SII is built from), plus the device's own object
//! table (`DeviceSpec::objects`).
//!
//! * 0x1000 device type (`DeviceSpec::device_type`), 0x1001 error register, 0x1008 device
//!   name (the ESI name: a VISIBLE_STRING longer than 4 bytes, so uploads are normal or
//!   segmented), 0x1009 hardware and 0x100A software version, 0x1018 identity (vendor,
//!   product, revision, serial).
//! * 0x1C00 SM communication types from the SyncManager list (1 mailbox out, 2 mailbox in,
//!   3 outputs, 4 inputs).
//! * One mapping object per PDO of the spec (0x16xx RxPDO, 0x1Axx TxPDO) holding its default
//!   entries; on devices whose CoE details advertise PDO configuration and whose PDO is not
//!   fixed (flag 0x0010) the object has room for 8 entries and is writable in PREOP, else it
//!   is read-only with exactly its entries.
//! * 0x1C10 + n for every process-data SM n: the PDOs the spec assigns to it by default;
//!   room for every PDO of that direction; writable in PREOP if the device advertises PDO
//!   assignment.
//! * 0x1C32 / 0x1C33 (SM2 / SM3 synchronisation, reference §7.3) where the device has SM2 /
//!   SM3: SI0 = 0x20, entries 1..=0x0C and 0x20. Sync mode and cycle time are writable in
//!   PREOP; defaults SM-synchronous (1C32:01 = 1; 1C33:01 = 0x22 with outputs, else 1),
//!   cycle time 1 ms, minimum cycle 125 µs (our values, unverified for any real device).

use super::od::{access, Entry, Object, Od, SubSpec};
use crate::devices::spec::{DeviceSpec, PdoSpec};
use ecat_wire::coe::info::ObjectCode;
use ecat_wire::coe::DataType;
use ecat_wire::sii::{CoeDetails, SyncManagerType};

const U8: DataType = DataType::UNSIGNED8;
const U16: DataType = DataType::UNSIGNED16;
const U32: DataType = DataType::UNSIGNED32;

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

fn text(index: u16, name: &'static str, v: &'static str) -> Object {
    var(index, name, Entry::from_spec(&SubSpec::text(0, name, v)))
}

/// The mapping object of one PDO.
fn mapping(p: &PdoSpec, configurable: bool, rx: bool) -> Object {
    let configurable = configurable && p.flags & 0x0010 == 0;
    let acc = if configurable {
        access::RW_PREOP | access::SETTINGS
    } else {
        access::RO
    };
    let room = if configurable {
        p.entries.len().max(8)
    } else {
        p.entries.len()
    };
    let mut entries = vec![Entry::subindex0(p.entries.len() as u8, acc)];
    for k in 0..room {
        let w = p.entries.get(k).map_or(0, |e| {
            (e.index as u32) << 16 | (e.subindex as u32) << 8 | e.bits as u32
        });
        let name = format!("SubIndex {:03}", k + 1);
        entries.push(Entry::new_int(k as u8 + 1, name, U32, acc, w as i64));
    }
    let kind = if rx { "RxPDO" } else { "TxPDO" };
    let name = format!("{kind}-Map {}", p.name);
    Object::new(
        p.index,
        &name,
        ObjectCode::RECORD,
        super::info::PDO_MAPPING,
        entries,
    )
}

/// SM synchronisation parameters (0x1C32 for SM2, 0x1C33 for SM3).
pub(crate) fn sync_params(index: u16, mode: i64, dc: bool) -> Object {
    let rw = access::RW_PREOP | access::BACKUP;
    let ro = access::RO;
    let supported = if dc { 0x0007 } else { 0x0003 };
    let e = |s: u8, n: &str, t: DataType, a: u16, v: i64| Entry::new_int(s, n, t, a, v);
    let entries = vec![
        Entry::subindex0(0x20, ro),
        e(1, "Sync mode", U16, rw, mode),
        e(2, "Cycle time", U32, rw, 1_000_000),
        e(3, "Shift time", U32, ro, 0),
        e(4, "Sync modes supported", U16, ro, supported),
        e(5, "Minimum cycle time", U32, ro, 125_000),
        e(6, "Calc and copy time", U32, ro, 10_000),
        e(7, "Minimum delay time", U32, ro, 0),
        e(8, "Get cycle time", U16, rw, 0),
        e(9, "Delay time", U32, ro, 0),
        e(0x0A, "Sync0 cycle time", U32, rw, 0),
        e(0x0B, "SM event missed", U16, ro, 0),
        e(0x0C, "Cycle time too small", U16, ro, 0),
        e(0x20, "Sync error", DataType::BOOLEAN, ro, 0),
    ];
    let name = if index == 0x1C32 {
        "SM output parameter"
    } else {
        "SM input parameter"
    };
    // 0x0029 is the SYNC_PAR type as we recall ETG.1000.6 (unverified).
    Object::new(index, name, ObjectCode::RECORD, DataType(0x0029), entries)
}

/// The object dictionary of `spec` with the given serial number.
pub fn build(spec: &DeviceSpec, serial: u32) -> Od {
    let mut od = Od::new();
    let ro = access::RO;
    od.insert(var(
        0x1000,
        "Device type",
        Entry::new_int(0, "", U32, ro, spec.device_type as i64),
    ));
    od.insert(var(
        0x1001,
        "Error register",
        Entry::new_int(0, "", U8, ro | access::TX, 0),
    ));
    od.insert(text(0x1008, "Device name", spec.name));
    od.insert(text(0x1009, "Hardware version", "1.0"));
    od.insert(text(0x100A, "Software version", "ecat-sim 1.0"));
    let id = |s: u8, n: &str, v: u32| Entry::new_int(s, n, U32, ro, v as i64);
    od.insert(Object::new(
        0x1018,
        "Identity",
        ObjectCode::RECORD,
        super::info::IDENTITY,
        vec![
            Entry::subindex0(4, ro),
            id(1, "Vendor ID", spec.vendor),
            id(2, "Product code", spec.product),
            id(3, "Revision", spec.revision),
            id(4, "Serial number", serial),
        ],
    ));
    let mut types = vec![Entry::subindex0(spec.sms.len() as u8, ro)];
    for (i, s) in spec.sms.iter().enumerate() {
        let t = match s.kind {
            SyncManagerType::MailboxOut => 1,
            SyncManagerType::MailboxIn => 2,
            SyncManagerType::Outputs => 3,
            SyncManagerType::Inputs => 4,
            _ => 0,
        };
        let name = format!("SubIndex {:03}", i + 1);
        types.push(Entry::new_int(i as u8 + 1, name, U8, ro, t));
    }
    od.insert(Object::new(
        0x1C00,
        "Sync manager type",
        ObjectCode::ARRAY,
        U8,
        types,
    ));
    let config = spec.coe_details & CoeDetails::PDO_CONFIG != 0;
    let assign = spec.coe_details & CoeDetails::PDO_ASSIGN != 0;
    for p in spec.rx_pdos {
        od.insert(mapping(p, config, true));
    }
    for p in spec.tx_pdos {
        od.insert(mapping(p, config, false));
    }
    let has_outputs =
        spec.sms.iter().any(|s| s.kind == SyncManagerType::Outputs) && !spec.rx_pdos.is_empty();
    for (n, s) in spec.sms.iter().enumerate() {
        let pdos = match s.kind {
            SyncManagerType::Outputs => spec.rx_pdos,
            SyncManagerType::Inputs => spec.tx_pdos,
            _ => continue,
        };
        let acc = if assign {
            access::RW_PREOP | access::SETTINGS
        } else {
            ro
        };
        let default: Vec<u16> = pdos
            .iter()
            .filter(|p| p.sm as usize == n)
            .map(|p| p.index)
            .collect();
        let mut entries = vec![Entry::subindex0(default.len() as u8, acc)];
        for k in 0..pdos.len() {
            let v = default.get(k).copied().unwrap_or(0);
            let name = format!("SubIndex {:03}", k + 1);
            entries.push(Entry::new_int(k as u8 + 1, name, U16, acc, v as i64));
        }
        let index = super::pdo::assign_index(n as u8);
        let kind = if s.kind == SyncManagerType::Outputs {
            "RxPDO assign"
        } else {
            "TxPDO assign"
        };
        od.insert(Object::new(index, kind, ObjectCode::ARRAY, U16, entries));
        let dc = !spec.dc.is_empty();
        match (n, s.kind) {
            (2, SyncManagerType::Outputs) => od.insert(sync_params(0x1C32, 1, dc)),
            (3, SyncManagerType::Inputs) => {
                od.insert(sync_params(0x1C33, if has_outputs { 0x22 } else { 1 }, dc))
            }
            _ => {}
        }
    }
    od.insert_specs(spec.objects);
    od
}
