//! Hot-connect groups (issue 15) on virtual time: a three-SubDevice group on the EK1100's
//! second port (EK1100 coupler with alias 0x2000, EL2008, EL1018) leaves and joins ten times
//! while the fixed part (EK1100, EL2008, EL1018, EL4132) cycles: each time the group is in OP
//! within 500 cycles of appearing, the fixed part never leaves OP, its data stays complete,
//! and nothing about it is reported.

use ecat::clock::VirtualTime;
use ecat::domain::DomainState;
use ecat::runtime::Runtime;
use ecat::supervisor::Event;
use ecat_wire::al::AlState;

mod common;
use common::hotconnect::{bring_up, net, network, FIXED, HEAD, MS};

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
