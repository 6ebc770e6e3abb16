//! The mailbox in OP against the in-process simulator on virtual time: the SM1 status bit
//! rides in the cyclic frames (an FMMU maps register 0x080D bit 3), an expedited SDO upload
//! completes two cycles after it was submitted, requests to several SubDevices share the
//! acyclic frame, and emergencies a SubDevice sends on its own reach the application with no
//! transfer running and no polling.

mod common;

use ecat::clock::VirtualTime;
use ecat::runtime::{Activation, Runtime};
use ecat_wire::al::AlState;
use ecat_wire::coe::EmergencyRepr;

const PERIOD: u64 = 1_000_000;

fn op(net: &str) -> (VirtualTime, Runtime) {
    let vt = VirtualTime::new();
    let md = common::sim::scanned(net, Some(&vt));
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, PERIOD, 5_000).unwrap();
    for _ in 0..5 {
        cycle(&vt, &mut rt);
    }
    (vt, rt)
}

fn cycle(vt: &VirtualTime, rt: &mut Runtime) {
    vt.advance(PERIOD);
    rt.tx_rx(PERIOD).unwrap();
}

#[test]
fn expedited_upload_in_op_takes_two_cycles() {
    let (vt, mut rt) = op("servo6");
    assert!(
        rt.mailbox_status_mapped(0),
        "SM1 status bit not in the cyclic frames"
    );
    let client = rt.sdo_client();
    let mut cycles = Vec::new();
    for k in 0..20 {
        let p = client.upload(k % 6, 0x1018, 1).unwrap();
        let start = rt.cycle_count();
        let r = loop {
            cycle(&vt, &mut rt);
            if let Some(r) = p.poll() {
                break r;
            }
            assert!(rt.cycle_count() - start < 50, "no answer in 50 cycles");
        };
        assert_eq!(r.unwrap(), 0x0000_0ECAu32.to_le_bytes());
        cycles.push(rt.cycle_count() - start);
    }
    println!("cycles per expedited upload: {cycles:?}");
    assert!(cycles.iter().all(|&c| c <= 2), "{cycles:?}");
    // Segmented transfers work through the same path.
    let text: Vec<u8> = (0..200u16).map(|i| b'A' + (i % 26) as u8).collect();
    let d = client.download(1, 0x2001, 0, &text).unwrap();
    let r = (0..200).find_map(|_| {
        cycle(&vt, &mut rt);
        d.poll()
    });
    r.expect("download answered").unwrap();
    let u = client.upload(1, 0x2001, 0).unwrap();
    let r = (0..200).find_map(|_| {
        cycle(&vt, &mut rt);
        u.poll()
    });
    assert_eq!(r.expect("upload answered").unwrap(), text);
}

#[test]
fn requests_to_every_subdevice_share_frames_and_finish_together() {
    let (vt, mut rt) = op("servo6");
    let client = rt.sdo_client();
    let frames0 = rt.counters().1.frames_sent;
    let pending: Vec<_> = (0..6)
        .map(|p| client.upload(p, 0x1018, 1).unwrap())
        .collect();
    cycle(&vt, &mut rt);
    cycle(&vt, &mut rt);
    for (p, r) in pending.iter().enumerate() {
        assert!(
            r.poll().is_some_and(|r| r.is_ok()),
            "SubDevice {p} not done in 2 cycles"
        );
    }
    assert_eq!(
        rt.counters().1.frames_sent - frames0,
        2,
        "six writes, then six reads, one acyclic frame per cycle"
    );
}

#[test]
fn emergencies_arrive_without_a_transfer() {
    let (vt, mut rt) = op("servo6");
    let e = EmergencyRepr {
        error_code: 0x8611,
        error_register: 0x80,
        data: [1, 2, 3, 4, 5],
    };
    let datagrams0 = rt.counters().1.datagrams_sent;
    for _ in 0..20 {
        cycle(&vt, &mut rt);
    }
    assert_eq!(
        rt.counters().1.datagrams_sent,
        datagrams0,
        "idle mailboxes cost no acyclic datagrams"
    );
    assert!(rt.take_emergency().is_none());
    rt.link_mut()
        .sim_network()
        .unwrap()
        .subdevice_mut(4)
        .unwrap()
        .send_emergency(&e);
    for _ in 0..4 {
        cycle(&vt, &mut rt);
    }
    assert!(rt.take_emergency_of(3).is_none());
    assert_eq!(rt.take_emergency_of(4), Some(e));
    // Two more, from two SubDevices: handed out in arrival order.
    let net = rt.link_mut().sim_network().unwrap();
    net.subdevice_mut(2)
        .unwrap()
        .send_emergency(&EmergencyRepr { error_code: 1, ..e });
    for _ in 0..4 {
        cycle(&vt, &mut rt);
    }
    let net = rt.link_mut().sim_network().unwrap();
    net.subdevice_mut(0)
        .unwrap()
        .send_emergency(&EmergencyRepr { error_code: 2, ..e });
    for _ in 0..4 {
        cycle(&vt, &mut rt);
    }
    assert_eq!(
        rt.take_emergency().map(|(p, e)| (p, e.error_code)),
        Some((2, 1))
    );
    assert_eq!(
        rt.take_emergency().map(|(p, e)| (p, e.error_code)),
        Some((0, 2))
    );
    assert!(rt.take_emergency().is_none());
}

#[test]
fn without_the_cyclic_status_bit_reads_are_speculative_then_polled() {
    // A SubDevice kept in PREOP has no FMMUs programmed: its status bit means nothing, so the
    // exchange reads SM1 right after the write (and would poll 0x080D after that).
    let (vt, mut rt) = op("servo6");
    rt.limit_state(5, AlState::PreOp);
    for _ in 0..50 {
        cycle(&vt, &mut rt);
    }
    let s = rt.supervisor().states().nth(5).unwrap();
    assert_eq!(s.status.state(), Some(AlState::PreOp));
    let client = rt.sdo_client();
    let p = client.upload(5, 0x1018, 1).unwrap();
    let start = rt.cycle_count();
    let r = (0..50).find_map(|_| {
        cycle(&vt, &mut rt);
        p.poll()
    });
    assert_eq!(r.unwrap().unwrap(), 0x0000_0ECAu32.to_le_bytes());
    assert!(
        rt.cycle_count() - start <= 2,
        "{} cycles",
        rt.cycle_count() - start
    );
}
