//! `ecat bench`: one run that measures ecat side by side with its floors and with ethercrab,
//! on one veth pair, and prints one table of medians and ratios (ARCHITECTURE §8 item 6:
//! ratios in one run, never timed assertions).
//!
//! Rows: `floor echo` (the peer sends each frame straight back; Block and BusyPoll), `bare
//! timer` (a thread that only sleeps to each boundary), `ecat <link>` for raw, mmap and xdp in
//! Block and BusyPoll mode (the real runtime: scan, activate, OP, `cycle::run`), and
//! `ethercrab` (crates.io, via `bench/ethercrab-peer`). The far end of the pair lives in a
//! fresh namespace where a peer thread (pinned to the other CPU) echoes or simulates the
//! network; every measured thread is pinned to CPU 0 under SCHED_FIFO with memory locked.
//! Namespace and pair are removed on the way out, also after Ctrl-C or a panic.
//! `--find-min-cycle` then walks each link down the cycle-time ladder (see `mincycle`).

mod ecat_rows;
mod ethercrab;
mod floor;
mod mincycle;
mod peer;
mod report;
mod row;

use super::CmdResult;
use crate::units::parse_ns;
use ecat::cycle::CycleOptions;
use ecat::netns::{is_root, VethNs};
use peer::{Peer, PeerKind, MEASURED_CPU, MEASURED_PRIO};
use row::Row;
use serde_json::json;
use std::sync::atomic::Ordering;

/// Options of `ecat bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Cycle time of every row (e.g. 1ms, 500us; a bare number is microseconds)
    #[arg(long, default_value = "1ms", value_parser = |s: &str| parse_ns(s, 1_000))]
    cycle: u64,
    /// Seconds each row runs
    #[arg(long, default_value = "5", value_parser = |s: &str| parse_ns(s, 1_000_000_000))]
    seconds: u64,
    /// Write the table (and the min-cycle results) as JSON to this file
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
    /// Then find the smallest stable cycle time of every link (seed 002's headline figure)
    #[arg(long)]
    find_min_cycle: bool,
    /// Window per cycle time for --find-min-cycle
    #[arg(long, default_value = "3", value_parser = |s: &str| parse_ns(s, 1_000_000_000))]
    window: u64,
    /// Simulated network (preset or file); the default `io` is seed 003's line-up
    #[arg(long, default_value = "io")]
    network: String,
    /// Leave ethercrab out
    #[arg(long)]
    no_ethercrab: bool,
    /// How the simulated ring waits for frames: block (SCHED_FIFO, sleeping) or busy
    /// (spinning, always ready, like hardware)
    #[arg(long, value_enum, default_value = "block")]
    peer: PeerWait,
    /// ecat rows: wake this early and spin to the cycle boundary (e.g. 20us), as
    /// `ecat run --busy-wait` does; the bare timer stays a plain sleeper
    #[arg(long, default_value = "0", value_parser = |s: &str| parse_ns(s, 1_000))]
    busy_wait: u64,
}

/// `--busy-wait` of the ecat rows, set once before the rows run.
static BUSY_WAIT_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How the peer waits for frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PeerWait {
    /// Sleep in ppoll under SCHED_FIFO.
    Block,
    /// Spin under SCHED_OTHER.
    Busy,
}

/// The ecat rows: (name, link kind, busy poll).
const LINKS: [(&str, &str, bool); 6] = [
    ("ecat raw", "raw", false),
    ("ecat raw busy", "raw", true),
    ("ecat mmap", "mmap", false),
    ("ecat mmap busy", "mmap", true),
    ("ecat xdp", "xdp", false),
    ("ecat xdp busy", "xdp", true),
];

fn stopped() -> bool {
    crate::signals::STOP.load(Ordering::Relaxed)
}

/// Run `f` in a fresh thread (so its real-time settings die with it); a panic becomes an
/// unavailable row.
fn measured(name: &str, f: impl FnOnce() -> Row + Send) -> Row {
    if stopped() {
        return Row::unavailable(name, "-", "stopped (Ctrl-C)".into());
    }
    std::thread::scope(|s| {
        s.spawn(f)
            .join()
            .unwrap_or_else(|_| Row::unavailable(name, "-", "the measurement panicked".into()))
    })
}

/// The cycle options of every measured thread.
fn options(period: u64, duration: u64) -> CycleOptions {
    CycleOptions {
        period_ns: period,
        duration_ns: duration,
        priority: Some(MEASURED_PRIO),
        cpu: Some(MEASURED_CPU % ecat::netns::cpus()),
        lock_memory: true,
        busy_wait_ns: BUSY_WAIT_NS.load(std::sync::atomic::Ordering::Relaxed),
        report_interval_ns: u64::MAX / 4,
        auto_realtime: false,
    }
}

/// One ecat row with a fresh simulated network behind the pair.
fn ecat_on(v: &VethNs, net: &str, name: &str, kind: &str, busy: bool, o: &CycleOptions) -> Row {
    let spec = format!("{kind}:{}", v.near);
    let _peer = match Peer::start(v, PeerKind::Sim(net.into())) {
        Ok(p) => p,
        Err(e) => return Row::unavailable(name, &spec, e),
    };
    measured(name, || {
        ecat_rows::ecat_row(name, &spec, busy, o, &crate::signals::STOP)
    })
}

/// The ethercrab row with a fresh simulated network (tried twice: its bring-up can time out).
fn ethercrab_on(v: &VethNs, net: &str, bin: &std::path::Path, o: &CycleOptions) -> Row {
    let mut row = Row::default();
    for _ in 0..2 {
        let _peer = match Peer::start(v, PeerKind::Sim(net.into())) {
            Ok(p) => p,
            Err(e) => return Row::unavailable("ethercrab", &v.near, e),
        };
        row = ethercrab::ethercrab_row(
            bin,
            &v.near,
            o,
            MEASURED_CPU,
            MEASURED_PRIO,
            &crate::signals::STOP,
        );
        if row.available || stopped() {
            break;
        }
    }
    row
}

/// Run `ecat bench`.
pub fn run(a: Args) -> CmdResult {
    if !is_root() {
        return Err("ecat bench needs root: it creates a veth pair and a network namespace, opens raw and AF_XDP sockets and uses SCHED_FIFO (run it with sudo)".into());
    }
    crate::signals::install();
    peer::PEER_BUSY.store(
        a.peer == PeerWait::Busy,
        std::sync::atomic::Ordering::Relaxed,
    );
    BUSY_WAIT_NS.store(a.busy_wait, std::sync::atomic::Ordering::Relaxed);
    let period = a.cycle.max(10_000);
    let seconds = a.seconds.max(100_000_000);
    let frame_len = ecat_rows::cyclic_frame_len(&a.network)
        .map_err(|e| format!("network '{}': {e}", a.network))?;
    let crab_bin = if a.no_ethercrab {
        Err("left out (--no-ethercrab)".to_string())
    } else {
        ethercrab::prepare()
    };
    let base = format!("ecb{}", std::process::id() % 100_000);
    let v = VethNs::create(&base)?;
    println!(
        "ecat bench: veth {} <-> {} (namespace {}), network '{}' ({} bytes of cyclic frames), cycle {:.1} µs, {:.1} s per row; measured threads on CPU {} SCHED_FIFO {}, peer on CPU {} ({})",
        v.near, v.far, v.ns, a.network, frame_len, period as f64 / 1e3, seconds as f64 / 1e9,
        MEASURED_CPU, MEASURED_PRIO, peer::PEER_CPU,
        if a.peer == PeerWait::Busy { "busy-polling, SCHED_OTHER" } else { "blocking, SCHED_FIFO" }
    );
    let o = options(period, seconds);
    let mut rows = Vec::new();
    for (name, busy) in [("floor echo", false), ("floor echo busy", true)] {
        let spec = format!("raw:{}", v.near);
        let row = match Peer::start(&v, PeerKind::Echo) {
            Ok(_peer) => measured(name, || {
                floor::echo_row(name, &spec, busy, frame_len, &o, &crate::signals::STOP)
            }),
            Err(e) => Row::unavailable(name, &spec, e),
        };
        rows.push(row);
    }
    rows.push(measured("bare timer", || {
        floor::bare_timer_row(&o, &crate::signals::STOP)
    }));
    for (name, kind, busy) in LINKS {
        rows.push(ecat_on(&v, &a.network, name, kind, busy, &o));
    }
    rows.push(match &crab_bin {
        Ok(bin) if !stopped() => ethercrab_on(&v, &a.network, bin, &o),
        Ok(_) => Row::unavailable("ethercrab", &v.near, "stopped (Ctrl-C)".into()),
        Err(why) => Row::unavailable("ethercrab", &v.near, why.clone()),
    });
    print!("{}", report::table(&rows));
    println!("(µs; rtt/floor: median round trip vs the echo floor of the same receive mode; wake/timer: median wake-up latency vs the bare timer; task/crab: ecat's median task duration (wake-up to end of send) vs ethercrab's median per-cycle time (wake-up to tx_rx done, which includes its round trip))");
    for r in &rows {
        if r.available && !r.note.is_empty() {
            println!("{}: {}", r.name, r.note);
        }
    }
    if let Some(b) = report::best(&rows) {
        print!("{}", report::seed003(b));
    }

    let mut mins = Vec::new();
    if a.find_min_cycle && !stopped() {
        let window = a.window.max(100_000_000);
        mins.push(mincycle::find("bare timer", &stopped, &mut |p| {
            measured("bare timer", || {
                floor::bare_timer_row(&options(p, window), &crate::signals::STOP)
            })
        }));
        for (name, kind, busy) in LINKS {
            mins.push(mincycle::find(name, &stopped, &mut |p| {
                ecat_on(&v, &a.network, name, kind, busy, &options(p, window))
            }));
            println!(
                "{name}: smallest stable cycle {}",
                mins.last()
                    .and_then(|m| m.min_stable_ns)
                    .map_or("none".into(), |n| format!("{:.1} µs", n as f64 / 1e3))
            );
        }
        if let Ok(bin) = &crab_bin {
            mins.push(mincycle::find("ethercrab", &stopped, &mut |p| {
                ethercrab_on(&v, &a.network, bin, &options(p, window))
            }));
        }
        print!("{}", mincycle::text(&mins));
    }
    let targets = report::targets(&rows, &mins);
    print!("{}", report::targets_text(&targets));
    if let Some(path) = &a.json {
        let j = json!({
            "cycle_us": period as f64 / 1e3,
            "seconds_per_row": seconds as f64 / 1e9,
            "network": a.network,
            "cyclic_frame_bytes": frame_len,
            "veth": {"near": v.near, "far": v.far, "namespace": v.ns},
            "cpus": ecat::netns::cpus(),
            "ethercrab_version": ethercrab::version(),
            "rows": rows.iter().map(|r| report::row_json(&rows, r)).collect::<Vec<_>>(),
            "best_link": report::best(&rows).map(|b| b.name.clone()),
            "min_cycle": mincycle::json(&mins),
            "targets": targets.iter().map(|(w, v, l, m)| json!({"what": w, "value": v, "limit": l, "met": m})).collect::<Vec<_>>(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&j)?)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("figures written to {}", path.display());
    }
    if stopped() {
        println!("stopped by Ctrl-C; the veth pair and namespace are removed");
    }
    Ok(())
}
