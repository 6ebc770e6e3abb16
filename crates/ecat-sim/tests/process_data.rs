//! Cyclic process data: 3-buffer SyncManagers, inputs from SAFEOP, outputs only in OP, the
//! SM watchdog, the SAFEOP/OP checks, and the device behaviours behind them.

mod common;

use common::{sm_bytes, Bus, IO_IMAGE};
use ecat_wire::register as reg;

const EL2008: usize = 1;
const EL1018: usize = 2;
const EL4132: usize = 3;
const EL3102: usize = 4;

fn code(bus: &mut Bus, station: u16) -> u16 {
    bus.fprd16(station, reg::AL_STATUS_CODE)
}

#[test]
fn io_cycle_reaches_op_with_full_wkc_and_applies_outputs_only_in_op() {
    let mut bus = Bus::preset("io");
    bus.configure_io();
    let out = [0xA5, 0x34, 0x12, 0x78, 0x56];
    let mut img = [0u8; IO_IMAGE];
    img[..5].copy_from_slice(&out);
    // PREOP: process-data SMs of the firmware devices are closed; EL2008/EL1018 (device
    // emulation, no firmware) have theirs open but publish no inputs before SAFEOP.
    let r = bus.lrw(&img);
    assert_eq!(r.wkc, 3, "only EL2008 (+2) and EL1018 (+1) answer in PREOP");
    assert_eq!(r.data[5], 0, "no inputs before SAFEOP");
    assert_eq!(bus.request_all(0x04), 0x04);
    bus.now = 3_000_000 - 10_000; // the next frame runs at 3 ms
    let r = bus.lrw(&img);
    assert_eq!(r.wkc, 6, "SAFEOP: every SM answers");
    let r = bus.lrw(&img);
    assert_eq!(r.data[5], 1 << 3, "EL1018 walking bit: ms 3 of 8");
    assert_eq!(r.data[6], 0, "EL3102 channel 1 status");
    assert_eq!(
        bus.net.outputs(EL2008),
        Some(&[0][..]),
        "SAFEOP: safe value"
    );
    assert_eq!(bus.net.outputs(EL4132), Some(&[0u8; 4][..]));
    assert_eq!(bus.request_all(0x08), 0x08);
    let r = bus.lrw(&img);
    assert_eq!(r.wkc, 6);
    assert_eq!(bus.net.outputs(EL2008), Some(&out[..1]));
    assert_eq!(bus.net.outputs(EL4132), Some(&out[1..]));
    // Back to SAFEOP: outputs fall to the safe value, inputs keep coming.
    assert_eq!(bus.request_all(0x04), 0x04);
    bus.lrw(&img);
    assert_eq!(bus.net.outputs(EL4132), Some(&[0u8; 4][..]));
    assert_eq!(bus.net.outputs(0), Some(&[][..]), "EK1100 has no outputs");
    assert_eq!(bus.net.outputs(9), None);
}

#[test]
fn inputs_move_and_can_be_forced() {
    let mut bus = Bus::preset("io");
    bus.configure_io();
    bus.request_all(0x04);
    let img = [0u8; IO_IMAGE];
    bus.now = 100_000_000;
    bus.lrw(&img);
    let a = bus.lrw(&img).data;
    bus.now = 350_000_000;
    bus.lrw(&img);
    let b = bus.lrw(&img).data;
    let ch1 = |d: &[u8]| i16::from_le_bytes([d[7], d[8]]);
    let ch2 = |d: &[u8]| i16::from_le_bytes([d[10], d[11]]);
    assert_ne!(ch1(&a), ch1(&b), "EL3102 values move");
    assert!(ch1(&b) > ch1(&a), "rising half of the triangle");
    assert_eq!(ch2(&b), -ch1(&b));
    assert_eq!((a[6], a[9]), (0, 0), "status bytes: no error");
    bus.net.set_inputs(EL1018, &[0xC3]).unwrap();
    bus.lrw(&img);
    assert_eq!(bus.lrw(&img).data[5], 0xC3);
    bus.net.clear_inputs(EL1018).unwrap();
    bus.lrw(&img);
    assert_eq!(bus.lrw(&img).data[5], 1 << ((bus.now / 1_000_000) % 8));
    bus.net.set_inputs(EL3102, &[0, 1, 2]).unwrap();
    bus.lrw(&img);
    assert_eq!(&bus.lrw(&img).data[6..], &[0, 1, 2, 0, 0, 0], "zero-padded");
    assert!(bus.net.set_inputs(7, &[1]).is_err());
}

/// EL4132 to SAFEOP: mailbox, SM2 (4 bytes at 0x1000, 3-buffer area 0x1000..0x100C).
fn el4132_safeop() -> Bus {
    let mut bus = Bus::preset("io");
    bus.configure_io();
    assert_eq!(bus.al_request(0x1004, 0x04), 0x04);
    bus
}

fn pdi_outputs(bus: &mut Bus) -> (bool, [u8; 4]) {
    let mut b = [0u8; 4];
    let esc = bus.net.subdevice_mut(EL4132).unwrap();
    (esc.pdi_read_buffered(2, &mut b), b)
}

#[test]
fn writer_commits_on_the_last_byte() {
    let mut bus = el4132_safeop();
    let status = |bus: &mut Bus| bus.fprd(0x1004, reg::sm(2) + 5, 1).data[0];
    assert_eq!(status(&mut bus) & 0x30, 0x30, "nothing written yet");
    // (The device itself takes every new buffer after each frame, so the PDI view below shows
    // the latest complete buffer.)
    assert_eq!(bus.fpwr(0x1004, 0x1000, &[1, 2]), 1);
    assert_eq!(
        status(&mut bus) & 0x30,
        0x30,
        "last byte not written: no swap"
    );
    assert_eq!(pdi_outputs(&mut bus).1, [0; 4]);
    assert_eq!(bus.fpwr(0x1004, 0x1002, &[3, 4]), 1);
    assert_eq!(
        pdi_outputs(&mut bus).1,
        [1, 2, 3, 4],
        "both parts, one buffer"
    );
    let s1 = status(&mut bus) & 0x30;
    assert_ne!(s1, 0x30);
    bus.fpwr(0x1004, 0x1000, &[5, 6, 7, 8]);
    assert_ne!(
        status(&mut bus) & 0x30,
        s1,
        "status shows the new latest buffer"
    );
    bus.fpwr(0x1004, 0x1000, &[9, 9, 9, 9]);
    assert_eq!(
        pdi_outputs(&mut bus).1,
        [9, 9, 9, 9],
        "reader gets the latest"
    );
    // Buffers 1 and 2 are reserved; the MainDevice cannot reach them (unverified choice).
    assert_eq!(bus.fpwr(0x1004, 0x1004, &[0; 8]), 0);
    // Nor read back its own outputs (access against the SM direction; unverified choice).
    assert_eq!(bus.fprd(0x1004, 0x1000, 4).wkc, 0);
}

#[test]
fn reader_keeps_its_buffer_until_the_last_byte() {
    let mut bus = Bus::preset("io");
    bus.configure_io();
    bus.request_all(0x04);
    let st = 0x1005;
    bus.net.set_inputs(EL3102, &[1, 1, 1, 1, 1, 1]).unwrap();
    bus.fprd(st, reg::AL_STATUS, 2); // a frame: the device publishes A
    let r = bus.fprd(st, 0x1180, 3);
    assert_eq!((r.wkc, r.data), (1, vec![1, 1, 1]), "opens A");
    bus.net.set_inputs(EL3102, &[2, 2, 2, 2, 2, 2]).unwrap();
    bus.fprd(st, reg::AL_STATUS, 2);
    bus.net.set_inputs(EL3102, &[3, 3, 3, 3, 3, 3]).unwrap();
    bus.fprd(st, reg::AL_STATUS, 2);
    let r = bus.fprd(st, 0x1183, 3);
    assert_eq!(
        r.data,
        [1, 1, 1],
        "still A: the open buffer is not swapped away"
    );
    let r = bus.fprd(st, 0x1180, 6);
    assert_eq!(
        r.data,
        [3, 3, 3, 3, 3, 3],
        "next access: the latest complete buffer"
    );
}

fn servo_to_safeop(sm2_len: u16) -> (Bus, u16) {
    let mut bus = Bus::preset("servo");
    bus.assign_addresses();
    let st = 0x1001;
    let mut m = [0u8; 16];
    m[..8].copy_from_slice(&sm_bytes(0x1000, 128, 0x26, true));
    m[8..].copy_from_slice(&sm_bytes(0x1080, 128, 0x22, true));
    bus.fpwr(st, reg::SM0, &m);
    assert_eq!(bus.al_request(st, 0x02), 0x02);
    bus.fpwr(st, reg::sm(2), &sm_bytes(0x1100, sm2_len, 0x64, true));
    bus.fpwr(st, reg::sm(3), &sm_bytes(0x1180, 10, 0x20, true));
    let s = bus.al_request(st, 0x04);
    (bus, s)
}

#[test]
fn safeop_refuses_a_wrong_output_sm_length_with_0x001d() {
    let (mut bus, s) = servo_to_safeop(4);
    assert_eq!(s, 0x12);
    assert_eq!(
        code(&mut bus, 0x1001),
        0x001D,
        "AL status code register 0x0134"
    );
    // Another SM inside SM2's 3-buffer area (0x1100..0x1112) is refused too.
    let (mut bus, _) = servo_to_safeop(6);
    bus.al_request(0x1001, 0x02);
    bus.fpwr(0x1001, reg::sm(4), &sm_bytes(0x110C, 2, 0x24, true));
    assert_eq!(bus.al_request(0x1001, 0x04), 0x12);
    assert_eq!(code(&mut bus, 0x1001), 0x001D);
}

#[test]
fn op_needs_valid_outputs_then_the_watchdog_guards_them() {
    let (mut bus, s) = servo_to_safeop(6);
    let st = 0x1001;
    assert_eq!(s, 0x04);
    assert_eq!(bus.fprd16(st, reg::WATCHDOG_DIVIDER), 2498, "100 µs ticks");
    assert_eq!(bus.fprd16(st, reg::WATCHDOG_PD), 1000, "100 ms");
    // No SM2 write since SAFEOP: the request waits (SSC), AL status stays SAFEOP ...
    assert_eq!(bus.al_request(st, 0x08), 0x04);
    assert_eq!(code(&mut bus, st), 0);
    // ... and the first complete output buffer completes it.
    assert_eq!(bus.fpwr(st, 0x1100, &[0x06, 0, 0, 0, 0, 0]), 1);
    assert_eq!(bus.fprd16(st, reg::AL_STATUS), 0x08);
    // Writes every 50 ms keep it alive.
    for _ in 0..4 {
        bus.now += 50_000_000;
        bus.fpwr(st, 0x1100, &[0x06, 0, 0, 0, 0, 0]);
    }
    assert_eq!(bus.fprd16(st, reg::AL_STATUS), 0x08);
    assert_eq!(bus.net.outputs(0).unwrap()[0], 0x06, "applied in OP");
    assert_eq!(bus.fprd(st, reg::WATCHDOG_PD_STATUS, 1).data[0] & 1, 1);
    // Silence for more than 100 ms: SAFEOP + ERR, 0x001B, outputs safe.
    bus.now += 100_000_001;
    assert_eq!(bus.fprd16(st, reg::AL_STATUS), 0x14);
    assert_eq!(code(&mut bus, st), 0x001B);
    assert_eq!(bus.fprd(st, reg::WATCHDOG_PD_STATUS, 1).data[0] & 1, 0);
    assert_eq!(bus.fprd(st, reg::WATCHDOG_PD_COUNTER, 1).data[0], 1);
    assert_eq!(bus.net.outputs(0).unwrap(), &[0; 6]);
    assert!(bus.net.subdevice(0).unwrap().watchdog_expired());
    // Recovery: acknowledge, write outputs, OP again.
    assert_eq!(bus.al_request(st, 0x14), 0x04);
    bus.fpwr(st, 0x1100, &[0x0F, 0, 100, 0, 0, 0]);
    assert_eq!(bus.al_request(st, 0x08), 0x08);
    assert_eq!(bus.fprd(st, reg::WATCHDOG_PD_STATUS, 1).data[0] & 1, 1);
}

#[test]
fn servo_answers_its_controlword() {
    let (mut bus, _) = servo_to_safeop(6);
    let st = 0x1001;
    // Read the whole SM: reading only the statusword would keep the buffer open (3-buffer
    // rule) and the next read would see the same, old buffer.
    let sw = |bus: &mut Bus| {
        let d = bus.fprd(st, 0x1180, 10).data;
        u16::from_le_bytes([d[0], d[1]])
    };
    assert_eq!(sw(&mut bus) & 0x4F, 0x40, "switch on disabled");
    bus.fpwr(st, 0x1100, &[0x0F, 0, 0xE8, 0x03, 0, 0]);
    assert_eq!(bus.al_request(st, 0x08), 0x08);
    for cw in [0x06u8, 0x07, 0x0F] {
        bus.fpwr(st, 0x1100, &[cw, 0, 0xE8, 0x03, 0, 0]);
        bus.fprd(st, 0x1180, 10);
    }
    assert_eq!(sw(&mut bus) & 0x6F, 0x27, "operation enabled");
    bus.now += 10_000_000;
    bus.fpwr(st, 0x1100, &[0x0F, 0, 0xE8, 0x03, 0, 0]);
    let r = bus.fprd(st, 0x1180, 10).data;
    let pos = i32::from_le_bytes([r[2], r[3], r[4], r[5]]);
    let vel = i32::from_le_bytes([r[6], r[7], r[8], r[9]]);
    assert_eq!(vel, 1000, "velocity follows the target");
    assert!(pos >= 10, "position integrates: {pos}");
}

#[test]
fn unchanged_outputs_still_overwrite_a_changed_output_object() {
    // The device skips unpacking outputs that did not change into a dictionary that did not
    // change; a write to the mapped object between frames must still be overwritten by the
    // next frame's outputs, as on every frame before the skip existed.
    let mut bus = Bus::preset("io");
    bus.configure_io();
    let out = [0xA5, 0x34, 0x12, 0x78, 0x56];
    let mut img = [0u8; IO_IMAGE];
    img[..5].copy_from_slice(&out);
    assert_eq!(bus.request_all(0x04), 0x04);
    bus.lrw(&img);
    assert_eq!(bus.request_all(0x08), 0x08);
    bus.lrw(&img);
    bus.lrw(&img);
    let od = |bus: &mut Bus| {
        let od = bus.net.subdevice(EL4132).unwrap().od().unwrap();
        (od.get(0x6411, 1), od.get(0x6411, 2))
    };
    assert_eq!(od(&mut bus), (Some(0x1234), Some(0x5678)));
    let esc = bus.net.subdevice_mut(EL4132).unwrap();
    esc.od_mut().unwrap().set(0x6411, 1, 7);
    assert_eq!(od(&mut bus), (Some(7), Some(0x5678)));
    bus.lrw(&img);
    assert_eq!(
        od(&mut bus),
        (Some(0x1234), Some(0x5678)),
        "same outputs, rewritten"
    );
    // Back to SAFEOP: the objects get the safe value once.
    assert_eq!(bus.request_all(0x04), 0x04);
    bus.lrw(&img);
    assert_eq!(od(&mut bus), (Some(0), Some(0)));
}
