//! Nothing from the wire may panic: garbage is dropped and counted, valid frames with random
//! content are processed without panic and come back with the same length.

mod common;

use common::Bus;
use ecat_sim::Network;
use ecat_wire::datagram::DatagramRepr;
use ecat_wire::{Command, FrameBuilder};
use proptest::prelude::*;

fn ecat_frame(datagram_bytes: &[u8], header_len: u16) -> Vec<u8> {
    let mut f = vec![0xFF; 6];
    f.extend_from_slice(&[0x10, 0, 0, 0, 0, 1, 0x88, 0xA4]);
    f.extend_from_slice(&(header_len | 0x1000).to_le_bytes());
    f.extend_from_slice(datagram_bytes);
    f.resize(f.len().max(60), 0);
    f
}

#[test]
fn malformed_frames_are_dropped_and_counted() {
    let mut net = Network::preset("io").unwrap();
    // Too short for Ethernet, other EtherType.
    assert!(!net.process_frame(&mut [0u8; 10], 0));
    let mut ip = vec![0u8; 60];
    ip[12] = 0x08;
    assert!(!net.process_frame(&mut ip, 0));
    // EtherCAT type 2 (ADS).
    let mut f = ecat_frame(&[0; 14], 14);
    f[15] = 0x20;
    assert!(!net.process_frame(&mut f, 0));
    // Header length past the end of the frame.
    let mut f = ecat_frame(&[0; 14], 0x7FF);
    assert!(!net.process_frame(&mut f, 0));
    // Datagram length past the header length.
    let mut d = [0u8; 14];
    d[0] = 7;
    d[6] = 200;
    let mut f = ecat_frame(&d, 14);
    assert!(!net.process_frame(&mut f, 0));
    // M bit set on the last datagram: the chain runs past the end.
    let mut d = [0u8; 14];
    d[0] = 7;
    d[6] = 2;
    d[7] = 0x80;
    let mut f = ecat_frame(&d, 14);
    let before = f.clone();
    assert!(!net.process_frame(&mut f, 0));
    assert_eq!(f, before, "dropped frames are left unchanged");
    let c = net.counters();
    assert_eq!(
        (
            c.dropped_not_ethercat,
            c.dropped_wrong_type,
            c.dropped_malformed
        ),
        (2, 1, 3)
    );
    assert_eq!(c.returned, 0);
    // Undefined command codes pass untouched, the frame still returns.
    let mut d = [0u8; 14];
    d[0] = 0xEE;
    d[6] = 2;
    let mut f = ecat_frame(&d, 14);
    assert!(net.process_frame(&mut f, 0));
    assert_eq!(f[6], 0x12, "locally administered bit set");
    assert_eq!(&f[16..30], &d);
}

#[test]
fn passive_only_network_returns_nothing() {
    let mut net =
        Network::from_toml_str("[[subdevice]]\nmodel = \"EL9011\"\n", "t", ".".as_ref()).unwrap();
    let mut buf = [0u8; 64];
    let mut fb = FrameBuilder::new(&mut buf, common::MAC).unwrap();
    fb.push_physical(Command::Brd, 0, 0, 0, 2).unwrap();
    let n = fb.finish();
    assert!(!net.process_frame(&mut buf[..n], 0));
    assert_eq!(net.counters().dropped_no_subdevice, 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(mut bytes in proptest::collection::vec(any::<u8>(), 0..1600)) {
        let mut net = Network::preset("io").unwrap();
        let len = bytes.len();
        net.process_frame(&mut bytes, 0);
        prop_assert_eq!(bytes.len(), len);
    }

    #[test]
    fn random_ecat_payload_never_panics(
        body in proptest::collection::vec(any::<u8>(), 0..300),
        hdr in any::<u16>(),
    ) {
        let mut net = Network::preset("io").unwrap();
        let mut f = ecat_frame(&body, hdr & 0x07FF);
        net.process_frame(&mut f, 0);
    }

    /// Valid frames with random commands, addresses and data, after random register writes
    /// (random SM/FMMU/AL/EEPROM configurations) — every path through the ESC.
    #[test]
    fn random_datagrams_never_panic(
        ops in proptest::collection::vec(
            (0u8..16, any::<u16>(), prop_oneof![0u16..0x1000, any::<u16>()], proptest::collection::vec(any::<u8>(), 0..64)),
            1..40,
        ),
    ) {
        let mut bus = Bus::preset("io");
        bus.assign_addresses();
        for (cmd, adp, ado, data) in ops {
            let mut buf = [0u8; 1514];
            let mut fb = FrameBuilder::new(&mut buf, common::MAC).unwrap();
            let c = Command::from_u8(cmd).unwrap_or(Command::Lrw);
            let repr = match c {
                Command::Lrd | Command::Lwr | Command::Lrw =>
                    DatagramRepr::logical(c, 0, (adp as u32) << 8 | ado as u32, data.len() as u16),
                // Mostly hit real stations and interesting registers.
                _ => DatagramRepr::physical(c, 0, 0x1001 + adp % 6, ado, data.len() as u16),
            };
            let (_, mut d) = fb.push(repr).unwrap();
            d.data_mut().copy_from_slice(&data);
            let n = fb.finish();
            bus.now += 7_000;
            prop_assert!(bus.net.process_frame(&mut buf[..n], bus.now));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// With every fault on (and garbage delivered), random frames and unplug/power-cycle
    /// events still never panic.
    #[test]
    fn faults_never_panic(
        seed in any::<u64>(),
        frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 1..20),
        pos in 0usize..7,
    ) {
        let mut net = Network::preset("io").unwrap();
        net.set_faults(ecat_sim::Faults {
            seed,
            drop_rate: 0.2,
            corrupt_rate: 0.3,
            deliver_corrupted: true,
            delay_ns: 5,
            jitter_ns: u64::MAX,
            duplicate_rate: 0.5,
            bad_cable: None,
        });
        let _ = net.unplug(pos);
        let _ = net.power_cycle(pos);
        for (i, body) in frames.into_iter().enumerate() {
            let mut f = ecat_frame(&body, body.len() as u16 & 0x07FF);
            let _ = net.process(&mut f, i as u64 * 1_000_000);
        }
        let _ = net.replug(pos, true);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random mailbox messages (random header, CoE header, SDO/info bytes, sometimes a
    /// plausible CoE SDO/info start) in PREOP and SAFEOP: no panic, SM0 is always emptied, and
    /// whatever SM1 holds is a message with a sane length.
    #[test]
    fn random_mailbox_messages_never_panic(
        msgs in proptest::collection::vec(
            (0u8..3, any::<u8>(), any::<u8>(), proptest::collection::vec(any::<u8>(), 0..130)),
            1..12,
        ),
        safeop in any::<bool>(),
    ) {
        let (mut bus, m) = Bus::servo_preop();
        if safeop {
            bus.fpwr(0x1001, ecat_wire::register::sm(2), &common::sm_bytes(0x1100, 6, 0x64, true));
            bus.fpwr(0x1001, ecat_wire::register::sm(3), &common::sm_bytes(0x1180, 10, 0x20, true));
            bus.al_request(0x1001, 0x04);
        }
        for (shape, b5, svc, mut body) in msgs {
            body.resize(body.len().max(8), 0);
            let mut msg = vec![0u8; 6];
            match shape {
                // Fully random header.
                0 => msg.copy_from_slice(&body[..6]),
                // CoE with a consistent length, random service and payload.
                _ => {
                    let len = body.len().min(122) as u16;
                    msg[..2].copy_from_slice(&len.to_le_bytes());
                    msg[5] = (b5 & 0x70) | 3;
                    body[1] = if shape == 1 { 0x20 } else { 0x80 } | (svc & 0x0F);
                }
            }
            msg.extend_from_slice(&body);
            msg.truncate(128);
            bus.mbx_send(&m, &msg);
            if let Some(a) = bus.mbx_recv(&m) {
                prop_assert!(a.len() >= 6);
                prop_assert!(u16::from_le_bytes([a[0], a[1]]) as usize <= 122);
            }
            prop_assert_eq!(bus.fprd(0x1001, ecat_wire::register::sm(0) + 5, 1).data[0] & 0x08, 0);
        }
    }
}
