//! A CiA 402 drive built by the simulator from its vendor's ESI file (Synapticon SOMANET,
//! `../shared/testdata/esi/Synapticon_Somanet_CiA402-single.xml`) under our MainDevice on
//! virtual time: it reaches OP with the ESI's fixed PDOs (controlword, mode, target torque,
//! position and velocity out; statusword, mode display, position, velocity and torque in),
//! is enabled through the CiA 402 state machine and follows a velocity command, both ways.
//! Skipped (with a message) when the shared test data is not beside the clone.

use ecat::cia402::{Drive, Goal, State};
use ecat::clock::VirtualTime;
use ecat::link::sim::SimLink;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::path::{Path, PathBuf};

fn synapticon_esi() -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    ["../shared/testdata/esi", "../../shared/testdata/esi"]
        .iter()
        .map(|d| repo.join(d).join("Synapticon_Somanet_CiA402-single.xml"))
        .find(|p| p.is_file())
}

#[test]
fn esi_built_synapticon_drive_reaches_op_and_follows_velocity() {
    let Some(esi) = synapticon_esi() else {
        eprintln!("skipped: ../shared/testdata/esi/Synapticon_Somanet_CiA402-single.xml not found");
        return;
    };
    let text = format!(
        "[[subdevice]]\nesi = \"{}\"\ntype = \"CiA402 Motor Control Device\"\n",
        esi.display()
    );
    let net = Network::from_toml_str(&text, "drive.toml", Path::new(".")).unwrap();
    let vt = VirtualTime::new();
    let link = SimLink::with_network(net, "sim:drive.toml".into(), "drive".into())
        .on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    let at = |i, s| rt.locate(0, i, s).expect("mapped by the ESI's fixed PDOs");
    let (cw, mode, target) = (at(0x6040, 0), at(0x6060, 0), at(0x60FF, 0));
    let (sw, actual) = (at(0x6041, 0), at(0x606C, 0));
    let d = rt.domain(0);
    assert_eq!(
        (d.outputs_len, d.inputs_len),
        (13, 13),
        "the ESI's 104-bit PDOs"
    );
    let mut drive = Drive::new(Goal::Enabled);
    let mut last = 0i32;
    let mut enabled_at = None;
    for cycle in 0..3_000u64 {
        vt.advance(1_000_000);
        rt.receive().unwrap();
        rt.process();
        let img = rt.domain(0).image();
        let status = sw.read(img) as u16;
        last = actual.read(img) as u32 as i32;
        let word = drive.next_controlword(status);
        if drive.state() == State::OperationEnabled && enabled_at.is_none() {
            enabled_at = Some(cycle);
        }
        // +1 revolution/s (2^20 increments/s) for 1 s, then -1 revolution/s.
        let v: i32 = match enabled_at {
            Some(e) if cycle < e + 1_000 => 1 << 20,
            Some(_) => -(1 << 20),
            None => 0,
        };
        let out = rt.domain_mut(0).image_mut();
        cw.write(out, word as u64);
        mode.write(out, 9); // cyclic synchronous velocity
        target.write(out, v as u32 as u64);
        if cycle == enabled_at.map_or(u64::MAX, |e| e + 999) {
            println!("at +1 rev/s: actual velocity {last}");
            assert!((last - (1 << 20)).abs() < (1 << 20) / 50, "{last}");
        }
        rt.send().unwrap();
        rt.wait_return(rt.now() + 1_000_000).unwrap();
    }
    let e = enabled_at.expect("the drive reached operation enabled");
    println!("enabled at cycle {e}; at -1 rev/s: actual velocity {last}");
    assert!(e < 100, "enabled after {e} cycles");
    assert!((last + (1 << 20)).abs() < (1 << 20) / 50, "{last}");
    assert_eq!(drive.faults_seen(), 0);
}
