//! ESI files as vendors write them: each deviation from ETG.2000 that vendors' tools accept
//! is read, with a warning naming `file:line:column` and what was assumed (one small fixture
//! per quirk in `tests/fixtures/esi_quirks/`); forms that are valid ETG.2000 but unusual read
//! without a warning; a device whose description is broken is left out with its reason while
//! the other devices of its file load, in the file and through the library.

use ecat_config::esi::{FmmuKind, PdoDir, PortKind, SmKind};
use ecat_config::{DeviceLibrary, EsiFile};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/esi_quirks")
        .join(name)
}

/// The fixture parsed (it must parse), its warnings printed for the log.
fn load(name: &str) -> EsiFile {
    let bytes = std::fs::read(fixture(name)).unwrap();
    let f = EsiFile::parse_bytes(&bytes, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    for w in &f.warnings {
        println!("{w}");
    }
    f
}

/// Assert a warning at `line` (any column) whose text contains every one of `needles`, and
/// that it names the file and position in front.
fn warned(f: &EsiFile, file: &str, line: u32, needles: &[&str]) {
    let hit = f
        .warnings
        .iter()
        .find(|w| w.line == line && needles.iter().all(|n| w.message.contains(n)));
    let w = hit.unwrap_or_else(|| {
        panic!(
            "no warning at line {line} with {needles:?}: {:#?}",
            f.warnings
        )
    });
    assert!(
        w.to_string()
            .starts_with(&format!("{file}:{line}:{}: ", w.column)),
        "{w}"
    );
}

fn entry_bits(f: &EsiFile) -> Vec<(u16, u8, u16)> {
    f.devices[0]
        .pdos
        .iter()
        .flat_map(|p| &p.entries)
        .map(|e| (e.index, e.subindex, e.bit_len))
        .collect()
}

#[test]
fn hex_with_0x_after_hash_x() {
    let f = load("hex_0x_after_hash.xml");
    let d = &f.devices[0];
    assert_eq!(d.product_code, Some(0x1001));
    assert_eq!(d.pdos[0].index, 0x1A00);
    assert_eq!(d.pdos[0].entries[0].index, 0x6041);
    warned(
        &f,
        "hex_0x_after_hash.xml",
        7,
        &[
            "<Type ProductCode>",
            "\"#x0x00001001\"",
            "#x1001",
            "\"0x\" after \"#x\"",
        ],
    );
    // The entry's <Index> is the same kind as the PDO's: folded into it.
    warned(
        &f,
        "hex_0x_after_hash.xml",
        13,
        &["<Index>", "#x1a00", "(and 1 more like it)"],
    );
    assert_eq!(f.warnings.len(), 2);
}

#[test]
fn hex_with_blanks_after_hash_x() {
    let f = load("hex_blanks_after_hash.xml");
    assert_eq!(f.devices[0].pdos[0].index, 0x1600);
    assert_eq!(entry_bits(&f), vec![(0x6040, 0, 16)]);
    warned(
        &f,
        "hex_blanks_after_hash.xml",
        13,
        &["\"#x 1600\"", "#x1600", "blanks", "(and 1 more like it)"],
    );
    assert_eq!(
        f.warnings.len(),
        1,
        "the entry's <Index> folds into the PDO's"
    );
}

#[test]
fn hex_written_0x_instead_of_hash_x_folds_per_element() {
    let f = load("hex_0x_prefix.xml");
    let d = &f.devices[0];
    let starts: Vec<_> = d.sms.iter().map(|s| s.start).collect();
    assert_eq!(starts, [0x1000, 0x1080, 0x1100, 0x1180]);
    assert_eq!(entry_bits(&f), vec![(0x6040, 0, 16)]);
    // Four StartAddresses: one warning counting the others; the two <Index> one more.
    warned(
        &f,
        "hex_0x_prefix.xml",
        9,
        &[
            "<Sm StartAddress>: read \"0x1000\" as hex (ETG.2000 writes #x)",
            "(and 3 more like it)",
        ],
    );
    warned(
        &f,
        "hex_0x_prefix.xml",
        13,
        &["<Index>: read \"0x1600\" as hex", "(and 1 more like it)"],
    );
    assert_eq!(f.warnings.len(), 2);
}

#[test]
fn decimal_with_sign_fraction_or_unit() {
    let f = load("decimal_forms.xml");
    // "002" is plain decimal (leading zeros are ETG): no warning for it.
    assert_eq!(entry_bits(&f), vec![(0x6000, 1, 16), (0x6000, 2, 32)]);
    warned(
        &f,
        "decimal_forms.xml",
        14,
        &["<SubIndex>", "\"+1\"", "\"+\" sign"],
    );
    warned(
        &f,
        "decimal_forms.xml",
        14,
        &["<BitLen>", "\"16.0\" as 16", "zero fraction"],
    );
    warned(
        &f,
        "decimal_forms.xml",
        15,
        &["<BitLen>", "\"32 bit\" as 32", "text after the number"],
    );
    assert_eq!(f.warnings.len(), 3);
}

#[test]
fn empty_values_take_their_default() {
    let f = load("empty_values.xml");
    let d = &f.devices[0];
    assert_eq!(d.revision, 0);
    assert_eq!(d.sms[0].default_size, None);
    assert_eq!(entry_bits(&f), vec![(0x7000, 0, 8)]);
    warned(
        &f,
        "empty_values.xml",
        7,
        &["<Type RevisionNo> is empty", "absent"],
    );
    warned(&f, "empty_values.xml", 9, &["<Sm DefaultSize> is empty"]);
    warned(&f, "empty_values.xml", 14, &["<SubIndex> is empty"]);
}

#[test]
fn booleans_in_other_spellings_warn_once_per_spelling() {
    let f = load("booleans.xml");
    let d = &f.devices[0];
    assert!(d.sms.iter().all(|s| s.enable));
    assert!(d.pdos[0].fixed && d.pdos[0].mandatory);
    // Three `Enable="True"`: one warning that counts the others.
    warned(
        &f,
        "booleans.xml",
        9,
        &["<Sm Enable=\"True\">: read as true", "(and 2 more like it)"],
    );
    warned(
        &f,
        "booleans.xml",
        13,
        &["<RxPdo Fixed=\"yes\">: read as true"],
    );
    assert_eq!(
        f.warnings.len(),
        2,
        "1, 0, true and false are ETG: no warning"
    );
}

#[test]
fn data_type_names_in_other_case_spacing_or_igh_names() {
    let f = load("datatype_names.xml");
    let types: Vec<_> = f.devices[0].pdos[0]
        .entries
        .iter()
        .map(|e| e.data_type.clone().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "UINT",
            "STRING(10)",
            "ARRAY [0..3] OF BYTE",
            "UINT",
            "BIT2",
            "DT6000EN08"
        ]
    );
    let codes: Vec<_> = f.devices[0].pdos[0]
        .entries
        .iter()
        .map(|e| e.data_type_code())
        .collect();
    assert_eq!(codes, [0x0006, 0x0009, 0x000A, 0x0006, 0x0031, 0]);
    warned(
        &f,
        "datatype_names.xml",
        14,
        &["<DataType>uint</DataType>: read as UINT"],
    );
    warned(&f, "datatype_names.xml", 17, &["UINT16", "read as UINT"]);
    assert_eq!(
        f.warnings.len(),
        4,
        "\" BIT2 \" trims silently; a record type name is kept as written"
    );
}

#[test]
fn entry_without_bitlen_takes_its_data_type_size() {
    let f = load("entry_without_bitlen.xml");
    assert_eq!(entry_bits(&f), vec![(0x6000, 1, 32), (0x6000, 2, 3)]);
    assert_eq!(f.devices[0].default_sm_bytes(3), Some(5));
    warned(
        &f,
        "entry_without_bitlen.xml",
        14,
        &["without <BitLen>", "read as 32", "DINT"],
    );
    warned(&f, "entry_without_bitlen.xml", 15, &["read as 3", "BIT3"]);
}

#[test]
fn bitlen_without_data_type_and_padding_at_hash_x0_need_no_warning() {
    let f = load("bitlen_without_datatype.xml");
    let e = &f.devices[0].pdos[0].entries;
    assert_eq!((e[0].data_type.as_deref(), e[0].bit_len), (None, 1));
    assert!(e[1].is_gap() && e[1].bit_len == 15);
    assert_eq!(f.devices[0].default_sm_bytes(3), Some(2));
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
}

#[test]
fn sync_managers_without_use_text_take_it_from_the_control_byte() {
    let f = load("sm_without_use.xml");
    let kinds: Vec<_> = f.devices[0].sms.iter().map(|s| s.kind.clone()).collect();
    assert_eq!(
        kinds,
        [
            SmKind::MBoxOut,
            SmKind::MBoxIn,
            SmKind::Outputs,
            SmKind::Inputs,
            SmKind::Other(String::new())
        ]
    );
    assert_eq!(
        f.devices[0].mailbox_layout(),
        Some((0x1000, 128, 0x1080, 128))
    );
    warned(
        &f,
        "sm_without_use.xml",
        9,
        &["<Sm> without its use: read as MBoxOut from ControlByte #x26"],
    );
    assert_eq!(
        f.warnings.len(),
        4,
        "the disabled SM stays unused without a warning"
    );
}

#[test]
fn igh_ethercat_info_list_reads_every_device() {
    let f = load("ethercat_info_list.xml");
    let types: Vec<_> = f
        .devices
        .iter()
        .map(|d| (d.type_name.as_str(), d.vendor_id))
        .collect();
    assert_eq!(types, [("EK1100", 2), ("EL2008", 2)]);
    assert_eq!(f.vendor.id, 2);
    assert_eq!(
        f.device("EL2008", None).unwrap().default_sm_bytes(0),
        Some(1)
    );
    warned(
        &f,
        "ethercat_info_list.xml",
        2,
        &["<EtherCATInfoList>", "2 ESI files"],
    );
}

#[test]
fn sync_managers_without_start_address_or_control_byte() {
    let f = load("sm_without_start.xml");
    let sms: Vec<_> = f.devices[0]
        .sms
        .iter()
        .map(|s| (s.start, s.control))
        .collect();
    // Mailboxes from 0x1000 on (128 bytes each), outputs after them; the written one stays.
    assert_eq!(
        sms,
        [
            (0x1000, 0x26),
            (0x1080, 0x22),
            (0x1100, 0x64),
            (0x1180, 0x20)
        ]
    );
    warned(
        &f,
        "sm_without_start.xml",
        10,
        &["<Sm>MBoxIn</Sm> without ControlByte: read as #x22"],
    );
    warned(
        &f,
        "sm_without_start.xml",
        11,
        &["(Outputs) without StartAddress: read as #x1100"],
    );
    assert_eq!(f.warnings.len(), 4);
}

#[test]
fn sync_manager_fmmu_and_port_uses_in_other_case() {
    let f = load("use_case.xml");
    let d = &f.devices[0];
    assert_eq!(
        d.fmmus.iter().map(|m| m.kind.clone()).collect::<Vec<_>>(),
        [FmmuKind::Outputs, FmmuKind::Inputs, FmmuKind::MBoxState]
    );
    assert_eq!(d.sm_of(&SmKind::MBoxIn).map(|s| s.0), Some(1));
    assert_eq!(d.sm_of(&SmKind::Outputs).map(|s| s.0), Some(2));
    assert_eq!(d.esc.ports, [PortKind::Mii, PortKind::Ebus]);
    warned(&f, "use_case.xml", 9, &["<Type>mii</Type>: read as MII"]);
    warned(&f, "use_case.xml", 14, &["<Sm>mboxin</Sm>: read as MBoxIn"]);
    assert_eq!(f.warnings.len(), 8);
}

#[test]
fn a_pdo_written_twice_identical_counts_once() {
    let f = load("duplicate_pdo.xml");
    assert_eq!(f.devices[0].tx_pdos().count(), 1);
    assert_eq!(f.devices[0].pdos[0].dir, PdoDir::Tx);
    assert_eq!(f.devices[0].default_sm_bytes(3), Some(2));
    warned(
        &f,
        "duplicate_pdo.xml",
        16,
        &["<TxPdo> #x1a00 is written twice, identical; read once"],
    );
}

#[test]
fn windows_1252_declared_reads_its_characters() {
    let f = load("windows1252.xml");
    assert_eq!(f.devices[0].name(1033), "Z\u{e4}hler 5\u{20ac}");
    assert!(f.warnings.is_empty(), "declared: {:?}", f.warnings);
}

#[test]
fn not_utf8_although_declared_reads_as_windows_1252() {
    let f = load("not_utf8.xml");
    assert_eq!(f.devices[0].name(1033), "Z\u{e4}hler \u{b5}s");
    warned(
        &f,
        "not_utf8.xml",
        1,
        &["not UTF-8", "\"utf-8\"", "Windows-1252"],
    );
}

#[test]
fn utf16_with_byte_order_mark() {
    let f = load("utf16.xml");
    assert_eq!(f.devices[0].name(1033), "Z\u{e4}hler");
    assert!(f.warnings.is_empty());
}

#[test]
fn comment_before_the_xml_declaration() {
    let f = load("comment_before_declaration.xml");
    assert_eq!(f.devices.len(), 1);
    warned(
        &f,
        "comment_before_declaration.xml",
        4,
        &["XML declaration must open the file"],
    );
}

#[test]
fn vendor_elements_attributes_namespaces_and_doctype_are_ignored() {
    let f = load("vendor_extensions.xml");
    assert_eq!(f.devices.len(), 1);
    assert_eq!(f.devices[0].sms.len(), 4);
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
}

#[test]
fn comments_and_cdata_inside_values() {
    let f = load("comments_cdata.xml");
    let p = &f.devices[0].pdos[0];
    assert_eq!((p.index, p.name.as_str()), (0x1A00, "Status & <more>"));
    assert_eq!(entry_bits(&f), vec![(0x6041, 0, 16)]);
    assert_eq!(p.entries[0].data_type.as_deref(), Some("UINT"));
    assert!(f.warnings.is_empty());
}

#[test]
fn an_unreadable_default_value_is_left_out() {
    let f = load("bad_default.xml");
    let o = f.devices[0]
        .dictionary
        .as_ref()
        .unwrap()
        .object(0x2000)
        .unwrap();
    assert_eq!((o.default.as_ref(), o.min, o.max), (None, None, Some(1000)));
    warned(
        &f,
        "bad_default.xml",
        13,
        &["<DefaultData>", "\"12G4\"", "the value is left out"],
    );
    warned(&f, "bad_default.xml", 13, &["<MinValue>", "\"low\""]);
}

#[test]
fn unreadable_eeprom_config_data_is_left_out_and_the_sii_gets_defaults() {
    let f = load("bad_config_data.xml");
    let e = f.devices[0].eeprom.as_ref().unwrap();
    assert_eq!((e.byte_size, e.config_data.len()), (Some(2048), 0));
    assert_eq!(
        e.bootstrap.as_deref(),
        Some(&[0, 0x10, 0x80, 0, 0x80, 0x10, 0x80, 0][..])
    );
    let sii = ecat_config::build_sii(&f.devices[0]).unwrap();
    assert!(sii.len() >= 128);
    warned(
        &f,
        "bad_config_data.xml",
        16,
        &["<ConfigData>", "\"#x0801\"", "the value is left out"],
    );
    assert_eq!(f.warnings.len(), 1);
}

#[test]
fn a_broken_device_is_left_out_and_the_others_load() {
    let f = load("one_broken_device.xml");
    let types: Vec<_> = f.devices.iter().map(|d| d.type_name.as_str()).collect();
    assert_eq!(types, ["QD-IN", "QD-COUPLER"]);
    let b = &f.broken[0];
    assert_eq!(
        (b.type_name.as_str(), b.product_code, b.revision),
        ("QD-OUT", Some(0x1002), Some(1))
    );
    let msg = f.device("QD-OUT", None).unwrap_err().to_string();
    assert_eq!(
        msg,
        "one_broken_device.xml:25:61: <BitLen>: expected a number (#x hex or decimal), found \"sixteen\"; \
         device QD-OUT rev 0x00000001 is left out until this is corrected (the file's other devices load)"
    );
    assert_eq!(
        f.device_by_product(0x1002, None).unwrap_err().to_string(),
        msg
    );
    assert_eq!(
        f.device_by_product(0x1001, None).unwrap().type_name,
        "QD-IN"
    );
    assert_eq!(f.warnings.len(), 1);
    assert_eq!(f.warnings[0].to_string(), msg);
}

#[test]
fn library_finds_good_types_beside_broken_ones_and_unreadable_files() {
    let dir = std::env::temp_dir().join(format!("ecat-esi-quirks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("one_broken_device.xml"), dir.join("a.xml")).unwrap();
    std::fs::write(
        dir.join("b.xml"),
        "<EtherCATInfo><Vendor><Id>1</Id></Vendor><Descr",
    )
    .unwrap();
    let lib = DeviceLibrary::new([&dir]);
    let got = lib.find_type("QD-IN", None);
    let broken = lib.find_type("QD-OUT", None).unwrap_err().to_string();
    let by_code = lib
        .find_product(Some(0x999), 0x1002, None)
        .unwrap_err()
        .to_string();
    let none = lib.find_type("QD-NONE", None).unwrap_err().to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(got.unwrap().product_code, Some(0x1001));
    assert!(broken.ends_with("a.xml:25:61: <BitLen>: expected a number (#x hex or decimal), found \"sixteen\"; device QD-OUT rev 0x00000001 is left out until this is corrected (the file's other devices load)"), "{broken}");
    assert_eq!(by_code, broken);
    assert!(
        none.starts_with("no ESI file describes type QD-NONE"),
        "{none}"
    );
}

#[test]
fn warnings_of_files_read_from_disk_reach_the_handler_once() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let s = seen.clone();
    ecat_config::set_warning_handler(Some(Box::new(move |w| {
        s.lock().unwrap().push(w.to_string())
    })));
    let path = fixture("hex_blanks_after_hash.xml");
    EsiFile::from_path(&path).unwrap();
    EsiFile::from_path(&path).unwrap();
    ecat_config::set_warning_handler(None);
    let name = path.display().to_string();
    let mine: Vec<_> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|w| w.starts_with(&name))
        .cloned()
        .collect();
    assert_eq!(mine.len(), 1, "one (folded) warning, once: {mine:?}");
    assert!(mine[0].starts_with(&format!("{name}:13:")), "{mine:?}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 300, ..Default::default() })]

    /// The lenient readings and the left-out devices never panic, whatever the bytes.
    #[test]
    fn mutated_quirky_files_never_panic(
        file in 0usize..4,
        edits in proptest::collection::vec((0usize..4000, proptest::prelude::any::<u8>()), 1..8),
    ) {
        let name = ["one_broken_device.xml", "sm_without_start.xml", "datatype_names.xml", "bad_default.xml"][file];
        let mut bytes = std::fs::read(fixture(name)).unwrap();
        for (pos, b) in edits {
            let n = bytes.len();
            bytes[pos % n] = b;
        }
        if let Ok(f) = EsiFile::parse_bytes(&bytes, "mut.xml") {
            for d in &f.devices {
                let _ = ecat_config::build_sii(d);
            }
            for w in &f.warnings {
                proptest::prop_assert!(w.to_string().starts_with("mut.xml:"));
            }
        }
    }
}
