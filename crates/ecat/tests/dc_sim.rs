//! Distributed clocks on virtual time against the simulated `dc8` network (a line of six DC
//! SubDevices and a branch of two, drifts up to ±100 ppm): measured propagation delays, the
//! system time differences after static compensation and during cycling in both modes, SYNC0
//! alignment across SubDevices, and the master's phase to SYNC0.
//!
//! The long run is 10 simulated minutes at 1 ms in release builds (`cargo test --release`, as
//! the test script runs it) and 20 simulated seconds in debug builds.

use ecat::clock::VirtualTime;
use ecat::dc::setup::DcOptions;
use ecat::dc::{DcMode, DcRuntime};
use ecat::link::sim::SimLink;
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;

const MS: u64 = 1_000_000;

fn cycles_to_run() -> u64 {
    if cfg!(debug_assertions) {
        20_000
    } else {
        600_000
    }
}

struct Rig {
    rt: Runtime,
    vt: VirtualTime,
}

fn bring_up(mode: DcMode) -> Rig {
    let vt = VirtualTime::new();
    vt.advance(1_000_000_000);
    let link = SimLink::with_network(
        Network::open("dc8").unwrap(),
        "sim:dc8".into(),
        "dc8".into(),
    )
    .on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    assert_eq!(md.subdevices().len(), 8);
    let setup = md
        .configure_dc(DcOptions {
            static_datagrams: 15_000,
            per_frame: 1,
            ..Default::default()
        })
        .unwrap()
        .expect("dc8 has DC SubDevices");
    // Propagation delays: what the MainDevice measured against the simulator's truth.
    let now = md.bus().now();
    let truth: Vec<i64> = {
        let link = md.bus().link_mut();
        let net = link.sim_network().unwrap();
        let pass = net.frame_passages(now);
        let r = pass[setup.reference_position as usize].unwrap().epu as i64;
        pass.iter()
            .map(|p| p.map(|p| p.epu as i64 - r).unwrap_or(-1))
            .collect()
    };
    for s in md.subdevices() {
        let dc = s.dc.expect("every dc8 SubDevice has DC");
        let err = dc.delay_ns as i64 - truth[s.position as usize];
        println!(
            "SubDevice {} ({}): parent {:?} port {}, delay measured {} ns, true {} ns",
            s.position, s.order, dc.parent, dc.parent_port, dc.delay_ns, truth[s.position as usize]
        );
        assert!(
            err.abs() <= 10,
            "SubDevice {}: delay off by {err} ns",
            s.position
        );
    }
    let diff = md.dc_max_difference().unwrap();
    println!("after static compensation: max |system time difference| {diff} ns");
    assert!(diff < 100, "after static compensation: {diff} ns");
    let dc = DcRuntime {
        setup,
        mode,
        cycle_ns: MS,
        shift_ns: 0,
    };
    let mut rt = md
        .activate(Activation {
            dc: Some(dc),
            ..Default::default()
        })
        .unwrap();
    rt.run_until_state(AlState::Op, MS, 5_000).unwrap();
    Rig { rt, vt }
}

/// Cycle `n` times; returns (max sync monitor, send phases to the reference's SYNC0 grid).
fn cycle(rig: &mut Rig, n: u64) -> (u32, Vec<i64>) {
    let mut worst = 0u32;
    let mut phases = Vec::new();
    for k in 0..n {
        let corr = rig.rt.dc_correction_ns();
        rig.vt.advance((MS as i64 + corr) as u64);
        rig.rt.tx_rx(MS).unwrap();
        let m = rig.rt.dc_sync_monitor_ns().unwrap_or(u32::MAX);
        worst = worst.max(m);
        if k % 1000 == 999 {
            phases.push((rig.rt.dc_time().unwrap() % MS) as i64);
        }
    }
    (worst, phases)
}

fn sync0_spread(rig: &mut Rig) -> u64 {
    let now = rig.vt.now();
    let net = rig.rt.link_mut().sim_network().unwrap();
    net.advance_to(now);
    let last: Vec<u64> = (0..8).filter_map(|p| net.sync0_pulses(p).last()).collect();
    assert!(last.len() >= 4, "SubDevices with SYNC0: {}", last.len());
    last.iter().max().unwrap() - last.iter().min().unwrap()
}

fn run_mode(mode: DcMode) {
    let mut rig = bring_up(mode);
    let n = cycles_to_run();
    let (worst, phases) = cycle(&mut rig, n);
    let spread = sync0_spread(&mut rig);
    let pmin = phases.iter().min().copied().unwrap_or(0);
    let pmax = phases.iter().max().copied().unwrap_or(0);
    println!(
        "{mode:?}: {n} cycles, sync monitor max {worst} ns, SYNC0 spread {spread} ns, send phase to SYNC0 {pmin}..{pmax} ns"
    );
    assert!(
        worst < 100,
        "{mode:?}: |system time difference| reached {worst} ns"
    );
    assert!(spread < 100, "{mode:?}: SYNC0 pulses {spread} ns apart");
    if mode == DcMode::MasterFollowsReference {
        assert!(
            pmax - pmin < 2_000,
            "the send instant keeps its phase to SYNC0: spread {} ns",
            pmax - pmin
        );
    }
}

#[test]
fn reference_follows_master() {
    run_mode(DcMode::ReferenceFollowsMaster);
}

#[test]
fn master_follows_reference() {
    run_mode(DcMode::MasterFollowsReference);
}
