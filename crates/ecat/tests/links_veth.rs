//! The socket links (raw, mmap, xdp) over a real veth pair, against the simulated `io` network.
//!
//! Each test makes its own network namespace and veth pair: the simulator's end lives in the
//! namespace (a thread `setns`es into it and answers with a raw socket), the end under test
//! stays in the root namespace. The MainDevice scans, activates, reaches OP and runs 2,000
//! cycles, each of which must come back with the expected working counter (see `run_with` for
//! the tolerance of frames that come back after the 1 ms timeout). Namespace and pair
//! are removed by a drop guard whatever happens. Needs root; skipped with a message otherwise.
//! The tests take a common lock so their timing does not depend on each other's load.

use ecat::link::raw::RawSocket;
use ecat::link::{Link, LinkOptions, RecvMode};
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());
static NEXT: AtomicUsize = AtomicUsize::new(0);

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Pin the calling thread to one CPU (if the machine has more than one). Busy polling on the
/// same core as the simulator would otherwise starve it: the waker's core is where the
/// scheduler likes to wake the simulator thread, and a spinning thread holds that core until
/// its time slice ends (milliseconds).
fn pin_to(cpu: usize) {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n < 2 {
        return;
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET stays in bounds (cpu < n ≤ CPU_SETSIZE), and
    // sched_setaffinity(0, …) only affects the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu % n, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Run the calling thread under SCHED_FIFO (best effort), as a real-time EtherCAT task would:
/// on this shared machine a normal thread can wait a millisecond for a core now and then.
fn realtime(prio: i32) {
    let p = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: a valid sched_param; pid 0 is the calling thread.
    unsafe {
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &p);
    }
}

/// Puts the calling thread back to SCHED_OTHER on all CPUs when dropped (the test harness may
/// run later tests on the same thread).
struct Unpin;

impl Drop for Unpin {
    fn drop(&mut self) {
        let p = libc::sched_param { sched_priority: 0 };
        // SAFETY: a valid sched_param and a full cpu set; both only affect the calling thread.
        unsafe {
            libc::sched_setscheduler(0, libc::SCHED_OTHER, &p);
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for c in 0..std::thread::available_parallelism().map_or(1, |n| n.get()) {
                libc::CPU_SET(c, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// A veth pair `<ns>a` (root namespace) / `<ns>b` (in namespace `<ns>`), removed on drop.
struct Veth {
    ns: String,
    near: String,
    far: String,
}

impl Veth {
    fn new() -> Veth {
        let ns = format!(
            "ecl{}{}",
            std::process::id() % 1000,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let v = Veth {
            near: format!("{ns}a"),
            far: format!("{ns}b"),
            ns,
        };
        assert!(v.near.len() <= 15);
        // Leftovers of an earlier crashed run with the same pid.
        ip(&["netns", "del", &v.ns]);
        ip(&["link", "del", &v.near]);
        assert!(ip(&["netns", "add", &v.ns]), "ip netns add {}", v.ns);
        assert!(
            ip(&["link", "add", &v.near, "type", "veth", "peer", "name", &v.far, "netns", &v.ns]),
            "ip link add {}",
            v.near
        );
        // IPv6 autoconfiguration would only add noise frames (filtered, but needless).
        let _ = std::fs::write(
            format!("/proc/sys/net/ipv6/conf/{}/disable_ipv6", v.near),
            "1",
        );
        assert!(ip(&["link", "set", &v.near, "up"]));
        assert!(ip(&["-n", &v.ns, "link", "set", &v.far, "up"]));
        v
    }
}

impl Drop for Veth {
    fn drop(&mut self) {
        ip(&["link", "del", &self.near]);
        ip(&["netns", "del", &self.ns]);
    }
}

/// The simulated `io` network answering on the far end, in a thread inside the namespace.
struct Sim {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<(u64, u64)>>,
}

impl Sim {
    fn start(v: &Veth) -> Sim {
        let stop = Arc::new(AtomicBool::new(false));
        let (ns, far, stop2) = (v.ns.clone(), v.far.clone(), stop.clone());
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let f = std::fs::File::open(format!("/run/netns/{ns}")).unwrap();
            use std::os::fd::AsRawFd;
            // SAFETY: a valid namespace descriptor; this moves only the current thread.
            let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "setns into {ns}");
            pin_to(1);
            realtime(50);
            let mut net = Network::open("io").unwrap();
            let mut link = RawSocket::open(&far).unwrap();
            ready_tx.send(()).unwrap();
            let epoch = Instant::now();
            let mut buf = vec![0u8; 2048];
            let (mut answered, mut dropped) = (0, 0);
            while !stop2.load(Ordering::Relaxed) {
                let deadline = Instant::now() + Duration::from_millis(20);
                let Some(n) = link.recv(&mut buf, Some(deadline)).unwrap() else {
                    continue;
                };
                if net.process_frame(&mut buf[..n], epoch.elapsed().as_nanos() as u64) {
                    link.send(&buf[..n]).unwrap();
                    answered += 1;
                } else {
                    dropped += 1;
                }
            }
            (answered, dropped)
        });
        ready_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("simulator thread started");
        Sim {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            if let Ok((a, d)) = t.join() {
                println!("simulator: {a} frames answered, {d} dropped");
            }
        }
    }
}

fn run(kind: &str, mode: RecvMode, cycles: u64) {
    run_with(
        kind,
        LinkOptions {
            recv_mode: mode,
            ..Default::default()
        },
        cycles,
    )
}

fn run_with(kind: &str, opts: LinkOptions, cycles: u64) {
    let mode = opts.recv_mode;
    if !is_root() {
        println!("SKIPPED: links_veth {kind} needs root (veth pairs, namespaces, raw sockets)");
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v = Veth::new();
    let _sim = Sim::start(&v);
    let _unpin = Unpin;
    pin_to(0);
    realtime(40);
    let spec = format!("{kind}:{}", v.near);
    let link = ecat::link::open_with(&spec, opts).unwrap_or_else(|e| panic!("opening {spec}: {e}"));
    println!("link: {} ({})", link.name(), link.describe());
    let mut md = MainDevice::with_link(link);
    let n = md.scan().unwrap().len();
    assert!(n > 0, "no SubDevices found on {spec}");
    let mut rt = md.activate(Activation::default()).unwrap();
    let r = rt.run_until_state(AlState::Op, 1_000_000, 5_000);
    while let Some(e) = rt.next_event() {
        println!("{e}");
    }
    r.unwrap();
    let start = Instant::now();
    // Every cycle whose frames came back within the 1 ms timeout must carry the expected WKC.
    // A frame that comes back *late* (after the timeout, received and discarded during the
    // next cycle) is a scheduling hiccup of this shared 2-core VM, not a link fault: a few
    // per mille are tolerated and printed. A frame that never comes back fails the test.
    let mut wrong = Vec::new();
    let mut late = Vec::new();
    for _ in 0..cycles {
        let t = Instant::now();
        let all = rt.tx_rx(1_000_000).unwrap();
        let d = rt.domain(0);
        if d.wkc() != d.expected_wkc() {
            if all {
                wrong.push((rt.cycle_count(), d.wkc(), d.expected_wkc()));
            } else {
                late.push((rt.cycle_count(), t.elapsed()));
            }
        }
    }
    let elapsed = start.elapsed();
    assert!(
        wrong.is_empty(),
        "{spec}: wrong WKC (cycle, wkc, expected): {wrong:?}"
    );
    // Drain what is still in flight, then every transmitted frame must have come back. The
    // drain waits for the count to match (up to 5 s), not a fixed 20 ms: a simulator thread
    // descheduled for tens of ms right after the last cycle answers late, not never.
    let mut buf = [0u8; 2048];
    let drain_until = Instant::now() + Duration::from_secs(5);
    while rt.link().counters().rx_frames < rt.link().counters().tx_frames
        && rt
            .link_mut()
            .recv(&mut buf, Some(drain_until))
            .unwrap()
            .is_some()
    {}
    let c = rt.link().counters();
    assert_eq!(c.rx_frames, c.tx_frames, "{spec}: frames lost: {c:?}");
    assert_eq!(c.tx_errors, 0, "{spec}: {c:?}");
    if !late.is_empty() {
        println!(
            "{spec}: {} cycle(s) with frames back after the 1 ms timeout (all arrived): {late:?}",
            late.len()
        );
    }
    // One stall of the VM (a descheduled vCPU) makes a run of consecutive late cycles; count
    // such episodes, not cycles: a link that is late regularly still fails. A fresh-clone CI
    // run saw 3 stalls in 2,000 busy-polled cycles, each just over the timeout (1.006-1.014 ms)
    // with every frame arriving, so up to 1 % of cycles may start an episode; a link late
    // every cycle, or every few dozen, still fails. Late cycles in all: 5 %, as the simulator's
    // vCPU descheduled for 50-100 ms makes one episode of 50-100 late cycles.
    let episodes = late
        .iter()
        .zip(std::iter::once(None).chain(late.iter().map(Some)))
        .filter(|(c, prev)| prev.is_none_or(|p| p.0 + 1 != c.0))
        .count();
    assert!(
        episodes as u64 <= (cycles / 100).max(1) && late.len() as u64 <= cycles / 20,
        "{spec}: too many late cycles ({episodes} episodes): {late:?}"
    );
    println!(
        "{spec} {mode:?}: {n} SubDevices, {cycles} cycles in {elapsed:?}, {} late; {c:?}",
        late.len()
    );
}

#[test]
fn raw_reaches_op_and_cycles() {
    run("raw", RecvMode::Block, 2_000);
}

#[test]
fn mmap_reaches_op_and_cycles() {
    run("mmap", RecvMode::Block, 2_000);
}

#[test]
fn mmap_busy_poll_cycles() {
    run("mmap", RecvMode::BusyPoll, 2_000);
}

#[test]
fn raw_busy_poll_cycles() {
    run("raw", RecvMode::BusyPoll, 2_000);
}

#[test]
fn xdp_reaches_op_and_cycles() {
    run("xdp", RecvMode::Block, 2_000);
}

#[test]
fn xdp_busy_poll_cycles() {
    run("xdp", RecvMode::BusyPoll, 2_000);
}

#[test]
fn xdp_generic_mode_cycles() {
    run_with(
        "xdp",
        LinkOptions {
            xdp_mode: ecat::link::xdp::XdpMode::Generic,
            ..Default::default()
        },
        2_000,
    );
}

/// Our own transmitted frames never come back, on any link; and an XDP link detaches its
/// program when dropped (a second one can attach).
#[test]
fn own_frames_are_not_received_and_xdp_detaches() {
    if !is_root() {
        println!("SKIPPED: links_veth needs root (veth pairs, namespaces, raw sockets)");
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v = Veth::new();
    let mut frame = [0u8; 60];
    frame[..6].fill(0xff);
    frame[12..14].copy_from_slice(&[0x88, 0xa4]);
    frame[14] = 2; // EtherCAT header: length 2, type 1, then an empty-ish payload.
    frame[15] = 0x10;
    for kind in ["raw", "mmap", "xdp", "xdp"] {
        let spec = format!("{kind}:{}", v.near);
        let mut link = ecat::link::open(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        let mut buf = [0u8; 2048];
        for _ in 0..10 {
            link.send(&frame).unwrap();
        }
        let got = link
            .recv(&mut buf, Some(Instant::now() + Duration::from_millis(30)))
            .unwrap();
        assert_eq!(got, None, "{spec} received its own frame");
        assert_eq!(link.counters().tx_frames, 10);
    }
    let out = Command::new("ip")
        .args(["-d", "link", "show", "dev", &v.near])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(!out.contains("xdp"), "XDP program left attached: {out}");
}

/// `RawSocket::open_ethertype`: a socket for another EtherType receives only that EtherType,
/// the EtherCAT socket only EtherCAT, and one bound to every EtherType (in the namespace,
/// echoing) both.
#[test]
fn raw_sockets_by_ethertype() {
    if !is_root() {
        println!("SKIPPED: links_veth needs root (veth pairs, namespaces, raw sockets)");
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v = Veth::new();
    let (ns, far) = (v.ns.clone(), v.far.clone());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let echo = std::thread::spawn(move || {
        ecat::netns::enter(&ns).unwrap();
        let opts = LinkOptions::default();
        let mut all = RawSocket::open_ethertype(&far, ecat::link::raw::ETH_P_ALL, opts).unwrap();
        ready_tx.send(()).unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 2048];
        // Ends as soon as both came; 20 s only bounds a test that is failing anyway (2 s
        // was short of a VM stall of ~1 s between this thread's start and the sends).
        let end = Instant::now() + Duration::from_secs(20);
        while seen.len() < 2 && Instant::now() < end {
            if let Some(n) = all.recv(&mut buf, Some(end)).unwrap() {
                seen.push(u16::from_be_bytes([buf[12], buf[13]]));
                all.send(&buf[..n]).unwrap();
            }
        }
        seen
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let opts = LinkOptions::default();
    let mut other = RawSocket::open_ethertype(&v.near, 0x88b5, opts).unwrap();
    let mut ecat = RawSocket::open_with(&v.near, opts).unwrap();
    let frame = |ethertype: u16| {
        let mut f = [0u8; 60];
        f[..6].fill(0xff);
        f[12..14].copy_from_slice(&ethertype.to_be_bytes());
        f
    };
    other.send(&frame(0x88b5)).unwrap();
    ecat.send(&frame(0x88a4)).unwrap();
    let mut buf = [0u8; 2048];
    // The echo normally takes microseconds; 10 s survives a stall of the VM or of the echo
    // thread's vCPU (500 ms did not leave room for a ~1 s one).
    let within = || Some(Instant::now() + Duration::from_secs(10));
    let n = other
        .recv(&mut buf, within())
        .unwrap()
        .expect("echo of 0x88b5");
    assert_eq!((n, buf[12..14].to_vec()), (60, vec![0x88, 0xb5]));
    let n = ecat
        .recv(&mut buf, within())
        .unwrap()
        .expect("echo of 0x88a4");
    assert_eq!((n, buf[12..14].to_vec()), (60, vec![0x88, 0xa4]));
    // Each saw only its own.
    let later = || Some(Instant::now() + Duration::from_millis(50));
    assert_eq!(other.recv(&mut buf, later()).unwrap(), None);
    assert_eq!(ecat.recv(&mut buf, later()).unwrap(), None);
    assert_eq!(echo.join().unwrap(), vec![0x88b5, 0x88a4]);
}
