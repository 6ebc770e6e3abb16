//! The redundant path allocates nothing per cycle: `ring8` in OP at 1 ms with DC through the
//! redundant link, 1,000 cycles on the closed ring and 1,000 with a broken cable (every frame
//! sent on through the backup port, the reference time shifted for the back half).

use ecat::clock::VirtualTime;
use ecat::dc::DcMode;
use ecat::link::redundant::RedundantLink;
use ecat::link::sim_ring;
use ecat::MainDevice;
use ecat_sim::Network;

mod common;
use common::counting::{self, Counting};
use common::dc::{self, MS};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn redundant_cycles_allocate_nothing() {
    let vt = VirtualTime::new();
    vt.advance(1_000_000_000);
    let (main, backup, ring) =
        sim_ring::with_network(Network::open("ring8").unwrap(), "ring8", Some(vt.clone())).unwrap();
    let link = RedundantLink::new(Box::new(main), Box::new(backup)).unwrap();
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let setup = dc::configure(&mut md, 2_000);
    let mut rt = dc::activate_to_op(md, setup, DcMode::ReferenceFollowsMaster);
    let mut run = |n: u64| {
        for _ in 0..n {
            vt.advance(MS);
            rt.tx_rx(MS).unwrap();
        }
    };
    // Warm-up: the simulator's SYNC pulse logs fill up to their bound (they allocate until then).
    run(2_500);
    counting::start();
    run(1_000);
    assert_eq!(
        counting::stop(),
        0,
        "allocations in 1,000 cycles on the closed ring"
    );
    ring.lock().unwrap().network().break_cable(3, 4).unwrap();
    run(50);
    counting::start();
    run(1_000);
    assert_eq!(
        counting::stop(),
        0,
        "allocations in 1,000 cycles on the broken ring"
    );
    let st = rt.link().redundancy().unwrap();
    assert!(
        st.open && st.dc_shift.is_some() && st.resent >= 1_000,
        "{st:?}"
    );
}
