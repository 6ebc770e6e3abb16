//! Randomized fault campaigns on virtual time (see `campaign/mod.rs` for the schedules and
//! invariants). CI runs `ECAT_CAMPAIGN_SEEDS` seeds (default 150 optimised, 20 in a debug
//! build); thousands run with
//! `cargo run --release -p ecat --example fault_campaign -- --seeds 5000`.

mod campaign;

use campaign::Campaign;

/// Seeds that fail for a known, not yet fixed reason; they are run and reported, not failed.
/// None now: seeds 99 and 184 (a SubDevice unplugged, one from behind it moved up and
/// power-cycled, and the lost one's probe adopting it) pass since the probe checks the serial
/// number and hands a foreign device's address back.
const KNOWN_FAILURES: &[u64] = &[];

fn seeds() -> u64 {
    let default = if cfg!(debug_assertions) { 20 } else { 150 };
    std::env::var("ECAT_CAMPAIGN_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_fault_schedules_keep_every_invariant() {
    let c = Campaign::default();
    let n = seeds();
    let mut failures = Vec::new();
    let (mut worst_recovery, mut checks, mut faults) = (0, 0, 0);
    for seed in 0..n {
        match c.run(seed) {
            Ok(o) => {
                worst_recovery = worst_recovery.max(o.recovery_cycles);
                checks += o.output_checks;
                faults += o.faults_injected;
                if KNOWN_FAILURES.contains(&seed) {
                    println!("known failure seed {seed} passes now: take it off KNOWN_FAILURES");
                }
            }
            Err(e) if KNOWN_FAILURES.contains(&seed) => println!("known failure: {e}"),
            Err(e) => failures.push(e),
        }
    }
    println!(
        "{n} seeds: {} failed; {faults} faults injected, {checks} output checks, slowest recovery {worst_recovery} cycles",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_campaign_catches_a_planted_bug() {
    // No probing of lost SubDevices: one that is unplugged never comes back.
    let c = Campaign {
        planted_bug: true,
        ..Default::default()
    };
    let caught: Vec<String> = (0..30).filter_map(|s| c.run(s).err()).collect();
    println!(
        "planted bug: {} of 30 seeds failed; first:\n{}",
        caught.len(),
        caught.first().map_or("", |s| s)
    );
    assert!(
        !caught.is_empty(),
        "the planted bug went unnoticed in 30 seeds"
    );
    assert!(
        caught
            .iter()
            .any(|e| e.contains("not back in OP") && e.contains("--planted-bug")),
        "{caught:?}"
    );
}
