//! Logical commands (LRD, LWR, LRW) through the FMMUs, bit by bit (a memory byte at a time).
//!
//! Every enabled FMMU whose type allows the direction maps logical bits
//! `[start·8 + start_bit, … + bit_count)` onto physical bits from
//! `physical_start·8 + physical_start_bit`. Only the part overlapping the datagram is touched:
//! a read copies memory bits into the frame (unmapped bits pass through, i.e.
//! `out = mem & mask | in & !mask`), a write copies the bits as they arrived into memory. The
//! physical bytes go through the same SyncManager gate as physical commands. WKC: +1 if any
//! read happened, +2 for LRW (+1 for LWR) if any write happened, once per ESC.

use super::access::WriteCtx;
use super::syncman::{Dir, Gate};
use super::{DatagramOutcome, Esc};
use ecat_wire::datagram::Datagram;
use ecat_wire::register::{self as reg, FmmuRepr};
use ecat_wire::Command;

fn bit(buf: &[u8], i: u64) -> bool {
    buf[(i / 8) as usize] & (1 << (i % 8)) != 0
}

fn set_bit(buf: &mut [u8], i: u64, v: bool) {
    let b = &mut buf[(i / 8) as usize];
    if v {
        *b |= 1 << (i % 8);
    } else {
        *b &= !(1 << (i % 8));
    }
}

/// The overlap of one FMMU with one datagram, in bits.
struct Span {
    /// First overlapping bit, relative to the datagram data.
    frame_bit: u64,
    /// First overlapping bit in ESC memory.
    mem_bit: u64,
    /// Number of bits.
    bits: u64,
}

/// The logical bits `[start, end)` an FMMU maps.
pub(crate) fn logical_bits(f: &FmmuRepr) -> (u64, u64) {
    let fs = f.logical_start as u64 * 8 + (f.logical_start_bit & 7) as u64;
    (fs, fs + f.bit_count() as u64)
}

impl Span {
    fn of(f: &FmmuRepr, la: u64, len: usize) -> Option<Span> {
        let (fs, fe) = logical_bits(f);
        let ds = la * 8;
        let de = ds + len as u64 * 8;
        let (lo, hi) = (fs.max(ds), fe.min(de));
        if lo >= hi {
            return None;
        }
        Some(Span {
            frame_bit: lo - ds,
            mem_bit: f.physical_start as u64 * 8 + (f.physical_start_bit & 7) as u64 + (lo - fs),
            bits: hi - lo,
        })
    }

    fn mem_bytes(&self) -> (u32, u32) {
        let lo = self.mem_bit / 8;
        let hi = (self.mem_bit + self.bits - 1) / 8 + 1;
        (
            lo.min(u32::MAX as u64) as u32,
            hi.min(u32::MAX as u64) as u32,
        )
    }
}

/// The FMMU registers (0x0600–0x06FF, 16 FMMUs of 16 bytes).
const FMMU_REGS: core::ops::Range<u32> = 0x0600..0x0700;

impl Esc {
    /// FMMU `n`'s registers if it is enabled.
    pub(crate) fn enabled_fmmu(&self, n: u8) -> Option<FmmuRepr> {
        let a = reg::fmmu(n) as usize;
        if self.mem[a + 12] & 1 == 0 {
            return None;
        }
        FmmuRepr::parse(&self.mem[a..a + FmmuRepr::LEN]).ok()
    }

    /// Process a logical datagram against this ESC's FMMUs.
    pub(crate) fn logical(
        &mut self,
        cmd: Command,
        dg: &mut Datagram<&mut [u8]>,
    ) -> DatagramOutcome {
        let la = dg.logical_address() as u64;
        let len = dg.data_len();
        let want_read = matches!(cmd, Command::Lrd | Command::Lrw);
        let want_write = matches!(cmd, Command::Lwr | Command::Lrw);
        // LRW writes the data as it arrived, before this ESC's reads changed it: keep a copy
        // of the frame bytes `[base, ..)` its writing FMMUs cover (only those: a copy of the
        // whole datagram per ESC would sweep the cache on a large network).
        let mut incoming = core::mem::take(&mut self.scratch);
        incoming.clear();
        let mut base = 0;
        if cmd == Command::Lrw {
            let (mut lo, mut hi) = (u64::MAX, 0);
            // A writing FMMU that maps the FMMU registers themselves can enable or move a
            // later FMMU in the middle of this datagram, outside the range computed here:
            // then keep the whole datagram.
            let mut whole = false;
            for n in 0..self.shape.fmmus {
                let Some(f) = self
                    .enabled_fmmu(n)
                    .filter(|f| f.kind & FmmuRepr::WRITE != 0)
                else {
                    continue;
                };
                if let Some(s) = Span::of(&f, la, len) {
                    let (mlo, mhi) = s.mem_bytes();
                    whole |= mlo < FMMU_REGS.end && mhi > FMMU_REGS.start;
                    lo = lo.min(s.frame_bit / 8);
                    hi = hi.max((s.frame_bit + s.bits).div_ceil(8));
                }
            }
            if whole {
                incoming.extend_from_slice(dg.data());
            } else if lo < hi {
                incoming.extend_from_slice(&dg.data()[lo as usize..hi as usize]);
                base = lo;
            }
        }
        let (mut read, mut wrote, mut addressed) = (false, false, false);
        for n in 0..self.shape.fmmus {
            let Some(f) = self.enabled_fmmu(n) else {
                continue;
            };
            let Some(span) = Span::of(&f, la, len) else {
                continue;
            };
            addressed = true;
            if want_read && f.kind & FmmuRepr::READ != 0 {
                read |= self.fmmu_read(&span, dg.data_mut());
            }
            if want_write && f.kind & FmmuRepr::WRITE != 0 {
                wrote |= if cmd == Command::Lrw {
                    // Inside the copy by construction; a span outside it writes nothing.
                    let Some(frame_bit) = span.frame_bit.checked_sub(base * 8) else {
                        continue;
                    };
                    let rel = Span { frame_bit, ..span };
                    self.fmmu_write(&rel, &incoming)
                } else {
                    self.fmmu_write(&span, dg.data())
                };
            }
        }
        self.scratch = incoming;
        let w = if cmd == Command::Lrw { 2 } else { 1 };
        DatagramOutcome {
            addressed,
            wkc_added: read as u16 + w * wrote as u16,
        }
    }

    fn fmmu_read(&mut self, span: &Span, frame: &mut [u8]) -> bool {
        let (lo, hi) = span.mem_bytes();
        // Outside every SM area (a status bit, a register) the gate would be empty.
        let gate = self
            .sm_areas_overlap(lo, hi)
            .then(|| self.sm_gate(lo, hi, Dir::Read));
        let mut any = false;
        let mut i = 0;
        // A memory byte at a time (access rights are per byte), whole bytes when aligned.
        while i < span.bits {
            let m = span.mem_bit + i;
            let (a, b0) = (m / 8, m % 8);
            let n = (8 - b0).min(span.bits - i);
            let fb = span.frame_bit + i;
            i += n;
            if a > u32::MAX as u64 || !self.readable(a as u32, gate.as_ref()) {
                continue;
            }
            let v = self
                .mem
                .get(Gate::map_through(gate.as_ref(), a as u32) as usize)
                .copied()
                .unwrap_or(0);
            if n == 8 && fb.is_multiple_of(8) {
                frame[(fb / 8) as usize] = v;
            } else {
                for j in 0..n {
                    set_bit(frame, fb + j, v & (1 << (b0 + j)) != 0);
                }
            }
            any = true;
        }
        if any {
            self.after_read(lo, hi, gate.as_ref());
        }
        any
    }

    fn fmmu_write(&mut self, span: &Span, incoming: &[u8]) -> bool {
        let (lo, hi) = span.mem_bytes();
        let gate = self
            .sm_areas_overlap(lo, hi)
            .then(|| self.sm_gate(lo, hi, Dir::Write));
        let ctx: WriteCtx = self.write_ctx_for(lo, hi);
        let mut any = false;
        let mut i = 0;
        while i < span.bits {
            let m = span.mem_bit + i;
            let (a, b0) = (m / 8, m % 8);
            let n = (8 - b0).min(span.bits - i);
            let fb = span.frame_bit + i;
            i += n;
            if a > u32::MAX as u64 || !self.writable(a as u32, gate.as_ref(), &ctx) {
                continue;
            }
            let pa = Gate::map_through(gate.as_ref(), a as u32);
            let byte = if n == 8 && fb.is_multiple_of(8) {
                incoming[(fb / 8) as usize]
            } else {
                let mut byte = [self.mem.get(pa as usize).copied().unwrap_or(0)];
                for j in 0..n {
                    set_bit(&mut byte, b0 + j, bit(incoming, fb + j));
                }
                byte[0]
            };
            self.store(pa, byte);
            any = true;
        }
        if any {
            self.after_write(lo, hi, gate.as_ref(), &ctx);
        }
        any
    }
}
