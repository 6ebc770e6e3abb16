//! Inputs per second of the stateful fuzz targets on stable (no coverage instrumentation, so
//! higher than under `cargo fuzz`, but the ratios between builds hold): every saved corpus
//! input of `sim_frames` and `receive_path` in turn for SECONDS each (default 5), and what
//! one preset network costs to build.
//!
//! ```text
//! cargo run --release -p ecat --example fuzz_rate -- [SECONDS]
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// Inputs per second of `f` over `inputs`, cycling for `secs`.
fn rate(inputs: &[Vec<u8>], secs: f64, f: &dyn Fn(&[u8])) -> f64 {
    let t0 = Instant::now();
    let limit = Duration::from_secs_f64(secs);
    let mut n = 0u64;
    while t0.elapsed() < limit {
        for i in inputs {
            f(i);
            n += 1;
        }
    }
    n as f64 / t0.elapsed().as_secs_f64()
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    for preset in ["io", "servo6", "dc8"] {
        let t0 = Instant::now();
        let mut n = 0u32;
        while t0.elapsed() < Duration::from_millis(500) {
            std::hint::black_box(ecat_sim::Network::preset(preset).unwrap());
            n += 1;
        }
        let build = t0.elapsed().as_secs_f64() * 1e6 / n as f64;
        ecat_sim::fuzzing::preset_copy(preset);
        let t0 = Instant::now();
        let mut n = 0u32;
        while t0.elapsed() < Duration::from_millis(500) {
            std::hint::black_box(ecat_sim::fuzzing::preset_copy(preset));
            n += 1;
        }
        let copy = t0.elapsed().as_secs_f64() * 1e6 / n as f64;
        println!(
            "preset {preset:7}: built {build:8.1} µs, copied {copy:7.1} µs ({:.0}x)",
            build / copy
        );
    }
    let sim = corpus("sim_frames");
    let r = rate(&sim, secs, &|d| ecat_sim::fuzzing::frames(d));
    println!(
        "sim_frames   : {r:9.0} inputs/s ({} corpus inputs)",
        sim.len()
    );
    let rx = corpus("receive_path");
    ecat::fuzzing::receive_path(&[]);
    let r = rate(&rx, secs, &|d| ecat::fuzzing::receive_path(d));
    println!(
        "receive_path : {r:9.0} inputs/s ({} corpus inputs)",
        rx.len()
    );
}
