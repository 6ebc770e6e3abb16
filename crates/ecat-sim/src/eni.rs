//! A simulated network built from an ENI file (`sim:eni:FILE`, `ecat sim --eni FILE`).
//!
//! A slave whose identity (vendor, product code, revision) the ESI device library describes
//! (`ECAT_ESI_PATH`, `ecat sim --esi-dir`) becomes that ESI-built device
//! ([`crate::devices::esi`]). Every other ENI slave becomes a generic device shaped by what
//! the ENI says about it: an SII built
//! (with `ecat_config::build_sii`) from a synthetic ESI `Device` holding its identity, mailbox
//! SyncManagers (from `Mailbox/Send`/`Recv`), process data SyncManagers, every PDO the ENI
//! lists and its DC activation (with a free-run mode beside it); and, when it has CoE, an object dictionary built at run time
//! with the identity, the SM types, a mapping object per PDO, the assignment objects
//! (0x1C12/0x1C13...) holding the ENI's assignment — all writable in PREOP — the objects the
//! PDO entries name (PDO-mappable both ways) and any object a CoE init command writes, so the
//! ENI's CoE init commands succeed. A slave whose ENI names CoE profile 402 gets the CiA 402
//! drive model (`devices::drive`, with the catalogue servo's objects its dictionary lacks);
//! other generic slaves' inputs stay at zero (there is no device behaviour).

use crate::coe::od::{access, Entry, Object, Od};
use crate::devices::esc_from_sii_on;
use crate::devices::esi::EsiDevices;
use crate::error::SimError;
use crate::network::{Network, Node};
use crate::EscChip;
use ecat_config::eni::{Eni, Slave, Transition};
use ecat_config::esi::{
    CoeInfo, DcOpMode, Device, EscInfo, Fmmu, FmmuKind, LocalText, Mailbox, Pdo, PortKind, Sm,
    SmKind,
};
use ecat_wire::coe::info::ObjectCode;
use ecat_wire::coe::DataType;
use std::path::Path;

const U8: DataType = DataType::UNSIGNED8;
const U16: DataType = DataType::UNSIGNED16;
const U32: DataType = DataType::UNSIGNED32;

fn invalid(origin: &str, message: String) -> SimError {
    SimError::Invalid {
        location: origin.to_string(),
        message,
    }
}

/// Read an ENI file and build its network, with ESI devices from the library of
/// `ECAT_ESI_PATH` where it has the slave (see [`network_from_eni_with`]).
pub fn network_from_file(path: &Path) -> Result<Network, SimError> {
    let eni =
        Eni::from_path(path).map_err(|e| invalid(&path.display().to_string(), e.to_string()))?;
    let mut devices = EsiDevices::new(Vec::new());
    network_from_eni_with(&eni, &mut devices).map(|(net, _)| net)
}

/// The network of `eni`'s slaves, in bus order, every one a generic device shaped by the ENI.
pub fn network_from_eni(eni: &Eni) -> Result<Network, SimError> {
    build(eni, None).map(|(net, _)| net)
}

/// The network of `eni`'s slaves, in bus order: a slave whose vendor, product code and
/// revision the ESI library of `devices` describes is that ESI device (its SII, ESC, CoE
/// dictionary and behaviour, with the ENI's serial number); any other is a generic device
/// shaped by the ENI. Also one line per slave saying which it became.
pub fn network_from_eni_with(
    eni: &Eni,
    devices: &mut EsiDevices,
) -> Result<(Network, Vec<String>), SimError> {
    build(eni, Some(devices))
}

fn build(
    eni: &Eni,
    mut devices: Option<&mut EsiDevices>,
) -> Result<(Network, Vec<String>), SimError> {
    if eni.slaves.is_empty() {
        return Err(invalid(&eni.file_name(), "the ENI lists no slave".into()));
    }
    let mut nodes = Vec::with_capacity(eni.slaves.len());
    let mut lines = Vec::with_capacity(eni.slaves.len());
    for (p, s) in eni.slaves.iter().enumerate() {
        let id = &s.identity;
        let template = devices
            .as_deref_mut()
            .and_then(|d| d.from_identity(id.vendor, id.product, id.revision))
            .transpose()
            .map_err(|e| invalid(&eni.file_name(), format!("slave {p} \"{}\": {e}", s.name)))?;
        let esc = match template {
            Some(t) => {
                lines.push(format!(
                    "slave {p} \"{}\": ESI device {} (revision 0x{:08x})",
                    s.name, t.order, id.revision
                ));
                t.build(id.serial, None, None).map_err(|e| {
                    invalid(
                        &eni.file_name(),
                        format!("slave {p} \"{}\": its ESI SII: {e}", s.name),
                    )
                })?
            }
            None => {
                lines.push(format!(
                    "slave {p} \"{}\": generic device shaped by the ENI (no ESI for vendor 0x{:08x} product 0x{:08x} revision 0x{:08x})",
                    s.name, id.vendor, id.product, id.revision
                ));
                generic(eni, p, s)?
            }
        };
        nodes.push(Node::new(Some(esc), s.name.clone(), s.name.clone()));
    }
    Ok((Network::from_nodes(nodes, 1), lines))
}

/// The generic device of ENI slave `s` at position `p`.
fn generic(eni: &Eni, p: usize, s: &Slave) -> Result<crate::esc::Esc, SimError> {
    let dev = device_of(s);
    let sii = ecat_config::build_sii_with(
        &dev,
        &ecat_config::SiiOptions {
            serial: s.identity.serial,
            ..Default::default()
        },
    )
    .map_err(|e| invalid(&eni.file_name(), format!("slave {p} \"{}\": {e}", s.name)))?;
    // Without a DC element in the ENI the device gets no DC unit (so the first DC slave,
    // usually the ENI's reference clock, is the first one with a clock).
    let mut chip = EscChip::et1100(0);
    if s.dc.is_none() {
        chip.features &= !ecat_wire::register::features::DC;
    }
    let mut esc = esc_from_sii_on(sii, chip).map_err(|e| {
        invalid(
            &eni.file_name(),
            format!("slave {p} \"{}\": its SII: {e}", s.name),
        )
    })?;
    if s.mailbox
        .as_ref()
        .is_some_and(|m| m.protocols.iter().any(|x| x == "CoE"))
    {
        let mut od = dictionary(s);
        if drive(s) {
            crate::devices::esi::add_drive_objects(&mut od);
            esc.set_behaviour(Box::new(crate::devices::drive::Drive::default()));
        }
        esc.set_object_dictionary(od, true);
    }
    Ok(esc)
}

/// True if the ENI names CiA 402 (a drive profile) for slave `s`.
fn drive(s: &Slave) -> bool {
    s.mailbox
        .as_ref()
        .is_some_and(|m| m.coe_profiles.iter().any(|p| p.0 == 402))
}

fn sm_kind(kind: &str) -> SmKind {
    match kind {
        "MBoxOut" => SmKind::MBoxOut,
        "MBoxIn" => SmKind::MBoxIn,
        "Outputs" => SmKind::Outputs,
        "Inputs" => SmKind::Inputs,
        other => SmKind::Other(other.to_string()),
    }
}

fn sm(kind: SmKind, start: u16, control: u8, size: Option<u16>, enable: bool) -> Sm {
    Sm {
        kind,
        start,
        control,
        default_size: size,
        min_size: None,
        max_size: None,
        enable,
        op_only: false,
        virtual_sm: false,
        fixed: false,
        watchdog: false,
    }
}

/// A synthetic ESI device for ENI slave `s`.
pub fn device_of(s: &Slave) -> Device {
    let mut sms: Vec<Sm> = Vec::new();
    let put = |n: usize, x: Sm, sms: &mut Vec<Sm>| {
        while sms.len() <= n {
            sms.push(sm(SmKind::Other("Unused".into()), 0, 0, None, false));
        }
        sms[n] = x;
    };
    if let Some(m) = &s.mailbox {
        put(
            0,
            sm(SmKind::MBoxOut, m.send.start, 0x26, Some(m.send.len), true),
            &mut sms,
        );
        put(
            1,
            sm(SmKind::MBoxIn, m.recv.start, 0x22, Some(m.recv.len), true),
            &mut sms,
        );
    }
    for x in &s.process_data.sms {
        let size = x.default_size.filter(|_| x.kind.starts_with("MBox"));
        put(
            x.index as usize,
            sm(
                sm_kind(&x.kind),
                x.start,
                x.control,
                size,
                x.enable || !x.kind.starts_with("MBox"),
            ),
            &mut sms,
        );
    }
    let assigned = |index: u16| {
        s.process_data
            .sms
            .iter()
            .find(|x| x.pdos.contains(&index))
            .map(|x| x.index)
    };
    let pdos: Vec<Pdo> = s
        .process_data
        .rx_pdos
        .iter()
        .chain(&s.process_data.tx_pdos)
        .map(|p| Pdo {
            sm: assigned(p.index),
            ..p.clone()
        })
        .collect();
    let protocols = s
        .mailbox
        .as_ref()
        .map(|m| m.protocols.clone())
        .unwrap_or_default();
    let has = |n: &str| protocols.iter().any(|p| p == n);
    let activation = s
        .init_cmds
        .iter()
        .filter(|c| c.ado == 0x0980 && c.data.len() >= 2 && c.has(Transition::PS))
        .map(|c| u16::from_le_bytes([c.data[0], c.data[1]]))
        .next_back()
        .unwrap_or(0);
    let mut fmmus = vec![
        Fmmu {
            kind: FmmuKind::Outputs,
            sm: None,
            op_only: false,
        },
        Fmmu {
            kind: FmmuKind::Inputs,
            sm: None,
            op_only: false,
        },
    ];
    if s.mailbox.is_some() {
        fmmus.push(Fmmu {
            kind: FmmuKind::MBoxState,
            sm: None,
            op_only: false,
        });
    }
    Device {
        type_name: s.name.clone(),
        product_code: Some(s.identity.product),
        revision: s.identity.revision,
        use_lrd_lwr: false,
        vendor_id: s.identity.vendor,
        names: vec![LocalText {
            lcid: 1033,
            text: s.name.clone(),
        }],
        group_type: String::new(),
        group: None,
        profiles: s
            .mailbox
            .iter()
            .flat_map(|m| m.coe_profiles.iter().map(|p| p.0))
            .collect(),
        ebus_current_ma: None,
        ident_ado: None,
        ident_reg134: false,
        esc: EscInfo {
            physics: s.physics.clone(),
            ports: vec![PortKind::Mii, PortKind::Mii],
            ..Default::default()
        },
        fmmus,
        sms,
        sync_units: Vec::new(),
        pdos,
        mailbox: s.mailbox.as_ref().map(|_| Mailbox {
            data_link_layer: false,
            aoe: has("AoE"),
            eoe: has("EoE"),
            coe: has("CoE").then_some(CoeInfo {
                sdo_info: false,
                pdo_assign: true,
                pdo_config: true,
                pdo_upload: false,
                complete_access: true,
            }),
            foe: has("FoE"),
            soe: has("SoE"),
            voe: has("VoE"),
        }),
        // The ENI's DC activation, and a free-run mode beside it: the ENI says how the
        // device was configured, not that it cannot run without DC (the simulator refuses
        // SAFEOP without SYNC0 only to devices whose every DC mode needs it).
        dc: match s.dc {
            Some(dc) if activation != 0 => vec![
                DcOpMode {
                    name: "DC".into(),
                    desc: "DC (from the ENI)".into(),
                    assign_activate: activation,
                    sync0_cycle: dc.cycle_time0.unwrap_or(0),
                    ..Default::default()
                },
                DcOpMode {
                    name: "FreeRun".into(),
                    desc: "free run (the ENI does not say whether the device needs DC)".into(),
                    ..Default::default()
                },
            ],
            _ => Vec::new(),
        },
        // A slave without a mailbox has no firmware behind its ESC: device emulation (PDI
        // control 0x0100 in SII word 0) runs its state machine, as in simple I/O terminals.
        eeprom: s.mailbox.is_none().then(|| ecat_config::esi::EepromInfo {
            byte_size: None,
            config_data: vec![0x00, 0x01],
            bootstrap: None,
            assign_to_pdi: false,
        }),
        dictionary: None,
        position: (0, 0),
    }
}

fn int_type(bits: u16) -> DataType {
    match bits {
        1 => DataType::BOOLEAN,
        2..=8 => U8,
        9..=16 => U16,
        17..=32 => U32,
        _ => DataType::UNSIGNED64,
    }
}

/// Add entry `sub` of `bits` bits to object `index` (created as needed).
fn ensure(od: &mut Od, index: u16, sub: u8, bits: u16, dtype: DataType, acc: u16, name: &str) {
    if od.entry(index, sub).is_some() {
        return;
    }
    let mut e = Entry::new_int(sub, name, dtype, acc, 0);
    e.bits = bits;
    e.value = vec![0; (bits as usize).div_ceil(8).max(1)];
    e.default = e.value.as_slice().into();
    match od.object_mut(index) {
        Some(o) => {
            let at = o.entries.partition_point(|x| x.sub < sub);
            o.entries.insert(at, e);
            if o.code == ObjectCode::VAR {
                o.code = ObjectCode::RECORD;
            }
            let max = o.entries.iter().map(|x| x.sub).max().unwrap_or(0);
            match o.entries.first_mut() {
                Some(s0) if s0.sub == 0 => s0.set_int(max as i64),
                _ => o.entries.insert(0, Entry::subindex0(max, access::RO)),
            }
        }
        None if sub == 0 => od.insert(Object::new(index, name, ObjectCode::VAR, dtype, vec![e])),
        None => od.insert(Object::new(
            index,
            name,
            ObjectCode::RECORD,
            dtype,
            vec![Entry::subindex0(sub, access::RO), e],
        )),
    }
}

/// The object dictionary of ENI slave `s` (see the module documentation).
pub fn dictionary(s: &Slave) -> Od {
    let mut od = Od::new();
    let ro = access::RO;
    let rw = access::RW_PREOP;
    od.insert(Object::new(
        0x1000,
        "Device type",
        ObjectCode::VAR,
        U32,
        vec![Entry::new_int(0, "Device type", U32, ro, 0)],
    ));
    let id = |sub: u8, n: &str, v: u32| Entry::new_int(sub, n, U32, ro, v as i64);
    let i = s.identity;
    od.insert(Object::new(
        0x1018,
        "Identity",
        ObjectCode::RECORD,
        DataType(0x0023),
        vec![
            Entry::subindex0(4, ro),
            id(1, "Vendor ID", i.vendor),
            id(2, "Product code", i.product),
            id(3, "Revision", i.revision),
            id(4, "Serial number", i.serial),
        ],
    ));
    let dev = device_of(s);
    let mut types = vec![Entry::subindex0(dev.sms.len() as u8, ro)];
    for (k, x) in dev.sms.iter().enumerate() {
        let t = match x.kind {
            SmKind::MBoxOut => 1,
            SmKind::MBoxIn => 2,
            SmKind::Outputs => 3,
            SmKind::Inputs => 4,
            _ => 0,
        };
        types.push(Entry::new_int(
            k as u8 + 1,
            format!("SubIndex {:03}", k + 1),
            U8,
            ro,
            t,
        ));
    }
    od.insert(Object::new(
        0x1C00,
        "Sync manager type",
        ObjectCode::ARRAY,
        U8,
        types,
    ));
    // Mapping objects, and the objects their entries name.
    let pd = &s.process_data;
    for p in pd.rx_pdos.iter().chain(&pd.tx_pdos) {
        let room = p.entries.len().clamp(8, 254);
        let mut entries = vec![Entry::subindex0(p.entries.len().min(room) as u8, rw)];
        for k in 0..room {
            let w = p.entries.get(k).map_or(0, |e| {
                (e.index as u32) << 16 | (e.subindex as u32) << 8 | (e.bit_len as u32 & 0xFF)
            });
            entries.push(Entry::new_int(
                k as u8 + 1,
                format!("SubIndex {:03}", k + 1),
                U32,
                rw,
                w as i64,
            ));
        }
        od.insert(Object::new(
            p.index,
            &p.name,
            ObjectCode::RECORD,
            DataType(0x0021),
            entries,
        ));
        for e in p.entries.iter().filter(|e| e.index != 0) {
            let dtype = e
                .data_type
                .as_deref()
                .and_then(ecat_config::esi::base_type_code)
                .map(DataType)
                .unwrap_or(int_type(e.bit_len));
            let acc = access::RW | access::RX | access::TX;
            ensure(&mut od, e.index, e.subindex, e.bit_len, dtype, acc, &e.name);
        }
    }
    // Assignment objects with the ENI's assignment.
    for x in &pd.sms {
        let all = match x.kind.as_str() {
            "Outputs" => pd.rx_pdos.len(),
            "Inputs" => pd.tx_pdos.len(),
            _ => continue,
        };
        let room = all.max(x.pdos.len()).clamp(1, 254);
        let mut entries = vec![Entry::subindex0(x.pdos.len().min(room) as u8, rw)];
        for k in 0..room {
            let v = x.pdos.get(k).copied().unwrap_or(0);
            entries.push(Entry::new_int(
                k as u8 + 1,
                format!("SubIndex {:03}", k + 1),
                U16,
                rw,
                v as i64,
            ));
        }
        let name = if x.kind == "Outputs" {
            "RxPDO assign"
        } else {
            "TxPDO assign"
        };
        od.insert(Object::new(
            0x1C10 + x.index as u16,
            name,
            ObjectCode::ARRAY,
            U16,
            entries,
        ));
    }
    // Whatever else the CoE init commands write.
    for c in s
        .coe_init_cmds()
        .iter()
        .filter(|c| c.is_download() && !c.complete_access)
    {
        let bits = (c.data.len() * 8).min(64) as u16;
        ensure(
            &mut od,
            c.index,
            c.subindex,
            bits,
            int_type(bits),
            access::RW,
            &c.comment,
        );
    }
    od
}
