//! Randomized fault campaigns on virtual time, many seeds (the test `fault_campaign` runs a
//! few hundred in CI). Schedules and invariants: `tests/campaign/mod.rs`.
//!
//! ```text
//! cargo run --release -p ecat --example fault_campaign -- --seeds 5000 [--first 0]
//!     [--net io|servo6|dc8] [--planted-bug] [--lenient-dc]
//! cargo run --release -p ecat --example fault_campaign -- --seed 1234   # one seed
//! ```
//! Prints one line per failing seed with its reproduction command and a summary; exits 1 if
//! any seed failed.

#[path = "../tests/campaign/mod.rs"]
mod campaign;

use campaign::Campaign;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut c = Campaign::default();
    let (mut first, mut count) = (0u64, 1000u64);
    let mut i = 0;
    let num = |i: usize| -> u64 {
        args.get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                eprintln!("fault_campaign: '{}' needs a number", args[i]);
                std::process::exit(2)
            })
    };
    while i < args.len() {
        match args[i].as_str() {
            "--seeds" => count = num(i),
            "--first" => first = num(i),
            "--seed" => {
                first = num(i);
                count = 1;
            }
            "--net" => {
                c.preset = match args.get(i + 1).map(String::as_str) {
                    Some("io") => Some("io"),
                    Some("servo6") => Some("servo6"),
                    Some("dc8") => Some("dc8"),
                    other => {
                        eprintln!("fault_campaign: --net {other:?}: use io, servo6 or dc8");
                        std::process::exit(2)
                    }
                }
            }
            "--planted-bug" => {
                c.planted_bug = true;
                i += 1;
                continue;
            }
            "--lenient-dc" => {
                c.lenient_dc = true;
                i += 1;
                continue;
            }
            a => {
                eprintln!("fault_campaign: unknown argument '{a}' (see the example's doc comment)");
                std::process::exit(2)
            }
        }
        i += 2;
    }
    let t0 = Instant::now();
    let (mut failed, mut cycles, mut faults, mut checks, mut worst, mut dc_worst) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u32);
    for seed in first..first + count {
        match c.run(seed) {
            Ok(o) => {
                cycles += o.cycles;
                faults += o.faults_injected;
                checks += o.output_checks;
                worst = worst.max(o.recovery_cycles);
                dc_worst = dc_worst.max(o.dc_worst_ns);
                if count == 1 {
                    println!("seed {seed}: {o:?}");
                }
            }
            Err(e) => {
                failed += 1;
                println!("FAIL {e}");
            }
        }
    }
    println!(
        "{count} seeds ({first}..{}), {failed} failed, {:.1} s: {cycles} cycles, {faults} faults injected, {checks} output checks, slowest recovery {worst} cycles, DC sync monitor after recovery ≤ {dc_worst} ns",
        first + count,
        t0.elapsed().as_secs_f64()
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
