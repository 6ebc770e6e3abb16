//! The bus scan: count the SubDevices, reset their ESCs to a known state, give each a station
//! address, and read what they are.
//!
//! Steps (each one batch of datagrams, see [`crate::bus`]):
//! 1. disable alias addressing, request INIT with error acknowledge, count with a BRD
//!    (its WKC is the number of SubDevices);
//! 2. reset (broadcast): loop ports to auto, ECAT event mask, error counters, FMMUs, SMs,
//!    DC activation and filters, EEPROM ownership to the MainDevice;
//! 3. station addresses 0x1001, 0x1002, … by APWR to each position (one frame);
//! 4. per SubDevice: ESC information (0x0000, 10 bytes), alias, DL status, AL status;
//! 5. the SII images of all SubDevices, read in parallel, decoded into identity, names,
//!    mailbox, SyncManagers and PDOs.

use crate::bus::{check_wkc, Bus, Pdu};
use crate::eeprom;
use crate::error::{Error, Result};
use crate::esm;
use crate::subdevice::SubDevice;
use ecat_wire::al::{AlControl, AlState};
use ecat_wire::register::{self as reg, DlStatus, PortType};
use ecat_wire::Command;

/// First station address assigned (then +1 per position), as SOEM and IgH do.
pub const FIRST_STATION_ADDRESS: u16 = 0x1001;

/// Count the SubDevices with a broadcast read (the WKC of a BRD is the count).
pub fn count(bus: &mut Bus) -> Result<u16> {
    let (_, wkc) = bus.read(Command::Brd, 0, reg::TYPE, 1)?;
    Ok(wkc)
}

/// Broadcast writes that put every ESC into a known state.
fn reset(bus: &mut Bus, n: u16) -> Result<()> {
    let init = AlControl::request(AlState::Init, true)
        .0
        .to_le_bytes()
        .to_vec();
    let mut batch = vec![
        Pdu::physical(Command::Bwr, 0, reg::DL_CONTROL_ALIAS, vec![0]),
        Pdu::physical(Command::Bwr, 0, reg::AL_CONTROL, init),
        Pdu::physical(Command::Bwr, 0, reg::DL_CONTROL_LOOP, vec![0]),
        Pdu::physical(Command::Bwr, 0, reg::ECAT_EVENT_MASK, vec![0x04, 0x00]),
        Pdu::physical(Command::Bwr, 0, reg::RX_ERROR_COUNTER, vec![0; 8]),
        Pdu::physical(Command::Bwr, 0, reg::FMMU0, vec![0; 16 * 16]),
        Pdu::physical(Command::Bwr, 0, reg::SM0, vec![0; 8 * 16]),
        Pdu::physical(Command::Bwr, 0, reg::DC_ACTIVATION, vec![0]),
        Pdu::physical(Command::Bwr, 0, reg::DC_SYSTEM_TIME_OFFSET, vec![0; 8]),
        Pdu::physical(Command::Bwr, 0, reg::DC_SYSTEM_TIME_DELAY, vec![0; 4]),
        Pdu::physical(
            Command::Bwr,
            0,
            reg::DC_SPEED_COUNTER_START,
            vec![0x00, 0x10],
        ),
        Pdu::physical(Command::Bwr, 0, reg::DC_TIME_FILTER_DEPTH, vec![0x00, 0x0C]),
    ];
    bus.exchange(&mut batch)?;
    // Only the AL control write must reach everyone; other registers may be absent on
    // simple ESCs (a SubDevice without DC ignores DC registers), which a real ESC still counts.
    check_wkc(&batch[1], batch[1].wkc, n)?;
    eeprom::take_all(bus)
}

/// Scan the bus: returns every SubDevice with its station address assigned and SII read.
pub fn scan(bus: &mut Bus) -> Result<Vec<SubDevice>> {
    let n = count(bus)?;
    if n == 0 {
        return Err(Error::NoSubDevices {
            iface: bus.link().name().to_string(),
        });
    }
    reset(bus, n)?;
    let mut batch: Vec<Pdu> = (0..n)
        .map(|i| {
            let adp = 0u16.wrapping_sub(i);
            let addr = (FIRST_STATION_ADDRESS + i).to_le_bytes().to_vec();
            Pdu::physical(Command::Apwr, adp, reg::STATION_ADDRESS, addr)
        })
        .collect();
    bus.exchange(&mut batch)?;
    for p in &batch {
        check_wkc(p, p.wkc, 1)?;
    }
    let mut subs: Vec<SubDevice> = (0..n)
        .map(|i| SubDevice {
            position: i,
            station: FIRST_STATION_ADDRESS + i,
            ..Default::default()
        })
        .collect();
    read_esc_info(bus, &mut subs)?;
    {
        // The reset asked for INIT; wait until everyone is there before reading the SII.
        let mut refs: Vec<&mut SubDevice> = subs.iter_mut().collect();
        esm::request_state(bus, &mut refs, AlState::Init, esm::DEFAULT_TIMEOUT)?;
    }
    let who: Vec<_> = subs.iter().map(SubDevice::who).collect();
    let images = eeprom::read_images(bus, &who);
    for (s, img) in subs.iter_mut().zip(images) {
        let img = img?;
        s.apply_sii(&img).map_err(|reason| Error::Sii {
            who: s.who(),
            reason,
        })?;
    }
    Ok(subs)
}

/// Read ESC information, alias, DL status and AL status of every SubDevice (one batch).
pub fn read_esc_info(bus: &mut Bus, subs: &mut [SubDevice]) -> Result<()> {
    let mut batch = Vec::with_capacity(subs.len() * 3);
    for s in subs.iter() {
        batch.push(Pdu::physical(
            Command::Fprd,
            s.station,
            reg::TYPE,
            vec![0; 10],
        ));
        batch.push(Pdu::physical(
            Command::Fprd,
            s.station,
            reg::STATION_ALIAS,
            vec![0; 2],
        ));
        batch.push(Pdu::physical(
            Command::Fprd,
            s.station,
            reg::DL_STATUS,
            vec![0; 2],
        ));
    }
    bus.exchange(&mut batch)?;
    for (s, p) in subs.iter_mut().zip(batch.chunks(3)) {
        for q in p {
            check_wkc(q, q.wkc, 1)?;
        }
        let d = &p[0].data;
        s.esc_type = d[0];
        s.esc_revision = d[1];
        s.esc_build = u16::from_le_bytes([d[2], d[3]]);
        s.fmmu_count = d[4];
        s.sm_count = d[5];
        s.ram_kib = d[6];
        s.ports = core::array::from_fn(|i| match PortType::from_descriptor(d[7], i) {
            PortType::NotImplemented => None,
            t => Some(t),
        });
        s.features = u16::from_le_bytes([d[8], d[9]]);
        s.alias = u16::from_le_bytes([p[1].data[0], p[1].data[1]]);
        s.dl_status = DlStatus(u16::from_le_bytes([p[2].data[0], p[2].data[1]]));
    }
    let mut refs: Vec<&mut SubDevice> = subs.iter_mut().collect();
    esm::read_status(bus, &mut refs)
}
