//! The long soak on virtual time (issue 15; checks in `tests/campaign/soak.rs`): simulated
//! hours at 1 kHz on `io` and `servo6` with 1 % frame loss and an unplug/replug every 10
//! simulated minutes, with real time and figures printed per network.
//!
//! ```text
//! cargo run --release -p ecat --example soak -- [HOURS (12)] [PRESET ...]
//! ```
//! Exits 1 if a check failed (the message names the network and the simulated time).

#[path = "../tests/common/counting.rs"]
mod counting;
#[path = "../tests/campaign/soak.rs"]
mod soak;

use counting::Counting;

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let hours: f64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(12.0);
    let named: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    let presets: Vec<&'static str> = ["io", "servo6"]
        .into_iter()
        .filter(|p| named.is_empty() || named.contains(p))
        .collect();
    let mut failed = false;
    for p in presets {
        match soak::run(&soak::Soak::new(p, hours), counting::live_bytes) {
            Ok(r) => println!(
                "{p}: {hours} simulated h ({} cycles) in {:.1} s real ({:.0}x real time): 0 stops, {} replugs all back in OP (slowest {} cycles), domain complete {:.2} % of cycles, live heap {} → {} bytes (growth {} over {} samples)",
                r.cycles,
                r.real_s,
                r.cycles as f64 / 1e3 / r.real_s,
                r.replugs,
                r.slowest_back,
                100.0 * r.complete_cycles as f64 / r.cycles as f64,
                r.heap.first().copied().unwrap_or(0),
                r.heap.last().copied().unwrap_or(0),
                r.heap_growth(),
                r.heap.len()
            ),
            Err(e) => {
                println!("FAILED {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
