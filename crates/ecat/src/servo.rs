//! The seed 000 scenario as reusable application code: CiA 402 drives in velocity mode
//! following a velocity profile that is precomputed before the cycle starts, with each drive's
//! following error measured.
//!
//! [`find_drives`] locates each drive's controlword/target velocity (outputs) and
//! statusword/actual velocity (inputs) in the process data; [`VelocityProfile::seed000`] builds
//! the 40 s profile (2 rad/s one way for 10 s, rest 10 s, the other way 10 s, rest 10 s,
//! repeated; short linear ramps so a real drive can follow); [`ServoApp::step`] runs once per
//! cycle: it enables the drives with the [`crate::cia402`] helper, writes the targets, and
//! records the velocity following error. Nothing in `step` allocates.

use crate::cia402::{Drive, Goal, State};
use crate::runtime::{EntryLocation, Runtime};

/// A drive's process data.
#[derive(Debug, Clone, Copy)]
pub struct DriveIo {
    /// SubDevice position.
    pub position: usize,
    /// Controlword 0x6040.
    pub controlword: EntryLocation,
    /// Target velocity 0x60FF.
    pub target_velocity: EntryLocation,
    /// Statusword 0x6041.
    pub statusword: EntryLocation,
    /// Velocity actual 0x606C.
    pub actual_velocity: EntryLocation,
}

/// Every SubDevice whose process data has the CiA 402 velocity-mode objects.
pub fn find_drives(rt: &Runtime) -> Vec<DriveIo> {
    (0..rt.supervisor().states().count())
        .filter_map(|p| {
            Some(DriveIo {
                position: p,
                controlword: rt.locate(p, 0x6040, 0)?,
                target_velocity: rt.locate(p, 0x60FF, 0)?,
                statusword: rt.locate(p, 0x6041, 0)?,
                actual_velocity: rt.locate(p, 0x606C, 0)?,
            })
        })
        .collect()
}

/// A velocity target per cycle, in drive units (increments/s).
#[derive(Debug, Clone)]
pub struct VelocityProfile {
    targets: Vec<i32>,
    /// Cycles after each change of the plateau value, during which the drive may still be
    /// accelerating (excluded from the steady-state following error).
    settle_cycles: usize,
    period_ns: u64,
}

impl VelocityProfile {
    /// Seed 000's 40 s profile at `rad_per_s` for a period of `period_ns`, repeated to cover
    /// `duration_ns` (0 = one 40 s round), with `increments_per_rad` from the drive's encoder
    /// resolution. Ramps take 200 ms.
    pub fn seed000(
        rad_per_s: f64,
        increments_per_rad: f64,
        period_ns: u64,
        duration_ns: u64,
    ) -> VelocityProfile {
        let period = period_ns.max(1) as f64 / 1e9;
        let total = if duration_ns == 0 {
            40.0
        } else {
            duration_ns as f64 / 1e9
        };
        let n = (total / period).ceil() as usize;
        let v = rad_per_s * increments_per_rad;
        let ramp = 0.2;
        let plateau = |t: f64| -> f64 {
            match ((t % 40.0) / 10.0) as u32 {
                0 => v,
                2 => -v,
                _ => 0.0,
            }
        };
        let targets = (0..n)
            .map(|k| {
                let t = k as f64 * period;
                let seg_start = (t / 10.0).floor() * 10.0;
                let from = if seg_start == 0.0 {
                    0.0
                } else {
                    plateau(seg_start - 1e-9)
                };
                let to = plateau(t);
                let x = ((t - seg_start) / ramp).min(1.0);
                (from + (to - from) * x).round() as i32
            })
            .collect();
        VelocityProfile {
            targets,
            settle_cycles: ((ramp + 0.3) / period) as usize,
            period_ns,
        }
    }

    /// Target of cycle `k` (0 beyond the end).
    pub fn target(&self, k: usize) -> i32 {
        self.targets.get(k).copied().unwrap_or(0)
    }

    /// Number of cycles.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// True if cycle `k` is in steady state (not within the settle time after a segment change).
    pub fn steady(&self, k: usize) -> bool {
        let seg = (10_000_000_000 / self.period_ns.max(1)) as usize;
        seg > 0 && k % seg >= self.settle_cycles
    }
}

/// Following error statistics of one drive, in drive units.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Following {
    /// Cycles measured (drive enabled).
    pub samples: u64,
    /// Largest |target − actual| anywhere.
    pub max_abs: u64,
    /// Largest |target − actual| in steady state.
    pub max_abs_steady: u64,
    /// Sum of squares (for the RMS).
    pub sum_sq: f64,
    /// Faults seen (and reset).
    pub faults: u32,
    /// Cycle when the drive first reached "operation enabled".
    pub enabled_at: Option<u64>,
}

impl Following {
    /// Root mean square of the error.
    pub fn rms(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            (self.sum_sq / self.samples as f64).sqrt()
        }
    }
}

/// Drives following a profile. See the module documentation.
#[derive(Debug)]
pub struct ServoApp {
    drives: Vec<(DriveIo, Drive, Following)>,
    profile: VelocityProfile,
    started: Option<u64>,
    last_target: Vec<i32>,
}

impl ServoApp {
    /// Run `profile` on `drives`.
    pub fn new(drives: Vec<DriveIo>, profile: VelocityProfile) -> ServoApp {
        let n = drives.len();
        ServoApp {
            drives: drives
                .into_iter()
                .map(|d| (d, Drive::new(Goal::Enabled), Following::default()))
                .collect(),
            profile,
            started: None,
            last_target: vec![0; n],
        }
    }

    /// The drives and their statistics.
    pub fn results(&self) -> impl Iterator<Item = (&DriveIo, State, &Following)> {
        self.drives.iter().map(|(io, d, f)| (io, d.state(), f))
    }

    /// True once every drive is enabled.
    pub fn all_enabled(&self) -> bool {
        self.drives.iter().all(|(_, d, _)| d.at_goal())
    }

    /// Ask the drives to power down (before leaving OP).
    pub fn disable(&mut self) {
        for (_, d, _) in &mut self.drives {
            d.goal = Goal::Disabled;
        }
    }

    /// One cycle: inputs are in the domains (after `process`), outputs are written for `send`.
    /// The profile starts when every drive is enabled.
    pub fn step(&mut self, rt: &mut Runtime, cycle: u64) {
        if self.started.is_none() && self.all_enabled() {
            self.started = Some(cycle);
        }
        let k = self.started.map(|s| (cycle - s) as usize);
        for (i, (io, drive, stats)) in self.drives.iter_mut().enumerate() {
            let img = rt.domain(io.statusword.domain).image();
            let sw = io.statusword.read(img) as u16;
            let actual = io.actual_velocity.read(img) as u32 as i32;
            let was_fault = drive.faults_seen();
            let cw = drive.next_controlword(sw);
            stats.faults += drive.faults_seen() - was_fault;
            let enabled = drive.state() == State::OperationEnabled;
            if enabled && stats.enabled_at.is_none() {
                stats.enabled_at = Some(cycle);
            }
            // The actual value read now answers the target sent in the previous cycle.
            if enabled && self.started.is_some() {
                let err = (self.last_target[i] as i64 - actual as i64).unsigned_abs();
                stats.samples += 1;
                stats.max_abs = stats.max_abs.max(err);
                if k.is_some_and(|k| k > 0 && self.profile.steady(k - 1)) {
                    stats.max_abs_steady = stats.max_abs_steady.max(err);
                }
                stats.sum_sq += (err as f64) * (err as f64);
            }
            let target = match (k, enabled) {
                (Some(k), true) => self.profile.target(k),
                _ => 0,
            };
            self.last_target[i] = target;
            let out = rt.domain_mut(io.controlword.domain).image_mut();
            io.controlword.write(out, cw as u64);
            io.target_velocity.write(out, target as u32 as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed000_profile_shape() {
        let p = VelocityProfile::seed000(2.0, 1000.0, 1_000_000, 0);
        assert_eq!(p.len(), 40_000);
        assert_eq!(p.target(0), 0);
        assert_eq!(p.target(100), 1000, "half way up the 200 ms ramp");
        assert_eq!(p.target(5_000), 2000);
        assert_eq!(p.target(15_000), 0);
        assert_eq!(p.target(25_000), -2000);
        assert_eq!(p.target(35_000), 0);
        assert_eq!(p.target(10_100), 1000, "ramping down");
        assert!(!p.steady(10_100) && p.steady(10_600));
    }
}
