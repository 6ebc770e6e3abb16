//! The CiA 402 servo drive through its process data and its object dictionary: enable
//! sequence, velocity following within the limits, following-error fault with emergency
//! and 0x603F, fault reset, profile position.

mod common;

use common::coe::Mbx;
use common::{sm_bytes, Bus};
use ecat_wire::coe::parse_emergency;
use ecat_wire::register as reg;

const ST: u16 = 0x1001;
/// 2 rad/s in increments/s (2^20 increments per revolution).
const TWO_RAD_S: i32 = 333_772;

/// The servo in OP with (6 out, 10 in) bytes of process data; `setup` runs in PREOP.
fn op(setup: impl FnOnce(&mut Bus, &mut Mbx)) -> (Bus, Mbx) {
    let (mut bus, mut m) = Bus::servo_preop();
    setup(&mut bus, &mut m);
    bus.fpwr(ST, reg::sm(2), &sm_bytes(0x1100, 6, 0x64, true));
    bus.fpwr(ST, reg::sm(3), &sm_bytes(0x1180, 10, 0x20, true));
    assert_eq!(bus.al_request(ST, 0x04), 0x04);
    bus.fpwr(ST, 0x1100, &[0; 6]);
    assert_eq!(bus.al_request(ST, 0x08), 0x08);
    (bus, m)
}

/// One cycle 100 µs after the previous one: write the outputs, read the inputs
/// (statusword, second and third value).
fn cycle(bus: &mut Bus, cw: u16, value: i32) -> (u16, i32, i32) {
    bus.now += 100_000 - 20_000;
    let mut out = [0u8; 6];
    out[..2].copy_from_slice(&cw.to_le_bytes());
    out[2..].copy_from_slice(&value.to_le_bytes());
    assert_eq!(bus.fpwr(ST, 0x1100, &out), 1);
    let d = bus.fprd(ST, 0x1180, 10).data;
    let i = |k: usize| i32::from_le_bytes([d[k], d[k + 1], d[k + 2], d[k + 3]]);
    (u16::from_le_bytes([d[0], d[1]]), i(2), i(6))
}

fn run(bus: &mut Bus, cw: u16, value: i32, cycles: usize) -> (u16, i32, i32) {
    let mut r = cycle(bus, cw, value);
    for _ in 1..cycles {
        r = cycle(bus, cw, value);
    }
    r
}

/// Shutdown, switch on, enable operation; returns the statusword.
fn enable(bus: &mut Bus, value: i32) -> u16 {
    assert_eq!(
        run(bus, 0x06, value, 2).0 & 0x6F,
        0x21,
        "ready to switch on"
    );
    assert_eq!(run(bus, 0x07, value, 2).0 & 0x6F, 0x23, "switched on");
    let sw = run(bus, 0x0F, value, 2).0;
    assert_eq!(sw & 0x6F, 0x27, "operation enabled");
    sw
}

#[test]
fn enable_sequence_statuswords() {
    let (mut bus, _) = op(|_, _| {});
    let (sw, _, _) = cycle(&mut bus, 0, 0);
    assert_eq!(sw, 0x0240, "switch on disabled + remote");
    assert_eq!(run(&mut bus, 0x06, 0, 2).0, 0x0221);
    assert_eq!(run(&mut bus, 0x07, 0, 2).0, 0x0233);
    let sw = run(&mut bus, 0x0F, 0, 2).0;
    assert_eq!(sw & 0x02FF, 0x0237, "operation enabled, voltage, remote");
    assert_ne!(sw & 0x0400, 0, "target (0) reached");
    // Quick stop (option code 2): brake, then switch on disabled.
    let (sw, _, _) = cycle(&mut bus, 0x02, 0);
    assert_eq!(
        sw & 0x6F,
        0x40,
        "already stopped: through quick stop to disabled"
    );
    // Disable voltage from operation enabled.
    enable(&mut bus, 0);
    assert_eq!(cycle(&mut bus, 0x00, 0).0 & 0x4F, 0x40);
    // Leaving OP forces the controlword to its safe value 0.
    enable(&mut bus, 0);
    assert_eq!(bus.al_request(ST, 0x04), 0x04);
    bus.now += 1_000_000;
    let d = bus.fprd(ST, 0x1180, 10).data;
    bus.fprd(ST, 0x1180, 10);
    let d2 = bus.fprd(ST, 0x1180, 10).data;
    assert_eq!(u16::from_le_bytes([d2[0], d2[1]]) & 0x4F, 0x40, "{d:?}");
}

#[test]
fn velocity_follows_within_the_limits() {
    let (mut bus, mut m) = op(|bus, m| {
        // Acceleration limit 100 rev/s² (104 857 600 inc/s²).
        bus.sdo_download(m, 0x60C5, 0, false, &104_857_600u32.to_le_bytes())
            .unwrap();
    });
    enable(&mut bus, 0);
    // 2 rad/s: reached after 333 772 / 104 857 600 s ≈ 3.2 ms.
    let (_, _, v) = cycle(&mut bus, 0x0F, TWO_RAD_S);
    assert!(v > 0 && v < 30_000, "ramping: {v}");
    let (sw, _, v) = run(&mut bus, 0x0F, TWO_RAD_S, 10);
    assert!(
        (100_000..130_000).contains(&v),
        "still ramping at 1.1 ms: {v}"
    );
    assert_eq!(sw & 0x0400, 0, "target not reached yet");
    let (sw, p0, v) = run(&mut bus, 0x0F, TWO_RAD_S, 40);
    assert_eq!(v, TWO_RAD_S);
    assert_ne!(sw & 0x0400, 0, "target reached");
    let (_, p1, _) = run(&mut bus, 0x0F, TWO_RAD_S, 100);
    let expect = TWO_RAD_S as f64 * 0.01;
    assert!(
        ((p1 - p0) as f64 - expect).abs() < 10.0,
        "10 ms at 2 rad/s: {}",
        p1 - p0
    );
    // Torque actual at constant speed: viscous friction only (small, positive).
    let t = bus.sdo_int(&mut m, 0x6077, 0);
    assert!((0..10).contains(&t), "torque {t}");
    // Above the maximum profile velocity (50 rev/s): clamped, internal limit active.
    let max_acc = (2000u32 << 20).to_le_bytes();
    bus.sdo_download(&mut m, 0x60C5, 0, false, &max_acc)
        .unwrap();
    let (sw, _, v) = run(&mut bus, 0x0F, 60 << 20, 1000);
    assert_eq!(v, 50 << 20);
    assert_ne!(sw & 0x0800, 0, "internal limit active");
    // The limit can be lowered over CoE in OP.
    bus.sdo_download(&mut m, 0x607F, 0, false, &(TWO_RAD_S as u32).to_le_bytes())
        .unwrap();
    let (_, _, v) = run(&mut bus, 0x0F, 60 << 20, 1000);
    assert_eq!(v, TWO_RAD_S);
    // Halt (bit 8) stops the motor.
    let (sw, _, v) = run(&mut bus, 0x10F, TWO_RAD_S, 100);
    assert_eq!(v, 0);
    assert_ne!(sw & 0x0400, 0);
}

#[test]
fn following_error_faults_with_emergency_and_reset_clears_it() {
    // CSP with RxPDO 0x1601 (controlword, target position) and TxPDO 0x1A01 (statusword,
    // position, following error).
    let (mut bus, mut m) = op(|bus, m| {
        bus.sdo_download(m, 0x6060, 0, false, &[8]).unwrap();
        bus.sdo_download(m, 0x1C12, 0, true, &[1, 0, 0x01, 0x16])
            .unwrap();
        bus.sdo_download(m, 0x1C13, 0, true, &[1, 0, 0x01, 0x1A])
            .unwrap();
    });
    assert_eq!(bus.sdo_int(&mut m, 0x6061, 0), 8, "CSP displayed");
    enable(&mut bus, 0);
    // Small moves are followed.
    let mut target = 0;
    for _ in 0..100 {
        target += 300; // 3 000 000 inc/s
        let (sw, _, fe) = cycle(&mut bus, 0x0F, target);
        assert_eq!(sw & 0x2008, 0, "no following error, no fault: fe {fe}");
    }
    // A jump of 10 revolutions: the error exceeds the window (1/8 rev) for more than 10 ms.
    target += 10 << 20;
    let (sw, _, fe) = cycle(&mut bus, 0x0F, target);
    assert!(fe > 1 << 17, "{fe}");
    assert_ne!(sw & 0x2000, 0, "following error bit");
    assert_eq!(sw & 0x0008, 0, "no fault before the time-out");
    assert!(bus.mbx_recv(&m).is_none());
    // Time-out (10 ms), then fault reaction (braking on the quick-stop ramp), then fault.
    let mut states = vec![];
    for _ in 0..1000 {
        let sw = cycle(&mut bus, 0x0F, target).0 & 0x4F;
        if states.last() != Some(&sw) {
            states.push(sw);
        }
    }
    assert_eq!(states, [0x07, 0x0F, 0x08], "enabled, fault reaction, fault");
    // The emergency waits in SM1.
    let e = parse_emergency(&bus.mbx_recv(&m).expect("emergency")).unwrap();
    assert_eq!((e.error_code, e.error_register), (0x8611, 0x21));
    assert_eq!(bus.sdo_int(&mut m, 0x603F, 0) as u16, 0x8611);
    assert_eq!(bus.sdo_int(&mut m, 0x1001, 0), 0x21);
    // Enable commands are ignored in Fault; a rising edge of bit 7 resets.
    assert_eq!(run(&mut bus, 0x0F, target, 3).0 & 0x4F, 0x08);
    assert_eq!(cycle(&mut bus, 0x80, target).0 & 0x4F, 0x40);
    let e = parse_emergency(&bus.mbx_recv(&m).expect("reset emergency")).unwrap();
    assert_eq!(e.error_code, 0, "error reset");
    assert_eq!(bus.sdo_int(&mut m, 0x603F, 0), 0);
    // Back to work with the target at the actual position.
    let (_, pos, _) = cycle(&mut bus, 0x00, target);
    enable(&mut bus, pos);
}

#[test]
fn simulated_fault_and_profile_position() {
    let (mut bus, mut m) = op(|bus, m| {
        bus.sdo_download(m, 0x6060, 0, false, &[1]).unwrap();
        bus.sdo_download(m, 0x1C12, 0, true, &[1, 0, 0x01, 0x16])
            .unwrap();
    });
    enable(&mut bus, 0);
    // New set-point (bit 4): move 1 revolution with the profile (10 rev/s, 100 rev/s²).
    let (sw, _, _) = cycle(&mut bus, 0x1F, 1 << 20);
    assert_ne!(sw & 0x1000, 0, "set-point acknowledged");
    assert_eq!(sw & 0x0400, 0, "moving");
    let (sw, pos, _) = run(&mut bus, 0x0F, 1 << 20, 3000);
    assert_eq!(pos, 1 << 20);
    assert_ne!(sw & 0x0400, 0, "target reached");
    // 0x2002 makes the drive fault with the written code.
    bus.sdo_download(&mut m, 0x2002, 0, false, &0x5530u16.to_le_bytes())
        .unwrap();
    let sw = run(&mut bus, 0x0F, 1 << 20, 2).0;
    assert_eq!(sw & 0x4F, 0x08);
    let e = parse_emergency(&bus.mbx_recv(&m).unwrap()).unwrap();
    assert_eq!(e.error_code, 0x5530);
}
