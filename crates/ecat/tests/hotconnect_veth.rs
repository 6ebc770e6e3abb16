//! Hot-connect groups over a real socket (issue 15): the simulator answers on one end of a
//! veth pair inside a namespace of its own, with the network of `tests/common/hotconnect.rs`;
//! once the MainDevice is cycling in OP at 1 ms it disconnects the group's branch and
//! connects it again ten times (300 cycles away, 300 cycles back: the test's cycle loop asks
//! the simulator thread for each change, so a stall of the VM cannot make the simulator's
//! clock jump over a disconnect and its connect together). Each time the group is reported
//! gone and back and is in OP within 500 cycles of appearing; the fixed part is never lost,
//! and nothing but the group's own events is reported. Needs root; skips otherwise.

use ecat::link::Link;
use ecat::netns::{is_root, VethNs};
use ecat::supervisor::Event;
use ecat::MainDevice;
use ecat_sim::{EventAction, FaultEvent};
use ecat_wire::al::AlState;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::hotconnect::{group, network, FIXED, HEAD, MS};

const ROUNDS: u64 = 10;
const HALF_MS: u64 = 300;

#[test]
fn a_group_leaves_and_joins_ten_times_over_veth() {
    if !is_root() {
        println!("SKIPPED: hotconnect_veth needs root (veth pair, namespace, raw sockets)");
        return;
    }
    let v = VethNs::create(&format!("ehc{}", std::process::id() % 100_000)).unwrap();
    // `asked`: how many branch changes the cycle loop has asked for (even: disconnect, odd:
    // connect); the simulator applies each at its own "now" when it sees it.
    let (stop, asked) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let (ns, far, stop2, asked2) = (v.ns.clone(), v.far.clone(), stop.clone(), asked.clone());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let sim = std::thread::spawn(move || {
        ecat::netns::enter(&ns).unwrap();
        let mut net = network();
        let mut link = ecat::link::raw::RawSocket::open(&far).unwrap();
        ready_tx.send(()).unwrap();
        let epoch = Instant::now();
        let mut buf = vec![0u8; 2048];
        let mut applied = 0u64;
        while !stop2.load(Ordering::Relaxed) {
            let now = epoch.elapsed().as_nanos() as u64;
            while applied < asked2.load(Ordering::Acquire) {
                let action = if applied.is_multiple_of(2) {
                    EventAction::Disconnect
                } else {
                    EventAction::Connect
                };
                net.schedule(FaultEvent {
                    at_ns: now,
                    action,
                    position: HEAD,
                });
                applied += 1;
            }
            let deadline = Instant::now() + Duration::from_millis(20);
            let Some(n) = link.recv(&mut buf, Some(deadline)).unwrap() else {
                continue;
            };
            if net.process_frame(&mut buf[..n], epoch.elapsed().as_nanos() as u64) {
                link.send(&buf[..n]).unwrap();
            }
        }
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let link = ecat::link::open(&v.near).unwrap();
    let mut md = MainDevice::with_link(link);
    md.scan().unwrap();
    let mut rt = md
        .activate(ecat::runtime::Activation {
            hot_connect: vec![group()],
            ..Default::default()
        })
        .unwrap();
    rt.run_until_state(AlState::Op, MS, 5_000).unwrap();
    while rt.next_event().is_some() {}
    let (mut gone, mut back, mut ready, mut others) = (0, 0, Vec::new(), Vec::new());
    let mut fixed_out = 0u64;
    let mut next = Instant::now();
    let cycles = (2 * ROUNDS * HALF_MS) + 600;
    for i in 1..=cycles {
        next += Duration::from_millis(1);
        // Cycles 300, 600, ..., 6,000: disconnect, connect, ... (ten of each).
        if i.is_multiple_of(HALF_MS) && i <= 2 * ROUNDS * HALF_MS {
            asked.fetch_add(1, Ordering::Release);
        }
        rt.tx_rx(MS).unwrap();
        if !rt
            .supervisor()
            .states()
            .take(FIXED)
            .all(|s| !s.lost && s.status.state() == Some(AlState::Op))
        {
            fixed_out += 1;
        }
        while let Some(e) = rt.next_event() {
            match e {
                Event::GroupDisconnected { .. } => gone += 1,
                Event::GroupConnected { .. } => back += 1,
                Event::GroupReady { after_cycles, .. } => ready.push(after_cycles),
                Event::Reached { .. } => {}
                other => others.push(other.to_string()),
            }
        }
        // Behind schedule (a stall of the VM): skip the missed boundaries, as `ecat run` does,
        // rather than catch up in a burst of back-to-back cycles.
        let now = Instant::now();
        match next.checked_duration_since(now) {
            Some(d) => std::thread::sleep(d),
            None => next = now,
        }
    }
    stop.store(true, Ordering::Relaxed);
    sim.join().unwrap();
    println!(
        "over veth: {gone} disconnects, {back} connects, in OP after {ready:?} cycles; fixed part out of OP in {fixed_out} cycles; other events {others:?}"
    );
    assert_eq!((gone, back), (ROUNDS, ROUNDS));
    assert_eq!(ready.len() as u64, ROUNDS);
    assert!(ready.iter().all(|&c| c <= 500), "{ready:?}");
    assert_eq!(fixed_out, 0);
    assert_eq!(others, Vec::<String>::new());
    drop(rt);
    drop(v);
}
