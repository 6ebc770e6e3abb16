//! Distributed clocks across a broken ring: the MainDevice's half of the scheme in
//! [`super::redundant`].
//!
//! After a break the SubDevices behind it see every frame later than through the closed ring,
//! by one amount S (the same for all of them). To measure S, one frame reads the system time
//! (0x0910, low 32 bits) of the reference clock and of the first DC SubDevice behind the
//! break: each reads its own copy of system time minus its delay, which through the closed
//! ring is the same instant for both; through the broken ring the one behind answers S later,
//! so S is the difference. Their clocks were not disturbed meanwhile (the link keeps the
//! reference time away from the back half until S is known), so it is exact up to their
//! synchronisation. The result goes to the link ([`Link::set_dc_shift`]), which from then on
//! advances the reference time it carries into the back half by S. Nothing is done while
//! the ring is closed: the delays measured at start-up are right again.
//!
//! One small state machine, polled once per cycle by the runtime; it allocates nothing.

use super::Link;
use crate::frame::{FrameEngine, Handle, Status};
use crate::subdevice::SubDevice;
use ecat_wire::Command;

const SYSTEM_TIME: u16 = 0x0910;

/// The MainDevice's DC work on a redundant ring.
#[derive(Debug)]
pub struct RingDc {
    /// (position, station) of every DC SubDevice, in position order.
    dc: Vec<(usize, u16)>,
    count: usize,
    reference: u16,
    pending: Option<(Handle, Handle)>,
    /// The ring-state change for which S was measured (or found not to be needed).
    done_for: u64,
}

impl RingDc {
    /// For a bus of `subs` whose reference clock has station address `reference`.
    pub fn new(subs: &[SubDevice], reference: u16) -> RingDc {
        RingDc {
            dc: subs
                .iter()
                .enumerate()
                .filter(|(_, s)| s.dc.is_some())
                .map(|(p, s)| (p, s.station))
                .collect(),
            count: subs.len(),
            reference,
            pending: None,
            done_for: 0,
        }
    }

    /// For a runtime on `link` with DC (`reference`: the reference clock's station); `None`
    /// unless the link is redundant and DC runs.
    pub fn for_link(link: &dyn Link, subs: &[SubDevice], reference: Option<u16>) -> Option<RingDc> {
        link.redundancy()?;
        Some(RingDc::new(subs, reference?))
    }

    /// Once per cycle, before the acyclic frame goes out.
    pub fn poll(&mut self, link: &mut dyn Link, engine: &mut FrameEngine) {
        let Some(st) = link.redundancy() else {
            return;
        };
        if let Some((r, b)) = self.pending {
            match (engine.status(r), engine.status(b)) {
                (Status::Pending, _) | (_, Status::Pending) => return,
                (Status::Done, Status::Done) => {
                    let read = |h| {
                        engine
                            .response(h)
                            .filter(|(d, wkc)| *wkc == 1 && d.len() >= 4)
                            .map(|(d, _)| u32::from_le_bytes([d[0], d[1], d[2], d[3]]))
                    };
                    if let (Some(vr), Some(vb)) = (read(r), read(b)) {
                        if st.open && st.changes == self.done_for {
                            link.set_dc_shift(vb.wrapping_sub(vr) as i32 as i64);
                        }
                    }
                }
                _ => {}
            }
            engine.release(r);
            engine.release(b);
            self.pending = None;
            return;
        }
        if !st.open || st.dc_shift.is_some() {
            return;
        }
        let Some((_, first_behind)) = st.break_between(self.count) else {
            return;
        };
        self.done_for = st.changes;
        let Some(&(_, station)) = self.dc.iter().find(|(p, _)| *p >= first_behind) else {
            // No clock behind the break: nothing to carry there.
            link.set_dc_shift(0);
            return;
        };
        let addr = |st: u16| st as u32 | (SYSTEM_TIME as u32) << 16;
        let r = engine.submit_with(Command::Fprd, addr(self.reference), &[0; 4], 0);
        let b = engine.submit_with(Command::Fprd, addr(station), &[0; 4], 0);
        match (r, b) {
            (Ok(r), Ok(b)) => self.pending = Some((r, b)),
            (Ok(h), Err(_)) | (Err(_), Ok(h)) => engine.release(h),
            _ => {}
        }
    }
}
