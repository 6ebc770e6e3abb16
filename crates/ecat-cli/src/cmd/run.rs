//! `ecat run`: the main job. Open the link (the built-in simulated network when no interface
//! is given, and the first line says so), scan, configure every SubDevice from its SII (or a
//! PDO configuration file), go to OP, cycle at `--cycle` for `--duration`, report the figures
//! users know (`PerfMsmt` lines) every few seconds, and on Ctrl-C or at the end bring every
//! SubDevice back to INIT and print the totals, with the CPU load of the cycle thread and of
//! the whole process over the cycling. `--json FILE` writes the same figures.
//!
//! The application part of the cycle (`--profile`): `velocity` plays seed 000's 40 s velocity
//! profile on every CiA 402 drive (precomputed before the cycle starts; drives in cyclic
//! synchronous velocity mode, or profile velocity where CSV is missing) and reports each
//! drive's following error; `counter` makes every output byte count up (seed 003's style).
//! The default is `velocity` when the bus has drives, else `counter`. Without an interface the
//! built-in simulated network is `servo6`, seed 000's six drives.

use super::CmdResult;
use crate::output::list_line;
use crate::units::parse_ns;
use crate::BusArgs;
use ecat::cpu_load::CpuLoad;
use ecat::cycle::{self, CycleOptions, LoopCounters};
use ecat::dc::setup::DcOptions;
use ecat::dc::{DcMode, DcRuntime};
use ecat::domain::DomainState;
use ecat::latency_hold::LatencyHold;
use ecat::link::loss::{LossReport, LossSnapshot};
use ecat::perf::{Metric, Perf, Summary};
use ecat::runtime::{Activation, Runtime};
use ecat::servo::{find_drives, ServoApp, VelocityProfile};
use ecat_wire::al::AlState;
use serde_json::json;
use std::time::Instant;

/// Options of `ecat run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    tap: super::tap::TapArgs,
    /// Cycle time (e.g. 1ms, 500us; a bare number is microseconds; at least 20us); default
    /// 1ms, or with --eni the ENI's cycle time
    #[arg(long = "cycle", value_name = "CYCLE", allow_hyphen_values = true,
          value_parser = |s: &str| parse_cycle(s))]
    cycle_arg: Option<u64>,
    /// The cycle time in effect (from `--cycle`, the ENI, or 1 ms).
    #[arg(skip)]
    cycle: u64,
    /// How long to run (e.g. 10s, 5m; a bare number is seconds; 0 = until Ctrl-C)
    #[arg(long, default_value = "10s", allow_hyphen_values = true,
          value_parser = |s: &str| parse_duration(s))]
    duration: u64,
    /// Print the PerfMsmt lines this often (at least 100ms)
    #[arg(long, default_value = "2s", allow_hyphen_values = true,
          value_parser = |s: &str| parse_report_every(s))]
    report_every: u64,
    /// Write the figures as JSON to this file at the end
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
    /// Write an SVG histogram per figure into this directory at the end
    #[arg(long, value_name = "DIR")]
    plot: Option<std::path::PathBuf>,
    /// PDO configuration file (TOML); SubDevices not in it are configured from their SII
    #[arg(long, value_name = "FILE", conflicts_with = "eni")]
    pdo_config: Option<std::path::PathBuf>,
    /// Hot-connect groups (TOML): parts of the bus that may leave and join while the rest
    /// cycles, each a head (by alias, or identity at a position) and the SubDevices behind it
    #[arg(long, value_name = "FILE", conflicts_with = "eni")]
    hot_connect: Option<std::path::PathBuf>,
    /// Run the bus as this ENI file (ETG.2100) describes it: checked slave by slave, its init
    /// commands, process image offsets and expected working counters
    #[arg(long, value_name = "FILE")]
    eni: Option<std::path::PathBuf>,
    /// Application: velocity (CiA 402 drives follow seed 000's profile) or counter
    #[arg(long, value_enum)]
    profile: Option<Profile>,
    /// Distributed clocks: auto (on when SubDevices use SYNC0), off, or a mode
    #[arg(long, value_enum, default_value = "auto")]
    dc: DcChoice,
    /// Run the cycle with SCHED_FIFO at this priority (1..99); without it the cycle takes
    /// SCHED_FIFO 80 and locks memory when permitted
    #[arg(long, conflicts_with = "no_rt")]
    priority: Option<i32>,
    /// Run as an ordinary thread: no SCHED_FIFO, no memory locking unless asked for, and the
    /// CPU idle states not held off
    #[arg(long)]
    no_rt: bool,
    /// Do not hold /dev/cpu_dma_latency at 0 while cycling (by default the CPUs are kept out
    /// of deep idle states, as cyclictest does, which saves tens of µs per wake-up)
    #[arg(long)]
    no_latency_hold: bool,
    /// Pin the cycle thread to this CPU
    #[arg(long)]
    cpu: Option<usize>,
    /// Lock memory (mlockall) and prefault the stack
    #[arg(long)]
    lock_memory: bool,
    /// Bridge EoE: a TAP interface eoe<MASTER>s<POSITION> per SubDevice that serves EoE
    /// (needs CAP_NET_ADMIN; without it the run goes on without EoE)
    #[arg(long)]
    eoe: bool,
    /// With --eoe: set a SubDevice's EoE IP address once in OP (set-IP-parameter request),
    /// e.g. 2=192.168.9.3/24; repeatable
    #[arg(long, value_name = "POS=A.B.C.D/LEN", requires = "eoe",
          value_parser = super::eoe::parse_pos_ip)]
    eoe_ip: Vec<(usize, ecat_wire::eoe::IpParams)>,
    /// Master index in the EoE interface names (IgH: eoe<MASTER>s<POSITION>)
    #[arg(long, default_value = "0", value_name = "MASTER")]
    eoe_master: u32,
    /// Wake this early and spin to the cycle boundary (e.g. 20us)
    #[arg(long, default_value = "0", value_parser = |s: &str| parse_ns(s, 1_000))]
    busy_wait: u64,
    /// Print every per-SubDevice line (DC delays, state changes, the final list) even on a
    /// large bus, where they are summarised otherwise
    #[arg(short, long)]
    verbose: bool,
}

/// Above this many SubDevices, per-SubDevice lines are summarised unless `-v`.
const LIST_LIMIT: usize = 32;

/// Print the supervisor's events; without `verbose`, when more than [`LIST_LIMIT`] events of
/// one kind (in STATE, lost, back) come at once, one line per kind says how many.
fn print_events(rt: &mut Runtime, verbose: bool) {
    let mut events = Vec::new();
    while let Some(e) = rt.next_event() {
        events.push(e);
    }
    print!("{}", events_text(&events, verbose));
    // The CoE emergencies SubDevices sent since the last call.
    while let Some((p, e)) = rt.take_emergency() {
        let sub = rt.supervisor().states().nth(p);
        let who = sub.map_or(format!("SubDevice {p}"), |s| s.info.who().to_string());
        println!("{who}: {}", ecat::mailbox::emergency::describe(&e));
    }
}

/// What a summary line calls an event's kind, for the kinds that are summarised.
fn event_kind(e: &ecat::supervisor::Event) -> Option<(String, u64)> {
    use ecat::supervisor::Event;
    match e {
        Event::Reached { state, cycle, .. } => Some((format!("are in {state}"), *cycle)),
        Event::Lost { cycle, .. } => Some(("were lost (no answer)".into(), *cycle)),
        Event::Found { cycle, .. } => Some(("are back and being configured again".into(), *cycle)),
        _ => None,
    }
}

fn events_text(events: &[ecat::supervisor::Event], verbose: bool) -> String {
    let kinds: Vec<Option<(String, u64)>> = events.iter().map(event_kind).collect();
    let count = |k: &str| kinds.iter().flatten().filter(|(x, _)| x == k).count();
    let mut out = String::new();
    let mut done: Vec<String> = Vec::new();
    for (e, k) in events.iter().zip(&kinds) {
        match k {
            Some((kind, _)) if !verbose && count(kind) > LIST_LIMIT => {
                if done.contains(kind) {
                    continue;
                }
                let cycles = kinds
                    .iter()
                    .flatten()
                    .filter(|(x, _)| x == kind)
                    .map(|c| c.1);
                let (lo, hi) = cycles.fold((u64::MAX, 0), |(l, h), c| (l.min(c), h.max(c)));
                let when = if lo == hi {
                    format!("cycle {lo}")
                } else {
                    format!("cycles {lo}-{hi}")
                };
                out += &format!(
                    "{when}: {} SubDevices {kind} (-v lists them)\n",
                    count(kind)
                );
                done.push(kind.clone());
            }
            _ => out += &format!("{e}\n"),
        }
    }
    out
}

/// The DC delays for the setup line: every SubDevice's with `verbose` or on a small bus,
/// else a summary (count, range, the last one).
fn dc_delays_text(subs: &[ecat::SubDevice], verbose: bool) -> String {
    let d: Vec<(u16, u32)> = subs
        .iter()
        .filter_map(|s| s.dc.map(|d| (s.position, d.delay_ns)))
        .collect();
    if verbose || d.len() <= LIST_LIMIT {
        return d
            .iter()
            .map(|(p, ns)| format!("{p}:{ns}ns"))
            .collect::<Vec<_>>()
            .join(" ");
    }
    let max = d.iter().map(|x| x.1).max().unwrap_or(0);
    let (lp, lns) = d.last().copied().unwrap_or((0, 0));
    format!(
        "{} DC SubDevices, 0..{max} ns from the reference, last {lp}:{lns}ns (-v lists all)",
        d.len()
    )
}

/// What the application part of the cycle does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    /// Seed 000: CiA 402 drives follow a velocity profile.
    Velocity,
    /// Every output byte counts up.
    Counter,
    /// Outputs stay as they are (zero); the default with `--eni`.
    Hold,
}

/// Distributed clocks choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DcChoice {
    /// On when any SubDevice's SII asks for SYNC0, with the MainDevice following the
    /// reference clock (on a host without hardware timestamps the send jitter would otherwise
    /// be written into the reference clock).
    Auto,
    /// No distributed clocks.
    Off,
    /// The reference clock follows the MainDevice's time (IgH's default).
    RefFollowsMaster,
    /// The MainDevice's cycle follows the reference clock (SOEM/ethercrab style).
    MasterFollowsRef,
}

/// `--cycle`: a duration of at least [`cycle::MIN_PERIOD_NS`].
fn parse_cycle(s: &str) -> Result<u64, String> {
    let ns = parse_ns(s, 1_000)?;
    if ns < cycle::MIN_PERIOD_NS {
        return Err(format!(
            "a cycle time of '{s}' is too short: the smallest accepted cycle is {} us",
            cycle::MIN_PERIOD_NS as f64 / 1e3
        ));
    }
    Ok(ns)
}

/// The longest `--duration` taken (one year); 0 means until Ctrl-C.
const MAX_DURATION_NS: u64 = 366 * 24 * 3600 * 1_000_000_000;

/// `--duration`: 0 (until Ctrl-C) up to a year.
fn parse_duration(s: &str) -> Result<u64, String> {
    let ns = parse_ns(s, 1_000_000_000)?;
    if ns > MAX_DURATION_NS {
        return Err(format!(
            "a duration of '{s}' is more than a year: use 0 to run until Ctrl-C"
        ));
    }
    Ok(ns)
}

/// `--report-every`: at least 100 ms.
fn parse_report_every(s: &str) -> Result<u64, String> {
    let ns = parse_ns(s, 1_000_000_000)?;
    if ns < 100_000_000 {
        return Err(format!(
            "reporting every '{s}' is too often: give at least 100ms"
        ));
    }
    Ok(ns)
}

/// The default network of `ecat run`.
const DEFAULT_NETWORK: &str = "sim:servo6";

/// Run `ecat run`.
pub fn run(mut a: Args) -> CmdResult {
    let eni = a
        .eni
        .as_ref()
        .map(|p| super::eni_run::load(p))
        .transpose()?;
    let eni_cycle = eni
        .as_ref()
        .and_then(|e| e.cyclic.first())
        .and_then(|c| c.cycle_time_us)
        .map(|us| us as u64 * 1000)
        .filter(|&ns| ns >= cycle::MIN_PERIOD_NS);
    a.cycle = a.cycle_arg.or(eni_cycle).unwrap_or(1_000_000);
    let opts = CycleOptions {
        period_ns: a.cycle,
        duration_ns: a.duration,
        priority: a.priority,
        cpu: a.cpu,
        lock_memory: a.lock_memory,
        busy_wait_ns: a.busy_wait,
        report_interval_ns: a.report_every,
        auto_realtime: !a.no_rt,
    };
    // Refuse impossible numbers before anything starts.
    opts.validate()?;
    crate::signals::install();
    let spec = match &a.bus.interface {
        Some(i) => i.clone(),
        None => {
            println!("ecat run: no interface given; running on the built-in simulated network {DEFAULT_NETWORK} (six CiA 402 drives; use -i IFACE for real hardware)");
            DEFAULT_NETWORK.to_string()
        }
    };
    let t0 = Instant::now();
    let mut md = a.tap.open(&spec)?;
    println!("link: {}", md.bus().link().describe());
    md.scan()?;
    println!(
        "scan: {} SubDevices in {:.1} ms",
        md.subdevices().len(),
        t0.elapsed().as_secs_f64() * 1e3
    );
    let (mut rt, profile, per_rad, eni_image) = match &eni {
        Some(eni) => {
            if let Some(c) = eni.cyclic.first().and_then(|c| c.cycle_time_us) {
                println!(
                    "ENI cycle time {c} us; cycling at {:.0} us",
                    a.cycle as f64 / 1e3
                );
            }
            let (choice, cycle, verbose) = (a.dc, a.cycle, a.verbose);
            let (rt, image) =
                super::eni_run::activate(md, eni, |md| setup_dc(md, choice, cycle, verbose))?;
            let profile = a.profile.unwrap_or(Profile::Hold);
            if profile == Profile::Velocity {
                return Err(
                    "--profile velocity is not available with --eni; use counter or hold".into(),
                );
            }
            (rt, profile, 0.0, Some(image))
        }
        None => {
            let (rt, profile, per_rad) = activate_auto(md, &a)?;
            (rt, profile, per_rad, None)
        }
    };
    describe_layout(&rt);
    // `-m N`: be master N for the ecat tool (`ecat slaves -m N`, `ecat data -m N`, ...).
    let _control = match a.bus.master {
        Some(n) => {
            let c = rt.serve_control(n)?;
            println!(
                "control socket: {} (ecat slaves -m {n}, ecat data -m {n}, ...)",
                c.path().display()
            );
            Some(c)
        }
        None => None,
    };
    let eoe = a
        .eoe
        .then(|| super::eoe::start_bridge(&mut rt, a.eoe_master))
        .flatten();
    let t1 = Instant::now();
    let bringup = rt.run_until_state(AlState::Op, a.cycle, 10_000_000_000 / a.cycle.max(1));
    print_events(&mut rt, a.verbose);
    bringup?;
    let sup = rt.supervisor();
    let absent: usize = (0..sup.group_count())
        .filter(|&g| !sup.group_present(g))
        .filter_map(|g| sup.group_members(g).map(|m| m.len()))
        .sum();
    println!(
        "all {} SubDevices in OP after {} cycles ({:.1} ms){}",
        sup.states().count() - absent,
        rt.cycle_count(),
        t1.elapsed().as_secs_f64() * 1e3,
        match absent {
            0 => String::new(),
            n => format!("; {n} of absent hot-connect groups wait to be plugged in"),
        }
    );
    super::eoe::set_ips(&rt, &a.eoe_ip);
    let mut rt_notes = cycle::realtime_setup(&opts)?;
    // Held until the end of `run` (the figures are printed while it holds; it goes before the
    // bus is brought down, which needs no real-time).
    let _latency_hold = (!a.no_rt && !a.no_latency_hold)
        .then(|| LatencyHold::acquire("pass --no-latency-hold to cycle without it"))
        .and_then(|r| r.map_err(|e| eprintln!("ecat run: {e}")).ok());
    if _latency_hold.is_some() {
        rt_notes.push(ecat::latency_hold::NOTE.into());
    }
    println!("real-time: {}", rt_notes.join(", "));
    println!(
        "cycle {:.0} us, {}",
        a.cycle as f64 / 1e3,
        if a.duration == 0 {
            "until Ctrl-C".to_string()
        } else {
            format!("for {:.1} s", a.duration as f64 / 1e9)
        }
    );
    let mut perf = Perf::new();
    let mut incomplete_cycles = 0u64;
    let mut by_second = super::run_seconds::Seconds::default();
    let period_ns = a.cycle;
    // Precomputed before the cycle starts.
    let mut servo = (profile == Profile::Velocity).then(|| {
        ServoApp::new(
            find_drives(&rt),
            VelocityProfile::seed000(2.0, per_rad, a.cycle, a.duration),
        )
    });
    let mut app = |rt: &mut Runtime, cycle: u64| {
        if rt.supervisor().all_running() {
            let mut any = false;
            for d in 0..rt.domains().len() {
                if rt.domain(d).state() != DomainState::Complete {
                    incomplete_cycles += 1;
                    any = true;
                }
            }
            by_second.record(cycle * period_ns / 1_000_000_000, any);
        }
        match servo.as_mut() {
            Some(s) => s.step(rt, cycle),
            None if profile == Profile::Hold => {}
            None => {
                let d = rt.domain_mut(0);
                for (i, b) in d.outputs_mut().iter_mut().enumerate() {
                    *b = (cycle as u8).wrapping_add(i as u8);
                }
            }
        }
    };
    let loss_start = loss_snapshot(&mut rt);
    let started = Instant::now();
    let rss_start = rss_kib();
    let mut rss_per_minute: Vec<u64> = Vec::new();
    let verbose = a.verbose;
    let mut ring = super::tap::RingWatch::default();
    let mut report = |perf: &mut Perf, rt: &mut Runtime, c: &LoopCounters| {
        print_events(rt, verbose);
        if let Some(l) = ring.line(rt) {
            println!("{l}");
        }
        while rss_per_minute.len() < perf.minutes().len() {
            let n = rss_per_minute.len();
            let row = perf.minutes()[n];
            let rss = rss_kib();
            rss_per_minute.push(rss);
            let us = |m: Metric| row[m as usize] as f64 / 1e3;
            println!(
                "minute {} worst [usec]: cycle time {:.1}, wake-up latency {:.1}, task duration {:.1}, round trip {:.1}; RSS {rss} KiB",
                n + 1,
                us(Metric::CycleTime),
                us(Metric::WakeLatency),
                us(Metric::TaskDuration),
                us(Metric::RoundTrip)
            );
        }
        let w = perf.take_window();
        print!("{}", Perf::lines(&w));
        println!("{}", status_line(rt, c, started.elapsed().as_secs_f64()));
    };
    let load = CpuLoad::start();
    let result = cycle::run(
        &mut rt,
        &opts,
        &crate::signals::STOP,
        &mut perf,
        &mut app,
        &mut report,
    );
    let cpu = load.finish();
    print_events(&mut rt, a.verbose);
    let counters = result?;
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "--- totals over {elapsed:.1} s, {} cycles ---",
        counters.cycles
    );
    let totals: [Summary; ecat::perf::METRICS] =
        core::array::from_fn(|i| perf.total(Metric::ALL[i]));
    print!("{}", Perf::lines(&totals));
    println!("{}", status_line(&rt, &counters, elapsed));
    println!("{}", cpu.line());
    if let Some(b) = eoe {
        // The bridge stops here: the TAP interfaces go before the bus leaves OP.
        super::eoe::print_totals(&b);
    }
    println!("domain cycles not complete while all SubDevices were in OP: {incomplete_cycles}");
    by_second.fold();
    if let Some(l) = by_second.line() {
        println!("{l}");
    }
    let losses = LossReport::between(&loss_start, &loss_snapshot(&mut rt));
    print!("{}", losses.text());
    if let Some(image) = &eni_image {
        println!("ENI variables at the end:");
        super::eni_run::print_vars(&rt, image);
    }
    let rss_end = rss_kib();
    println!("memory: RSS {rss_start} KiB at the start of cycling, {rss_end} KiB at the end");
    if let Some(dir) = &a.plot {
        let figs: Vec<_> = Metric::ALL.iter().map(|&m| (m, perf.figure(m))).collect();
        let title = format!("{spec}, {:.0} us cycle", a.cycle as f64 / 1e3);
        for f in crate::plot::write_all(dir, &figs, &title)? {
            println!("histogram: {f}");
        }
    }
    let mut drives_json = Vec::new();
    if let Some(s) = servo.as_mut() {
        for (io, state, f) in s.results() {
            println!(
                "drive {}: {state}; velocity following error max {:.4} rad/s, steady-state max {:.4} rad/s, rms {:.4} rad/s over {} cycles; faults {}",
                io.position,
                f.max_abs as f64 / per_rad,
                f.max_abs_steady as f64 / per_rad,
                f.rms() / per_rad,
                f.samples,
                f.faults
            );
            drives_json.push(json!({
                "position": io.position, "state": state.name(), "samples": f.samples, "faults": f.faults,
                "following_error_max_rad_s": f.max_abs as f64 / per_rad,
                "following_error_steady_max_rad_s": f.max_abs_steady as f64 / per_rad,
                "following_error_rms_rad_s": f.rms() / per_rad,
            }));
        }
        // Power the drives down before leaving OP.
        s.disable();
        for c in 0..2_000u64 {
            rt.tx_rx(a.cycle)?;
            s.step(&mut rt, counters.cycles + c);
            if s.results()
                .all(|(_, st, _)| st == ecat::cia402::State::SwitchOnDisabled)
            {
                break;
            }
            std::thread::sleep(std::time::Duration::from_nanos(a.cycle));
        }
    }
    if let Some(path) = &a.json {
        let mut j = super::run_json::figures(
            &rt,
            &perf,
            &counters,
            incomplete_cycles,
            elapsed,
            &spec,
            a.cycle,
        );
        j["drives"] = serde_json::Value::Array(drives_json);
        j["losses"] = super::run_json::losses(&losses);
        j["cpu_load"] = super::run_json::cpu_load(&cpu);
        j["memory"] = json!({ "rss_kib_start": rss_start, "rss_kib_end": rss_end, "rss_kib_per_minute": rss_per_minute });
        std::fs::write(path, serde_json::to_string_pretty(&j)?)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("figures written to {}", path.display());
    }
    println!("stopping: requesting INIT from every SubDevice");
    let stop_result = rt.run_until_state(AlState::Init, a.cycle.max(100_000), 5_000);
    print_events(&mut rt, a.verbose);
    stop_result?;
    a.tap.report(&rt);
    let states = crate::output::runtime_subdevices(&rt);
    if a.verbose || states.len() <= LIST_LIMIT {
        for i in 0..states.len() {
            println!("{}", list_line(&states, i));
        }
    } else {
        let init = states
            .iter()
            .filter(|s| s.al_status.state() == Some(AlState::Init))
            .count();
        println!(
            "{} SubDevices, {init} in INIT (-v lists them)",
            states.len()
        );
    }
    Ok(())
}

/// Configure from the SII, CoE or a PDO file and activate (without `--eni`).
fn activate_auto(
    mut md: ecat::MainDevice,
    a: &Args,
) -> Result<(Runtime, Profile, f64), Box<dyn std::error::Error>> {
    // Each SubDevice's configuration: from the PDO file where it lists one (written to CoE
    // SubDevices as startup SDOs, replayed on every reconfiguration), else as it is now
    // (over CoE, or from the SII).
    let hot_connect = match &a.hot_connect {
        Some(path) => crate::hotfile::load(path, &a.bus.esi_dir)?,
        None => Vec::new(),
    };
    // Groups absent now but described by their members are laid out before anything uses
    // positions.
    let placed = md.place_absent_groups(&hot_connect)?;
    if !placed.is_empty() {
        println!(
            "hot connect: {} SubDevice(s) of absent groups laid out from their descriptions",
            placed.len()
        );
    }
    let mut configs = md.discover_configs()?;
    for n in md.notes() {
        println!("note: {n}");
    }
    let mut startup_sdos = vec![Vec::new(); configs.len()];
    let mut fixed_positions = Vec::new();
    if let Some(path) = &a.pdo_config {
        for (p, c) in crate::pdofile::load(path, md.subdevices())?
            .into_iter()
            .enumerate()
        {
            if let Some(c) = c {
                // Written at activation by IgH's rules (only what differs, where allowed).
                fixed_positions.push(p);
                configs[p] = c;
            }
        }
    }
    // (Drives of a hot-connect group absent now are not driven by the profile.)
    let drives: Vec<usize> = (0..configs.len())
        .filter(|&p| {
            !md.subdevices()[p].absent_at_scan
                && configs[p].entry_bit_offset(0x6040, 0).is_some()
                && configs[p].entry_bit_offset(0x60FF, 0).is_some()
        })
        .collect();
    let profile = a.profile.unwrap_or(if drives.is_empty() {
        Profile::Counter
    } else {
        Profile::Velocity
    });
    let mut per_rad = 0.0;
    if profile == Profile::Velocity {
        if drives.is_empty() {
            return Err("--profile velocity needs CiA 402 drives (controlword 0x6040 and target velocity 0x60FF in their outputs); this bus has none".into());
        }
        for &p in &drives {
            let modes = u32_of(&md.sdo_upload(p, 0x6502, 0, false).unwrap_or_default());
            let mode: u8 = if modes & (1 << 8) != 0 { 9 } else { 3 };
            startup_sdos[p].push(ecat::mailbox::sdo::SdoOp::Download {
                index: 0x6060,
                subindex: 0,
                complete_access: false,
                data: vec![mode],
            });
        }
        let inc = u32_of(&md.sdo_upload(drives[0], 0x608F, 1, false)?);
        let rev = u32_of(&md.sdo_upload(drives[0], 0x608F, 2, false)?).max(1);
        per_rad = inc as f64 / rev as f64 / std::f64::consts::TAU;
        println!(
            "profile: seed 000 velocity profile (2 rad/s, 10 s each way with rests) on {} drives; {inc} increments per {rev} revolution(s)",
            drives.len()
        );
    }
    let dc = setup_dc(&mut md, a.dc, a.cycle, a.verbose)?;
    let rt = md.activate(Activation {
        configs: Some(configs),
        startup_sdos,
        dc,
        hot_connect,
        fixed_positions,
        ..Default::default()
    })?;
    for g in 0..rt.supervisor().group_count() {
        if let Some(m) = rt.supervisor().group_members(g) {
            println!(
                "hot-connect group \"{}\": positions {}-{}, {}",
                rt.supervisor().group_name(g).unwrap_or_default(),
                m.start,
                m.end.saturating_sub(1),
                if rt.supervisor().group_present(g) {
                    "present"
                } else {
                    "absent"
                }
            );
        }
    }
    Ok((rt, profile, per_rad))
}

/// Distributed clocks as `--dc` asks, when SubDevices use SYNC0 (or when forced).
fn setup_dc(
    md: &mut ecat::MainDevice,
    choice: DcChoice,
    cycle_ns: u64,
    verbose: bool,
) -> Result<Option<DcRuntime>, Box<dyn std::error::Error>> {
    let wants_sync0 = md
        .subdevices()
        .iter()
        .any(|s| s.dc_assign_activate & 0x0300 != 0);
    let mode = match choice {
        DcChoice::Off => None,
        DcChoice::Auto if !wants_sync0 => None,
        DcChoice::RefFollowsMaster => Some(DcMode::ReferenceFollowsMaster),
        DcChoice::Auto | DcChoice::MasterFollowsRef => Some(DcMode::MasterFollowsReference),
    };
    let mut dc = None;
    if let Some(mode) = mode {
        let t = Instant::now();
        match md.configure_dc(DcOptions::default())? {
            Some(setup) => {
                let diff = md.dc_max_difference()?;
                println!(
                    "DC: reference clock SubDevice {}, {mode:?}, SYNC0 every {:.0} us; delays {}; max |system time difference| after static compensation {diff} ns ({:.0} ms)",
                    setup.reference_position,
                    cycle_ns as f64 / 1e3,
                    dc_delays_text(md.subdevices(), verbose),
                    t.elapsed().as_secs_f64() * 1e3
                );
                dc = Some(DcRuntime {
                    setup,
                    mode,
                    cycle_ns,
                    shift_ns: 0,
                });
            }
            None => println!("DC: no SubDevice supports distributed clocks"),
        }
    }
    Ok(dc)
}

/// Resident memory of this process in KiB (VmRSS), 0 if unknown.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// A little-endian u32 from up to 4 bytes.
pub fn u32_of(d: &[u8]) -> u32 {
    let mut b = [0u8; 4];
    for (i, x) in d.iter().take(4).enumerate() {
        b[i] = *x;
    }
    u32::from_le_bytes(b)
}

fn describe_layout(rt: &Runtime) {
    for d in rt.domains() {
        let cmds: Vec<String> = d
            .plans
            .iter()
            .map(|p| format!("{} {} bytes", p.command, p.len))
            .collect();
        println!(
            "domain {}: {} bytes out, {} bytes in, logical 0x{:08X}, {}, expected WKC {}",
            d.index,
            d.outputs_len,
            d.inputs_len,
            d.logical_base,
            cmds.join(" + "),
            d.expected_wkc()
        );
    }
    let (frames, bytes) = rt.frame_layout();
    println!("cyclic frames: {frames} per cycle, {bytes} bytes on the wire");
}

/// The counters losses are attributed from (see `ecat::link::loss`).
fn loss_snapshot(rt: &mut Runtime) -> LossSnapshot {
    let drops = rt.link_mut().kernel_drops();
    LossSnapshot::take(rt.counters().0, drops, rt.link().name())
}

fn status_line(rt: &Runtime, c: &LoopCounters, elapsed: f64) -> String {
    let (cy, en, _) = rt.counters();
    let doms: Vec<String> = rt
        .domains()
        .iter()
        .map(|d| {
            format!(
                "domain {} {} (WKC {}/{})",
                d.index,
                d.state().name(),
                d.wkc(),
                d.expected_wkc()
            )
        })
        .collect();
    let running = rt.supervisor().states().filter(|x| x.running).count();
    let total = rt.supervisor().states().count();
    format!(
        "t={elapsed:.1}s cycles {}: {}; {running}/{total} SubDevices in {}; frames sent {} lost {} late {} corrupted {}; overruns {}; acyclic resent {}",
        c.cycles,
        doms.join(", "),
        rt.supervisor().target(),
        cy.frames_sent,
        cy.frames_lost,
        cy.frames_late,
        cy.frames_corrupted,
        c.overruns,
        en.resent,
    )
}
