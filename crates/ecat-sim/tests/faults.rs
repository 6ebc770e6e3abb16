//! Seeded faults, unplug/replug/power-cycle, and their network-file form.

mod common;

use common::Bus;
use ecat_sim::{DropReason, EventAction, FaultEvent, Faults, FrameFate, Network};
use ecat_wire::register as reg;
use ecat_wire::{Command, FrameBuilder};

fn brd_frame() -> Vec<u8> {
    let mut buf = [0u8; 64];
    let mut fb = FrameBuilder::new(&mut buf, common::MAC).unwrap();
    fb.push_physical(Command::Brd, 0, 0, reg::TYPE, 2).unwrap();
    let n = fb.finish();
    buf[..n].to_vec()
}

fn fates(faults: Faults, frames: usize) -> Vec<FrameFate> {
    let mut net = Network::preset("io").unwrap();
    net.set_faults(faults);
    let f = brd_frame();
    (0..frames)
        .map(|i| net.process(&mut f.clone(), i as u64 * 1000))
        .collect()
}

fn within_3_sigma(count: usize, n: usize, p: f64) -> bool {
    let mean = n as f64 * p;
    let sigma = (n as f64 * p * (1.0 - p)).sqrt();
    (count as f64 - mean).abs() <= 3.0 * sigma
}

#[test]
fn rates_are_right_and_runs_repeat() {
    let faults = Faults {
        seed: 7,
        drop_rate: 0.1,
        corrupt_rate: 0.05,
        duplicate_rate: 0.02,
        delay_ns: 1000,
        jitter_ns: 500,
        ..Default::default()
    };
    let n = 20_000;
    let a = fates(faults, n);
    assert_eq!(a, fates(faults, n), "same seed, same fates");
    assert_ne!(a, fates(Faults { seed: 8, ..faults }, n));
    let lost = a
        .iter()
        .filter(|f| **f == FrameFate::Dropped(DropReason::Lost))
        .count();
    let bad = a
        .iter()
        .filter(|f| **f == FrameFate::Dropped(DropReason::Corrupted))
        .count();
    assert!(within_3_sigma(lost, n, 0.1), "lost {lost}");
    // Corruption is rolled for frames not lost: 0.9 × 0.05.
    assert!(within_3_sigma(bad, n, 0.045), "corrupted {bad}");
    let returned: Vec<(u64, bool)> = a
        .iter()
        .filter_map(|f| match f {
            FrameFate::Returned {
                delay_ns,
                duplicate,
            } => Some((*delay_ns, *duplicate)),
            _ => None,
        })
        .collect();
    assert!(returned.iter().all(|(d, _)| (1000..=1500).contains(d)));
    let dups = returned.iter().filter(|(_, d)| *d).count();
    assert!(
        within_3_sigma(dups, returned.len(), 0.02),
        "duplicates {dups}"
    );
    // A perfect wire draws nothing and returns everything at once.
    assert!(fates(Faults::default(), 100).iter().all(|f| *f
        == FrameFate::Returned {
            delay_ns: 0,
            duplicate: false
        }));
}

#[test]
fn corrupted_frames_count_in_the_escs_and_can_be_delivered() {
    let mut net = Network::preset("io").unwrap();
    net.set_faults(Faults {
        seed: 1,
        corrupt_rate: 1.0,
        ..Default::default()
    });
    let f = brd_frame();
    for i in 0..50 {
        assert_eq!(
            net.process(&mut f.clone(), i),
            FrameFate::Dropped(DropReason::Corrupted)
        );
    }
    let c = net.counters();
    assert_eq!((c.dropped_corrupted, c.returned), (50, 0));
    // Every frame counts once as "invalid" where it first went bad, then as forwarded.
    let mut first = 0;
    let mut fwd = 0;
    for p in 0..5 {
        let esc = net.subdevice(p).unwrap();
        first += esc.read_u16(0x0300) & 0xFF;
        fwd += esc.read_u16(0x0308) & 0xFF;
    }
    assert!(first <= 50 && first + fwd > 0);
    net.set_faults(Faults {
        seed: 1,
        corrupt_rate: 1.0,
        deliver_corrupted: true,
        ..Default::default()
    });
    let mut g = f.clone();
    assert!(net.process(&mut g, 100).returned());
    let diff: u32 = f[14..]
        .iter()
        .zip(&g[14..])
        .map(|(a, b)| (a ^ b).count_ones())
        .sum();
    assert!(diff >= 1, "garbage delivered");
    assert_eq!(net.counters().corrupted_delivered, 1);
}

#[test]
fn unplug_replug_and_power_cycle() {
    let mut bus = Bus::preset("io");
    assert_eq!(bus.assign_addresses(), 5);
    bus.net.unplug(1).unwrap();
    assert!(!bus.net.is_plugged(1));
    assert_eq!(
        bus.read(Command::Brd, 0, reg::TYPE, 2).wkc,
        4,
        "the others keep working"
    );
    let r = bus.read(Command::Aprd, 0xFFFF, reg::STATION_ADDRESS, 2);
    assert_eq!(r.data, 0x1003u16.to_le_bytes(), "positions behind it shift");
    assert_eq!(bus.fprd(0x1002, reg::STATION_ADDRESS, 2).wkc, 0);
    // DL status of the coupler still shows a link on port 1 (more follow).
    bus.net.replug(1, false).unwrap();
    assert_eq!(
        bus.fprd16(0x1002, reg::STATION_ADDRESS),
        0x1002,
        "kept its state"
    );
    bus.net.unplug(1).unwrap();
    bus.net.replug(1, true).unwrap();
    assert_eq!(
        bus.fprd(0x1002, reg::STATION_ADDRESS, 2).wkc,
        0,
        "address lost"
    );
    let r = bus.read(Command::Aprd, 0xFFFF, reg::AL_STATUS, 2);
    assert_eq!((r.wkc, r.data[0]), (1, 0x01), "back in INIT");
    // Power-cycle in place: the EL3102 loses address and state, reloads its SII alias.
    assert_eq!(bus.al_request(0x1005, 0x11), 0x01);
    bus.net.power_cycle(4).unwrap();
    assert_eq!(bus.fprd(0x1005, reg::STATION_ADDRESS, 2).wkc, 0);
    assert_eq!(bus.net.subdevice(4).unwrap().station_address(), 0);
    assert!(bus.net.unplug(9).is_err());
    // Unplugging the last one: the one before closes its port 1.
    bus.net.unplug(4).unwrap();
    assert_eq!(bus.read(Command::Brd, 0, reg::TYPE, 2).wkc, 4);
}

#[test]
fn scheduled_events_fire_in_time() {
    let mut bus = Bus::preset("io");
    let ms = 1_000_000;
    bus.net.schedule(FaultEvent {
        at_ns: 5 * ms,
        action: EventAction::Unplug,
        position: 2,
    });
    bus.net.schedule(FaultEvent {
        at_ns: 8 * ms,
        action: EventAction::Replug { power_cycled: true },
        position: 2,
    });
    bus.now = 4 * ms;
    assert_eq!(bus.read(Command::Brd, 0, reg::TYPE, 2).wkc, 5);
    bus.now = 6 * ms;
    assert_eq!(bus.read(Command::Brd, 0, reg::TYPE, 2).wkc, 4);
    bus.now = 9 * ms;
    assert_eq!(bus.read(Command::Brd, 0, reg::TYPE, 2).wkc, 5);
    assert!(bus.net.pending_events().is_empty());
}

#[test]
fn network_files_carry_faults_and_events() {
    let parse = |t: &str| Network::from_toml_str(t, "net.toml", ".".as_ref());
    let base = "[[subdevice]]\nmodel = \"EK1100\"\n\n[[subdevice]]\nmodel = \"EL2008\"\n";
    let net = parse(&format!(
        "{base}\n[faults]\nseed = 3\ndrop_rate = 0.5\ndelay_ns = 10\njitter_ns = 2\n\n\
         [[event]]\nat_ms = 2.5\naction = \"unplug\"\nposition = 1\n\n\
         [[event]]\nat_ms = 4\naction = \"replug\"\nposition = 1\npower_cycled = true\n"
    ))
    .unwrap();
    assert_eq!(net.faults().seed, 3);
    assert_eq!(net.faults().drop_rate, 0.5);
    assert_eq!(net.faults().delay_ns, 10);
    assert_eq!(
        net.pending_events(),
        &[
            FaultEvent {
                at_ns: 2_500_000,
                action: EventAction::Unplug,
                position: 1
            },
            FaultEvent {
                at_ns: 4_000_000,
                action: EventAction::Replug { power_cycled: true },
                position: 1
            },
        ]
    );
    let err = |t: &str| parse(&format!("{base}{t}")).unwrap_err().to_string();
    let e = err("\n[faults]\ndrop_rate = 1.5\n");
    assert!(
        e.starts_with("net.toml:8:") && e.contains("between 0 and 1"),
        "{e}"
    );
    let e = err("\n[faults]\nloss = 0.1\n");
    assert!(e.starts_with("net.toml:8:"), "{e}");
    let e = err("\n[[event]]\nat_ms = 1\naction = \"explode\"\nposition = 0\n");
    assert!(
        e.starts_with("net.toml:9:") && e.contains("power_cycle"),
        "{e}"
    );
    let e = err("\n[[event]]\nat_ms = 1\naction = \"unplug\"\nposition = 2\n");
    assert!(e.starts_with("net.toml:10:") && e.contains("has 2"), "{e}");
    let e = err("\n[[event]]\nat_ms = -1\naction = \"unplug\"\nposition = 0\n");
    assert!(e.starts_with("net.toml:8:"), "{e}");
    let e = err("\n[[event]]\nat_ms = 1\naction = \"unplug\"\nposition = 0\npower_cycled = true\n");
    assert!(e.starts_with("net.toml:11:") && e.contains("replug"), "{e}");
}

/// Per-port counters (0x0300 invalid frames, 0x0308 forwarded errors, 0x0310 lost links) of
/// the ESC at `p`.
fn port_counts(net: &Network, p: usize) -> ([u8; 4], [u8; 4], [u8; 4]) {
    let esc = net.subdevice(p).unwrap();
    let mut b = [0u8; 20];
    esc.read(0x0300, &mut b);
    (
        [b[0], b[2], b[4], b[6]],
        [b[8], b[9], b[10], b[11]],
        [b[16], b[17], b[18], b[19]],
    )
}

#[test]
fn a_bad_cable_is_counted_where_a_real_line_counts_it() {
    // io: EK1100 (0) then four terminals in a line; the cable into SubDevice 2 is bad.
    let mut net = Network::preset("io").unwrap();
    net.set_faults(Faults {
        corrupt_rate: 1.0,
        bad_cable: Some(2),
        ..Default::default()
    });
    let f = brd_frame();
    for i in 0..10 {
        net.process(&mut f.clone(), i);
    }
    // Before the fault: clean on the way out, forwarded errors on the way back (port 1).
    for p in 0..2 {
        let (inv, fwd, _) = port_counts(&net, p);
        assert_eq!((inv, fwd), ([0; 4], [0, 10, 0, 0]), "SubDevice {p}");
    }
    // The first to see it: invalid frames at port 0, then the marked frame back at port 1.
    assert_eq!(port_counts(&net, 2).0, [10, 0, 0, 0]);
    assert_eq!(port_counts(&net, 2).1, [0, 10, 0, 0]);
    // Behind it: forwarded at port 0 (and port 1 where a SubDevice hangs on it).
    assert_eq!(port_counts(&net, 3).1, [10, 10, 0, 0]);
    assert_eq!(port_counts(&net, 4).1, [10, 0, 0, 0]);
    assert_eq!(port_counts(&net, 4).0, [0; 4]);
}

#[test]
fn unplugging_counts_a_lost_link_at_the_port_before() {
    // Unplugging the last SubDevice of the line takes the link of port 1 of the one before.
    let mut net = Network::preset("io").unwrap();
    net.unplug(4).unwrap();
    assert_eq!(port_counts(&net, 3).2, [0, 1, 0, 0]);
    net.replug(4, false).unwrap();
    net.unplug(4).unwrap();
    assert_eq!(port_counts(&net, 3).2, [0, 2, 0, 0]);
    assert_eq!(port_counts(&net, 2).2, [0; 4]);
}
