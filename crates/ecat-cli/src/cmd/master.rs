//! `ecat master`, `ecat config`, `ecat version`: IgH's commands of the same names.
//!
//! `master` shows the phase, the link, frame counters and rates and the DC times of a running
//! application's master (`-m N`, through its control socket), or of a master this command
//! opens on the link itself (phase Idle, the frames of its own scan). `config` lists the
//! application's slave configurations (alias:position, identity, the SubDevice it is attached
//! to and its state; `-v` with PDOs, startup SDOs and DC). Rates are over IgH's 1/10/60 s
//! windows when the application has run long enough, else averages since it started.

use super::{open_and_scan, CmdResult};
use crate::BusArgs;
use ecat::control::protocol::{config_from_wire, ConfigRecord, MasterRecord};
use ecat::SubDevice;
use std::fmt::Write;

/// Options of `ecat master`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bus: BusArgs,
}

/// Options of `ecat config`.
#[derive(clap::Args, Debug)]
pub struct ConfigArgs {
    #[command(flatten)]
    bus: BusArgs,
    /// Also show PDOs, startup SDOs and DC settings
    #[arg(short, long)]
    verbose: bool,
}

/// Run `ecat version`.
pub fn version() -> CmdResult {
    if crate::igh::active().is_some() {
        // IgH's words first: scripts read the API version from the fourth field.
        println!(
            "IgH EtherCAT master 1.6.0 (compatible: ecat {}, user space)",
            env!("CARGO_PKG_VERSION")
        );
        return Ok(());
    }
    println!(
        "ecat {} (IgH EtherCAT master API 1.6 compatible: libethercat.so.1; control protocol {})",
        env!("CARGO_PKG_VERSION"),
        ecat::control::protocol::VERSION
    );
    Ok(())
}

/// Run `ecat master`.
pub fn master(a: Args) -> CmdResult {
    if let Some(mut c) = a.bus.remote()? {
        print!("{}", master_text(&c.master()?));
        return Ok(());
    }
    let started = std::time::Instant::now();
    let mut md = open_and_scan(&a.bus)?;
    let en = md.bus().counters();
    let m = MasterRecord {
        index: 0,
        phase: "Idle".into(),
        link: md.bus().link().name().to_string(),
        mac: md.bus().link().mac(),
        link_up: true,
        slaves: md.subdevices().len(),
        frames: (
            en.frames_sent,
            en.frames_received,
            en.frames_sent.saturating_sub(en.frames_received),
            0,
        ),
        timeouts: en.timeouts,
        uptime_s: started.elapsed().as_secs_f64(),
        ..Default::default()
    };
    print!("{}", master_text(&m));
    Ok(())
}

/// ns since 2000-01-01 as `YYYY-MM-DD hh:mm:ss.nnnnnnnnn` (UTC).
pub fn dc_date(ns: u64) -> String {
    let secs = ns / 1_000_000_000 + 946_684_800;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:09}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        ns % 1_000_000_000
    )
}

/// A rate window: (seconds, sent/s, received/s, lost/s).
type Rate = (u32, f64, f64, f64);

/// IgH's `ethercat master` layout.
pub fn master_text(m: &MasterRecord) -> String {
    let mut o = String::new();
    let rate = |n: u64| {
        if m.uptime_s > 0.0 {
            n as f64 / m.uptime_s
        } else {
            0.0
        }
    };
    let (tx, rx, lost, late) = m.frames;
    let mac: Vec<String> = m.mac.iter().map(|b| format!("{b:02x}")).collect();
    let _ = writeln!(o, "Master{}", m.index);
    let _ = writeln!(o, "  Phase: {}", m.phase);
    let _ = writeln!(
        o,
        "  Active: {}",
        if m.phase == "Operation" { "yes" } else { "no" }
    );
    let _ = writeln!(o, "  Slaves: {}", m.slaves);
    let _ = writeln!(o, "  Ethernet devices:");
    let _ = writeln!(o, "    Main: {} ({}, attached)", mac.join(":"), m.link);
    let _ = writeln!(o, "      Link: {}", if m.link_up { "UP" } else { "DOWN" });
    let _ = writeln!(o, "      Tx frames:   {tx}");
    let _ = writeln!(o, "      Rx frames:   {rx}");
    // IgH's 1/10/60 s windows as far as the application's samples cover them, else the
    // average so far.
    let cols = |f: &dyn Fn(&Rate) -> f64, avg: f64| -> String {
        if m.rates.is_empty() {
            format!("{avg:9.1}")
        } else {
            m.rates.iter().map(|r| format!("{:9.1}", f(r))).collect()
        }
    };
    if !m.rates.is_empty() {
        let w: String = m.rates.iter().map(|r| format!("{:>8}s", r.0)).collect();
        let _ = writeln!(o, "      Rates over:          {w}");
    }
    let _ = writeln!(o, "      Tx frame rate [1/s]: {}", cols(&|r| r.1, rate(tx)));
    let _ = writeln!(o, "      Rx frame rate [1/s]: {}", cols(&|r| r.2, rate(rx)));
    let _ = writeln!(o, "    Backup: None.");
    let _ = writeln!(o, "    Common:");
    let _ = writeln!(o, "      Cycles:      {}", m.cycles);
    let (frames, bytes) = m.cyclic_layout;
    let _ = writeln!(o, "      Cyclic frames per cycle: {frames} ({bytes} bytes)");
    let _ = writeln!(o, "      Lost frames: {lost}");
    let _ = writeln!(o, "      Late frames: {late}");
    let _ = writeln!(o, "      Acyclic timeouts: {}", m.timeouts);
    let _ = writeln!(
        o,
        "      Loss rate [1/s]:     {}",
        cols(&|r| r.3, rate(lost))
    );
    let loss = if tx > 0 {
        100.0 * lost as f64 / tx as f64
    } else {
        0.0
    };
    let _ = writeln!(o, "      Frame loss [%]:      {loss:9.3}");
    let _ = writeln!(o, "  Distributed clocks:");
    match m.dc_reference {
        Some(p) => {
            let _ = writeln!(o, "    Reference clock: Slave {p}");
        }
        None => {
            let _ = writeln!(o, "    Reference clock: None");
        }
    }
    let t = m.dc_time_ns.unwrap_or(0);
    let _ = writeln!(o, "    DC reference time: {t}");
    if let Some(s) = m.sync_monitor_ns {
        let _ = writeln!(o, "    Sync monitor [ns]: {s}");
    }
    let _ = writeln!(o, "    Application time: {}", m.app_time_ns);
    let _ = writeln!(o, "                      {}", dc_date(m.app_time_ns));
    o
}

/// Run `ecat config`.
pub fn config(a: ConfigArgs) -> CmdResult {
    let Some(mut c) = a.bus.remote()? else {
        if crate::igh::active().is_some() {
            // IgH's master without an application has no configurations: nothing to list.
            return Ok(());
        }
        return Err(
            "slave configurations belong to a running application: give -m N (the master it requested)"
                .into(),
        );
    };
    let subs = c.subdevices()?;
    let mut configs = c.configs()?;
    configs.sort_by_key(|r| (r.alias, r.position));
    if configs.is_empty() && crate::igh::active().is_none() {
        println!("(master {} has no slave configurations)", c.hello().master);
    }
    for rec in &configs {
        if a.verbose {
            print!("{}", config_verbose(rec, &subs));
        } else {
            println!("{}", config_line(rec, &subs));
        }
    }
    Ok(())
}

fn state_of(rec: &ConfigRecord, subs: &[SubDevice]) -> String {
    rec.attached
        .and_then(|p| subs.get(p))
        .map_or("-".into(), crate::output::state_text)
}

/// IgH's one line: `alias:position  vendor/product  attached  state`.
pub fn config_line(rec: &ConfigRecord, subs: &[SubDevice]) -> String {
    format!(
        "{:>5}:{:<3} 0x{:08x}/0x{:08x}  {:>3}  {}",
        rec.alias,
        rec.position,
        rec.vendor_id,
        rec.product_code,
        rec.attached.map_or("-".into(), |p| p.to_string()),
        state_of(rec, subs)
    )
}

/// IgH's `config -v` block.
pub fn config_verbose(rec: &ConfigRecord, subs: &[SubDevice]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Alias: {}", rec.alias);
    let _ = writeln!(o, "Position: {}", rec.position);
    let _ = writeln!(o, "Vendor Id: 0x{:08x}", rec.vendor_id);
    let _ = writeln!(o, "Product code: 0x{:08x}", rec.product_code);
    match rec.attached {
        Some(p) => {
            let _ = writeln!(o, "Attached slave: {p} ({})", state_of(rec, subs));
        }
        None => {
            let _ = writeln!(o, "Attached slave: none");
        }
    }
    let cfg = config_from_wire(&rec.pdos);
    for sm in &cfg.sync {
        let dir = match sm.direction {
            ecat::config::Direction::Output => "Output",
            ecat::config::Direction::Input => "Input",
        };
        let _ = writeln!(o, "SM{}, Dir: {dir}", sm.index);
        for pdo in &sm.pdos {
            let _ = writeln!(o, "  PDO 0x{:04x}", pdo.index);
            for e in &pdo.entries {
                let _ = writeln!(
                    o,
                    "    PDO entry 0x{:04x}:{:02x}, {:2} bit",
                    e.index, e.subindex, e.bits
                );
            }
        }
    }
    let _ = writeln!(o, "SDO configuration:");
    if rec.sdos.is_empty() {
        let _ = writeln!(o, "  None.");
    }
    for (index, sub, ca, data) in &rec.sdos {
        let _ = writeln!(
            o,
            "  0x{index:04x}:{}, {}",
            if *ca {
                "C".to_string()
            } else {
                format!("{sub:02x}")
            },
            crate::datatype::hex(data)
        );
    }
    if let Some((assign, cycle, shift)) = rec.dc {
        let _ = writeln!(o, "DC configuration:");
        let _ = writeln!(o, "  AssignActivate: 0x{assign:04x}");
        let _ = writeln!(o, "  SYNC0 cycle time [ns]: {cycle}, shift [ns]: {shift}");
    }
    let _ = writeln!(o);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dc_dates() {
        assert_eq!(dc_date(0), "2000-01-01 00:00:00.000000000");
        // 2024-02-29 12:34:56.5 UTC is 762 438 896.5 s after 2000-01-01.
        assert_eq!(
            dc_date(762_525_296_500_000_000),
            "2024-02-29 12:34:56.500000000"
        );
    }

    #[test]
    fn config_line_shape() {
        let rec = ConfigRecord {
            alias: 0,
            position: 2,
            vendor_id: 2,
            product_code: 0x07f0_3052,
            attached: None,
            ..Default::default()
        };
        assert_eq!(
            config_line(&rec, &[]),
            "    0:2   0x00000002/0x07f03052    -  -"
        );
    }
}
