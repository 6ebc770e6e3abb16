//! The model read from real ESI files: identity, SMs, FMMUs, PDOs with gaps, mailbox, DC,
//! EEPROM, ports and the CoE dictionary (defaults, arrays, access restrictions, PDO mapping);
//! and the device library's lookups.

mod common;

use ecat_config::esi::{FmmuKind, ObjectKind, PdoDir, PortKind, SmKind, States};
use ecat_config::{build_sii, DeviceLibrary, EsiFile};
use ecat_wire::sii::{FixedAreaRepr, Sii};

fn esi(name: &str) -> EsiFile {
    EsiFile::from_path(&common::testdata("esi").join(name)).unwrap()
}

#[test]
fn el7031_resources_dc_and_pdo_gaps() {
    let f = esi("Beckhoff_EL7xxx.xml");
    assert_eq!(f.vendor.id, 2);
    let d = f.device("EL7031", Some(0x0010_0000)).unwrap();
    assert_eq!(d.product_code, Some(0x1b77_3052));
    assert_eq!(
        d.name(1033),
        "EL7031 1Ch. Stepper motor output stage (24V, 1.5A)"
    );
    assert_eq!(d.name(1031), "EL7031 1K. Schrittmotor-Endstufe (24V, 1.5A)");
    assert_eq!(d.ebus_current_ma, Some(120));
    assert_eq!(d.esc.ports, vec![PortKind::Ebus, PortKind::Ebus]);
    assert!(d.profiles.contains(&5001));
    let kinds: Vec<_> = d.fmmus.iter().map(|f| f.kind.clone()).collect();
    assert_eq!(
        kinds,
        [FmmuKind::Outputs, FmmuKind::Inputs, FmmuKind::MBoxState]
    );
    assert_eq!(d.sms.len(), 4);
    assert_eq!(d.sms[0].kind, SmKind::MBoxOut);
    assert_eq!((d.sms[0].start, d.sms[0].control), (0x1000, 0x26));
    assert_eq!(d.sms[0].default_size, Some(128));
    assert_eq!(d.mailbox_layout(), Some((0x1000, 128, 0x1080, 128)));
    let mbx = d.mailbox.unwrap();
    assert!(mbx.data_link_layer && mbx.foe);
    let coe = mbx.coe.unwrap();
    assert!(coe.sdo_info && coe.pdo_assign && coe.complete_access && !coe.pdo_config);
    assert_eq!(mbx.protocol_word(), 0x04 | 0x08);

    let p = d.pdos.iter().find(|p| p.index == 0x1600).unwrap();
    assert_eq!(p.dir, PdoDir::Rx);
    assert_eq!(p.sm, Some(2));
    assert!(p.fixed && p.assigned_by_default());
    assert_eq!(p.excludes, vec![0x1601]);
    assert!(p.entries[0].is_gap());
    assert_eq!(p.entries[0].bit_len, 1);
    assert_eq!(p.entries[1].index, 0x7000);
    assert_eq!(p.entries[1].data_type_code(), 1);

    assert_eq!(d.dc.len(), 2);
    assert_eq!(d.dc[1].name, "DC");
    assert_eq!(d.dc[1].assign_activate, 0x0300);
    assert_eq!(d.dc[1].sync0_factor, 1);
    let e = d.eeprom.as_ref().unwrap();
    assert_eq!(e.byte_size, Some(2048));
    assert_eq!(
        e.bootstrap.as_deref(),
        Some(&[0, 0x10, 0xf4, 0, 0xf4, 0x10, 0xf4, 0][..])
    );

    // The SII image carries the mailbox, bootstrap mailbox and DC modes.
    let img = build_sii(d).unwrap();
    let fixed = FixedAreaRepr::parse(&img).unwrap();
    assert_eq!(fixed.std_rx_mailbox_offset, 0x1000);
    assert_eq!(fixed.std_tx_mailbox_size, 128);
    assert_eq!(fixed.boot_rx_mailbox_offset, 0x1000);
    assert_eq!(fixed.boot_rx_mailbox_size, 244);
    assert_eq!(fixed.mailbox_protocols.0, 0x0C);
    assert_eq!(fixed.pdi_control, 0x0005);
    let sii = Sii::new(&img).unwrap();
    let dc: Vec<_> = sii.dc().unwrap().collect();
    assert_eq!(dc.len(), 2);
    assert_eq!(dc[1].assign_activate, 0x0300);
    assert_eq!(sii.strings().unwrap().get_str(dc[1].name_index), Some("DC"));
    let g = sii.general().unwrap().unwrap();
    assert_eq!(g.coe_details.0, 0x01 | 0x02 | 0x04 | 0x20);
    assert_eq!(g.foe_details, 1);
}

#[test]
fn el7031_dictionary() {
    let f = esi("Beckhoff_EL7xxx.xml");
    let d = f.device("EL7031", Some(0x0010_0000)).unwrap();
    let od = d.dictionary.as_ref().expect("EL7031 has a dictionary");
    // An array with its defaults: RxPDO assign.
    let o = od.object(0x1c12).unwrap();
    assert_eq!(o.kind, ObjectKind::Array);
    let subs: Vec<(u8, Option<Vec<u8>>)> = o
        .sub_items
        .iter()
        .map(|s| (s.subindex, s.default.clone()))
        .collect();
    assert_eq!(subs[0], (0, Some(vec![3])));
    assert_eq!(subs[1], (1, Some(vec![0x00, 0x16])));
    assert_eq!(subs[3], (3, Some(vec![0x04, 0x16])));
    assert!(o.sub_items[1].flags.access.write.0 != 0, "0x1C12 is rw");
    // A record with DefaultValue, MinValue and MaxValue.
    let m = od.object(0x8010).unwrap();
    assert_eq!(m.kind, ObjectKind::Record);
    let cur = m
        .sub_items
        .iter()
        .find(|s| s.name == "Maximal current")
        .unwrap();
    assert_eq!(cur.default.as_deref(), Some(&0x5dcu16.to_le_bytes()[..]));
    assert_eq!((cur.min, cur.max), (Some(0), Some(0x9c4)));
    // PDO mappable input objects.
    let mappable = od
        .objects
        .iter()
        .flat_map(|o| o.sub_items.iter())
        .filter(|s| s.flags.pdo_mapping.tx)
        .count();
    assert!(mappable > 0);
    // The identity object holds the device's identity as defaults.
    let id = od.object(0x1018).unwrap();
    let product = id.sub_item(2).unwrap().default.clone().unwrap();
    assert_eq!(product, 0x1b77_3052u32.to_le_bytes());
}

#[test]
fn write_restrictions_per_state() {
    let f = esi("Beckhoff_EL1xxx.xml");
    let d = f.device("EL1258", Some(0x0010_0000)).unwrap();
    let od = d.dictionary.as_ref().unwrap();
    let s0 = od.object(0x1c12).unwrap().sub_item(0).unwrap();
    assert_eq!(s0.flags.access.read, States::ALL);
    assert_eq!(s0.flags.access.write, States(States::PREOP));
    assert_eq!(s0.flags.sdo_info_access() & 0x3f, 0x07 | 0x08);
}

#[test]
fn synapticon_latin1_file_with_dictionary() {
    let f = esi("Synapticon_Somanet_CiA402-single.xml");
    assert_eq!(f.vendor.id, 0x22d2);
    let d = &f.devices[0];
    assert_eq!(d.type_name, "CiA402 Motor Control Device");
    assert_eq!(d.revision, 0x0a00_0002);
    assert_eq!(d.profiles, vec![402]);
    assert_eq!(d.esc.ports, vec![PortKind::Mii, PortKind::Mii]);
    let od = d.dictionary.as_ref().unwrap();
    let dt = od.object(0x1000).unwrap();
    assert_eq!(dt.kind, ObjectKind::Var);
    assert_eq!(dt.default.as_deref(), Some(&[0x92, 0x01, 0x02, 0x70][..]));
    let map = od.object(0x1600).unwrap();
    assert_eq!(map.sub_items.len(), 6);
    assert_eq!(
        map.sub_items[1].default.as_deref(),
        Some(&[0x10, 0, 0x40, 0x60][..])
    );
    assert_eq!(d.eeprom.as_ref().unwrap().byte_size, Some(15360));
    let img = build_sii(d).unwrap();
    let fixed = FixedAreaRepr::parse(&img).unwrap();
    assert_eq!(fixed.eeprom_size, 15360 / 128 - 1);
    assert_eq!(fixed.pdi_control, 0x0e08);
    assert_eq!(fixed.std_rx_mailbox_size, 1024);
}

#[test]
fn latin1_text_becomes_latin1_sii_strings() {
    let text = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<EtherCATInfo><Vendor><Id>1</Id></Vendor><Descriptions><Devices>\
        <Device><Type ProductCode=\"1\" RevisionNo=\"2\">T1</Type><Name LcId=\"1033\">10\u{b5}s \u{20ac}</Name></Device>\
        </Devices></Descriptions></EtherCATInfo>";
    // Encode as Latin-1 bytes (the euro sign is not Latin-1: the file spells it as '?').
    let bytes: Vec<u8> = text
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect();
    let f = EsiFile::parse_bytes(&bytes, "latin1.xml").unwrap();
    assert_eq!(f.devices[0].name(1033), "10\u{b5}s ?");
    // From UTF-8 text, a character beyond Latin-1 becomes '?' in the SII.
    let f = EsiFile::parse_str(&text.replace("ISO-8859-1", "UTF-8"), "utf8.xml").unwrap();
    let img = build_sii(&f.devices[0]).unwrap();
    let sii = Sii::new(&img).unwrap();
    let strings = sii.strings().unwrap();
    assert_eq!(strings.get(2), Some(&b"10\xb5s ?"[..]));
}

#[test]
fn library_lookups() {
    let dir = common::testdata("esi");
    let lib = DeviceLibrary::new([&dir]);
    assert_eq!(lib.parsed_files(), 0, "listing parses nothing");
    // By product: highest revision unless one is given.
    let d = lib.find_product(None, 0x07d4_3052, None).unwrap();
    assert_eq!(d.type_name, "EL2004");
    let highest = d.revision;
    assert_eq!(
        lib.parsed_files(),
        1,
        "only the file that mentions the product is parsed"
    );
    assert!(highest >= 0x0012_0000);
    let d = lib
        .find_product(Some(2), 0x07d4_3052, Some(0x0010_0000))
        .unwrap();
    assert_eq!(d.revision, 0x0010_0000);
    // By type name, case-insensitive.
    let d = lib.find_type("el2004", None).unwrap();
    assert_eq!(d.revision, highest);
    assert!(d
        .file
        .path
        .as_ref()
        .unwrap()
        .ends_with("Beckhoff_EL2xxx.xml"));
    // Cached: the same parsed file is handed out again.
    let again = lib.find_type("EL2008", None).unwrap();
    assert!(std::sync::Arc::ptr_eq(&d.file, &again.file));
    assert_eq!(lib.parsed_files(), 1);
    // Wrong vendor.
    assert!(lib.find_product(Some(3), 0x07d4_3052, None).is_err());
}

#[test]
fn esc_registers_watchdog_and_lrd_lwr() {
    let text = r##"<EtherCATInfo><Vendor><Id>#x99</Id></Vendor><Descriptions><Devices>
        <Device Physics="YY">
          <Type ProductCode="#x10" RevisionNo="#x2" UseLrdLwr="1">Dev</Type>
          <Sm StartAddress="#x1000" ControlByte="#x64" Enable="1" Watchdog="1">Outputs</Sm>
          <ESC><Reg0400>#x09C2</Reg0400><Reg0410>1000</Reg0410><Reg0420>#x03E8</Reg0420></ESC>
          <VendorSpecific><Anything Deep="1"><Nested/></Anything></VendorSpecific>
        </Device></Devices></Descriptions></EtherCATInfo>"##;
    let f = EsiFile::parse_str(text, "esc.xml").unwrap();
    let d = &f.devices[0];
    assert_eq!(d.esc.watchdog_divider, Some(0x09c2));
    assert_eq!(d.esc.pdi_watchdog, Some(1000));
    assert_eq!(d.esc.sm_watchdog, Some(1000));
    assert_eq!(d.esc.reg0108, None);
    assert!(d.sms[0].watchdog);
    assert!(d.use_lrd_lwr);
    let img = build_sii(d).unwrap();
    let g = Sii::new(&img).unwrap().general().unwrap().unwrap();
    assert!(g.not_lrw());
    assert_eq!(g.physical_ports, 0x0011);
}

#[test]
fn default_assignment_sizes_and_names() {
    let f = esi("Beckhoff_EL2xxx.xml");
    let d = f.device("EL2889", Some(0x0011_0000)).unwrap();
    assert_eq!(d.default_pdos(0).count(), 8);
    assert_eq!(d.default_pdos(1).count(), 8);
    assert_eq!(d.default_sm_bytes(0), Some(1));
    assert_eq!(d.default_sm_bytes(1), Some(1));
    assert_eq!(d.default_sm_bytes(2), None);
    assert_eq!(d.pdo(0x1608).unwrap().name, "Channel 9");
    assert_eq!(d.object_name(0x7080, 1), Some("Output"));
    let f = esi("Beckhoff_EL7xxx.xml");
    let d = f.device("EL7031", Some(0x0010_0000)).unwrap();
    assert_eq!(d.object_name(0x1c12, 0), Some("SubIndex 000"));
    assert_eq!(d.object_name(0x8010, 1), Some("Maximal current"));
    assert_eq!(d.default_sm_bytes(0), None, "SM0 is a mailbox");
    assert!(d.default_sm_bytes(2).unwrap() > 0);
}

#[test]
fn identification_register_goes_into_general() {
    // The EK1101 (coupler with ID switch) names its identification register; the EK1100
    // has none.
    let f = esi("Beckhoff_EK11xx.xml");
    let ek1101 = f.device("EK1101", None).unwrap();
    assert_eq!(ek1101.ident_ado, Some(0x1000));
    let image = build_sii(ek1101).unwrap();
    let g = Sii::new(&image).unwrap().general().unwrap().unwrap();
    assert_eq!(
        g.flags.0 & ecat_wire::sii::GeneralFlags::IDENT_PHYS_MEM,
        0x10
    );
    assert_eq!(g.ident_phys_addr, 0x1000);
    let ek1100 = f.device("EK1100", None).unwrap();
    assert_eq!(ek1100.ident_ado, None);
    let g = Sii::new(&build_sii(ek1100).unwrap())
        .unwrap()
        .general()
        .unwrap()
        .unwrap();
    assert_eq!((g.flags.0 & 0x18, g.ident_phys_addr), (0, 0));
}
