//! ENI round trip on the `io`, `servo6` and `dc8` networks: the automatic configuration
//! written as an ENI, read back and run gives the same FMMUs, logical datagrams and expected
//! working counters, and reaches OP with every cycle complete.

use ecat::clock::VirtualTime;
use ecat::domain::{layout, DomainState};
use ecat::link::sim::SimLink;
use ecat::MainDevice;
use ecat_config::eni::Eni;
use ecat_sim::Network;
use ecat_wire::al::AlState;

fn open(net: &str) -> MainDevice {
    let link = SimLink::with_network(
        Network::open(net).unwrap(),
        format!("sim:{net}"),
        net.into(),
    )
    .on_virtual_time(VirtualTime::new());
    MainDevice::with_link(Box::new(link))
}

/// Every ESC's FMMU and SM registers as the SubDevices hold them (SM status and PDI control
/// left out: they change with the traffic).
fn registers(rt: &mut ecat::runtime::Runtime) -> Vec<Vec<u8>> {
    let net = rt.link_mut().sim_network().expect("simulated link");
    (0..net.subdevice_count())
        .map(|p| {
            let esc = net.subdevice(p).unwrap();
            let mut fmmu = vec![0u8; 16 * 16];
            esc.read(0x0600, &mut fmmu);
            let mut sm = vec![0u8; 8 * 16];
            esc.read(0x0800, &mut sm);
            for k in 0..16 {
                sm[8 * k + 5] = 0;
                sm[8 * k + 7] = 0;
            }
            [fmmu, sm].concat()
        })
        .collect()
}

fn round_trip(net: &str) {
    let mut md = open(net);
    md.scan().unwrap();
    let configs = md.discover_configs().unwrap();
    let auto_regs = {
        let mut md = open(net);
        md.scan().unwrap();
        let mut rt = md
            .activate(ecat::runtime::Activation {
                configs: Some(configs.clone()),
                ..Default::default()
            })
            .unwrap();
        rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
        registers(&mut rt)
    };
    let auto = layout(md.subdevices(), &configs, 1, 0).unwrap();
    let eni = ecat::eni::export::eni_from_layout(md.subdevices(), &configs, &[], &auto, 1_000_000);
    let xml = eni.to_xml();
    let back = Eni::parse_str(&xml, &format!("{net}.xml")).unwrap();
    assert!(back.notes().is_empty(), "{:?}", back.notes());

    let mut md = open(net);
    md.scan().unwrap();
    let setup = md.configure_from_eni(&back).unwrap();
    for n in &setup.notes {
        println!("{net}: note: {n}");
    }
    let plans = |l: &ecat::domain::Layout| -> Vec<_> {
        l.domains
            .iter()
            .flat_map(|d| {
                d.plans
                    .iter()
                    .map(|p| (p.command, p.logical, p.len, p.expected_wkc))
            })
            .collect()
    };
    assert_eq!(
        plans(&setup.layout),
        plans(&auto),
        "{net}: datagrams and WKCs"
    );
    for (p, (a, b)) in auto.mappings.iter().zip(&setup.layout.mappings).enumerate() {
        assert_eq!(a.fmmus, b.fmmus, "{net}: FMMUs of SubDevice {p}");
    }
    for (a, b) in configs.iter().zip(&setup.configs) {
        assert_eq!(a, b, "{net}: process data configuration");
    }
    println!("{net}: {:?}", plans(&auto));
    let vars = setup.image.vars().len();
    let (mut rt, image) = md.activate_eni(setup, None).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    for _ in 0..100 {
        rt.tx_rx(1_000_000).unwrap();
        assert_eq!(rt.domain(0).state(), DomainState::Complete, "{net}");
    }
    assert_eq!(image.vars().len(), vars);
    assert_eq!(
        registers(&mut rt),
        auto_regs,
        "{net}: SM and FMMU registers after bring-up"
    );
    println!("{net}: OP, {vars} variables");
}

#[test]
fn io_round_trip() {
    round_trip("io");
}

#[test]
fn servo6_round_trip() {
    round_trip("servo6");
}

#[test]
fn dc8_round_trip() {
    round_trip("dc8");
}
