//! The redundant path allocates nothing per cycle: `ring8` in OP at 1 ms with DC through the
//! redundant link, 1,000 cycles on the closed ring and 1,000 with a broken cable (every frame
//! sent on through the backup port, the reference time shifted for the back half).

use ecat::clock::VirtualTime;
use ecat::dc::setup::DcOptions;
use ecat::dc::{DcMode, DcRuntime};
use ecat::link::redundant::RedundantLink;
use ecat::link::sim_ring;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;

mod common;
use common::counting::{self, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

const MS: u64 = 1_000_000;

#[test]
fn redundant_cycles_allocate_nothing() {
    let vt = VirtualTime::new();
    vt.advance(1_000_000_000);
    let (main, backup, ring) =
        sim_ring::with_network(Network::open("ring8").unwrap(), "ring8", Some(vt.clone())).unwrap();
    let link = RedundantLink::new(Box::new(main), Box::new(backup)).unwrap();
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let setup = md
        .configure_dc(DcOptions {
            static_datagrams: 2_000,
            per_frame: 1,
            ..Default::default()
        })
        .unwrap()
        .unwrap();
    let mut rt = md
        .activate(Activation {
            dc: Some(DcRuntime {
                setup,
                mode: DcMode::ReferenceFollowsMaster,
                cycle_ns: MS,
                shift_ns: 0,
            }),
            ..Default::default()
        })
        .unwrap();
    rt.run_until_state(AlState::Op, MS, 5_000).unwrap();
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
