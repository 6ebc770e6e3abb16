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
