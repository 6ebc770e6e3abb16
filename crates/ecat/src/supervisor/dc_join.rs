//! DC join: set up the distributed clock of a SubDevice that comes back after losing power,
//! so its copy of system time agrees with the reference clock again before it is configured
//! (and its SYNC0 programmed from that time).
//!
//! A SubDevice found again at station address 0 lost power: its System Time Delay (0x0928)
//! and Offset (0x0920) are 0 again and its local clock started anew, so its system time is
//! seconds away from the others'. The control loop corrects at most about 1 µs per ms, far
//! too slowly, so the supervisor does what the setup at activation did, one datagram per
//! step: write the propagation delay measured then (the topology is unchanged) and the filter
//! depths, reset the control loop (0x0930) and then the offset (0x0920, which drops the
//! correction the loop piled up while it was fed the others' time), read its system time
//! and offset together, and write the offset that makes its system time equal to the
//! reference clock's at the instant the read was sent; then reset the loop once more. The
//! loop reset comes first because after it the loop waits for two time writes before it
//! moves again: the correction stays 0 from the offset reset to the read. The reference
//! clock's time at any instant comes from [`Supervisor::reference_time_at`] (the MainDevice's
//! time when the reference follows it, else the last one the cyclic FRMW saw, moved on). A
//! SubDevice found with its address kept did not lose power: its clock is left alone.
//!
//! A member of a hot-connect group that was absent at the scan was never seen: whether its
//! ESC supports distributed clocks is read first (0x0008), then whether it has a system time
//! (0x0910; an ESC that only latches port receive times does not answer it); one without a
//! system time is configured at once (its port times still count for the topology when the
//! runtime measures the delays again, see `dc::remeasure`).

use super::{Phase, Supervisor};
use crate::subdevice::SubDevice;
use ecat_wire::register as reg;
use ecat_wire::Command;

/// Steps: 0 delay, 1 filter depths, 2 loop reset, 3 offset reset, 4 read, 5 offset, 6 loop
/// reset.
const LAST_STEP: u8 = 6;
/// The step that reads the system time.
const READ_STEP: u8 = 4;
/// The step before the others for a SubDevice never seen: read its system time, to learn
/// whether it has one.
const PROBE_STEP: u8 = 7;
/// The step before that: read its ESC features, to learn whether it supports DC at all.
const FEATURES_STEP: u8 = 8;

/// True for the step whose datagram may come back unanswered without the SubDevice being lost.
pub(super) fn may_be_unanswered(phase: Phase) -> bool {
    phase == Phase::DcJoin(PROBE_STEP)
}

/// The datagram of step `step` for `info` (command, register, data, length); `offset` is the
/// one computed by the read.
pub(super) fn request(info: &SubDevice, step: u8, offset: u64) -> (Command, u16, [u8; 24], usize) {
    let mut b = [0u8; 24];
    let delay = info.dc.map_or(0, |d| d.delay_ns);
    let (cmd, ado, n) = match step {
        FEATURES_STEP => (Command::Fprd, reg::FEATURES, 2),
        PROBE_STEP => (Command::Fprd, reg::DC_SYSTEM_TIME, 8),
        0 => {
            b[..4].copy_from_slice(&delay.to_le_bytes());
            (Command::Fpwr, reg::DC_SYSTEM_TIME_DELAY, 4)
        }
        1 => {
            b[..2].copy_from_slice(&[0x00, 0x0C]);
            (Command::Fpwr, reg::DC_TIME_FILTER_DEPTH, 2)
        }
        3 => (Command::Fpwr, reg::DC_SYSTEM_TIME_OFFSET, 8),
        // System time (0x0910), EPU receive time (0x0918), offset (0x0920).
        READ_STEP => (Command::Fprd, reg::DC_SYSTEM_TIME, 24),
        5 => {
            b[..8].copy_from_slice(&offset.to_le_bytes());
            (Command::Fpwr, reg::DC_SYSTEM_TIME_OFFSET, 8)
        }
        _ => {
            b[..2].copy_from_slice(&0x1000u16.to_le_bytes());
            (Command::Fpwr, reg::DC_SPEED_COUNTER_START, 2)
        }
    };
    (cmd, ado, b, n)
}

impl Supervisor {
    /// The reference clock's system time at local instant `now` (ns), if distributed clocks
    /// run and a cycle was sent.
    pub(super) fn reference_time_at(&self, now: u64) -> Option<u64> {
        let (t, at) = self.dc_now?;
        Some(t.wrapping_add(now.wrapping_sub(at)))
    }

    /// After a found SubDevice's identity matched: its clock if it lost power, then the reset.
    pub(super) fn after_identity(&self, i: usize) -> Phase {
        if !(self.subs[i].dc_join && self.dc_now.is_some()) {
            return self.reset_phase(i);
        }
        match self.subs[i].info.absent_at_scan {
            true => Phase::DcJoin(FEATURES_STEP),
            false => Phase::DcJoin(0),
        }
    }

    /// Judge the answer `d` to step `step` (its working counter `wkc` is 1 but for
    /// [`PROBE_STEP`]).
    pub(super) fn dc_join_judge(&mut self, i: usize, step: u8, d: &[u8], wkc: u16) -> Phase {
        let s = &mut self.subs[i];
        if step == FEATURES_STEP {
            s.info.features = u16::from_le_bytes([
                d.first().copied().unwrap_or(0),
                d.get(1).copied().unwrap_or(0),
            ]);
            if s.info.dc_supported() {
                return Phase::DcJoin(PROBE_STEP);
            }
            s.dc_join = false;
            s.info.dc = None;
            return self.reset_phase(i);
        }
        if step == PROBE_STEP {
            if wkc == 1 {
                return Phase::DcJoin(0);
            }
            s.dc_join = false;
            if let Some(dc) = s.info.dc.as_mut() {
                dc.system_time = false;
            }
            return self.reset_phase(i);
        }
        if step == READ_STEP {
            let word = |k: usize| {
                d.get(k..k + 8)
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, u64::from_le_bytes)
            };
            let (system_time, offset) = (word(0), word(16));
            let Some(reference) = self.reference_time_at(self.subs[i].sent_at) else {
                return self.reset_phase(i);
            };
            // Its system time moves by as much as the offset does.
            self.subs[i].dc_offset = offset.wrapping_add(reference.wrapping_sub(system_time));
        }
        if step < LAST_STEP {
            return Phase::DcJoin(step + 1);
        }
        let s = &mut self.subs[i];
        s.dc_join = false;
        if let Some(dc) = s.info.dc.as_mut() {
            dc.offset_ns = s.dc_offset;
        }
        self.reset_phase(i)
    }
}
