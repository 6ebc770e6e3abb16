//! Measuring the propagation delays again while the bus cycles, after its shape changed.
//!
//! The delays written at the DC setup (0x0928) hold for the bus as it was then. When a
//! hot-connect group joins or leaves, the frame's path changes: the group's own members need
//! their delays (a group absent at the setup only had one assumed, see
//! `hotconnect::assume_dc`), and SubDevices that the frame reaches after the group's port
//! (a group on a junction's port 3 comes before the junction's port 1) are reached later or
//! earlier than before. Each time the supervisor reports such a change and no group is still
//! being configured, this job does what the setup did, a datagram at a time in the acyclic
//! frames: latch the port receive times with a BWR to 0x0900, read the port times and DL
//! status of every DC SubDevice present, place them in the tree (`topology::place_into`) and
//! write 0x0928 on those whose delay changed, also telling the supervisor (a SubDevice that
//! later loses power is set up with the new value). The clocks' control loops then move each
//! corrected clock over to the right time within milliseconds; offsets are left alone.
//!
//! Delays are relative to the first DC SubDevice, as at the setup, so that one must be
//! present. One small state machine polled once per cycle by the runtime; its tables are
//! sized at activation, so it allocates nothing while cycling. A read that fails (a group
//! leaving mid-way) abandons the round; the change that follows starts another.

use super::topology::{place_into, ChildPorts, Placement, PortTimes};
use crate::frame::{FrameEngine, Handle, Status};
use crate::supervisor::Supervisor;
use ecat_wire::register::{self as reg, DlStatus};
use ecat_wire::Command;

/// SubDevices read at a time (two datagrams each), leaving engine slots for the rest.
const BATCH: usize = 24;
/// Cycles to wait after a round that failed before trying again for the same change.
const RETRY_CYCLES: u64 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Idle,
    Latch(Handle),
    /// Reading the batch of members from `next` on.
    Read {
        next: usize,
    },
    Write,
}

/// The delay measurement job of a runtime with distributed clocks and hot-connect groups.
#[derive(Debug)]
pub struct DcRemeasure {
    step: Step,
    /// The supervisor's change count this round measures for.
    done_for: u64,
    retry_at: u64,
    /// Positions of the DC SubDevices present in this round, in position order.
    members: Vec<usize>,
    /// Per member: station, and the handles of its port-time and DL-status reads.
    reads: Vec<(u16, Option<(Handle, Handle)>)>,
    times: Vec<PortTimes>,
    placed: Vec<Placement>,
    stack: Vec<(usize, ChildPorts)>,
    writes: Vec<Handle>,
    /// (position, station, delay) of the members whose delay changed.
    changes: Vec<(usize, u16, u32)>,
    /// Rounds completed and delays written, for reports and tests.
    rounds: u64,
    corrected: u64,
}

impl DcRemeasure {
    /// A job for a bus of `n` SubDevices (tables sized for all of them).
    pub fn new(n: usize) -> DcRemeasure {
        DcRemeasure {
            step: Step::Idle,
            done_for: 0,
            retry_at: 0,
            members: Vec::with_capacity(n),
            reads: Vec::with_capacity(n),
            times: Vec::with_capacity(n),
            placed: Vec::with_capacity(n),
            stack: Vec::with_capacity(n),
            writes: Vec::with_capacity(n),
            changes: Vec::with_capacity(n),
            rounds: 0,
            corrected: 0,
        }
    }

    /// Rounds completed so far, and delays corrected by them.
    pub fn figures(&self) -> (u64, u64) {
        (self.rounds, self.corrected)
    }

    /// Once per cycle, before the acyclic frame goes out.
    pub fn poll(&mut self, sup: &mut Supervisor, engine: &mut FrameEngine, cycle: u64) {
        match self.step {
            Step::Idle => {
                if sup.topology_changes() == self.done_for
                    || cycle < self.retry_at
                    || !sup.groups_settled()
                {
                    return;
                }
                self.done_for = sup.topology_changes();
                self.start(sup, engine);
            }
            Step::Latch(h) => match engine.status(h) {
                Status::Pending => {}
                Status::Done => {
                    engine.release(h);
                    self.step = Step::Read { next: 0 };
                    self.read_more(engine, 0);
                }
                _ => {
                    engine.release(h);
                    self.fail(cycle);
                }
            },
            Step::Read { next } => self.collect(sup, engine, next, cycle),
            Step::Write => {
                if self
                    .writes
                    .iter()
                    .any(|&h| engine.status(h) == Status::Pending)
                {
                    return;
                }
                for h in self.writes.drain(..) {
                    engine.release(h);
                }
                self.rounds += 1;
                self.step = Step::Idle;
            }
        }
    }

    fn fail(&mut self, cycle: u64) {
        // Try again for the same change a little later.
        self.done_for = self.done_for.wrapping_sub(1);
        self.retry_at = cycle + RETRY_CYCLES;
        self.step = Step::Idle;
    }

    /// Pick the DC SubDevices present and latch their port times.
    fn start(&mut self, sup: &Supervisor, engine: &mut FrameEngine) {
        self.members.clear();
        self.reads.clear();
        for (i, s) in sup.states().enumerate() {
            if s.info.dc.is_some() && !s.lost {
                self.members.push(i);
                self.reads.push((s.info.station, None));
            }
        }
        // Delays count from the first DC SubDevice of the setup; without it, nothing to do.
        let first = sup.states().position(|s| s.info.dc.is_some());
        if self.members.len() < 2 || self.members.first().copied() != first {
            return;
        }
        match engine.submit_with(
            Command::Bwr,
            (reg::DC_RECEIVE_TIME_PORT0 as u32) << 16,
            &[0; 4],
            0,
        ) {
            Ok(h) => self.step = Step::Latch(h),
            Err(_) => self.done_for = self.done_for.wrapping_sub(1),
        }
    }

    /// Submit the reads of members `from..` up to the batch size.
    fn read_more(&mut self, engine: &mut FrameEngine, from: usize) {
        let end = (from + BATCH).min(self.reads.len());
        for r in &mut self.reads[from..end] {
            let addr = |ado: u16| r.0 as u32 | (ado as u32) << 16;
            let t =
                engine.submit_with(Command::Fprd, addr(reg::DC_RECEIVE_TIME_PORT0), &[0; 16], 2);
            let d = engine.submit_with(Command::Fprd, addr(reg::DL_STATUS), &[0; 2], 2);
            match (t, d) {
                (Ok(t), Ok(d)) => r.1 = Some((t, d)),
                (Ok(h), Err(_)) | (Err(_), Ok(h)) => engine.release(h),
                _ => {}
            }
        }
    }

    /// Take the answers of the batch from `next`; when all are in, place and write.
    fn collect(&mut self, sup: &mut Supervisor, engine: &mut FrameEngine, next: usize, cycle: u64) {
        let end = (next + BATCH).min(self.reads.len());
        let batch = &self.reads[next..end];
        if batch.iter().any(|r| {
            r.1.is_some_and(|(t, d)| {
                engine.status(t) == Status::Pending || engine.status(d) == Status::Pending
            })
        }) {
            return;
        }
        if next == 0 {
            self.times.clear();
        }
        let mut ok = true;
        for r in &mut self.reads[next..end] {
            let Some((t, d)) = r.1.take() else {
                ok = false;
                continue;
            };
            match (engine.response(t), engine.response(d)) {
                (Some((td, 1)), Some((dd, 1))) if td.len() >= 16 && dd.len() >= 2 => {
                    let dl = DlStatus(u16::from_le_bytes([dd[0], dd[1]]));
                    self.times.push(PortTimes {
                        times: core::array::from_fn(|n| {
                            u32::from_le_bytes([
                                td[4 * n],
                                td[4 * n + 1],
                                td[4 * n + 2],
                                td[4 * n + 3],
                            ])
                        }),
                        open: core::array::from_fn(|n| dl.port_open(n)),
                    });
                }
                _ => ok = false,
            }
            engine.release(t);
            engine.release(d);
        }
        if !ok {
            // Release what is left of the round and try again later.
            for r in &mut self.reads[end..] {
                if let Some((t, d)) = r.1.take() {
                    engine.release(t);
                    engine.release(d);
                }
            }
            self.fail(cycle);
            return;
        }
        if end < self.reads.len() {
            self.step = Step::Read { next: end };
            self.read_more(engine, end);
            return;
        }
        place_into(&self.times, &mut self.placed, &mut self.stack);
        self.changes.clear();
        let mut largest = 0u32;
        let mut k = 0;
        for (i, s) in sup.states().enumerate() {
            if self.members.get(k) != Some(&i) {
                continue;
            }
            let delay = self.placed[k].delay_ns;
            k += 1;
            if let Some(d) = s.info.dc.filter(|d| d.system_time && d.delay_ns != delay) {
                largest = largest.max(d.delay_ns.abs_diff(delay));
                self.changes.push((i, s.info.station, delay));
            }
        }
        self.writes.clear();
        for &(i, station, delay) in &self.changes {
            sup.set_dc_delay(i, delay);
            let addr = station as u32 | (reg::DC_SYSTEM_TIME_DELAY as u32) << 16;
            if let Ok(h) = engine.submit(Command::Fpwr, addr, &delay.to_le_bytes()) {
                self.writes.push(h);
                self.corrected += 1;
            }
        }
        sup.report_dc_delays(self.members.len(), self.changes.len(), largest, cycle);
        self.step = Step::Write;
    }
}
