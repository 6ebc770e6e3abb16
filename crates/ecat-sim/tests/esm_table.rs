//! The firmware state machine, transition by transition: one table row per (state, request)
//! with the AL status and code a device running ETG's slave stack (SSC) shows afterwards,
//! then the timed paths of a pending SAFEOP→OP request (see `esc::al` for the rules), and the
//! DC SYNC check of PREOP→SAFEOP on devices that need SYNC0 (an EL1258 built from the ESI
//! test data, whose one DC mode has AssignActivate 0x0300) and on devices that can run free.
//!
//! The device under test is a CiA 402 drive (mailbox, 6 output bytes in SM2 at 0x1100, 10
//! input bytes in SM3 at 0x1180); an EL3102 (inputs only) stands for devices without outputs.

mod common;

use common::{sm_bytes, Bus};
use ecat_sim::sii_info::SmKind;
use ecat_sim::Network;
use ecat_wire::register as reg;
use std::path::Path;

const SERVO: u16 = 0x1001;
const AIN: u16 = 0x1002;
/// The SAFEOP→OP timeout configured for the drive in these tests.
const TIMEOUT_MS: u64 = 50;

fn bus() -> Bus {
    let text = format!(
        "safeop_op_timeout_ms = 70\n\
         [[subdevice]]\nmodel = \"ECAT-SERVO-402\"\nsafeop_op_timeout_ms = {TIMEOUT_MS}\n\
         [[subdevice]]\nmodel = \"EL3102\"\n"
    );
    let net = Network::from_toml_str(&text, "esm.toml", Path::new(".")).unwrap();
    let mut bus = Bus::new(net);
    assert_eq!(bus.assign_addresses(), 2);
    bus
}

fn mailbox(bus: &mut Bus, st: u16) {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&sm_bytes(0x1000, 128, 0x26, true));
    b[8..].copy_from_slice(&sm_bytes(0x1080, 128, 0x22, true));
    assert_eq!(bus.fpwr(st, reg::SM0, &b), 1);
}

fn outputs(bus: &mut Bus) -> u16 {
    bus.fpwr(SERVO, 0x1100, &[0x06, 0, 0, 0, 0, 0])
}

fn status(bus: &mut Bus, st: u16) -> (u16, u16) {
    (
        bus.fprd16(st, reg::AL_STATUS),
        bus.fprd16(st, reg::AL_STATUS_CODE),
    )
}

fn pending(bus: &Bus) -> bool {
    bus.net.subdevice(0).unwrap().op_request_pending()
}

/// Where a table row starts.
#[derive(Debug, Clone, Copy)]
enum Start {
    /// INIT with the mailbox SMs written.
    Init,
    /// INIT without mailbox SMs.
    InitBare,
    /// PREOP with both process-data SMs written.
    PreOp,
    /// PREOP with SM3 but no SM2.
    PreOpNoSm2,
    /// SAFEOP, no outputs received yet.
    SafeOp,
    /// SAFEOP after one complete output buffer.
    SafeOpOutputs,
    /// SAFEOP with SM0 disabled by the MainDevice.
    SafeOpNoMbx,
    /// OP.
    Op,
    /// OP with SM3 disabled by the MainDevice.
    OpNoSm3,
    /// SAFEOP+ERR 0x0011 (after a SAFEOP→BOOT request).
    SafeOpErr,
    /// SAFEOP with an OP request waiting for outputs.
    Pending,
}

fn start(from: Start) -> Bus {
    use Start::*;
    let mut bus = bus();
    let st = SERVO;
    if matches!(from, InitBare) {
        return bus;
    }
    mailbox(&mut bus, st);
    if matches!(from, Init) {
        return bus;
    }
    assert_eq!(bus.al_request(st, 0x02), 0x02);
    if !matches!(from, PreOpNoSm2) {
        assert_eq!(
            bus.fpwr(st, reg::sm(2), &sm_bytes(0x1100, 6, 0x64, true)),
            1
        );
    }
    assert_eq!(
        bus.fpwr(st, reg::sm(3), &sm_bytes(0x1180, 10, 0x20, true)),
        1
    );
    if matches!(from, PreOp | PreOpNoSm2) {
        return bus;
    }
    assert_eq!(bus.al_request(st, 0x04), 0x04);
    match from {
        SafeOpOutputs | Op | OpNoSm3 => assert_eq!(outputs(&mut bus), 1),
        SafeOpNoMbx => assert_eq!(bus.fpwr(st, reg::SM0 + 6, &[0]), 1),
        SafeOpErr => assert_eq!(bus.al_request(st, 0x03), 0x14),
        Pending => assert_eq!(bus.al_request(st, 0x08), 0x04),
        _ => {}
    }
    if matches!(from, Op | OpNoSm3) {
        assert_eq!(bus.al_request(st, 0x08), 0x08);
    }
    if matches!(from, OpNoSm3) {
        assert_eq!(bus.fpwr(st, reg::sm(3) + 6, &[0]), 1);
    }
    bus
}

/// (start, AL control written, AL status after, AL status code after, OP request pending)
#[rustfmt::skip]
const TABLE: &[(Start, u16, u16, u16, bool)] = {
    use Start::*;
    &[
        // INIT
        (Init,       0x01, 0x01, 0x0000, false),
        (Init,       0x02, 0x02, 0x0000, false),
        (InitBare,   0x02, 0x11, 0x0016, false), // mailbox SMs not written
        (Init,       0x04, 0x11, 0x0011, false),
        (Init,       0x08, 0x11, 0x0011, false),
        (Init,       0x03, 0x11, 0x0013, false), // the drive has no bootstrap mailbox
        (Init,       0x05, 0x11, 0x0012, false),
        // PREOP
        (PreOp,      0x02, 0x02, 0x0000, false),
        (PreOp,      0x04, 0x04, 0x0000, false),
        (PreOpNoSm2, 0x04, 0x12, 0x001D, false),
        (PreOp,      0x08, 0x12, 0x0011, false),
        (PreOp,      0x03, 0x12, 0x0011, false),
        (PreOp,      0x01, 0x01, 0x0000, false),
        // SAFEOP: OP waits for the first outputs unless they came already
        (SafeOp,     0x08, 0x04, 0x0000, true),
        (SafeOpOutputs, 0x08, 0x08, 0x0000, false),
        (SafeOp,     0x04, 0x04, 0x0000, false),
        (SafeOp,     0x02, 0x02, 0x0000, false),
        (SafeOp,     0x01, 0x01, 0x0000, false),
        (SafeOp,     0x03, 0x14, 0x0011, false),
        (SafeOp,     0x09, 0x14, 0x0012, false),
        (SafeOpNoMbx, 0x04, 0x11, 0x0016, false), // SM re-check: mailbox gone → INIT
        (SafeOpNoMbx, 0x08, 0x11, 0x0016, false),
        // OP: refusals fall back to SAFEOP
        (Op,         0x08, 0x08, 0x0000, false),
        (Op,         0x04, 0x04, 0x0000, false),
        (Op,         0x02, 0x02, 0x0000, false),
        (Op,         0x01, 0x01, 0x0000, false),
        (Op,         0x03, 0x14, 0x0011, false),
        (Op,         0x0F, 0x14, 0x0012, false),
        (OpNoSm3,    0x04, 0x12, 0x001E, false), // SM re-check: inputs gone → PREOP
        (OpNoSm3,    0x08, 0x12, 0x001E, false),
        // Error flag: ignored without acknowledge, except INIT
        (SafeOpErr,  0x08, 0x14, 0x0011, false),
        (SafeOpErr,  0x02, 0x14, 0x0011, false),
        (SafeOpErr,  0x04, 0x14, 0x0011, false),
        (SafeOpErr,  0x01, 0x01, 0x0000, false),
        (SafeOpErr,  0x11, 0x01, 0x0000, false),
        (SafeOpErr,  0x12, 0x02, 0x0000, false),
        (SafeOpErr,  0x14, 0x04, 0x0000, false),
        (SafeOpErr,  0x13, 0x14, 0x0011, false),
        // Acknowledged OP request: pending; the register keeps the old error until it completes
        (SafeOpErr,  0x18, 0x14, 0x0011, true),
        // While pending: any processed request ends the wait; OP restarts it
        (Pending,    0x04, 0x04, 0x0000, false),
        (Pending,    0x02, 0x02, 0x0000, false),
        (Pending,    0x01, 0x01, 0x0000, false),
        (Pending,    0x08, 0x04, 0x0000, true),
        (Pending,    0x03, 0x14, 0x0011, false),
    ]
};

#[test]
fn every_transition_of_the_table() {
    let mut failures = Vec::new();
    for &(from, write, want_status, want_code, want_pending) in TABLE {
        let mut bus = start(from);
        bus.al_request(SERVO, write);
        let got = status(&mut bus, SERVO);
        let p = pending(&bus);
        if got != (want_status, want_code) || p != want_pending {
            failures.push(format!(
                "{from:?} + AL control 0x{write:02X}: AL status 0x{:02X} code 0x{:04X} pending {p}, want 0x{want_status:02X} code 0x{want_code:04X} pending {want_pending}",
                got.0, got.1
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn pending_op_completes_with_the_first_complete_output_buffer() {
    let mut bus = start(Start::Pending);
    // Half a buffer does not count: the last byte completes it.
    assert_eq!(bus.fpwr(SERVO, 0x1100, &[0x06, 0, 0]), 1);
    assert_eq!(status(&mut bus, SERVO), (0x04, 0));
    assert!(pending(&bus));
    assert_eq!(outputs(&mut bus), 1);
    assert_eq!(status(&mut bus, SERVO), (0x08, 0));
    assert!(!pending(&bus));
    assert_eq!(bus.net.outputs(0).unwrap()[0], 0x06, "applied in OP");
}

#[test]
fn acknowledged_op_request_completes_and_clears_the_old_error() {
    let mut bus = start(Start::SafeOpErr);
    assert_eq!(bus.al_request(SERVO, 0x18), 0x14);
    // Pending with the flag dropped inside the firmware: a request without ack is processed.
    assert_eq!(bus.al_request(SERVO, 0x08), 0x14);
    assert!(pending(&bus));
    outputs(&mut bus);
    assert_eq!(status(&mut bus, SERVO), (0x08, 0));
}

#[test]
fn pending_op_times_out_with_0x001b_not_before() {
    let mut bus = start(Start::Pending);
    let t0 = bus.now;
    // Poll AL status like a MainDevice until just before the timeout: still SAFEOP, no error.
    while bus.now + 1_000_000 < t0 + TIMEOUT_MS * 1_000_000 {
        assert_eq!(
            status(&mut bus, SERVO),
            (0x04, 0),
            "at {} µs",
            (bus.now - t0) / 1000
        );
        bus.now += 1_000_000;
    }
    bus.now = t0 + TIMEOUT_MS * 1_000_000;
    assert_eq!(status(&mut bus, SERVO), (0x14, 0x001B));
    assert!(!pending(&bus));
    // Outputs arriving late change nothing; acknowledge, then OP with valid outputs at once.
    outputs(&mut bus);
    assert_eq!(status(&mut bus, SERVO), (0x14, 0x001B));
    assert_eq!(bus.al_request(SERVO, 0x14), 0x04);
    outputs(&mut bus);
    assert_eq!(bus.al_request(SERVO, 0x08), 0x08);
}

#[test]
fn a_new_op_request_restarts_the_wait() {
    let mut bus = start(Start::Pending);
    bus.now += (TIMEOUT_MS - 10) * 1_000_000;
    assert_eq!(bus.al_request(SERVO, 0x08), 0x04);
    bus.now += 20 * 1_000_000;
    assert_eq!(
        status(&mut bus, SERVO),
        (0x04, 0),
        "past the first deadline"
    );
    bus.now += TIMEOUT_MS * 1_000_000;
    assert_eq!(status(&mut bus, SERVO), (0x14, 0x001B));
}

#[test]
fn devices_without_outputs_go_to_op_at_once() {
    let mut bus = bus();
    mailbox(&mut bus, AIN);
    assert_eq!(bus.al_request(AIN, 0x02), 0x02);
    assert_eq!(
        bus.fpwr(AIN, reg::sm(3), &sm_bytes(0x1180, 6, 0x20, true)),
        1
    );
    assert_eq!(bus.al_request(AIN, 0x04), 0x04);
    assert_eq!(bus.al_request(AIN, 0x08), 0x08);
    assert!(!bus.net.subdevice(1).unwrap().op_request_pending());
}

#[test]
fn a_watchdog_expiry_in_safeop_forgets_the_outputs() {
    let mut bus = start(Start::SafeOpOutputs);
    // Silence on SM2 for more than the 100 ms watchdog, with frames passing.
    bus.now += 100_000_001;
    status(&mut bus, SERVO);
    assert!(bus.net.subdevice(0).unwrap().watchdog_expired());
    assert_eq!(bus.al_request(SERVO, 0x08), 0x04, "waits for new outputs");
    assert!(pending(&bus));
    outputs(&mut bus);
    assert_eq!(status(&mut bus, SERVO), (0x08, 0));
}

#[test]
fn timeouts_come_from_the_network_file() {
    let bus = bus();
    let t = |p: usize| bus.net.subdevice(p).unwrap().safeop_op_timeout_ms();
    assert_eq!((t(0), t(1)), (TIMEOUT_MS, 70), "entry, then file default");
    let net = Network::preset("io").unwrap();
    assert_eq!(
        net.subdevice(3).unwrap().safeop_op_timeout_ms(),
        ecat_sim::esc::DEFAULT_SAFEOP_OP_TIMEOUT_MS
    );
    assert_eq!(ecat_sim::esc::DEFAULT_SAFEOP_OP_TIMEOUT_MS, 8_100);
    let e = Network::from_toml_str(
        "[[subdevice]]\nmodel = \"EL9011\"\nsafeop_op_timeout_ms = 5\n",
        "n.toml",
        Path::new("."),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.starts_with("n.toml:3:") && e.contains("passive"), "{e}");
}

/// PREOP with the mailbox and the process-data SMs as the SII gives them, on a one-device
/// network (`entry` is the `[[subdevice]]` table's body), DC activation 0x0981 written
/// with `act` (after a SYNC0 cycle of 1 ms).
fn preop_with_dc_activation(entry: &str, act: u8) -> Bus {
    let esi = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/esi");
    let text = format!("esi_dirs = [\".\"]\n[[subdevice]]\n{entry}\n");
    let mut bus = Bus::new(Network::from_toml_str(&text, "dc.toml", &esi).unwrap());
    assert_eq!(bus.assign_addresses(), 1);
    let st = 0x1001;
    let esc = bus.net.subdevice(0).unwrap();
    let info = esc.info().clone();
    // The process-data sizes the device expects (from its dictionary's PDO assignment).
    let (out_len, in_len) = (esc.outputs().len(), esc.inputs().len());
    if let Some(m) = info.std_mailbox {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&sm_bytes(m.rx_start, m.rx_len, 0x26, true));
        b[8..].copy_from_slice(&sm_bytes(m.tx_start, m.tx_len, 0x22, true));
        assert_eq!(bus.fpwr(st, reg::SM0, &b), 1);
    }
    assert_eq!(bus.al_request(st, 0x02), 0x02, "{entry}");
    for (i, s) in info.sms.iter().enumerate().skip(2) {
        let len = match s.kind {
            SmKind::Outputs => out_len,
            SmKind::Inputs => in_len,
            _ => 0,
        } as u16;
        if len > 0 {
            let sm = sm_bytes(s.start, len, s.control, true);
            assert_eq!(bus.fpwr(st, reg::sm(i as u8), &sm), 1);
        }
    }
    assert_eq!(bus.fpwr(st, 0x09A0, &1_000_000u32.to_le_bytes()), 1);
    assert_eq!(bus.fpwr(st, reg::DC_ACTIVATION, &[act]), 1);
    bus
}

/// (device, 0x0981 written, AL status and code after a SAFEOP request)
#[rustfmt::skip]
const DC_TABLE: &[(&str, u8, u16, u16)] = &[
    // EL1258: its one DC mode (AssignActivate 0x0300) needs the cyclic unit and SYNC0.
    (EL1258, 0x00, 0x12, 0x0030),
    (EL1258, 0x01, 0x12, 0x0030), // cyclic unit without SYNC0
    (EL1258, 0x02, 0x12, 0x0030), // SYNC0 without the cyclic unit
    (EL1258, 0x03, 0x04, 0x0000),
    (EL1258, 0x07, 0x04, 0x0000), // SYNC1 on top does no harm
    (EL1258, 0x0B, 0x04, 0x0000), // bits 3+ (start-time handling) are not SYNC signals
    // The drive (DC 0x0300 or free run) and the EL3102 (free run or DC 0x0700) run without DC.
    (SERVO402, 0x00, 0x04, 0x0000),
    (SERVO402, 0x03, 0x04, 0x0000),
    (EL3102, 0x00, 0x04, 0x0000),
    (EL3102, 0x07, 0x04, 0x0000),
];
const EL1258: &str = "esi = \"Beckhoff_EL1xxx.xml\"\ntype = \"EL1258\"";
const SERVO402: &str = "model = \"ECAT-SERVO-402\"";
const EL3102: &str = "model = \"EL3102\"";

#[test]
fn preop_to_safeop_checks_dc_sync_where_every_dc_mode_needs_it() {
    let mut failures = Vec::new();
    for &(entry, act, want_status, want_code) in DC_TABLE {
        let mut bus = preop_with_dc_activation(entry, act);
        bus.al_request(0x1001, 0x04);
        let got = status(&mut bus, 0x1001);
        if got != (want_status, want_code) {
            failures.push(format!(
                "{entry:?} with 0x0981 = 0x{act:02X}: AL status 0x{:02X} code 0x{:04X}, want 0x{want_status:02X} code 0x{want_code:04X}",
                got.0, got.1
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    // Refused, it stays in PREOP and goes to SAFEOP once SYNC0 is activated and the error
    // acknowledged.
    let mut bus = preop_with_dc_activation(EL1258, 0);
    assert_eq!(bus.al_request(0x1001, 0x04), 0x12);
    assert_eq!(bus.fpwr(0x1001, reg::DC_ACTIVATION, &[0x03]), 1);
    assert_eq!(bus.al_request(0x1001, 0x14), 0x04);
    assert_eq!(status(&mut bus, 0x1001), (0x04, 0));
}
