//! How ecat and its simulator scale with the number of SubDevices: one table for generated
//! lines of 10, 100 and 1,000 SubDevices (`sim:ioN`: an EK1100, then EL2008, EL1018, EL4132
//! and EL3102 in turn), in-process.
//!
//!     cargo run --release -p ecat --example scale [N ...]
//!
//! Columns:
//! * `scan ms`: [`MainDevice::scan`] (addresses, SII, mailbox and DC capabilities);
//! * `to OP ms`: from opening the link to every SubDevice in OP: scan, configuration
//!   discovery, DC setup with the static drift compensation, activation and the state
//!   walk at a 1 ms cycle (real time: the walk sleeps between cycles);
//! * `master ns`, `sim ns`: CPU per 1 ms cycle in OP, the MainDevice's own and the
//!   simulator's (time spent inside the simulated ring's frame processing), medians of
//!   `ROUNDS` alternating rounds;
//! * `later ns`: with `SCALE_DEFER=1` (the simulator as `ecat sim` runs it, see
//!   `Network::set_deferred_pdi`), the part of `sim ns` the simulator does after the frames
//!   are back (the devices' firmware work): `sim ns - later ns` is what the frames wait for;
//! * `sim ns/SD/frame`: the simulator's CPU per SubDevice per frame, and per SubDevice per
//!   cycle;
//! * `RSS MiB`: peak resident memory of a child process that runs only that size;
//! * `frames`: cyclic frames per cycle; `wkc ok`: cycles with every datagram's working counter
//!   as expected.
//!
//! The targets of issue 15 are printed at the end as ratios to the figures from before
//! the work: simulator cost per SubDevice per frame ≤ 0.25 µs (before about 2 µs), start to
//! OP ≤ 1.5 s at 1,000 (before about 3 s scan + 4 s DC setup).
//! Each size runs in a child process of this example so that its memory is its own.
//! Environment: `SCALE_ROUNDS` (rounds, default 5), `SCALE_CYCLES` (cycles per round),
//! `SCALE_NO_DC=1` (without distributed clocks), `SCALE_DEFER=1` (see `later ns`),
//! `SCALE_OUTPUTS=count` (every output byte changes every cycle, as `ecat run --profile
//! counter` does; default: outputs stay zero), `SCALE_PACED=1` (sleep to each 1 ms boundary
//! as a real cycle does), `SCALE_STAT=min` (the least of the rounds instead of the median,
//! for comparing builds on a busy machine), `SCALE_DUMP=N` (describe the first N frames of
//! the cyclic phase on stderr). CPU figures are thread CPU time, so they stay meaningful on
//! a loaded machine; the wall-clock columns (scan, DC, to OP) do not.

use ecat::dc::setup::DcOptions;
use ecat::dc::{DcMode, DcRuntime};
use ecat::domain::DomainState;
use ecat::error::Result;
use ecat::link::sim::SimLink;
use ecat::link::{Link, LinkCounters};
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The "today" (before the work) at 1,000 SubDevices: simulator ns per SubDevice per
/// frame, scan s, DC setup s, start to OP s (scan + DC).
const BEFORE_SIM_NS_PER_SD_FRAME: f64 = 2000.0;
/// The simulator CPU per cycle at 1,000 (ms).
const BEFORE_SIM_MS_PER_CYCLE: f64 = 2.3;
const BEFORE_SCAN_S: f64 = 3.0;
const BEFORE_DC_S: f64 = 4.0;
const BEFORE_TO_OP_S: f64 = BEFORE_SCAN_S + BEFORE_DC_S;
const TARGET_SIM_NS_PER_SD_FRAME: f64 = 250.0;
const TARGET_TO_OP_S: f64 = 1.5;
const PERIOD_NS: u64 = 1_000_000;

/// CPU time of the calling thread (ns): the figures stay meaningful on a shared, loaded
/// machine where wall time includes waiting for a CPU.
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A simulated link that adds the CPU time spent processing frames (the simulated ring) to
/// a shared counter.
struct Timed {
    inner: SimLink,
    sim_ns: Arc<AtomicU64>,
    /// CPU time of the PDI work the simulator ran after the frames were back (deferred).
    later_ns: Arc<AtomicU64>,
}

impl Link for Timed {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        if DUMP.load(Ordering::Relaxed) > 0 {
            DUMP.fetch_sub(1, Ordering::Relaxed);
            dump(frame);
        }
        let t = cpu_ns();
        let r = self.inner.send(frame);
        self.sim_ns.fetch_add(cpu_ns() - t, Ordering::Relaxed);
        r
    }
    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        // The MainDevice waits for its frames: the simulator is idle, as `ecat sim` is when
        // no frame is waiting, and settles what it deferred (nothing unless SCALE_DEFER=1).
        let t = cpu_ns();
        if self.inner.network_mut().settle() > 0 {
            self.later_ns.fetch_add(cpu_ns() - t, Ordering::Relaxed);
        }
        self.inner.recv(buf, deadline)
    }
    fn sim_network(&mut self) -> Option<&mut Network> {
        Some(self.inner.network_mut())
    }
    fn mac(&self) -> [u8; 6] {
        self.inner.mac()
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn counters(&self) -> LinkCounters {
        self.inner.counters()
    }
}

/// Frames left to describe on stderr (SCALE_DUMP=N: the first N cyclic-phase frames).
static DUMP: AtomicU64 = AtomicU64::new(0);

/// One line per frame: its datagrams (command, address, length).
fn dump(frame: &[u8]) {
    let mut p = 16;
    let mut out = format!("frame {} bytes:", frame.len());
    while p + 12 <= frame.len() {
        let cmd = ecat_wire::Command::from_u8(frame[p]).map_or("?", |c| c.name());
        let adp = u16::from_le_bytes([frame[p + 2], frame[p + 3]]);
        let ado = u16::from_le_bytes([frame[p + 4], frame[p + 5]]);
        let lf = u16::from_le_bytes([frame[p + 6], frame[p + 7]]);
        out += &format!(" {cmd} {adp:#06x}:{ado:#06x}/{}", lf & 0x7FF);
        if lf & 0x8000 == 0 {
            break;
        }
        p += 12 + (lf & 0x7FF) as usize;
    }
    eprintln!("{out}");
}

/// What one size measured.
struct Row {
    n: usize,
    scan_ms: f64,
    dc_ms: f64,
    to_op_ms: f64,
    to_op_cpu_ms: f64,
    op_cycles: u64,
    master_ns: f64,
    sim_ns: f64,
    /// Of `sim_ns`, the PDI work run after the frames were back (SCALE_DEFER=1).
    later_ns: f64,
    frames: usize,
    wkc_ok: u64,
    cycles: u64,
    rss_mib: f64,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Peak resident memory of this process (VmHWM) in MiB.
fn peak_rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

fn bring_up(
    n: usize,
    sim_ns: &Arc<AtomicU64>,
    later_ns: &Arc<AtomicU64>,
) -> (Runtime, f64, f64, f64, f64) {
    let c0 = cpu_ns();
    let net = Network::open(&format!("io{n}")).expect("generated network");
    let link = SimLink::with_network(net, format!("sim:io{n}"), format!("io{n}"));
    let t0 = Instant::now();
    let mut md = MainDevice::with_link(Box::new(Timed {
        inner: link,
        sim_ns: sim_ns.clone(),
        later_ns: later_ns.clone(),
    }));
    md.scan().expect("scan");
    let scan_ms = t0.elapsed().as_secs_f64() * 1e3;
    let configs = md.discover_configs().expect("configs");
    let t_dc = Instant::now();
    // SCALE_NO_DC=1: without distributed clocks (what `sim_cost` measures).
    let with_dc = std::env::var_os("SCALE_NO_DC").is_none();
    let dc = with_dc
        .then(|| md.configure_dc(DcOptions::default()).expect("dc"))
        .flatten()
        .map(|setup| DcRuntime {
            setup,
            mode: DcMode::MasterFollowsReference,
            cycle_ns: PERIOD_NS,
            shift_ns: 0,
        });
    let dc_ms = t_dc.elapsed().as_secs_f64() * 1e3;
    let mut rt = md
        .activate(Activation {
            configs: Some(configs),
            dc,
            ..Default::default()
        })
        .expect("activate");
    rt.run_until_state(AlState::Op, PERIOD_NS, 20_000)
        .expect("OP");
    let to_op_ms = t0.elapsed().as_secs_f64() * 1e3;
    (rt, scan_ms, dc_ms, to_op_ms, (cpu_ns() - c0) as f64 / 1e6)
}

/// One size, measured in this process.
fn measure(n: usize, rounds: usize, cycles: u64) -> Row {
    let sim_ns = Arc::new(AtomicU64::new(0));
    let later_ns = Arc::new(AtomicU64::new(0));
    let (mut rt, scan_ms, dc_ms, to_op_ms, to_op_cpu_ms) = bring_up(n, &sim_ns, &later_ns);
    if std::env::var("SCALE_DEFER").is_ok_and(|v| v == "1") {
        // As `ecat sim` runs: frames back before the PDI work they cause.
        if let Some(net) = rt.link_mut().sim_network() {
            net.set_deferred_pdi(true);
        }
    }
    let op_cycles = rt.cycle_count();
    let dump_n = std::env::var("SCALE_DUMP")
        .ok()
        .and_then(|s| s.parse().ok());
    DUMP.store(dump_n.unwrap_or(0), Ordering::Relaxed);
    let (mut whole, mut sim, mut later) = (Vec::new(), Vec::new(), Vec::new());
    let mut wkc_ok = 0;
    let count_outputs = std::env::var("SCALE_OUTPUTS").is_ok_and(|v| v == "count");
    let paced = std::env::var("SCALE_PACED").is_ok_and(|v| v == "1");
    let mut cycle = 0u64;
    for _ in 0..rounds {
        sim_ns.store(0, Ordering::Relaxed);
        later_ns.store(0, Ordering::Relaxed);
        let t = cpu_ns();
        let mut next = Instant::now();
        for _ in 0..cycles {
            if paced {
                // As a real cycle: sleep to the next millisecond boundary.
                next += std::time::Duration::from_nanos(PERIOD_NS);
                if let Some(d) = next.checked_duration_since(Instant::now()) {
                    std::thread::sleep(d);
                }
            }
            if count_outputs {
                // As `ecat run --profile counter`: every output byte changes every cycle.
                cycle += 1;
                for (i, b) in rt.domain_mut(0).outputs_mut().iter_mut().enumerate() {
                    *b = (cycle as u8).wrapping_add(i as u8);
                }
            }
            if rt.tx_rx(PERIOD_NS).expect("cycle")
                && rt
                    .domains()
                    .iter()
                    .all(|d| d.state() == DomainState::Complete)
            {
                wkc_ok += 1;
            }
        }
        let spent = (cpu_ns() - t) as f64 / cycles as f64;
        let s = sim_ns.load(Ordering::Relaxed) as f64 / cycles as f64;
        let l = later_ns.load(Ordering::Relaxed) as f64 / cycles as f64;
        // The simulator's whole work: frame processing and what it deferred.
        whole.push(spent);
        sim.push(s + l);
        later.push(l);
    }
    // SCALE_STAT=min: the least of the rounds (a shared machine only ever adds time).
    let least = std::env::var("SCALE_STAT").is_ok_and(|v| v == "min");
    let pick = |v: &mut Vec<f64>| {
        if least {
            v.iter().copied().fold(f64::MAX, f64::min)
        } else {
            median(v)
        }
    };
    let sim_ns = pick(&mut sim);
    let later_ns = pick(&mut later);
    let master_ns = (median(&mut whole) - sim_ns).max(0.0);
    Row {
        n,
        scan_ms,
        dc_ms,
        to_op_ms,
        to_op_cpu_ms,
        op_cycles,
        master_ns,
        sim_ns,
        later_ns,
        frames: rt.frame_layout().0,
        wkc_ok,
        cycles: cycles * rounds as u64,
        rss_mib: peak_rss_mib(),
    }
}

fn print_header() {
    println!(
        "{:>6} {:>8} {:>8} {:>9} {:>9} {:>7} {:>10} {:>10} {:>9} {:>9} {:>9} {:>8} {:>7} {:>11}",
        "SDs",
        "scan ms",
        "DC ms",
        "to OP ms",
        "OP cpu ms",
        "cycles",
        "master ns",
        "sim ns",
        "later ns",
        "sim/SD/fr",
        "sim/SD/cy",
        "RSS MiB",
        "frames",
        "wkc ok"
    );
}

fn print_row(r: &Row) {
    let per_sd = r.sim_ns / r.n as f64;
    println!(
        "{:>6} {:>8.0} {:>8.0} {:>9.0} {:>9.0} {:>7} {:>10.0} {:>10.0} {:>9.0} {:>9.1} {:>9.1} {:>8.1} {:>7} {:>11}",
        r.n,
        r.scan_ms,
        r.dc_ms,
        r.to_op_ms,
        r.to_op_cpu_ms,
        r.op_cycles,
        r.master_ns,
        r.sim_ns,
        r.later_ns,
        per_sd / r.frames.max(1) as f64,
        per_sd,
        r.rss_mib,
        r.frames,
        format!("{}/{}", r.wkc_ok, r.cycles)
    );
}

/// The figures at 1,000 SubDevices next to this run's, with the ratio (before / now)
/// and the target where the issue sets one.
fn print_targets(r: &Row) {
    let per_sd_frame = r.sim_ns / r.n as f64 / r.frames.max(1) as f64;
    println!("issue 15 at 1,000 SubDevices (before: the issue's figures; ratio = before / now):");
    println!(
        "  {:<34} {:>9} {:>9} {:>7} {:>8}",
        "figure", "before", "now", "ratio", "target"
    );
    let line = |what: &str, before: f64, now: f64, target: Option<f64>| {
        let verdict = match target {
            Some(t) if now <= t => "met",
            Some(_) => "NOT met",
            None => "",
        };
        println!(
            "  {what:<34} {before:>9.2} {now:>9.2} {:>6.1}x {:>8}  {verdict}",
            before / now.max(1e-9),
            target.map_or("-".to_string(), |t| format!("{t:.2}"))
        );
    };
    line(
        "simulator ns per SubDevice/frame",
        BEFORE_SIM_NS_PER_SD_FRAME,
        per_sd_frame,
        Some(TARGET_SIM_NS_PER_SD_FRAME),
    );
    line(
        "simulator ms per cycle",
        BEFORE_SIM_MS_PER_CYCLE,
        r.sim_ns / 1e6,
        None,
    );
    line("scan s", BEFORE_SCAN_S, r.scan_ms / 1e3, None);
    line("DC setup s", BEFORE_DC_S, r.dc_ms / 1e3, None);
    line(
        "start to OP s, wall",
        BEFORE_TO_OP_S,
        r.to_op_ms / 1e3,
        Some(TARGET_TO_OP_S),
    );
    line(
        "start to OP s, CPU",
        BEFORE_TO_OP_S,
        r.to_op_cpu_ms / 1e3,
        Some(TARGET_TO_OP_S),
    );
}

fn parse_row(line: &str) -> Option<Row> {
    let v: Vec<f64> = line
        .strip_prefix("ROW ")?
        .split_whitespace()
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    (v.len() == 13).then(|| Row {
        n: v[0] as usize,
        scan_ms: v[1],
        dc_ms: v[2],
        to_op_ms: v[3],
        to_op_cpu_ms: v[4],
        op_cycles: v[5] as u64,
        master_ns: v[6],
        sim_ns: v[7],
        later_ns: v[8],
        frames: v[9] as usize,
        wkc_ok: v[10] as u64,
        cycles: v[11] as u64,
        rss_mib: v[12],
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds: usize = std::env::var("SCALE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    if let Some(n) = args.first().and_then(|a| a.strip_prefix("--child=")) {
        let n: usize = n.parse().expect("size");
        // SCALE_CYCLES: cycles per round (e.g. many, to profile the cyclic phase).
        let cycles = std::env::var("SCALE_CYCLES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or((200_000 / n as u64).clamp(100, 2_000));
        let r = measure(n, rounds, cycles);
        println!(
            "ROW {} {} {} {} {} {} {} {} {} {} {} {} {}",
            r.n,
            r.scan_ms,
            r.dc_ms,
            r.to_op_ms,
            r.to_op_cpu_ms,
            r.op_cycles,
            r.master_ns,
            r.sim_ns,
            r.later_ns,
            r.frames,
            r.wkc_ok,
            r.cycles,
            r.rss_mib
        );
        return;
    }
    let sizes: Vec<usize> = if args.is_empty() {
        vec![10, 100, 1000]
    } else {
        args.iter().filter_map(|a| a.parse().ok()).collect()
    };
    println!("ecat scale: generated lines sim:ioN in-process, 1 ms cycle, DC on; medians of {rounds} rounds (SCALE_ROUNDS)");
    print_header();
    let exe = std::env::current_exe().expect("own path");
    let mut rows = Vec::new();
    for n in sizes {
        let out = std::process::Command::new(&exe)
            .arg(format!("--child={n}"))
            .output()
            .expect("run child");
        match String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(parse_row)
        {
            Some(r) => {
                print_row(&r);
                rows.push(r);
            }
            None => println!(
                "{n:>6} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }
    }
    if let Some(r) = rows.iter().find(|r| r.n == 1000) {
        print_targets(r);
    }
}
