//! Benchmark: does SDO traffic disturb the cycle? Runs seed 000's six simulated drives at
//! 1 ms twice in one process — without SDO load, then with another thread reading an SDO
//! 100 times per second — and prints task duration, round trip and frame counters side by
//! side, plus the SDO answer latency. Figures, not assertions (a shared 2-core VM).
//!
//!     cargo run --release -p ecat --example sdo_load [SECONDS] [LINK]
//!
//! LINK defaults to `sim:servo6` (in-process); give e.g. `raw:veth0` with `ecat sim -n servo6`
//! on the other end to measure over a real socket.

use ecat::cycle::{self, CycleOptions, LoopCounters};
use ecat::perf::{Metric, Perf, Summary};
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_wire::al::AlState;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Row {
    name: &'static str,
    task: Summary,
    rtt: Summary,
    counters: LoopCounters,
    lost: u64,
    late: u64,
    sdo_done: u64,
    sdo_latency_us: Vec<f64>,
}

fn measure(link: &str, seconds: u64, with_sdo: bool) -> Row {
    let mut md = MainDevice::open(link).expect("open link");
    md.scan().expect("scan");
    let mut rt: Runtime = md.activate(Activation::default()).expect("activate");
    rt.run_until_state(AlState::Op, 1_000_000, 10_000)
        .expect("OP");
    let stop = Arc::new(AtomicBool::new(false));
    let client = rt.sdo_client();
    let n_sub = rt.supervisor().states().count();
    let worker = with_sdo.then(|| {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut lat = Vec::new();
            let mut k = 0usize;
            let mut next = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                next += Duration::from_millis(10);
                let t = Instant::now();
                if let Ok(p) = client.upload(k % n_sub, 0x1018, 1) {
                    if let Some(Ok(_)) = p.wait(Duration::from_secs(2)) {
                        lat.push(t.elapsed().as_secs_f64() * 1e6);
                    }
                }
                k += 1;
                if let Some(d) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(d);
                }
            }
            lat
        })
    });
    let opts = CycleOptions {
        period_ns: 1_000_000,
        duration_ns: seconds * 1_000_000_000,
        report_interval_ns: u64::MAX / 4,
        ..Default::default()
    };
    let mut perf = Perf::new();
    let (c0, _, _) = rt.counters();
    let counters = cycle::run(
        &mut rt,
        &opts,
        &AtomicBool::new(false),
        &mut perf,
        &mut |_, _| {},
        &mut |_, _, _| {},
    )
    .expect("cycle");
    stop.store(true, Ordering::Relaxed);
    let mut lat = worker
        .map(|w| w.join().unwrap_or_default())
        .unwrap_or_default();
    lat.sort_by(|a, b| a.total_cmp(b));
    let (c1, _, _) = rt.counters();
    let _ = rt.run_until_state(AlState::Init, 1_000_000, 2_000);
    Row {
        name: if with_sdo {
            "with 100 SDO reads/s"
        } else {
            "without SDO load"
        },
        task: perf.total(Metric::TaskDuration),
        rtt: perf.total(Metric::RoundTrip),
        counters,
        lost: c1.frames_lost - c0.frames_lost,
        late: c1.frames_late - c0.frames_late,
        sdo_done: lat.len() as u64,
        sdo_latency_us: lat,
    }
}

fn pct(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let link = args.get(2).cloned().unwrap_or_else(|| "sim:servo6".into());
    println!("SDO load benchmark on {link}, 1 ms cycle, {seconds} s per row\n");
    let rows = [
        measure(&link, seconds, false),
        measure(&link, seconds, true),
    ];
    println!(
        "{:<22} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>6} {:>6} {:>9} {:>12} {:>12}",
        "",
        "task p50",
        "task p99",
        "task max",
        "rtt p50",
        "rtt p99",
        "cycles",
        "lost",
        "late",
        "SDOs",
        "SDO lat p50",
        "SDO lat p99"
    );
    for r in &rows {
        println!(
            "{:<22} {:>8.1}us {:>8.1}us {:>8.1}us {:>8.1}us {:>8.1}us {:>7} {:>6} {:>6} {:>9} {:>10.0}us {:>10.0}us",
            r.name,
            r.task.p50 as f64 / 1e3,
            r.task.p99 as f64 / 1e3,
            r.task.max as f64 / 1e3,
            r.rtt.p50 as f64 / 1e3,
            r.rtt.p99 as f64 / 1e3,
            r.counters.cycles,
            r.lost,
            r.late,
            r.sdo_done,
            pct(&r.sdo_latency_us, 0.5),
            pct(&r.sdo_latency_us, 0.99)
        );
    }
    let ratio = rows[1].task.p50 as f64 / rows[0].task.p50.max(1) as f64;
    println!("\ntask duration median with / without SDO load: {ratio:.2}");
}
