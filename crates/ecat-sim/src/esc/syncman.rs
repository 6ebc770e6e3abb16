//! SyncManager registers and the mailbox (1-buffer) gate.
//!
//! An SM "covers" `[start, start + length)` once the MainDevice enabled it (activate bit 0).
//! If the firmware keeps it deactivated (PDI control bit 0) every ECAT access to the area is
//! refused. In mailbox mode the ESC lets the writer in only while the buffer is empty and the
//! reader only while it is full; touching the last byte flips the state, which shows in status
//! bit 3. Refused bytes are left untouched and do not count towards the working counter.
//! Access against the SM's direction is refused too (unverified; real ESCs document only the
//! configured direction). Buffered (3-buffer) SMs redirect each byte of buffer 0's range to
//! the buffer the accessing side owns (see `buffered`); the gate records the redirection.
//! Start, length and control can only be written while the SM is disabled.
//! When two enabled SMs overlap, the lower-numbered one decides for the shared bytes.

use super::Esc;
use ecat_wire::register::{self as reg, SmRepr};

/// Direction of an ECAT access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    /// The MainDevice reads.
    Read,
    /// The MainDevice writes.
    Write,
}

/// The outcome of checking an access range against the SyncManagers.
#[derive(Debug, Clone)]
pub(crate) struct Gate {
    rejected: [(u32, u32); 32],
    n: usize,
    /// Buffered SMs: bytes in `[lo, hi)` live at `a + shift` for this access.
    redirect: [(u32, u32, u32); 16],
    nr: usize,
    /// SMs whose mailbox state flips when the access is done (last byte covered).
    completes: u16,
    /// Buffered SMs touched by the access.
    buffered: u16,
    /// Buffered SMs whose last byte the access covers.
    buffered_last: u16,
}

impl Gate {
    /// True if the byte at `a` may be accessed.
    pub fn allows(&self, a: u32) -> bool {
        !self.rejected[..self.n]
            .iter()
            .any(|&(lo, hi)| a >= lo && a < hi)
    }

    /// Where the byte the MainDevice addresses at `a` really is.
    pub fn map(&self, a: u32) -> u32 {
        self.redirect[..self.nr]
            .iter()
            .find(|&&(lo, hi, _)| a >= lo && a < hi)
            .map_or(a, |&(_, _, shift)| a + shift)
    }

    /// [`Gate::map`] where `None` stands for an empty gate (no SM area involved).
    pub fn map_through(gate: Option<&Gate>, a: u32) -> u32 {
        gate.map_or(a, |g| g.map(a))
    }

    fn reject(&mut self, lo: u32, hi: u32) {
        if self.n < self.rejected.len() && lo < hi {
            self.rejected[self.n] = (lo, hi);
            self.n += 1;
        }
    }
}

impl Esc {
    /// The register block of SM `n`.
    pub(crate) fn sm(&self, n: u8) -> SmRepr {
        let a = reg::sm(n) as usize;
        SmRepr::parse(&self.mem[a..a + 8]).unwrap_or_default()
    }

    /// Enabled by the MainDevice and not deactivated by the firmware.
    pub(crate) fn sm_active(&self, n: u8) -> bool {
        let s = self.sm(n);
        s.enabled() && s.pdi_control & 1 == 0
    }

    pub(crate) fn sm_activate_snapshot(&self) -> [u8; 16] {
        let mut a = [0; 16];
        for n in 0..self.shape.sms {
            a[n as usize] = self.mem[reg::sm(n) as usize + 6];
        }
        a
    }

    /// Mailbox full flag of SM `n` (status bit 3).
    pub(crate) fn mailbox_full(&self, n: u8) -> bool {
        self.sm(n).status & SmRepr::STATUS_MAILBOX_FULL != 0
    }

    /// Set or clear the mailbox full flag of SM `n` (and the "written" bit 0 for a buffer the
    /// MainDevice writes).
    pub(crate) fn set_mailbox_full(&mut self, n: u8, full: bool) {
        let a = reg::sm(n) as usize + 5;
        let mut st = self.mem[a] & !(SmRepr::STATUS_MAILBOX_FULL | 0x01);
        if full {
            st |= SmRepr::STATUS_MAILBOX_FULL;
            if self.sm(n).ecat_writes() {
                st |= 0x01;
            }
        }
        self.mem[a] = st;
    }

    /// Firmware side: open (`true`) or deactivate the SMs in `mask` (PDI control bit 0).
    pub(crate) fn sm_pdi_enable(&mut self, mask: u16, on: bool) {
        for n in 0..self.shape.sms {
            if mask & (1 << n) == 0 {
                continue;
            }
            let a = reg::sm(n) as usize + 7;
            if on {
                self.mem[a] &= !1;
            } else {
                self.mem[a] |= 1;
                // Deactivation drops whatever the buffer held.
                self.set_mailbox_full(n, false);
                self.buffered_reset(n);
            }
        }
    }

    /// Whether `[start, end)` overlaps the area of an enabled SM (all three buffers, so that
    /// the reserved ones count too).
    pub(crate) fn sm_areas_overlap(&self, start: u32, end: u32) -> bool {
        debug_assert_eq!(
            self.sm_span,
            self.sm_span_now(),
            "SM registers changed unseen"
        );
        let (lo, hi) = self.sm_span;
        if start >= hi || end <= lo {
            return false;
        }
        self.sm_areas_overlap_each(start, end)
    }

    /// [`Esc::sm_areas_overlap`], SM by SM.
    fn sm_areas_overlap_each(&self, start: u32, end: u32) -> bool {
        (0..self.shape.sms).any(|n| {
            let a = reg::sm(n) as usize;
            if self.mem[a + 6] & 1 == 0 {
                return false;
            }
            let lo = u16::from_le_bytes([self.mem[a], self.mem[a + 1]]) as u32;
            let len = u16::from_le_bytes([self.mem[a + 2], self.mem[a + 3]]) as u32;
            len != 0 && start < lo + 3 * len && end > lo
        })
    }

    /// The bytes covering the areas of the enabled SMs, `(u32::MAX, 0)` when none is.
    fn sm_span_now(&self) -> (u32, u32) {
        let (mut lo, mut hi) = (u32::MAX, 0);
        for n in 0..self.shape.sms {
            let a = reg::sm(n) as usize;
            let start = u16::from_le_bytes([self.mem[a], self.mem[a + 1]]) as u32;
            let len = u16::from_le_bytes([self.mem[a + 2], self.mem[a + 3]]) as u32;
            if self.mem[a + 6] & 1 != 0 && len != 0 {
                lo = lo.min(start);
                hi = hi.max(start + 3 * len);
            }
        }
        (lo, hi)
    }

    /// Recompute the span of the SM areas after SM registers changed.
    pub(crate) fn sm_span_refresh(&mut self) {
        self.sm_span = self.sm_span_now();
    }

    /// Check `[start, end)` against every SM for an access in `dir`.
    pub(crate) fn sm_gate(&self, start: u32, end: u32, dir: Dir) -> Gate {
        let mut g = Gate {
            rejected: [(0, 0); 32],
            n: 0,
            redirect: [(0, 0, 0); 16],
            nr: 0,
            completes: 0,
            buffered: 0,
            buffered_last: 0,
        };
        for n in 0..self.shape.sms {
            let s = self.sm(n);
            if !s.enabled() || s.length == 0 {
                continue;
            }
            let lo = s.start as u32;
            let hi = lo + s.length as u32;
            if !s.is_mailbox() {
                // Buffers 1 and 2 are reserved: no direct access.
                let end3 = lo + 3 * s.length as u32;
                g.reject(start.max(hi), end.min(end3));
            }
            let (olo, ohi) = (start.max(lo), end.min(hi));
            if olo >= ohi {
                continue;
            }
            let right_dir = match dir {
                Dir::Write => s.ecat_writes(),
                Dir::Read => !s.ecat_writes(),
            };
            let allowed = if s.pdi_control & 1 != 0 || !right_dir {
                false
            } else if s.is_mailbox() {
                let full = s.status & SmRepr::STATUS_MAILBOX_FULL != 0;
                match dir {
                    Dir::Write => !full,
                    Dir::Read => full,
                }
            } else {
                true
            };
            if !allowed {
                g.reject(olo, ohi);
            } else if s.is_mailbox() {
                if ohi == hi {
                    g.completes |= 1 << n;
                }
            } else if g.buffered & (1 << n) == 0 && g.nr < g.redirect.len() {
                let t = &self.bufs[n as usize];
                let k = match dir {
                    Dir::Write => t.write,
                    Dir::Read => t.read_target(),
                };
                g.redirect[g.nr] = (lo, hi, k as u32 * s.length as u32);
                g.nr += 1;
                g.buffered |= 1 << n;
                if ohi == hi {
                    g.buffered_last |= 1 << n;
                }
            }
        }
        g
    }

    /// Apply the mailbox and buffer state changes of a finished access.
    pub(crate) fn sm_complete(&mut self, gate: &Gate) {
        if gate.completes | gate.buffered == 0 {
            return;
        }
        self.kick_pdi();
        for n in 0..self.shape.sms {
            if gate.completes & (1 << n) != 0 {
                let writes = self.sm(n).ecat_writes();
                self.set_mailbox_full(n, writes);
            }
            if gate.buffered & (1 << n) != 0 {
                self.buffered_accessed(n, gate.buffered_last & (1 << n) != 0);
            }
        }
    }

    /// Bytes 0–4 of an SM block (start, length, control) are locked while the SM was enabled
    /// before this datagram.
    pub(crate) fn sm_byte_writable(&self, a: u32, old_activate: &[u8; 16]) -> bool {
        if !(0x0800..0x0880).contains(&a) {
            return true;
        }
        let n = ((a - 0x0800) / 8) as usize;
        let off = (a - 0x0800) % 8;
        off > 4 || old_activate[n] & 1 == 0
    }

    /// After ECAT wrote SM registers: an SM switched on or off starts with an empty buffer
    /// (mailbox) or with nothing written (buffered).
    pub(crate) fn sm_registers_written(&mut self, old_activate: &[u8; 16]) {
        self.sm_span_refresh();
        for n in 0..self.shape.sms {
            let now = self.mem[reg::sm(n) as usize + 6];
            if (now ^ old_activate[n as usize]) & 1 != 0 {
                self.mem[reg::sm(n) as usize + 5] = 0;
                self.buffered_reset(n);
            }
        }
    }
}
