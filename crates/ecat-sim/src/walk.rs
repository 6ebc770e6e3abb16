//! One frame's walk along the ESCs, one ESC at a time.
//!
//! Design: the network validates and indexes a frame once, then hands each ESC on the frame
//! path to [`Walk::step`] in processing order. The walk carries what passes from ESC to ESC:
//! the frame itself, its datagram index, the hop count (auto-increment addresses), the event
//! requests of the ESCs it only passed, and the frame's time. Everything an ESC needs of its
//! own comes in as separate slots (the ESC, its route, its frame passage, its pending PDI
//! reaction), so the same step serves a whole network on one thread ([`crate::Network`]) and
//! a segment of positions on another ([`crate::pipeline`]): a walk can stop after any ESC and
//! go on elsewhere with the next one.

use crate::esc::route::{FrameIndex, Route};
use crate::esc::{Esc, FramePassage};
use ecat_wire::datagram::Datagram;

/// The state a frame carries from one ESC to the next.
pub(crate) struct Walk<'a> {
    /// The whole Ethernet frame, processed in place.
    pub frame: &'a mut [u8],
    /// Its datagrams.
    pub index: &'a FrameIndex,
    /// True time at which the frame left the MainDevice.
    pub now_ns: u64,
    /// Hop at which the frame is lost or corrupted (faults); the ESCs from there on only
    /// run their timers.
    pub stop: usize,
    /// PDI reactions wait (see `crate::deferred`).
    pub defer: bool,
    /// ESCs on the frame path so far.
    pub hop: usize,
    /// Event requests of the ESCs passed untouched, ORed into every IRQ field at the end.
    pub passed_irq: u16,
}

/// Where one ESC keeps its pending PDI reaction: its own slot and the owner's count.
pub(crate) struct Pending<'a> {
    /// The time of the frame whose reaction is still to run.
    pub at: &'a mut Option<u64>,
    /// How many slots of the owner are set.
    pub count: &'a mut usize,
}

/// Run an ESC's deferred PDI reaction to the frame sent at `t` and bring its route up to
/// date (before the next frame that concerns it, or when its owner settles).
pub(crate) fn react_late(esc: &mut Esc, route: &mut Route, t: u64) {
    esc.pdi_after_frame(t);
    esc.refresh_route(route);
}

impl Walk<'_> {
    /// Take the frame past one ESC on its path: `rel` is where a frame leaving at true time
    /// 0 passes it. The ESC is only loaded when a datagram concerns it or a timer is due.
    pub fn step(
        &mut self,
        esc: &mut Option<Esc>,
        route: &mut Route,
        rel: FramePassage,
        pending: Pending<'_>,
    ) {
        let now_ns = self.now_ns;
        let hop = self.hop;
        self.hop += 1;
        let mut concerned = self.index.concerns(route, hop);
        if hop < self.stop && now_ns < route.due && !concerned {
            // Passes untouched (also before its firmware reacted to an earlier frame, in
            // deferred mode): decided from the route alone, without loading the ESC.
            self.passed_irq |= route.irq;
            return;
        }
        let Some(esc) = esc.as_mut() else {
            return;
        };
        if hop >= self.stop {
            esc.tick(now_ns);
            *route = esc.route();
            return;
        }
        if let Some(t) = pending.at.take() {
            // The reaction comes first, at the time of the frame that caused it.
            *pending.count -= 1;
            react_late(esc, route, t);
            // The reaction may have moved the route (addresses, FMMUs).
            concerned = self.index.concerns(route, hop);
        }
        if !concerned {
            if now_ns >= route.due {
                esc.tick(now_ns);
                *route = esc.route();
            }
            self.passed_irq |= route.irq;
            return;
        }
        std::hint::black_box(esc.warm());
        if now_ns >= route.due {
            esc.tick(now_ns);
        } else {
            esc.set_now(now_ns);
        }
        self.index.set_adp(self.frame, hop);
        // The SYNC unit and the 0x0910 snapshot follow the frames that reach the DC
        // registers (pulses between run when it next does, or on `advance_to`).
        if route.dc_frame(self.index, hop) {
            esc.dc_frame(rel.shifted(now_ns));
        }
        for d in &self.index.dgs {
            if !route.concerns(d, hop) {
                // Passes without effect: only the event request is ORed in.
                self.index.or_irq_one(self.frame, d, esc.irq());
                continue;
            }
            if let Ok(mut dg) = Datagram::new_checked(&mut self.frame[d.at..d.at + d.total]) {
                esc.process_datagram(&mut dg);
            }
        }
        // Addressing, FMMUs and timers change only with what also wakes the PDI side.
        let reroute = esc.pdi_pending();
        if reroute && self.defer {
            // Registers the frame wrote may move the route now; the reaction later.
            esc.refresh_route(route);
            *pending.at = Some(now_ns);
            *pending.count += 1;
            return;
        }
        esc.pdi_after_frame(now_ns);
        if reroute {
            esc.refresh_route(route);
        } else {
            route.irq = esc.irq();
        }
    }

    /// The walk is over: every datagram's ADP counts the ESCs passed up to `stop`, and the
    /// event requests of the ESCs passed untouched are in every IRQ field.
    pub fn finish(&mut self) {
        self.index.set_adp(self.frame, self.stop.min(self.hop));
        self.index.or_irq(self.frame, self.passed_irq);
    }
}
