//! Devices from ESI files: the object dictionary built from an ESI (defaults, access words,
//! PDO mapping and assignment, standard objects), the network-file keys and their errors,
//! and the template cache.

use ecat_config::EsiFile;
use ecat_sim::devices::esi::{od, EsiDevices, Template, Wanted};
use ecat_sim::{Network, SimError};
use ecat_wire::coe::info::{ObjectAccess as A, ObjectCode};
use std::path::{Path, PathBuf};

/// A small ESI: CoE with PDO assignment and configuration, one fixed RxPDO, one TxPDO that
/// maps a record's sub-items and an object the dictionary lacks.
const ESI: &str = r##"<?xml version="1.0"?>
<EtherCATInfo>
  <Vendor><Id>#x00000ECA</Id><Name>Test</Name></Vendor>
  <Descriptions>
    <Groups><Group><Type>T</Type><Name>Test</Name></Group></Groups>
    <Devices>
      <Device Physics="KK">
        <Type ProductCode="#x00001234" RevisionNo="#x00020000">TD100</Type>
        <Name LcId="1033">TD100 test device</Name>
        <GroupType>T</GroupType>
        <Profile>
          <ProfileNo>5001</ProfileNo>
          <Dictionary>
            <DataTypes>
              <DataType><Name>USINT</Name><BitSize>8</BitSize></DataType>
              <DataType><Name>INT</Name><BitSize>16</BitSize></DataType>
              <DataType><Name>BOOL</Name><BitSize>1</BitSize></DataType>
              <DataType>
                <Name>DT6000</Name><BitSize>48</BitSize>
                <SubItem><SubIdx>0</SubIdx><Name>SubIndex 000</Name><Type>USINT</Type><BitSize>8</BitSize><BitOffs>0</BitOffs><Flags><Access>ro</Access></Flags></SubItem>
                <SubItem><SubIdx>1</SubIdx><Name>Underrange</Name><Type>BOOL</Type><BitSize>1</BitSize><BitOffs>16</BitOffs><Flags><Access>ro</Access><PdoMapping>T</PdoMapping></Flags></SubItem>
                <SubItem><SubIdx>17</SubIdx><Name>Value</Name><Type>INT</Type><BitSize>16</BitSize><BitOffs>32</BitOffs><Flags><Access>ro</Access><PdoMapping>T</PdoMapping></Flags></SubItem>
              </DataType>
            </DataTypes>
            <Objects>
              <Object>
                <Index>#x8000</Index><Name>Filter</Name><Type>INT</Type><BitSize>16</BitSize>
                <Info><DefaultData>FEFF</DefaultData><MinValue>-100</MinValue><MaxValue>100</MaxValue></Info>
                <Flags><Access WriteRestrictions="PreOP">rw</Access><Backup>1</Backup></Flags>
              </Object>
              <Object>
                <Index>#x6000</Index><Name>AI Inputs</Name><Type>DT6000</Type><BitSize>48</BitSize>
                <Info>
                  <SubItem><Name>SubIndex 000</Name><Info><DefaultData>11</DefaultData></Info></SubItem>
                  <SubItem><Name>Underrange</Name><Info><DefaultData>01</DefaultData></Info></SubItem>
                  <SubItem><Name>Value</Name><Info><DefaultData>3412</DefaultData></Info></SubItem>
                </Info>
                <Flags><Access>ro</Access></Flags>
              </Object>
            </Objects>
          </Dictionary>
        </Profile>
        <Fmmu>Outputs</Fmmu><Fmmu>Inputs</Fmmu><Fmmu>MBoxState</Fmmu>
        <Sm DefaultSize="128" StartAddress="#x1000" ControlByte="#x26" Enable="1">MBoxOut</Sm>
        <Sm DefaultSize="128" StartAddress="#x1080" ControlByte="#x22" Enable="1">MBoxIn</Sm>
        <Sm StartAddress="#x1100" ControlByte="#x24" Enable="1">Outputs</Sm>
        <Sm StartAddress="#x1180" ControlByte="#x20" Enable="1">Inputs</Sm>
        <RxPdo Fixed="1" Sm="2">
          <Index>#x1600</Index><Name>Out</Name>
          <Entry><Index>#x7000</Index><SubIndex>1</SubIndex><BitLen>16</BitLen><Name>Output</Name><DataType>INT</DataType></Entry>
        </RxPdo>
        <TxPdo Sm="3">
          <Index>#x1A00</Index><Name>AI</Name>
          <Entry><Index>#x6000</Index><SubIndex>1</SubIndex><BitLen>1</BitLen><Name>Underrange</Name><DataType>BOOL</DataType></Entry>
          <Entry><Index>0</Index><BitLen>15</BitLen></Entry>
          <Entry><Index>#x6000</Index><SubIndex>17</SubIndex><BitLen>16</BitLen><Name>Value</Name><DataType>INT</DataType></Entry>
        </TxPdo>
        <TxPdo>
          <Index>#x1A01</Index><Name>Spare</Name>
          <Entry><Index>#x6010</Index><SubIndex>0</SubIndex><BitLen>8</BitLen><Name>Spare</Name><DataType>USINT</DataType></Entry>
        </TxPdo>
        <Mailbox><CoE SdoInfo="1" PdoAssign="1" PdoConfig="1" CompleteAccess="1"/></Mailbox>
        <Eeprom><ByteSize>2048</ByteSize><ConfigData>080C0000</ConfigData></Eeprom>
      </Device>
    </Devices>
  </Descriptions>
</EtherCATInfo>
"##;

fn device() -> ecat_config::Device {
    let f = EsiFile::parse_str(ESI, "test.xml").unwrap();
    f.devices[0].clone()
}

#[test]
fn od_defaults_ranges_and_access_words() {
    let od = od::build(&device(), 77);
    let e = od.entry(0x8000, 0).unwrap();
    assert_eq!((e.int(), e.min, e.max), (-2, Some(-100), Some(100)));
    assert_eq!(e.access, A::READ_ALL | A::WRITE_PREOP | A::BACKUP);
    let o = od.object(0x6000).unwrap();
    assert_eq!(o.code, ObjectCode::RECORD);
    assert_eq!(od.get(0x6000, 0), Some(0x11));
    assert_eq!(od.get(0x6000, 1), Some(1));
    assert_eq!(od.get(0x6000, 17), Some(0x1234));
    assert_eq!(od.entry(0x6000, 17).unwrap().access, A::READ_ALL | A::TXPDO);
    assert_eq!(od.entry(0x6000, 1).unwrap().bits, 1);
}

#[test]
fn od_standard_objects_and_identity() {
    let od = od::build(&device(), 77);
    assert_eq!(od.get(0x1000, 0), Some(5001));
    let id: Vec<i64> = (1..=4).map(|s| od.get(0x1018, s).unwrap()).collect();
    assert_eq!(id, [0x0ECA, 0x1234, 0x0002_0000, 77]);
    let types: Vec<i64> = (0..=4).map(|s| od.get(0x1C00, s).unwrap()).collect();
    assert_eq!(types, [4, 1, 2, 3, 4]);
    assert!(od.object(0x1C32).is_some() && od.object(0x1C33).is_some());
    let name = &od.entry(0x1008, 0).unwrap().value;
    assert_eq!(name.as_slice(), b"TD100 test device");
}

#[test]
fn od_pdo_mapping_and_assignment_objects() {
    let od = od::build(&device(), 0);
    // The fixed RxPDO: read-only, exactly its entry; its object (absent from the
    // dictionary) is created writable and RxPDO-mappable.
    assert_eq!(od.get(0x1600, 0), Some(1));
    assert_eq!(od.get(0x1600, 1), Some(0x7000_0110));
    assert_eq!(od.entry(0x1600, 1).unwrap().access, A::READ_ALL);
    assert!(od.entry(0x1600, 2).is_none());
    let out = od.entry(0x7000, 1).unwrap();
    assert_eq!(out.access, A::READ_ALL | A::WRITE_ALL | A::RXPDO);
    // The configurable TxPDO: room for 8 entries, writable in PREOP, gap kept.
    let words: Vec<i64> = (0..=3).map(|s| od.get(0x1A00, s).unwrap()).collect();
    assert_eq!(words, [3, 0x6000_0101, 0x0000_000F, 0x6000_1110]);
    assert_eq!(od.object(0x1A00).unwrap().max_subindex(), 8);
    assert_eq!(
        od.entry(0x1A00, 1).unwrap().access,
        A::READ_ALL | A::WRITE_PREOP | A::SETTINGS
    );
    // Assignments: the default PDOs, room for every PDO of the direction.
    assert_eq!(
        (od.get(0x1C12, 0), od.get(0x1C12, 1)),
        (Some(1), Some(0x1600))
    );
    assert_eq!(
        (od.get(0x1C13, 0), od.get(0x1C13, 1)),
        (Some(1), Some(0x1A00))
    );
    assert_eq!(od.get(0x1C13, 2), Some(0));
    assert!(od.object(0x1A01).is_some() && od.entry(0x6010, 0).is_some());
}

#[test]
fn template_builds_a_subdevice_with_serial_and_alias() {
    let t = Template::new(&device()).unwrap();
    assert_eq!(
        (t.order.as_str(), t.identity),
        ("TD100", (0x0ECA, 0x1234, 0x0002_0000))
    );
    assert_eq!(t.chip.esc_type, 0x12, "an E-Bus terminal gets an ET1200");
    let esc = t.build(42, Some(7), None).unwrap();
    assert_eq!(esc.info().fixed.serial, 42);
    assert_eq!(esc.station_alias(), 7);
    assert_eq!(esc.od().unwrap().get(0x1018, 4), Some(42));
}

fn esi_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/esi")
}

fn parse(text: &str) -> Result<Network, SimError> {
    Network::from_toml_str(text, "net.toml", &esi_dir())
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn network_entries_by_type_product_and_library() {
    let n = parse(
        "esi_dirs = [\".\"]\n\
         [[subdevice]]\nesi = \"Beckhoff_EK11xx.xml\"\ntype = \"EK1100\"\n\n\
         [[subdevice]]\nesi = \"Beckhoff_EL2xxx.xml\"\nproduct = 0x07f03052\nrevision = 0x00100000\n\n\
         [[subdevice]]\ntype = \"EL1004\"\nalias = 9\n\n\
         [[subdevice]]\nesi = true\ntype = \"el2004\"\nchip = \"ET1100\"\n",
    )
    .unwrap();
    let s = n.summary();
    assert_eq!(s[0].order, "EK1100");
    assert_eq!(
        (s[1].order.as_str(), s[1].product, s[1].revision),
        ("EL2032", 0x07F0_3052, 0x0010_0000)
    );
    assert_eq!((s[2].order.as_str(), s[2].alias), ("EL1004", 9));
    assert_eq!(n.subdevice(2).unwrap().info().fixed.serial, 3);
    assert_eq!(n.subdevice(3).unwrap().chip().esc_type, 0x11);
    // A passive terminal (no product code in the ESI) stays off the frame path.
    let n = parse(
        "esi_dirs = [\".\"]\n[[subdevice]]\ntype = \"EK1100\"\n\
         [[subdevice]]\nesi = \"Beckhoff_EL9xxx.xml\"\ntype = \"EL9011\"\n",
    )
    .unwrap();
    assert_eq!((n.esc_count(), n.summary()[1].passive), (1, true));
    assert_eq!(n.summary()[1].name, "EL9011 End Terminal");
    let e = err("[[subdevice]]\nesi = \"Beckhoff_EL9xxx.xml\"\ntype = \"EL9011\"\nalias = 3\n");
    assert!(e.starts_with("net.toml:1:") && e.contains("passive"), "{e}");
}

#[test]
fn sii_lcid_writes_the_names_in_that_language_and_syncunit_follows_su() {
    let net = |lcid: &str| {
        parse(&format!(
            "esi_dirs = [\".\"]\n{lcid}[[subdevice]]\ntype = \"EK1100\"\n\n\
             [[subdevice]]\ntype = \"EL2004\"\nrevision = 0x00100000\n"
        ))
        .unwrap()
    };
    let (en, de) = (net(""), net("sii_lcid = 1031\n"));
    assert_eq!(
        en.subdevice(1).unwrap().info().name,
        "EL2004 4Ch. Dig. Output 24V, 0.5A"
    );
    assert_eq!(
        de.subdevice(1).unwrap().info().name,
        "EL2004 4K. Dig. Ausgang 24V, 0.5A"
    );
    assert_eq!(
        de.subdevice(0).unwrap().info().name,
        "EK1100 EtherCAT-Koppler (2A E-Bus)"
    );
    // SYNCUNIT (43) for the EL2004 (its ESI has <Su FrameRepeatSupport="1"/>), not the EK1100.
    let kinds = |n: &Network, i: usize| -> Vec<u16> {
        ecat_wire::sii::Sii::new(n.subdevice(i).unwrap().sii())
            .unwrap()
            .categories()
            .map(|c| c.unwrap().kind.to_u16())
            .collect()
    };
    assert_eq!(kinds(&de, 1), [10, 30, 40, 41, 43, 51]);
    assert!(!kinds(&de, 0).contains(&43));
}

#[test]
fn network_errors_name_file_line_and_what_exists() {
    let e = err("[[subdevice]]\nesi = \"Beckhoff_EL2xxx.xml\"\ntype = \"EL2999\"\n");
    assert!(e.starts_with("net.toml:3: "), "{e}");
    assert!(
        e.contains("no device type EL2999") && e.contains("EL2032 (rev"),
        "{e}"
    );
    let e = err("esi_dirs = [\"nowhere\"]\n[[subdevice]]\nproduct = 0x0badc0de\n");
    assert!(
        e.starts_with("net.toml:3: no ESI file describes product 0x0badc0de; searched "),
        "{e}"
    );
    assert!(e.contains("nowhere"), "names the directories: {e}");
    let e = err("[[subdevice]]\nesi = \"Beckhoff_EL2xxx.xml\"\ntype = \"EL2004\"\nproduct = 1\n");
    assert!(
        e.starts_with("net.toml:4:") && e.contains("not both"),
        "{e}"
    );
    let e = err("[[subdevice]]\nesi = 3\ntype = \"EL2004\"\n");
    assert!(
        e.starts_with("net.toml:2:") && e.contains("name of an ESI file"),
        "{e}"
    );
    let e = err("[[subdevice]]\nmodel = \"EK1100\"\ntype = \"EK1100\"\n");
    assert!(
        e.starts_with("net.toml:1:") && e.contains("one of `model`"),
        "{e}"
    );
    let e = err("[[subdevice]]\nmodel = \"EK1100\"\nrevision = 1\n");
    assert!(
        e.starts_with("net.toml:3:") && e.contains("`revision` selects"),
        "{e}"
    );
    let e = err("[[subdevice]]\nesi = \"Missing.xml\"\ntype = \"EL2004\"\n");
    assert!(
        e.starts_with("net.toml:3: no ESI file") && e.contains("Missing.xml"),
        "{e}"
    );
    let e = err("[[subdevice]]\nesi = \"Beckhoff_EL2xxx.xml\"\n");
    assert!(e.contains("say which") && e.contains("EL2004"), "{e}");
    let e = err("[[subdevice]]\nesi = \"Beckhoff_EL2xxx.xml\"\nproduct = -1\n");
    assert!(e.starts_with("net.toml:3:") && e.contains("32-bit"), "{e}");
    let e = err("[[subdevice]]\nesi = \"Beckhoff_EL2xxx.xml\"\ntype = \"EL2004\"\nchip = \"X\"\n");
    assert!(
        e.starts_with("net.toml:4:") && e.contains("unknown chip"),
        "{e}"
    );
}

#[test]
fn a_thousand_devices_of_one_type_parse_and_build_once() {
    let mut d = EsiDevices::new(vec![esi_dir()]);
    let file = esi_dir().join("Beckhoff_EL2xxx.xml");
    for _ in 0..1000 {
        d.from_file(&file, &Wanted::Type("EL2008".into()), None)
            .unwrap();
    }
    assert_eq!((d.template_count(), d.library().parsed_files()), (1, 1));
    let mut text =
        String::from("[[subdevice]]\nesi = \"Beckhoff_EK11xx.xml\"\ntype = \"EK1100\"\n");
    for _ in 0..1000 {
        text += "[[subdevice]]\nesi = \"Beckhoff_EL2xxx.xml\"\ntype = \"EL2008\"\n";
    }
    let t0 = std::time::Instant::now();
    let n = parse(&text).unwrap();
    println!("1001 ESI-built SubDevices in {:?}", t0.elapsed());
    assert_eq!(n.esc_count(), 1001);
    assert_eq!(n.subdevice(1000).unwrap().info().fixed.serial, 1001);
}

fn template(file: &str, t: &str) -> std::sync::Arc<Template> {
    let mut d = EsiDevices::new(vec![]);
    d.from_file(&esi_dir().join(file), &Wanted::Type(t.into()), None)
        .unwrap()
}

#[test]
fn inputs_walk_with_time_reach_the_mapped_objects_and_can_be_pinned() {
    // EL1008: no mailbox, 8 input bits from the SII layout.
    let mut esc = template("Beckhoff_EL1xxx.xml", "EL1008")
        .build(1, None, None)
        .unwrap();
    let mut seen = Vec::new();
    for ms in 0..9u64 {
        esc.end_of_frame(ms * 1_000_000 + 500);
        seen.push(esc.inputs().to_vec());
    }
    assert_eq!(seen[0], [0x01]);
    assert_eq!(seen[3], [0x08]);
    assert_eq!(seen[8], [0x01], "the walk repeats after 8 bits");
    esc.set_input_override(Some(&[0xA5]));
    esc.end_of_frame(5_000_000);
    assert_eq!(esc.inputs(), [0xA5]);
    // EL3102 (CoE): the walking bits land in the objects its TxPDOs map (0x3101:01, the
    // channel 1 status byte, first), from which its inputs are packed.
    let mut esc = template("Beckhoff_EL31xx.xml", "EL3102")
        .build(1, None, None)
        .unwrap();
    assert_eq!(
        esc.inputs().len(),
        6,
        "two channels of status byte and value"
    );
    esc.end_of_frame(0);
    assert_eq!(esc.od().unwrap().get(0x3101, 1), Some(1));
    esc.end_of_frame(1_000_000);
    assert_eq!(esc.od().unwrap().get(0x3101, 1), Some(2));
    esc.end_of_frame(8_000_000);
    assert_eq!(
        esc.od().unwrap().get(0x3101, 2),
        Some(1),
        "bit 8 is the value's bit 0"
    );
    assert_eq!(esc.inputs(), [0, 1, 0, 0, 0, 0]);
}

#[test]
fn chips_follow_what_the_device_needs() {
    let chip = |f: &str, t: &str| template(f, t).chip;
    assert_eq!(
        chip("Beckhoff_EK11xx.xml", "EK1100").esc_type,
        0x11,
        "the captured EK1100"
    );
    let el2008 = chip("Beckhoff_EL2xxx.xml", "EL2008");
    assert_eq!((el2008.esc_type, el2008.dc_system_time), (0x12, false));
    let el2889 = chip("Beckhoff_EL2xxx.xml", "EL2889");
    assert_eq!((el2889.esc_type, el2889.dc_system_time), (0x12, true));
    // EL1252: DC time stamps (DC op modes) → ET1200 with the DC system-time unit.
    let el1252 = chip("Beckhoff_EL1xxx.xml", "EL1252");
    assert_eq!((el1252.esc_type, el1252.dc_system_time), (0x12, true));
    // EL2258: 384 bytes of outputs do not fit the ET1200's RAM three times over.
    assert_eq!(chip("Beckhoff_EL2xxx.xml", "EL2258").esc_type, 0x11);
}

/// The shared ESI files beside the clone, else the repository's subset.
fn all_esi_dirs() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    ["../shared/testdata/esi", "../../shared/testdata/esi"]
        .iter()
        .map(|d| repo.join(d))
        .find(|d| d.is_dir())
        .unwrap_or_else(esi_dir)
}

#[test]
fn every_esi_device_builds_and_its_dictionary_agrees_with_its_sii() {
    let lib = ecat_config::DeviceLibrary::new([all_esi_dirs()]);
    let (mut built, mut passive, mut coe) = (0, 0, 0);
    for d in lib.devices().unwrap() {
        let t = Template::new(&d).unwrap_or_else(|e| panic!("{}: {e}", d.label()));
        if t.passive {
            passive += 1;
            continue;
        }
        let mut esc = t.build(1, None, None).unwrap();
        for ms in 0..3 {
            esc.end_of_frame(ms * 1_000_000);
        }
        built += 1;
        let Some(od) = esc.od() else { continue };
        coe += 1;
        if t.sii_pdos == ecat_config::PdoContent::None {
            continue; // the EEPROM had no room for PDOs: CoE alone describes them
        }
        // The PDO assignment in the dictionary gives every process-data SM the size the
        // SII's default PDOs give it, so a MainDevice reading either agrees with the
        // PREOP→SAFEOP check.
        for (n, sm) in esc.info().sms.iter().enumerate() {
            if let Some(bits) = ecat_sim::coe::pdo::sm_bits(od, n as u8) {
                assert_eq!(bits, sm.pdo_bits, "{} SM{n}", d.label());
            }
        }
    }
    println!("{built} ESI devices built ({coe} with CoE), {passive} passive terminals");
    assert!(built > 100);
}
