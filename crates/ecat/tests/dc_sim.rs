//! Distributed clocks on virtual time against the simulated `dc8` network (a line of six DC
//! SubDevices and a branch of two, drifts up to ±100 ppm): measured propagation delays, the
//! system time differences after static compensation and during cycling in both modes, SYNC0
//! alignment across SubDevices, and the master's phase to SYNC0.
//!
//! The long run is 10 simulated minutes at 1 ms in release builds (`cargo test --release`, as
//! the test script runs it) and 20 simulated seconds in debug builds.

use ecat::clock::VirtualTime;
use ecat::dc::DcMode;
use ecat::runtime::Runtime;

mod common;
use common::dc::{self, MS};

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
    let (mut md, vt) = dc::scan_on_virtual_time("dc8");
    assert_eq!(md.subdevices().len(), 8);
    let setup = dc::configure(&mut md, 15_000);
    // Propagation delays: what the MainDevice measured against the simulator's truth.
    let now = md.bus().now();
    let passages = md
        .bus()
        .link_mut()
        .sim_network()
        .unwrap()
        .frame_passages(now);
    dc::check_delays(&mut md, &setup, &passages, true);
    let rt = dc::activate_to_op(md, setup, mode);
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
