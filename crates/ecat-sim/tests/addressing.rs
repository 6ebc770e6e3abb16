//! Command table, addressing, working counters and register protection, checked frame by
//! frame the way a MainDevice sees them.

mod common;

use common::Bus;
use ecat_sim::Network;
use ecat_wire::register as reg;
use ecat_wire::Command;

#[test]
fn brd_counts_escs_and_returns_adp() {
    let mut bus = Bus::preset("io");
    let r = bus.read(Command::Brd, 0, reg::TYPE, 2);
    assert_eq!(
        r.wkc, 5,
        "EK1100, EL2008, EL1018, EL4132, EL3102; EL9011 is passive"
    );
    assert_eq!(r.adp, 5, "every ESC increments ADP");
    // Type bytes ORed: ET1100 0x11 | ET1200 0x12 = 0x13, as in the reference capture.
    assert_eq!(r.data[0], 0x13);
}

#[test]
fn apwr_then_fprd_station_addresses() {
    let mut bus = Bus::preset("io");
    assert_eq!(bus.assign_addresses(), 5);
    for i in 0..5u16 {
        assert_eq!(bus.fprd16(0x1001 + i, reg::STATION_ADDRESS), 0x1001 + i);
    }
    let r = bus.read(Command::Aprd, 0xFFFE, reg::STATION_ADDRESS, 2);
    assert_eq!(
        (r.data.as_slice(), r.wkc, r.adp),
        (&[0x03, 0x10][..], 1, 0x0003)
    );
    assert_eq!(
        bus.fprd(0x7777, reg::STATION_ADDRESS, 2).wkc,
        0,
        "nobody has 0x7777"
    );
    let ek = bus.fprd(0x1001, reg::TYPE, 10).data;
    assert_eq!(ek, [0x11, 0x00, 0x03, 0x00, 8, 8, 8, 0x3B, 0xFC, 0x00]);
}

#[test]
fn alias_matches_only_when_enabled() {
    let text = "[[subdevice]]\nmodel = \"EK1100\"\n[[subdevice]]\nmodel = \"EL2008\"\nalias = 7\n";
    let mut bus = Bus::new(Network::from_toml_str(text, "t.toml", ".".as_ref()).unwrap());
    bus.assign_addresses();
    assert_eq!(
        bus.fprd16(0x1002, reg::STATION_ALIAS),
        7,
        "alias loaded from SII word 4"
    );
    assert_eq!(
        bus.fprd(7, reg::AL_STATUS, 2).wkc,
        0,
        "alias disabled by default"
    );
    assert_eq!(bus.fpwr(0x1002, reg::DL_CONTROL_ALIAS, &[1]), 1);
    assert_eq!(bus.fprd(7, reg::STATION_ADDRESS, 2).data, [0x02, 0x10]);
    assert_eq!(bus.cmd(Command::Bwr, 0, reg::DL_CONTROL_ALIAS, &[0]).wkc, 2);
    assert_eq!(bus.fprd(7, reg::AL_STATUS, 2).wkc, 0);
}

#[test]
fn brd_ors_and_fprw_returns_old_value() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    bus.fpwr(0x1001, reg::ECAT_EVENT_MASK, &[0x01, 0x00]);
    bus.fpwr(0x1003, reg::ECAT_EVENT_MASK, &[0x10, 0x80]);
    let r = bus.read(Command::Brd, 0, reg::ECAT_EVENT_MASK, 2);
    assert_eq!((r.data.as_slice(), r.wkc), (&[0x11, 0x80][..], 5));
    let r = bus.cmd(Command::Fprw, 0x1003, reg::ECAT_EVENT_MASK, &[0xAA, 0x55]);
    assert_eq!(
        (r.data.as_slice(), r.wkc),
        (&[0x10, 0x80][..], 3),
        "old value, read+write"
    );
    assert_eq!(bus.fprd16(0x1003, reg::ECAT_EVENT_MASK), 0x55AA);
    let r = bus.cmd(Command::Aprw, 0xFFFF, reg::ECAT_EVENT_MASK, &[1, 2]);
    assert_eq!((r.data.as_slice(), r.wkc), (&[0, 0][..], 3));
    let r = bus.cmd(Command::Brw, 0, reg::ECAT_EVENT_MASK, &[0, 0]);
    assert_eq!(r.wkc, 15, "read + write on each of 5");
}

#[test]
fn armw_and_frmw_read_on_the_addressed_write_elsewhere() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    bus.fpwr(0x1002, reg::ECAT_EVENT_MASK, &[0x34, 0x12]);
    let r = bus.cmd(Command::Armw, 0xFFFF, reg::ECAT_EVENT_MASK, &[0, 0]);
    assert_eq!((r.data.as_slice(), r.wkc, r.adp), (&[0x34, 0x12][..], 5, 4));
    // ESCs before the addressed one write what the frame held then (the MainDevice's zeros),
    // those after it the value read.
    assert_eq!(bus.fprd16(0x1001, reg::ECAT_EVENT_MASK), 0);
    for s in [0x1003, 0x1004, 0x1005] {
        assert_eq!(
            bus.fprd16(s, reg::ECAT_EVENT_MASK),
            0x1234,
            "0x{s:04X} took the value"
        );
    }
    bus.fpwr(0x1004, reg::ECAT_EVENT_MASK, &[0x0F, 0]);
    let r = bus.cmd(Command::Frmw, 0x1004, reg::ECAT_EVENT_MASK, &[0, 0]);
    assert_eq!(
        (r.data.as_slice(), r.wkc, r.adp),
        (&[0x0F, 0][..], 5, 0x1004)
    );
    assert_eq!(bus.fprd16(0x1005, reg::ECAT_EVENT_MASK), 0x000F);
}

#[test]
fn read_only_and_absent_registers() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    // Pinned by the reference capture: a BWR to read-only 0x092C is counted by no ESC, so a
    // write that hits only read-only bytes does not count; the value stays.
    assert_eq!(bus.fpwr(0x1001, reg::TYPE, &[0xFF, 0xFF]), 0);
    assert_eq!(bus.fprd(0x1001, reg::TYPE, 1).data, [0x11]);
    assert_eq!(bus.fpwr(0x1001, reg::AL_STATUS, &[8, 0]), 0);
    assert_eq!(bus.fpwr(0x1001, reg::DL_STATUS, &[0, 0]), 0);
    // A write covering writable bytes counts even if it also touches read-only ones.
    assert_eq!(
        bus.fpwr(0x1001, 0x0008, &[0; 6]),
        0,
        "0x0008..0x000D: read-only or absent"
    );
    assert_eq!(bus.fpwr(0x1001, 0x000C, &[0, 0, 0, 0, 0x01, 0x10, 0, 0]), 1);
    assert_eq!(
        bus.fprd(0x1001, 0x0008, 2).data,
        [0xFC, 0x00],
        "features unchanged"
    );
    // FMMU/SM blocks beyond what the chip implements do not answer (capture: FMMU 3+ on
    // the ET1200 terminals).
    let r = bus.cmd(Command::Bwr, 0, reg::fmmu(3), &[0; 16]);
    assert_eq!(
        r.wkc, 2,
        "only the two ET1100 ESCs (EK1100, EL4132) have FMMU 3"
    );
    let r = bus.cmd(Command::Bwr, 0, reg::sm(4), &[0; 8]);
    assert_eq!(r.wkc, 2);
    // DC system time exists only where the SII enables the DC units (EK1100, EL4132, EL3102).
    assert_eq!(
        bus.cmd(Command::Bwr, 0, reg::DC_SYSTEM_TIME, &[0; 8]).wkc,
        3
    );
    assert_eq!(
        bus.cmd(Command::Bwr, 0, reg::DC_SYSTEM_TIME_DIFFERENCE, &[0; 4])
            .wkc,
        0
    );
}

#[test]
fn dl_status_follows_the_line() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    // Values as the real EK1100 (first) and EL2889 (last) report in the reference capture.
    assert_eq!(bus.fprd16(0x1001, reg::DL_STATUS), 0x5A31);
    assert_eq!(bus.fprd16(0x1002, reg::DL_STATUS), 0x5A33);
    assert_eq!(
        bus.fprd16(0x1005, reg::DL_STATUS),
        0x5613,
        "last ESC: port 1 loop closed"
    );
}

#[test]
fn error_counters_clear_on_write() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    let mut junk = vec![0u8; 60];
    junk[12] = 0x88;
    junk[13] = 0xA4;
    junk[14] = 0x20; // length 0x20, type 1 ...
    junk[15] = 0x10; // ... but the datagram inside is garbage (length past the end)
    junk[16 + 6] = 0xFF;
    junk[16 + 7] = 0x07;
    assert!(!bus.net.process_frame(&mut junk, 0));
    assert_eq!(
        bus.fprd(0x1001, 0x0300, 1).data,
        [1],
        "invalid frame on port 0"
    );
    assert_eq!(bus.fpwr(0x1001, 0x0300, &[0; 8]), 1);
    assert_eq!(bus.fprd(0x1001, 0x0300, 1).data, [0]);
}

#[test]
fn irq_field_carries_masked_events() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    bus.cmd(Command::Bwr, 0, reg::AL_CONTROL, &[0x02, 0]);
    let r = bus.fprd(0x1001, reg::AL_CONTROL, 2);
    assert_eq!(r.irq, 0, "nothing unmasked");
    bus.fpwr(0x1001, reg::ECAT_EVENT_MASK, &[0x08, 0]);
    let r = bus.fprd(0x1002, reg::AL_CONTROL, 2);
    assert_eq!(r.irq, 0x0008, "AL status change of the EK1100");
    bus.fprd(0x1001, reg::AL_STATUS, 2);
    assert_eq!(
        bus.fprd(0x1002, reg::AL_CONTROL, 2).irq,
        0,
        "reading AL status clears it"
    );
}

#[test]
fn dl_status_change_at_power_up_shows_in_irq_until_dl_status_is_read() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    // Event mask 0 at power-up: nothing in the IRQ field although the event is pending.
    assert_eq!(bus.read(Command::Brd, 0, reg::AL_STATUS, 2).irq, 0);
    assert_eq!(bus.fprd16(0x1001, reg::ECAT_EVENT) & 0x0004, 0x0004);
    // Enable DL-status events everywhere (as TwinCAT does): every later datagram carries it.
    assert_eq!(
        bus.cmd(Command::Bwr, 0, reg::ECAT_EVENT_MASK, &[4, 0]).wkc,
        5
    );
    assert_eq!(bus.read(Command::Brd, 0, reg::AL_STATUS, 2).irq, 0x0004);
    // Reading DL status clears it, one ESC at a time.
    for s in 0x1001..=0x1005 {
        bus.fprd16(s, reg::DL_STATUS);
    }
    assert_eq!(bus.read(Command::Brd, 0, reg::AL_STATUS, 2).irq, 0);
}
