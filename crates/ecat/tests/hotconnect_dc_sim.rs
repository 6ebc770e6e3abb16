//! Hot-connect groups with distributed clocks (issue 15), on virtual time: the group's
//! SubDevices come back freshly powered (system time offset and delay 0, local clocks
//! started anew); each time they join, their clocks are set up again (delay, offset, control
//! loop) before they are configured, so the sync monitor of the whole bus settles back under
//! 100 ns and stays there.

use ecat::supervisor::Event;

mod common;
use common::hotconnect::{bring_up, net, network, HEAD, MS};

#[test]
fn a_joining_group_joins_the_sync() {
    let (mut rt, vt) = bring_up(network(), true);
    let cycle = |rt: &mut ecat::runtime::Runtime| {
        vt.advance(MS);
        rt.tx_rx(MS).unwrap();
        rt.dc_sync_monitor_ns().unwrap_or(u32::MAX)
    };
    for _ in 0..500 {
        cycle(&mut rt);
    }
    for round in 0..3 {
        net(&mut rt).disconnect(HEAD).unwrap();
        for _ in 0..300 {
            cycle(&mut rt);
        }
        net(&mut rt).connect(HEAD).unwrap();
        let mut ready = None;
        for k in 0..500 {
            cycle(&mut rt);
            while let Some(e) = rt.next_event() {
                if let Event::GroupReady { .. } = e {
                    ready = Some(k);
                }
            }
        }
        let ready = ready.unwrap_or_else(|| panic!("round {round}: the group reached OP"));
        // After the join settles: the whole bus in sync, the joined clocks included.
        let worst = (0..1000).map(|_| cycle(&mut rt)).max().unwrap();
        // The simulator's truth: each joined clock's system time against the reference's (for
        // the members with a system time; the EL2008 and EL1018 have none).
        let with_clock: Vec<usize> = (4..7)
            .filter(|&p| {
                let s = rt.supervisor().states().nth(p).unwrap();
                s.info.dc.is_some_and(|d| d.system_time)
            })
            .collect();
        assert!(!with_clock.is_empty(), "the group has a DC clock");
        let now = vt.now();
        let n = net(&mut rt);
        n.advance_to(now);
        let r = n.subdevice(0).unwrap().system_time(now) as i64;
        let offsets: Vec<i64> = with_clock
            .iter()
            .map(|&p| n.subdevice(p).unwrap().system_time(now) as i64 - r)
            .collect();
        println!(
            "round {round}: group in OP {ready} cycles after appearing; sync monitor worst {worst} ns over the next 1000 cycles; joined clocks minus the reference {offsets:?} ns"
        );
        assert!(
            offsets.iter().all(|o| o.abs() < 100),
            "round {round}: joined clocks off the reference by {offsets:?} ns"
        );
        assert!(worst < 100, "round {round}: sync monitor {worst} ns");
    }
}

/// A group in the middle of the bus: on port 3 of an EK1122, which the frame passes before
/// port 1, where a fixed EK1100 with an EL4132 hangs. When the group leaves, the fixed EK1100
/// is reached earlier; when it comes back, later: each time the runtime measures the delays
/// again and the fixed EK1100's clock stays on the reference's time (simulator's truth).
const NET_MIDDLE: &str = "[[subdevice]]\nmodel = \"EK1100\"\n[[subdevice]]\nmodel = \"EK1122\"\n\
    [[subdevice]]\nmodel = \"EK1100\"\nalias = 8192\nparent = 1\nport = 3\n\
    [[subdevice]]\nmodel = \"EL2008\"\n[[subdevice]]\nmodel = \"EL1018\"\n\
    [[subdevice]]\nmodel = \"EK1100\"\nparent = 1\nport = 1\n[[subdevice]]\nmodel = \"EL4132\"\n";

#[test]
fn the_subdevices_behind_a_group_in_the_middle_keep_time() {
    let middle =
        ecat_sim::Network::from_toml_str(NET_MIDDLE, "middle", std::path::Path::new(".")).unwrap();
    let (mut rt, vt) = common::hotconnect::bring_up_with(
        middle,
        true,
        ecat::hotconnect::HotConnectGroup::new(
            "tool",
            ecat::hotconnect::GroupHead::Alias(0x2000),
            3,
        ),
    );
    let cycle = |rt: &mut ecat::runtime::Runtime| {
        vt.advance(MS);
        rt.tx_rx(MS).unwrap();
        while rt.next_event().is_some() {}
    };
    // The clocks with a system time, minus the reference's.
    let offsets = |rt: &mut ecat::runtime::Runtime| {
        let now = vt.now();
        let n = net(rt);
        n.advance_to(now);
        let r = n.subdevice(0).unwrap().system_time(now) as i64;
        [2usize, 5]
            .map(|p| n.subdevice(p).unwrap().system_time(now) as i64 - r)
            .to_vec()
    };
    for _ in 0..500 {
        cycle(&mut rt);
    }
    let mut seen = vec![offsets(&mut rt)];
    for step in 0..4 {
        if step % 2 == 0 {
            net(&mut rt).disconnect(2).unwrap();
        } else {
            net(&mut rt).connect(2).unwrap();
        }
        for _ in 0..1500 {
            cycle(&mut rt);
        }
        let o = offsets(&mut rt);
        seen.push(o.clone());
        // The fixed EK1100 behind the group always; the group head when it is there.
        let check = if step % 2 == 0 { &o[1..] } else { &o[..] };
        assert!(
            check.iter().all(|x| x.abs() < 50),
            "after step {step}: clocks minus the reference {o:?} ns (all: {seen:?})"
        );
    }
    let (rounds, corrected) = rt.dc_remeasure_figures().unwrap();
    println!(
        "group in the middle: clocks minus the reference per step {seen:?} ns; {rounds} measuring rounds, {corrected} delays corrected"
    );
    assert!(
        corrected >= 2,
        "the fixed EK1100's delay was corrected both ways"
    );
}
