//! Distributed clocks: topology and propagation delays ([`topology`]), and the setup and
//! cyclic maintenance of the SubDevices' clocks.

pub mod remeasure;
pub mod setup;

/// How the MainDevice and the distributed clocks stay in step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DcMode {
    /// The reference clock follows the MainDevice's time (written every cycle; IgH's default).
    ReferenceFollowsMaster,
    /// The MainDevice's cycle follows the reference clock: the next wake-up is corrected from
    /// the DC time so the send instant keeps a constant phase to SYNC0 (SOEM, ethercrab style).
    MasterFollowsReference,
}

/// Distributed clocks in the cyclic phase.
#[derive(Debug, Clone, Copy)]
pub struct DcRuntime {
    /// Result of [`setup::configure`].
    pub setup: setup::DcSetup,
    /// Mode.
    pub mode: DcMode,
    /// SYNC0 cycle (ns), normally the cycle time.
    pub cycle_ns: u64,
    /// SYNC0 shift (ns).
    pub shift_ns: u64,
}

/// Phase lock for [`DcMode::MasterFollowsReference`]: from the reference's time at each send,
/// the correction to the next wake-up that keeps the send instant at a constant phase to
/// SYNC0 (a proportional-integral step, bounded to 1/20 of the cycle per cycle).
#[derive(Debug, Clone, Copy, Default)]
pub struct PhaseLock {
    target: Option<u64>,
    integral: f64,
    /// Last phase error (ns).
    pub error_ns: i64,
}

impl PhaseLock {
    /// Take the reference time `dc_time` seen by this cycle's frame; returns the correction (ns)
    /// to add to the next wake-up.
    pub fn update(&mut self, dc_time: u64, cycle_ns: u64, shift_ns: u64) -> i64 {
        let c = cycle_ns.max(1);
        let phase = dc_time.wrapping_sub(shift_ns) % c;
        let target = *self.target.get_or_insert(phase);
        let mut err = phase as i64 - target as i64;
        if err > (c / 2) as i64 {
            err -= c as i64;
        } else if err < -((c / 2) as i64) {
            err += c as i64;
        }
        self.error_ns = err;
        self.integral =
            (self.integral + err as f64 * 0.02).clamp(-(c as f64) / 20.0, c as f64 / 20.0);
        let corr = -(err as f64 * 0.3 + self.integral);
        let bound = (c / 20) as f64;
        corr.clamp(-bound, bound) as i64
    }
}
pub mod topology;
