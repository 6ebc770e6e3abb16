//! Running the shipped TwinCAT-style ENI against a simulated network built from the same ENI,
//! in process on virtual time: the bus matches, every SubDevice reaches OP, every cycle's
//! working counters equal the ENI's, and the variables are readable by name.

use ecat::clock::VirtualTime;
use ecat::domain::DomainState;
use ecat::link::sim::SimLink;
use ecat::MainDevice;
use ecat_config::eni::{Eni, InitCmd, Transition, Validate};
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::path::PathBuf;

fn shipped() -> Option<Eni> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p = ["../shared/testdata", "../../shared/testdata", "testdata"]
        .iter()
        .map(|d| repo.join(d).join("eni/twincat-style-4xElmoGold-IMU.xml"))
        .find(|p| p.exists());
    let Some(p) = p else {
        eprintln!(
            "skipped: the shipped ENI is in neither the shared nor the repository's testdata"
        );
        return None;
    };
    Some(Eni::from_path(&p).unwrap())
}

fn open(net: Network) -> MainDevice {
    let link = SimLink::with_network(net, "sim:eni".into(), "eni".into())
        .on_virtual_time(VirtualTime::new());
    MainDevice::with_link(Box::new(link))
}

#[test]
fn shipped_eni_reaches_op_with_the_enis_working_counters() {
    let Some(eni) = shipped() else { return };
    let mut md = open(ecat_sim::eni::network_from_eni(&eni).unwrap());
    md.scan().unwrap();
    let setup = md.configure_from_eni(&eni).unwrap();
    for n in &setup.notes {
        println!("note: {n}");
    }
    println!("init commands at transitions: {:?}", setup.cmd_counts());
    assert_eq!(
        setup.cmd_counts(),
        vec![("IP", 4 * 3)],
        "watchdog divider, PDI and SM watchdog per drive"
    );
    // The ENI's logical commands: LRD 0x01000000 (14 bytes, WKC 1), LRW 0x01000800 (56, 12).
    let plans: Vec<_> = setup.layout.domains[0]
        .plans
        .iter()
        .map(|p| (p.command, p.logical, p.len, p.expected_wkc))
        .collect();
    use ecat_wire::Command;
    assert_eq!(
        plans,
        vec![
            (Command::Lrd, 0x0100_0000, 14, 1),
            (Command::Lrw, 0x0100_0800, 56, 12)
        ]
    );
    let (mut rt, image) = md.activate_eni(setup, None).unwrap();
    // The ENI's one frame as given: NOP, ARMW 0x0910 (4), mailbox-state LRD (1), LRD (14),
    // LRW (56), BRD 0x0130 (2): Ethernet 14 + EtherCAT 2 + 6 datagrams of 12 + data 81 = 169
    // bytes; then ecat's own LRD of the SM1 status bits it maps (12 + 1 = 13 bytes; the ENI's
    // MailboxStates/StatusBitAddr are not used for this yet).
    assert_eq!(rt.frame_layout(), (1, 169 + 13));
    rt.run_until_state(AlState::Op, 1_000_000, 3000).unwrap();
    for _ in 0..200 {
        assert!(rt.tx_rx(1_000_000).unwrap());
        let d = rt.domain(0);
        assert_eq!(d.state(), DomainState::Complete);
        assert_eq!(d.wkc(), 13);
    }
    assert_eq!(rt.counters().0.fixed_wkc_mismatches, 0);
    // Variables by name: write a drive's target and see it in the output image.
    let v = image
        .var("WheelRearLeft.Inputs.Position actual value")
        .unwrap();
    assert_eq!((v.location.byte, v.bits), (1536 + 97, 32));
    assert_eq!(image.vars().len(), 45);
    let out = image
        .vars()
        .iter()
        .find(|v| !v.input && v.name.starts_with("WheelRearLeft."))
        .unwrap()
        .name
        .clone();
    image.write(&mut rt, &out, 0x1234).unwrap();
    assert_eq!(image.get::<i32>(&rt, &out).unwrap(), 0x1234);
    assert!(image.get::<u8>(&rt, &out).is_err());
    assert_eq!(image.read(&rt, &out).unwrap().as_i64(), 0x1234);
    rt.tx_rx(1_000_000).unwrap();
    assert_eq!(
        image.read(&rt, &out).unwrap().as_i64(),
        0x1234,
        "outputs survive the LRW"
    );
    let e = image.read(&rt, "No.Such.Variable").unwrap_err().to_string();
    assert!(e.contains("no variable"), "{e}");
    // The ENI names CoE profile 402 for the drives: the generic device runs the CiA 402
    // model, so the state machine answers the control word (shutdown, switch on, enable).
    let cw = "WheelRearLeft.Outputs.Control word";
    let sw = "WheelRearLeft.Inputs.Status word";
    for (control, want) in [(0x06, 0x21), (0x07, 0x23), (0x0F, 0x27)] {
        image.write(&mut rt, cw, control).unwrap();
        for _ in 0..20 {
            rt.tx_rx(1_000_000).unwrap();
        }
        let status = image.read(&rt, sw).unwrap().as_i64();
        assert_eq!(
            status & 0x6F,
            want,
            "control 0x{control:02x}: status 0x{status:04x}"
        );
    }
}

#[test]
fn a_bus_that_does_not_match_names_every_position() {
    let Some(eni) = shipped() else { return };
    let mut md = open(Network::open("servo6").unwrap());
    md.scan().unwrap();
    let e = md.configure_from_eni(&eni).unwrap_err().to_string();
    println!("{e}");
    assert!(
        e.contains("position 0: the ENI expects \"Imu\" vendor 0x00000021"),
        "{e}"
    );
    assert!(
        e.contains("position 4: the ENI expects \"WheelFrontRight\""),
        "{e}"
    );
    assert!(e.contains("position 5: found"), "{e}");
}

#[test]
fn a_failing_validate_names_subdevice_transition_command_and_values() {
    let Some(mut eni) = shipped() else { return };
    let net = ecat_sim::eni::network_from_eni(&eni).unwrap();
    // A register check the bus cannot pass: the watchdog divider read back as 0x1234.
    let drive = &mut eni.slaves[1];
    let mut c = drive
        .init_cmds
        .iter()
        .find(|c| c.comment == "set watchdog divider")
        .unwrap()
        .clone();
    c.cmd = 4;
    c.comment = "check watchdog divider".into();
    c.data = vec![0, 0];
    c.validate = Some(ecat_config::eni::Validate {
        data: vec![0x34, 0x12],
        mask: None,
        timeout_ms: 20,
    });
    drive.init_cmds.push(c);
    let e = failure_of(net, &eni);
    assert!(e.contains("SubDevice 1 (0x1002"), "{e}");
    assert!(e.contains("IP (INIT→PREOP)"), "{e}");
    assert!(e.contains("'check watchdog divider' (FPRD 0x0400"), "{e}");
    assert!(e.contains("read c209 but expected 3412"), "{e}");
}

/// Bring `eni` up on `net` towards OP: the first transition command failure the supervisor
/// reports (the bus must not reach OP).
fn failure_of(net: Network, eni: &Eni) -> String {
    let mut md = open(net);
    md.scan().unwrap();
    let setup = md.configure_from_eni(eni).unwrap();
    let (mut rt, _) = md.activate_eni(setup, None).unwrap();
    let r = rt.run_until_state(AlState::Op, 1_000_000, 300);
    assert!(
        r.is_err(),
        "a failing init command must keep the bus out of OP"
    );
    let mut events = Vec::new();
    while let Some(e) = rt.next_event() {
        events.push(e.to_string());
    }
    let e = events
        .iter()
        .find(|e| e.contains("failed"))
        .cloned()
        .unwrap_or_else(|| panic!("no failure among {events:#?}"));
    println!("{e}");
    e
}

/// A register init command of `t` on ENI slave `slave`, placed before (or, `after`, behind)
/// the transition's AL-control write.
fn add_cmd(eni: &mut Eni, slave: usize, t: Transition, mut c: InitCmd, after: bool) {
    c.transitions = vec![t];
    let list = &mut eni.slaves[slave].init_cmds;
    let at = list
        .iter()
        .position(|x| x.has(t) && x.ado == 0x0120)
        .unwrap_or(list.len());
    list.insert(if after { at + 1 } else { at }, c);
}

fn reg_cmd(cmd: u8, ado: u16, data: &[u8], comment: &str) -> InitCmd {
    InitCmd {
        transitions: vec![],
        before_slave: false,
        comment: comment.into(),
        requires: None,
        cmd,
        adp: 0,
        ado,
        data: data.to_vec(),
        cnt: Some(1),
        retries: 3,
        validate: None,
        timeout_ms: None,
    }
}

#[test]
fn init_commands_of_every_transition_run_in_order() {
    let Some(mut eni) = shipped() else { return };
    let net = ecat_sim::eni::network_from_eni(&eni).unwrap();
    // User RAM of the IMU (0x0F80..): SO writes 0xA5 before the OP request and 0x5A into
    // the next byte once OP is reached; OS (OP→SAFEOP) writes 0x77; PI/SI/OI (to INIT) 0x11.
    add_cmd(
        &mut eni,
        0,
        Transition::SO,
        reg_cmd(2, 0x0F80, &[0xA5], "so before"),
        false,
    );
    add_cmd(
        &mut eni,
        0,
        Transition::SO,
        reg_cmd(5, 0x0F81, &[0x5A], "so after"),
        true,
    );
    add_cmd(
        &mut eni,
        0,
        Transition::OS,
        reg_cmd(5, 0x0F82, &[0x77], "os"),
        false,
    );
    for t in [Transition::SI, Transition::OI] {
        add_cmd(
            &mut eni,
            0,
            t,
            reg_cmd(5, 0x0F83, &[0x11], "to init"),
            false,
        );
    }
    // An SO validate on a drive that passes: read back its SM watchdog (10000 = 0x2710).
    let mut check = reg_cmd(4, 0x0420, &[0, 0], "check SM watchdog");
    check.validate = Some(Validate {
        data: vec![0x10, 0x27],
        mask: None,
        timeout_ms: 50,
    });
    add_cmd(&mut eni, 2, Transition::SO, check, false);
    // And a CoE init command of SO on a drive: 0x6060 (modes of operation) = 9.
    let coe = eni.slaves[3]
        .coe_init_cmds()
        .iter()
        .find(|c| c.index == 0x6060)
        .unwrap()
        .clone();
    let mailbox = eni.slaves[3].mailbox.as_mut().unwrap();
    mailbox.coe_init_cmds.push(ecat_config::eni::CoeInitCmd {
        transitions: vec![Transition::SO],
        data: vec![9],
        comment: "csv in OP".into(),
        ..coe
    });
    let mut md = open(net);
    md.scan().unwrap();
    let setup = md.configure_from_eni(&eni).unwrap();
    println!("{:?}", setup.cmd_counts());
    assert!(
        setup.cmd_counts().contains(&("SO", 4)),
        "{:?}",
        setup.cmd_counts()
    );
    let (mut rt, _) = md.activate_eni(setup, None).unwrap();
    rt.run_until_state(AlState::SafeOp, 1_000_000, 3000)
        .unwrap();
    let ram = |rt: &mut ecat::runtime::Runtime| {
        let mut b = [0u8; 4];
        sim(rt).subdevice(0).unwrap().read(0x0F80, &mut b);
        b
    };
    assert_eq!(ram(&mut rt), [0, 0, 0, 0], "nothing of SO before OP");
    rt.run_until_state(AlState::Op, 1_000_000, 3000).unwrap();
    assert_eq!(
        ram(&mut rt),
        [0xA5, 0x5A, 0, 0],
        "SO before and after the request"
    );
    let od = sim(&mut rt).subdevice(3).unwrap().od().unwrap();
    assert_eq!(od.get(0x6060, 0), Some(9), "CoE init command of SO");
    rt.run_until_state(AlState::SafeOp, 1_000_000, 3000)
        .unwrap();
    assert_eq!(ram(&mut rt), [0xA5, 0x5A, 0x77, 0], "OS on the way down");
    rt.run_until_state(AlState::Init, 1_000_000, 3000).unwrap();
    assert_eq!(ram(&mut rt)[3], 0x11, "SI on the way to INIT");
    assert_eq!(
        sim(&mut rt).subdevice(0).unwrap().al_status().state(),
        Some(AlState::Init)
    );
    while let Some(e) = rt.next_event() {
        assert!(!e.to_string().contains("failed"), "{e}");
    }
}

#[test]
fn a_failing_validate_in_so_names_subdevice_transition_command_and_values() {
    let Some(mut eni) = shipped() else { return };
    let net = ecat_sim::eni::network_from_eni(&eni).unwrap();
    let mut check = reg_cmd(4, 0x0420, &[0, 0], "check SM watchdog");
    check.validate = Some(Validate {
        data: vec![0x34, 0x12],
        mask: Some(vec![0xFF, 0xFF]),
        timeout_ms: 20,
    });
    add_cmd(&mut eni, 2, Transition::SO, check, false);
    let e = failure_of(net, &eni);
    assert!(e.contains("SubDevice 2 (0x1003"), "{e}");
    assert!(e.contains("SO (SAFEOP→OP)"), "{e}");
    assert!(
        e.contains("'check SM watchdog' (FPRD 0x0420, 2 bytes)"),
        "{e}"
    );
    assert!(
        e.contains("read 1027 but expected 3412 under mask ffff"),
        "{e}"
    );
}

#[test]
fn a_drive_power_cycled_gets_its_eni_configuration_again() {
    let Some(eni) = shipped() else { return };
    let vt = VirtualTime::new();
    let net = ecat_sim::eni::network_from_eni(&eni).unwrap();
    let link =
        SimLink::with_network(net, "sim:eni".into(), "eni".into()).on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let setup = md.configure_from_eni(&eni).unwrap();
    let (mut rt, _) = md.activate_eni(setup, None).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 3000).unwrap();
    let mut back = false;
    for cycle in 0..3_000u64 {
        if cycle == 100 {
            sim(&mut rt).unplug(2).unwrap();
        }
        if cycle == 1_000 {
            sim(&mut rt).replug(2, true).unwrap();
        }
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
        while let Some(e) = rt.next_event() {
            println!("{e}");
        }
        if cycle > 1_000
            && rt.supervisor().all_running()
            && rt.domain(0).state() == DomainState::Complete
        {
            back = true;
            break;
        }
    }
    assert!(back, "WheelRearRight back in OP with the full WKC");
    // The drive's PDO assignment was written again by the ENI's CoE init commands.
    let od = sim(&mut rt).subdevice(2).unwrap().od().unwrap();
    assert_eq!(od.get(0x1C12, 1), Some(0x1601));
    assert_eq!(
        od.get(0x6060, 0),
        Some(8),
        "'Op mode' CoE init command replayed"
    );
    // And the ENI's SM watchdog (10000; 1000 at power-on) was written again.
    assert_eq!(sim(&mut rt).subdevice(2).unwrap().read_u16(0x0420), 10_000);
}

fn sim(rt: &mut ecat::runtime::Runtime) -> &mut Network {
    rt.link_mut().sim_network().expect("simulated link")
}

#[test]
fn impossible_layouts_are_refused_with_a_sentence() {
    let Some(eni) = shipped() else { return };
    let net = || ecat_sim::eni::network_from_eni(&eni).unwrap();
    let mut big = eni.clone();
    big.process_image.inputs.byte_size = u32::MAX;
    let mut md = open(net());
    md.scan().unwrap();
    let e = md.configure_from_eni(&big).unwrap_err().to_string();
    assert!(e.contains("at most 1048576"), "{e}");
    let mut long = eni.clone();
    for c in &mut long.cyclic[0].frames[0].cmds {
        if c.cmd == 12 {
            c.data_len = 5000;
        }
    }
    let mut md = open(net());
    md.scan().unwrap();
    let e = md.configure_from_eni(&long).unwrap_err().to_string();
    assert!(
        e.contains("5000 bytes") && e.contains("at most 1486"),
        "{e}"
    );
}

#[test]
fn the_enis_frame_boundaries_are_kept() {
    let Some(mut eni) = shipped() else { return };
    let net = ecat_sim::eni::network_from_eni(&eni).unwrap();
    // Split the one frame: NOP, ARMW, mailbox-state LRD | LRD, LRW, BRD.
    let frame = &mut eni.cyclic[0].frames[0];
    let second = frame.cmds.split_off(3);
    let mut f2 = frame.clone();
    f2.cmds = second;
    eni.cyclic[0].frames.push(f2);
    let mut md = open(net);
    md.scan().unwrap();
    let setup = md.configure_from_eni(&eni).unwrap();
    let (mut rt, _) = md.activate_eni(setup, None).unwrap();
    // Two frames: 16 + 3 * 12 + 9 = 61 → 61 bytes; 16 + 3 * 12 + 72 = 124, plus ecat's
    // mailbox-status LRD at the end (13).
    assert_eq!(rt.frame_layout(), (2, 61 + 124 + 13));
    rt.run_until_state(AlState::Op, 1_000_000, 3000).unwrap();
    for _ in 0..50 {
        assert!(rt.tx_rx(1_000_000).unwrap());
        assert_eq!(rt.domain(0).wkc(), 13);
    }
}
