//! ESI files as vendors write them, end to end: a network naming devices from files with
//! vendor quirks (a `0x` after `#x`, SyncManagers without their use as IgH's `ethercat xml`
//! writes them, an `<EtherCATInfoList>`, entries without `BitLen`) and good types of a file
//! whose other type is broken is built by the simulator, scanned by our MainDevice and brought
//! to OP with the full WKC; naming the broken type gives its reason with file:line:column.

use ecat::clock::VirtualTime;
use ecat::link::sim::SimLink;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ecat-config/tests/fixtures/esi_quirks")
}

#[test]
fn quirky_esi_devices_reach_op_beside_a_broken_type() {
    let dir = fixtures();
    let text = "\
        [[subdevice]]\nesi = \"ethercat_info_list.xml\"\ntype = \"EK1100\"\n\
        [[subdevice]]\nesi = \"ethercat_info_list.xml\"\ntype = \"EL2008\"\n\
        [[subdevice]]\nesi = \"one_broken_device.xml\"\ntype = \"QD-IN\"\n\
        [[subdevice]]\nesi = \"one_broken_device.xml\"\nproduct = 0x1003\n\
        [[subdevice]]\nesi = \"hex_0x_after_hash.xml\"\n\
        [[subdevice]]\nesi = \"sm_without_use.xml\"\n\
        [[subdevice]]\nesi = \"entry_without_bitlen.xml\"\n";
    let net = Network::from_toml_str(text, "quirks.toml", &dir).unwrap();
    let orders: Vec<_> = net.summary().into_iter().map(|s| s.order).collect();
    assert_eq!(
        orders,
        [
            "EK1100",
            "EL2008",
            "QD-IN",
            "QD-COUPLER",
            "QD-IO",
            "QD-IO",
            "QD-IO"
        ]
    );
    let vt = VirtualTime::new();
    let link = SimLink::with_network(net, "sim:quirks.toml".into(), "quirks".into())
        .on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    assert_eq!(md.subdevices().len(), 7);
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    for _ in 0..20 {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
        let d = rt.domain(0);
        assert_eq!(d.wkc(), d.expected_wkc(), "cycle {}", rt.cycle_count());
    }
    let d = rt.domain(0);
    // EL2008 1 byte out, QD-IO (0x0x) 2 in, sm_without_use 2 out, entry_without_bitlen 5 in,
    // QD-IN 2 in.
    assert_eq!((d.outputs_len, d.inputs_len), (3, 9));

    let e = Network::from_toml_str(
        "[[subdevice]]\nesi = \"one_broken_device.xml\"\ntype = \"QD-OUT\"\n",
        "broken.toml",
        &dir,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("one_broken_device.xml:25:61: <BitLen>: expected a number"),
        "{e}"
    );
    assert!(
        e.contains("device QD-OUT rev 0x00000001 is left out"),
        "{e}"
    );
}
