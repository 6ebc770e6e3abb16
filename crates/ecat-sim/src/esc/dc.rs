//! Distributed clocks (reference §3.11, §8): the ESC's local clock, receive-time latching, the
//! local copy of system time with its control loop, and the SYNC0/SYNC1 unit.
//!
//! **Clocks.** Network ("true") time is the `now_ns` of [`crate::Network::process`]. The
//! local clock runs `local(t) = (t − t0)·(1 + drift_ppm·1e−6) + start_offset` ([`DcClock`]),
//! wrapping at 64 bits, or at 32 bits when the feature register 0x0008 bit 3 is clear. The
//! local copy of system time is `local + offset(0x0920) + correction`, where `correction` is
//! what the control loop has accumulated.
//!
//! **A frame's passage.** The network computes, before the datagrams run, the true time at
//! which the frame reaches this ESC's ports (entry at port 0, and the return through every
//! open port) and hands them over ([`Esc::dc_frame`]). The frame passes the EPU when it
//! enters port 0. Then:
//! * an ECAT write touching 0x0900–0x0903 latches the local time of *that* frame at every
//!   port it passes (low 32 bits into 0x0900 + 4·port) and at the EPU (0x0918, 64 bits).
//!   Ports the frame does not pass (closed, not implemented) keep their old value: the real
//!   EK1100/EL2828/EL2889 in `replay-dc.pcapng` show values that are no times at all there
//!   (zero, or ASCII left-overs of power-up contents); this model powers up with zeros;
//! * 0x0910 reads the local copy of system time at the EPU arrival minus the System Time
//!   Delay 0x0928 (reference §8.2), for 32-bit DCs the low 4 bytes only;
//! * an ECAT write of 0x0910 (FPWR, or the non-addressed ESCs of an FRMW/ARMW) computes
//!   Δ = (local copy at EPU arrival − delay) − received and feeds the control loop; a write of
//!   only the low 4 bytes (or a 32-bit DC) compares modulo 2³².
//!
//! **Control loop.** A real ESC corrects by running its copy slightly faster or slower; its
//! loop runs in the clock domain, not per frame. This one is a PI loop on the clock *speed*
//! with time constants in local time: after each Δ (measured `h` local ns after the previous
//! one) the correction rate becomes `freq − Δ/τ`, bounded by ±[`MAX_RATE`] (1000 ppm), and
//! while not bounded the integral `freq` (the learned drift) moves by `−Δ·h/τi²`, `τi = 2τ`
//! (critically damped). `τ = max(2h, LOOP_TAU_NS · 0x0930/0x1000)` (1 ms at the reset value;
//! a larger 0x0930 makes the loop smoother, as on a real ESC — the exact relation is ours), so
//! the 1 ns granularity of Δ does not turn into speed noise when frames come every few µs,
//! and the loop stays stable when they come rarely. Δ jumps (offset changes) are slewed at
//! most at 1000 ppm: 1 µs takes 1 ms. 0x092C shows the filtered mean |Δ| (IIR with depth
//! 0x0934: `mean += (|Δ| − mean)/2^depth`) with bit 31 set when the local copy is *smaller*
//! than the received time (B2; reference §12). 0x0932 shows the learned speed deviation in
//! units of 0.1 ppm (our scale, unverified). Writing 0x0930 resets 0x092C, 0x0932 and the loop
//! state; writing 0x0920 makes the copy exactly `local + offset` again (the accumulated
//! correction is dropped, the learned speed kept).
//!
//! **SYNC unit.** Writing 0x0981 with bit 0 (cyclic unit) and bit 1 (SYNC0) and/or bit 2
//! (SYNC1) set arms it with the start time 0x0990: the first SYNC0 pulse comes when the local
//! copy of system time reaches the start time, then every 0x09A0 ns of system time (0 =
//! single shot). A start time in the past (more than half the DC range away, compared in the
//! DC's width) sets 0x0984 bit 2 and never fires on a 64-bit DC; a 32-bit DC fires when its
//! time wraps round to it. SYNC1 (our reading of the unverified rule): with `n = 0x09A4 /
//! 0x09A0` and `r = 0x09A4 mod 0x09A0`, SYNC1 comes `r` ns after every SYNC0 when `n = 0`, else
//! `r` ns after every n-th SYNC0. 0x0990 reads the next SYNC0 time, 0x0998 the next SYNC1,
//! 0x0984 bit 0/1 say the first pulse is pending, 0x098E/0x098F bit 0 are set by a pulse in
//! acknowledge mode (0x0982 = 0; nothing clears them here as there is no PDI read) or show
//! whether a pulse of 0x0982·10 ns is on at the frame's arrival.
//! The true-time instants of the pulses are kept in a bounded log ([`PULSE_LOG`] per signal)
//! for tests ([`Esc::sync0_pulses`]).

use super::Esc;
use ecat_wire::register::features;
use std::collections::VecDeque;

/// Pulses kept per SYNC signal in the log ([`Esc::sync0_pulses`]).
pub const PULSE_LOG: usize = 1024;

/// Largest correction rate of the control loop (ns of correction per local ns).
pub const MAX_RATE: f64 = 1e-3;

/// Time constant of the control loop's proportional part (ns) with 0x0930 = 0x1000.
pub const LOOP_TAU_NS: f64 = 1e6;

/// How an ESC's local clock runs against network (true) time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DcClock {
    /// Drift in ppm: positive runs fast.
    pub drift_ppm: f64,
    /// Local time at true time `t0_ns`.
    pub start_offset_ns: u64,
    /// True time the start offset refers to.
    pub t0_ns: u64,
}

impl Default for DcClock {
    fn default() -> DcClock {
        DcClock {
            drift_ppm: 0.0,
            start_offset_ns: 0,
            t0_ns: 0,
        }
    }
}

/// Below this magnitude an `f64` has a fractional part (2^52), and `as i64` is exact.
const FRACTION_LIMIT: f64 = 4_503_599_627_370_496.0;

/// `x.round()` (half away from zero) without the library call `f64::round` is on x86-64
/// without SSE4.1 (the clocks round on every frame that reaches an ESC's DC registers).
fn round(x: f64) -> f64 {
    if x.is_nan() || x.abs() >= FRACTION_LIMIT {
        return x.round();
    }
    let t = x as i64 as f64;
    let f = x - t;
    if f >= 0.5 {
        t + 1.0
    } else if f <= -0.5 {
        t - 1.0
    } else if t == 0.0 {
        // Keep the sign of a zero result as `f64::round` does.
        0.0f64.copysign(x)
    } else {
        t
    }
}

/// `x.floor()` likewise.
fn floor(x: f64) -> f64 {
    if x.is_nan() || x.abs() >= FRACTION_LIMIT {
        return x.floor();
    }
    let t = x as i64 as f64;
    if x < t {
        t - 1.0
    } else if t == 0.0 {
        0.0f64.copysign(x)
    } else {
        t
    }
}

impl DcClock {
    /// Local time (full 64 bits, wrapping) at true time `t`.
    pub fn local(&self, t: u64) -> u64 {
        // Times below 2^62 ns (146 years) differ by an exact 64-bit value, and the result
        // wraps the same in 64 bits as in 128: no 128-bit arithmetic on the usual path.
        const FAST: u64 = 1 << 62;
        if t < FAST && self.t0_ns < FAST {
            let dt = t as i64 - self.t0_ns as i64;
            let x = round(dt as f64 * self.drift_ppm * 1e-6);
            if x.abs() < 9.0e18 {
                return self
                    .start_offset_ns
                    .wrapping_add(dt as u64)
                    .wrapping_add(x as i64 as u64);
            }
        }
        let dt = t as i128 - self.t0_ns as i128;
        // The conversions go through 64 bits when the values fit (the same numbers: both
        // round to nearest), as 128-bit float conversions are slow library calls.
        let dtf = match i64::try_from(dt) {
            Ok(d) => d as f64,
            Err(_) => dt as f64,
        };
        let x = round(dtf * self.drift_ppm * 1e-6);
        let extra = if x.abs() < 9.0e18 {
            x as i64 as i128
        } else {
            x as i128
        };
        (self.start_offset_ns as i128 + dt + extra) as u64
    }
}

/// Where the frame being processed passes this ESC, in true time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FramePassage {
    /// Arrival at each port (port 0: entry; others: the frame coming back), `None` where
    /// the frame does not pass.
    pub ports: [Option<u64>; 4],
    /// Passage through the EtherCAT processing unit.
    pub epu: u64,
}

impl FramePassage {
    /// The same passage `dt_ns` later.
    pub fn shifted(self, dt_ns: u64) -> FramePassage {
        FramePassage {
            ports: self.ports.map(|p| p.map(|t| t + dt_ns)),
            epu: self.epu + dt_ns,
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Sync {
    /// Armed: the cyclic unit waits for or generates pulses.
    active: bool,
    sync0: bool,
    sync1: bool,
    /// Remaining system-time ns from `at_sys` to the next SYNC0 pulse.
    next: Option<u64>,
    /// SYNC0 pulses so far since activation.
    index: u64,
    /// True time up to which pulses were generated.
    done_to: u64,
    last0: Option<u64>,
    last1: Option<u64>,
    log0: VecDeque<u64>,
    log1: VecDeque<u64>,
    count0: u64,
    count1: u64,
    /// Pending SYNC1 pulses (true time) not yet due.
    pending1: VecDeque<u64>,
}

/// DC state that is not in registers.
#[derive(Debug, Clone, Default)]
pub(crate) struct DcState {
    pub clock: DcClock,
    frame: Option<FramePassage>,
    /// System time bytes received by the write being processed.
    rx: [u8; 8],
    rx_mask: u8,
    // Control loop: the correction is `corr + rate·(local − seg_local)`.
    seg_local: u64,
    corr: f64,
    rate: f64,
    freq: f64,
    last_cmp_local: Option<u64>,
    mean_abs: f64,
    sync: Sync,
}

fn push_log(log: &mut VecDeque<u64>, t: u64) {
    if log.len() == PULSE_LOG {
        log.pop_front();
    }
    log.push_back(t);
}

impl Esc {
    fn dc_present(&self) -> bool {
        self.chip.features & features::DC != 0
    }

    /// Mask of the DC width: 64 bits, or 32 when 0x0008 bit 3 is clear.
    pub(crate) fn dc_mask(&self) -> u64 {
        if self.chip.features & features::DC_64BIT != 0 {
            u64::MAX
        } else {
            u32::MAX as u64
        }
    }

    /// The local clock's parameters.
    pub fn dc_clock(&self) -> DcClock {
        self.dc.clock
    }

    /// Set the local clock's parameters (drift, start offset).
    pub fn set_dc_clock(&mut self, clock: DcClock) {
        self.dc.clock = clock;
        self.dc.seg_local = clock.local(clock.t0_ns);
    }

    /// Local time at true time `t_ns`, in the DC's width.
    pub fn local_time(&self, t_ns: u64) -> u64 {
        self.dc.clock.local(t_ns) & self.dc_mask()
    }

    fn correction_at(&self, local: u64) -> f64 {
        let dl = local.wrapping_sub(self.dc.seg_local) as i64 as f64;
        self.dc.corr + self.dc.rate * dl
    }

    /// Little-endian `u64` of the registers at `a` (in the register space, always present).
    fn reg_u64(&self, a: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.mem[a..a + 8]);
        u64::from_le_bytes(b)
    }

    fn dc_offset(&self) -> u64 {
        self.reg_u64(0x0920) & self.dc_mask()
    }

    fn dc_delay(&self) -> u64 {
        self.reg_u64(0x0928) & u32::MAX as u64
    }

    /// Local copy of system time at true time `t_ns`, in the DC's width.
    pub fn system_time(&self, t_ns: u64) -> u64 {
        self.system_time_at_local(self.dc.clock.local(t_ns))
    }

    /// [`Esc::system_time`] when the local time is known already.
    fn system_time_at_local(&self, local: u64) -> u64 {
        let c = floor(self.correction_at(local)) as i64;
        local.wrapping_add(self.dc_offset()).wrapping_add(c as u64) & self.dc_mask()
    }

    /// Current correction speed of the control loop, in ppm (positive: the copy runs faster
    /// than the local clock).
    pub fn dc_correction_ppm(&self) -> f64 {
        self.dc.rate * 1e6
    }

    /// True times of the latest SYNC0 pulses (at most [`PULSE_LOG`]), oldest first.
    pub fn sync0_pulses(&self) -> impl Iterator<Item = u64> + '_ {
        self.dc.sync.log0.iter().copied()
    }

    /// True times of the latest SYNC1 pulses (at most [`PULSE_LOG`]), oldest first.
    pub fn sync1_pulses(&self) -> impl Iterator<Item = u64> + '_ {
        self.dc.sync.log1.iter().copied()
    }

    /// SYNC0 pulses since power-up (the log keeps only the latest).
    pub fn sync0_count(&self) -> u64 {
        self.dc.sync.count0
    }

    /// Reset the DC state at power-up (the local clock keeps running).
    pub(crate) fn dc_power_up(&mut self) {
        let clock = self.dc.clock;
        self.dc = DcState::default();
        self.set_dc_clock(clock);
    }

    /// The frame about to be processed passes this ESC as `p` says (true times). Runs the
    /// SYNC unit up to the EPU passage and loads 0x0910 for reads.
    pub fn dc_frame(&mut self, p: FramePassage) {
        if !self.dc_present() {
            return;
        }
        self.dc.frame = Some(p);
        if !self.shape.dc_units {
            return;
        }
        if !self.no_pulse_until(p.epu) {
            self.advance_sync(p.epu);
        }
        let v = self.system_time(p.epu).wrapping_sub(self.dc_delay()) & self.dc_mask();
        self.pdi_write(0x0910, &v.to_le_bytes());
        self.sync_status(p.epu);
    }

    /// The DC state a frame touches, loaded (see [`Esc::warm`]).
    pub(crate) fn dc_warm(&self) -> u64 {
        let s = &self.dc.sync;
        s.done_to
            ^ s.log0.back().copied().unwrap_or(0)
            ^ s.log1.back().copied().unwrap_or(0)
            ^ self.dc.seg_local
    }

    /// Advance the SYNC unit (pulse generation) to true time `t_ns` without a frame.
    pub fn dc_advance(&mut self, t_ns: u64) {
        if self.dc_present() && self.shape.dc_units {
            self.advance_sync(t_ns);
        }
    }

    /// A system-time byte written by ECAT (0x0910..0x0917): kept for the comparison.
    pub(crate) fn dc_store_system_time(&mut self, a: u32, v: u8) {
        let i = (a - 0x0910) as usize;
        self.dc.rx[i] = v;
        self.dc.rx_mask |= 1 << i;
    }

    /// DC side effects of an ECAT write of `[start, end)`.
    pub(crate) fn dc_after_write(&mut self, start: u32, end: u32) {
        let over = |lo: u32, hi: u32| start < hi && end > lo;
        let Some(p) = self.dc.frame else {
            self.dc.rx_mask = 0;
            return;
        };
        if over(0x0900, 0x0904) {
            self.dc_latch(p);
        }
        if !self.shape.dc_units {
            return;
        }
        if over(0x0920, 0x0928) {
            self.new_segment(p.epu);
            self.dc.corr = 0.0;
        }
        if over(0x0910, 0x0918) && self.dc.rx_mask != 0 {
            self.system_time_written(p.epu);
        }
        self.dc.rx_mask = 0;
        if over(0x0930, 0x0932) {
            self.new_segment(p.epu);
            self.dc.rate = 0.0;
            self.dc.freq = 0.0;
            self.dc.mean_abs = 0.0;
            self.dc.last_cmp_local = None;
            self.pdi_write(0x092C, &[0; 4]);
            self.pdi_write(0x0932, &[0; 2]);
        }
        if over(0x0981, 0x0982) {
            self.activation_written(p.epu);
        }
    }

    /// A frame carrying the latch write (0x0900) passes `port` in forwarding direction at
    /// true time `t_ns` without reaching the processing unit: the port's receive time is
    /// latched all the same (as on the way back through a port in a line).
    pub fn dc_latch_port(&mut self, port: usize, t_ns: u64) {
        if !self.dc_present() || port > 3 {
            return;
        }
        let v = self.dc.clock.local(t_ns) as u32;
        self.pdi_write(0x0900 + 4 * port as u16, &v.to_le_bytes());
    }

    fn dc_latch(&mut self, p: FramePassage) {
        for (port, t) in p.ports.iter().enumerate() {
            if let Some(t) = t {
                let v = self.dc.clock.local(*t) as u32;
                self.pdi_write(0x0900 + 4 * port as u16, &v.to_le_bytes());
            }
        }
        let v = self.local_time(p.epu);
        self.pdi_write(0x0918, &v.to_le_bytes());
    }

    /// Freeze the correction at true time `t` to start a new linear piece; pulses up to `t`
    /// are generated first with the old one.
    fn new_segment(&mut self, t: u64) {
        self.new_segment_at_local(t, self.dc.clock.local(t));
    }

    /// [`Esc::new_segment`] when the local time at `t` is known already.
    fn new_segment_at_local(&mut self, t: u64, local: u64) {
        self.advance_sync(t);
        self.dc.corr = self.correction_at(local);
        self.dc.seg_local = local;
    }

    fn system_time_written(&mut self, t: u64) {
        let received = u64::from_le_bytes(self.dc.rx);
        // One local time for the whole comparison (the pulses `new_segment` runs change
        // neither the clock nor the correction).
        let local = self.dc.clock.local(t);
        let own = self
            .system_time_at_local(local)
            .wrapping_sub(self.dc_delay());
        let narrow = self.dc_mask() != u64::MAX || self.dc.rx_mask & 0xF0 == 0;
        let delta = if narrow {
            own.wrapping_sub(received) as u32 as i32 as f64
        } else {
            own.wrapping_sub(received) as i64 as f64
        };
        self.new_segment_at_local(t, local);
        // Filtered mean |Δ| with the sign of the latest Δ (B2: bit 31 = local copy smaller).
        let depth = (self.mem[0x0934] & 0x0F) as i32;
        let m = &mut self.dc.mean_abs;
        *m += (delta.abs() - *m) / 2f64.powi(depth);
        let mut reg = (round(*m) as u64).min(0x7FFF_FFFF) as u32;
        if delta < 0.0 {
            reg |= 0x8000_0000;
        }
        self.pdi_write(0x092C, &reg.to_le_bytes());
        let h = self
            .dc
            .last_cmp_local
            .map(|prev| local.wrapping_sub(prev) as i64 as f64)
            .filter(|h| *h > 0.0);
        self.dc.last_cmp_local = Some(local);
        let Some(h) = h else { return };
        let start = (self.get16(0x0930) & 0x7FFF).max(1) as f64;
        let tau = (h / 0.5).max(LOOP_TAU_NS * (start / 4096.0).max(1.0 / 16.0));
        let taui = 2.0 * tau;
        let r = self.dc.freq - delta / tau;
        if r.abs() > MAX_RATE {
            self.dc.rate = r.clamp(-MAX_RATE, MAX_RATE);
        } else {
            self.dc.rate = r;
            self.dc.freq = (self.dc.freq - delta * h / (taui * taui)).clamp(-MAX_RATE, MAX_RATE);
        }
        let scd = (self.dc.freq * 1e7)
            .round()
            .clamp(i16::MIN as f64, i16::MAX as f64) as i16;
        self.put16(0x0932, scd as u16);
    }

    fn activation_written(&mut self, t: u64) {
        self.advance_sync(t);
        let act = self.mem[0x0981];
        let s = &mut self.dc.sync;
        s.active = act & 1 != 0 && act & 0x06 != 0;
        s.sync0 = act & 0x02 != 0;
        s.sync1 = act & 0x04 != 0;
        s.index = 0;
        s.pending1.clear();
        s.next = None;
        s.done_to = t;
        let mut status = 0u8;
        if s.active {
            let mask = self.dc_mask();
            let mut b = [0u8; 8];
            self.read(0x0990, &mut b);
            let start = u64::from_le_bytes(b) & mask;
            let now = self.system_time(t);
            let wait = start.wrapping_sub(now) & mask;
            let half = mask / 2;
            let s = &mut self.dc.sync;
            if wait > half {
                status |= 0x04;
                if mask != u64::MAX {
                    s.next = Some(wait);
                }
            } else {
                s.next = Some(wait);
            }
            status |= if s.sync0 { 0x01 } else { 0 } | if s.sync1 { 0x02 } else { 0 };
        }
        self.mem[0x0984] = status;
        self.mem[0x0981] &= 0x7F;
    }

    /// Generate the pulses due up to true time `t` on the current linear piece.
    /// Cheap test that no SYNC pulse falls in `(done_to, t]`: then [`Esc::advance_sync`] up to
    /// `t` can wait (its bookkeeping is relative to `done_to`, and the system time runs
    /// linearly until the next segment, which advances first). Bounds the system time that
    /// passes by the current speed, with margin for the 1 ns rounding.
    fn no_pulse_until(&self, t: u64) -> bool {
        let s = &self.dc.sync;
        if !s.active || t <= s.done_to {
            return true;
        }
        let (Some(wait), None) = (s.next, s.pending1.front()) else {
            return false;
        };
        let k = (1.0 + self.dc.clock.drift_ppm * 1e-6) * (1.0 + self.dc.rate);
        (wait as f64) > (t - s.done_to) as f64 * k * (1.0 + 1e-9) + 4.0
    }

    fn advance_sync(&mut self, t: u64) {
        let s = &self.dc.sync;
        if !s.active || t <= s.done_to {
            return;
        }
        let from = s.done_to;
        let Some(mut wait) = s.next else {
            self.dc.sync.done_to = t;
            return;
        };
        let mask = self.dc_mask();
        // System-time ns per true ns on this piece.
        let k = (1.0 + self.dc.clock.drift_ppm * 1e-6) * (1.0 + self.dc.rate);
        // The pulses below change neither the clock nor the correction: `now_sys` holds.
        let now_sys = self.system_time(t);
        let span = now_sys.wrapping_sub(self.system_time(from)) & mask;
        let cycle0 = self.read_u32(0x09A0) as u64;
        let cycle1 = self.read_u32(0x09A4) as u64;
        let (n1, r1) = match (cycle1.checked_div(cycle0), cycle1.checked_rem(cycle0)) {
            (Some(n), Some(r)) => (n, r),
            _ => (0, cycle1),
        };
        let pulse_at = |w: u64| from + round(w as f64 / k) as u64;
        // Skip pulses that would fall out of the log anyway.
        if cycle0 > 0 && wait <= span {
            let n = (span - wait) / cycle0 + 1;
            let keep = PULSE_LOG as u64 + 1;
            if n > keep {
                let skip = n - keep;
                let s = &mut self.dc.sync;
                s.count0 += skip;
                s.index += skip;
                wait += skip * cycle0;
            }
        }
        while wait <= span {
            let tp = pulse_at(wait).min(t);
            let s = &mut self.dc.sync;
            if s.sync0 {
                push_log(&mut s.log0, tp);
                s.count0 += 1;
                s.last0 = Some(tp);
            }
            if s.sync1 && (n1 == 0 || (s.index + 1).is_multiple_of(n1)) {
                s.pending1.push_back(tp + (r1 as f64 / k).round() as u64);
                if s.pending1.len() > PULSE_LOG {
                    s.pending1.pop_front();
                }
            }
            s.index += 1;
            self.mem[0x0984] &= !0x03;
            if cycle0 == 0 {
                self.dc.sync.active = false;
                self.dc.sync.next = None;
                break;
            }
            wait += cycle0;
        }
        let s = &mut self.dc.sync;
        while s.pending1.front().is_some_and(|&p| p <= t) {
            let p = s.pending1.pop_front().unwrap_or(0);
            push_log(&mut s.log1, p);
            s.count1 += 1;
            s.last1 = Some(p);
        }
        if s.active {
            s.next = Some(wait - span);
        }
        s.done_to = t;
        if let Some(w) = self.dc.sync.next {
            let next0 = now_sys.wrapping_add(w) & mask;
            self.pdi_write(0x0990, &next0.to_le_bytes()[..self.dc_bytes()]);
            if let Some(&p1) = self.dc.sync.pending1.front() {
                let d = ((p1 - t) as f64 * k).round() as u64;
                let next1 = now_sys.wrapping_add(d) & mask;
                self.pdi_write(0x0998, &next1.to_le_bytes()[..self.dc_bytes()]);
            }
        }
    }

    fn dc_bytes(&self) -> usize {
        if self.dc_mask() == u64::MAX {
            8
        } else {
            4
        }
    }

    /// SYNC0/1 status bits at true time `t`.
    fn sync_status(&mut self, t: u64) {
        let len = self.get16(0x0982) as u64 * 10;
        let s = &self.dc.sync;
        let state = |last: Option<u64>| match last {
            None => 0u8,
            Some(_) if len == 0 => 1,
            Some(p) => (t >= p && t - p < len) as u8,
        };
        let (a, b) = (state(s.last0), state(s.last1));
        self.mem[0x098E] = a;
        self.mem[0x098F] = b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The local clock as 128-bit arithmetic computes it (what the 64-bit path must match).
    fn local_wide(c: &DcClock, t: u64) -> u64 {
        let dt = t as i128 - c.t0_ns as i128;
        let x = (dt as f64 * c.drift_ppm * 1e-6).round();
        (c.start_offset_ns as i128 + dt + x as i128) as u64
    }

    #[test]
    fn local_clock_64_bit_path_matches_128_bit_arithmetic() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for i in 0..100_000 {
            let c = DcClock {
                drift_ppm: [0.0, 100.0, -100.0, 12.345, -0.001][i % 5],
                start_offset_ns: next(),
                t0_ns: next() >> [1, 20, 40][i % 3],
            };
            let t = match i % 4 {
                0 => c.t0_ns.wrapping_add(next() >> 30),
                1 => c.t0_ns.saturating_sub(next() >> 30),
                2 => next() >> 1,
                _ => next(),
            };
            assert_eq!(c.local(t), local_wide(&c, t), "{c:?} at {t}");
        }
    }

    #[test]
    fn fast_round_and_floor_match_std() {
        let mut v = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            1e-300,
            -1e-300,
            4503599627370495.5,
            -4503599627370495.5,
            4503599627370496.0,
            1e19,
            -1e19,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let scale = [1.0, 10.0, 1e3, 1e6, 1e9, 1e15][i % 6];
            v.push(((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2.0 * scale);
            v.push(f64::from_bits(x));
        }
        for &a in &v {
            assert_eq!(round(a).to_bits(), a.round().to_bits(), "round {a:e}");
            assert_eq!(floor(a).to_bits(), a.floor().to_bits(), "floor {a:e}");
        }
    }
}
