//! Buffered (3-buffer) SyncManagers for process data (reference §3.10).
//!
//! An SM in buffered mode reserves three consecutive buffers of `length` bytes from its start
//! address. Both sides address buffer 0's range and the ESC redirects each byte to the buffer
//! that side owns at the moment. The three buffers are always a permutation of three roles:
//! the writer's buffer, the "next" buffer (the latest complete one) and the reader's buffer.
//! * The writer completes a buffer by writing its **last byte**; for the MainDevice as writer
//!   the swap happens at the end of the frame, and only if the frame was good (an ESC checks the
//!   FCS last). Then writer and next swap roles, the status shows the new latest buffer in
//!   bits 5:4 and raises the write event (bit 0).
//! * The reader opens a buffer with its first access: if the next buffer holds newer data
//!   than its own, reader and next swap roles; so the reader always gets the latest complete
//!   buffer and keeps it until it reads the last byte (read event, bit 1).
//! * ECAT access to buffers 1 and 2 (the rest of the 3·len area) is refused (unverified: the
//!   area is reserved; no source says what a direct access returns).
//! * Before anything was written the status shows 0b11 in bits 5:4 and the reader sees the
//!   zeroed initial buffer.
//!
//! The PDI side (device models) uses [`Esc::pdi_read_buffered`] and
//! [`Esc::pdi_write_buffered`], which open, copy and complete in one step.

use super::Esc;
use ecat_wire::register as reg;

/// Roles of the three buffers of one SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Triple {
    /// The writer's buffer.
    pub write: u8,
    /// The latest complete buffer.
    pub next: u8,
    /// The reader's buffer.
    pub read: u8,
    /// `next` holds data the reader has not taken yet.
    pub fresh: bool,
    /// The reader has a buffer open (read the first byte, not yet the last).
    pub read_open: bool,
    /// The MainDevice wrote the last byte in the current frame (commit at end of frame).
    pub pending: bool,
    /// A buffer was completed at least once since the SM was enabled.
    pub written: bool,
}

impl Default for Triple {
    fn default() -> Self {
        Triple {
            write: 0,
            next: 1,
            read: 2,
            fresh: false,
            read_open: false,
            pending: false,
            written: false,
        }
    }
}

impl Triple {
    /// The buffer a reader accessing now gets.
    pub fn read_target(&self) -> u8 {
        if !self.read_open && self.fresh {
            self.next
        } else {
            self.read
        }
    }

    /// The reader opens (takes the latest complete buffer if it is newer).
    fn open(&mut self) {
        if !self.read_open && self.fresh {
            core::mem::swap(&mut self.read, &mut self.next);
            self.fresh = false;
        }
        self.read_open = true;
    }

    /// The writer completed its buffer.
    fn commit(&mut self) {
        core::mem::swap(&mut self.write, &mut self.next);
        self.fresh = true;
        self.written = true;
        self.pending = false;
    }
}

impl Esc {
    /// Physical address of buffer `k` byte `off` of SM `n`.
    fn buffer_addr(&self, n: u8, k: u8, off: u32) -> u32 {
        let s = self.sm(n);
        s.start as u32 + k as u32 * s.length as u32 + off
    }

    fn set_buffer_status(&mut self, n: u8, set: u8, clear: u8) {
        let a = reg::sm(n) as usize + 5;
        let t = self.bufs[n as usize];
        let state = if t.written { t.next << 4 } else { 0x30 };
        self.mem[a] = (self.mem[a] & !(0x30 | clear)) | state | set;
    }

    /// Reset SM `n`'s buffers to "nothing written" (SM enabled, disabled or closed).
    pub(crate) fn buffered_reset(&mut self, n: u8) {
        self.bufs[n as usize] = Triple::default();
        self.watchdog_sm_reset(n);
        if !self.sm(n).is_mailbox() {
            self.mem[reg::sm(n) as usize + 5] = 0x30;
        }
    }

    /// After an ECAT access to buffered SM `n`: the reader opened/closed, or the writer covered
    /// the last byte (`last`).
    pub(crate) fn buffered_accessed(&mut self, n: u8, last: bool) {
        let s = self.sm(n);
        if s.ecat_writes() {
            self.watchdog_written(n);
        }
        let t = &mut self.bufs[n as usize];
        if s.ecat_writes() {
            if last {
                t.pending = true;
            }
        } else {
            t.open();
            if last {
                t.read_open = false;
                self.set_buffer_status(n, 0x02, 0);
            }
        }
    }

    /// End of frame: commit what the MainDevice completed if the frame was good, else drop it.
    pub(crate) fn buffered_frame_end(&mut self, frame_ok: bool) {
        for n in 0..self.shape.sms {
            let t = &mut self.bufs[n as usize];
            if !t.pending {
                continue;
            }
            if frame_ok {
                t.commit();
                self.set_buffer_status(n, 0x01, 0);
                self.outputs_written(n);
            } else {
                t.pending = false;
            }
        }
    }

    /// PDI side: read the latest complete buffer of SM `n` into `out` (at most `length` bytes).
    /// Returns true if it holds data the PDI had not read yet.
    pub fn pdi_read_buffered(&mut self, n: u8, out: &mut [u8]) -> bool {
        if n >= self.shape.sms {
            return false;
        }
        let t = &mut self.bufs[n as usize];
        let fresh = t.fresh;
        t.read_open = false;
        t.open();
        t.read_open = false;
        let k = t.read;
        let len = (self.sm(n).length as usize).min(out.len());
        let a = self.buffer_addr(n, k, 0) as u16;
        self.read(a, &mut out[..len]);
        if fresh {
            self.set_buffer_status(n, 0, 0x01);
        }
        fresh
    }

    /// PDI side: write `data` (at most `length` bytes) into SM `n`'s writer buffer and complete
    /// it, so the MainDevice reads it from its next access on.
    pub fn pdi_write_buffered(&mut self, n: u8, data: &[u8]) {
        if n >= self.shape.sms {
            return;
        }
        let k = self.bufs[n as usize].write;
        let len = (self.sm(n).length as usize).min(data.len());
        let a = self.buffer_addr(n, k, 0) as u16;
        self.pdi_write(a, &data[..len]);
        self.bufs[n as usize].commit();
        self.set_buffer_status(n, 0, 0x02);
    }

    /// True once the MainDevice completed a write to buffered SM `n` since it was enabled.
    pub fn buffered_written(&self, n: u8) -> bool {
        self.bufs.get(n as usize).is_some_and(|t| t.written)
    }
}
