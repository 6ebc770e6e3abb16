//! How SubDevices are shown: the one-line list (IgH's `ethercat slaves` shape with the station
//! address added), the verbose block (`-v`), and JSON for scripts. One place so that every
//! command prints a SubDevice the same way.

use ecat::subdevice::{Pdo, SubDevice};
use ecat_wire::register::PortType;
use serde::Serialize;
use std::fmt::Write;

/// The SubDevices as the runtime's supervisor last saw them (state and code updated).
pub fn runtime_subdevices(rt: &ecat::runtime::Runtime) -> Vec<SubDevice> {
    rt.supervisor()
        .states()
        .map(|x| {
            let mut s = x.info.clone();
            s.al_status = x.status;
            s.al_status_code = x.code;
            s
        })
        .collect()
}

/// True if the SubDevice reports a real error (see `ecat::esm::refused`).
pub fn has_error(s: &SubDevice) -> bool {
    ecat::esm::refused(s.al_status, s.al_status_code)
}

/// State text with the error flag, e.g. `PREOP` or `SAFEOP+ERR`; the raw AL status word is
/// added when its error bit is only a device-emulation echo.
pub fn state_text(s: &SubDevice) -> String {
    let state = s
        .al_status
        .state()
        .map(|st| st.name().to_string())
        .unwrap_or_else(|| format!("0x{:02X}", s.al_status.state_bits()));
    if has_error(s) {
        format!("{state}+ERR")
    } else if s.al_status.error() {
        format!(
            "{state} (AL status 0x{:04X}: acknowledge echoed by device emulation)",
            s.al_status.0
        )
    } else {
        state
    }
}

/// Alias-relative position `alias:offset` as IgH prints it.
pub fn alias_position(subs: &[SubDevice], i: usize) -> String {
    let mut alias = 0;
    let mut base = 0;
    for (j, s) in subs.iter().enumerate().take(i + 1) {
        if s.alias != 0 {
            alias = s.alias;
            base = j;
        }
    }
    format!("{alias}:{}", i - base)
}

/// One line per SubDevice: position, station address, alias:position, state, flag, name.
pub fn list_line(subs: &[SubDevice], i: usize) -> String {
    let s = &subs[i];
    let flag = if has_error(s) { 'E' } else { '+' };
    format!(
        "{:<3} 0x{:04X}  {:<6} {:<6} {}  {}",
        s.position,
        s.station,
        alias_position(subs, i),
        s.al_status
            .state()
            .map(|st| st.name().to_string())
            .unwrap_or_else(|| format!("0x{:02X}", s.al_status.state_bits())),
        flag,
        s.name
    )
}

fn pdo_lines(out: &mut String, kind: &str, pdos: &[Pdo]) {
    for p in pdos {
        let sm = if p.sync_manager < 16 {
            format!("SM{}", p.sync_manager)
        } else {
            "not assigned".into()
        };
        let _ = writeln!(
            out,
            "  {kind} 0x{:04X} \"{}\" ({sm}, {} bits)",
            p.index,
            p.name,
            p.bits()
        );
        for e in &p.entries {
            if e.index == 0 {
                let _ = writeln!(out, "    (gap, {} bits)", e.bits);
            } else {
                let _ = writeln!(
                    out,
                    "    0x{:04X}:{:02X}, {} bits, \"{}\"",
                    e.index, e.subindex, e.bits, e.name
                );
            }
        }
    }
}

/// The verbose block for one SubDevice (IgH's `ethercat slaves -v` layout).
pub fn verbose(subs: &[SubDevice], i: usize) -> String {
    let s = &subs[i];
    let mut o = String::new();
    let _ = writeln!(
        o,
        "=== SubDevice {} (station 0x{:04X}) ===",
        s.position, s.station
    );
    let _ = writeln!(o, "Alias: {} ({})", s.alias, alias_position(subs, i));
    let _ = writeln!(o, "State: {}", state_text(s));
    if s.al_status_code.0 != 0 {
        let _ = writeln!(o, "AL status code: {}", s.al_status_code);
    }
    let _ = writeln!(o, "Identity:");
    let _ = writeln!(o, "  Vendor Id:       0x{:08x}", s.identity.vendor_id);
    let _ = writeln!(o, "  Product code:    0x{:08x}", s.identity.product_code);
    let _ = writeln!(o, "  Revision number: 0x{:08x}", s.identity.revision);
    let _ = writeln!(o, "  Serial number:   0x{:08x}", s.identity.serial);
    let _ = writeln!(o, "ESC:");
    let _ = writeln!(
        o,
        "  Type 0x{:02x}, revision 0x{:02x}, build 0x{:04x}; {} FMMUs, {} SyncManagers, {} KiB RAM",
        s.esc_type, s.esc_revision, s.esc_build, s.fmmu_count, s.sm_count, s.ram_kib
    );
    let _ = writeln!(
        o,
        "  Distributed clocks: {}",
        if s.dc_supported() {
            if s.features & ecat_wire::register::features::DC_64BIT != 0 {
                "yes, 64 bit"
            } else {
                "yes, 32 bit"
            }
        } else {
            "no"
        }
    );
    if let Some(dc) = &s.dc {
        let role = if dc.reference {
            "reference clock".to_string()
        } else {
            format!(
                "parent SubDevice {} port {}",
                dc.parent.map(|p| p.to_string()).unwrap_or("-".into()),
                dc.parent_port
            )
        };
        let _ = writeln!(
            o,
            "  DC system time delay: {} ns (hop {} ns, {role}, entry port {})",
            dc.delay_ns, dc.hop_ns, dc.entry_port
        );
        if dc.system_time {
            let _ = writeln!(o, "  DC system time offset: {} ns", dc.offset_ns as i64);
        } else {
            let _ = writeln!(o, "  DC: latches port receive times only (no system time)");
        }
    }
    if s.dc_assign_activate != 0 {
        let _ = writeln!(
            o,
            "  DC AssignActivate (SII): 0x{:04x}",
            s.dc_assign_activate
        );
    }
    let _ = writeln!(
        o,
        "  LRW supported: {}",
        if s.no_lrw() { "no" } else { "yes" }
    );
    let _ = writeln!(o, "Port  Type  Link  Loop    Signal  RxTime [ns]");
    for (p, t) in s.ports.iter().enumerate() {
        let Some(t) = t else { continue };
        let dl = s.dl_status;
        let rx =
            s.dc.map(|d| d.port_times[p].to_string())
                .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            o,
            "   {p}  {:<5} {:<5} {:<7} {:<7} {rx}",
            t.name(),
            if dl.link(p) { "up" } else { "down" },
            if dl.loop_closed(p) { "closed" } else { "open" },
            if dl.communication(p) { "yes" } else { "no" }
        );
    }
    let m = &s.mailbox;
    let _ = writeln!(o, "Mailboxes:");
    if m.present() {
        let _ = writeln!(
            o,
            "  Standard  RX: 0x{:04x}/{}, TX: 0x{:04x}/{}",
            m.rx.offset, m.rx.size, m.tx.offset, m.tx.size
        );
        if m.boot_rx.size > 0 {
            let _ = writeln!(
                o,
                "  Bootstrap RX: 0x{:04x}/{}, TX: 0x{:04x}/{}",
                m.boot_rx.offset, m.boot_rx.size, m.boot_tx.offset, m.boot_tx.size
            );
        }
        let _ = writeln!(
            o,
            "  Supported protocols: {}",
            m.protocol_names().join(", ")
        );
    } else {
        let _ = writeln!(o, "  none");
    }
    let _ = writeln!(o, "General:");
    let _ = writeln!(o, "  Group: {}", s.group);
    let _ = writeln!(o, "  Order number: {}", s.order);
    let _ = writeln!(o, "  Device name: {}", s.name);
    let _ = writeln!(o, "  Current consumption: {} mA", s.ebus_current_ma);
    if !s.sync_managers.is_empty() {
        let _ = writeln!(o, "SyncManagers (SII):");
        for (n, sm) in s.sync_managers.iter().enumerate() {
            let _ = writeln!(
                o,
                "  SM{n}: start 0x{:04x}, length {}, control 0x{:02x}, enable 0x{:02x}, {}",
                sm.start,
                sm.length,
                sm.control,
                sm.enable,
                sm.kind_name()
            );
        }
    }
    if !s.rx_pdos.is_empty() || !s.tx_pdos.is_empty() {
        let _ = writeln!(o, "PDOs (SII):");
        pdo_lines(&mut o, "RxPDO", &s.rx_pdos);
        pdo_lines(&mut o, "TxPDO", &s.tx_pdos);
    }
    for w in &s.sii_warnings {
        let _ = writeln!(o, "Warning: SII {w}");
    }
    o
}

/// JSON view of a SubDevice (stable field names for scripts).
#[derive(Serialize, Debug)]
pub struct SubDeviceJson {
    position: u16,
    station: u16,
    alias: u16,
    state: String,
    error: bool,
    al_status_code: u16,
    name: String,
    order: String,
    group: String,
    vendor_id: u32,
    product_code: u32,
    revision: u32,
    serial: u32,
    mailbox: Option<MailboxJson>,
    ports: Vec<Option<String>>,
    dc: bool,
    input_bits: u32,
    output_bits: u32,
}

/// Mailbox part of [`SubDeviceJson`].
#[derive(Serialize, Debug)]
pub struct MailboxJson {
    rx_offset: u16,
    rx_size: u16,
    tx_offset: u16,
    tx_size: u16,
    protocols: Vec<&'static str>,
}

impl From<&SubDevice> for SubDeviceJson {
    fn from(s: &SubDevice) -> Self {
        let m = &s.mailbox;
        SubDeviceJson {
            position: s.position,
            station: s.station,
            alias: s.alias,
            state: s
                .al_status
                .state()
                .map(|st| st.name().to_string())
                .unwrap_or_else(|| format!("0x{:02X}", s.al_status.state_bits())),
            error: has_error(s),
            al_status_code: s.al_status_code.0,
            name: s.name.clone(),
            order: s.order.clone(),
            group: s.group.clone(),
            vendor_id: s.identity.vendor_id,
            product_code: s.identity.product_code,
            revision: s.identity.revision,
            serial: s.identity.serial,
            mailbox: m.present().then(|| MailboxJson {
                rx_offset: m.rx.offset,
                rx_size: m.rx.size,
                tx_offset: m.tx.offset,
                tx_size: m.tx.size,
                protocols: m.protocol_names(),
            }),
            ports: s
                .ports
                .iter()
                .map(|p| p.map(|t: PortType| t.name().to_string()))
                .collect(),
            dc: s.dc_supported(),
            input_bits: s.input_bits(),
            output_bits: s.output_bits(),
        }
    }
}
