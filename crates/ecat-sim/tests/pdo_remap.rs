//! PDO assignment and mapping over CoE: writable in PREOP only, validated, and driving the
//! SAFEOP size check and the process image.

mod common;

use common::coe::Mbx;
use common::{sm_bytes, Bus};
use ecat_wire::coe::SdoAbortCode as A;
use ecat_wire::register as reg;

const ST: u16 = 0x1001;

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Map 0x1A00 = statusword, position, velocity, torque with the SI0 = 0 / entries /
/// SI0 = n procedure.
fn remap_1a00(bus: &mut Bus, m: &mut Mbx) {
    bus.sdo_download(m, 0x1A00, 0, false, &[0]).unwrap();
    let entries = [0x6041_0010u32, 0x6064_0020, 0x606C_0020, 0x6077_0010];
    for (k, e) in entries.iter().enumerate() {
        bus.sdo_download(m, 0x1A00, k as u8 + 1, false, &e.to_le_bytes())
            .unwrap();
    }
    bus.sdo_download(m, 0x1A00, 0, false, &[4]).unwrap();
}

fn safeop(bus: &mut Bus, out_len: u16, in_len: u16) -> u16 {
    // Start, length and control are locked while an SM is enabled: disable first.
    bus.fpwr(ST, reg::sm(2), &sm_bytes(0x1100, out_len, 0x64, false));
    bus.fpwr(ST, reg::sm(3), &sm_bytes(0x1180, in_len, 0x20, false));
    bus.fpwr(ST, reg::sm(2), &sm_bytes(0x1100, out_len, 0x64, true));
    bus.fpwr(ST, reg::sm(3), &sm_bytes(0x1180, in_len, 0x20, true));
    bus.al_request(ST, 0x04)
}

#[test]
fn remapped_inputs_change_the_safeop_check_and_the_image() {
    let (mut bus, mut m) = Bus::servo_preop();
    remap_1a00(&mut bus, &mut m);
    assert_eq!(
        bus.sdo_upload(&mut m, 0x1A00, 0, true).unwrap(),
        [4, 0]
            .into_iter()
            .chain(u32s(&[0x6041_0010, 0x6064_0020, 0x606C_0020, 0x6077_0010]))
            .collect::<Vec<u8>>()
    );
    // The old size (10) is refused with 0x001E, the new one (12) accepted.
    assert_eq!(safeop(&mut bus, 6, 10), 0x12);
    assert_eq!(bus.fprd16(ST, reg::AL_STATUS_CODE), 0x001E);
    assert_eq!(bus.al_request(ST, 0x12), 0x02);
    assert_eq!(safeop(&mut bus, 6, 12), 0x04);
    // The image follows the mapping: statusword at 0, torque actual at 10.
    bus.net
        .subdevice_mut(0)
        .unwrap()
        .od_mut()
        .unwrap()
        .set(0x6077, 0, -42);
    bus.fprd(ST, 0x1180, 12);
    let d = bus.fprd(ST, 0x1180, 12).data;
    assert_eq!(u16::from_le_bytes([d[0], d[1]]) & 0x4F, 0x40);
    assert_eq!(
        i16::from_le_bytes([d[10], d[11]]),
        0,
        "torque is 0 while disabled"
    );
    assert_eq!(bus.net.subdevice(0).unwrap().inputs().len(), 12);
    // In SAFEOP the mapping and assignment are locked.
    for (i, s, d) in [
        (0x1A00, 0, &[0u8][..]),
        (0x1C12, 0, &[0]),
        (0x1600, 1, &[0; 4]),
    ] {
        assert_eq!(
            bus.sdo_download(&mut m, i, s, false, d),
            Err(A::DEVICE_STATE),
            "{i:04X}"
        );
    }
    assert_eq!(
        bus.sdo_download(&mut m, 0x1C13, 0, true, &[1, 0, 0, 0x1A]),
        Err(A::DEVICE_STATE)
    );
    // Power-cycle: back to the default mapping.
    bus.net.power_cycle(0).unwrap();
    bus.assign_addresses();
    bus.mailbox_preop(&m);
    m.counter = 0;
    assert_eq!(bus.sdo_int(&mut m, 0x1A00, 0), 3);
}

#[test]
fn assignment_by_complete_access_and_remapped_outputs() {
    let (mut bus, mut m) = Bus::servo_preop();
    // CSP: RxPDO 0x1601 (controlword, target position), TxPDO 0x1A01 (statusword, position,
    // following error), both 6 / 10 bytes.
    bus.sdo_download(&mut m, 0x1C12, 0, true, &[1, 0, 0x01, 0x16])
        .unwrap();
    bus.sdo_download(&mut m, 0x1C13, 0, true, &[1, 0, 0x01, 0x1A])
        .unwrap();
    // A longer output PDO: 0x1603 (cw, target pos, target vel, target torque, mode) = 13.
    bus.sdo_download(&mut m, 0x1C12, 0, false, &[0]).unwrap();
    bus.sdo_download(&mut m, 0x1C12, 1, false, &0x1603u16.to_le_bytes())
        .unwrap();
    bus.sdo_download(&mut m, 0x1C12, 0, false, &[1]).unwrap();
    assert_eq!(safeop(&mut bus, 6, 10), 0x12);
    assert_eq!(bus.fprd16(ST, reg::AL_STATUS_CODE), 0x001D);
    bus.al_request(ST, 0x12);
    assert_eq!(safeop(&mut bus, 13, 10), 0x04);
    // Outputs land in the mapped objects in OP.
    let mut out = [0u8; 13];
    out[..2].copy_from_slice(&0x0006u16.to_le_bytes());
    out[2..6].copy_from_slice(&1234i32.to_le_bytes());
    out[6..10].copy_from_slice(&(-5i32).to_le_bytes());
    out[10..12].copy_from_slice(&77i16.to_le_bytes());
    out[12] = 8;
    bus.fpwr(ST, 0x1100, &out);
    assert_eq!(bus.al_request(ST, 0x08), 0x08);
    bus.fpwr(ST, 0x1100, &out);
    let od = bus.net.subdevice(0).unwrap().od().unwrap();
    let vals: Vec<i64> = [0x6040, 0x607A, 0x60FF, 0x6071, 0x6060]
        .iter()
        .map(|&i| od.get(i, 0).unwrap())
        .collect();
    assert_eq!(vals, [6, 1234, -5, 77, 8]);
    // Leaving OP: the mapped outputs get the safe value 0 once.
    assert_eq!(bus.al_request(ST, 0x04), 0x04);
    bus.fprd(ST, reg::AL_STATUS, 2);
    let od = bus.net.subdevice(0).unwrap().od().unwrap();
    assert_eq!((od.get(0x6040, 0), od.get(0x607A, 0)), (Some(0), Some(0)));
}

#[test]
fn invalid_mappings_and_assignments_are_refused() {
    let (mut bus, mut m) = Bus::servo_preop();
    // Entries are writable only while SI0 = 0.
    let w = |v: u32| v.to_le_bytes();
    assert_eq!(
        bus.sdo_download(&mut m, 0x1600, 1, false, &w(0x6040_0010)),
        Err(A::SUBINDEX_CANNOT_BE_WRITTEN)
    );
    bus.sdo_download(&mut m, 0x1600, 0, false, &[0]).unwrap();
    // Not RxPDO-mappable, unknown object, wrong length → 0x06040041.
    for e in [0x6041_0010, 0x5555_0010, 0x6040_0020] {
        assert_eq!(
            bus.sdo_download(&mut m, 0x1600, 1, false, &w(e)),
            Err(A::NOT_MAPPABLE)
        );
    }
    // A gap is fine.
    bus.sdo_download(&mut m, 0x1600, 1, false, &w(0x0000_0008))
        .unwrap();
    // More entries than the object holds.
    assert_eq!(
        bus.sdo_download(&mut m, 0x1600, 0, false, &[9]),
        Err(A::VALUE_TOO_HIGH)
    );
    // 8 × 32 bits = 32 bytes (the limit) is accepted; with 0x1601 the SM exceeds it.
    bus.sdo_download(
        &mut m,
        0x1600,
        0,
        true,
        &[8, 0]
            .into_iter()
            .chain(u32s(&[0x607A_0020; 8]))
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    assert_eq!(
        bus.sdo_download(&mut m, 0x1C12, 0, true, &[2, 0, 0x00, 0x16, 0x01, 0x16]),
        Err(A::PDO_TOO_LONG)
    );
    assert_eq!(
        bus.sdo_int(&mut m, 0x1C12, 0),
        1,
        "a refused CA write changes nothing"
    );
    // Assignment: only existing mapping objects of the SM's direction, each once.
    bus.sdo_download(&mut m, 0x1C12, 0, false, &[0]).unwrap();
    for pdo in [0x1604u16, 0x1A00, 0x6040] {
        let r = bus.sdo_download(&mut m, 0x1C12, 1, false, &pdo.to_le_bytes());
        assert_eq!(r, Err(A::VALUE_RANGE), "{pdo:04X}");
    }
    assert_eq!(
        bus.sdo_download(&mut m, 0x1C13, 0, true, &[2, 0, 0, 0x1A, 0, 0x1A]),
        Err(A::VALUE_RANGE)
    );
    // SI0 of an assignment with an empty entry (0) is refused.
    assert_eq!(
        bus.sdo_download(&mut m, 0x1C12, 2, false, &[0, 0]),
        Err(A::VALUE_RANGE)
    );
    // EL4132: fixed PDOs (mapping read-only) but assignable.
    let mut io = Bus::preset("io");
    io.assign_addresses();
    let mut el = Mbx {
        station: 0x1004,
        out: (0x1800, 246),
        inp: (0x18F6, 246),
        counter: 0,
    };
    io.mailbox_preop(&el);
    assert_eq!(
        io.sdo_download(&mut el, 0x1600, 0, false, &[0]),
        Err(A::READ_ONLY)
    );
    io.sdo_download(&mut el, 0x1C12, 0, false, &[0]).unwrap();
    io.sdo_download(&mut el, 0x1C12, 1, false, &0x1601u16.to_le_bytes())
        .unwrap();
    io.sdo_download(&mut el, 0x1C12, 0, false, &[1]).unwrap();
    io.fpwr(0x1004, reg::sm(2), &sm_bytes(0x1000, 4, 0x24, true));
    assert_eq!(
        io.al_request(0x1004, 0x04),
        0x12,
        "4 bytes refused: only channel 2"
    );
    io.al_request(0x1004, 0x12);
    io.fpwr(0x1004, reg::sm(2), &sm_bytes(0x1000, 2, 0x24, false));
    io.fpwr(0x1004, reg::sm(2), &sm_bytes(0x1000, 2, 0x24, true));
    assert_eq!(io.al_request(0x1004, 0x04), 0x04);
}

#[test]
fn servo6_preset_has_six_drives_with_96_bytes() {
    let mut bus = Bus::preset("servo6");
    assert_eq!(bus.assign_addresses(), 6);
    let mut total = 0;
    for k in 0..6u16 {
        let st = 0x1001 + k;
        let mut m = Mbx::standard(st);
        bus.mailbox_preop(&m);
        assert_eq!(bus.sdo_int(&mut m, 0x1018, 4), k as i64 + 1, "serial");
        bus.fpwr(st, reg::sm(2), &sm_bytes(0x1100, 6, 0x64, true));
        bus.fpwr(st, reg::sm(3), &sm_bytes(0x1180, 10, 0x20, true));
        assert_eq!(bus.al_request(st, 0x04), 0x04);
        total += bus.net.subdevice(k as usize).unwrap().inputs().len() + 6;
    }
    assert_eq!(total, 96);
}
