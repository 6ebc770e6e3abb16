//! Seed 000 on virtual time: six CiA 402 drives in cyclic synchronous velocity mode follow the
//! 40 s profile at 1 ms; every drive's actual velocity tracks the target, none faults.

use ecat::clock::VirtualTime;
use ecat::link::sim::SimLink;
use ecat::mailbox::sdo::SdoOp;
use ecat::runtime::Activation;
use ecat::servo::{find_drives, ServoApp, VelocityProfile};
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;

#[test]
fn six_drives_follow_the_velocity_profile() {
    let vt = VirtualTime::new();
    let link = SimLink::with_network(
        Network::open("servo6").unwrap(),
        "sim:servo6".into(),
        "servo6".into(),
    )
    .on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    // Encoder resolution from the drive: increments per revolution.
    let inc = u32::from_le_bytes(
        md.sdo_upload(0, 0x608F, 1, false).unwrap()[..4]
            .try_into()
            .unwrap(),
    );
    let rev = u32::from_le_bytes(
        md.sdo_upload(0, 0x608F, 2, false).unwrap()[..4]
            .try_into()
            .unwrap(),
    );
    let per_rad = inc as f64 / rev as f64 / std::f64::consts::TAU;
    // Modes of operation = 9 (CSV), as a startup SDO (replayed if a drive is reconfigured).
    let csv = SdoOp::Download {
        index: 0x6060,
        subindex: 0,
        complete_access: false,
        data: vec![9],
    };
    let n = md.subdevices().len();
    let mut rt = md
        .activate(Activation {
            startup_sdos: vec![vec![csv]; n],
            ..Default::default()
        })
        .unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    let drives = find_drives(&rt);
    assert_eq!(drives.len(), 6);
    let d = rt.domain(0);
    assert_eq!(
        (d.outputs_len, d.inputs_len),
        (36, 60),
        "6 bytes out and 10 in per drive, 96 in all"
    );
    let profile = VelocityProfile::seed000(2.0, per_rad, 1_000_000, 0);
    let mut app = ServoApp::new(drives, profile);
    for cycle in 0..41_000u64 {
        vt.advance(1_000_000);
        rt.receive().unwrap();
        rt.process();
        app.step(&mut rt, cycle);
        rt.send().unwrap();
        rt.wait_return(rt.now() + 1_000_000).unwrap();
    }
    let v = 2.0 * per_rad;
    for (io, state, f) in app.results() {
        println!(
            "drive {}: {state}, enabled at cycle {:?}, following error max {:.4} rad/s, steady max {:.4} rad/s, rms {:.4} rad/s, faults {}",
            io.position,
            f.enabled_at,
            f.max_abs as f64 / per_rad,
            f.max_abs_steady as f64 / per_rad,
            f.rms() / per_rad,
            f.faults
        );
        assert_eq!(f.faults, 0, "drive {} faulted", io.position);
        assert!(f.samples > 39_000);
        assert!(
            (f.max_abs_steady as f64) < 0.02 * v,
            "drive {}: steady following error too large",
            io.position
        );
    }
    // Check the values themselves: at t = 5 s the drives turn at +2 rad/s, at 25 s at -2 rad/s.
    // (Sampled by the statistics above; here a direct look at the end of the run: resting.)
    let img = rt.domain(0).image().to_vec();
    for (io, _, _) in app.results() {
        let actual = io.actual_velocity.read(&img) as u32 as i32;
        assert!(
            (actual as f64).abs() < 0.02 * v,
            "drive {} should rest at the end: {actual}",
            io.position
        );
    }
}
