//! The cyclic path allocates nothing: a counting global allocator watches 10,000 cycles of
//! `receive → process → write outputs → send → wait for return` against the in-process
//! simulated network (which is counted too: the whole loop must be allocation-free).

use ecat::clock::VirtualTime;
use ecat::link::sim::SimLink;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;

mod common;
use common::counting::{self, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn ten_thousand_cycles_allocate_nothing() {
    let vt = VirtualTime::new();
    let link = SimLink::with_network(Network::open("io").unwrap(), "sim:io".into(), "io".into())
        .on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 2_000).unwrap();
    // Warm up (first cycles may size internal buffers once).
    for _ in 0..100 {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
    }
    let acyclic_before = rt.counters().1.datagrams_sent;
    counting::start();
    let mut complete = 0u32;
    for c in 0..10_000u32 {
        vt.advance(1_000_000);
        rt.receive().unwrap();
        rt.process();
        if rt.domain(0).state() == ecat::domain::DomainState::Complete {
            complete += 1;
        }
        rt.domain_mut(0).outputs_mut()[0] = c as u8;
        rt.send().unwrap();
        rt.wait_return(rt.now() + 1_000_000).unwrap();
    }
    let n = counting::stop();
    println!("allocations over 10,000 cycles: {n}; complete cycles {complete}");
    assert_eq!(n, 0, "the cyclic path allocated {n} times in 10,000 cycles");
    assert!(
        complete >= 9_999,
        "only {complete} of 10,000 cycles had the full WKC"
    );
    let acyclic = rt.counters().1.datagrams_sent - acyclic_before;
    assert_eq!(
        acyclic, 0,
        "the supervisor sent {acyclic} acyclic datagrams while all was well"
    );
}
