//! Hot-connect groups (issue 15) on virtual time: a three-SubDevice group on the EK1100's
//! second port (EK1100 coupler with alias 0x2000, EL2008, EL1018) leaves and joins ten times
//! while the fixed part (EK1100, EL2008, EL1018, EL4132) cycles: each time the group is in OP
//! within 500 cycles of appearing, the fixed part never leaves OP, its data stays complete,
//! and nothing about it is reported. The same group absent at the scan, laid out from its
//! members' SII images, joins when it is plugged in for the first time.

use ecat::clock::VirtualTime;
use ecat::domain::DomainState;
use ecat::hotconnect::HotConnectGroup;
use ecat::runtime::Runtime;
use ecat::supervisor::Event;
use ecat_wire::al::AlState;

mod common;
use common::hotconnect::{activate, bring_up, group, net, network, open, FIXED, HEAD, MS};

/// What one cycle shows about the fixed part and the group.
#[derive(Default)]
struct Seen {
    fixed_out_of_op: u64,
    not_complete: u64,
    errors_for_fixed: Vec<String>,
    connected: Option<u64>,
    disconnected: Option<u64>,
    ready: Option<(u64, u64)>,
}

fn cycle(rt: &mut Runtime, vt: &VirtualTime, seen: &mut Seen) {
    vt.advance(MS);
    rt.tx_rx(MS).unwrap();
    let fixed_ok = rt
        .supervisor()
        .states()
        .take(FIXED)
        .all(|s| !s.lost && s.status.state() == Some(AlState::Op));
    if !fixed_ok {
        seen.fixed_out_of_op += 1;
    }
    if rt.domain(0).state() != DomainState::Complete {
        seen.not_complete += 1;
    }
    while let Some(e) = rt.next_event() {
        match &e {
            Event::GroupConnected { cycle, .. } => seen.connected = Some(*cycle),
            Event::GroupDisconnected { cycle, .. } => seen.disconnected = Some(*cycle),
            Event::GroupReady {
                cycle,
                after_cycles,
                ..
            } => seen.ready = Some((*cycle, *after_cycles)),
            Event::Reached { .. } => {}
            Event::DcDelaysMeasured { .. } => {}
            other => seen.errors_for_fixed.push(other.to_string()),
        }
        if std::env::var("HC_DEBUG").is_ok() {
            println!("{e}");
        }
    }
}

#[test]
fn a_group_leaves_and_joins_ten_times_while_the_rest_cycles() {
    let (mut rt, vt) = bring_up(network(), false);
    assert!(rt.supervisor().group_present(0));
    assert_eq!(rt.supervisor().group_members(0), Some(4..7));
    let mut seen = Seen::default();
    for _ in 0..100 {
        cycle(&mut rt, &vt, &mut seen);
    }
    let mut worst = 0;
    for round in 0..10 {
        net(&mut rt).disconnect(HEAD).unwrap();
        seen.disconnected = None;
        for _ in 0..200 {
            cycle(&mut rt, &vt, &mut seen);
        }
        assert!(
            seen.disconnected.is_some(),
            "round {round}: disconnect reported"
        );
        assert!(!rt.supervisor().group_present(0));
        assert!(
            rt.supervisor().all_running(),
            "an absent group is not waited for"
        );
        net(&mut rt).connect(HEAD).unwrap();
        let appeared = rt.cycle_count();
        seen.ready = None;
        seen.connected = None;
        let mut n = 0;
        while seen.ready.is_none() && n < 1000 {
            cycle(&mut rt, &vt, &mut seen);
            n += 1;
        }
        let (at, _) = seen.ready.expect("the group reaches OP");
        assert!(seen.connected.is_some(), "round {round}: connect reported");
        let took = at - appeared;
        worst = worst.max(took);
        assert!(
            took <= 500,
            "round {round}: in OP {took} cycles after appearing"
        );
        for p in 4..7 {
            let s = rt.supervisor().states().nth(p).unwrap();
            assert_eq!(s.status.state(), Some(AlState::Op), "round {round}: {s}");
        }
        for _ in 0..100 {
            cycle(&mut rt, &vt, &mut seen);
        }
    }
    println!(
        "group in OP at most {worst} cycles after appearing; fixed part out of OP in {} cycles, domain not complete in {} cycles",
        seen.fixed_out_of_op, seen.not_complete
    );
    assert_eq!(seen.fixed_out_of_op, 0, "the fixed part never leaves OP");
    assert_eq!(seen.errors_for_fixed, Vec::<String>::new());
    assert_eq!(seen.not_complete, 0, "the domain stays complete");
}

/// The group of [`group`] with its members' SII images taken from the simulated devices.
fn group_with_images(net: &ecat_sim::Network) -> HotConnectGroup {
    let mut g = group();
    g.images = (HEAD..HEAD + 3)
        .map(|p| net.subdevice(p).unwrap().sii().to_vec())
        .collect();
    g.absent_position = Some(HEAD as u16);
    g
}

#[test]
fn a_group_absent_at_the_scan_joins_when_plugged_in() {
    absent_group_joins(false);
}

#[test]
fn a_group_absent_at_the_scan_joins_with_distributed_clocks() {
    absent_group_joins(true);
}

fn absent_group_joins(with_dc: bool) {
    let mut sim = network();
    let g = group_with_images(&sim);
    sim.disconnect(HEAD).unwrap();
    let (mut md, vt) = open(sim);
    assert_eq!(
        md.scan().unwrap().len(),
        FIXED,
        "the group is not on the bus"
    );
    // Without images the group is not laid out (it must then be plugged in at the start).
    assert!(md.place_absent_groups(&[group()]).unwrap().is_empty());
    let placed = md.place_absent_groups(std::slice::from_ref(&g)).unwrap();
    assert_eq!(placed, vec![4, 5, 6]);
    let subs = md.subdevices();
    assert!(subs[4].absent_at_scan && subs[4].alias == 0x2000);
    assert!(subs[5].name.starts_with("EL2008"), "{}", subs[5].name);
    let stations: std::collections::BTreeSet<u16> = subs.iter().map(|s| s.station).collect();
    assert_eq!(stations.len(), 7, "every station address is unique");
    let mut rt = activate(md, with_dc, g);
    assert!(!rt.supervisor().group_present(0));
    assert_eq!(rt.supervisor().group_members(0), Some(4..7));
    rt.run_until_state(AlState::Op, MS, 5_000)
        .expect("the fixed part reaches OP without the group");
    let mut seen = Seen::default();
    for _ in 0..300 {
        cycle(&mut rt, &vt, &mut seen);
    }
    assert!(
        rt.supervisor().all_running(),
        "the absent group is not waited for"
    );
    assert_eq!(
        seen.fixed_out_of_op,
        0,
        "{}",
        seen.errors_for_fixed.join("; ")
    );
    assert!(rt.domain(0).wkc() < rt.domain(0).expected_wkc());
    // Plugged in for the first time.
    net(&mut rt).connect(HEAD).unwrap();
    let appeared = rt.cycle_count();
    let mut n = 0;
    while seen.ready.is_none() && n < 1000 {
        cycle(&mut rt, &vt, &mut seen);
        n += 1;
    }
    let (at, _) = seen.ready.expect("the group reaches OP");
    assert!(seen.connected.is_some(), "connect reported");
    println!(
        "absent group in OP {} cycles after appearing",
        at - appeared
    );
    assert!(
        at - appeared <= 500,
        "in OP {} cycles after appearing",
        at - appeared
    );
    for _ in 0..20 {
        cycle(&mut rt, &vt, &mut seen);
    }
    for p in 0..7 {
        let s = rt.supervisor().states().nth(p).unwrap();
        assert_eq!(s.status.state(), Some(AlState::Op), "{s}");
    }
    assert_eq!(
        rt.domain(0).wkc(),
        rt.domain(0).expected_wkc(),
        "every datagram full"
    );
    if with_dc {
        // Its clocks were set when it joined with an assumed delay; once it is in OP the
        // runtime measures the delays again and corrects them, and the control loops move the
        // joined clocks onto the reference's time: the sync monitor (max |0x092C|) stays small
        // and, by the simulator's truth, the joined head's system time matches the reference's.
        let mut worst = 0;
        for _ in 0..1000 {
            cycle(&mut rt, &vt, &mut seen);
            worst = worst.max(rt.dc_sync_monitor_ns().unwrap_or(u32::MAX));
        }
        let (rounds, corrected) = rt.dc_remeasure_figures().expect("DC with groups");
        let now = vt.now();
        let n = net(&mut rt);
        n.advance_to(now);
        let off = n.subdevice(HEAD).unwrap().system_time(now) as i64
            - n.subdevice(0).unwrap().system_time(now) as i64;
        println!(
            "DC after the join: {rounds} measuring round(s), {corrected} delay(s) corrected; sync monitor at most {worst} ns over 1000 cycles; joined head minus the reference {off} ns"
        );
        assert!(
            rounds >= 1 && corrected >= 1,
            "the delays were measured again"
        );
        assert!(worst < 1_000, "sync monitor {worst} ns");
        assert!(off.abs() < 50, "joined clock {off} ns off the reference");
    }
    // Its process data flows: the EL1018's inputs reach the image, the EL2008's outputs the
    // device.
    net(&mut rt).set_inputs(6, &[0xA5]).unwrap();
    let out = rt.locate(5, 0x7000, 1).expect("EL2008 output 1 is mapped");
    let inp = rt.locate(6, 0x6000, 1).expect("EL1018 input 1 is mapped");
    rt.domain_mut(0).image_mut()[out.byte] = 0x3C;
    for _ in 0..5 {
        cycle(&mut rt, &vt, &mut seen);
    }
    assert_eq!(rt.domain(0).image()[inp.byte], 0xA5);
    assert_eq!(net(&mut rt).outputs(5).unwrap()[0], 0x3C);
    assert_eq!(seen.not_complete, 0, "the domain stays complete throughout");
    assert_eq!(seen.errors_for_fixed, Vec::<String>::new());
}
