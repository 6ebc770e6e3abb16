//! The ECAT side of the memory: physical reads and writes of a datagram's byte range.
//!
//! Each byte goes through the register map ([`regmap`](super::regmap)), the SyncManager gate
//! and the SM-configuration write lock; the gate also says where a byte of a buffered SM
//! really lives. A read or write "happened" (for the working counter)
//! if at least one byte was really accessed. Side effects run once per access, after all
//! bytes: reading AL/DL status clears their event bits; writes dispatch to the AL state
//! machine, the EEPROM interface, the SyncManagers and the error counters.

use super::regmap::Access;
use super::syncman::{Dir, Gate};
use super::Esc;
use ecat_wire::register as reg;

/// Snapshot taken before a write, for hooks that must compare old and new values.
pub(crate) struct WriteCtx {
    pub sm_activate: [u8; 16],
    pub eeprom_control: u16,
}

fn overlaps(start: u32, end: u32, lo: u16, hi_excl: u16) -> bool {
    start < hi_excl as u32 && end > lo as u32
}

impl Esc {
    /// May the ECAT side read the byte at `a` under `gate` (`None`: no SM area involved)?
    #[inline]
    pub(crate) fn readable(&self, a: u32, gate: Option<&Gate>) -> bool {
        self.reg_access(a) != Access::Absent && gate.is_none_or(|g| g.allows(a))
    }

    /// May the ECAT side write the byte at `a` under `gate` (`None`: no SM area involved)?
    #[inline]
    pub(crate) fn writable(&self, a: u32, gate: Option<&Gate>, ctx: &WriteCtx) -> bool {
        self.reg_access(a) == Access::ReadWrite
            && gate.is_none_or(|g| g.allows(a))
            && self.sm_byte_writable(a, &ctx.sm_activate)
    }

    /// Store one written byte. Some registers act on the write but keep their own value
    /// (DC latch/system time, handled later by the DC model), and the EEPROM registers
    /// 0x0502–0x050F are locked while a command is busy (the write still counts; unverified).
    pub(crate) fn store(&mut self, a: u32, v: u8) {
        match a {
            0x0900..=0x0903 => {}
            0x0910..=0x0917 => self.dc_store_system_time(a, v),
            0x0502..=0x050F if self.eeprom.pending.is_some() => {}
            _ => {
                self.route_stale |= super::route::route_regs(a, a + 1);
                if let Some(m) = self.mem.get_mut(a as usize) {
                    *m = v;
                }
            }
        }
    }

    /// [`Esc::write_ctx`] for a write of `[start, end)`: the snapshot only where the write
    /// reaches the registers that need it (SMs, EEPROM control), a blank one elsewhere
    /// (process data writes every cycle need none).
    pub(crate) fn write_ctx_for(&self, start: u32, end: u32) -> WriteCtx {
        if overlaps(start, end, reg::SM0, reg::SM0 + 128)
            || overlaps(start, end, reg::EEPROM_CONFIG, 0x0510)
        {
            self.write_ctx()
        } else {
            WriteCtx {
                sm_activate: [0; 16],
                eeprom_control: 0,
            }
        }
    }

    pub(crate) fn write_ctx(&self) -> WriteCtx {
        WriteCtx {
            sm_activate: self.sm_activate_snapshot(),
            eeprom_control: self.get16(reg::EEPROM_CONTROL),
        }
    }

    /// ECAT read of `out.len()` bytes at `addr`; with `or` the memory is ORed into the frame
    /// data (broadcast reads). Returns true if any byte was read.
    pub(crate) fn ecat_read(&mut self, addr: u32, out: &mut [u8], or: bool) -> bool {
        let end = addr + out.len() as u32;
        if self.plain(addr, end) {
            // No SyncManager involved: straight from memory.
            let mut any = false;
            if let (Some(t), Some(mem)) = (
                self.reg_table_range(addr, end),
                self.mem.get(addr as usize..end as usize),
            ) {
                // Registers: the access of each byte from the shape's table at once.
                for ((o, &m), &acc) in out.iter_mut().zip(mem).zip(t) {
                    if acc != Access::Absent {
                        *o = if or { *o | m } else { m };
                        any = true;
                    }
                }
                if any {
                    self.after_read_registers(addr, end);
                }
                return any;
            }
            for (i, o) in out.iter_mut().enumerate() {
                let a = addr + i as u32;
                if self.reg_access(a) == Access::Absent {
                    continue;
                }
                let m = self.mem.get(a as usize).copied().unwrap_or(0);
                *o = if or { *o | m } else { m };
                any = true;
            }
            if any {
                self.after_read_registers(addr, end);
            }
            return any;
        }
        let gate = self.sm_gate(addr, end, Dir::Read);
        let mut any = false;
        for (i, o) in out.iter_mut().enumerate() {
            let a = addr + i as u32;
            if !self.readable(a, Some(&gate)) {
                continue;
            }
            let m = self.mem.get(gate.map(a) as usize).copied().unwrap_or(0);
            *o = if or { *o | m } else { m };
            any = true;
        }
        if any {
            self.after_read(addr, end, Some(&gate));
        }
        any
    }

    /// `[start, end)` touches no SyncManager area, SM register or EEPROM register: an access
    /// needs neither the SM gate nor the write snapshot.
    fn plain(&self, start: u32, end: u32) -> bool {
        !overlaps(start, end, reg::EEPROM_CONFIG, 0x0510)
            && !overlaps(start, end, reg::SM0, reg::SM0 + 128)
            && !self.sm_areas_overlap(start, end)
    }

    /// ECAT write of `data` at `addr`. Returns true if any byte was written.
    pub(crate) fn ecat_write(&mut self, addr: u32, data: &[u8]) -> bool {
        let end = addr + data.len() as u32;
        if self.plain(addr, end) {
            let mut any = false;
            let table = self.reg_table_range(addr, end);
            for (i, &d) in data.iter().enumerate() {
                let a = addr + i as u32;
                let acc = table.map_or_else(|| self.reg_access(a), |t| t[i]);
                if acc == Access::ReadWrite {
                    self.store(a, d);
                    any = true;
                }
            }
            if any {
                self.after_write_registers(addr, end, None);
            }
            return any;
        }
        let gate = self.sm_gate(addr, end, Dir::Write);
        let ctx = self.write_ctx_for(addr, end);
        let mut any = false;
        for (i, &d) in data.iter().enumerate() {
            let a = addr + i as u32;
            if self.writable(a, Some(&gate), &ctx) {
                self.store(gate.map(a), d);
                any = true;
            }
        }
        if any {
            self.after_write(addr, end, Some(&gate), &ctx);
        }
        any
    }

    /// Side effects of a successful read of `[start, end)`.
    #[inline]
    pub(crate) fn after_read(&mut self, start: u32, end: u32, gate: Option<&Gate>) {
        if let Some(g) = gate {
            self.sm_complete(g);
        }
        self.after_read_registers(start, end);
    }

    /// Side effects of reading registers: AL/DL status reads clear their event bits.
    fn after_read_registers(&mut self, start: u32, end: u32) {
        let mut clear = 0;
        if overlaps(start, end, reg::AL_STATUS, reg::AL_STATUS + 2) {
            clear |= 0x0008;
        }
        if overlaps(start, end, reg::DL_STATUS, reg::DL_STATUS + 2) {
            clear |= 0x0004;
        }
        let ev = self.get16(reg::ECAT_EVENT);
        if ev & clear != 0 {
            self.put16(reg::ECAT_EVENT, ev & !clear);
        }
    }

    /// Side effects of a successful write of `[start, end)`.
    #[inline]
    pub(crate) fn after_write(
        &mut self,
        start: u32,
        end: u32,
        gate: Option<&Gate>,
        ctx: &WriteCtx,
    ) {
        if let Some(g) = gate {
            self.sm_complete(g);
        }
        self.after_write_registers(start, end, Some(ctx));
    }

    /// Side effects of writing registers; `ctx` is needed (and given) when the range touches
    /// the EEPROM or SM registers.
    fn after_write_registers(&mut self, start: u32, end: u32, ctx: Option<&WriteCtx>) {
        if start < 0x0900 || end > 0x0A00 {
            self.kick_pdi();
        }
        if overlaps(start, end, 0x0300, 0x0314) || overlaps(start, end, 0x0442, 0x0444) {
            self.clear_counters(start, end);
        }
        if overlaps(start, end, reg::AL_CONTROL, reg::AL_CONTROL + 2) {
            self.al_control_written();
        }
        if overlaps(start, end, reg::EEPROM_CONFIG, reg::EEPROM_CONFIG + 1) {
            self.eeprom_config_written();
        }
        if let Some(ctx) = ctx {
            if overlaps(start, end, reg::EEPROM_CONTROL, reg::EEPROM_CONTROL + 2) {
                self.eeprom_control_written(ctx.eeprom_control);
            }
            if overlaps(start, end, reg::SM0, reg::SM0 + 128) {
                self.sm_registers_written(&ctx.sm_activate);
            }
        }
        if overlaps(start, end, 0x0900, 0x0A00) {
            self.dc_after_write(start, end);
        }
    }

    /// Writing any value to an error counter clears its group (all RX error counters, all
    /// forwarded counters, the EPU counter, the PDI counter with its code, all lost-link
    /// counters, each watchdog counter).
    fn clear_counters(&mut self, start: u32, end: u32) {
        const GROUPS: [(u16, u16); 7] = [
            (0x0300, 0x0308),
            (0x0308, 0x030C),
            (0x030C, 0x030D),
            (0x030D, 0x0310),
            (0x0310, 0x0314),
            (0x0442, 0x0443),
            (0x0443, 0x0444),
        ];
        for (lo, hi) in GROUPS {
            if overlaps(start, end, lo, hi) {
                self.mem[lo as usize..hi as usize].fill(0);
            }
        }
    }
}
