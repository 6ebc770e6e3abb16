//! How long the frames of one cycle take through the simulator on one thread (deferred PDI
//! work, as `ecat sim` runs) and on two (`ecat sim --threads 2`, `ecat_sim::pipeline`),
//! in-process: the cyclic frames of a real activation of `sim:NET` in OP with distributed
//! clocks (as `ecat run` sets them up), replayed at a 1 ms pace into copies of the network,
//! the two ways alternating round by round.
//!
//!     cargo run --release -p ecat --example pipeline_rt [NET] [ROUNDS] [CYCLES] [SPLIT]
//!
//! `SPLIT`: the bus position where the second thread starts (default: half-way).
//!
//! Per way: the median and 90th percentile over the rounds of each round's median wall time
//! from handing over the cycle's first frame to having its last one back, and the CPU the
//! simulator's threads used per cycle (the first thread's own, and for two threads the
//! worker's, from /proc). Wall time on a shared machine includes waiting for a CPU; compare
//! the ways by their ratio within one run.

#[path = "common/cycle.rs"]
mod cycle;

use ecat_sim::pipeline::{Pipeline, SendFn};
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

/// CPU time of the calling thread (ns).
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time (ns) of this process's thread named `name`, from /proc.
fn thread_cpu_ns(name: &str) -> u64 {
    let tick_ns = 1e9 / 100.0;
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    for t in dir.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.trim() != name {
            continue;
        }
        let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
        let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<&str> = after.split_whitespace().collect();
        // Fields after the name: state is [0]; utime and stime are fields 14 and 15 of the
        // whole line, [11] and [12] here.
        let ticks: u64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
            + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
        return (ticks as f64 * tick_ns) as u64;
    }
    0
}

/// Sleep to the next 1 ms boundary, as a cycle does.
fn pace(next: Instant) {
    std::thread::sleep(next.saturating_duration_since(Instant::now()));
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let net_name = args.get(1).cloned().unwrap_or_else(|| "io1000".into());
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let cycles: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(300);
    let split: Option<usize> = args.get(4).and_then(|s| s.parse().ok());
    let (cycle_frames, base, epoch) = cycle::record_cycle(&net_name);
    println!(
        "ecat pipeline_rt: {net_name}, {} frames per cycle, {rounds} rounds of {cycles} cycles at a 1 ms pace",
        cycle_frames.len()
    );

    let mut one = base.clone();
    one.set_deferred_pdi(true);
    let (tx, back) = channel::<Vec<u8>>();
    let send: SendFn = Box::new(move |f: &[u8]| {
        tx.send(f.to_vec())
            .map_err(|_| std::io::Error::other("gone"))
    });
    let mut two = match Pipeline::start(base, split, send) {
        Ok(p) => p,
        Err(e) => panic!("{net_name} cannot run pipelined: {}", e.reason),
    };
    let (mut rt1, mut rt2, mut cpu1, mut cpu2, mut cpu2w) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut buf = vec![0u8; 2048];
    for _ in 0..rounds {
        // One thread.
        let mut walls = Vec::new();
        let c0 = cpu_ns();
        let mut next = Instant::now();
        for _ in 0..cycles {
            next += Duration::from_millis(1);
            let now = epoch.elapsed().as_nanos() as u64;
            let t = Instant::now();
            for f in &cycle_frames {
                buf[..f.len()].copy_from_slice(f);
                one.process(&mut buf[..f.len()], now);
            }
            walls.push(t.elapsed().as_secs_f64() * 1e6);
            one.settle();
            pace(next);
        }
        cpu1.push((cpu_ns() - c0) as f64 / cycles as f64 / 1e3);
        rt1.push(median(&mut walls));
        // Two threads.
        let mut walls = Vec::new();
        let (c0, w0) = (cpu_ns(), thread_cpu_ns("ecat-sim-back"));
        let mut next = Instant::now();
        for _ in 0..cycles {
            next += Duration::from_millis(1);
            let now = epoch.elapsed().as_nanos() as u64;
            let t = Instant::now();
            for f in &cycle_frames {
                two.process(f, now);
            }
            for _ in &cycle_frames {
                back.recv_timeout(Duration::from_secs(10))
                    .expect("frame back");
            }
            walls.push(t.elapsed().as_secs_f64() * 1e6);
            two.settle();
            pace(next);
        }
        cpu2.push((cpu_ns() - c0) as f64 / cycles as f64 / 1e3);
        cpu2w.push((thread_cpu_ns("ecat-sim-back") - w0) as f64 / cycles as f64 / 1e3);
        rt2.push(median(&mut walls));
    }
    let (m1, m2) = (median(&mut rt1.clone()), median(&mut rt2.clone()));
    println!("  way            frames back µs (median, p90 of rounds)   CPU µs/cycle: first thread, worker");
    println!(
        "  one thread     {m1:>8.0} {:>8.0}                          {:>8.0}",
        pct(&mut rt1, 0.9),
        median(&mut cpu1)
    );
    println!(
        "  two threads    {m2:>8.0} {:>8.0}                          {:>8.0} {:>8.0}",
        pct(&mut rt2, 0.9),
        median(&mut cpu2),
        median(&mut cpu2w)
    );
    println!("  ratio (one / two): frames back {:.2}x", m1 / m2);
    let (_, report) = two.stop().expect("stop");
    assert_eq!(report.send_errors, 0);
}
