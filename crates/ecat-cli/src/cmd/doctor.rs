//! `ecat doctor`: is this host ready for real-time EtherCAT? One line per check (`OK`, `WARN`,
//! `MISSING`, `INFO`), what was found and the exact change to make. Checks live in
//! `ecat::doctor`; nothing is changed on the host. Always exits 0 when the checks ran:
//! the findings are the answer.

use super::CmdResult;
use ecat::doctor::{run_checks, Options, Status};
use serde_json::json;

/// Options of `ecat doctor`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Network interface for EtherCAT: also check its interrupts, coalescing and XDP support;
    /// or a DPDK port (dpdk:0000:03:00.0): check the IOMMU, its vfio-pci binding and hugepages
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    iface: Option<String>,
    /// Print JSON for scripts
    #[arg(long)]
    json: bool,
}

/// Run `ecat doctor`.
pub fn run(a: Args) -> CmdResult {
    // `raw:eth0` is accepted too; simulated links have no host NIC to check.
    let iface = a
        .iface
        .map(|i| i.strip_prefix("raw:").map(str::to_string).unwrap_or(i))
        .filter(|i| !i.starts_with("sim:"));
    let findings = run_checks(&Options { iface });
    let count = |s: Status| findings.iter().filter(|f| f.status == s).count();
    if a.json {
        let v = json!({
            "findings": findings.iter().map(|f| json!({
                "key": f.key, "title": f.title, "status": f.status.label(),
                "found": f.found, "fix": f.fix,
            })).collect::<Vec<_>>(),
            "summary": {
                "ok": count(Status::Ok), "warn": count(Status::Warn),
                "missing": count(Status::Missing), "info": count(Status::Info),
            },
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    for f in &findings {
        println!("{:<7} {}: {}", f.status.label(), f.title, f.found);
        if !f.fix.is_empty() && f.status != Status::Ok {
            println!("        fix: {}", f.fix);
        }
    }
    println!(
        "--- {} OK, {} WARN, {} MISSING, {} INFO",
        count(Status::Ok),
        count(Status::Warn),
        count(Status::Missing),
        count(Status::Info)
    );
    Ok(())
}
