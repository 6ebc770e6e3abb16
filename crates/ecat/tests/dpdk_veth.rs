//! The `dpdk:` link (feature `dpdk`) over a real veth pair through DPDK's `net_af_packet`
//! virtual device, against the simulated `io` network answering with a raw socket on the far
//! end inside a network namespace. The MainDevice scans, reaches OP and runs 2,000 cycles with
//! the expected working counter, every frame coming back, and no heap allocation in the cyclic
//! loop (a counting allocator watches it). Also: our own frames never come back, a port is
//! one link at a time and can be opened again after its link closed, and the EAL (once per
//! process) refuses other options with one sentence.
//!
//! Each test makes its own namespace and pair (unique names, removed by a drop guard) and
//! takes a common lock: the EAL is process-wide and the allocation count is global. Needs
//! root; skipped with a message otherwise.

use ecat::link::raw::RawSocket;
use ecat::link::{Link, LinkOptions, RecvMode};
use ecat::netns::{self, VethNs};
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod common;
use common::counting::{self, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

static SERIAL: Mutex<()> = Mutex::new(());
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A veth pair in a fresh namespace plus a unique DPDK device number.
fn veth() -> Option<(VethNs, usize)> {
    if !netns::is_root() {
        println!("SKIPPED: dpdk_veth needs root (veth pairs, namespaces, DPDK's af_packet)");
        return None;
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let v = VethNs::create(&format!("dpk{}{n}", std::process::id() % 10000)).unwrap();
    Some((v, n))
}

fn spec(v: &VethNs, n: usize, opts: &str) -> String {
    format!("dpdk:net_af_packet{n},iface={}{opts}", v.near)
}

/// The simulated `io` network answering on interface `iface` (inside namespace `ns` if
/// given), in a thread; it ends when stopped or when the interface goes away.
struct Sim {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Sim {
    fn start(ns: Option<&str>, iface: &str) -> Sim {
        let stop = Arc::new(AtomicBool::new(false));
        let (ns, far, stop2) = (ns.map(str::to_string), iface.to_string(), stop.clone());
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            if let Some(ns) = ns {
                netns::enter(&ns).unwrap();
            }
            netns::pin_thread(1);
            netns::fifo(50);
            let mut net = Network::open("io").unwrap();
            let mut link = RawSocket::open(&far).unwrap();
            let mut buf = vec![0u8; 2048];
            ready_tx.send(()).unwrap();
            let epoch = Instant::now();
            while !stop2.load(Ordering::Relaxed) {
                let deadline = Instant::now() + Duration::from_millis(20);
                let n = match link.recv(&mut buf, Some(deadline)) {
                    Ok(Some(n)) => n,
                    Ok(None) => continue,
                    Err(_) => break, // the interface went down (a tap closed by DPDK)
                };
                if net.process_frame(&mut buf[..n], epoch.elapsed().as_nanos() as u64) {
                    let _ = link.send(&buf[..n]);
                }
            }
        });
        ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
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
            let _ = t.join();
        }
    }
}

/// Puts the calling thread back to SCHED_OTHER on every CPU when dropped.
struct Unpin;

impl Drop for Unpin {
    fn drop(&mut self) {
        let p = libc::sched_param { sched_priority: 0 };
        // SAFETY: a valid sched_param and a full cpu set; both affect the calling thread only.
        unsafe {
            libc::sched_setscheduler(0, libc::SCHED_OTHER, &p);
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for c in 0..netns::cpus() {
                libc::CPU_SET(c, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
}

fn run(mode: RecvMode, cycles: u64) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((v, n)) = veth() else { return };
    let _sim = Sim::start(Some(&v.ns), &v.far);
    let described = cycle(&spec(&v, n, ""), mode, cycles);
    // af_packet has no Rx interrupt: the default mode polls with pauses, busy mode spins.
    let wait = match mode {
        RecvMode::Block => "polling every 10 µs",
        RecvMode::BusyPoll => "busy polling",
    };
    assert!(described.contains(wait), "{described}");
}

/// Open `spec`, reach OP and run `cycles` checked cycles (see the module note); returns the
/// link's description.
fn cycle(spec: &str, mode: RecvMode, cycles: u64) -> String {
    let _unpin = Unpin;
    netns::pin_thread(0);
    netns::fifo(40);
    let opts = LinkOptions {
        recv_mode: mode,
        ..Default::default()
    };
    let link = ecat::link::open_with(spec, opts).unwrap_or_else(|e| panic!("opening {spec}: {e}"));
    let described = link.describe();
    println!("link: {} ({described})", link.name());
    assert_eq!(link.name(), spec);
    let mut md = MainDevice::with_link(link);
    let found = md.scan().unwrap().len();
    assert_eq!(found, 5, "SubDevices found on {spec}");
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    for _ in 0..100 {
        rt.tx_rx(1_000_000).unwrap();
    }
    // Every cycle whose frames came back within 1 ms carries the expected WKC; a frame back
    // after the timeout (a stall of this shared VM) is tolerated as in links_veth, a frame
    // that never comes back is not.
    let (mut wrong, mut late) = (Vec::new(), 0u64);
    counting::start();
    for _ in 0..cycles {
        let all = rt.tx_rx(1_000_000).unwrap();
        let d = rt.domain(0);
        if d.wkc() != d.expected_wkc() {
            if all {
                wrong.push(rt.cycle_count());
            } else {
                late += 1;
            }
        }
    }
    let allocs = counting::stop();
    assert_eq!(allocs, 0, "{spec}: {allocs} allocations in {cycles} cycles");
    assert!(wrong.is_empty(), "{spec}: wrong WKC in cycles {wrong:?}");
    assert!(
        late <= cycles / 20,
        "{spec}: {late} late cycles of {cycles}"
    );
    let mut buf = [0u8; 2048];
    let until = Instant::now() + Duration::from_secs(5);
    while rt.link().counters().rx_frames < rt.link().counters().tx_frames
        && rt.link_mut().recv(&mut buf, Some(until)).unwrap().is_some()
    {}
    let c = rt.link().counters();
    assert_eq!(c.rx_frames, c.tx_frames, "{spec}: frames lost: {c:?}");
    assert_eq!(c.tx_errors, 0, "{spec}: {c:?}");
    assert_eq!(
        rt.link_mut().kernel_drops(),
        Some(0),
        "{spec}: DPDK missed frames"
    );
    println!("{spec} {mode:?}: {cycles} cycles, {late} late, 0 allocations; {c:?}");
    described
}

#[test]
fn af_packet_reaches_op_cycles_and_allocates_nothing() {
    run(RecvMode::Block, 2_000);
}

#[test]
fn af_packet_busy_poll_cycles() {
    run(RecvMode::BusyPoll, 2_000);
}

/// Our own frames never come back; a port carries one link at a time and opens again once
/// its link is dropped (the device is detached and attached anew).
#[test]
fn own_frames_one_link_per_port_and_reopen() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((v, n)) = veth() else { return };
    let spec = spec(&v, n, "");
    let mut frame = [0u8; 60];
    frame[..6].fill(0xff);
    frame[12..14].copy_from_slice(&[0x88, 0xa4]);
    frame[14] = 2;
    frame[15] = 0x10;
    for round in 0..2 {
        let mut link = ecat::link::open(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(link.mac(), ecat::link::iface::mac(&v.near), "{spec}");
        let again = ecat::link::open(&spec)
            .err()
            .expect("a second link on one port");
        assert!(again.to_string().contains("already open"), "{again}");
        for _ in 0..10 {
            link.send(&frame).unwrap();
        }
        let mut buf = [0u8; 2048];
        let got = link
            .recv(&mut buf, Some(Instant::now() + Duration::from_millis(30)))
            .unwrap();
        assert_eq!(got, None, "{spec} received its own frame (round {round})");
        assert_eq!(link.counters().tx_frames, 10);
    }
}

/// DPDK's EAL starts once per process: other EAL options afterwards are one sentence.
#[test]
fn eal_runs_once_other_options_are_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some((v, n)) = veth() else { return };
    drop(ecat::link::open(&spec(&v, n, "")).unwrap());
    let other = spec(&v, n, "?eal=--no-huge -m 32 --no-pci");
    let e = ecat::link::open(&other).err().expect("other EAL options");
    let e = e.to_string();
    assert!(
        e.contains("already runs in this process") && e.contains("eal= option"),
        "{e}"
    );
}
