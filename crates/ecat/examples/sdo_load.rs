//! Benchmark: how fast is the mailbox in OP, and does its traffic disturb the cycle? Runs seed
//! 000's six simulated drives at 1 ms, in alternating rows over several rounds in one process:
//! without mailbox traffic, with another thread reading an SDO 100 times per second, and with
//! another thread writing FoE files back to back. Prints per row the task duration, round
//! trip and frame counters, the expedited SDO latency (in cycles — sends between submission
//! and completion — and in ms) and the FoE write rate, then the medians and the ratios of the
//! task duration with / without traffic. Figures, not assertions (a shared 2-core VM).
//!
//!     cargo run --release -p ecat --example sdo_load [SECONDS] [LINK] [ROUNDS]
//!
//! LINK defaults to `sim:servo6` (in-process); give e.g. `raw:veth0` with `ecat sim -n servo6`
//! on the other end to measure over a real socket.

use ecat::cycle::{self, CycleOptions, LoopCounters};
use ecat::mailbox::foe::FoeOp;
use ecat::perf::{Metric, Perf, Summary};
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_wire::al::AlState;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Load {
    Idle,
    Sdo,
    Foe,
}

impl Load {
    fn name(self) -> &'static str {
        match self {
            Load::Idle => "no mailbox traffic",
            Load::Sdo => "100 SDO reads/s",
            Load::Foe => "FoE writes",
        }
    }
}

struct Row {
    load: Load,
    task: Summary,
    /// The acyclic part of the task (supervisor, mailbox service, acyclic frame).
    acyclic: Summary,
    /// The receive part of the task (collecting every returned frame).
    receive: Summary,
    rtt: Summary,
    counters: LoopCounters,
    lost: u64,
    late: u64,
    /// Per completed expedited upload: (cycles, ms).
    sdo: Vec<(f64, f64)>,
    foe_kib_s: f64,
}

/// What the worker thread measured.
#[derive(Default)]
struct Work {
    sdo: Vec<(f64, f64)>,
    foe_bytes: u64,
    foe_secs: f64,
}

fn worker(
    load: Load,
    rt: &Runtime,
    sends: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
) -> Option<std::thread::JoinHandle<Work>> {
    let client = rt.mailbox_client();
    let n_sub = rt.supervisor().states().count();
    let foe_target = (0..n_sub).find(|&p| {
        rt.supervisor()
            .states()
            .nth(p)
            .is_some_and(|s| s.info.mailbox.protocols & 0x08 != 0)
    });
    Some(std::thread::spawn(move || {
        let mut w = Work::default();
        match load {
            Load::Idle => {}
            Load::Sdo => {
                let mut k = 0usize;
                let mut next = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    next += Duration::from_millis(10);
                    let (t, s0) = (Instant::now(), sends.load(Ordering::Relaxed));
                    if let Ok(p) = client.upload(k % n_sub, 0x1018, 1) {
                        if let Some(Ok(_)) = p.wait(Duration::from_secs(2)) {
                            let done = p.completed_cycle().unwrap_or(0);
                            let cycles = done.saturating_sub(s0);
                            w.sdo.push((cycles as f64, t.elapsed().as_secs_f64() * 1e3));
                        }
                    }
                    k += 1;
                    if let Some(d) = next.checked_duration_since(Instant::now()) {
                        std::thread::sleep(d);
                    }
                }
            }
            Load::Foe => {
                let Some(p) = foe_target else { return w };
                let data: Vec<u8> = (0..16 * 1024u32).map(|i| (i * 7) as u8).collect();
                let t = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    let op = FoeOp::Write {
                        name: "bench.bin".into(),
                        password: 0,
                        data: data.clone(),
                    };
                    match client
                        .submit(p, op)
                        .map(|x| x.wait(Duration::from_secs(30)))
                    {
                        Ok(Some(Ok(_))) => w.foe_bytes += data.len() as u64,
                        _ => break,
                    }
                }
                w.foe_secs = t.elapsed().as_secs_f64();
            }
        }
        w
    }))
}

fn measure(link: &str, seconds: u64, load: Load) -> Row {
    let mut md = MainDevice::open(link).expect("open link");
    md.scan().expect("scan");
    let mut rt: Runtime = md.activate(Activation::default()).expect("activate");
    rt.run_until_state(AlState::Op, 1_000_000, 10_000)
        .expect("OP");
    let stop = Arc::new(AtomicBool::new(false));
    let sends = Arc::new(AtomicU64::new(0));
    let handle = worker(load, &rt, sends.clone(), stop.clone());
    let opts = CycleOptions {
        period_ns: 1_000_000,
        duration_ns: seconds * 1_000_000_000,
        report_interval_ns: u64::MAX / 4,
        ..Default::default()
    };
    let mut perf = Perf::new();
    let (c0, _, _) = rt.counters();
    // The app runs just before each send: the sends done once it has gone out.
    let mut app = |rt: &mut Runtime, _| sends.store(rt.cycle_count() + 1, Ordering::Relaxed);
    let counters = cycle::run(
        &mut rt,
        &opts,
        &AtomicBool::new(false),
        &mut perf,
        &mut app,
        &mut |_, _, _| {},
    )
    .expect("cycle");
    stop.store(true, Ordering::Relaxed);
    // Keep cycling while the worker finishes its last request.
    let w = handle.map(|h| {
        while !h.is_finished() {
            let _ = rt.tx_rx(1_000_000);
            std::thread::sleep(Duration::from_millis(1));
        }
        h.join().unwrap_or_default()
    });
    let w = w.unwrap_or_default();
    let (c1, _, _) = rt.counters();
    let _ = rt.run_until_state(AlState::Init, 1_000_000, 2_000);
    Row {
        load,
        task: perf.total(Metric::TaskDuration),
        acyclic: perf.total(Metric::JobAcyclic),
        receive: perf.total(Metric::JobReceive),
        rtt: perf.total(Metric::RoundTrip),
        counters,
        lost: c1.frames_lost - c0.frames_lost,
        late: c1.frames_late - c0.frames_late,
        sdo: w.sdo,
        foe_kib_s: if w.foe_secs > 0.0 {
            w.foe_bytes as f64 / 1024.0 / w.foe_secs
        } else {
            0.0
        },
    }
}

fn pct(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn print_row(r: &Row) {
    let mut cyc: Vec<f64> = r.sdo.iter().map(|s| s.0).collect();
    let mut ms: Vec<f64> = r.sdo.iter().map(|s| s.1).collect();
    let sdo = if r.load == Load::Sdo {
        format!(
            "{:>5} {:>6.1} {:>6.1} {:>7.2} {:>7.2}",
            cyc.len(),
            pct(&mut cyc, 0.5),
            pct(&mut cyc, 0.99),
            pct(&mut ms, 0.5),
            pct(&mut ms, 0.99)
        )
    } else {
        format!("{:>5} {:>6} {:>6} {:>7} {:>7}", "-", "-", "-", "-", "-")
    };
    let foe = if r.load == Load::Foe {
        format!("{:>9.1}", r.foe_kib_s)
    } else {
        format!("{:>9}", "-")
    };
    println!(
        "{:<20} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>6} {:>4} {:>4} | {sdo} | {foe}",
        r.load.name(),
        r.task.p50 as f64 / 1e3,
        r.task.p99 as f64 / 1e3,
        r.task.max as f64 / 1e3,
        r.receive.p50 as f64 / 1e3,
        r.acyclic.p50 as f64 / 1e3,
        r.rtt.p50 as f64 / 1e3,
        r.counters.cycles,
        r.lost,
        r.late,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let link = args.get(2).cloned().unwrap_or_else(|| "sim:servo6".into());
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(3);
    println!(
        "mailbox load benchmark on {link}, 1 ms cycle, {seconds} s per row, {rounds} rounds (rows alternate)\n"
    );
    println!(
        "{:<20} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6} {:>4} {:>4} | {:>5} {:>6} {:>6} {:>7} {:>7} | {:>9}",
        "[task/rtt in us]",
        "task50",
        "task99",
        "taskmax",
        "recv50",
        "acyc50",
        "rtt50",
        "cycles",
        "lost",
        "late",
        "SDOs",
        "cyc50",
        "cyc99",
        "ms50",
        "ms99",
        "FoE KiB/s"
    );
    let loads = [Load::Idle, Load::Sdo, Load::Foe];
    let mut rows: Vec<Row> = Vec::new();
    for _ in 0..rounds {
        for &l in &loads {
            let r = measure(&link, seconds, l);
            print_row(&r);
            rows.push(r);
        }
    }
    let median = |l: Load, f: &dyn Fn(&Row) -> f64| {
        let mut v: Vec<f64> = rows.iter().filter(|r| r.load == l).map(f).collect();
        pct(&mut v, 0.5)
    };
    let task = |l| median(l, &|r: &Row| r.task.p50 as f64 / 1e3);
    let mut cyc: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.sdo.iter().map(|s| s.0))
        .collect();
    let mut ms: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.sdo.iter().map(|s| s.1))
        .collect();
    println!("\nmedians over {rounds} rounds:");
    println!(
        "  expedited SDO upload in OP: p50 {:.1} cycles ({:.2} ms), p99 {:.1} cycles ({:.2} ms), {} uploads (target p50 <= 2 cycles)",
        pct(&mut cyc, 0.5),
        pct(&mut ms, 0.5),
        pct(&mut cyc, 0.99),
        pct(&mut ms, 0.99),
        cyc.len()
    );
    println!(
        "  FoE write rate in OP: {:.1} KiB/s",
        median(Load::Foe, &|r: &Row| r.foe_kib_s)
    );
    println!(
        "  task duration p50 [us]: {:.1} without traffic, {:.1} with SDO reads, {:.1} with FoE writes",
        task(Load::Idle),
        task(Load::Sdo),
        task(Load::Foe)
    );
    let acyc = |l| median(l, &|r: &Row| r.acyclic.p50 as f64 / 1e3);
    let recv = |l| median(l, &|r: &Row| r.receive.p50 as f64 / 1e3);
    println!(
        "  of which receive p50 [us]: {:.1}, {:.1}, {:.1}; acyclic part p50 [us] (supervisor, mailbox service, acyclic frame): {:.1}, {:.1}, {:.1}",
        recv(Load::Idle),
        recv(Load::Sdo),
        recv(Load::Foe),
        acyc(Load::Idle),
        acyc(Load::Sdo),
        acyc(Load::Foe)
    );
    // What the mailbox itself adds to the task: its receive and acyclic parts, the rest of the
    // task as without traffic (on a shared VM the other parts move with the machine's load).
    let own = |l| {
        (task(Load::Idle) + recv(l) - recv(Load::Idle) + acyc(l) - acyc(Load::Idle))
            / task(Load::Idle)
    };
    println!(
        "  task duration ratio from the mailbox's own work (receive + acyclic parts): SDO {:.2}, FoE {:.2}",
        own(Load::Sdo),
        own(Load::Foe)
    );
    println!(
        "  task duration ratio with / without mailbox traffic, whole task: SDO {:.2}, FoE {:.2} (target <= 1.1)",
        task(Load::Sdo) / task(Load::Idle),
        task(Load::Foe) / task(Load::Idle)
    );
}
