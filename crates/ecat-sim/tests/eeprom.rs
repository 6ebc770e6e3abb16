//! The SII EEPROM interface read the way a MainDevice reads it, for every catalogue device and
//! for the dumps of real devices in `testdata/sii/`.

mod common;

use common::Bus;
use ecat_sim::{devices, Network};
use ecat_wire::register::{self as reg, eeprom as ee};
use ecat_wire::sii::Sii;
use std::path::PathBuf;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/sii")
}

#[test]
fn every_catalogue_device_serves_its_sii() {
    let mut latin1_models = 0;
    for m in devices::catalogue() {
        let text = format!("[[subdevice]]\nmodel = \"{}\"\n", m.name);
        let mut bus = Bus::new(Network::from_toml_str(&text, "t", ".".as_ref()).unwrap());
        bus.assign_addresses();
        let image = bus.read_sii(0x1001, 2048);
        assert_eq!(image, bus.net.subdevice(0).unwrap().sii(), "{}", m.name);
        let sii = Sii::new(&image).unwrap();
        let fixed = sii.fixed().unwrap();
        let spec = match m.kind {
            devices::ModelKind::Esc { spec, .. } => spec,
            _ => unreachable!(),
        };
        assert_eq!(
            (
                fixed.vendor_id,
                fixed.product_code,
                fixed.revision,
                fixed.serial
            ),
            (spec.vendor, spec.product, spec.revision, 1)
        );
        let g = sii.general().unwrap().unwrap();
        let strings = sii.strings().unwrap();
        let text = |i| strings.text(i).unwrap().to_string();
        assert_eq!(text(g.order_index), m.name);
        assert_eq!(text(g.name_index), spec.name);
        if spec.name.contains('µ') {
            // SII strings are ISO 8859-1: 'µ' is the single byte 0xB5, as on real EEPROMs.
            let raw = strings.get(g.name_index).unwrap();
            assert_eq!(raw.len(), spec.name.chars().count(), "{}", m.name);
            assert!(raw.contains(&0xB5), "{}: {raw:02x?}", m.name);
            latin1_models += 1;
        }
    }
    assert!(latin1_models >= 1, "EL1018's name has 'µ'");
}

#[test]
fn real_dumps_load_and_read_back_identically() {
    let text = "[[subdevice]]\nsii = \"ek1100-eeprom-dump.bin\"\n\
                [[subdevice]]\nsii = \"el2004-eeprom-dump.bin\"\n\
                [[subdevice]]\nsii = \"el2828.bin\"\n\
                [[subdevice]]\nsii = \"el2889.bin\"\n";
    let net = Network::from_toml_str(text, "dumps.toml", &testdata()).unwrap();
    let expect = [
        (
            "EK1100",
            "EK1100 EtherCAT-Koppler (2A E-Bus)",
            0x044C_2C52,
            0x0012_0000,
        ),
        (
            "EL2004",
            "EL2004 4K. Dig. Ausgang 24V, 0.5A",
            0x07D4_3052,
            0x0010_0000,
        ),
        (
            "EL2828",
            "EL2828 8K. Dig. Ausgang 24V, 2A",
            0x0B0C_3052,
            0x0011_0000,
        ),
        (
            "EL2889",
            "EL2889 16K. Dig. Ausgang 24V, 0.5A, negativ",
            0x0B49_3052,
            0x0011_0000,
        ),
    ];
    let summary = net.summary();
    let mut bus = Bus::new(net);
    assert_eq!(bus.assign_addresses(), 4);
    for (i, (order, name, product, revision)) in expect.iter().enumerate() {
        let s = &summary[i];
        assert_eq!((s.order.as_str(), s.name.as_str()), (*order, *name));
        assert_eq!((s.vendor, s.product, s.revision), (2, *product, *revision));
        let file = std::fs::read(testdata().join(match i {
            0 => "ek1100-eeprom-dump.bin",
            1 => "el2004-eeprom-dump.bin",
            2 => "el2828.bin",
            _ => "el2889.bin",
        }))
        .unwrap();
        let station = 0x1001 + i as u16;
        assert_eq!(bus.read_sii(station, file.len()), file, "{order}");
    }
    // EK1100 SII word 0 = 0x0D00 → 0x0140/0x0141, device emulation.
    assert_eq!(bus.fprd16(0x1001, reg::PDI_CONTROL), 0x0D00);
}

#[test]
fn read_past_the_image_gives_ffff_and_both_read_sizes_work() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    bus.eeprom_idle(0x1001);
    bus.fpwr(
        0x1001,
        reg::EEPROM_CONTROL,
        &[0x00, 0x01, 0x00, 0x40, 0x00, 0x00],
    );
    bus.eeprom_idle(0x1001);
    assert_eq!(
        bus.fprd(0x1001, reg::EEPROM_DATA, 8).data,
        [0xFF; 8],
        "word 0x4000"
    );
    // 4-byte read interface (0x0502 bit 6 clear).
    let mut chip = ecat_sim::EscChip::et1200();
    chip.eeprom_read_8 = false;
    let img = bus.net.subdevice(1).unwrap().sii().to_vec();
    let info = ecat_sim::SiiInfo::parse(&img).unwrap();
    let esc = ecat_sim::Esc::new(chip, img.clone(), info);
    assert_eq!(esc.read_u16(reg::EEPROM_CONTROL) & ee::READ_8_BYTES, 0);
}

#[test]
fn busy_ignores_commands_and_errors_clear_with_idle() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    let st = bus.eeprom_idle(0x1002);
    assert_eq!(
        st,
        ee::READ_8_BYTES,
        "EK1100-like idle status 0x0040 as captured"
    );
    // Two datagrams in one frame: the second command arrives while the first is busy.
    let mut buf = [0u8; 1514];
    let mut fb = ecat_wire::FrameBuilder::new(&mut buf, common::MAC).unwrap();
    let (_, mut d) = fb
        .push_physical(ecat_wire::Command::Fpwr, 1, 0x1002, reg::EEPROM_CONTROL, 6)
        .unwrap();
    d.data_mut().copy_from_slice(&[0x00, 0x01, 0x08, 0, 0, 0]);
    let (_, mut d) = fb
        .push_physical(ecat_wire::Command::Fpwr, 2, 0x1002, reg::EEPROM_CONTROL, 6)
        .unwrap();
    d.data_mut().copy_from_slice(&[0x00, 0x01, 0x0A, 0, 0, 0]);
    fb.push_physical(ecat_wire::Command::Fprd, 3, 0x1002, reg::EEPROM_CONTROL, 2)
        .unwrap();
    let n = fb.finish();
    assert!(bus.net.process_frame(&mut buf[..n], bus.now));
    let f = ecat_wire::frame::parse_ethernet(&buf[..n]).unwrap();
    let polled = f.datagrams().nth(2).unwrap().unwrap();
    assert_eq!(
        polled.data(),
        [0x40, 0x81],
        "busy + read command, as captured (0x8140)"
    );
    bus.eeprom_idle(0x1002);
    // The second command was ignored: the data is words 8.. (vendor 2, product EL2008).
    assert_eq!(
        bus.fprd(0x1002, reg::EEPROM_DATA, 8).data,
        [0x02, 0, 0, 0, 0x52, 0x30, 0xD8, 0x07]
    );
    // Write without write enable → bit 14; command 000 clears it.
    bus.fpwr(0x1002, reg::EEPROM_CONTROL, &[0x00, 0x02, 0x04, 0, 0, 0]);
    let st = bus.eeprom_idle(0x1002);
    assert_ne!(st & ee::ERR_WRITE_ENABLE, 0);
    bus.fpwr(0x1002, reg::EEPROM_CONTROL, &[0, 0]);
    assert_eq!(bus.eeprom_idle(0x1002) & ee::ERR_MASK, 0);
    // Undefined command → bit 13.
    bus.fpwr(0x1002, reg::EEPROM_CONTROL, &[0x00, 0x03]);
    assert_ne!(bus.eeprom_idle(0x1002) & ee::ERR_ACK, 0);
}

#[test]
fn write_then_reload_updates_alias_and_checks_crc() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    let write = |bus: &mut Bus, word: u16, value: u16| {
        bus.eeprom_idle(0x1003);
        bus.fpwr(0x1003, reg::EEPROM_DATA, &value.to_le_bytes());
        let mut c = [0u8; 6];
        c[..2].copy_from_slice(&0x0201u16.to_le_bytes());
        c[2..4].copy_from_slice(&word.to_le_bytes());
        bus.fpwr(0x1003, reg::EEPROM_CONTROL, &c);
        assert_eq!(bus.eeprom_idle(0x1003) & ee::ERR_MASK, 0);
    };
    let reload = |bus: &mut Bus| {
        bus.eeprom_idle(0x1003);
        bus.fpwr(0x1003, reg::EEPROM_CONTROL, &[0x00, 0x04]);
        // Busy, reload command and "loading" while it runs (twice a read: over 1 ms).
        let st = bus.fprd16(0x1003, reg::EEPROM_CONTROL);
        assert_eq!(st & 0x9700, 0x9400, "{st:#06x}");
        bus.eeprom_idle(0x1003)
    };
    // New alias with a correct CRC: word 4 = 0x0033, then fix word 7.
    let mut head = bus.net.subdevice(2).unwrap().sii()[..16].to_vec();
    head[8] = 0x33;
    let crc = ecat_wire::sii::crc8(&head[..14]);
    write(&mut bus, 4, 0x0033);
    write(&mut bus, 7, crc as u16);
    assert_eq!(reload(&mut bus) & (ee::ERR_CHECKSUM | ee::ERR_LOADING), 0);
    assert_eq!(bus.fprd16(0x1003, reg::STATION_ALIAS), 0x0033);
    assert_eq!(bus.fprd16(0x1003, reg::DL_STATUS) & 1, 1);
    // Corrupt the CRC: reload flags bits 11 and 12 and DL status bit 0 drops; alias stays.
    write(&mut bus, 7, (crc ^ 0xFF) as u16);
    let st = reload(&mut bus);
    assert_eq!(
        st & (ee::ERR_CHECKSUM | ee::ERR_LOADING),
        0x1800,
        "{st:#06x}"
    );
    assert_eq!(bus.fprd16(0x1003, reg::DL_STATUS) & 1, 0);
}

#[test]
fn pdi_owned_eeprom_ignores_ecat_commands() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    // EL4132 has firmware: offered the EEPROM, it takes it.
    bus.fpwr(0x1004, reg::EEPROM_CONFIG, &[0x01]);
    assert_eq!(bus.fprd(0x1004, reg::EEPROM_PDI_ACCESS, 1).data, [1]);
    bus.fpwr(0x1004, reg::EEPROM_CONTROL, &[0x00, 0x01, 0x08, 0, 0, 0]);
    assert_eq!(
        bus.fprd16(0x1004, reg::EEPROM_CONTROL) & ee::BUSY,
        0,
        "ignored"
    );
    // Force ECAT access (0x0500 = 2, then 0) as SOEM does.
    bus.fpwr(0x1004, reg::EEPROM_CONFIG, &[0x02]);
    bus.fpwr(0x1004, reg::EEPROM_CONFIG, &[0x00]);
    assert_eq!(bus.fprd(0x1004, reg::EEPROM_PDI_ACCESS, 1).data, [0]);
    assert_eq!(bus.read_sii(0x1004, 16)[..2], [0x05, 0x0C]);
    // The EK1100 (device emulation, no PDI) never takes it.
    bus.fpwr(0x1001, reg::EEPROM_CONFIG, &[0x01]);
    assert_eq!(bus.fprd(0x1001, reg::EEPROM_PDI_ACCESS, 1).data, [0]);
}

/// The captured devices' EEPROM interfaces: idle 0x0040 (EK1100, EL2889) and 0x0050
/// (EL2828), busy + read command for 675–711 µs after a read command.
#[test]
fn captured_devices_show_their_eeprom_status_and_busy_time() {
    let net = ecat_sim::Network::from_file(
        &testdata().join("../networks/replay-ek1100-el2828-el2889.toml"),
    )
    .unwrap();
    let mut bus = Bus::new(net);
    bus.assign_addresses();
    for (station, idle) in [(0x1001, 0x0040), (0x1002, 0x0050), (0x1003, 0x0040)] {
        assert_eq!(bus.eeprom_idle(station), idle, "station {station:#x}");
        bus.fpwr(station, reg::EEPROM_CONTROL, &[0x00, 0x01, 0x08, 0, 0, 0]);
        let start = bus.now;
        let mut busy_until = start;
        loop {
            let st = bus.fprd16(station, reg::EEPROM_CONTROL);
            if st & ee::BUSY == 0 {
                assert_eq!(st, idle);
                break;
            }
            assert_eq!(st, idle | 0x8100, "busy + read command");
            busy_until = bus.now;
        }
        let busy = busy_until - start;
        assert!((650_000..=711_000).contains(&busy), "busy {busy} ns");
    }
}

/// A chip named in the network file decides identification and resources.
#[test]
fn chip_from_the_network_file_sets_identification_and_resources() {
    let toml = "[[subdevice]]\nsii = \"el2004-eeprom-dump.bin\"\nchip = \"LAN9252\"\n\
                [[subdevice]]\nsii = \"el2004-eeprom-dump.bin\"\nchip = \"am335x-pru\"\n";
    let net = ecat_sim::Network::from_toml_str(toml, "t.toml", &testdata()).unwrap();
    let mut bus = Bus::new(net);
    bus.assign_addresses();
    // The port descriptor (0x0007) follows the SII's ports (E-Bus: 0x0A).
    assert_eq!(
        bus.fprd(0x1001, 0x0000, 10).data,
        [0xC0, 0x02, 0x00, 0x00, 3, 4, 4, 0x0A, 0xCC, 0x01]
    );
    assert_eq!(
        bus.fprd(0x1002, 0x0000, 10).data,
        [0x90, 0x01, 0xF3, 0x04, 8, 8, 8, 0x0A, 0x8C, 0x00]
    );
    // FMMU 3 exists on the TI ESC only; SM 4 likewise.
    let r = bus.cmd(ecat_wire::Command::Bwr, 0, 0x0630, &[0; 16]);
    assert_eq!(r.wkc, 1);
    let r = bus.cmd(ecat_wire::Command::Bwr, 0, 0x0820, &[0; 8]);
    assert_eq!(r.wkc, 1);
    // The TI ESC emulates the EEPROM (0x0502 bit 5).
    assert_eq!(bus.eeprom_idle(0x1002) & ee::EMULATION, ee::EMULATION);
}
