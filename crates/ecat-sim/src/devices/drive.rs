//! The servo drive's behaviour: the CiA 402 state machine ([`super::cia402`]) on the
//! controlword, the modes of operation, and a simple motor + load model, all through the
//! object dictionary (commands in, actual values out; the PDO mapping decides which of them
//! travel in the process data).
//!
//! Model (our choice; units in `servo_od`): one rigid inertia J (0x2000:02) with viscous
//! friction (0x2000:03), driven by a torque limited to 0x6072 (per-mille of the rated torque
//! 0x2000:01). The acceleration limit is min(0x60C5 max acceleration, max torque / J); the
//! velocity limit min(0x607F max profile velocity, 0x6080 max motor speed). Integrated in
//! steps of at most 100 µs between frames (a gap above 1 s is cut to 1 s).
//! * CSV (9): velocity demand = 0x60FF + 0x60B1, clamped to the velocity limit; the velocity
//!   follows it at the acceleration limit.
//! * PV (3): as CSV with the profile acceleration/deceleration 0x6083/0x6084.
//! * CSP (8): position demand = 0x607A clamped to the software limits 0x607D; velocity
//!   demand = feed-forward (target change / time between target changes) + gain 0x2000:04 ×
//!   position error, within the limits.
//! * CST (10): torque = 0x6071 + 0x60B2 within ±0x6072; friction acts; velocity limited.
//! * PP (1): a new set-point (controlword bit 4 rising edge; bit 6 relative) starts a
//!   trapezoidal move with 0x6081/0x6083/0x6084; statusword bit 12 acknowledges while bit 4
//!   is set, bit 10 when the target is reached.
//! * Halt (controlword bit 8) stops with the profile deceleration; quick stop and fault
//!   reaction with 0x6085; while the power stage is off a holding brake stops the motor on
//!   the quick-stop ramp and the torque reads 0.
//! * Following error (CSP): 0x60F4 = demand − actual; above the window 0x6065 (0xFFFFFFFF
//!   switches it off) for longer than 0x6066 ms → fault 0x8611: 0x603F = 0x8611, error
//!   register 0x1001 = 0x21 (generic + device profile; our choice), statusword fault bits, an
//!   emergency {0x8611, 0x21}. A fault reset clears 0x603F/0x1001 and sends the "error reset"
//!   emergency (code 0x0000, CiA 301 practice).
//! * Statusword: state bits, bit 9 remote, bit 10 target reached, bit 11 internal limit
//!   active (a command was clamped), bit 12 (PP set-point acknowledge; PV speed zero;
//!   CSx drive follows the command), bit 13 (CSP following error).

use super::cia402::DriveState;
use crate::esc::{Behaviour, Esc};
use ecat_wire::coe::EmergencyRepr;

/// Error code of a following-error fault (CiA 402).
pub const FOLLOWING_ERROR_CODE: u16 = 0x8611;
/// Error register value while a fault is present.
pub const FAULT_ERROR_REGISTER: u8 = 0x21;

const K: f64 = (1u64 << 20) as f64 / core::f64::consts::TAU; // increments per radian
const STEP: f64 = 100e-6;

/// The servo drive behaviour.
#[derive(Debug, Default, Clone)]
pub struct Drive {
    state: DriveState,
    last_cw: u16,
    last_ns: Option<u64>,
    /// Position (increments) and velocity (increments/s).
    pos: f64,
    vel: f64,
    /// Torque actual (per-mille of rated).
    torque: f64,
    mode: i8,
    /// CSP feed-forward: last target, when it changed, velocity estimate.
    last_target: i64,
    target_ns: u64,
    ff: f64,
    fe_since: Option<u64>,
    /// PP: active target and whether it is reached.
    pp_target: f64,
    pp_moving: bool,
    limit: bool,
    fe_flag: bool,
}

/// Parameters read from the dictionary once per frame.
struct P {
    vmax: f64,
    amax: f64,
    tmax: f64,
    rated: f64,
    j: f64,
    b: f64,
    kp: f64,
    qs_dec: f64,
    acc: f64,
    dec: f64,
    prof_v: f64,
    lim: (f64, f64),
}

impl P {
    fn read(od: &crate::coe::Od) -> P {
        let g = |i, s, d| od.get_or(i, s, d) as f64;
        let rated = g(0x2000, 1, 1270).max(1.0) / 1000.0;
        let j = g(0x2000, 2, 1500).max(1.0) * 1e-7;
        let tmax = g(0x6072, 0, 3000);
        let vmax =
            g(0x607F, 0, 50 << 20).min(g(0x6080, 0, 3000) * K * core::f64::consts::TAU / 60.0);
        let a_torque = tmax / 1000.0 * rated / j * K;
        P {
            vmax,
            amax: g(0x60C5, 0, 2000 << 20).min(a_torque).max(1.0),
            tmax,
            rated,
            j,
            b: g(0x2000, 3, 200) * 1e-6,
            kp: g(0x2000, 4, 500),
            qs_dec: g(0x6085, 0, 1000 << 20).max(1.0),
            acc: g(0x6083, 0, 100 << 20).max(1.0),
            dec: g(0x6084, 0, 100 << 20).max(1.0),
            prof_v: g(0x6081, 0, 10 << 20),
            lim: (g(0x607D, 1, i32::MIN as i64), g(0x607D, 2, i32::MAX as i64)),
        }
    }
}

fn approach(v: f64, target: f64, rate: f64, h: f64) -> f64 {
    v + (target - v).clamp(-rate * h, rate * h)
}

impl Drive {
    fn clamp_v(&mut self, v: f64, p: &P) -> f64 {
        if v.abs() > p.vmax {
            self.limit = true;
        }
        v.clamp(-p.vmax, p.vmax)
    }

    /// Advance the motor by `h` seconds; returns the acceleration (inc/s²).
    fn step(&mut self, h: f64, p: &P, cmd: &Cmd) -> f64 {
        let v0 = self.vel;
        let friction = p.b * (self.vel / K) / p.rated * 1000.0; // per-mille
        if !self.state.powered() {
            self.vel = approach(self.vel, 0.0, p.qs_dec, h);
            self.torque = 0.0;
        } else if matches!(
            self.state,
            DriveState::QuickStopActive | DriveState::FaultReactionActive
        ) {
            self.vel = approach(self.vel, 0.0, p.qs_dec.min(p.amax), h);
        } else if cmd.halt && self.mode != 10 {
            self.vel = approach(self.vel, 0.0, p.dec.min(p.amax), h);
        } else {
            match self.mode {
                9 => {
                    let vd = self.clamp_v(cmd.velocity, p);
                    self.vel = approach(self.vel, vd, p.amax, h);
                }
                3 => {
                    let vd = self.clamp_v(cmd.velocity, p);
                    let speeding = vd.abs() > self.vel.abs() && vd * self.vel >= 0.0;
                    let rate = if speeding { p.acc } else { p.dec };
                    self.vel = approach(self.vel, vd, rate.min(p.amax), h);
                }
                8 => {
                    let vd = self.ff + p.kp * (cmd.position - self.pos);
                    let vd = self.clamp_v(vd, p);
                    self.vel = approach(self.vel, vd, p.amax, h);
                }
                10 => {
                    let t = cmd.torque.clamp(-p.tmax, p.tmax);
                    if cmd.torque.abs() > p.tmax {
                        self.limit = true;
                    }
                    let a = (t - friction) / 1000.0 * p.rated / p.j * K;
                    self.vel = self.clamp_v(self.vel + a * h, p);
                }
                1 if self.pp_moving => {
                    let d = self.pp_target - self.pos;
                    let vp = p.prof_v.min(p.vmax);
                    let vd = d.signum() * vp.min((2.0 * p.dec * d.abs()).sqrt());
                    let speeding = vd.abs() > self.vel.abs();
                    let rate = if speeding { p.acc } else { p.dec }.min(p.amax);
                    self.vel = approach(self.vel, vd, rate, h);
                    if d.abs() < 1.0 && self.vel.abs() <= rate * h {
                        self.pos = self.pp_target;
                        self.vel = 0.0;
                        self.pp_moving = false;
                    }
                }
                _ => self.vel = approach(self.vel, 0.0, p.amax, h),
            }
        }
        self.pos += (v0 + self.vel) / 2.0 * h;
        let a = (self.vel - v0) / h;
        if self.state.powered() && self.mode != 10 {
            let t = (p.j * a / K + p.b * self.vel / K) / p.rated * 1000.0;
            self.torque = t.clamp(-p.tmax, p.tmax);
        } else if self.state.powered() {
            self.torque = cmd.torque.clamp(-p.tmax, p.tmax);
        }
        a
    }

    fn fault(&mut self, od: &mut crate::coe::Od, code: u16, out: &mut Option<EmergencyRepr>) {
        self.state = DriveState::FaultReactionActive;
        od.set(0x603F, 0, code as i64);
        od.set(0x1001, 0, FAULT_ERROR_REGISTER as i64);
        *out = Some(EmergencyRepr {
            error_code: code,
            error_register: FAULT_ERROR_REGISTER,
            data: [0; 5],
        });
    }

    /// One frame: state machine, motion, monitoring, actual values. Returns an emergency to
    /// send, if any.
    fn run(&mut self, od: &mut crate::coe::Od, now_ns: u64) -> Option<EmergencyRepr> {
        let mut emcy = None;
        let dt = now_ns
            .saturating_sub(self.last_ns.unwrap_or(now_ns))
            .min(1_000_000_000);
        self.last_ns = Some(now_ns);
        let cw = od.get_or(0x6040, 0, 0) as u16;
        let before = self.state;
        self.state = self
            .state
            .on_controlword(cw, self.last_cw, od.get_or(0x605A, 0, 2));
        if before == DriveState::Fault && self.state != DriveState::Fault {
            od.set(0x603F, 0, 0);
            od.set(0x1001, 0, 0);
            emcy = Some(EmergencyRepr::default());
        }
        let requested = od.get_or(0x6060, 0, 0) as i8;
        let modes = od.get_or(0x6502, 0, 0);
        if requested > 0 && modes >> (requested - 1) & 1 == 1 && requested != self.mode {
            self.mode = requested;
            self.pp_moving = false;
            self.fe_since = None;
        }
        let p = P::read(od);
        let target = od.get_or(0x607A, 0, 0);
        // CSP feed-forward from the target's rate of change.
        if target != self.last_target {
            let span = now_ns.saturating_sub(self.target_ns);
            self.ff = if span > 0 && span < 100_000_000 {
                (target - self.last_target) as f64 / (span as f64 * 1e-9)
            } else {
                0.0
            };
            self.last_target = target;
            self.target_ns = now_ns;
        } else if now_ns.saturating_sub(self.target_ns) > 10_000_000 {
            self.ff = 0.0;
        }
        let pos_cmd = (target as f64).clamp(p.lim.0, p.lim.1);
        self.limit = pos_cmd != target as f64 && self.mode == 8;
        // PP set-point.
        if self.mode == 1
            && cw & 0x10 != 0
            && self.last_cw & 0x10 == 0
            && self.state == DriveState::OperationEnabled
        {
            let base = if cw & 0x40 != 0 { self.pp_target } else { 0.0 };
            self.pp_target = (base + target as f64).clamp(p.lim.0, p.lim.1);
            self.pp_moving = true;
        }
        if self.state != DriveState::OperationEnabled {
            self.pp_target = self.pos;
            self.pp_moving = false;
        }
        self.last_cw = cw;
        let cmd = Cmd {
            velocity: (od.get_or(0x60FF, 0, 0) + od.get_or(0x60B1, 0, 0)) as f64,
            position: pos_cmd,
            torque: (od.get_or(0x6071, 0, 0) + od.get_or(0x60B2, 0, 0)) as f64,
            halt: cw & 0x100 != 0,
        };
        let mut left = dt as f64 * 1e-9;
        while left > 1e-12 {
            let h = left.min(STEP);
            self.step(h, &p, &cmd);
            left -= h;
        }
        if !self.pos.is_finite() || !self.vel.is_finite() {
            self.pos = 0.0;
            self.vel = 0.0;
        }
        // Stopped after quick stop / fault reaction.
        if self.vel == 0.0 {
            match self.state {
                DriveState::FaultReactionActive => self.state = DriveState::Fault,
                DriveState::QuickStopActive if !(5..=8).contains(&od.get_or(0x605A, 0, 2)) => {
                    self.state = DriveState::SwitchOnDisabled
                }
                _ => {}
            }
        }
        // Simulated fault (0x2002, write-only).
        let injected = od.get_or(0x2002, 0, 0);
        if injected != 0 {
            od.set(0x2002, 0, 0);
            if !matches!(
                self.state,
                DriveState::Fault | DriveState::FaultReactionActive
            ) {
                self.fault(od, injected as u16, &mut emcy);
            }
        }
        // Following error (CSP).
        let fe = if self.mode == 8 && self.state == DriveState::OperationEnabled {
            pos_cmd - self.pos
        } else {
            0.0
        };
        let window = od.get_or(0x6065, 0, u32::MAX as i64);
        self.fe_flag = window != u32::MAX as i64 && fe.abs() > window as f64;
        if self.fe_flag {
            let since = *self.fe_since.get_or_insert(now_ns);
            let timeout = od.get_or(0x6066, 0, 0) as u64 * 1_000_000;
            if now_ns - since >= timeout {
                self.fault(od, FOLLOWING_ERROR_CODE, &mut emcy);
                self.fe_since = None;
            }
        } else {
            self.fe_since = None;
        }
        self.write_actuals(od, &p, &cmd, fe);
        emcy
    }

    fn write_actuals(&self, od: &mut crate::coe::Od, p: &P, cmd: &Cmd, fe: f64) {
        let pos = self.pos.round() as i64 as i32 as i64;
        od.set(0x6064, 0, pos);
        od.set(0x6063, 0, pos);
        od.set(0x6062, 0, cmd.position as i64);
        od.set(0x606C, 0, self.vel.round() as i64);
        od.set(0x606B, 0, cmd.velocity.clamp(-p.vmax, p.vmax) as i64);
        od.set(0x6077, 0, self.torque.round() as i64);
        od.set(0x6074, 0, self.torque.round() as i64);
        od.set(0x60F4, 0, fe.round() as i64);
        od.set(0x6061, 0, self.mode as i64);
        od.set(0x6041, 0, self.statusword(od, p, cmd) as i64);
    }

    fn statusword(&self, od: &crate::coe::Od, p: &P, cmd: &Cmd) -> u16 {
        let mut sw = self.state.statusword_bits() | 0x0200;
        if self.state != DriveState::OperationEnabled {
            if self.state == DriveState::QuickStopActive && self.vel == 0.0 {
                sw |= 0x0400;
            }
            return sw;
        }
        let vwin = od.get_or(0x606D, 0, 1000) as f64;
        let reached = if cmd.halt {
            self.vel == 0.0
        } else {
            match self.mode {
                9 | 3 => (self.vel - cmd.velocity.clamp(-p.vmax, p.vmax)).abs() <= vwin,
                8 => (cmd.position - self.pos).abs() <= od.get_or(0x6067, 0, 1000) as f64,
                1 => !self.pp_moving,
                _ => true,
            }
        };
        if reached {
            sw |= 0x0400;
        }
        if self.limit {
            sw |= 0x0800;
        }
        let bit12 = match self.mode {
            1 => self.last_cw & 0x10 != 0,
            3 => self.vel.abs() <= vwin,
            _ => true,
        };
        if bit12 {
            sw |= 0x1000;
        }
        if self.fe_flag {
            sw |= 0x2000;
        }
        sw
    }

    /// The drive state (for tests and tools).
    pub fn state(&self) -> DriveState {
        self.state
    }
}

struct Cmd {
    velocity: f64,
    position: f64,
    torque: f64,
    halt: bool,
}

impl Behaviour for Drive {
    fn end_of_frame(&mut self, esc: &mut Esc, now_ns: u64) {
        let Some(od) = esc.od_mut() else {
            return;
        };
        if let Some(e) = self.run(od, now_ns) {
            esc.send_emergency(&e);
        }
    }

    fn power_up(&mut self) {
        *self = Drive::default();
    }
}
