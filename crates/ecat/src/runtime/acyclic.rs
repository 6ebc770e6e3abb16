//! The acyclic part of a [`Runtime`]'s cycle: the supervisor's and the mailbox service's step
//! and the acyclic frames they fill, sent after the cyclic ones within the byte budget.
//!
//! The step is done either at send time ([`Runtime::send_acyclic`] alone, IgH's cycle) or
//! ahead, in the slack after the cycle's frames came back ([`Runtime::prepare_acyclic`], what
//! [`crate::cycle::run`] does): then the next task only starts the mailbox requests that came
//! since, builds the frames and sends them, so mailbox traffic (an FoE transfer: a packet
//! taken and the next one planned every cycle) costs the real-time task little. Answers are
//! taken in the same slack (`wait_return` waits for the acyclic frames too), so the mailbox is
//! as fast in cycles either way.

use super::Runtime;
use crate::error::Result;

impl Runtime {
    /// Advance the supervisor and send the acyclic frames within the byte budget (second part
    /// of [`Runtime::send`]; see [`Runtime::set_cycle_bytes`]). After
    /// [`Runtime::prepare_acyclic`] it only starts the mailbox requests that came since, builds
    /// the frames and sends them.
    pub fn send_acyclic(&mut self) -> Result<()> {
        let now = self.clock.now_ns();
        if std::mem::take(&mut self.prepared) {
            // Requests that came since: started now, as without the step ahead.
            self.poll_mailbox(now, self.cycle);
        } else {
            self.step_acyclic(now, self.cycle);
        }
        if let Some(r) = &mut self.ring_dc {
            r.poll(&mut *self.link, &mut self.engine);
        }
        if let Some(r) = &mut self.dc_remeasure {
            r.poll(&mut self.supervisor, &mut self.engine, self.cycle);
        }
        self.acyclic_out = 0;
        let budget = self
            .cycle_bytes
            .saturating_sub(self.frames.bytes_per_cycle());
        let mut sent = 0;
        while let Some(n) = self.engine.poll_transmit(now, &mut self.tx) {
            self.link.send(&self.tx[..n])?;
            self.acyclic_out += 1;
            sent += n;
            if sent + self.tx.len() > budget {
                break;
            }
        }
        Ok(())
    }

    /// Do the acyclic work of the next cycle now, in the time after this cycle's frames came
    /// back ([`Runtime::wait_return`] returned true): take the mailbox answers, serve the
    /// control socket, step the supervisor and the mailbox transfers on what these frames
    /// showed. Its datagrams wait in the engine and leave with the next
    /// [`Runtime::send_acyclic`], which then only starts the mailbox requests that came since
    /// and builds the frame, so the next task is short and the mailbox is as fast in cycles
    /// as without this call.
    pub fn prepare_acyclic(&mut self) {
        let now = self.clock.now_ns();
        self.engine.poll_timeouts(now);
        self.sdo.collect(
            &mut self.engine,
            now,
            self.cycle,
            &mut self.mailbox_counters,
        );
        self.probe = self.frames.al_probe();
        if let Some(b) = self.frames.mailbox_status() {
            self.status.copy_from_slice(b);
            self.status_cycle = self.cycle;
        }
        self.step_acyclic(now, self.cycle + 1);
        self.prepared = true;
    }

    /// The supervisor's and the mailbox service's step for the acyclic frame of `cycle`.
    fn step_acyclic(&mut self, now: u64, cycle: u64) {
        if self.control.as_ref().is_some_and(|c| c.busy()) {
            if let Some(mut c) = self.control.take() {
                c.step(self);
                self.control = Some(c);
            }
        }
        self.supervisor.poll(
            &mut self.engine,
            now,
            cycle,
            self.probe,
            &mut self.mailbox_counters,
            self.dc_expected,
        );
        self.poll_mailbox(now, cycle);
    }

    /// The mailbox service's step for the acyclic frame of `cycle`.
    fn poll_mailbox(&mut self, now: u64, cycle: u64) {
        let sup = &self.supervisor;
        let (bits, status, at) = (&self.status_bit, &self.status, self.status_cycle);
        let sm1 = |p: usize| {
            let b = bits.get(p).copied().flatten()? as usize;
            (at > 0 && sup.fmmus_mapped(p)).then(|| (status[b / 8] & (1 << (b % 8)) != 0, at))
        };
        self.sdo.poll(
            &mut self.engine,
            now,
            cycle,
            &mut self.mailbox_counters,
            |p| sup.mailbox_busy(p),
            sm1,
        );
    }
}
