//! TOML network files.
//!
//! ```toml
//! [[subdevice]]
//! model = "EK1100"
//!
//! [[subdevice]]
//! sii = "dumps/el2004.bin"   # relative to this file
//! chip = "ET1200"            # sii entries: the ESC (see esc::chips): ET1100, ET1200
//!                            # (DC system time only with SYNC/latch units on), ET1200-DC,
//!                            # ET1810/ET1815 (IP core), LAN9252, AX58100, AM335X-PRU.
//!                            # Default: the chip of the real device if known (EK1100,
//!                            # EL2828, EL2889), else ET1100.
//! alias = 7                  # stored in the SII, loaded into 0x0012 at power-up
//! serial = 0                 # SII serial number (default: entry number + 1; sii: as stored)
//! name = "left door outputs"
//! ```
//!
//! Devices from ESI files (`esi`, `type`, `product`, `revision`, `esi_dirs`, `sii_lcid`): see
//! `netfile_esi`. FoE files, password and busy replies (`foe_files`, `foe_password`,
//! `foe_busy`) and the EoE address (`eoe_ip`): see `netfile_mbx`.
//!
//! Firmware timing: how long a SubDevice with firmware waits in SAFEOP for its first outputs
//! after an OP request before refusing with 0x001B (see `esc::al`), for the whole file and
//! per entry (the entry wins; default [`crate::esc::DEFAULT_SAFEOP_OP_TIMEOUT_MS`]):
//!
//! ```toml
//! safeop_op_timeout_ms = 3000
//!
//! [[subdevice]]
//! model = "EL4132"
//! safeop_op_timeout_ms = 500
//! ```
//!
//! Optional faults and scripted events:
//!
//! ```toml
//! [faults]
//! seed = 7
//! drop_rate = 0.01          # probabilities 0..=1
//! corrupt_rate = 0.001
//! deliver_corrupted = false # true: return corrupted frames with a flipped bit
//! delay_ns = 2000
//! jitter_ns = 500
//! duplicate_rate = 0.0
//! bad_cable = 3             # losses and corruptions on the cable into SubDevice 3
//!
//! [[event]]
//! at_ms = 500
//! action = "unplug"         # "unplug" | "replug" | "power_cycle" | "disconnect" | "connect"
//! position = 2              # ESC index in wiring order (passive terminals not counted)
//!
//! [[event]]
//! at_ms = 800
//! action = "replug"
//! position = 2
//! power_cycled = true       # replug only; default false
//!
//! [[event]]
//! at_ms = 900
//! action = "break"          # "break" | "heal": the cable between two SubDevices
//! between = [3, 4]
//!
//! [[event]]
//! at_ms = 0                 # absent from the start
//! action = "disconnect"     # the branch headed by ESC 4: it and everything behind it
//! position = 4              # ("connect": back, freshly powered; see `branch`)
//! ```
//!
//! `ring = true` (top level) cables the last SubDevice of a line back to the MainDevice's
//! backup port (cable redundancy, see `crate::ring`).
//!
//! Wiring and clocks (distributed clocks, see [`crate::Network`] for the time model). By
//! default every SubDevice hangs on port 1 of the SubDevice entry before it (a line). A branch
//! names where it hangs: `parent` is the 0-based index of an earlier `[[subdevice]]` entry
//! (passive terminals count as entries but cannot be parents), `port` the parent's port
//! (1, 2 or 3, implemented by the parent's chip and not used by another entry). `port`
//! alone means the entry before; `parent` alone the parent's first free port of 1, 3, 2.
//! SubDevices are numbered (auto-increment positions) depth-first through ports 3, 1, 2, as
//! the frame passes them.
//!
//! ```toml
//! dc_seed = 7                # seeds the clocks not given below (default 0)
//!
//! [[subdevice]]              # entry 0
//! model = "EK1100"
//! cable_ns = 10              # delay of the cable to port 0 (here from the MainDevice)
//! forward_ns = 250           # this ESC's forwarding delay, port to port, both directions
//! drift_ppm = 20.0           # local clock drift (default: random within ±100)
//! start_offset_ns = 123456   # local time at network time 0 (default: random < 2^32)
//!
//! [[subdevice]]              # entry 1, on port 1 of entry 0
//! model = "EK1122"
//!
//! [[subdevice]]              # entry 2: a branch on the EK1122's port 3
//! model = "ECAT-SERVO-402"
//! parent = 1
//! port = 3
//! cable_ns = 25              # 5 m of Ethernet cable
//!
//! [[subdevice]]              # entry 3, on port 1 of entry 2
//! model = "ECAT-SERVO-402"
//! dc_bits = 32               # a 32-bit DC (feature register bit 3 clear); default 64
//!
//! [[subdevice]]              # entry 4: back on the EK1100's second Ethernet port
//! model = "ECAT-SERVO-402"
//! parent = 0
//! port = 2
//! ```
//!
//! Defaults: cable 10 ns where either end is an Ethernet (MII) port or for the cable from the
//! MainDevice, 2 ns between E-Bus terminals; forwarding 150 ns for ESCs entered through E-Bus,
//! 250 ns through MII.
//!
//! Each error names `file:line` (from the TOML spans) and says what to do; an unknown model
//! lists the valid ones.

use crate::devices::{self, Model};
use crate::error::SimError;
use crate::faults::{EventAction, FaultEvent, Faults};
use crate::network::Node;
use serde::Deserialize;
use std::path::Path;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRepr {
    #[serde(default)]
    subdevice: Vec<Spanned<EntryRepr>>,
    faults: Option<FaultsRepr>,
    #[serde(default)]
    event: Vec<Spanned<EventRepr>>,
    dc_seed: Option<u64>,
    ring: Option<bool>,
    safeop_op_timeout_ms: Option<u64>,
    #[serde(default)]
    esi_dirs: Vec<String>,
    sii_lcid: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultsRepr {
    seed: Option<u64>,
    drop_rate: Option<Spanned<f64>>,
    corrupt_rate: Option<Spanned<f64>>,
    deliver_corrupted: Option<bool>,
    delay_ns: Option<u64>,
    jitter_ns: Option<u64>,
    duplicate_rate: Option<Spanned<f64>>,
    bad_cable: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EventRepr {
    at_ms: Spanned<f64>,
    action: Spanned<String>,
    position: Option<Spanned<u64>>,
    between: Option<Spanned<Vec<u64>>>,
    power_cycled: Option<Spanned<bool>>,
}

/// What a network file describes.
pub(crate) struct NetFile {
    pub nodes: Vec<Node>,
    pub faults: Option<Faults>,
    pub events: Vec<FaultEvent>,
    pub dc_seed: u64,
    pub ring: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryRepr {
    model: Option<Spanned<String>>,
    sii: Option<Spanned<String>>,
    alias: Option<Spanned<u16>>,
    name: Option<String>,
    parent: Option<Spanned<u64>>,
    port: Option<Spanned<u64>>,
    cable_ns: Option<Spanned<u64>>,
    forward_ns: Option<Spanned<u64>>,
    drift_ppm: Option<Spanned<f64>>,
    start_offset_ns: Option<Spanned<u64>>,
    dc_bits: Option<Spanned<u64>>,
    chip: Option<Spanned<String>>,
    safeop_op_timeout_ms: Option<Spanned<u64>>,
    esi: Option<Spanned<toml::Value>>,
    serial: Option<u32>,
    #[serde(rename = "type")]
    type_name: Option<Spanned<String>>,
    product: Option<Spanned<i64>>,
    revision: Option<Spanned<i64>>,
    foe_files: Option<Spanned<std::collections::BTreeMap<String, String>>>,
    foe_password: Option<Spanned<u32>>,
    foe_busy: Option<Spanned<u32>>,
    eoe_ip: Option<Spanned<String>>,
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Build the node of a catalogue model.
pub(crate) fn node_from_model(
    model: &Model,
    serial: u32,
    alias: Option<u16>,
    name: Option<String>,
) -> Node {
    Node::new(
        model.build(serial, alias),
        name.unwrap_or_else(|| model.description().to_string()),
        model.name.to_string(),
    )
}

/// Parse a network file.
pub(crate) fn parse(text: &str, origin: &str, base_dir: &Path) -> Result<NetFile, SimError> {
    let at = |offset: usize| format!("{origin}:{}", line_of(text, offset));
    let file: FileRepr = toml::from_str(text).map_err(|e| SimError::Invalid {
        location: at(e.span().map_or(0, |s| s.start)),
        message: e.message().trim().to_string(),
    })?;
    if file.subdevice.is_empty() {
        return Err(SimError::Invalid {
            location: at(0),
            message: "the network lists no SubDevice; add a [[subdevice]] table with model = \"EK1100\" or sii = \"image.bin\"".into(),
        });
    }
    let mut nodes = Vec::new();
    let mut esi: Option<crate::devices::esi::EsiDevices> = None;
    for (i, entry) in file.subdevice.iter().enumerate() {
        let here = at(entry.span().start);
        let e = entry.get_ref();
        let serial = e.serial.unwrap_or(i as u32 + 1);
        let alias = e.alias.as_ref().map(|a| *a.get_ref());
        let keys = crate::netfile_esi::EsiKeys {
            esi: e.esi.as_ref(),
            type_name: e.type_name.as_ref(),
            product: e.product.as_ref(),
            revision: e.revision.as_ref(),
        };
        keys.check(e.model.is_some() || e.sii.is_some(), &here, &at)?;
        let node = match (&e.model, &e.sii) {
            (None, None) if keys.any() => {
                let devices = esi.get_or_insert_with(|| {
                    let d = crate::devices::esi::EsiDevices::new(crate::netfile_esi::dirs(
                        &file.esi_dirs,
                        base_dir,
                    ));
                    match file.sii_lcid {
                        Some(l) => d.with_sii_lcid(l),
                        None => d,
                    }
                });
                let t = crate::netfile_esi::template(&keys, devices, base_dir, &at)?;
                let chip = crate::netfile_esi::chip(e.chip.as_ref(), &at)?;
                crate::netfile_esi::node(&t, serial, alias, chip, e.name.clone(), &here)?
            }
            (Some(m), None) => {
                let loc = at(m.span().start);
                if let Some(c) = &e.chip {
                    return Err(SimError::Invalid {
                        location: at(c.span().start),
                        message: "`chip` only applies to `sii` and `esi` entries (catalogue models know their chip); remove it".into(),
                    });
                }
                let Some(model) = devices::find(m.get_ref()) else {
                    return Err(SimError::UnknownModel {
                        location: loc,
                        model: m.get_ref().clone(),
                        models: devices::model_names().join(", "),
                    });
                };
                if model.is_passive() && alias.is_some() {
                    return Err(SimError::Invalid {
                        location: at(e.alias.as_ref().map_or(0, |a| a.span().start)),
                        message: format!(
                            "{} is a passive terminal without ESC and cannot have an alias; remove `alias`",
                            model.name
                        ),
                    });
                }
                node_from_model(&model, serial, alias, e.name.clone())
            }
            (None, Some(s)) => {
                let loc = at(s.span().start);
                let path = base_dir.join(s.get_ref());
                let mut image = std::fs::read(&path).map_err(|err| SimError::BadSii {
                    location: loc.clone(),
                    path: path.clone(),
                    reason: err.to_string(),
                })?;
                let parsed = crate::sii_info::SiiInfo::parse(&image)
                    .map_err(|err| SimError::bad_sii(&loc, path.clone(), err))?;
                if let (Some(n), true) = (e.serial, image.len() >= 0x20) {
                    image[0x1C..0x20].copy_from_slice(&n.to_le_bytes());
                }
                if let Some(a) = alias {
                    devices::set_alias(&mut image, a);
                }
                let known = crate::esc::chips::for_device(
                    parsed.fixed.vendor_id,
                    parsed.fixed.product_code,
                    parsed.fixed.revision,
                );
                let chip = crate::netfile_esi::chip(e.chip.as_ref(), &at)?
                    .or(known)
                    .unwrap_or(crate::esc::EscChip::et1100(0));
                let esc = devices::esc_from_sii_on(image, chip)
                    .map_err(|err| SimError::bad_sii(&loc, path.clone(), err))?;
                let info = esc.info();
                let order = if info.order.is_empty() {
                    s.get_ref().clone()
                } else {
                    info.order.clone()
                };
                let default_name = if info.name.is_empty() {
                    order.clone()
                } else {
                    info.name.clone()
                };
                Node::new(Some(esc), e.name.clone().unwrap_or(default_name), order)
            }
            (Some(_), Some(_)) => {
                return Err(SimError::Invalid {
                    location: here,
                    message: "a [[subdevice]] takes either `model` or `sii`, not both".into(),
                })
            }
            (None, None) => {
                return Err(SimError::Invalid {
                    location: here,
                    message: "this [[subdevice]] needs `model = \"EL2008\"` (a catalogue model), `sii = \"image.bin\"` (an SII image file) or `esi = \"file.xml\"` with `type = \"EL2008\"` (an ESI device)".into(),
                })
            }
        };
        let mut node = node;
        wire(&mut node, &nodes, e, &at)?;
        esm_timeout(&mut node, e, file.safeop_op_timeout_ms, &at)?;
        let foe = crate::netfile_mbx::FoeKeys {
            files: e.foe_files.as_ref(),
            password: e.foe_password.as_ref(),
            busy: e.foe_busy.as_ref(),
        };
        crate::netfile_mbx::apply(&mut node, &foe, base_dir, &at)?;
        crate::netfile_mbx::apply_eoe_ip(&mut node, e.eoe_ip.as_ref(), &at)?;
        nodes.push(node);
    }
    let escs = nodes.iter().filter(|n| n.esc.is_some()).count();
    let faults = match &file.faults {
        Some(f) => Some(faults(f, &at)?),
        None => None,
    };
    let events = file
        .event
        .iter()
        .map(|e| event(e.get_ref(), escs, &at))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(NetFile {
        nodes,
        faults,
        events,
        dc_seed: file.dc_seed.unwrap_or(0),
        ring: file.ring.unwrap_or(false),
    })
}

/// Apply the wiring and clock keys of entry `e` to `node` (the entries before are `nodes`).
fn wire(
    node: &mut Node,
    nodes: &[Node],
    e: &EntryRepr,
    at: &dyn Fn(usize) -> String,
) -> Result<(), SimError> {
    let me = nodes.len();
    let span = |s: &Option<Spanned<u64>>| s.as_ref().map_or(0, |v| v.span().start);
    let Some(esc) = node.esc.as_mut() else {
        let keys: [(&str, usize, bool); 7] = [
            ("parent", span(&e.parent), e.parent.is_some()),
            ("port", span(&e.port), e.port.is_some()),
            ("cable_ns", span(&e.cable_ns), e.cable_ns.is_some()),
            ("forward_ns", span(&e.forward_ns), e.forward_ns.is_some()),
            (
                "drift_ppm",
                e.drift_ppm.as_ref().map_or(0, |v| v.span().start),
                e.drift_ppm.is_some(),
            ),
            (
                "start_offset_ns",
                span(&e.start_offset_ns),
                e.start_offset_ns.is_some(),
            ),
            ("dc_bits", span(&e.dc_bits), e.dc_bits.is_some()),
        ];
        if let Some((k, s, _)) = keys.iter().find(|k| k.2) {
            return Err(invalid(
                at(*s),
                format!("a passive terminal is not on the frame path and has no `{k}`; remove it"),
            ));
        }
        return Ok(());
    };
    if let Some(b) = &e.dc_bits {
        match *b.get_ref() {
            32 => esc.set_dc_64bit(false),
            64 => esc.set_dc_64bit(true),
            v => {
                return Err(invalid(
                    at(b.span().start),
                    format!("`dc_bits` is 32 or 64, not {v}"),
                ))
            }
        }
    }
    if let Some(d) = &e.drift_ppm {
        let v = *d.get_ref();
        if !v.is_finite() || v.abs() > 500.0 {
            return Err(invalid(
                at(d.span().start),
                format!("`drift_ppm` must be within ±500 (a real quartz is within ±100), not {v}"),
            ));
        }
        node.drift_ppm = Some(v);
    }
    node.cable_ns = e.cable_ns.as_ref().map(|v| *v.get_ref());
    node.forward_ns = e.forward_ns.as_ref().map(|v| *v.get_ref());
    node.start_offset_ns = e.start_offset_ns.as_ref().map(|v| *v.get_ref());
    let first_esc = !nodes.iter().any(|n| n.esc.is_some());
    if e.parent.is_none() && e.port.is_none() {
        return Ok(());
    }
    let here = at(e.parent.as_ref().map_or(span(&e.port), |p| p.span().start));
    if first_esc {
        return Err(invalid(
            here,
            "the first SubDevice with an ESC is wired to the MainDevice and has no `parent` or `port`; remove them".into(),
        ));
    }
    let parent = match &e.parent {
        Some(p) => {
            let v = *p.get_ref() as usize;
            if v >= me {
                return Err(invalid(
                    at(p.span().start),
                    format!("`parent = {v}` must name an earlier [[subdevice]] entry (0..{me}, counted from 0 in this file)"),
                ));
            }
            if nodes[v].esc.is_none() {
                return Err(invalid(
                    at(p.span().start),
                    format!("entry {v} ({}) is a passive terminal and has no ports; name an entry with an ESC", nodes[v].order),
                ));
            }
            v
        }
        None => (0..me).rev().find(|&i| nodes[i].esc.is_some()).unwrap_or(0),
    };
    let pesc = nodes[parent].esc.as_ref().expect("checked above");
    let used = |port: usize| {
        nodes.iter().enumerate().any(|(i, n)| {
            n.esc.is_some()
                && match n.parent {
                    Some(pp) => pp == (parent, port),
                    // Default wiring: port 1 of the ESC entry before.
                    None => {
                        port == 1
                            && i > 0
                            && (0..i).rev().find(|&j| nodes[j].esc.is_some()) == Some(parent)
                    }
                }
        })
    };
    let free: Vec<usize> = [1, 3, 2]
        .into_iter()
        .filter(|&p| pesc.port_implemented(p) && !used(p))
        .collect();
    let port = match &e.port {
        Some(p) => {
            let v = *p.get_ref() as usize;
            let ok = (1..4).contains(&v) && pesc.port_implemented(v);
            if !ok {
                return Err(invalid(
                    at(p.span().start),
                    format!(
                        "entry {parent} ({}) has no port {v} to plug into; its free ports are {:?} (port 0 faces the MainDevice)",
                        nodes[parent].order, free
                    ),
                ));
            }
            if used(v) {
                return Err(invalid(
                    at(p.span().start),
                    format!(
                        "port {v} of entry {parent} ({}) is already used by another entry; its free ports are {:?}",
                        nodes[parent].order, free
                    ),
                ));
            }
            v
        }
        None => match free.first() {
            Some(&p) => p,
            None => {
                return Err(invalid(
                    here,
                    format!(
                        "entry {parent} ({}) has no free port left",
                        nodes[parent].order
                    ),
                ))
            }
        },
    };
    node.parent = Some((parent, port));
    Ok(())
}

/// Apply the entry's (else the file's) SAFEOP→OP timeout to `node`.
fn esm_timeout(
    node: &mut Node,
    e: &EntryRepr,
    file_ms: Option<u64>,
    at: &dyn Fn(usize) -> String,
) -> Result<(), SimError> {
    let own = e.safeop_op_timeout_ms.as_ref();
    match node.esc.as_mut() {
        Some(esc) => {
            if let Some(ms) = own.map(|v| *v.get_ref()).or(file_ms) {
                esc.set_safeop_op_timeout_ms(ms);
            }
            Ok(())
        }
        None => match own {
            Some(v) => Err(invalid(
                at(v.span().start),
                "a passive terminal has no firmware and no `safeop_op_timeout_ms`; remove it"
                    .into(),
            )),
            None => Ok(()),
        },
    }
}

fn invalid(location: String, message: String) -> SimError {
    SimError::Invalid { location, message }
}

fn rate(
    r: &Option<Spanned<f64>>,
    name: &str,
    at: &dyn Fn(usize) -> String,
) -> Result<f64, SimError> {
    let Some(r) = r else { return Ok(0.0) };
    let v = *r.get_ref();
    if !(0.0..=1.0).contains(&v) {
        return Err(invalid(
            at(r.span().start),
            format!("`{name}` is a probability and must be between 0 and 1, not {v}"),
        ));
    }
    Ok(v)
}

fn faults(f: &FaultsRepr, at: &dyn Fn(usize) -> String) -> Result<Faults, SimError> {
    Ok(Faults {
        seed: f.seed.unwrap_or(0),
        drop_rate: rate(&f.drop_rate, "drop_rate", at)?,
        corrupt_rate: rate(&f.corrupt_rate, "corrupt_rate", at)?,
        deliver_corrupted: f.deliver_corrupted.unwrap_or(false),
        delay_ns: f.delay_ns.unwrap_or(0),
        jitter_ns: f.jitter_ns.unwrap_or(0),
        duplicate_rate: rate(&f.duplicate_rate, "duplicate_rate", at)?,
        bad_cable: f.bad_cable,
    })
}

fn event(e: &EventRepr, escs: usize, at: &dyn Fn(usize) -> String) -> Result<FaultEvent, SimError> {
    let ms = *e.at_ms.get_ref();
    if !ms.is_finite() || ms < 0.0 {
        return Err(invalid(
            at(e.at_ms.span().start),
            format!("`at_ms` must be a time in milliseconds from 0 on, not {ms}"),
        ));
    }
    if let Some(b) = &e.between {
        return ring_event(e, b, ms, escs, at);
    }
    let Some(pos) = &e.position else {
        return Err(invalid(
            at(e.action.span().start),
            "this event needs `position = N` (the SubDevice it happens to)".into(),
        ));
    };
    let position = *pos.get_ref();
    if position >= escs as u64 {
        return Err(invalid(
            at(pos.span().start),
            format!("no SubDevice at position {position}: the network has {escs} with an ESC (positions 0..{escs}, passive terminals not counted)"),
        ));
    }
    let action = match e.action.get_ref().as_str() {
        "unplug" => EventAction::Unplug,
        "replug" => EventAction::Replug {
            power_cycled: e.power_cycled.as_ref().is_some_and(|p| *p.get_ref()),
        },
        "power_cycle" => EventAction::PowerCycle,
        "disconnect" => EventAction::Disconnect,
        "connect" => EventAction::Connect,
        other => {
            return Err(invalid(
                at(e.action.span().start),
                format!(
                    "unknown action \"{other}\"; use \"unplug\", \"replug\", \"power_cycle\", \"disconnect\", \"connect\", or \"break\"/\"heal\" with `between = [A, B]`"
                ),
            ))
        }
    };
    if let (Some(p), false) = (
        &e.power_cycled,
        matches!(action, EventAction::Replug { .. }),
    ) {
        return Err(invalid(
            at(p.span().start),
            "`power_cycled` only applies to action = \"replug\"; remove it".into(),
        ));
    }
    Ok(FaultEvent {
        at_ns: (ms * 1e6) as u64,
        action,
        position: position as usize,
    })
}

/// A `break` / `heal` event between two SubDevices (whether a cable runs between them is
/// checked when the network is built).
fn ring_event(
    e: &EventRepr,
    b: &Spanned<Vec<u64>>,
    ms: f64,
    escs: usize,
    at: &dyn Fn(usize) -> String,
) -> Result<FaultEvent, SimError> {
    let here = at(b.span().start);
    let pair = match b.get_ref().as_slice() {
        [x, y] if *x < escs as u64 && *y < escs as u64 && x != y => (*x as usize, *y as usize),
        _ => {
            return Err(invalid(
                here,
                format!("`between` names two different SubDevices (positions 0..{escs}) joined by a cable, e.g. [3, 4]"),
            ))
        }
    };
    let action = match e.action.get_ref().as_str() {
        "break" => EventAction::Break { with: pair.1 },
        "heal" => EventAction::Heal { with: pair.1 },
        other => {
            return Err(invalid(
                at(e.action.span().start),
                format!("`between` goes with action \"break\" or \"heal\", not \"{other}\""),
            ))
        }
    };
    if e.position.is_some() || e.power_cycled.is_some() {
        return Err(invalid(
            here,
            "a break or heal event takes `between = [A, B]` only; remove `position`/`power_cycled`"
                .into(),
        ));
    }
    Ok(FaultEvent {
        at_ns: (ms * 1e6) as u64,
        action,
        position: pair.0,
    })
}

#[cfg(test)]
mod tests {
    use super::line_of;

    #[test]
    fn lines_count_from_one() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
    }
}
