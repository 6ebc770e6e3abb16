//! `ecat bench`: one run that measures ecat side by side with its floors and with ethercrab,
//! on one veth pair, and prints medians and ratios (ARCHITECTURE §8 item 6: ratios in one
//! run, never timed assertions).
//!
//! Rows: `floor echo` (the peer sends each echo frame straight back; Block and BusyPoll),
//! `bare timer` (a thread that only sleeps to each boundary), `ecat <link>` for raw, mmap and
//! xdp in Block and BusyPoll mode (the real runtime: scan, activate, OP, `cycle::run`),
//! `ethercrab` (crates.io, via `bench/ethercrab-peer`), and the wake-up rows (`wake`: the
//! cycle with `ecat run`'s own settings). The far end of the pair lives in a fresh namespace
//! where a peer thread (pinned to the other CPU) echoes and simulates the network, blocking
//! or busy-polling (`--peer`; both by default, one table each); every measured thread is
//! pinned to CPU 0 under SCHED_FIFO with memory locked (except the wake-up rows, which take
//! what `ecat run` takes).
//!
//! Like for like in the same moments: an ecat row's round trip is divided by its own echo
//! floor, measured in the same thread in windows of [`PAIR_WINDOW_NS`] alternating with its
//! cycle (same link, same peer thread, same receive mode), and each wake-up row alternates
//! with a bare timer under its own settings the same way; on this shared VM a figure's
//! median moves by ±20–30 % from one second to the next with the builds running, and two rows
//! measured a minute apart differed by that much. The floor is that of the link as the row
//! configures it: on the xdp rows the echo frames pass ecat's XDP program (which hands them
//! to the kernel) and the veth then receives through NAPI, 1–2 µs above the raw rows' floors.
//!
//! Every row runs once per round (`--rounds`, default 3), the rows alternating within a round
//! and each round starting one step further down the list, so drift on a shared machine hits
//! every row alike; each figure is the median of the rounds' medians with its spread, each
//! ratio the median of the rounds' ratios (`rounds`). `--dma-latency` holds
//! /dev/cpu_dma_latency at 0 while it runs, as cyclictest does. Namespace and pair are
//! removed on the way out, also after Ctrl-C or a panic. `--find-min-cycle` then walks each
//! row down the cycle-time ladder (see `mincycle`; there the ecat rows run alone).

mod ecat_rows;
mod ethercrab;
mod floor;
mod json;
mod mincycle;
mod packet;
mod peer;
mod report;
mod rounds;
mod row;
mod wake;

use super::CmdResult;
use crate::units::parse_ns;
use ecat::cycle::CycleOptions;
use ecat::netns::{is_root, VethNs};
use ecat_rows::{PairedFloor, Setup};
use peer::{Peer, PeerKind, MEASURED_CPU, MEASURED_PRIO};
use rounds::Agg;
use row::Row;
use serde_json::json;
use std::sync::atomic::Ordering;

/// Options of `ecat bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Cycle time of every row (e.g. 1ms, 500us; a bare number is microseconds)
    #[arg(long, default_value = "1ms", value_parser = |s: &str| parse_ns(s, 1_000))]
    cycle: u64,
    /// Seconds each row runs in each round (an ecat row's own floor as long again; 3 rounds
    /// of 1.5 s: about 3-4 minutes in all)
    #[arg(long, default_value = "1.5", value_parser = |s: &str| parse_ns(s, 1_000_000_000))]
    seconds: u64,
    /// Rounds: every row runs once per round, alternating; figures are medians of the rounds'
    /// medians
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=50))]
    rounds: u32,
    /// Write the tables (and the min-cycle results) as JSON to this file
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
    /// Then find the smallest stable cycle time of every row (seed 002's headline figure)
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
    /// Leave out the wake-up comparison of `ecat run`'s settings
    #[arg(long)]
    no_wake: bool,
    /// How the simulated ring waits for frames: block (SCHED_FIFO, sleeping), busy (spinning,
    /// always ready, like hardware) or both (one table each)
    #[arg(long, value_enum, default_value = "both")]
    peer: PeerChoice,
    /// Hold /dev/cpu_dma_latency at 0 while the bench runs, as cyclictest does (CPUs poll
    /// instead of sleeping)
    #[arg(long)]
    dma_latency: bool,
    /// ecat rows: wake this early and spin to the cycle boundary (e.g. 20us), as
    /// `ecat run --busy-wait` does; the bare timer stays a plain sleeper
    #[arg(long, default_value = "0", value_parser = |s: &str| parse_ns(s, 1_000))]
    busy_wait: u64,
}

/// `--busy-wait` of the ecat rows, set once before the rows run.
static BUSY_WAIT_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How the peer waits for frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerWait {
    /// Sleep in ppoll under SCHED_FIFO.
    Block,
    /// Spin under SCHED_OTHER.
    Busy,
}

impl PeerWait {
    fn key(self) -> &'static str {
        match self {
            PeerWait::Block => "block",
            PeerWait::Busy => "busy",
        }
    }

    fn describe(self) -> String {
        match self {
            PeerWait::Block => format!(
                "blocking peer (SCHED_FIFO {} on CPU {}, sleeping until a frame comes)",
                peer::PEER_PRIO,
                peer::PEER_CPU
            ),
            PeerWait::Busy => format!(
                "busy peer (busy-polling under SCHED_OTHER on CPU {}, nice {} with the bench's autogroup, always ready like hardware)",
                peer::PEER_CPU,
                peer::PEER_NICE
            ),
        }
    }
}

/// `--peer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PeerChoice {
    /// The blocking peer only.
    Block,
    /// The busy-polling peer only.
    Busy,
    /// Both, one table each.
    Both,
}

/// How long an ecat row's cycle and its own echo floor run in turn.
const PAIR_WINDOW_NS: u64 = 50_000_000;

/// The ecat rows: (name, link kind, busy poll).
const LINKS: [(&str, &str, bool); 6] = [
    ("ecat raw", "raw", false),
    ("ecat raw busy", "raw", true),
    ("ecat mmap", "mmap", false),
    ("ecat mmap busy", "mmap", true),
    ("ecat xdp", "xdp", false),
    ("ecat xdp busy", "xdp", true),
];

/// The rows of one peer's table, in order; index 2 is the bare timer (shared by the tables).
fn table_names() -> Vec<&'static str> {
    let mut v = vec!["floor echo", "floor echo busy", "bare timer"];
    v.extend(LINKS.iter().map(|l| l.0));
    v.push("ethercrab");
    v
}

/// One measurement of a round.
#[derive(Debug, Clone, Copy)]
enum Job {
    /// Echo floor (table, receive in BusyPoll).
    Floor(usize, bool),
    /// The bare timer.
    Timer,
    /// An ecat row (table, index into [`LINKS`]).
    Ecat(usize, usize),
    /// ethercrab (table).
    Crab(usize),
    /// A wake-up row (index into [`wake::ROWS`]).
    Wake(usize),
}

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

/// Start a peer of `kind` that waits for frames the `wait` way.
fn start_peer(v: &VethNs, kind: PeerKind, wait: PeerWait) -> Result<Peer, String> {
    peer::PEER_BUSY.store(wait == PeerWait::Busy, Ordering::Relaxed);
    Peer::start(v, kind)
}

/// Run `f` with a fresh peer of `kind` behind the pair, waiting for frames the `wait` way;
/// then stop the peer and note in the row how often it was preempted. A peer that cannot
/// start makes the row unavailable.
fn with_peer(
    v: &VethNs,
    kind: PeerKind,
    wait: PeerWait,
    (name, spec): (&str, &str),
    f: impl FnOnce() -> Row,
) -> Row {
    let mut peer = match start_peer(v, kind, wait) {
        Ok(p) => p,
        Err(e) => return Row::unavailable(name, spec, e),
    };
    let mut row = f();
    if let Some(s) = peer.stop() {
        row.peer_preempted = s.preempted;
        row.peer_ns = s.ns;
    }
    row
}

/// One ecat row with a fresh simulated network behind the pair; with `floor`, alternating
/// with its own echo floor (see `ecat_rows::ecat_row`).
fn ecat_on(
    v: &VethNs,
    net: &str,
    wait: PeerWait,
    (name, kind, busy): (&str, &str, bool),
    o: &CycleOptions,
    floor: Option<PairedFloor>,
) -> Row {
    let spec = format!("{kind}:{}", v.near);
    with_peer(v, PeerKind::Sim(net.into()), wait, (name, &spec), || {
        measured(name, || {
            ecat_rows::ecat_row(
                name,
                &spec,
                busy,
                o,
                Setup::Realtime,
                floor,
                &crate::signals::STOP,
            )
        })
    })
}

/// The ethercrab row with a fresh simulated network, tried up to `tries` times (its bring-up
/// can time out).
fn ethercrab_on(
    v: &VethNs,
    net: &str,
    wait: PeerWait,
    bin: &std::path::Path,
    o: &CycleOptions,
    tries: usize,
) -> Row {
    let mut row = Row::default();
    for _ in 0..tries {
        row = with_peer(
            v,
            PeerKind::Sim(net.into()),
            wait,
            ("ethercrab", &v.near),
            || {
                ethercrab::ethercrab_row(
                    bin,
                    &v.near,
                    o,
                    MEASURED_CPU,
                    MEASURED_PRIO,
                    &crate::signals::STOP,
                )
            },
        );
        if row.available || stopped() {
            break;
        }
    }
    row
}

/// What the bench measures with, shared by every job.
struct Bench<'a> {
    v: &'a VethNs,
    net: &'a str,
    peers: &'a [PeerWait],
    crab: &'a Result<std::path::PathBuf, String>,
    frame_len: usize,
}

impl Bench<'_> {
    /// Run one job for `period` and `duration`; ecat rows alternate with their own echo
    /// floor when `paired`.
    fn run(&self, job: Job, period: u64, duration: u64, paired: bool) -> Row {
        let o = options(period, duration);
        let v = self.v;
        match job {
            Job::Floor(t, busy) => {
                let name = if busy {
                    "floor echo busy"
                } else {
                    "floor echo"
                };
                with_peer(v, PeerKind::Echo, self.peers[t], (name, &v.near), || {
                    measured(name, || {
                        floor::echo_row(
                            name,
                            &v.near,
                            busy,
                            self.frame_len,
                            &o,
                            &crate::signals::STOP,
                        )
                    })
                })
            }
            Job::Timer => measured("bare timer", || {
                floor::bare_timer_row(&o, &crate::signals::STOP)
            }),
            Job::Ecat(t, i) => {
                let floor = paired.then_some(PairedFloor {
                    iface: &v.near,
                    len: self.frame_len,
                    window: PAIR_WINDOW_NS,
                });
                ecat_on(v, self.net, self.peers[t], LINKS[i], &o, floor)
            }
            Job::Crab(t) => match self.crab {
                Ok(bin) if !stopped() => ethercrab_on(v, self.net, self.peers[t], bin, &o, 2),
                Ok(_) => Row::unavailable("ethercrab", &v.near, "stopped (Ctrl-C)".into()),
                Err(why) => Row::unavailable("ethercrab", &v.near, why.clone()),
            },
            Job::Wake(i) => self.wake(i, period, duration).0,
        }
    }

    /// Wake-up row `i` and its bare timer with the same settings (see `wake`).
    fn wake(&self, i: usize, period: u64, duration: u64) -> (Row, Row) {
        let (wo, prepared) = wake::options(i, period, duration);
        let setup = if prepared {
            Setup::Realtime
        } else {
            Setup::Plain
        };
        let (name, timer) = (wake::ROWS[i].0, wake::timer_name(i));
        let spec = format!("raw:{}", self.v.near);
        let _peer = match start_peer(self.v, PeerKind::Sim(self.net.into()), PeerWait::Block) {
            Ok(p) => p,
            Err(e) => {
                return (
                    Row::unavailable(name, &spec, e.clone()),
                    Row::unavailable(&timer, "-", e),
                )
            }
        };
        if stopped() {
            let why = || "stopped (Ctrl-C)".to_string();
            return (
                Row::unavailable(name, &spec, why()),
                Row::unavailable(&timer, "-", why()),
            );
        }
        std::thread::scope(|s| {
            s.spawn(|| {
                ecat_rows::wake_pair(
                    name,
                    &timer,
                    &spec,
                    &wo,
                    setup,
                    wake::WINDOW_NS,
                    &crate::signals::STOP,
                )
            })
            .join()
            .unwrap_or_else(|_| {
                let why = || "the measurement panicked".to_string();
                (
                    Row::unavailable(name, &spec, why()),
                    Row::unavailable(&timer, "-", why()),
                )
            })
        })
    }
}

/// The load average (1, 5, 15 minutes), if readable.
fn loadavg() -> Option<[f64; 3]> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = s.split_whitespace().map(|x| x.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

fn load_text(l: Option<[f64; 3]>) -> String {
    l.map_or("?".into(), |l| {
        format!("{:.2} {:.2} {:.2}", l[0], l[1], l[2])
    })
}

/// Run `ecat bench`.
pub fn run(a: Args) -> CmdResult {
    if !is_root() {
        return Err("ecat bench needs root: it creates a veth pair and a network namespace, opens raw and AF_XDP sockets and uses SCHED_FIFO (run it with sudo)".into());
    }
    crate::signals::install();
    BUSY_WAIT_NS.store(a.busy_wait, std::sync::atomic::Ordering::Relaxed);
    let period = a.cycle.max(ecat::cycle::MIN_PERIOD_NS);
    let seconds = a.seconds.max(100_000_000);
    let rounds = a.rounds.max(1) as usize;
    let peers: Vec<PeerWait> = match a.peer {
        PeerChoice::Block => vec![PeerWait::Block],
        PeerChoice::Busy => vec![PeerWait::Busy],
        PeerChoice::Both => vec![PeerWait::Block, PeerWait::Busy],
    };
    let frame_len = ecat_rows::cyclic_frame_len(&a.network)
        .map_err(|e| format!("network '{}': {e}", a.network))?;
    let crab = if a.no_ethercrab {
        Err("left out (--no-ethercrab)".to_string())
    } else {
        ethercrab::prepare()
    };
    let dma = if a.dma_latency {
        ecat::latency_hold::LatencyHold::acquire("leave out --dma-latency")
    } else {
        Err("left alone; --dma-latency holds /dev/cpu_dma_latency at 0".to_string())
    };
    let base = format!("ecb{}", std::process::id() % 100_000);
    let v = VethNs::create(&base)?;
    let load_start = loadavg();
    println!(
        "ecat bench: veth {} <-> {} (namespace {}), network '{}' ({} bytes of cyclic frames), cycle {:.1} µs, {:.1} s per row and round, {rounds} round(s); measured threads on CPU {} SCHED_FIFO {}; peers: {}; load average {}",
        v.near, v.far, v.ns, a.network, frame_len, period as f64 / 1e3, seconds as f64 / 1e9,
        MEASURED_CPU, MEASURED_PRIO,
        peers.iter().map(|p| p.key()).collect::<Vec<_>>().join(", "),
        load_text(load_start)
    );
    println!(
        "CPU idle states: {}",
        match &dma {
            Ok(_) => "/dev/cpu_dma_latency held at 0 for the whole run (CPUs poll instead of sleeping, as under cyclictest)".to_string(),
            Err(e) => e.clone(),
        }
    );
    let names = table_names();
    let mut tables: Vec<Vec<Agg>> = peers
        .iter()
        .map(|_| names.iter().map(|n| Agg::new(n)).collect())
        .collect();
    let mut wakes: Vec<wake::Pair> = (0..wake::ROWS.len()).map(wake::Pair::new).collect();
    // The jobs of one round: each peer's rows, the bare timer between them, the wake-up rows.
    let mut jobs = Vec::new();
    for t in 0..peers.len() {
        jobs.extend([Job::Floor(t, false), Job::Floor(t, true)]);
        jobs.extend((0..LINKS.len()).map(|i| Job::Ecat(t, i)));
        jobs.push(Job::Crab(t));
        if t == 0 {
            jobs.push(Job::Timer);
        }
    }
    if !a.no_wake {
        jobs.extend((0..wake::ROWS.len()).map(Job::Wake));
    }
    let bench = Bench {
        v: &v,
        net: &a.network,
        peers: &peers,
        crab: &crab,
        frame_len,
    };
    let mut round_loads = Vec::new();
    for round in 0..rounds {
        let t = std::time::Instant::now();
        let offset = round * jobs.len() / rounds;
        for k in 0..jobs.len() {
            let job = jobs[(k + offset) % jobs.len()];
            if let Job::Wake(i) = job {
                let (c, t) = bench.wake(i, period, seconds);
                wakes[i].cycle.rounds.push(c);
                wakes[i].timer.rounds.push(t);
                continue;
            }
            let row = bench.run(job, period, seconds, true);
            match job {
                Job::Floor(t, busy) => tables[t][usize::from(busy)].rounds.push(row),
                Job::Timer => tables
                    .iter_mut()
                    .for_each(|t| t[2].rounds.push(row.clone())),
                Job::Ecat(t, i) => tables[t][3 + i].rounds.push(row),
                Job::Crab(t) => tables[t][3 + LINKS.len()].rounds.push(row),
                Job::Wake(_) => {}
            }
        }
        let l = loadavg();
        round_loads.push(l);
        println!(
            "round {}/{rounds}: {} rows in {:.1} s, load average {}",
            round + 1,
            jobs.len(),
            t.elapsed().as_secs_f64(),
            load_text(l)
        );
        if stopped() {
            break;
        }
    }

    print!("{}", report::legend(rounds));
    let mut all_targets = Vec::new();
    for (t, rows) in tables.iter().enumerate() {
        println!("\n== {} ==", peers[t].describe());
        print!("{}", report::table(rows));
        print!("{}", report::missed_rounds(rows));
        print!("{}", report::peer_preempted_text(rows));
        if let Some(c) = report::find(rows, "ethercrab").and_then(|c| c.first()) {
            println!("ethercrab: {}", c.note);
        }
        if let Some(b) = report::best(rows) {
            print!("{}", report::seed003(b));
        }
    }
    let timer = tables[0][2].clone();
    if !a.no_wake {
        println!();
        print!("{}", wake::text(&wakes, &timer, rounds));
    }

    let mut mins: Vec<Vec<mincycle::MinCycle>> = vec![Vec::new(); peers.len()];
    if a.find_min_cycle && !stopped() {
        let window = a.window.max(100_000_000);
        let tm = mincycle::find("bare timer", &stopped, &mut |p| {
            bench.run(Job::Timer, p, window, false)
        });
        for (t, m) in mins.iter_mut().enumerate() {
            m.push(tm.clone());
            for (i, (name, ..)) in LINKS.iter().enumerate() {
                m.push(mincycle::find(name, &stopped, &mut |p| {
                    bench.run(Job::Ecat(t, i), p, window, false)
                }));
            }
            if let Ok(bin) = &crab {
                m.push(mincycle::find("ethercrab", &stopped, &mut |p| {
                    ethercrab_on(&v, &a.network, peers[t], bin, &options(p, window), 1)
                }));
            }
            println!("\nsmallest stable cycle, {}:", peers[t].describe());
            print!("{}", mincycle::text(m));
        }
    }
    println!();
    for (t, rows) in tables.iter().enumerate() {
        let tg = report::targets(rows, &mins[t]);
        print!("{}", report::targets_text(&peers[t].describe(), &tg));
        print!("{}", report::links_text(rows));
        all_targets.push(tg);
    }
    if !a.no_wake {
        print!("{}", wake::target_text(&wakes));
    }
    let load_end = loadavg();
    println!("load average at the end: {}", load_text(load_end));
    if let Some(path) = &a.json {
        let peer_json: Vec<_> = tables
            .iter()
            .enumerate()
            .map(|(t, rows)| {
                let (key, what) = (peers[t].key(), peers[t].describe());
                json::peer_table(key, &what, rows, &all_targets[t], &mins[t])
            })
            .collect();
        let j = json!({
            "cycle_us": period as f64 / 1e3,
            "seconds_per_row": seconds as f64 / 1e9,
            "rounds": rounds,
            "network": a.network,
            "cyclic_frame_bytes": frame_len,
            "veth": {"near": v.near, "far": v.far, "namespace": v.ns},
            "cpus": ecat::netns::cpus(),
            "ethercrab_version": ethercrab::version(),
            "cpu_dma_latency_held": dma.is_ok(),
            "load_average": {"start": load_start, "end": load_end, "after_each_round": round_loads},
            "legend": report::legend(rounds),
            "peers": peer_json,
            // The first peer's table, where readers of the one-table form look for it.
            "rows": peer_json[0]["rows"],
            "best_link": peer_json[0]["best_link"],
            "peer_preempted_per_s": peer_json[0]["peer_preempted_per_s"],
            "targets": peer_json[0]["targets"],
            "min_cycle": peer_json[0]["min_cycle"],
            "wake": if a.no_wake { serde_json::Value::Null } else { json::wake(&wakes, &timer) },
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
