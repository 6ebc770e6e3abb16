//! `ecat sim -i IFACE -n NETWORK`: answer EtherCAT frames on a network interface with a
//! simulated network, until SIGINT or SIGTERM.
//!
//! The loop is the simplest possible wire: receive a frame on the raw socket (our own
//! transmitted answers are never received back, see `ecat::link::raw`), let the network
//! process it in place, send it back. A frame the network drops (not EtherCAT, malformed) is
//! not answered, as a real ring would not answer it.

use super::CmdResult;
use ecat::link::raw::RawSocket;
use ecat::link::Link;
use ecat_sim::Network;
use std::time::{Duration, Instant};

/// Options of `ecat sim`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Network interface to answer on (e.g. one end of a veth pair)
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    interface: String,
    /// Network: a preset name (io) or a network TOML file
    #[arg(short = 'n', long = "network", default_value = "io")]
    network: String,
}

/// Run `ecat sim`.
pub fn run(a: Args) -> CmdResult {
    let iface = a.interface.strip_prefix("raw:").unwrap_or(&a.interface);
    let mut net = Network::open(&a.network)?;
    let mut link = RawSocket::open(iface)?;
    crate::signals::install();
    let summary = net.summary();
    println!(
        "ecat sim: answering on {iface} with network '{}' ({} SubDevices)",
        a.network,
        summary.iter().filter(|s| !s.passive).count()
    );
    for s in &summary {
        match s.bus_position {
            Some(p) => println!(
                "  {p:<3} {:<8} vendor 0x{:08x} product 0x{:08x} revision 0x{:08x} alias {}  {}",
                s.order, s.vendor, s.product, s.revision, s.alias, s.name
            ),
            None => println!("  -   {:<8} passive terminal (no ESC)  {}", s.order, s.name),
        }
    }
    use std::io::Write;
    std::io::stdout().flush()?;
    let epoch = Instant::now();
    let mut buf = vec![0u8; 2048];
    let (mut answered, mut dropped) = (0u64, 0u64);
    while !crate::signals::stopped() {
        let deadline = Instant::now() + Duration::from_millis(100);
        let Some(n) = link.recv(&mut buf, Some(deadline))? else {
            continue;
        };
        let now = epoch.elapsed().as_nanos() as u64;
        if net.process_frame(&mut buf[..n], now) {
            link.send(&buf[..n])?;
            answered += 1;
        } else {
            dropped += 1;
        }
    }
    println!("ecat sim: stopped; {answered} frames answered, {dropped} dropped");
    Ok(())
}
