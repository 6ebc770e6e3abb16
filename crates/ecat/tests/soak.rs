//! The soak on virtual time (see `campaign/soak.rs`): CI runs one simulated hour at 1 kHz on
//! `io` and on `servo6` with 1 % frame loss and an unplug/replug every 10 simulated minutes
//! (a debug build two simulated minutes with an unplug every 30 s). The 12 hours:
//! `cargo run --release -p ecat --example soak -- 12`. `ECAT_SOAK_HOURS` overrides the hours.

mod common;
#[path = "campaign/soak.rs"]
mod soak;

use common::counting::{self, Counting};
use soak::Soak;

#[global_allocator]
static GLOBAL: Counting = Counting;

fn settings(preset: &'static str) -> Soak {
    let hours = std::env::var("ECAT_SOAK_HOURS")
        .ok()
        .and_then(|h| h.parse().ok());
    match hours {
        Some(h) => Soak::new(preset, h),
        None if cfg!(debug_assertions) => Soak {
            replug_every: 30_000_000_000,
            ..Soak::new(preset, 2.0 / 60.0)
        },
        None => Soak::new(preset, 1.0),
    }
}

fn soak(preset: &'static str) {
    let s = settings(preset);
    let r = soak::run(&s, counting::live_bytes).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{preset}: {} cycles ({:.2} simulated h) in {:.1} s real: {} replugs, slowest back in OP {} cycles, {} SubDevice losses seen, domain complete in {:.2} % of cycles, live heap growth {} bytes over {} samples",
        r.cycles,
        r.cycles as f64 / 3.6e6,
        r.real_s,
        r.replugs,
        r.slowest_back,
        r.lost_events,
        100.0 * r.complete_cycles as f64 / r.cycles as f64,
        r.heap_growth(),
        r.heap.len()
    );
    assert_eq!(r.cycles, s.duration_ns / 1_000_000);
    assert!(r.replugs >= 2, "{} replugs", r.replugs);
    assert_eq!(r.heap.len() as u64, r.replugs, "every replug came back");
    assert!(r.lost_events >= r.replugs, "each unplug was noticed");
    // While a SubDevice is unplugged the domain cannot be complete; of the other cycles,
    // 1 % frame loss and the returns to OP may cost at most 5 %.
    let plugged = r.cycles - r.replugs * (s.replug_after / 1_000_000);
    assert!(
        r.complete_cycles as f64 > 0.95 * plugged as f64,
        "domain complete in only {} of the {} cycles with every SubDevice plugged in",
        r.complete_cycles,
        plugged
    );
}

#[test]
fn io_soak() {
    soak("io");
}

#[test]
fn servo6_soak() {
    soak("servo6");
}
