//! Hot-connect groups cost no allocation per cycle (issue 15): a counting global allocator
//! watches 3,000 cycles with the group absent (its members probed for every 10 ms) and 3,000
//! with it back in OP, the simulator included.

use ecat::domain::DomainState;
use ecat::supervisor::Event;

mod common;
use common::counting::{self, Counting};
use common::hotconnect::{bring_up, net, network, HEAD, MS};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn absent_and_present_groups_allocate_nothing() {
    let (mut rt, vt) = bring_up(network(), false);
    let run = |rt: &mut ecat::runtime::Runtime, n: u32| {
        let mut complete = 0u32;
        for c in 0..n {
            vt.advance(MS);
            rt.receive().unwrap();
            rt.process();
            if rt.domain(0).state() == DomainState::Complete {
                complete += 1;
            }
            rt.domain_mut(0).outputs_mut()[0] = c as u8;
            rt.send().unwrap();
            rt.wait_return(rt.now() + MS).unwrap();
        }
        complete
    };
    net(&mut rt).disconnect(HEAD).unwrap();
    run(&mut rt, 300);
    let mut gone = false;
    while let Some(e) = rt.next_event() {
        gone |= matches!(e, Event::GroupDisconnected { .. });
    }
    assert!(gone, "the disconnect is reported");
    counting::start();
    let complete = run(&mut rt, 3_000);
    let absent = counting::stop();
    net(&mut rt).connect(HEAD).unwrap();
    run(&mut rt, 300);
    assert!(rt.supervisor().group_present(0));
    assert!(rt.supervisor().all_running());
    while rt.next_event().is_some() {}
    counting::start();
    let complete_back = run(&mut rt, 3_000);
    let present = counting::stop();
    println!(
        "allocations over 3,000 cycles: group absent {absent}, present {present}; complete cycles {complete}, {complete_back}"
    );
    assert_eq!(absent, 0, "{absent} allocations with the group absent");
    assert_eq!(present, 0, "{present} allocations with the group present");
    assert_eq!((complete, complete_back), (3_000, 3_000));
}
