//! The MainDevice against the in-process simulated network, on virtual time: scan, activate,
//! reach OP, exchange process data.

use ecat::clock::VirtualTime;
use ecat::link::sim::SimLink;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;

fn open(net: &str) -> (MainDevice, VirtualTime) {
    let vt = VirtualTime::new();
    let link = SimLink::with_network(
        Network::open(net).unwrap(),
        format!("sim:{net}"),
        net.into(),
    )
    .on_virtual_time(vt.clone());
    (MainDevice::with_link(Box::new(link)), vt)
}

#[test]
fn io_reaches_op() {
    let (mut md, _vt) = open("io");
    md.scan().unwrap();
    let mut rt = md.activate(Activation::default()).unwrap();
    let r = rt.run_until_state(AlState::Op, 1_000_000, 2000);
    while let Some(e) = rt.next_event() {
        println!("{e}");
    }
    r.unwrap();
    let d = rt.domain(0);
    println!(
        "domain: {} bytes out, {} in, expected WKC {}",
        d.outputs_len,
        d.inputs_len,
        d.expected_wkc()
    );
}

#[test]
fn lrw_wkc_matches_in_op() {
    let (mut md, vt) = open("io");
    md.scan().unwrap();
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 2000).unwrap();
    for _ in 0..100 {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
        let d = rt.domain(0);
        assert_eq!(d.wkc(), d.expected_wkc(), "cycle {}", rt.cycle_count());
    }
}

#[test]
fn wrong_sm2_length_is_refused_with_code_and_text() {
    use ecat::config::{EntryConfig, SubDeviceConfig};
    let (mut md, _vt) = open("io");
    md.scan().unwrap();
    let mut configs: Vec<SubDeviceConfig> = md
        .subdevices()
        .iter()
        .map(SubDeviceConfig::from_sii)
        .collect();
    // EL4132 (position 3): one extra 16-bit entry makes SM2 6 bytes instead of 4.
    let out = configs[3].sync.iter_mut().find(|s| s.index == 2).unwrap();
    out.pdos[0].entries.push(EntryConfig {
        index: 0x7000,
        subindex: 9,
        bits: 16,
    });
    let mut rt = md
        .activate(Activation {
            configs: Some(configs),
            ..Default::default()
        })
        .unwrap();
    let e = rt
        .run_until_state(AlState::Op, 1_000_000, 300)
        .unwrap_err()
        .to_string();
    println!("{e}");
    assert!(e.contains("SubDevice 3 (0x1004, EL4132"), "{e}");
    assert!(e.contains("0x001D (invalid output configuration)"), "{e}");
    let mut refused = false;
    while let Some(ev) = rt.next_event() {
        println!("{ev}");
        refused |= ev.to_string().contains("refused SAFEOP") && ev.to_string().contains("0x001D");
    }
    assert!(refused, "a refusal event names SAFEOP and the code");
}

#[test]
fn values_round_trip_for_10000_cycles() {
    use ecat::config::Direction;
    let (mut md, vt) = open("io");
    md.scan().unwrap();
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 2000).unwrap();
    let d = rt.domain(0).clone();
    let out1 = d.region(1, Direction::Output).unwrap(); // EL2008
    let out3 = d.region(3, Direction::Output).unwrap(); // EL4132
    let in2 = d.region(2, Direction::Input).unwrap(); // EL1018
                                                      // A device commits its input buffer at the end of a frame, so a value set now is read by
                                                      // the MainDevice in the next exchange (one cycle of latency, as with a real 3-buffer SM).
    let mut previous = None;
    for c in 0..10_000u32 {
        let input = (c % 251) as u8;
        rt.link_mut()
            .sim_network()
            .unwrap()
            .set_inputs(2, &[input])
            .unwrap();
        let img = rt.domain_mut(0).image_mut();
        img[out1.start] = c as u8;
        img[out3.clone()].copy_from_slice(&(c.wrapping_mul(2654435761)).to_le_bytes());
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
        let d = rt.domain(0);
        assert_eq!(d.wkc(), d.expected_wkc(), "cycle {c}");
        if let Some(p) = previous {
            assert_eq!(
                d.image()[in2.start],
                p,
                "cycle {c}: EL1018 input of the previous cycle"
            );
        }
        previous = Some(input);
        let net = rt.link_mut().sim_network().unwrap();
        assert_eq!(
            net.outputs(1).unwrap(),
            &[c as u8],
            "cycle {c}: EL2008 applied"
        );
        assert_eq!(
            net.outputs(3).unwrap(),
            &c.wrapping_mul(2654435761).to_le_bytes(),
            "cycle {c}: EL4132 applied"
        );
    }
}

#[test]
fn locate_finds_entries() {
    let (mut md, _vt) = open("io");
    md.scan().unwrap();
    let rt = md.activate(Activation::default()).unwrap();
    // EL2008 channel 3 (0x7020:01) is bit 2 of its output byte; EL3102 channel 2 value
    // (0x3102:02 or 0x6010:11 depending on the mapping) is after channel 1's 3 bytes.
    let l = rt.locate(1, 0x7020, 1).unwrap();
    assert_eq!((l.byte, l.bit, l.bits), (0, 2, 1));
    assert!(rt.locate(1, 0x9999, 1).is_none());
}
