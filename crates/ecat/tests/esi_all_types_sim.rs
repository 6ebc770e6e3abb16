//! One of every device type the ESI test data describes (highest revision, passive terminals
//! left out), built by the simulator from its ESI file, on one line behind an EK1100: our
//! MainDevice scans them, sets up DC as `ecat run` does (SYNC0 where a type's DC modes ask for
//! it), brings every one to OP and sees the full WKC, on virtual time.
//! Uses the shared ESI files beside the clone (`../shared/testdata/esi`: 181 Beckhoff types), else the
//! repository's subset (`testdata/esi`).

use ecat::clock::VirtualTime;
use ecat::dc::setup::DcOptions;
use ecat::dc::{DcMode, DcRuntime};
use ecat::link::sim::SimLink;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_config::DeviceLibrary;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn esi_dir() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    ["../shared/testdata/esi", "../../shared/testdata/esi"]
        .iter()
        .map(|d| repo.join(d))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| repo.join("testdata/esi"))
}

#[test]
fn every_esi_device_type_reaches_op() {
    let dir = esi_dir();
    let lib = DeviceLibrary::new([&dir]);
    // Type → file name, for the types with a product code (an ESC); EK1100 leads the line.
    let mut types = BTreeMap::new();
    for d in lib.devices().unwrap() {
        if d.product_code.is_some() && d.vendor_id == 2 {
            let file = d.file.path.as_ref().unwrap().file_name().unwrap();
            types.insert(d.type_name.clone(), file.to_string_lossy().into_owned());
        }
    }
    let mut text = format!("esi_dirs = [{:?}]\n", dir.display().to_string());
    let mut order: Vec<_> = types.iter().collect();
    order.sort_by_key(|(t, _)| *t != "EK1100");
    for (t, f) in &order {
        text += &format!("[[subdevice]]\nesi = {f:?}\ntype = {t:?}\n");
    }
    let net = Network::from_toml_str(&text, "all.toml", &dir).unwrap();
    let vt = VirtualTime::new();
    let link =
        SimLink::with_network(net, "sim:all.toml".into(), "all".into()).on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    assert_eq!(md.subdevices().len(), order.len());
    // The MainDevice's normal DC setup (as `ecat run --dc auto`): some types (EL1258,
    // EL2258, ...) have no free-run mode and refuse SAFEOP without SYNC0 (0x0030).
    let sync0: Vec<&str> = md
        .subdevices()
        .iter()
        .filter(|s| s.dc_assign_activate & 0x0300 != 0)
        .map(|s| s.order.as_str())
        .collect();
    println!("{} SubDevices get SYNC0", sync0.len());
    assert!(!sync0.is_empty());
    let setup = md
        .configure_dc(DcOptions::default())
        .unwrap()
        .expect("DC SubDevices");
    let dc = DcRuntime {
        setup,
        mode: DcMode::MasterFollowsReference,
        cycle_ns: 1_000_000,
        shift_ns: 0,
    };
    let mut rt = md
        .activate(Activation {
            dc: Some(dc),
            ..Default::default()
        })
        .unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    for _ in 0..100 {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
        let d = rt.domain(0);
        assert_eq!(d.wkc(), d.expected_wkc(), "cycle {}", rt.cycle_count());
    }
    let d = rt.domain(0);
    println!(
        "{} ESI device types in OP: {} bytes out, {} in, WKC {}",
        order.len(),
        d.outputs_len,
        d.inputs_len,
        d.expected_wkc()
    );
}
