//! What the simulator does per cycle on a large network, split into the part a MainDevice
//! waits for (the cycle's frames through the line) and the part that runs while the line is
//! idle (the firmware reactions deferred to `Network::settle`), as `ecat sim` runs: the
//! cyclic frames of a real activation of `sim:NET` in OP with distributed clocks, replayed
//! into a copy of the network back to back (no pacing: the figures are the work itself).
//!
//!     cargo run --release -p ecat --example sim_instructions [NET] [CYCLES]
//!
//! Prints the median wall time per cycle of both parts. Wall time on a shared machine
//! varies by tens of percent from run to run; for a comparison of two builds count
//! instructions instead, which on virtual time (`VIRT=1`: cycle k at k ms, so that every
//! run does the same work) are the same from run to run to within a percent:
//!
//!     VIRT=1 valgrind --tool=callgrind --collect-atstart=no \
//!         --toggle-collect=sim_instructions::frames target/release/examples/sim_instructions io1000 120
//!
//! (and `--toggle-collect=sim_instructions::settle` for the idle part), divided by
//! `CYCLES`: [`WARM_UP`] more cycles run first, uncounted (copy-on-write state shared with
//! the recorded network is copied there).
//!
//! `NOP=I,J,...` turns the cycle's datagrams I, J, ... (counted from 0 across the cycle's
//! frames, in order) into NOPs, which every ESC passes untouched: the difference to a run
//! without it is what those datagrams cost.

#[path = "common/cycle.rs"]
mod cycle;

use ecat_sim::Network;
use std::time::Instant;

/// Cycles run before the counted ones.
const WARM_UP: u64 = 20;

/// The cycle's frames through the line (what the MainDevice waits for).
#[inline(never)]
fn frames(net: &mut Network, cycle_frames: &[Vec<u8>], buf: &mut [u8], now: u64) {
    for f in cycle_frames {
        buf[..f.len()].copy_from_slice(f);
        net.process(&mut buf[..f.len()], now);
    }
}

/// The deferred firmware reactions (what runs while the line is idle).
#[inline(never)]
fn settle(net: &mut Network) {
    net.settle();
}

/// Turn the datagrams numbered in `nops` (across `frames`, in order) into NOPs (command 0).
fn make_nops(frames: &mut [Vec<u8>], nops: &[usize]) {
    use ecat_wire::datagram::OVERHEAD;
    use ecat_wire::frame::{ECAT_HEADER_LEN, ETH_HEADER_LEN};
    let mut k = 0;
    for f in frames.iter_mut() {
        let mut at = ETH_HEADER_LEN + ECAT_HEADER_LEN;
        while let Some(h) = f.get(at..at + 8) {
            let lf = u16::from_le_bytes([h[6], h[7]]);
            if nops.contains(&k) {
                f[at] = 0;
            }
            k += 1;
            at += OVERHEAD + (lf & 0x07FF) as usize;
            if lf & 0x8000 == 0 {
                break;
            }
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let net_name = args.get(1).cloned().unwrap_or_else(|| "io1000".into());
    let cycles: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let virt = std::env::var_os("VIRT").is_some();
    let (mut cycle_frames, base, epoch) = cycle::record_cycle(&net_name);
    if let Ok(list) = std::env::var("NOP") {
        let nops: Vec<usize> = list
            .split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect();
        make_nops(&mut cycle_frames, &nops);
    }
    let mut net = base.clone();
    net.set_deferred_pdi(true);
    let mut buf = vec![0u8; 2048];
    let (mut walls, mut idles) = (Vec::new(), Vec::new());
    let t0 = epoch.elapsed().as_nanos() as u64;
    for c in 0..cycles + WARM_UP {
        let now = if virt {
            t0 + c * 1_000_000
        } else {
            epoch.elapsed().as_nanos() as u64
        };
        if c < WARM_UP {
            for f in &cycle_frames {
                buf[..f.len()].copy_from_slice(f);
                net.process(&mut buf[..f.len()], now);
            }
            net.settle();
            continue;
        }
        let t = Instant::now();
        frames(&mut net, &cycle_frames, &mut buf, now);
        walls.push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        settle(&mut net);
        idles.push(t.elapsed().as_secs_f64() * 1e6);
    }
    println!(
        "ecat sim_instructions: {net_name}, {} frames per cycle, {cycles} cycles: frames {:.0} µs, settle {:.0} µs per cycle (medians)",
        cycle_frames.len(),
        median(&mut walls),
        median(&mut idles)
    );
}
