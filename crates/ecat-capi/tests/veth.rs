//! A C program on a real socket: the simulated `io` network answers on one end of a veth
//! pair inside a network namespace (a thread here, SCHED_FIFO on CPU 1), and
//! `tests/capi/veth_io.c`, built against the library, runs IgH's 1 kHz loop on the other end
//! (`ECAT_MASTER0=raw:<iface>`) for 10,000 cycles after OP, each with a complete working
//! counter. With the `dpdk` feature the same program runs on a DPDK port instead
//! (`ECAT_MASTER0=dpdk:net_af_packet0,iface=<iface>`). Needs root and iproute2; skipped with a
//! sentence otherwise.

mod common;

use ecat::link::raw::RawSocket;
use ecat::link::Link;
use ecat::netns::{self, VethNs};
use ecat_sim::Network;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn c_program_10000_cycles_over_veth() {
    veth_io("", |v| format!("raw:{}", v.near));
}

#[cfg(feature = "dpdk")]
#[test]
fn c_program_10000_cycles_over_dpdk() {
    veth_io("d", |v| format!("dpdk:net_af_packet0,iface={}", v.near));
}

/// Run veth_io.c on the link `link` names (from the pair), against the simulator on the far
/// end; `tag` keeps the pair's name apart from another test's.
fn veth_io(tag: &str, link: impl Fn(&VethNs) -> String) {
    if !netns::is_root() {
        println!("skipped: needs root (veth pair and network namespace)");
        return;
    }
    if common::missing(&["cc", "ip"]) {
        return;
    }
    let v = match VethNs::create(&format!("ecapi{}{tag}", std::process::id() % 10000)) {
        Ok(v) => v,
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (ns, far, stop2) = (v.ns.clone(), v.far.clone(), stop.clone());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let sim = std::thread::spawn(move || {
        netns::enter(&ns).expect("enter the namespace");
        netns::pin_thread(1);
        netns::fifo(50);
        let mut net = Network::open("io").unwrap();
        let mut link = RawSocket::open(&far).unwrap();
        ready_tx.send(()).unwrap();
        let epoch = Instant::now();
        let mut buf = vec![0u8; 2048];
        let mut answered = 0u64;
        while !stop2.load(Ordering::Relaxed) {
            let deadline = Instant::now() + Duration::from_millis(20);
            let Ok(Some(n)) = link.recv(&mut buf, Some(deadline)) else {
                continue;
            };
            if net.process_frame(&mut buf[..n], epoch.elapsed().as_nanos() as u64) {
                let _ = link.send(&buf[..n]);
                answered += 1;
            }
        }
        answered
    });
    ready_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("simulator started");

    let src = common::workspace().join("tests/capi/veth_io.c");
    let exe = common::scratch("capi").join("veth_io");
    common::compile(&[src], &exe, &[]);
    let link = link(&v);
    let o = common::run(&exe, Some(&link), &["10000"]);
    stop.store(true, Ordering::Relaxed);
    let answered = sim.join().unwrap_or(0);
    let out = String::from_utf8_lossy(&o.stdout);
    println!("{out}{}", String::from_utf8_lossy(&o.stderr));
    println!("simulator answered {answered} frames");
    assert!(o.status.success(), "veth_io failed: {out}");
}
