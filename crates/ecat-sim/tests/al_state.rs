//! The AL state machine with its checks and codes, and the mailbox SyncManagers.

mod common;

use common::Bus;
use ecat_wire::register::{self as reg, SmRepr};
use ecat_wire::{Command, FrameBuilder};

const EL3102: u16 = 0x1005;
const EL4132: u16 = 0x1004;

fn sm_bytes(start: u16, length: u16, control: u8, enable: bool) -> [u8; 8] {
    let mut b = [0u8; 8];
    SmRepr {
        start,
        length,
        control,
        activate: enable as u8,
        ..Default::default()
    }
    .emit(&mut b)
    .unwrap();
    b
}

fn mailbox_sms(bus: &mut Bus, station: u16, out: u16, inp: u16, len: u16) {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&sm_bytes(out, len, 0x26, true));
    b[8..].copy_from_slice(&sm_bytes(inp, len, 0x22, true));
    assert_eq!(bus.fpwr(station, reg::SM0, &b), 1);
}

fn code(bus: &mut Bus, station: u16) -> u16 {
    bus.fprd16(station, reg::AL_STATUS_CODE)
}

fn io() -> Bus {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    bus
}

#[test]
fn device_emulation_copies_control_to_status() {
    let mut bus = io();
    // As the EK1100 in the reference capture: BWR INIT|ACK → AL status 0x11.
    assert_eq!(bus.cmd(Command::Bwr, 0, reg::AL_CONTROL, &[0x11, 0]).wkc, 5);
    assert_eq!(bus.fprd16(0x1001, reg::AL_STATUS), 0x0011);
    assert_eq!(
        bus.al_request(0x1001, 0x08),
        0x0008,
        "no checks: INIT→OP directly"
    );
    assert_eq!(code(&mut bus, 0x1001), 0);
}

#[test]
fn firmware_transitions_refusals_and_acknowledge() {
    let mut bus = io();
    assert_eq!(bus.al_request(EL3102, 0x04), 0x11, "INIT→SAFEOP refused");
    assert_eq!(code(&mut bus, EL3102), 0x0011);
    assert_eq!(
        bus.al_request(EL3102, 0x02),
        0x11,
        "ignored without acknowledge"
    );
    assert_eq!(
        bus.al_request(EL3102, 0x12),
        0x11,
        "acknowledged, but no mailbox SMs"
    );
    assert_eq!(code(&mut bus, EL3102), 0x0016);
    assert_eq!(bus.al_request(EL3102, 0x11), 0x01, "INIT|ACK clears");
    assert_eq!(code(&mut bus, EL3102), 0);
    mailbox_sms(&mut bus, EL3102, 0x1000, 0x1080, 16);
    assert_eq!(
        bus.al_request(EL3102, 0x02),
        0x11,
        "mailbox shorter than 34 bytes"
    );
    assert_eq!(code(&mut bus, EL3102), 0x0016);
    bus.al_request(EL3102, 0x11);
    // Start/length are locked while the SM is enabled: this rewrite changes nothing.
    mailbox_sms(&mut bus, EL3102, 0x1000, 0x1080, 128);
    assert_eq!(bus.fprd16(EL3102, reg::SM0 + 2), 16);
    bus.fpwr(EL3102, reg::SM0, &[0; 16]);
    mailbox_sms(&mut bus, EL3102, 0x1000, 0x1080, 128);
    assert_eq!(bus.al_request(EL3102, 0x02), 0x02);
    assert_eq!(bus.al_request(EL3102, 0x08), 0x12, "PREOP→OP refused");
    assert_eq!(code(&mut bus, EL3102), 0x0011);
    assert_eq!(
        bus.al_request(EL3102, 0x12),
        0x02,
        "acknowledge in the same state"
    );
    assert_eq!(bus.al_request(EL3102, 0x04), 0x12, "SM3 not configured");
    assert_eq!(code(&mut bus, EL3102), 0x001E);
    assert_eq!(
        bus.fpwr(EL3102, reg::sm(3), &sm_bytes(0x1180, 6, 0x20, true)),
        1
    );
    assert_eq!(bus.al_request(EL3102, 0x14), 0x04);
    assert_eq!(bus.al_request(EL3102, 0x08), 0x08);
    assert_eq!(
        bus.al_request(EL3102, 0x06),
        0x14,
        "unknown state: OP falls back to SAFEOP"
    );
    assert_eq!(code(&mut bus, EL3102), 0x0012);
    assert_eq!(
        bus.al_request(EL3102, 0x01),
        0x01,
        "INIT always processed, and clears the flag (SSC)"
    );
    assert_eq!(code(&mut bus, EL3102), 0);
    // In INIT the firmware has deactivated its SMs (PDI control bit 0).
    assert_eq!(bus.fprd(EL3102, reg::sm(1) + 7, 1).data[0] & 1, 1);
}

#[test]
fn outputs_and_boot_checks() {
    let mut bus = io();
    mailbox_sms(&mut bus, EL4132, 0x1800, 0x18F6, 246);
    assert_eq!(bus.al_request(EL4132, 0x02), 0x02);
    assert_eq!(
        bus.fpwr(EL4132, reg::sm(2), &sm_bytes(0x1000, 2, 0x24, true)),
        1
    );
    assert_eq!(
        bus.al_request(EL4132, 0x04),
        0x12,
        "SM2 holds 4 bytes of PDOs"
    );
    assert_eq!(code(&mut bus, EL4132), 0x001D);
    bus.al_request(EL4132, 0x11);
    // BOOT needs the bootstrap mailbox (0x1000/244, 0x10F4/244).
    assert_eq!(bus.al_request(EL4132, 0x03), 0x11);
    assert_eq!(code(&mut bus, EL4132), 0x0015);
    bus.al_request(EL4132, 0x11);
    bus.fpwr(EL4132, reg::SM0, &[0; 16]);
    mailbox_sms(&mut bus, EL4132, 0x1000, 0x10F4, 244);
    assert_eq!(bus.al_request(EL4132, 0x03), 0x03);
    assert_eq!(bus.al_request(EL4132, 0x02), 0x13, "BOOT→PREOP refused");
    // The servo has no bootstrap mailbox.
    let mut servo = Bus::preset("servo");
    servo.assign_addresses();
    assert_eq!(servo.al_request(0x1001, 0x03), 0x11);
    assert_eq!(code(&mut servo, 0x1001), 0x0013);
}

#[test]
fn mailbox_gating_and_error_reply() {
    let mut bus = io();
    mailbox_sms(&mut bus, EL3102, 0x1000, 0x1080, 128);
    // In INIT the firmware keeps the SMs closed: no access.
    assert_eq!(bus.fpwr(EL3102, 0x1000, &[0; 128]), 0);
    assert_eq!(bus.al_request(EL3102, 0x02), 0x02);
    assert_eq!(bus.fprd(EL3102, 0x1080, 128).wkc, 0, "SM1 empty");
    // An SoE request (type 5, counter 1; the EL3102 serves CoE only), written twice in one
    // frame: the second is refused.
    let mut msg = [0u8; 128];
    msg[..6].copy_from_slice(&[10, 0, 0, 0, 0, 0x15]);
    let mut buf = [0u8; 1514];
    let mut fb = FrameBuilder::new(&mut buf, common::MAC).unwrap();
    for i in 0..2 {
        let (_, mut d) = fb
            .push_physical(Command::Fpwr, i, EL3102, 0x1000, 128)
            .unwrap();
        d.data_mut().copy_from_slice(&msg);
    }
    let (_, _) = fb
        .push_physical(Command::Fprd, 2, EL3102, reg::sm(0) + 5, 1)
        .unwrap();
    let n = fb.finish();
    assert!(bus.net.process_frame(&mut buf[..n], 5));
    let f = ecat_wire::frame::parse_ethernet(&buf[..n]).unwrap();
    let w: Vec<(u16, Vec<u8>)> = f
        .datagrams()
        .map(|d| d.unwrap())
        .map(|d| (d.wkc(), d.data().to_vec()))
        .collect();
    assert_eq!((w[0].0, w[1].0), (1, 0), "full after the first write");
    assert_eq!(w[2].1[0] & 0x08, 0x08, "SM0 status: mailbox full");
    // The firmware consumed it and answered "protocol not supported" in SM1.
    assert_eq!(bus.fprd(EL3102, reg::sm(0) + 5, 1).data[0] & 0x08, 0);
    assert_eq!(bus.fprd(EL3102, reg::sm(1) + 5, 1).data[0] & 0x08, 0x08);
    let r = bus.fprd(EL3102, 0x1080, 128);
    assert_eq!(r.wkc, 1);
    assert_eq!(&r.data[..10], &[4, 0, 0, 0, 0, 0x10, 1, 0, 2, 0]);
    assert_eq!(
        bus.fprd(EL3102, 0x1080, 128).wkc,
        0,
        "reading the last byte emptied it"
    );
    // Repeat request: toggle SM1 activate bit 1, the reply comes again.
    assert_eq!(bus.fpwr(EL3102, reg::sm(1) + 6, &[0x03]), 1);
    assert_eq!(
        bus.fprd(EL3102, reg::sm(1) + 7, 1).data[0] & 0x02,
        0x02,
        "repeat ack"
    );
    let r = bus.fprd(EL3102, 0x1080, 128);
    assert_eq!(
        (r.wkc, &r.data[..10]),
        (1, &[4, 0, 0, 0, 0, 0x10, 1, 0, 2, 0][..])
    );
    // Leaving to INIT closes the mailbox again.
    bus.al_request(EL3102, 0x01);
    assert_eq!(bus.fpwr(EL3102, 0x1000, &msg), 0);
}
