//! Every device type of every ESI file in the test data loads, and every device with a
//! product code gets an SII image that our parser reads back with the same identity.

mod common;

use ecat_config::{build_sii_detailed, DeviceLibrary, PdoContent, SiiOptions};
use ecat_wire::sii::{FixedAreaRepr, Sii};

#[test]
fn every_device_of_every_esi_file_loads() {
    let dir = common::testdata("esi");
    let lib = DeviceLibrary::new([&dir]);
    assert!(!lib.files().is_empty(), "no ESI files in {}", dir.display());
    let mut types = 0;
    let mut passive = 0;
    let mut failures = Vec::new();
    let mut images = 0;
    let mut shrunk = Vec::new();
    for path in lib.files() {
        let file = match lib.file(path) {
            Ok(f) => f,
            Err(e) => {
                failures.push(e.to_string());
                continue;
            }
        };
        let mut file_passive = 0;
        for d in &file.devices {
            types += 1;
            if d.product_code.is_none() {
                file_passive += 1;
                continue;
            }
            match build_sii_detailed(d, &SiiOptions::default()) {
                Ok(built) => {
                    images += 1;
                    if built.pdos != PdoContent::All || !built.dc_names {
                        shrunk.push(format!(
                            "{} ({:?}{})",
                            d.label(),
                            built.pdos,
                            if built.dc_names { "" } else { ", no DC names" }
                        ));
                    }
                    let img = built.image;
                    let sii = Sii::new(&img).map(|_| FixedAreaRepr::parse(&img));
                    match sii {
                        Ok(Ok(f))
                            if f.product_code == d.product_code.unwrap()
                                && f.revision == d.revision
                                && f.vendor_id == d.vendor_id => {}
                        other => {
                            failures.push(format!("{}: SII reads back as {other:?}", d.label()))
                        }
                    }
                    let s = Sii::new(&img).unwrap();
                    for c in s.categories() {
                        if let Err(e) = c {
                            failures.push(format!("{}: category list: {e}", d.label()));
                        }
                    }
                }
                Err(e) => failures.push(e.to_string()),
            }
        }
        passive += file_passive;
        println!(
            "{}: {} device types ({} passive, without product code)",
            path.file_name().unwrap().to_string_lossy(),
            file.devices.len(),
            file_passive
        );
    }
    println!(
        "{} images shrunk to fit their EEPROM: {}",
        shrunk.len(),
        shrunk.join("; ")
    );
    for f in &failures {
        println!("FAILURE: {f}");
    }
    println!(
        "{types} types, {} failures ({passive} passive terminals without a product code, {images} SII images built)",
        failures.len()
    );
    assert!(failures.is_empty());
}
