//! `ecat sim --eni` with a device library: an ENI written (as `ecat eni` does) from a
//! network of ESI-built terminals, simulated with the ESI library, becomes the same ESI
//! devices (not generic ENI-shaped ones), and `run --eni` of it reaches OP with the ENI's
//! working counters. Without the library the same ENI gives generic devices that reach OP too.

use ecat::clock::VirtualTime;
use ecat::domain::DomainState;
use ecat::link::sim::SimLink;
use ecat::MainDevice;
use ecat_config::eni::Eni;
use ecat_sim::devices::esi::EsiDevices;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::path::PathBuf;

fn esi_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/esi")
}

/// A coupler, digital and analog terminals (the analog ones with CoE), an end cap.
fn network_file(dir: &std::path::Path) -> PathBuf {
    let types = ["EK1100", "EL1004", "EL2008", "EL3102", "EL4102", "EL2889"];
    let mut text = format!("esi_dirs = [\"{}\"]\n", esi_dir().display());
    for t in types {
        text += &format!("\n[[subdevice]]\ntype = \"{t}\"\n");
    }
    let p = dir.join("cfg-eni-esi.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn open(net: Network) -> MainDevice {
    let link = SimLink::with_network(net, "sim:eni".into(), "eni".into())
        .on_virtual_time(VirtualTime::new());
    MainDevice::with_link(Box::new(link))
}

/// The ENI `ecat eni` writes for `net`.
fn eni_of(net: Network) -> Eni {
    let mut md = open(net);
    md.scan().unwrap();
    let configs = md.discover_configs().unwrap();
    let lay = ecat::domain::layout(md.subdevices(), &configs, 1, 0).unwrap();
    let eni = ecat::eni::export::eni_from_layout(
        md.subdevices(),
        &configs,
        &vec![Vec::new(); configs.len()],
        &lay,
        1_000_000,
    );
    Eni::parse_str(&eni.to_xml(), "written.xml").unwrap()
}

/// Bring `eni` up on `net`: OP, then 100 cycles at the ENI's working counters.
fn run_eni(net: Network, eni: &Eni) -> u32 {
    let mut md = open(net);
    md.scan().unwrap();
    let setup = md.configure_from_eni(eni).unwrap();
    for n in &setup.notes {
        println!("note: {n}");
    }
    let (mut rt, _) = md.activate_eni(setup, None).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5000).unwrap();
    let want = rt.domain(0).expected_wkc();
    for _ in 0..100 {
        assert!(rt.tx_rx(1_000_000).unwrap());
        assert_eq!(rt.domain(0).state(), DomainState::Complete);
        assert_eq!(rt.domain(0).wkc(), want);
    }
    assert_eq!(rt.counters().0.fixed_wkc_mismatches, 0);
    want
}

#[test]
fn eni_of_an_esi_network_simulates_with_the_esi_devices_and_reaches_op() {
    let tmp = std::env::temp_dir().join(format!("cfg-eni-esi-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let file = network_file(&tmp);
    let eni = eni_of(Network::from_file(&file).unwrap());
    assert_eq!(eni.slaves.len(), 6);

    let mut devices = EsiDevices::new(vec![esi_dir()]);
    let (net, lines) = ecat_sim::eni::network_from_eni_with(&eni, &mut devices).unwrap();
    for l in &lines {
        println!("{l}");
    }
    assert_eq!(lines.len(), 6);
    assert!(lines[0].contains("ESI device EK1100"), "{lines:?}");
    assert!(lines[3].contains("ESI device EL3102"), "{lines:?}");
    assert!(lines.iter().all(|l| l.contains("ESI device")), "{lines:?}");
    // The ESI-built EL3102 has its ESI dictionary (e.g. 0x8000 settings), which a generic
    // ENI-shaped device would not.
    let el3102_od = net.subdevice(3).unwrap().od().unwrap();
    assert!(el3102_od.object(0x8000).is_some());
    let wkc = run_eni(net, &eni);
    println!("ESI devices: OP, WKC {wkc}");

    // Without the library: generic devices, same working counters.
    let (generic, lines) =
        ecat_sim::eni::network_from_eni_with(&eni, &mut EsiDevices::new(Vec::new())).unwrap();
    assert!(
        lines.iter().all(|l| l.contains("generic device")),
        "{lines:?}"
    );
    assert_eq!(run_eni(generic, &eni), wkc);
    let _ = std::fs::remove_dir_all(&tmp);
}
