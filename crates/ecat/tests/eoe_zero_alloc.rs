//! EoE adds no allocation to the cyclic path: with the EoE hub attached as the mailbox
//! service's unsolicited-message sink, 2,000 idle cycles in OP allocate nothing, and the
//! hub's receive side (reassembly into its preallocated ring, on the cyclic thread) and the
//! bridge's draining allocate nothing either. On the send side a frame costs the engine a few
//! allocations for its request and transfer; the fragments reuse one buffer. What a frame of
//! many fragments and one of a single fragment cost is printed, not asserted: the count
//! includes the in-process simulator's own work on each fragment.

use ecat::clock::VirtualTime;
use ecat::eoe::hub::{interface_name, SLOT};
use ecat::eoe::EoeHub;
use ecat::link::sim::SimLink;
use ecat::mailbox::eoe::EoeOp;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use ecat_wire::eoe::{emit_eoe, fragments, EoeRepr};
use std::sync::Arc;

mod common;
use common::counting::{self, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn eoe_hub_and_idle_cycles_allocate_nothing() {
    let vt = VirtualTime::new();
    let link = SimLink::with_network(
        Network::open("mbx").unwrap(),
        "sim:mbx".into(),
        "mbx".into(),
    )
    .on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 2_000).unwrap();
    let who = rt.mailbox_service_mut().targets()[2].who.clone();
    let hub = Arc::new(EoeHub::new([(who, interface_name(0, 2))]));
    rt.mailbox_service_mut().set_unsolicited_sink(hub.sink());
    for _ in 0..100 {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
    }
    counting::start();
    for _ in 0..2_000 {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
    }
    assert_eq!(counting::stop(), 0, "allocations in 2,000 idle cycles");

    // The receive side: fragments of a 1000-byte frame into the ring, and out again.
    let frame: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
    let msgs: Vec<Vec<u8>> = fragments(&frame, 128, 0, 1)
        .unwrap()
        .map(|(header, data)| {
            let mut m = vec![0u8; 128];
            let n = emit_eoe(&mut m, 1, &EoeRepr { header, data }).unwrap();
            m.truncate(n);
            m
        })
        .collect();
    let mut buf = vec![0u8; SLOT];
    counting::start();
    for _ in 0..10 {
        for m in &msgs {
            hub.on_message(2, m);
        }
        assert_eq!(hub.pop_rx(0, &mut buf), Some(1000));
    }
    assert_eq!(counting::stop(), 0, "allocations on the EoE receive side");
    assert_eq!(&buf[..1000], &frame[..]);

    // The send side: what one posted frame costs in the engine, by its fragment count.
    let client = rt.mailbox_client();
    let mut send = |frame: &[u8]| {
        let p = client
            .submit(
                2,
                EoeOp::Frame {
                    port: 0,
                    frame_no: 2,
                    frame: frame.to_vec(),
                },
            )
            .unwrap();
        counting::start();
        let mut cycles = 0;
        while p.poll().is_none() && cycles < 1000 {
            vt.advance(1_000_000);
            rt.tx_rx(1_000_000).unwrap();
            cycles += 1;
        }
        (counting::stop(), cycles)
    };
    // Warm up: every datagram slot of the engine has carried a whole mailbox once.
    for _ in 0..40 {
        send(&frame);
    }
    let (one, _) = send(&frame[..60]);
    let (many, cycles) = send(&frame);
    println!(
        "EoE frame of 1000 bytes: {cycles} cycles, {many} allocations (master and simulator); \
         a frame of 60 bytes (1 fragment): {one}"
    );
}
