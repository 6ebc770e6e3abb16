//! The SyncManager checks of devices with firmware follow the SSC's rules (module
//! `esc::smcheck`): what they accept whatever the MainDevice's own habits, and what they
//! refuse with which AL status code. Devices built from the SSC/SOES-style ESI files in
//! testdata/esi-ssc.

mod common;

use common::coe::Mbx;
use common::{sm_bytes, Bus};
use ecat_sim::Network;
use ecat_wire::register as reg;
use std::path::Path;

const ST: u16 = 0x1001;

/// One SubDevice built from `file` of testdata/esi-ssc, addresses assigned.
fn device(file: &str) -> Bus {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/esi-ssc");
    let text = format!("[[subdevice]]\nesi = \"{file}\"\n");
    let mut bus = Bus::new(Network::from_toml_str(&text, "net.toml", &dir).unwrap());
    bus.assign_addresses();
    bus
}

/// The XMC4800 SSC device: ESI MinSize 34, MaxSize 128 (SII 128 at 0x1000/0x1080); SM2
/// outputs 6 bytes at 0x1100, SM3 inputs 6 bytes at 0x1400.
fn ssc() -> Bus {
    device("Infineon_XMC4800_SSC.xml")
}

/// The SOES XMC4800 board: no MinSize/MaxSize in its ESI (SII 128 at 0x1000/0x1080).
fn soes() -> Bus {
    device("SOES_XMC4800_Relax.xml")
}

fn sms(bus: &mut Bus, first: u8, a: [u8; 8], b: [u8; 8]) {
    let mut both = [0u8; 16];
    both[..8].copy_from_slice(&a);
    both[8..].copy_from_slice(&b);
    assert_eq!(bus.fpwr(ST, reg::sm(first), &both), 1);
}

/// Write SM0/SM1 (after clearing them) and request PREOP; (AL status, code).
fn preop_with(bus: &mut Bus, sm0: [u8; 8], sm1: [u8; 8]) -> (u16, u16) {
    bus.al_request(ST, 0x11);
    bus.fpwr(ST, reg::SM0, &[0; 16]);
    sms(bus, 0, sm0, sm1);
    let st = bus.al_request(ST, 0x12);
    (st, bus.fprd16(ST, reg::AL_STATUS_CODE))
}

fn mbx(bus: &mut Bus, out: (u16, u16, u8), inp: (u16, u16, u8)) -> (u16, u16) {
    preop_with(
        bus,
        sm_bytes(out.0, out.1, out.2, true),
        sm_bytes(inp.0, inp.1, inp.2, true),
    )
}

const OK: (u16, u16) = (0x02, 0);
const MBX_REFUSED: (u16, u16) = (0x11, 0x0016);

#[test]
fn mailbox_lengths_between_the_esi_limits_and_other_addresses_are_accepted() {
    let mut bus = ssc();
    assert_eq!(mbx(&mut bus, (0x1000, 128, 0x26), (0x1080, 128, 0x22)), OK);
    // Smaller than the SII's 128 but not below MinSize, laid out elsewhere.
    assert_eq!(mbx(&mut bus, (0x1200, 34, 0x26), (0x1300, 64, 0x22)), OK);
    // Event bits off (as some MainDevices write): only mode and direction count.
    assert_eq!(mbx(&mut bus, (0x1000, 128, 0x06), (0x1080, 128, 0x02)), OK);
}

#[test]
fn mailbox_refusals_give_init_with_0x0016() {
    let mut bus = ssc();
    let cases = [
        ("below MinSize", (0x1000, 33, 0x26), (0x1080, 128, 0x22)),
        ("above MaxSize", (0x1000, 130, 0x26), (0x1100, 128, 0x22)),
        ("SM0 buffered", (0x1000, 128, 0x24), (0x1080, 128, 0x22)),
        (
            "SM0 read by the MainDevice",
            (0x1000, 128, 0x22),
            (0x1080, 128, 0x22),
        ),
        (
            "SM1 written by the MainDevice",
            (0x1000, 128, 0x26),
            (0x1080, 128, 0x26),
        ),
        ("areas overlap", (0x1000, 128, 0x26), (0x1040, 128, 0x22)),
    ];
    for (what, out, inp) in cases {
        assert_eq!(mbx(&mut bus, out, inp), MBX_REFUSED, "{what}");
    }
    let ram_end = 0x1000 + bus.fprd(ST, 0x0006, 1).data[0] as u16 * 1024;
    assert_eq!(
        mbx(&mut bus, (ram_end - 64, 128, 0x26), (0x1000, 128, 0x22)),
        MBX_REFUSED,
        "SM0 past the end of the process RAM"
    );
    let off = preop_with(
        &mut bus,
        sm_bytes(0x1000, 128, 0x26, true),
        sm_bytes(0x1080, 128, 0x22, false),
    );
    assert_eq!(off, MBX_REFUSED, "SM1 not enabled");
    // Back to a good configuration: accepted again.
    assert_eq!(mbx(&mut bus, (0x1000, 128, 0x26), (0x1080, 128, 0x22)), OK);
}

#[test]
fn without_esi_limits_the_minimum_is_34_and_the_maximum_the_sii_size() {
    let mut bus = soes();
    assert_eq!(mbx(&mut bus, (0x1000, 34, 0x26), (0x1080, 34, 0x22)), OK);
    assert_eq!(
        mbx(&mut bus, (0x1000, 33, 0x26), (0x1080, 128, 0x22)),
        MBX_REFUSED
    );
    assert_eq!(
        mbx(&mut bus, (0x1000, 128, 0x26), (0x1080, 129, 0x22)),
        MBX_REFUSED
    );
}

/// The SSC device in PREOP with its standard mailbox.
fn ssc_preop() -> Bus {
    let mut bus = ssc();
    assert_eq!(mbx(&mut bus, (0x1000, 128, 0x26), (0x1080, 128, 0x22)), OK);
    bus
}

/// Write SM2/SM3 in PREOP and request SAFEOP; (AL status, code). The device is taken back
/// to PREOP (acknowledged, SMs cleared) first.
fn safeop_with(bus: &mut Bus, sm2: [u8; 8], sm3: [u8; 8]) -> (u16, u16) {
    bus.al_request(ST, 0x12);
    bus.fpwr(ST, reg::sm(2), &[0; 16]);
    sms(bus, 2, sm2, sm3);
    let st = bus.al_request(ST, 0x04);
    (st, bus.fprd16(ST, reg::AL_STATUS_CODE))
}

const SAFEOP: (u16, u16) = (0x04, 0);
const OUT_REFUSED: (u16, u16) = (0x12, 0x001D);
const IN_REFUSED: (u16, u16) = (0x12, 0x001E);

#[test]
fn process_data_sms_anywhere_in_ram_with_any_event_bits_are_accepted() {
    let mut bus = ssc_preop();
    let good_in = sm_bytes(0x1400, 6, 0x20, true);
    assert_eq!(
        safeop_with(&mut bus, sm_bytes(0x1100, 6, 0x64, true), good_in),
        SAFEOP
    );
    // Without the watchdog bit the SII sets, elsewhere in RAM.
    let moved_in = sm_bytes(0x1800, 6, 0x00, true);
    assert_eq!(
        safeop_with(&mut bus, sm_bytes(0x1600, 6, 0x24, true), moved_in),
        SAFEOP
    );
}

#[test]
fn process_data_refusals_name_the_sm_at_fault() {
    let mut bus = ssc_preop();
    let good_out = sm_bytes(0x1100, 6, 0x64, true);
    let good_in = sm_bytes(0x1400, 6, 0x20, true);
    let out_cases = [
        ("length 0 but enabled", sm_bytes(0x1100, 0, 0x64, true)),
        (
            "length differs from the PDOs",
            sm_bytes(0x1100, 4, 0x64, true),
        ),
        ("read by the MainDevice", sm_bytes(0x1100, 6, 0x60, true)),
        ("1-buffer (not modelled)", sm_bytes(0x1100, 6, 0x66, true)),
        ("PDOs but not enabled", sm_bytes(0x1100, 6, 0x64, false)),
        ("buffers reach into SM3", sm_bytes(0x13F0, 6, 0x64, true)),
    ];
    for (what, sm2) in out_cases {
        assert_eq!(safeop_with(&mut bus, sm2, good_in), OUT_REFUSED, "{what}");
    }
    let in_cases = [
        ("written by the MainDevice", sm_bytes(0x1400, 6, 0x24, true)),
        (
            "buffers reach into the mailbox",
            sm_bytes(0x1070, 6, 0x20, true),
        ),
    ];
    for (what, sm3) in in_cases {
        assert_eq!(safeop_with(&mut bus, good_out, sm3), IN_REFUSED, "{what}");
    }
    // Inputs are checked first, as the SSC does.
    let bad_out = sm_bytes(0x1100, 2, 0x64, true);
    let bad_in = sm_bytes(0x1400, 2, 0x20, true);
    assert_eq!(safeop_with(&mut bus, bad_out, bad_in), IN_REFUSED);
    assert_eq!(safeop_with(&mut bus, good_out, good_in), SAFEOP);
}

#[test]
fn an_sm_without_pdos_must_be_disabled_with_length_0() {
    // The SOES board's RxPDO assignment is writable in PREOP: assign none, SM2 has no PDOs.
    let mut bus = soes();
    let mut m = Mbx::standard(ST);
    bus.mailbox_preop(&m);
    bus.sdo_download(&mut m, 0x1C12, 0, false, &[0]).unwrap();
    let good_in = sm_bytes(0x1180, 6, 0x20, true);
    let cases = [
        (
            "enabled with length 0",
            sm_bytes(0x1100, 0, 0x24, true),
            OUT_REFUSED,
        ),
        (
            "disabled, length left at 3",
            sm_bytes(0x1100, 3, 0x24, false),
            OUT_REFUSED,
        ),
        (
            "disabled, length 0",
            sm_bytes(0x1100, 0, 0x24, false),
            SAFEOP,
        ),
    ];
    for (what, sm2, want) in cases {
        assert_eq!(safeop_with(&mut bus, sm2, good_in), want, "{what}");
    }
}

#[test]
fn from_safeop_the_process_data_sms_must_stay_where_they_were() {
    let mut bus = ssc_preop();
    let good_in = sm_bytes(0x1400, 6, 0x20, true);
    assert_eq!(
        safeop_with(&mut bus, sm_bytes(0x1100, 6, 0x64, true), good_in),
        SAFEOP
    );
    assert_eq!(
        bus.al_request(ST, 0x04),
        0x04,
        "SAFEOP again: nothing moved"
    );
    // Disable SM2, move it, enable it again: the next request is refused.
    bus.fpwr(ST, reg::sm(2), &[0; 8]);
    bus.fpwr(ST, reg::sm(2), &sm_bytes(0x1200, 6, 0x64, true));
    assert_eq!(bus.al_request(ST, 0x04), 0x12);
    assert_eq!(bus.fprd16(ST, reg::AL_STATUS_CODE), 0x001D);
}

#[test]
fn device_emulation_mirrors_whatever_the_sms_hold() {
    let mut bus = device("ABT_EasyCAT_LAN9252.xml");
    assert_eq!(bus.al_request(ST, 0x02), 0x02);
    assert_eq!(
        bus.al_request(ST, 0x04),
        0x04,
        "no SM configured, still SAFEOP"
    );
    assert_eq!(bus.fprd16(ST, reg::AL_STATUS_CODE), 0);
}
