//! `ecat run`: the main job. Opens the link (the built-in simulated network when no interface
//! is given, and says so), scans, brings every SubDevice to PREOP and reports what it found.
//! Cyclic process data exchange (SAFEOP/OP, PerfMsmt figures) is the next step of the
//! project and is reported as not yet available rather than pretended.

use super::CmdResult;
use crate::output::list_line;
use crate::BusArgs;
use ecat::MainDevice;
use ecat_wire::al::AlState;
use std::time::{Duration, Instant};

/// Options of `ecat run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bus: BusArgs,
}

/// Run `ecat run`.
pub fn run(a: Args) -> CmdResult {
    let spec = match &a.bus.interface {
        Some(i) => i.clone(),
        None => {
            println!("ecat run: no interface given; running on the built-in simulated network sim:io (use -i IFACE for real hardware)");
            "sim:io".to_string()
        }
    };
    let t0 = Instant::now();
    let mut md = MainDevice::open(&spec)?;
    println!("link: {}", md.bus().link().describe());
    md.scan()?;
    let scan_ms = t0.elapsed().as_secs_f64() * 1e3;
    println!(
        "scan: {} SubDevices in {scan_ms:.1} ms",
        md.subdevices().len()
    );
    let t1 = Instant::now();
    md.request_state(&[], AlState::PreOp, Duration::from_secs(5))?;
    md.refresh_states()?;
    println!(
        "PREOP reached in {:.1} ms",
        t1.elapsed().as_secs_f64() * 1e3
    );
    for i in 0..md.subdevices().len() {
        println!("{}", list_line(md.subdevices(), i));
    }
    let c = md.bus().counters();
    println!(
        "frames: {} sent, {} received, {} datagrams, {} resent, {} unmatched, {} malformed",
        c.frames_sent, c.frames_received, c.datagrams_sent, c.resent, c.unmatched, c.malformed
    );
    println!("cyclic process data (SAFEOP/OP) is not available in this version yet");
    md.request_state(&[], AlState::Init, Duration::from_secs(5))?;
    Ok(())
}
