//! Bad input gets one clear sentence, never a panic: malformed XML names file:line:column,
//! a missing type lists the types the file has, an unknown product names the directories
//! searched; truncated and mutated files are refused or read, but never crash the reader.

mod common;

use ecat_config::{DeviceLibrary, Error, EsiFile};
use proptest::prelude::*;

const SMALL: &str = r##"<?xml version="1.0"?>
<EtherCATInfo>
  <Vendor><Id>#x2</Id><Name>Beckhoff</Name></Vendor>
  <Descriptions>
    <Groups><Group><Type>DigOut</Type><Name LcId="1033">Digital out</Name></Group></Groups>
    <Devices>
      <Device Physics="KK">
        <Type ProductCode="#x07d43052" RevisionNo="#x00100000">EL2004</Type>
        <Name LcId="1033">EL2004 4Ch. Dig. Output</Name>
        <GroupType>DigOut</GroupType>
        <Sm StartAddress="#x0f00" ControlByte="#x44" Enable="1">Outputs</Sm>
        <RxPdo Fixed="1" Sm="0"><Index>#x1600</Index><Name>Ch 1</Name>
          <Entry><Index>#x7000</Index><SubIndex>1</SubIndex><BitLen>1</BitLen><Name>Output</Name><DataType>BOOL</DataType></Entry>
        </RxPdo>
        <Eeprom><ByteSize>2048</ByteSize><ConfigData>0401000000000f00</ConfigData></Eeprom>
      </Device>
    </Devices>
  </Descriptions>
</EtherCATInfo>
"##;

#[test]
fn malformed_xml_names_file_line_and_column() {
    let bad = SMALL.replace(
        "</Name>\n        <GroupType>",
        "</Nam>\n        <GroupType>",
    );
    let e = EsiFile::parse_str(&bad, "broken.xml").unwrap_err();
    let msg = e.to_string();
    println!("{msg}");
    assert!(matches!(e, Error::Xml { line: 9, .. }), "{e:?}");
    assert!(msg.starts_with("broken.xml:9:"), "{msg}");
    assert!(msg.contains("expected"), "{msg}");
}

#[test]
fn bad_number_names_the_element() {
    // The device is left out with its reason; asking for it gives that reason.
    let bad = SMALL.replace("<BitLen>1</BitLen>", "<BitLen>one</BitLen>");
    let f = EsiFile::parse_str(&bad, "f.xml").unwrap();
    assert!(f.devices.is_empty());
    let msg = f.device("EL2004", None).unwrap_err().to_string();
    println!("{msg}");
    assert!(msg.starts_with("f.xml:13:"), "{msg}");
    assert!(msg.contains("<BitLen>: expected a number"), "{msg}");
    assert!(
        msg.contains("device EL2004 rev 0x00100000 is left out"),
        "{msg}"
    );
    assert_eq!(f.warnings.len(), 1, "{:?}", f.warnings);
}

#[test]
fn not_an_esi_file() {
    let msg = EsiFile::parse_str("<EtherCATConfig/>", "eni.xml")
        .unwrap_err()
        .to_string();
    assert_eq!(
        msg,
        "eni.xml:1:1: expected an ESI file (root element <EtherCATInfo>), found <EtherCATConfig>"
    );
}

#[test]
fn missing_type_lists_the_types() {
    let f = EsiFile::parse_str(SMALL, "small.xml").unwrap();
    let msg = f.device("EL2032", None).unwrap_err().to_string();
    assert_eq!(
        msg,
        "<input>: no device type EL2032; the file has EL2004 (rev 0x00100000)"
    );
    let msg = f.device("EL2004", Some(7)).unwrap_err().to_string();
    assert!(
        msg.contains("no device type EL2004 revision 0x00000007"),
        "{msg}"
    );
    assert!(f.device("el2004", None).is_ok());
}

#[test]
fn unknown_product_names_the_directories() {
    let dir = common::testdata("esi");
    let lib = DeviceLibrary::new([dir.clone(), "/nonexistent/esi".into()]);
    let msg = lib
        .find_product(Some(2), 0x0bad_c0de, None)
        .unwrap_err()
        .to_string();
    println!("{msg}");
    assert!(
        msg.starts_with("no ESI file describes vendor 0x00000002 product 0x0badc0de; searched ")
    );
    assert!(msg.contains(&dir.display().to_string()) && msg.contains("/nonexistent/esi"));
    let empty = DeviceLibrary::new(Vec::<std::path::PathBuf>::new());
    assert_eq!(
        empty.find_type("EL2004", None).unwrap_err().to_string(),
        "no ESI file describes type EL2004; searched no directories (set ECAT_ESI_PATH or pass --esi-dir)"
    );
}

#[test]
fn unreadable_file_names_the_path() {
    let msg = EsiFile::from_path(std::path::Path::new("/nonexistent/x.xml"))
        .unwrap_err()
        .to_string();
    assert!(
        msg.starts_with("/nonexistent/x.xml: cannot read the ESI file"),
        "{msg}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn truncated_input_never_panics(cut in 0usize..SMALL.len()) {
        let text = &SMALL.as_bytes()[..cut];
        if let Err(e) = EsiFile::parse_bytes(text, "cut.xml") {
            prop_assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn truncated_real_file_with_dictionary_never_panics(cut in 0usize..27_010) {
        let path = common::testdata("esi").join("Synapticon_Somanet_CiA402-single.xml");
        let bytes = std::fs::read(path).unwrap();
        let cut = cut.min(bytes.len());
        match EsiFile::parse_bytes(&bytes[..cut], "cut.xml") {
            Ok(f) => {
                for d in &f.devices {
                    let _ = ecat_config::build_sii(d);
                }
            }
            Err(e) => prop_assert!(e.to_string().starts_with("cut.xml")),
        }
    }

    #[test]
    fn mutated_input_never_panics(edits in proptest::collection::vec((0usize..SMALL.len(), any::<u8>()), 1..8)) {
        let mut bytes = SMALL.as_bytes().to_vec();
        for (pos, b) in edits {
            bytes[pos] = b;
        }
        if let Ok(f) = EsiFile::parse_bytes(&bytes, "mut.xml") {
            for d in &f.devices {
                let _ = ecat_config::build_sii(d);
            }
        }
    }
}
