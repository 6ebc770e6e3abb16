//! IgH's output shapes where they differ from ecat's own and programs parse them: the
//! `slaves` table (`0  0:0  PREOP  +  EK1100 ...`: columns as wide as their widest entry, two
//! spaces apart) and the `slaves -v` block (`=== Master 0, Slave 1 ===`, then IgH's lines and
//! labels). ecat's commands call these when [`super::active`] says they run as `ethercat`.

use crate::output::has_error;
use ecat::SubDevice;
use ecat_wire::register::PortType;
use std::fmt::Write;

/// IgH's state text: `PREOP`, `SAFEOP+ERROR`, `???` for no valid state.
pub fn state(s: &SubDevice) -> String {
    let mut t = match s.al_status.state_bits() {
        1 => "INIT",
        2 => "PREOP",
        3 => "BOOT",
        4 => "SAFEOP",
        8 => "OP",
        _ => "???",
    }
    .to_string();
    if has_error(s) {
        t.push_str("+ERROR");
    }
    t
}

/// The name IgH shows: the SII's, else `0xVVVVVVVV:0xPPPPPPPP`.
fn name(s: &SubDevice) -> String {
    if s.name.is_empty() {
        format!(
            "0x{:08x}:0x{:08x}",
            s.identity.vendor_id, s.identity.product_code
        )
    } else {
        s.name.clone()
    }
}

/// The `slaves` table for the chosen positions.
pub fn slaves_table(subs: &[SubDevice], chosen: &[usize]) -> String {
    // Alias and position relative to the last SubDevice with an alias, for every SubDevice.
    let mut rel = Vec::with_capacity(subs.len());
    let (mut alias, mut index) = (0u16, 0usize);
    for s in subs {
        if s.alias != 0 {
            alias = s.alias;
            index = 0;
        }
        rel.push((alias, index));
        index += 1;
    }
    let rows: Vec<[String; 5]> = chosen
        .iter()
        .map(|&i| {
            let s = &subs[i];
            let flag = if has_error(s) { "E" } else { "+" };
            [
                i.to_string(),
                rel[i].0.to_string(),
                rel[i].1.to_string(),
                state(s),
                format!("{flag}  {}", name(s)),
            ]
        })
        .collect();
    let w = |k: usize| rows.iter().map(|r| r[k].len()).max().unwrap_or(0);
    let (wp, wa, wr, ws) = (w(0), w(1), w(2), w(3));
    let mut o = String::new();
    for [p, a, r, st, rest] in &rows {
        let _ = writeln!(o, "{p:>wp$}  {a:>wa$}:{r:<wr$}  {st:<ws$}  {rest}");
    }
    o
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The `slaves -v` block for SubDevice `i` of master `master`.
pub fn slave_verbose(subs: &[SubDevice], i: usize, master: u32) -> String {
    let s = &subs[i];
    let mut o = String::new();
    let _ = writeln!(o, "=== Master {master}, Slave {i} ===");
    if s.alias != 0 {
        let _ = writeln!(o, "Alias: {}", s.alias);
    }
    let flag = if has_error(s) { 'E' } else { '+' };
    let id = &s.identity;
    let _ = writeln!(o, "Device: Main\nState: {}\nFlag: {flag}", state(s));
    let _ = writeln!(o, "Identity:");
    let _ = writeln!(o, "  Vendor Id:       0x{:08x}", id.vendor_id);
    let _ = writeln!(o, "  Product code:    0x{:08x}", id.product_code);
    let _ = writeln!(o, "  Revision number: 0x{:08x}", id.revision);
    let _ = writeln!(o, "  Serial number:   0x{:08x}", id.serial);
    let _ = writeln!(o, "DL information:");
    // ESC feature register 0x0008 bit 0: 0 = bit-oriented FMMU operation supported.
    let _ = writeln!(o, "  FMMU bit operation: {}", yes(s.features & 1 == 0));
    let dc = s.dc_supported();
    if dc {
        let range = if s.features & ecat_wire::register::features::DC_64BIT != 0 {
            "64 bit"
        } else {
            "32 bit"
        };
        match &s.dc {
            Some(d) if !d.system_time => {
                let _ = writeln!(o, "  Distributed clocks: yes, delay measurement only");
            }
            _ => {
                let _ = writeln!(o, "  Distributed clocks: yes, {range}");
            }
        }
        let delay = s.dc.map_or(0, |d| d.delay_ns);
        let _ = writeln!(o, "  DC system time transmission delay: {delay} ns");
    } else {
        let _ = writeln!(o, "  Distributed clocks: no");
    }
    let _ = write!(o, "Port  Type  Link  Loop    Signal  NextSlave");
    if dc {
        let _ = write!(o, "  RxTime [ns]  Diff [ns]   NextDc [ns]");
    }
    o.push('\n');
    for (p, t) in s.ports.iter().enumerate() {
        let ty = match t {
            None | Some(PortType::NotImplemented) => "N/A",
            Some(t) => t.name(),
        };
        let dl = s.dl_status;
        // The SubDevice behind port p: the one whose DC parent is this one on that port.
        let next = subs.iter().find(|n| {
            n.dc.is_some_and(|d| d.parent == Some(s.position) && d.parent_port as usize == p)
        });
        let _ = write!(
            o,
            "   {p}  {ty:<4}  {:<4}  {:<6}  {:<6}  {:>9}",
            if dl.link(p) { "up" } else { "down" },
            if dl.loop_closed(p) { "closed" } else { "open" },
            yes(dl.communication(p)),
            next.map_or("-".to_string(), |n| n.position.to_string())
        );
        if dc {
            let open = !dl.loop_closed(p);
            let times = s.dc.map(|d| d.port_times).unwrap_or_default();
            let cell = |v: i64| if open { v.to_string() } else { "-".into() };
            let next_dc = match (next.and_then(|n| n.dc), s.dc) {
                (Some(n), Some(d)) => n.delay_ns as i64 - d.delay_ns as i64,
                _ => 0,
            };
            let _ = write!(
                o,
                "  {:>11}  {:>10}  {:>10}",
                cell(times[p] as i64),
                cell(times[p].wrapping_sub(times[0]) as i32 as i64),
                cell(next_dc)
            );
        }
        o.push('\n');
    }
    let m = &s.mailbox;
    if m.protocols != 0 {
        let _ = writeln!(o, "Mailboxes:");
        let _ = writeln!(
            o,
            "  Bootstrap RX: 0x{:04x}/{}, TX: 0x{:04x}/{}",
            m.boot_rx.offset, m.boot_rx.size, m.boot_tx.offset, m.boot_tx.size
        );
        let _ = writeln!(
            o,
            "  Standard  RX: 0x{:04x}/{}, TX: 0x{:04x}/{}",
            m.rx.offset, m.rx.size, m.tx.offset, m.tx.size
        );
        let _ = writeln!(
            o,
            "  Supported protocols: {}",
            m.protocol_names().join(", ")
        );
    }
    let _ = writeln!(o, "General:");
    let _ = writeln!(o, "  Group: {}", s.group);
    let _ = writeln!(o, "  Image name: ");
    let _ = writeln!(o, "  Order number: {}", s.order);
    let _ = writeln!(o, "  Device name: {}", s.name);
    if m.protocols & 0x04 != 0 {
        let c = s.coe_details;
        let _ = writeln!(o, "  CoE details:");
        for (bit, what) in [
            (0, "Enable SDO"),
            (1, "Enable SDO Info"),
            (2, "Enable PDO Assign"),
            (3, "Enable PDO Configuration"),
            (4, "Enable Upload at startup"),
            (5, "Enable SDO complete access"),
        ] {
            let _ = writeln!(o, "    {what}: {}", yes(c & (1 << bit) != 0));
        }
    }
    let _ = writeln!(o, "  Flags:");
    let _ = writeln!(o, "    Enable SafeOp: {}", yes(s.general_flags & 1 != 0));
    let _ = writeln!(o, "    Enable notLRW: {}", yes(s.general_flags & 2 != 0));
    let _ = writeln!(o, "  Current consumption: {} mA", s.ebus_current_ma);
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat_wire::al::AlStatus;

    #[test]
    fn table_columns_are_as_wide_as_their_widest_entry() {
        let mut subs: Vec<SubDevice> = (0..12)
            .map(|i| SubDevice {
                position: i,
                name: format!("T{i}"),
                al_status: AlStatus(if i == 1 { 8 } else { 2 }),
                ..Default::default()
            })
            .collect();
        subs[10].alias = 1001;
        subs[11].name.clear();
        let t = slaves_table(&subs, &(0..12).collect::<Vec<_>>());
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], " 0     0:0  PREOP  +  T0");
        assert_eq!(lines[1], " 1     0:1  OP     +  T1");
        assert_eq!(lines[9], " 9     0:9  PREOP  +  T9");
        assert_eq!(lines[10], "10  1001:0  PREOP  +  T10");
        assert_eq!(lines[11], "11  1001:1  PREOP  +  0x00000000:0x00000000");
        let one = slaves_table(&subs, &[2]);
        assert_eq!(one, "2  0:2  PREOP  +  T2\n");
    }
}
