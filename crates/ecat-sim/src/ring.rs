//! Cable redundancy: a line whose last SubDevice is cabled back to the MainDevice's second
//! (backup) port, and cables that break and heal.
//!
//! With `ring = true` in the network file (or [`Network::set_ring`]) the free port 1 of the
//! last ESC leads to the backup port. A frame sent on the main port passes every ESC in
//! processing direction and leaves the last one towards the backup port; a frame sent on the
//! backup port enters port 1 of the last ESC and only passes the ESCs in forwarding direction
//! (port 1 → port 0, no processing) back to the main port.
//!
//! A **break** cuts the cable into port 0 of an ESC `b` (between its parent `a` and `b`;
//! [`Network::break_cable`]). Both ends lose their link and, as real ESCs in the default loop
//! setting (auto / auto-close) do, close the port: a's port loops the frame back, so a frame
//! from the main port is processed by the ESCs up to `a` and comes back to the main port; a
//! frame from the backup port is forwarded down to `b`, loops at b's closed port 0 into its
//! processing unit, and is processed by `b` … last on its way back to the backup port. The
//! auto-increment addresses go on counting from where the frame arrives, so a frame that went
//! through both halves in turn addresses every ESC as the whole line would. A break on a line
//! without ring simply cuts off everything behind it. [`Network::heal_cable`] reconnects the
//! cable and reopens both ports.
//!
//! Time: the backup cable has [`Ring::cable_ns`]; ESCs passed in forwarding direction take
//! their forwarding delay (latched half-way, like the processing direction), so port receive
//! times latched by a frame that contains a write to 0x0900 are consistent in both
//! directions (the MainDevice can measure delays on a closed ring by sending the latch frame
//! back through the backup port once it has arrived there).
//!
//! Rings are lines: every ESC hangs on port 1 of the one before ([`Network::set_ring`] says
//! so otherwise).

use crate::error::SimError;
use crate::esc::route::FrameIndex;
use crate::esc::FramePassage;
use crate::network::{Network, DEFAULT_CABLE_NS};
use ecat_wire::datagram::Command;

/// The MainDevice port a frame enters or leaves the network by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingPort {
    /// The main port: cabled to port 0 of the first SubDevice.
    Main,
    /// The backup port: cabled to port 1 of the last SubDevice when the network is a ring.
    Backup,
}

/// Ring state of a network (not a ring, and no break, by default).
#[derive(Debug, Clone, Default)]
pub(crate) struct Ring {
    /// The last ESC's port 1 is cabled to the backup port.
    pub closed: bool,
    /// Cable delay (ns) between the last ESC and the backup port.
    pub cable_ns: u64,
    /// Position of the ESC whose port-0 cable is cut.
    pub cut: Option<usize>,
    /// Per ESC, for a frame entering the backup port at time 0 with the ring open: its
    /// passage through the ESCs that process it (from the cut on).
    pub backup_rel: Vec<Option<FramePassage>>,
    /// Per ESC: when a frame entering the backup port at time 0 reaches port 1 of an ESC it
    /// only forwards (`None`: it does not).
    pub forward_rel: Vec<Option<u64>>,
    /// The tables above match `cut`/`closed`.
    pub fresh: bool,
}

impl Network {
    /// Close the line into a ring (`true`): port 1 of the last ESC is cabled to the backup
    /// port. Fails, saying why, if the network is not a line.
    pub fn set_ring(&mut self, closed: bool) -> Result<(), SimError> {
        if closed {
            if let Some(k) =
                (1..self.bus.len()).find(|&k| self.wiring[k].parent != Some((k - 1, 1)))
            {
                return Err(SimError::Invalid {
                    location: "ring".into(),
                    message: format!(
                        "a ring needs a line (every SubDevice on port 1 of the one before), but SubDevice {k} hangs elsewhere; remove `ring = true` or the branch"
                    ),
                });
            }
            if self.bus.is_empty() {
                return Err(SimError::Invalid {
                    location: "ring".into(),
                    message: "a ring needs at least one SubDevice".into(),
                });
            }
        }
        self.ring.closed = closed;
        if self.ring.cable_ns == 0 {
            self.ring.cable_ns = DEFAULT_CABLE_NS;
        }
        self.ring_changed();
        Ok(())
    }

    /// True if the network is a ring (the last ESC cabled to the backup port).
    pub fn is_ring(&self) -> bool {
        self.ring.closed
    }

    /// Cut the cable between the ESCs at positions `a` and `b` (either order; one must hang
    /// on the other). Only one cable can be cut at a time: a new break heals the old one.
    pub fn break_cable(&mut self, a: usize, b: usize) -> Result<(), SimError> {
        let child = self.cable_child(a, b)?;
        self.ring.cut = Some(child);
        self.ring_changed();
        Ok(())
    }

    /// Reconnect the cable between `a` and `b` (nothing happens if it is not cut).
    pub fn heal_cable(&mut self, a: usize, b: usize) -> Result<(), SimError> {
        let child = self.cable_child(a, b)?;
        if self.ring.cut == Some(child) {
            self.ring.cut = None;
            self.ring_changed();
        }
        Ok(())
    }

    /// The cut cable as (parent position, child position), if one is cut.
    pub fn broken_cable(&self) -> Option<(usize, usize)> {
        let b = self.ring.cut?;
        Some((self.wiring[b].parent?.0, b))
    }

    /// Fails, saying why, unless a cable runs between `a` and `b`.
    pub(crate) fn check_cable(&self, a: usize, b: usize) -> Result<(), SimError> {
        self.cable_child(a, b).map(|_| ())
    }

    fn cable_child(&self, a: usize, b: usize) -> Result<usize, SimError> {
        let n = self.bus.len();
        for p in [a, b] {
            if p >= n {
                return Err(SimError::NoSubDevice {
                    position: p,
                    count: n,
                });
            }
        }
        let hangs = |c: usize, p: usize| self.wiring[c].parent.is_some_and(|(q, _)| q == p);
        if hangs(b, a) {
            Ok(b)
        } else if hangs(a, b) {
            Ok(a)
        } else {
            Err(SimError::Invalid {
                location: format!("between = [{a}, {b}]"),
                message: format!(
                    "no cable runs between SubDevices {a} and {b}; name a SubDevice and the one it hangs on (e.g. [{a}, {}])",
                    a + 1
                ),
            })
        }
    }

    fn ring_changed(&mut self) {
        self.ring.fresh = false;
        // The main path's passages depend on the cut too.
        self.rel_passages.clear();
        self.refresh_links();
    }

    /// Port links as the ring and the cut make them (after the plugging's).
    pub(crate) fn ring_links(&self, k: usize, links: &mut [bool; 4]) {
        links[0] = self.ring.cut != Some(k);
        if let Some((p, port)) = self.ring.cut.and_then(|b| self.wiring[b].parent) {
            if p == k {
                links[port] = false;
            }
        }
        if self.ring.closed && k + 1 == self.bus.len() {
            links[1] = true;
        }
    }

    /// Where the frame from the main port leaves again.
    pub(crate) fn main_exit(&self) -> RingPort {
        if self.ring.closed && self.ring.cut.is_none() && self.plugged.iter().all(|&p| p) {
            RingPort::Backup
        } else {
            RingPort::Main
        }
    }

    /// Main-path passages on a closed ring: the frame leaves each port 1 and never comes
    /// back through it.
    pub(crate) fn ring_fix_main(&self, out: &mut [Option<FramePassage>]) {
        if self.main_exit() == RingPort::Backup {
            for p in out.iter_mut().flatten() {
                p.ports[1] = None;
            }
        }
    }

    /// Bring the backup-path tables up to date.
    fn ring_refresh(&mut self) {
        if self.ring.fresh && self.ring.backup_rel.len() == self.bus.len() {
            return;
        }
        let n = self.bus.len();
        let mut back = std::mem::take(&mut self.ring.backup_rel);
        let mut fwd = std::mem::take(&mut self.ring.forward_rel);
        back.clear();
        back.resize(n, None);
        fwd.clear();
        fwd.resize(n, None);
        let lower = self.ring.cut.map_or(0, |b| b + 1);
        // Down from the last ESC in forwarding direction (port 1 → port 0).
        let mut t = self.ring.cable_ns;
        let mut k = n;
        while k > lower {
            k -= 1;
            let fw = if self.plugged[k] {
                self.wiring[k].forward_ns
            } else {
                0
            };
            if self.plugged[k] {
                fwd[k] = Some(t + fw / 2);
            }
            t += fw + self.wiring[k].cable_ns;
        }
        if let Some(b) = self.ring.cut {
            // t: arrival at port 1 of b; its closed port 0 loops the frame into the EPU, then
            // it goes up the line again in processing direction.
            let mut arrive = t;
            let mut entry_port = 1;
            for (k, slot) in back.iter_mut().enumerate().skip(b) {
                let fw = if self.plugged[k] {
                    self.wiring[k].forward_ns
                } else {
                    0
                };
                let (fin, fout) = (fw / 2, fw - fw / 2);
                if k > b {
                    arrive += self.wiring[k].cable_ns;
                }
                let entry = arrive + fin;
                if self.plugged[k] {
                    let mut ports = [None; 4];
                    ports[entry_port] = Some(entry);
                    *slot = Some(FramePassage { ports, epu: entry });
                }
                arrive = entry + fout;
                entry_port = 0;
            }
        }
        self.ring.backup_rel = back;
        self.ring.forward_rel = fwd;
        self.ring.fresh = true;
    }

    /// Before processing a frame that entered the backup port at `now_ns`: let the ESCs it
    /// only forwards latch their port-1 receive time if it carries the latch write, and
    /// swap the backup passages in for the processing loop. Returns `false` if no ESC
    /// processes it (it goes straight through to the main port).
    pub(crate) fn ring_enter_backup(&mut self, index: &FrameIndex, now_ns: u64) -> bool {
        self.ring_refresh();
        let latch = index.dgs.iter().any(|d| {
            matches!(d.cmd, Some(Command::Bwr | Command::Fpwr | Command::Apwr))
                && d.ado <= 0x0903
                && usize::from(d.ado) + d.len > 0x0900
        });
        if latch {
            for k in 0..self.bus.len() {
                if let Some(t) = self.ring.forward_rel[k] {
                    let i = self.bus[k];
                    if let Some(e) = self.nodes[i].esc.as_mut() {
                        e.dc_latch_port(1, t + now_ns);
                    }
                }
            }
        }
        std::mem::swap(&mut self.rel_passages, &mut self.ring.backup_rel);
        self.ring.cut.is_some()
    }

    /// After processing a frame from the backup port: swap the passages back.
    pub(crate) fn ring_leave_backup(&mut self) {
        std::mem::swap(&mut self.rel_passages, &mut self.ring.backup_rel);
    }
}

impl Network {
    /// How long after entering by `entry` a frame leaves the network again (ns, as of the
    /// last frame processed from that port; 0 if it did not pass any ESC).
    pub fn transit_ns(&self, entry: RingPort) -> u64 {
        let n = self.bus.len();
        let half = |k: usize| {
            let f = self.wiring[k].forward_ns;
            f - f / 2
        };
        let main_back = |pass: &[Option<FramePassage>]| {
            pass.first()
                .copied()
                .flatten()
                .map(|p| p.ports.iter().flatten().copied().max().unwrap_or(p.epu) + half(0))
                .map_or(0, |t| t + self.wiring[0].cable_ns)
        };
        match (entry, self.main_exit(), self.ring.cut) {
            (RingPort::Main, RingPort::Backup, _) => self
                .rel_passages
                .get(n.wrapping_sub(1))
                .copied()
                .flatten()
                .map_or(0, |p| p.epu + half(n - 1) + self.ring.cable_ns),
            (RingPort::Main, _, _) => main_back(&self.rel_passages),
            (RingPort::Backup, _, Some(_)) => self
                .ring
                .backup_rel
                .get(n.wrapping_sub(1))
                .copied()
                .flatten()
                .map_or(0, |p| p.epu + half(n - 1) + self.ring.cable_ns),
            (RingPort::Backup, _, None) => self
                .ring
                .forward_rel
                .first()
                .copied()
                .flatten()
                .map_or(0, |t| t + half(0) + self.wiring[0].cable_ns),
        }
    }
}
