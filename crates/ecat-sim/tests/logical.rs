//! LRD/LWR/LRW through FMMUs: byte and bit mappings, WKC per direction, SM gating.

mod common;

use common::Bus;
use ecat_wire::datagram::DatagramRepr;
use ecat_wire::register::{self as reg, FmmuRepr, SmRepr};
use ecat_wire::Command;

const EL2008: u16 = 0x1002;
const EL1018: u16 = 0x1003;

fn fmmu(logical: u32, len: u16, start_bit: u8, stop_bit: u8, phys: u16, kind: u8) -> [u8; 16] {
    let mut b = [0u8; 16];
    FmmuRepr {
        logical_start: logical,
        length: len,
        logical_start_bit: start_bit,
        logical_stop_bit: stop_bit,
        physical_start: phys,
        physical_start_bit: 0,
        kind,
        enable: 1,
    }
    .emit(&mut b)
    .unwrap();
    b
}

fn sm(start: u16, control: u8) -> [u8; 8] {
    let mut b = [0u8; 8];
    SmRepr {
        start,
        length: 1,
        control,
        activate: 1,
        ..Default::default()
    }
    .emit(&mut b)
    .unwrap();
    b
}

fn logical(bus: &mut Bus, cmd: Command, addr: u32, data: &[u8]) -> common::Reply {
    bus.send(DatagramRepr::logical(cmd, 7, addr, data.len() as u16), data)
}

fn setup() -> Bus {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    bus.fpwr(EL2008, reg::SM0, &sm(0x0F00, 0x44));
    bus.fpwr(
        EL2008,
        reg::FMMU0,
        &fmmu(0x0001_0000, 1, 0, 7, 0x0F00, FmmuRepr::WRITE),
    );
    bus.fpwr(EL1018, reg::SM0, &sm(0x1000, 0x00));
    bus.fpwr(
        EL1018,
        reg::FMMU0,
        &fmmu(0x0001_0001, 1, 0, 7, 0x1000, FmmuRepr::READ),
    );
    // The EL1018 publishes its inputs from SAFEOP on; in INIT the test plays the PDI.
    bus.net
        .subdevice_mut(2)
        .unwrap()
        .pdi_write_buffered(0, &[0x5C]);
    bus
}

/// The latest outputs the EL2008's PDI side sees (SM0 is a 3-buffer SM the MainDevice writes
/// and cannot read back).
fn el2008_outputs(bus: &mut Bus) -> u8 {
    let mut b = [0u8];
    bus.net
        .subdevice_mut(1)
        .unwrap()
        .pdi_read_buffered(0, &mut b);
    b[0]
}

#[test]
fn lrw_reads_inputs_and_writes_outputs() {
    let mut bus = setup();
    let r = logical(&mut bus, Command::Lrw, 0x0001_0000, &[0xA5, 0x00, 0x77]);
    assert_eq!(r.wkc, 3, "EL2008 outputs +2, EL1018 inputs +1");
    assert_eq!(r.data, [0xA5, 0x5C, 0x77], "unmapped byte passes through");
    assert_eq!(el2008_outputs(&mut bus), 0xA5);
    assert_eq!(bus.fprd(EL2008, 0x0F00, 1).wkc, 0, "output SM not readable");
    assert_eq!(logical(&mut bus, Command::Lrd, 0x0001_0000, &[0, 0]).wkc, 1);
    assert_eq!(
        logical(&mut bus, Command::Lwr, 0x0001_0000, &[0x0F, 0]).wkc,
        1
    );
    assert_eq!(el2008_outputs(&mut bus), 0x0F);
    assert_eq!(
        logical(&mut bus, Command::Lrw, 0x0002_0000, &[0; 4]).wkc,
        0,
        "no FMMU"
    );
}

#[test]
fn bit_granular_mapping_masks() {
    let mut bus = setup();
    // EL1018 bits 0..3 of 0x1000 → logical 0x30000 bits 4..7.
    bus.fpwr(
        EL1018,
        reg::fmmu(1),
        &fmmu(0x0003_0000, 1, 4, 7, 0x1000, FmmuRepr::READ),
    );
    let r = logical(&mut bus, Command::Lrd, 0x0003_0000, &[0x0F]);
    assert_eq!(r.wkc, 1);
    assert_eq!(
        r.data,
        [0xCF],
        "low nibble from the frame, high nibble = memory 0x5C & 0x0F"
    );
    // EL2008: logical bit 0x40000.6 → output bit 0; other bits of the writer's buffer are
    // untouched. The three buffers rotate, so fill all three with 0x80 first.
    for _ in 0..3 {
        bus.fpwr(EL2008, 0x0F00, &[0x80]);
    }
    bus.fpwr(
        EL2008,
        reg::fmmu(1),
        &fmmu(0x0004_0000, 1, 6, 6, 0x0F00, FmmuRepr::WRITE),
    );
    assert_eq!(logical(&mut bus, Command::Lwr, 0x0004_0000, &[0x40]).wkc, 1);
    assert_eq!(el2008_outputs(&mut bus), 0x81);
}

#[test]
fn closed_process_data_sms_do_not_count() {
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    // EL4132 (firmware) in INIT: SM2 configured by the master but kept closed by the firmware.
    bus.fpwr(0x1004, reg::sm(2), &{
        let mut b = sm(0x1000, 0x24);
        b[2] = 4;
        b
    });
    bus.fpwr(
        0x1004,
        reg::FMMU0,
        &fmmu(0x0005_0000, 4, 0, 7, 0x1000, FmmuRepr::WRITE),
    );
    assert_eq!(
        logical(&mut bus, Command::Lwr, 0x0005_0000, &[1, 2, 3, 4]).wkc,
        0
    );
}

#[test]
fn lrw_writes_the_data_as_it_arrived() {
    // One ESC reads and writes the same logical bytes: FMMU 0 reads first, FMMUs 1 and 2 then
    // write what came in, not what FMMU 0 put into the frame (the ESC keeps only the bytes
    // its writing FMMUs cover; this pins that the offsets are right).
    const EK1100: u16 = 0x1001;
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    let esc = bus.net.subdevice_mut(0).unwrap();
    esc.pdi_write(0x0F80, &[0x3C, 0x5A]);
    esc.pdi_write(0x0F90, &[0x00, 0x00]);
    bus.fpwr(
        EK1100,
        reg::fmmu(0),
        &fmmu(0x0005_0002, 2, 0, 7, 0x0F80, FmmuRepr::READ),
    );
    bus.fpwr(
        EK1100,
        reg::fmmu(1),
        &fmmu(0x0005_0002, 1, 0, 7, 0x0F90, FmmuRepr::WRITE),
    );
    bus.fpwr(
        EK1100,
        reg::fmmu(2),
        &fmmu(0x0005_0003, 1, 2, 5, 0x0F91, FmmuRepr::WRITE),
    );
    let r = logical(
        &mut bus,
        Command::Lrw,
        0x0005_0000,
        &[0x11, 0x22, 0xA5, 0xF0, 0x33],
    );
    assert_eq!(r.wkc, 3, "read +1, write +2");
    assert_eq!(r.data, [0x11, 0x22, 0x3C, 0x5A, 0x33]);
    let mut m = [0u8; 2];
    bus.net.subdevice(0).unwrap().read(0x0F90, &mut m);
    assert_eq!(m, [0xA5, 0x0C], "incoming byte, incoming bits 2..5 of 0xF0");
}

#[test]
fn lrw_that_enables_an_fmmu_through_an_fmmu_writes_with_it_too() {
    // FMMU 0 maps logical bytes 0..16 onto FMMU 2's own registers (0x0620). The LRW carries a
    // configuration that enables FMMU 2 for logical bytes 16..18 -> 0x0F90, and the data for
    // it. FMMUs act in order on the datagram: FMMU 0 enables FMMU 2, FMMU 1 reads 0x0F80 into
    // bytes 16..18, then FMMU 2 writes those bytes as they arrived, although it was off when
    // the datagram reached the ESC (found by the sim_frames fuzzer: the copy of the incoming
    // bytes did not cover it, and the write indexed past the copy).
    const EK1100: u16 = 0x1001;
    let mut bus = Bus::preset("io");
    bus.assign_addresses();
    let esc = bus.net.subdevice_mut(0).unwrap();
    esc.pdi_write(0x0F80, &[0x3C, 0x5A]);
    esc.pdi_write(0x0F90, &[0x00, 0x00]);
    bus.fpwr(
        EK1100,
        reg::fmmu(0),
        &fmmu(0x0007_0000, 16, 0, 7, reg::fmmu(2), FmmuRepr::WRITE),
    );
    bus.fpwr(
        EK1100,
        reg::fmmu(1),
        &fmmu(0x0007_0010, 2, 0, 7, 0x0F80, FmmuRepr::READ),
    );
    let mut data = fmmu(0x0007_0010, 2, 0, 7, 0x0F90, FmmuRepr::WRITE).to_vec();
    data.extend_from_slice(&[0xA5, 0x96]);
    let r = logical(&mut bus, Command::Lrw, 0x0007_0000, &data);
    assert_eq!(&r.data[16..], &[0x3C, 0x5A], "FMMU 1 read into the frame");
    let mut m = [0u8; 2];
    bus.net.subdevice(0).unwrap().read(0x0F90, &mut m);
    assert_eq!(m, [0xA5, 0x96], "FMMU 2 wrote the bytes as they arrived");
}
