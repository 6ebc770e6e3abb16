//! The real EEPROM dumps in testdata/sii scan with the names and identities the real devices
//! have (the SII words in testdata/captures are the same as these dumps, see SOURCES.md).

use ecat::link::sim::SimLink;
use ecat::MainDevice;
use ecat_sim::Network;

#[test]
fn real_dumps_scan_with_their_names_and_identities() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/sii");
    let toml = format!(
        "[[subdevice]]\nsii = \"{dir}/ek1100-eeprom-dump.bin\"\n[[subdevice]]\nsii = \"{dir}/el2828.bin\"\n[[subdevice]]\nsii = \"{dir}/el2889.bin\"\n[[subdevice]]\nsii = \"{dir}/el2004-eeprom-dump.bin\"\n"
    );
    let net = Network::from_toml_str(&toml, "dumps.toml", std::path::Path::new(".")).unwrap();
    let mut md = MainDevice::with_link(Box::new(SimLink::with_network(
        net,
        "sim:dumps".into(),
        "dumps".into(),
    )));
    md.scan().unwrap();
    let got: Vec<(String, u32, u32, u32)> = md
        .subdevices()
        .iter()
        .map(|s| {
            (
                s.order.clone(),
                s.identity.vendor_id,
                s.identity.product_code,
                s.identity.revision,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("EK1100".to_string(), 2, 0x044C_2C52, 0x0012_0000),
            ("EL2828".to_string(), 2, 0x0B0C_3052, 0x0011_0000),
            ("EL2889".to_string(), 2, 0x0B49_3052, 0x0011_0000),
            ("EL2004".to_string(), 2, 0x07D4_3052, 0x0010_0000),
        ]
    );
    assert!(
        md.subdevices()[0]
            .name
            .starts_with("EK1100 EtherCAT-Koppler"),
        "{}",
        md.subdevices()[0].name
    );
    assert_eq!(md.subdevices()[2].output_bits(), 16);
}
