//! Bringing a simulated DC network to OP on virtual time, shared by the DC, DC recovery,
//! redundancy and zero-allocation tests: the precise static drift compensation they use, the
//! check of the measured propagation delays against the simulator's truth, and activation at
//! 1 ms with DC until every SubDevice is in OP.

use ecat::clock::VirtualTime;
use ecat::dc::setup::{DcOptions, DcSetup};
use ecat::dc::{DcMode, DcRuntime};
use ecat::link::sim::SimLink;
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_sim::{FramePassage, Network};
use ecat_wire::al::AlState;

/// One millisecond in nanoseconds: the cycle of these tests.
pub const MS: u64 = 1_000_000;

/// The preset network `name` in-process on virtual time (started at 1 s), scanned.
pub fn scan_on_virtual_time(name: &str) -> (MainDevice, VirtualTime) {
    let vt = VirtualTime::new();
    vt.advance(1_000_000_000);
    let link = SimLink::with_network(
        Network::open(name).unwrap(),
        format!("sim:{name}"),
        name.into(),
    )
    .on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    (md, vt)
}

/// DC setup with `static_datagrams` drift-compensation datagrams, one per frame (the tests'
/// precise setting); panics if the bus has no DC SubDevice.
pub fn configure(md: &mut MainDevice, static_datagrams: u32) -> DcSetup {
    md.configure_dc(DcOptions {
        static_datagrams,
        per_frame: 1,
        ..Default::default()
    })
    .unwrap()
    .expect("the network has DC SubDevices")
}

/// Assert that every DC SubDevice's measured delay is within 10 ns of the simulator's truth
/// (`passages`: the simulator's frame passages at the setup's time, by position) and that
/// the clocks differ by less than 100 ns after the static compensation. Prints each delay
/// when `verbose`.
pub fn check_delays(
    md: &mut MainDevice,
    setup: &DcSetup,
    passages: &[Option<FramePassage>],
    verbose: bool,
) {
    let r = passages[setup.reference_position as usize].unwrap().epu as i64;
    let truth: Vec<i64> = passages
        .iter()
        .map(|p| p.map(|p| p.epu as i64 - r).unwrap_or(-1))
        .collect();
    for s in md.subdevices() {
        let Some(dc) = s.dc else { continue };
        let want = truth[s.position as usize];
        if verbose {
            println!(
                "SubDevice {} ({}): parent {:?} port {}, delay measured {} ns, true {want} ns",
                s.position, s.order, dc.parent, dc.parent_port, dc.delay_ns
            );
        }
        let err = dc.delay_ns as i64 - want;
        assert!(
            err.abs() <= 10,
            "SubDevice {}: delay off by {err} ns",
            s.position
        );
    }
    let diff = md.dc_max_difference().unwrap();
    println!("after static compensation: max |system time difference| {diff} ns");
    assert!(diff < 100, "after static compensation: {diff} ns");
}

/// Activate with DC (`mode`, 1 ms, no shift) and cycle until every SubDevice is in OP.
pub fn activate_to_op(md: MainDevice, setup: DcSetup, mode: DcMode) -> Runtime {
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
    rt
}
