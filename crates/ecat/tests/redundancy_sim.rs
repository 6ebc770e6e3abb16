//! Cable redundancy on virtual time: the `ring8` network (eight SubDevices, DC) closed back
//! to the backup port, in OP at 1 ms, with a cable broken at every position in turn and
//! healed again. At most the cycle of the break may have incomplete process data; the break
//! is reported between the right SubDevices; after the heal frames pass in one direction
//! again; the DC sync monitor stays under 100 ns throughout.

use ecat::clock::VirtualTime;
use ecat::dc::DcMode;
use ecat::domain::DomainState;
use ecat::link::redundant::RedundantLink;
use ecat::link::sim_ring::{self, SharedRing};
use ecat::runtime::Runtime;
use ecat::MainDevice;
use ecat_sim::Network;

mod common;
use common::dc::{self, MS};

struct Rig {
    rt: Runtime,
    vt: VirtualTime,
    ring: SharedRing,
}

fn bring_up() -> Rig {
    let vt = VirtualTime::new();
    vt.advance(1_000_000_000);
    let (main, backup, ring) =
        sim_ring::with_network(Network::open("ring8").unwrap(), "ring8", Some(vt.clone())).unwrap();
    let link = RedundantLink::new(Box::new(main), Box::new(backup)).unwrap();
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    assert_eq!(md.subdevices().len(), 8);
    let setup = dc::configure(&mut md, 15_000);
    // Delays measured through the closed ring against the simulator's truth.
    let now = md.bus().now();
    let passages = ring.lock().unwrap().network().frame_passages(now);
    dc::check_delays(&mut md, &setup, &passages, false);
    let rt = dc::activate_to_op(md, setup, DcMode::ReferenceFollowsMaster);
    Rig { rt, vt, ring }
}

/// One 1 ms cycle; returns (process data complete, sync monitor).
fn cycle(rig: &mut Rig) -> (bool, u32) {
    rig.vt.advance(MS);
    rig.rt.tx_rx(MS).unwrap();
    let complete = rig
        .rt
        .domains()
        .iter()
        .all(|d| d.state() == DomainState::Complete);
    (complete, rig.rt.dc_sync_monitor_ns().unwrap_or(u32::MAX))
}

/// Spread (ns) of the latest SYNC0 pulses of the SubDevices that generate them (true times).
fn sync0_spread(rig: &mut Rig) -> u64 {
    let now = rig.vt.now();
    let mut g = rig.ring.lock().unwrap();
    let net = g.network();
    net.advance_to(now);
    let last: Vec<u64> = (0..8).filter_map(|p| net.sync0_pulses(p).last()).collect();
    assert!(last.len() >= 4, "SubDevices with SYNC0: {}", last.len());
    last.iter().max().unwrap() - last.iter().min().unwrap()
}

#[test]
fn a_break_at_every_position_in_turn() {
    let mut rig = bring_up();
    let mut worst = 0u32;
    for _ in 0..200 {
        let (ok, m) = cycle(&mut rig);
        assert!(ok, "closed ring before any break");
        worst = worst.max(m);
    }
    assert!(!rig.rt.link().redundancy().unwrap().open);
    for a in 0..7usize {
        rig.ring
            .lock()
            .unwrap()
            .network()
            .break_cable(a, a + 1)
            .unwrap();
        let mut incomplete = Vec::new();
        for k in 0..300 {
            let (ok, m) = cycle(&mut rig);
            if !ok {
                incomplete.push(k);
            }

            worst = worst.max(m);
        }
        assert!(
            incomplete.iter().all(|&k| k == 0),
            "break after {a}: incomplete cycles {incomplete:?}"
        );
        let st = rig.rt.link().redundancy().unwrap();
        assert!(st.open, "break after {a} not seen");
        assert_eq!(st.break_between(8), Some((a, a + 1)), "break after {a}");
        let spread = sync0_spread(&mut rig);
        assert!(spread < 100, "break after {a}: SYNC0 spread {spread} ns");
        rig.ring
            .lock()
            .unwrap()
            .network()
            .heal_cable(a, a + 1)
            .unwrap();
        let resent = rig.rt.link().redundancy().unwrap().resent;
        for k in 0..300 {
            let (ok, m) = cycle(&mut rig);
            assert!(ok || k == 0, "heal after {a}: cycle {k} incomplete");
            worst = worst.max(m);
        }
        let st = rig.rt.link().redundancy().unwrap();
        assert!(!st.open, "heal after {a} not seen");
        assert!(
            st.resent - resent <= 2,
            "after the heal frames still took two passes"
        );
        let spread = sync0_spread(&mut rig);
        assert!(spread < 100, "heal after {a}: SYNC0 spread {spread} ns");
        println!("break after {a}: ok, sync monitor so far {worst} ns, SYNC0 spread {spread} ns");
    }
    assert!(worst < 100, "DC sync monitor reached {worst} ns");
}
