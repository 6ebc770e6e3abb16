//! Cable redundancy in the simulator: a line closed into a ring back to the backup port,
//! cables that break and heal (API and network file), ports closing on link loss, and the
//! two halves of a broken ring answering on their own ports.

use ecat_sim::{Network, RingPort};
use ecat_wire::datagram::DatagramRepr;
use ecat_wire::frame::{parse_ethernet, FrameBuilder};
use ecat_wire::Command;
use std::path::Path;

const MAC: [u8; 6] = [0x10, 0x22, 0x33, 0x44, 0x55, 0x66];

const RING8: &str = "ring = true\n\
    [[subdevice]]\nmodel = \"EK1100\"\n[[subdevice]]\nmodel = \"EL2008\"\n\
    [[subdevice]]\nmodel = \"EL1018\"\n[[subdevice]]\nmodel = \"EL4132\"\n\
    [[subdevice]]\nmodel = \"EL3102\"\n[[subdevice]]\nmodel = \"EL2008\"\n\
    [[subdevice]]\nmodel = \"EL1018\"\n[[subdevice]]\nmodel = \"EL3102\"\n";

fn ring8(extra: &str) -> Network {
    Network::from_toml_str(&format!("{RING8}{extra}"), "ring8", Path::new(".")).unwrap()
}

/// A frame of one BRD of 0x0000 (WKC = ESCs that processed it) and one APRD of 0x0000 per
/// position 0..8.
fn probe() -> Vec<u8> {
    let mut buf = [0u8; 1514];
    let mut fb = FrameBuilder::new(&mut buf, MAC).unwrap();
    fb.push(DatagramRepr::physical(Command::Brd, 1, 0, 0, 2))
        .unwrap();
    for p in 0..8u16 {
        fb.push(DatagramRepr::physical(
            Command::Aprd,
            2 + p as u8,
            p.wrapping_neg(),
            0,
            2,
        ))
        .unwrap();
    }
    let n = fb.finish();
    buf[..n].to_vec()
}

/// WKCs of the datagrams of a frame.
fn wkcs(frame: &[u8]) -> Vec<u16> {
    let f = parse_ethernet(frame).unwrap();
    f.datagrams().map(|d| d.unwrap().wkc()).collect()
}

fn send(net: &mut Network, frame: &mut [u8], now: u64, port: RingPort) -> RingPort {
    let (fate, exit) = net.process_from(frame, now, port);
    assert!(fate.returned(), "{fate:?}");
    exit
}

fn dl_status(net: &Network, k: usize) -> u16 {
    let mut b = [0u8; 2];
    net.subdevice(k).unwrap().read(0x0110, &mut b);
    u16::from_le_bytes(b)
}

#[test]
fn closed_ring_passes_main_to_backup_and_back() {
    let mut net = ring8("");
    assert!(net.is_ring());
    let mut f = probe();
    assert_eq!(
        send(&mut net, &mut f, 1000, RingPort::Main),
        RingPort::Backup
    );
    assert_eq!(wkcs(&f), [8, 1, 1, 1, 1, 1, 1, 1, 1]);
    // From the backup port it is only forwarded: nobody processes it.
    let mut f = probe();
    assert_eq!(
        send(&mut net, &mut f, 2000, RingPort::Backup),
        RingPort::Main
    );
    assert_eq!(wkcs(&f), [0; 9]);
    // The last ESC has a link on port 1 (to the backup port).
    assert_ne!(dl_status(&net, 7) & 0x0020, 0, "port 1 link on the last");
}

#[test]
fn a_break_at_every_position_splits_and_the_halves_combine() {
    for a in 0..7 {
        let mut net = ring8("");
        net.break_cable(a, a + 1).unwrap();
        assert_eq!(net.broken_cable(), Some((a, a + 1)));
        // Both ends lost their link (and close the port).
        assert_eq!(dl_status(&net, a) & 0x0020, 0, "port 1 of {a}");
        assert_eq!(dl_status(&net, a + 1) & 0x0010, 0, "port 0 of {}", a + 1);
        let mut f = probe();
        assert_eq!(send(&mut net, &mut f, 1000, RingPort::Main), RingPort::Main);
        let w = wkcs(&f);
        assert_eq!(w[0] as usize, a + 1, "front half");
        // The front half's answer sent on through the backup port: every position answered
        // exactly once, and the broadcast counted everyone.
        assert_eq!(
            send(&mut net, &mut f, 1000, RingPort::Backup),
            RingPort::Backup
        );
        assert_eq!(wkcs(&f), [8, 1, 1, 1, 1, 1, 1, 1, 1], "break after {a}");
        // A fresh frame from the backup port reaches the back half only.
        let mut g = probe();
        send(&mut net, &mut g, 2000, RingPort::Backup);
        assert_eq!(wkcs(&g)[0] as usize, 7 - a);
        net.heal_cable(a + 1, a).unwrap();
        assert_eq!(net.broken_cable(), None);
        let mut f = probe();
        assert_eq!(
            send(&mut net, &mut f, 3000, RingPort::Main),
            RingPort::Backup
        );
        assert_eq!(wkcs(&f)[0], 8);
    }
}

#[test]
fn events_from_the_network_file() {
    let mut net = ring8(
        "[[event]]\nat_ms = 1\naction = \"break\"\nbetween = [2, 3]\n\
         [[event]]\nat_ms = 2\naction = \"heal\"\nbetween = [2, 3]\n",
    );
    let mut f = probe();
    assert_eq!(
        send(&mut net, &mut f, 500_000, RingPort::Main),
        RingPort::Backup
    );
    let mut f = probe();
    assert_eq!(
        send(&mut net, &mut f, 1_500_000, RingPort::Main),
        RingPort::Main
    );
    assert_eq!(wkcs(&f)[0], 3);
    assert_eq!(net.broken_cable(), Some((2, 3)));
    let mut f = probe();
    assert_eq!(
        send(&mut net, &mut f, 2_500_000, RingPort::Main),
        RingPort::Backup
    );
}

#[test]
fn a_line_without_ring_loses_what_is_behind_a_break() {
    let mut net = Network::preset("io").unwrap();
    net.break_cable(1, 2).unwrap();
    let mut f = probe();
    assert_eq!(send(&mut net, &mut f, 1000, RingPort::Main), RingPort::Main);
    assert_eq!(wkcs(&f)[0], 2);
    let (fate, _) = net.process_from(&mut probe(), 1000, RingPort::Backup);
    assert!(!fate.returned(), "no backup cable on a line");
}

#[test]
fn bad_ring_input_says_what_is_wrong() {
    let err = Network::from_toml_str(
        &format!("{RING8}[[event]]\nat_ms = 1\naction = \"break\"\nbetween = [2, 5]\n"),
        "ring8",
        Path::new("."),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("no cable runs between SubDevices 2 and 5"),
        "{err}"
    );
    let err = Network::from_toml_str(
        &format!("{RING8}[[event]]\nat_ms = 1\naction = \"break\"\nbetween = [2, 9]\n"),
        "ring8",
        Path::new("."),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("`between` names two different SubDevices"),
        "{err}"
    );
    let dc8 = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/presets/dc8.toml"))
        .unwrap();
    let err = Network::from_toml_str(&format!("ring = true\n{dc8}"), "dc8", Path::new("."))
        .unwrap_err()
        .to_string();
    assert!(err.contains("a ring needs a line"), "{err}");
    let mut net = ring8("");
    assert!(net.break_cable(0, 7).is_err());
}
