//! Unit tests for the SII codecs: byte-level fixed area, real EEPROM dumps, garbage, and
//! builder ↔ parser round trips.

use super::*;
use proptest::prelude::*;
use std::vec::Vec;

const EK1100: &[u8] = include_bytes!("../../../../testdata/sii/ek1100-eeprom-dump.bin");
const EL2004: &[u8] = include_bytes!("../../../../testdata/sii/el2004-eeprom-dump.bin");
const EL2828: &[u8] = include_bytes!("../../../../testdata/sii/el2828.bin");
const EL2889: &[u8] = include_bytes!("../../../../testdata/sii/el2889.bin");

#[test]
fn crc8_check_value() {
    assert_eq!(crc8(b"123456789"), 0xFB);
    assert_eq!(crc8(&[]), 0xFF);
}

#[test]
fn real_dumps_have_valid_crc() {
    for img in [EK1100, EL2004, EL2828, EL2889] {
        let c = CrcCheck::of(img).unwrap();
        assert!(c.ok(), "{c:?}");
        FixedAreaRepr::parse(img).unwrap();
    }
    assert_eq!(CrcCheck::of(EK1100).unwrap().computed, 0x46);
}

#[test]
fn bad_crc_is_reported_not_accepted() {
    let mut img = [0u8; 2048];
    img.copy_from_slice(EK1100);
    img[8] ^= 0x01; // a byte covered by the CRC
    assert_eq!(FixedAreaRepr::parse(&img).unwrap_err(), Error::Checksum);
    let (repr, crc) = FixedAreaRepr::parse_any(&img).unwrap();
    assert!(!crc.ok());
    assert_eq!(crc.stored, 0x46);
    assert_eq!(repr.vendor_id, 2, "identity still readable with a bad CRC");
    assert_eq!(Sii::new(&img[..]).unwrap().fixed(), Err(Error::Checksum));
    assert!(!Sii::new(&img[..]).unwrap().crc().ok());
}

#[test]
fn ek1100_fixed_area() {
    let f = FixedAreaRepr::parse(EK1100).unwrap();
    assert_eq!(f.pdi_control, 0x0D00);
    assert_eq!(f.vendor_id, 0x0000_0002);
    assert_eq!(f.product_code, 0x044C_2C52);
    assert_eq!(f.revision, 0x0012_0000);
    assert!(!f.has_mailbox());
    assert_eq!(f.mailbox_protocols, MailboxProtocols::NONE);
    assert_eq!(f.eeprom_size, 0x000F);
    assert_eq!(f.eeprom_bytes(), 2048);
    assert_eq!(f.version, 1);
}

#[test]
fn ek1100_categories_and_strings() {
    let sii = Sii::new(EK1100).unwrap();
    let kinds: Vec<_> = sii.categories().map(|c| c.unwrap().kind).collect();
    assert_eq!(kinds, [CategoryType::Strings, CategoryType::General]);
    let s = sii.strings().unwrap();
    assert_eq!(s.count(), 4);
    let g = sii.general().unwrap().unwrap();
    assert_eq!(s.get_str(g.order_index), Some("EK1100"));
    assert_eq!(s.get_str(g.group_index), Some("SystemBk"));
    assert_eq!(
        s.get_str(g.name_index),
        Some("EK1100 EtherCAT-Koppler (2A E-Bus)")
    );
    assert_eq!(s.get_str(g.group_index2), Some("System Koppler"));
    assert_eq!(s.get(0), Some(&b""[..]));
    assert_eq!(s.get(5), None);
    assert_eq!(g.ebus_current_ma, -2000);
    assert_eq!(g.physical_ports, 0x0131);
    assert_eq!(
        [g.port(0), g.port(1), g.port(2), g.port(3)],
        [SiiPort::Mii, SiiPort::Ebus, SiiPort::Mii, SiiPort::Unused]
    );
    assert!(!g.coe_details.has(CoeDetails::SDO));
    assert_eq!(sii.pdos(CategoryType::RxPdo).count(), 0);
    assert_eq!(sii.sync_managers().unwrap().count(), 0);
}

#[test]
fn el2004_outputs() {
    let sii = Sii::new(EL2004).unwrap();
    let f = sii.fixed().unwrap();
    assert_eq!((f.vendor_id, f.product_code), (2, 0x07D4_3052));
    assert_eq!(f.pdi_control, 0x0104);
    let s = sii.strings().unwrap();
    let g = sii.general().unwrap().unwrap();
    assert_eq!(s.get_str(g.order_index), Some("EL2004"));
    assert_eq!(
        s.get_str(g.name_index),
        Some("EL2004 4K. Dig. Ausgang 24V, 0.5A")
    );
    assert_eq!(g.ebus_current_ma, 100);
    assert_eq!(g.port(0), SiiPort::Ebus);
    let fmmus: Vec<_> = sii.fmmus().unwrap().collect();
    assert_eq!(fmmus, [FmmuUsage::Outputs, FmmuUsage::Unused]);
    let sms: Vec<_> = sii.sync_managers().unwrap().collect();
    assert_eq!(sms.len(), 1);
    assert_eq!(sms[0].start, 0x0F00);
    assert_eq!(sms[0].control, 0x44);
    assert_eq!(sms[0].kind, SyncManagerType::Outputs);
    assert!(sms[0].enabled());
    let pdos: Vec<_> = sii.pdos(CategoryType::RxPdo).map(|p| p.unwrap()).collect();
    assert_eq!(pdos.len(), 4);
    for (i, p) in pdos.iter().enumerate() {
        assert_eq!(p.repr.index, 0x1600 + i as u16);
        assert_eq!(p.repr.sync_manager, 0);
        assert_eq!(p.entry_count(), 1);
        let e = p.entries().next().unwrap();
        assert_eq!((e.index, e.subindex), (0x7000 + 0x10 * i as u16, 1));
        assert_eq!((e.data_type, e.bit_len), (0x01, 1)); // BOOLEAN, 1 bit
        assert_eq!(s.get_str(e.name_index), Some("Output"));
    }
    assert_eq!(s.get_str(pdos[0].repr.name_index), Some("Channel 1"));
    assert_eq!(sii.pdos(CategoryType::TxPdo).count(), 0);
}

#[test]
fn el2828_device_specific_category_first() {
    let sii = Sii::new(EL2828).unwrap();
    let kinds: Vec<_> = sii.categories().map(|c| c.unwrap().kind).collect();
    assert_eq!(kinds[0], CategoryType::Other(3));
    assert!(kinds.contains(&CategoryType::SyncUnit));
    let s = sii.strings().unwrap();
    let g = sii.general().unwrap().unwrap();
    assert_eq!(s.get_str(g.order_index), Some("EL2828"));
    assert_eq!(
        s.get_str(g.name_index),
        Some("EL2828 8K. Dig. Ausgang 24V, 2A")
    );
    let pdos: Vec<_> = sii.pdos(CategoryType::RxPdo).map(|p| p.unwrap()).collect();
    assert_eq!(pdos.len(), 8);
    assert_eq!(pdos.iter().map(|p| p.bit_len()).sum::<u32>(), 8);
    assert!(pdos.iter().all(|p| p.repr.sync_manager == 0));
    let sm: Vec<_> = sii.sync_managers().unwrap().collect();
    assert_eq!((sm.len(), sm[0].start, sm[0].length), (1, 0x0F00, 1));
}

#[test]
fn el2889_sixteen_output_bits_on_two_sms() {
    let sii = Sii::new(EL2889).unwrap();
    let f = sii.fixed().unwrap();
    assert_eq!(f.product_code, 0x0B49_3052);
    let s = sii.strings().unwrap();
    let g = sii.general().unwrap().unwrap();
    assert_eq!(s.get_str(g.order_index), Some("EL2889"));
    assert_eq!(s.get_str(21), Some("Channel 16"));
    let sms: Vec<_> = sii.sync_managers().unwrap().collect();
    assert_eq!(sms.len(), 2);
    assert_eq!((sms[0].start, sms[1].start), (0x0F00, 0x0F01));
    assert!(sms.iter().all(|m| m.kind == SyncManagerType::Outputs));
    let pdos: Vec<_> = sii.pdos(CategoryType::RxPdo).map(|p| p.unwrap()).collect();
    assert_eq!(pdos.len(), 16);
    let bits = |sm| {
        pdos.iter()
            .filter(|p| p.repr.sync_manager == sm)
            .map(|p| p.bit_len())
            .sum::<u32>()
    };
    assert_eq!((bits(0), bits(1)), (8, 8));
    let last = pdos[15].entries().next().unwrap();
    assert_eq!((last.index, last.subindex), (0x70F0, 1));
}

#[test]
fn fixed_area_emit_bytes() {
    let f = FixedAreaRepr::parse(EK1100).unwrap();
    let mut out = [0xA5u8; 130];
    f.emit(&mut out).unwrap();
    // EK1100 has data in reserved words 0x20.. which we do not keep; compare what we do.
    assert_eq!(&out[..0x40], &EK1100[..0x40]);
    assert_eq!(&out[0x7C..0x80], &EK1100[0x7C..0x80]);
    assert!(out[0x40..0x7C].iter().all(|&b| b == 0));
    assert_eq!(&out[128..], &[0xA5, 0xA5], "nothing written past 128 bytes");
    assert_eq!(f.emit(&mut [0u8; 127]), Err(Error::NoSpace));
    assert_eq!(FixedAreaRepr::eeprom_size_for(2048), 0x000F);
    assert_eq!(FixedAreaRepr::eeprom_size_for(1), 0);
}

#[test]
fn mailbox_protocol_names() {
    let p = MailboxProtocols::COE | MailboxProtocols::FOE;
    assert!(p.contains(MailboxProtocols::COE));
    assert!(!p.contains(MailboxProtocols::EOE));
    assert_eq!(p.names().collect::<Vec<_>>(), ["CoE", "FoE"]);
}

#[test]
fn category_list_errors_are_reported() {
    let mut img = [0u8; 0x90];
    // A category claiming 100 words in a 12-byte tail.
    img[0x80..0x84].copy_from_slice(&[0x0A, 0x00, 0x64, 0x00]);
    let v: Vec<_> = Categories::new(&img).collect();
    assert_eq!(v, [Err(Error::BadLength)]);
    // No END marker: the list runs off the image.
    img[0x82] = 0x04; // 4 words: 0x84..0x8C, then 4 bytes of zero = NOP size 0, then end.
    let v: Vec<_> = Categories::new(&img).collect();
    assert_eq!(v.len(), 3);
    assert_eq!(v[2], Err(Error::Truncated));
    // Image shorter than the fixed area.
    assert_eq!(
        Categories::new(&[0u8; 10]).collect::<Vec<_>>(),
        [Err(Error::Truncated)]
    );
    assert_eq!(Sii::new(&[0u8; 10]).unwrap_err(), Error::Truncated);
    assert_eq!(find_category(&img, CategoryType::Dc), Err(Error::Truncated));
}

#[test]
fn category_parsers_refuse_garbage() {
    assert_eq!(
        SyncManagers::new_checked(&[0; 7]).unwrap_err(),
        Error::BadLength
    );
    assert_eq!(
        DcModes::new_checked(&[0; 25]).unwrap_err(),
        Error::BadLength
    );
    assert_eq!(GeneralRepr::parse(&[]), Err(Error::Truncated));
    // A short GENERAL reads as zero-padded.
    assert_eq!(GeneralRepr::parse(&[1, 2, 3, 4]).unwrap().name_index, 4);
    // PDO header announcing 3 entries with only one present.
    let mut p = [0u8; 16];
    p[2] = 3;
    let v: Vec<_> = Pdos::new(&p).collect();
    assert_eq!(v, [Err(Error::Truncated)]);
    assert_eq!(
        Pdos::new(&[0; 5]).collect::<Vec<_>>(),
        [Err(Error::Truncated)]
    );
    // Strings: count larger than the data.
    let s = Strings::new(&[3, 2, b'a', b'b', 9, b'x']);
    assert_eq!(s.get(1), Some(&b"ab"[..]));
    assert_eq!(s.get(2), None);
    assert_eq!(s.iter().count(), 1);
    assert_eq!(Strings::new(&[]).get(1), None);
    assert_eq!(Strings::new(&[1, 1, 0xFF]).get_str(1), None, "not UTF-8");
}

#[test]
fn writer_bytes() {
    let mut buf = [0xA5u8; 200];
    let mut w = SiiWriter::new(&mut buf, &FixedAreaRepr::default()).unwrap();
    w.strings(&["AB", "C"]).unwrap();
    w.fmmus(&[FmmuUsage::Outputs]).unwrap();
    let n = w.finish();
    assert_eq!(
        &buf[0x80..n + 1],
        &[
            0x0A, 0x00, 0x03, 0x00, 2, 2, b'A', b'B', 1, b'C', // STRINGS, 3 words
            0x28, 0x00, 0x01, 0x00, 0x01, 0x00, // FMMU, 1 word, padded with 0
            0xFF, 0xFF, // END
            0xA5
        ]
    );
    assert_eq!(buf[14], crc8(&[0; 14]));

    // Beckhoff-style: the pad byte left erased.
    let mut buf = [0xA5u8; 200];
    let mut w = SiiWriter::new(&mut buf, &FixedAreaRepr::default())
        .unwrap()
        .with_padding(0xFF);
    w.strings(&["AB"]).unwrap();
    w.raw(CategoryType::SyncUnit, &[0xF0]).unwrap();
    let n = w.finish();
    assert_eq!(
        &buf[0x80..n],
        &[
            0x0A, 0x00, 0x02, 0x00, 1, 2, b'A', b'B', // STRINGS, 2 words, even: no pad
            0x2B, 0x00, 0x01, 0x00, 0xF0, 0xFF, // SYNCUNIT, 1 word, padded with 0xFF
            0xFF, 0xFF, // END
        ]
    );
}

#[test]
fn writer_refuses_what_does_not_fit() {
    let mut buf = [0u8; 140];
    let mut w = SiiWriter::new(&mut buf, &FixedAreaRepr::default()).unwrap();
    assert_eq!(w.general(&GeneralRepr::default()), Err(Error::NoSpace));
    assert_eq!(w.raw(CategoryType::End, &[]), Err(Error::BadValue));
    assert_eq!(w.pdos(CategoryType::Dc, &[]), Err(Error::BadValue));
    let long = [0u8; 256];
    assert_eq!(w.strings(&[&long[..]]), Err(Error::BadLength));
    w.raw(CategoryType::Nop, &[1, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(w.len(), 138);
    assert_eq!(w.finish(), 140);
    assert!(SiiWriter::new(&mut [0u8; 129], &FixedAreaRepr::default()).is_err());
}

fn arb_fixed() -> impl Strategy<Value = FixedAreaRepr> {
    (
        any::<[u16; 5]>(),
        any::<[u32; 4]>(),
        any::<[u16; 8]>(),
        any::<[u16; 3]>(),
    )
        .prop_map(|(a, b, c, d)| FixedAreaRepr {
            pdi_control: a[0],
            pdi_config: a[1],
            sync_impulse_len: a[2],
            ext_pdi_config: a[3],
            station_alias: a[4],
            vendor_id: b[0],
            product_code: b[1],
            revision: b[2],
            serial: b[3],
            boot_rx_mailbox_offset: c[0],
            boot_rx_mailbox_size: c[1],
            boot_tx_mailbox_offset: c[2],
            boot_tx_mailbox_size: c[3],
            std_rx_mailbox_offset: c[4],
            std_rx_mailbox_size: c[5],
            std_tx_mailbox_offset: c[6],
            std_tx_mailbox_size: c[7],
            mailbox_protocols: MailboxProtocols(d[0]),
            eeprom_size: d[1],
            version: d[2],
        })
}

fn arb_general() -> impl Strategy<Value = GeneralRepr> {
    (any::<[u8; 32]>()).prop_map(|b| GeneralRepr::parse(&b).unwrap())
}

fn arb_sm() -> impl Strategy<Value = SyncManagerRepr> {
    any::<[u8; 8]>().prop_map(|b| SyncManagerRepr::parse(&b).unwrap())
}

fn arb_entry() -> impl Strategy<Value = PdoEntryRepr> {
    any::<[u8; 8]>().prop_map(|b| PdoEntryRepr::parse(&b).unwrap())
}

fn arb_pdo() -> impl Strategy<Value = (PdoRepr, Vec<PdoEntryRepr>)> {
    (
        any::<(u16, u8, u8, u8, u16)>(),
        proptest::collection::vec(arb_entry(), 0..6),
    )
        .prop_map(|((index, sync_manager, dc_sync, name_index, flags), e)| {
            (
                PdoRepr {
                    index,
                    sync_manager,
                    dc_sync,
                    name_index,
                    flags,
                },
                e,
            )
        })
}

fn arb_dc() -> impl Strategy<Value = DcRepr> {
    any::<[u8; 24]>().prop_map(|b| DcRepr::parse(&b).unwrap())
}

proptest! {
    #[test]
    fn builder_parser_round_trip(
        fixed in arb_fixed(),
        strings in proptest::collection::vec("[ -~]{0,40}", 0..20),
        general in arb_general(),
        fmmus in proptest::collection::vec(0u8..6, 0..5),
        sms in proptest::collection::vec(arb_sm(), 0..6),
        fmmu_ex in proptest::collection::vec(any::<[u8; 3]>(), 0..4),
        tx in proptest::collection::vec(arb_pdo(), 0..5),
        rx in proptest::collection::vec(arb_pdo(), 0..5),
        dc in proptest::collection::vec(arb_dc(), 0..3),
        raw in proptest::collection::vec(any::<u8>(), 0..9),
    ) {
        let mut buf = [0xA5u8; 4096];
        let mut w = SiiWriter::new(&mut buf, &fixed).unwrap();
        w.strings(&strings).unwrap();
        w.general(&general).unwrap();
        let fmmus: Vec<_> = fmmus.into_iter().map(FmmuUsage::from_u8).collect();
        w.fmmus(&fmmus).unwrap();
        w.sync_managers(&sms).unwrap();
        let fmmu_ex: Vec<_> = fmmu_ex.iter().map(|b| FmmuExRepr::parse(b).unwrap()).collect();
        w.fmmu_ex(&fmmu_ex).unwrap();
        let txr: Vec<_> = tx.iter().map(|(p, e)| (*p, &e[..])).collect();
        let rxr: Vec<_> = rx.iter().map(|(p, e)| (*p, &e[..])).collect();
        w.pdos(CategoryType::TxPdo, &txr).unwrap();
        w.pdos(CategoryType::RxPdo, &rxr).unwrap();
        w.dc(&dc).unwrap();
        w.raw(CategoryType::Other(0x0800), &raw).unwrap();
        let n = w.finish();
        prop_assert_eq!(n % 2, 0);

        let sii = Sii::new(&buf[..n]).unwrap();
        prop_assert_eq!(sii.fixed().unwrap(), fixed);
        let s = sii.strings().unwrap();
        prop_assert_eq!(s.count() as usize, strings.len());
        for (i, st) in strings.iter().enumerate() {
            prop_assert_eq!(s.get_str(i as u8 + 1), Some(st.as_str()));
        }
        prop_assert_eq!(sii.general().unwrap().unwrap(), general);
        let got: Vec<_> = sii.fmmus().unwrap().take(fmmus.len()).collect();
        prop_assert_eq!(got, fmmus);
        prop_assert_eq!(sii.sync_managers().unwrap().collect::<Vec<_>>(), sms);
        let got: Vec<_> = sii.fmmu_ex().unwrap().collect();
        prop_assert_eq!(got, fmmu_ex);
        for (kind, want) in [(CategoryType::TxPdo, &tx), (CategoryType::RxPdo, &rx)] {
            let got: Vec<_> = sii
                .pdos(kind)
                .map(|p| {
                    let p = p.unwrap();
                    (p.repr, p.entries().collect::<Vec<_>>())
                })
                .collect();
            prop_assert_eq!(&got, want);
        }
        prop_assert_eq!(sii.dc().unwrap().collect::<Vec<_>>(), dc);
        let other = sii.category(CategoryType::Other(0x0800)).unwrap().unwrap();
        prop_assert_eq!(&other[..raw.len()], &raw[..]);
        prop_assert!(sii.categories().all(|c| c.is_ok()));
    }

    #[test]
    fn parsers_never_panic(img in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = FixedAreaRepr::parse_any(&img);
        for c in Categories::new(&img).chain(Categories::starting_at(&img, 0)) {
            let Ok(c) = c else { continue };
            let _ = Strings::new(c.data).iter().count();
            let _ = GeneralRepr::parse(c.data);
            let _ = Fmmus::new(c.data).count();
            let _ = SyncManagers::new_checked(c.data).map(|s| s.count());
            let _ = FmmuExs::new(c.data).count();
            for p in Pdos::new(c.data).flatten() {
                let _ = p.entries().count();
            }
            let _ = DcModes::new_checked(c.data).map(|s| s.count());
        }
    }
}

#[test]
fn latin1_strings_round_trip_with_micro_sign() {
    let mut buf = [0xFFu8; 512];
    let fixed = FixedAreaRepr::default();
    let mut w = SiiWriter::new(&mut buf, &fixed).unwrap();
    w.strings_text(&["EL1018", "EL1018 8K. Dig. Eingang 24V, 10µs"])
        .unwrap();
    w.finish();
    let sii = Sii::new(&buf[..]).unwrap();
    let s = sii.strings().unwrap();
    let raw = s.get(2).unwrap();
    assert_eq!(raw.len(), 33, "'µ' takes one byte");
    assert_eq!(&raw[29..], b"10\xB5s");
    assert_eq!(s.get_str(2), None, "not UTF-8");
    assert_eq!(
        std::string::ToString::to_string(&s.text(2).unwrap()),
        "EL1018 8K. Dig. Eingang 24V, 10µs"
    );
}
