//! `ecat sim -i IFACE -n NETWORK`: answer EtherCAT frames on a network interface with a
//! simulated network, until SIGINT or SIGTERM.
//!
//! The loop is the simplest possible wire: receive a frame on the raw socket (our own
//! transmitted answers are never received back, see `ecat::link::raw`), let the network
//! process it in place, send it back — later if the network's faults delay it, twice if they
//! duplicate it, never if they drop it (as a real ring would not answer). Options let tests pin
//! device inputs (`--set-inputs 2=a5`) and watch the outputs devices apply (`--trace-outputs`
//! prints a line whenever they change, `--trace-states` whenever a device's AL status or code
//! does). With `--backup IFACE` the network (which must be a ring, `ring = true`) has its
//! far end on a second interface: frames are answered on the port they leave by, and the
//! network file's `break`/`heal` events cut and reconnect cables while it runs.
//!
//! A frame goes back before the firmware work it causes in the devices (mailbox, process
//! data, behaviour), which runs when no frame is waiting (`Network::set_deferred_pdi`): the
//! frames of one cycle, sent back to back, then return after the frame processing alone.
//! A long line runs on two threads (`--threads`, `sim_pipeline`): the second half of the
//! SubDevices on a worker that takes each frame from the first half, so that the two halves
//! work on different frames at the same time and the simulator keeps up with about twice
//! the frame rate, which on a network of a thousand SubDevices is what comes close to a
//! 1 ms cycle (`--cpus` pins the two threads).

use super::CmdResult;
use crate::select::parse_u16;
use ecat::link::raw::RawSocket;
use ecat::link::Link;
use ecat_sim::{FrameFate, Network};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Options of `ecat sim`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Network interface to answer on (e.g. one end of a veth pair)
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    interface: String,
    /// Network: a preset name (io, servo, ...) or a network TOML file
    #[arg(short = 'n', long = "network", default_value = "io")]
    network: String,
    /// Simulate the slaves of this ENI file instead: ESI devices where the ESI library has
    /// the slave's vendor, product and revision, else generic devices shaped by the ENI
    #[arg(long, value_name = "FILE", conflicts_with = "network")]
    eni: Option<std::path::PathBuf>,
    /// ESI directory for `--eni` (repeatable; added to ECAT_ESI_PATH)
    #[arg(long = "esi-dir", value_name = "DIR", requires = "eni")]
    esi_dir: Vec<std::path::PathBuf>,
    /// Pin a device's inputs: POSITION=HEXBYTES (repeatable), e.g. 2=a5
    #[arg(long = "set-inputs", value_name = "POS=HEX")]
    set_inputs: Vec<String>,
    /// Print `outputs POSITION HEX` whenever a device applies new outputs
    #[arg(long)]
    trace_outputs: bool,
    /// Print `state POSITION 0xSTATUS code 0xCODE` whenever a device's AL status (0x0130) or
    /// AL status code (0x0134) changes, starting with every device's power-up state
    #[arg(long)]
    trace_states: bool,
    /// At stop, print each ESC's DC registers as written by the MainDevice
    /// (`dc POSITION delay NS offset NS`) and its true propagation delay
    #[arg(long)]
    dump_dc: bool,
    /// Cable redundancy: the interface the ring's last SubDevice is cabled to (the network
    /// must have `ring = true`)
    #[arg(long, value_name = "IFACE")]
    backup: Option<String>,
    /// Wait for frames by polling the socket instead of sleeping: the simulator keeps its CPU
    /// and the CPU's caches between frames (on a virtual machine a sleeping CPU is given to
    /// others), which a network of hundreds of SubDevices at a 1 ms cycle needs; uses a whole
    /// CPU. Under a real-time policy (chrt) it needs RT throttling off (`sysctl -w
    /// kernel.sched_rt_runtime_us=-1`), else the kernel stops it 50 ms of every second (said
    /// at start). Not with --backup
    #[arg(long, conflicts_with = "backup")]
    spin: bool,
    /// Threads to run the line on: with 2, the first half of the SubDevices runs on one
    /// thread and the second half on another, each on a different frame at the same time
    /// (as real ESCs do), which about doubles the frame rate a long line keeps up with; a
    /// ring, injected faults or scheduled events stay on one thread (said at start).
    /// Default: 2 for lines of 256 SubDevices or more when the machine has two CPUs and
    /// neither --backup nor a trace option is given, else 1
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=2),
          conflicts_with_all = ["backup", "trace_outputs", "trace_states"])]
    threads: Option<u8>,
    /// Pin the simulator to CPUs: the first for the thread that receives (and runs the
    /// first half of the line), the second for the second thread, e.g. `--cpus 0,1`; each
    /// half then keeps its state in its own CPU's caches
    #[arg(long, value_name = "CPU[,CPU]", value_delimiter = ',', num_args = 1..=2)]
    cpus: Vec<usize>,
}

/// Lines from this many SubDevices on run on two threads unless told otherwise.
const AUTO_TWO_THREADS_FROM: usize = 256;

/// How many threads to run `net` on (see `--threads`).
fn threads_for(a: &Args, net: &Network) -> u8 {
    if let Some(t) = a.threads {
        return t;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plain = a.backup.is_none() && !a.trace_outputs && !a.trace_states;
    if plain && cpus >= 2 && net.esc_count() >= AUTO_TWO_THREADS_FROM {
        2
    } else {
        1
    }
}

fn parse_set(s: &str) -> Result<(usize, Vec<u8>), String> {
    let bad = || format!("'--set-inputs {s}' is not POSITION=HEXBYTES (e.g. 2=a5 or 4=0102)");
    let (p, h) = s.split_once('=').ok_or_else(bad)?;
    let pos = parse_u16(p).map_err(|_| bad())? as usize;
    let h = h.trim().trim_start_matches("0x");
    if h.is_empty() || !h.len().is_multiple_of(2) {
        return Err(bad());
    }
    let bytes = (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16))
        .collect::<Result<Vec<u8>, _>>()
        .map_err(|_| bad())?;
    Ok((pos, bytes))
}

/// Receive buffer the simulator asks for (bytes).
const SIM_RCVBUF: usize = 8 << 20;

/// Run `ecat sim`.
pub fn run(a: Args) -> CmdResult {
    let cpus = ecat::cycle::online_cpus();
    if let Some(c) = a.cpus.iter().find(|&&c| c >= cpus) {
        return Err(format!(
            "--cpus: CPU {c} does not exist: this machine has CPUs 0..{}",
            cpus - 1
        )
        .into());
    }
    let iface = a.interface.strip_prefix("raw:").unwrap_or(&a.interface);
    let (mut net, sources) = match &a.eni {
        Some(f) => {
            let eni = ecat_config::eni::Eni::from_path(f)?;
            let mut devices = ecat_sim::devices::esi::EsiDevices::new(a.esi_dir.clone());
            ecat_sim::eni::network_from_eni_with(&eni, &mut devices)?
        }
        None => (Network::open(&a.network)?, Vec::new()),
    };
    for s in &a.set_inputs {
        let (pos, bytes) = parse_set(s)?;
        net.set_inputs(pos, &bytes)
            .map_err(|e| format!("--set-inputs {s}: {e}"))?;
    }
    let mut backup = match &a.backup {
        Some(b) => {
            let b = b.strip_prefix("raw:").unwrap_or(b);
            if b == iface {
                return Err(format!("--backup {b} is the interface given with -i; give the second interface, the one the ring's far end is cabled to").into());
            }
            if !net.is_ring() {
                return Err(format!("--backup {b}: network '{}' is not a ring; add `ring = true` to its network file (or use -n ring8)", a.network).into());
            }
            let l = RawSocket::open(b)?;
            l.set_receive_buffer(SIM_RCVBUF);
            Some(l)
        }
        None => {
            // No backup port: the ring's last SubDevice ends the line.
            let _ = net.set_ring(false);
            None
        }
    };
    // Frames go back before the firmware work they cause, which runs while the simulator
    // waits for the next frame (a ring with a backup port keeps the plain order).
    net.set_deferred_pdi(true);
    let mut link = RawSocket::open(iface)?;
    // Room for a few seconds of frames: a stalled simulator answers late instead of
    // dropping what the MainDevice sent (dropped ones are reported at the end).
    link.set_receive_buffer(SIM_RCVBUF);
    crate::signals::install();
    let summary = net.summary();
    println!(
        "ecat sim: answering on {iface} with network '{}' ({} SubDevices)",
        a.eni
            .as_ref()
            .map_or(a.network.clone(), |f| format!("eni:{}", f.display())),
        summary.iter().filter(|s| !s.passive).count()
    );
    for s in &summary {
        match s.bus_position {
            Some(p) => println!(
                "  {p:<3} {:<8} vendor 0x{:08x} product 0x{:08x} revision 0x{:08x} alias {}  {}",
                s.order, s.vendor, s.product, s.revision, s.alias, s.name
            ),
            None => println!("  -   {:<8} passive terminal (no ESC)  {}", s.order, s.name),
        }
    }
    for line in &sources {
        println!("  {line}");
    }
    if a.spin {
        if let Some(w) = spin_throttle_warning(
            realtime_policy(),
            std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").ok(),
        ) {
            println!("{w}");
        }
    }
    use std::io::Write;
    std::io::stdout().flush()?;
    if let Some(&cpu) = a.cpus.first() {
        ecat::cycle::pin_current_thread(cpu, "ecat sim")?;
    }
    let epoch = Instant::now();
    let (mut answered, mut dropped) = (0u64, 0u64);
    let mut net = net;
    let mut pipelined = false;
    if threads_for(&a, &net) == 2 {
        match super::sim_pipeline::start(net, &link, a.cpus.get(1).copied()) {
            Ok(p) => {
                let pins = match a.cpus.as_slice() {
                    [x, y] => format!(" (CPUs {x} and {y})"),
                    _ => String::new(),
                };
                println!(
                    "ecat sim: two threads, SubDevices 0-{} on this one, {}-{} on the second{pins}",
                    p.split() - 1,
                    p.split(),
                    summary
                        .iter()
                        .filter(|s| !s.passive)
                        .count()
                        .saturating_sub(1)
                );
                std::io::stdout().flush()?;
                let served = super::sim_pipeline::serve(p, &mut link, a.spin, epoch)?;
                net = served.net;
                answered = served.answered;
                dropped = served.dropped;
                if served.report.send_errors > 0 {
                    println!(
                        "ecat sim: the second thread could not send {} frames (first: {})",
                        served.report.send_errors,
                        served.report.first_send_error.unwrap_or_default()
                    );
                }
                pipelined = true;
            }
            Err(e) => {
                println!("ecat sim: one thread: {}", e.reason);
                net = *e.network;
            }
        }
    }
    let mut buf = vec![0u8; 2048];
    let mut held: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut last_outputs: Vec<Vec<u8>> = vec![Vec::new(); net.esc_count()];
    let mut last_states: Vec<Option<(u16, u16)>> = vec![None; net.esc_count()];
    if a.trace_states {
        trace_states(&net, &mut last_states)?;
    }
    while !pipelined && !crate::signals::stopped() {
        // Release frames whose delay has passed.
        while held.front().is_some_and(|(t, _)| *t <= Instant::now()) {
            if let Some((_, f)) = held.pop_front() {
                link.send(&f)?;
            }
        }
        let mut deadline = Instant::now() + Duration::from_millis(100);
        if let Some((t, _)) = held.front() {
            deadline = deadline.min(*t);
        }
        if let Some(b) = backup.as_mut() {
            let now = || epoch.elapsed().as_nanos() as u64;
            match ecat::link::sim_ring::answer_one(
                &mut net, &mut link, b, &mut buf, deadline, &now,
            )? {
                Some(FrameFate::Returned { .. }) => answered += 1,
                Some(FrameFate::Dropped(_)) => dropped += 1,
                None => continue,
            }
        } else {
            let waiting = match link.recv(&mut buf, None)? {
                Some(n) => Some(n),
                None => {
                    // Idle: the firmware work the frames so far caused runs now (see
                    // `Network::set_deferred_pdi`), then wait for the next frame.
                    net.settle();
                    if a.spin {
                        spin_recv(&mut link, &mut buf, deadline)?
                    } else {
                        link.recv(&mut buf, Some(deadline))?
                    }
                }
            };
            let Some(n) = waiting else {
                continue;
            };
            let now = epoch.elapsed().as_nanos() as u64;
            match net.process(&mut buf[..n], now) {
                FrameFate::Returned {
                    delay_ns,
                    duplicate,
                } => {
                    let copies = if duplicate { 2 } else { 1 };
                    for _ in 0..copies {
                        if delay_ns == 0 {
                            link.send(&buf[..n])?;
                        } else {
                            held.push_back((
                                Instant::now() + Duration::from_nanos(delay_ns),
                                buf[..n].to_vec(),
                            ));
                        }
                    }
                    answered += 1;
                }
                FrameFate::Dropped(_) => dropped += 1,
            }
        }
        if a.trace_outputs || a.trace_states {
            net.settle();
        }
        if a.trace_outputs {
            for (pos, last) in last_outputs.iter_mut().enumerate() {
                if let Some(o) = net.outputs(pos) {
                    if o != last.as_slice() {
                        let hex: String = o.iter().map(|b| format!("{b:02x}")).collect();
                        println!("outputs {pos} {hex}");
                        *last = o.to_vec();
                    }
                }
            }
            std::io::stdout().flush()?;
        }
        if a.trace_states {
            trace_states(&net, &mut last_states)?;
        }
    }
    net.settle();
    if a.dump_dc {
        let now = epoch.elapsed().as_nanos() as u64;
        let pass = net.frame_passages(now);
        let r = pass.iter().flatten().next().map(|p| p.epu).unwrap_or(0);
        for pos in 0..net.esc_count() {
            if let Some(e) = net.subdevice(pos) {
                let delay = e.read_u32(ecat_wire::register::DC_SYSTEM_TIME_DELAY);
                let offset = e.read_u32(ecat_wire::register::DC_SYSTEM_TIME_OFFSET);
                let truth = pass
                    .get(pos)
                    .copied()
                    .flatten()
                    .map(|p| p.epu as i64 - r as i64)
                    .unwrap_or(-1);
                println!("dc {pos} delay {delay} offset {offset} true {truth}");
            }
        }
    }
    let c = net.counters();
    let socket = link
        .kernel_drops()
        .map_or("unknown".to_string(), |d| d.to_string());
    println!(
        "ecat sim: stopped; {answered} frames answered, {dropped} dropped (not EtherCAT {}, wrong type {}, malformed {}, no SubDevice {}, lost {} and corrupted {} by injected faults); frames the kernel dropped before the simulator read them: {socket}",
        c.dropped_not_ethercat,
        c.dropped_wrong_type,
        c.dropped_malformed,
        c.dropped_no_subdevice,
        c.dropped_lost,
        c.dropped_corrupted
    );
    Ok(())
}

/// Whether this process runs under a real-time policy (SCHED_FIFO or SCHED_RR, e.g. started
/// with `chrt -f`): field 41 of /proc/self/stat.
fn realtime_policy() -> bool {
    realtime_in_stat(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default())
}

/// [`realtime_policy`] from the text of a /proc/PID/stat.
fn realtime_in_stat(stat: &str) -> bool {
    // The fields after the command name (which may hold spaces and parentheses) start after
    // the last ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    // `rest` starts at field 3 (state): field 41 is its 39th.
    matches!(rest.split_whitespace().nth(38), Some("1" | "2"))
}

/// The warning `--spin` deserves when a real-time policy meets RT throttling: a thread that
/// polls without sleeping uses its CPU for the whole period, so the kernel stops it for the
/// rest of every period once it used `sched_rt_runtime_us` (50 ms of every second by
/// default): the frames of 50 cycles in a row then come back late.
fn spin_throttle_warning(realtime: bool, runtime_us: Option<String>) -> Option<String> {
    let runtime = runtime_us?.trim().to_string();
    (realtime && runtime != "-1").then(|| {
        format!(
            "ecat sim: warning: --spin under a real-time policy with RT throttling on (kernel.sched_rt_runtime_us = {runtime}): the kernel stops this thread for the rest of each period once it used that much, and the frames meanwhile come back late; run `sysctl -w kernel.sched_rt_runtime_us=-1` first, or spin without chrt"
        )
    })
}

/// Poll `link` without sleeping until a frame arrives or `deadline` passes (`--spin`).
pub(super) fn spin_recv(
    link: &mut RawSocket,
    buf: &mut [u8],
    deadline: Instant,
) -> ecat::error::Result<Option<usize>> {
    loop {
        if let Some(n) = link.recv(buf, None)? {
            return Ok(Some(n));
        }
        if Instant::now() >= deadline || crate::signals::stopped() {
            return Ok(None);
        }
        std::hint::spin_loop();
    }
}

/// Print a `state` line for every device whose AL status or code differs from `last`.
fn trace_states(net: &Network, last: &mut [Option<(u16, u16)>]) -> std::io::Result<()> {
    use std::io::Write;
    let mut changed = false;
    for (pos, l) in last.iter_mut().enumerate() {
        let Some(e) = net.subdevice(pos) else {
            continue;
        };
        let now = (e.al_status().0, e.al_status_code().0);
        if *l != Some(now) {
            println!("state {pos} 0x{:04x} code 0x{:04x}", now.0, now.1);
            *l = Some(now);
            changed = true;
        }
    }
    if changed {
        std::io::stdout().flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_warns_only_under_a_realtime_policy_with_throttling_on() {
        let w = spin_throttle_warning(true, Some("950000\n".into())).expect("warned");
        assert!(w.contains("sched_rt_runtime_us = 950000)"), "{w}");
        assert_eq!(spin_throttle_warning(true, Some("-1\n".into())), None);
        assert_eq!(spin_throttle_warning(false, Some("950000".into())), None);
        assert_eq!(spin_throttle_warning(true, None), None);
    }

    #[test]
    fn the_policy_is_read_past_a_command_name_with_spaces_and_parentheses() {
        // Fields 3..40 as /proc shows them, then the policy (41) and two more.
        let stat = |policy: u32| {
            let middle: Vec<String> = (3..=40).map(|f| f.to_string()).collect();
            format!("1234 (sim (x) 2) {} {policy} 0 0\n", middle.join(" "))
        };
        assert!(realtime_in_stat(&stat(1)), "SCHED_FIFO");
        assert!(realtime_in_stat(&stat(2)), "SCHED_RR");
        assert!(!realtime_in_stat(&stat(0)), "SCHED_OTHER");
        assert!(!realtime_in_stat(&stat(3)), "SCHED_BATCH");
        assert!(!realtime_in_stat(""), "unreadable");
    }

    #[test]
    fn a_process_started_under_chrt_is_seen_as_realtime() {
        if !ecat::netns::is_root() {
            eprintln!("skipped: needs root to run a command under chrt -f");
            return;
        }
        let out = std::process::Command::new("chrt")
            .args(["-f", "1", "cat", "/proc/self/stat"])
            .output()
            .ok()
            .filter(|o| o.status.success());
        let Some(out) = out else {
            eprintln!("skipped: chrt is not available here");
            return;
        };
        assert!(realtime_in_stat(&String::from_utf8_lossy(&out.stdout)));
    }

    #[test]
    fn set_inputs_syntax() {
        assert_eq!(parse_set("2=a5").unwrap(), (2, vec![0xA5]));
        assert_eq!(parse_set("4=0x0102").unwrap(), (4, vec![1, 2]));
        assert!(parse_set("2").is_err());
        assert!(parse_set("2=abc").is_err());
        assert!(parse_set("x=aa").is_err());
    }
}
