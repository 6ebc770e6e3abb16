//! Distributed clocks setup during the configuration phase (reference §8.3–8.5).
//!
//! [`configure`]: latch the port receive times with one broadcast write to 0x0900 (the master
//! time is sampled just before), read every DC SubDevice's port times, EPU time and DL status in
//! one batch, place them in the tree ([`super::topology`]), write each one's propagation delay
//! (0x0928) and system time offset (0x0920) so that every local copy of system time starts equal
//! to the reference's, reset the control loop filters, then run the static drift compensation:
//! a burst of FRMW 0x0910 addressed to the reference clock, 10 per frame, so each
//! SubDevice's control loop locks to the reference before cycling starts. Each burst frame
//! also carries a BRD of the system time difference 0x092C; the burst stops early once that
//! (the OR over all SubDevices, so at least the largest) stayed within `settle_ns` for three
//! frames after `min_datagrams` (15,000 datagrams at most, the usual recommendation): on a
//! large network this is what keeps the setup short.
//!
//! The reference clock is the first DC-capable SubDevice. Times are ns since 2000-01-01 (the
//! EtherCAT epoch), from the bus clock plus a base fixed at the latch.

use super::topology::{place, PortTimes};
use crate::bus::{check_wkc, Bus, Pdu};
use crate::error::{Error, Result};
use crate::subdevice::{DcInfo, SubDevice};
use ecat_wire::register as reg;
use ecat_wire::Command;

/// Seconds from the Unix epoch to the EtherCAT epoch (2000-01-01).
pub const EPOCH_2000_S: u64 = 946_684_800;

/// How to set up the clocks.
#[derive(Debug, Clone, Copy)]
pub struct DcOptions {
    /// Most FRMW datagrams of the static drift compensation.
    pub static_datagrams: u32,
    /// FRMW datagrams per frame during the static compensation (at most 60).
    pub per_frame: u32,
    /// Stop the static compensation early once every SubDevice's system time difference
    /// (0x092C, read with a BRD in each burst frame) stayed at most this many ns for three
    /// frames in a row, after at least `min_datagrams` (0: always send `static_datagrams`).
    pub settle_ns: u32,
    /// FRMW datagrams sent before the compensation may stop early.
    pub min_datagrams: u32,
}

impl Default for DcOptions {
    fn default() -> Self {
        DcOptions {
            static_datagrams: 15_000,
            per_frame: 10,
            settle_ns: 20,
            min_datagrams: 1_200,
        }
    }
}

/// What the setup decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DcSetup {
    /// Position of the reference clock.
    pub reference_position: u16,
    /// Station address of the reference clock.
    pub reference_station: u16,
    /// Master time minus bus clock (ns): DC time of the master = bus clock + this.
    pub master_base_ns: i64,
}

/// The master's DC time now (ns since 2000), given the base from [`DcSetup`].
pub fn master_time(bus: &Bus, base: i64) -> u64 {
    (bus.now() as i64).wrapping_add(base) as u64
}

/// Base that maps the bus clock onto ns since 2000: wall clock on a real link, 0 on virtual time.
fn epoch_base(bus: &Bus) -> i64 {
    if bus.link().virtual_time().is_some() {
        return 0;
    }
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0);
    wall - (EPOCH_2000_S as i64) * 1_000_000_000 - bus.now() as i64
}

/// Measure delays, set offsets, and run the static drift compensation. Returns `None` if no
/// SubDevice supports DC. Fills each DC SubDevice's [`DcInfo`].
pub fn configure(
    bus: &mut Bus,
    subs: &mut [SubDevice],
    opts: DcOptions,
) -> Result<Option<DcSetup>> {
    let dc: Vec<usize> = (0..subs.len())
        .filter(|&i| subs[i].dc_supported())
        .collect();
    if dc.is_empty() {
        return Ok(None);
    }
    let base = epoch_base(bus);
    // 1. Latch.
    let t_master = master_time(bus, base);
    bus.write(Command::Bwr, 0, reg::DC_RECEIVE_TIME_PORT0, &[0; 4])?;
    // 2. Read port times, EPU time, DL status.
    let mut batch = Vec::with_capacity(dc.len() * 3);
    for &i in &dc {
        let st = subs[i].station;
        batch.push(Pdu::physical(
            Command::Fprd,
            st,
            reg::DC_RECEIVE_TIME_PORT0,
            vec![0; 16],
        ));
        batch.push(Pdu::physical(
            Command::Fprd,
            st,
            reg::DC_RECEIVE_TIME_EPU,
            vec![0; 8],
        ));
        batch.push(Pdu::physical(Command::Fprd, st, reg::DL_STATUS, vec![0; 2]));
    }
    bus.exchange(&mut batch)?;
    let mut times = Vec::with_capacity(dc.len());
    let mut epu = Vec::with_capacity(dc.len());
    // Some ESCs latch port receive times but have no system time (0x0918/0x0910/0x0920
    // unanswered, as the EL2828 in the real capture): they count for the topology only.
    let mut has_system_time = Vec::with_capacity(dc.len());
    for (k, &i) in dc.iter().enumerate() {
        let p = &batch[3 * k..3 * k + 3];
        check_wkc(&p[0], p[0].wkc, 1)?;
        check_wkc(&p[2], p[2].wkc, 1)?;
        has_system_time.push(p[1].wkc == 1);
        let t: [u32; 4] = core::array::from_fn(|n| {
            u32::from_le_bytes(p[0].data[4 * n..4 * n + 4].try_into().unwrap_or([0; 4]))
        });
        let dl = reg::DlStatus(u16::from_le_bytes([p[2].data[0], p[2].data[1]]));
        subs[i].dl_status = dl;
        let open = core::array::from_fn(|n| dl.port_open(n));
        times.push(PortTimes { times: t, open });
        epu.push(u64::from_le_bytes(
            p[1].data[..8].try_into().unwrap_or([0; 8]),
        ));
    }
    // 3. Delays and offsets.
    let placed = place(&times);
    let Some(first_k) = has_system_time.iter().position(|&h| h) else {
        return Ok(None);
    };
    let first = dc[first_k];
    let mut writes = Vec::with_capacity(dc.len() * 4);
    for (k, &i) in dc.iter().enumerate() {
        let pl = placed[k];
        let system_time = has_system_time[k];
        let offset = t_master
            .wrapping_add(pl.delay_ns as u64)
            .wrapping_sub(epu[k]);
        subs[i].dc = Some(DcInfo {
            reference: k == first_k,
            system_time,
            parent: pl.parent.map(|p| subs[dc[p]].position),
            parent_port: pl.parent_port as u8,
            entry_port: pl.entry_port as u8,
            port_times: times[k].times,
            delay_ns: pl.delay_ns,
            hop_ns: pl.hop_ns,
            offset_ns: if system_time { offset } else { 0 },
        });
        if !system_time {
            continue;
        }
        let st = subs[i].station;
        writes.push(Pdu::physical(
            Command::Fpwr,
            st,
            reg::DC_SYSTEM_TIME_DELAY,
            pl.delay_ns.to_le_bytes().to_vec(),
        ));
        writes.push(Pdu::physical(
            Command::Fpwr,
            st,
            reg::DC_SYSTEM_TIME_OFFSET,
            offset.to_le_bytes().to_vec(),
        ));
        writes.push(Pdu::physical(
            Command::Fpwr,
            st,
            reg::DC_TIME_FILTER_DEPTH,
            vec![0x00, 0x0C],
        ));
        writes.push(Pdu::physical(
            Command::Fpwr,
            st,
            reg::DC_SPEED_COUNTER_START,
            0x1000u16.to_le_bytes().to_vec(),
        ));
    }
    bus.exchange(&mut writes)?;
    for w in &writes {
        check_wkc(w, w.wkc, 1)?;
    }
    // 4. Static drift compensation.
    let reference = &subs[first];
    let per_frame = opts.per_frame.clamp(1, 60) as usize;
    let mut left = opts.static_datagrams as usize;
    let (mut sent, mut settled) = (0usize, 0);
    let mut burst: Vec<Pdu> = Vec::with_capacity(per_frame + 1);
    while left > 0 {
        let n = left.min(per_frame);
        burst.clear();
        burst.extend((0..n).map(|_| {
            Pdu::physical(
                Command::Frmw,
                reference.station,
                reg::DC_SYSTEM_TIME,
                vec![0; 8],
            )
        }));
        // The OR of every SubDevice's |difference| bounds the largest from above.
        burst.push(Pdu::physical(
            Command::Brd,
            0,
            reg::DC_SYSTEM_TIME_DIFFERENCE,
            vec![0; 4],
        ));
        bus.exchange(&mut burst)?;
        if burst[0].wkc == 0 {
            return Err(Error::Invalid(format!(
                "{}: the reference clock does not answer the drift compensation",
                reference.who()
            )));
        }
        left -= n;
        sent += n;
        let d = &burst[n].data;
        let diff = u32::from_le_bytes([d[0], d[1], d[2], d[3]]) & 0x7FFF_FFFF;
        if opts.settle_ns > 0 && burst[n].wkc > 0 && diff <= opts.settle_ns {
            settled += 1;
        } else {
            settled = 0;
        }
        if settled >= 3 && sent >= opts.min_datagrams as usize {
            break;
        }
    }
    Ok(Some(DcSetup {
        reference_position: reference.position,
        reference_station: reference.station,
        master_base_ns: base,
    }))
}

/// Read every DC SubDevice's system time difference (0x092C): the largest |difference| in ns.
pub fn max_time_difference(bus: &mut Bus, subs: &[SubDevice]) -> Result<u32> {
    let mut batch: Vec<Pdu> = subs
        .iter()
        .filter(|s| s.dc_supported())
        .map(|s| {
            Pdu::physical(
                Command::Fprd,
                s.station,
                reg::DC_SYSTEM_TIME_DIFFERENCE,
                vec![0; 4],
            )
        })
        .collect();
    bus.exchange(&mut batch)?;
    Ok(batch
        .iter()
        .map(|p| u32::from_le_bytes(p.data[..4].try_into().unwrap_or([0; 4])) & 0x7FFF_FFFF)
        .max()
        .unwrap_or(0))
}

/// SYNC0 start time: the next multiple of `cycle_ns` at least `lead_ns` after `now`, plus
/// `shift_ns` (all in system time, ns).
pub fn sync0_start(now: u64, cycle_ns: u64, shift_ns: u64, lead_ns: u64) -> u64 {
    let c = cycle_ns.max(1);
    (now + lead_ns).div_ceil(c) * c + shift_ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_is_aligned() {
        assert_eq!(
            sync0_start(1_234_567, 1_000_000, 0, 100_000_000),
            102_000_000
        );
        assert_eq!(
            sync0_start(1_234_567, 1_000_000, 250_000, 100_000_000),
            102_250_000
        );
        assert_eq!(sync0_start(0, 1_000, 0, 0), 0);
    }
}
