//! The line on two threads (`ecat_sim::pipeline`): what may be split and what comes back.
//! (That a pipelined network answers a whole MainDevice session frame for frame as the plain
//! one does is checked in `crates/ecat/tests/deferred_pdi_sim.rs`.)

mod common;

use common::MAC;
use ecat_sim::pipeline::{Pipeline, SendFn};
use ecat_sim::{EventAction, FaultEvent, Faults, FrameFate, Network};
use ecat_wire::datagram::DatagramRepr;
use ecat_wire::frame::{parse_ethernet, FrameBuilder};
use ecat_wire::register as reg;
use ecat_wire::Command;
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// A pipeline on `net` whose worker sends its frames into a channel.
fn start(net: Network, split: Option<usize>) -> Result<(Pipeline, Receiver<Vec<u8>>), String> {
    let (tx, rx) = channel();
    let send: SendFn = Box::new(move |f: &[u8]| {
        tx.send(f.to_vec())
            .map_err(|_| std::io::Error::other("receiver gone"))
    });
    Pipeline::start(net, split, send)
        .map(|p| (p, rx))
        .map_err(|e| e.reason)
}

/// One frame of one datagram.
fn frame(cmd: Command, adp: u16, ado: u16, data: &[u8]) -> Vec<u8> {
    let mut buf = [0u8; 1514];
    let mut fb = FrameBuilder::new(&mut buf, MAC).unwrap();
    {
        let repr = DatagramRepr::physical(cmd, 0x42, adp, ado, data.len() as u16);
        let (_, mut d) = fb.push(repr).unwrap();
        d.data_mut()[..data.len()].copy_from_slice(data);
    }
    let n = fb.finish();
    buf[..n].to_vec()
}

/// The working counter and data of the frame's only datagram.
fn reply(f: &[u8]) -> (u16, Vec<u8>) {
    let e = parse_ethernet(f).unwrap();
    let d = e.datagrams().next().unwrap().unwrap();
    (d.wkc(), d.data().to_vec())
}

#[test]
fn what_cannot_be_split_comes_back_with_the_reason() {
    let mut ring = Network::preset("ring8").unwrap();
    assert!(ring.is_ring());
    ring.set_ring(true).unwrap();
    let why = start(ring, None).err().unwrap();
    assert!(why.contains("ring"), "{why}");

    let mut lossy = Network::preset("io").unwrap();
    lossy.set_faults(Faults {
        drop_rate: 0.01,
        ..Faults::default()
    });
    let why = start(lossy, None).err().unwrap();
    assert!(why.contains("faults"), "{why}");

    let mut planned = Network::preset("io").unwrap();
    planned.schedule(FaultEvent {
        at_ns: 5_000_000,
        action: EventAction::Unplug,
        position: 2,
    });
    let why = start(planned, None).err().unwrap();
    assert!(why.contains("events"), "{why}");

    let why = start(Network::open("sim:io1").unwrap(), None)
        .err()
        .unwrap();
    assert!(why.contains("nothing to split"), "{why}");

    let e = match Pipeline::start(
        Network::preset("io").unwrap(),
        Some(5),
        Box::new(|_: &[u8]| Ok(())),
    ) {
        Err(e) => e,
        Ok(_) => panic!("a split past the last ESC was taken"),
    };
    assert!(e.reason.contains("from 1 to 4"), "{}", e.reason);
    assert_eq!(e.network.esc_count(), 5, "the network comes back whole");
}

#[test]
fn broadcasts_count_every_subdevice_across_the_split() {
    for split in [1, 2, 4] {
        let (mut p, rx) = start(Network::preset("io").unwrap(), Some(split)).unwrap();
        assert_eq!(p.split(), split);
        let fate = p.process(&frame(Command::Brd, 0, reg::TYPE, &[0, 0]), 1_000_000);
        assert!(fate.returned());
        let back = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(back[6], MAC[0] | 0x02, "marked as returned");
        assert_eq!(
            reply(&back).0,
            5,
            "split at {split}: all five ESCs answered"
        );
        // Position-addressed reads reach the ESC on either side with the right hop count.
        for pos in 0..5u16 {
            let f = frame(Command::Aprd, 0u16.wrapping_sub(pos), reg::TYPE, &[0, 0]);
            assert!(p.process(&f, 1_100_000).returned());
            let (wkc, _) = reply(&rx.recv_timeout(Duration::from_secs(10)).unwrap());
            assert_eq!(wkc, 1, "split at {split}: position {pos} answered once");
        }
        let (net, report) = p.stop().unwrap();
        assert_eq!(report.sent, 6);
        assert_eq!(report.send_errors, 0);
        assert_eq!(net.esc_count(), 5);
        assert!(
            (0..5).all(|k| net.subdevice(k).is_some()),
            "every ESC is back"
        );
    }
}

#[test]
fn a_dropped_frame_does_not_reach_the_worker_and_the_next_one_does() {
    let (mut p, rx) = start(Network::preset("io").unwrap(), None).unwrap();
    let mut not_ecat = frame(Command::Brd, 0, reg::TYPE, &[0, 0]);
    not_ecat[12] = 0x08;
    not_ecat[13] = 0x00;
    assert!(matches!(
        p.process(&not_ecat, 1_000_000),
        FrameFate::Dropped(_)
    ));
    assert!(p
        .process(&frame(Command::Brd, 0, reg::TYPE, &[0, 0]), 1_010_000)
        .returned());
    let (wkc, _) = reply(&rx.recv_timeout(Duration::from_secs(10)).unwrap());
    assert_eq!(wkc, 5);
    assert!(rx.try_recv().is_err(), "only the EtherCAT frame came back");
    let (net, report) = p.stop().unwrap();
    assert_eq!(report.sent, 1);
    assert_eq!(net.counters().dropped_not_ethercat, 1);
    assert_eq!(net.counters().returned, 1);
}

#[test]
fn writes_on_the_worker_side_are_in_the_network_after_stopping() {
    let (mut p, rx) = start(Network::preset("io").unwrap(), Some(2)).unwrap();
    // Station addresses for everyone, then an AL control request to the EL1018 at position 2
    // (the first on the worker side; no mailbox, so PREOP needs nothing else).
    for pos in 0..5u16 {
        let f = frame(
            Command::Apwr,
            0u16.wrapping_sub(pos),
            reg::STATION_ADDRESS,
            &(0x1001 + pos).to_le_bytes(),
        );
        p.process(&f, 1_000_000 + pos as u64 * 10_000);
    }
    p.process(
        &frame(Command::Fpwr, 0x1003, reg::AL_CONTROL, &[2, 0]),
        1_100_000,
    );
    for _ in 0..6 {
        let (wkc, _) = reply(&rx.recv_timeout(Duration::from_secs(10)).unwrap());
        assert_eq!(wkc, 1);
    }
    let (net, _) = p.stop().unwrap();
    let el1018 = net.subdevice(2).unwrap();
    assert_eq!(el1018.read_u16(reg::STATION_ADDRESS), 0x1003);
    assert_eq!(el1018.al_status().0 & 0x0F, 2, "its firmware went to PREOP");
    assert_eq!(
        net.subdevice(4).unwrap().read_u16(reg::STATION_ADDRESS),
        0x1005
    );
    assert_eq!(
        net.subdevice(0).unwrap().read_u16(reg::STATION_ADDRESS),
        0x1001
    );
}

#[test]
fn a_worker_that_cannot_be_prepared_gives_the_network_back() {
    let e = match Pipeline::start_with(
        Network::preset("io").unwrap(),
        None,
        Box::new(|_: &[u8]| Ok(())),
        Some(Box::new(|| Err("CPU 7 does not exist".to_string()))),
    ) {
        Err(e) => e,
        Ok(_) => panic!("a failed preparation was ignored"),
    };
    assert_eq!(e.reason, "CPU 7 does not exist");
    assert_eq!(e.network.esc_count(), 5);
    assert!(
        (0..5).all(|k| e.network.subdevice(k).is_some()),
        "the worker's ESCs came back"
    );
    // And a preparation that succeeds runs on the worker before any frame.
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let r = ran.clone();
    let p = Pipeline::start_with(
        Network::preset("io").unwrap(),
        None,
        Box::new(|_: &[u8]| Ok(())),
        Some(Box::new(move || {
            r.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        })),
    )
    .map_err(|e| e.reason)
    .unwrap();
    assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
    assert_eq!(p.stop().unwrap().0.esc_count(), 5);
}
