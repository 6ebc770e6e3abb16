//! Which ESCs a frame concerns: the frame's datagrams indexed once, and a cheap test per ESC.
//!
//! Design: processing a frame costs per ESC it passes. On a large network most datagrams
//! concern few ESCs: a position-addressed datagram one, a configured-address datagram one, a
//! logical datagram the ESCs whose FMMUs overlap its range (a cyclic LRW split across frames
//! touches a third of the network each). So the frame's datagrams are indexed once
//! ([`FrameIndex`]), and an ESC that no datagram concerns ([`Route::concerns`], from a small
//! summary the network keeps per ESC so that passing does not touch the ESC's memory) is
//! passed without running its processing unit or its PDI side: it only ORs its event request into
//! the IRQ fields and counts in the auto-increment addresses, which the network applies for
//! all passed ESCs at once. The test is conservative (a logical datagram concerns an ESC when
//! an enabled FMMU's logical byte range overlaps it, whatever its bit limits and direction),
//! and an ESC it selects runs exactly as before, so what a frame does is unchanged; only the
//! PDI side of an ESC no datagram concerned runs after the next frame that does (the PDI
//! reacts to accesses), and its timers (EEPROM busy, SM watchdog, OP request) run when a
//! frame passes at or after the time they are due ([`Route::due`]).
//!
//! A frame of many addressed datagrams (a bring-up frame holds dozens, each for one ESC) would
//! still test each datagram at each ESC; so the index also sorts the stations and positions
//! its configured- and position-addressed datagrams name, and [`FrameIndex::concerns`] asks
//! only the datagrams that can reach many ESCs (broadcast, logical, ARMW/FRMW) one by one.

use super::Esc;
use ecat_wire::datagram::{Addressing, HEADER_LEN, OVERHEAD};
use ecat_wire::register as reg;
use ecat_wire::Command;

/// One datagram of the frame being processed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DgRef {
    /// Offset of the datagram header in the Ethernet frame.
    pub at: usize,
    /// Total length (header, data, WKC).
    pub total: usize,
    /// The command (`None`: undefined code, passes untouched).
    pub cmd: Option<Command>,
    /// ADP as it left the MainDevice.
    pub adp0: u16,
    /// ADO (physical) or the high word of the logical address.
    pub ado: u16,
    /// Data length.
    pub len: usize,
}

impl DgRef {
    fn addressing(&self) -> Addressing {
        self.cmd.map_or(Addressing::None, Command::addressing)
    }

    /// Auto-increment and broadcast datagrams count every ESC they pass in ADP.
    pub fn counts_adp(&self) -> bool {
        matches!(
            self.addressing(),
            Addressing::AutoIncrement | Addressing::Broadcast
        )
    }

    fn logical_address(&self) -> u32 {
        self.adp0 as u32 | (self.ado as u32) << 16
    }

    /// Broadcasts and ARMW/FRMW (whose non-addressed ESCs write) concern every ESC.
    fn concerns_every(&self) -> bool {
        matches!(self.cmd, Some(Command::Armw | Command::Frmw))
            || self.addressing() == Addressing::Broadcast
    }
}

/// Whether the physical datagram `d` reaches the DC registers 0x0900–0x09FF.
fn reaches_dc_registers(d: &DgRef) -> bool {
    (d.ado as usize) < 0x0A00 && d.ado as usize + d.len > 0x0900
}

/// The datagrams of one frame, reused from frame to frame (no allocation once grown).
#[derive(Debug, Clone, Default)]
pub(crate) struct FrameIndex {
    pub dgs: Vec<DgRef>,
    /// Sorted ADPs of the configured-address datagrams (station or alias they name).
    stations: Vec<u16>,
    /// Sorted positions (hops) the auto-increment datagrams are addressed to.
    positions: Vec<u16>,
    /// The datagrams that can concern many ESCs (broadcast, logical, ARMW/FRMW).
    wide: Vec<DgRef>,
    /// A datagram concerns every ESC (broadcast, ARMW/FRMW): [`FrameIndex::concerns`] is
    /// true without asking the route.
    every: bool,
    /// A datagram that concerns every ESC reaches the DC registers 0x0900–0x09FF (the DC
    /// time FRMW): every ESC needs the frame's passage times (see [`Route::dc_relevant`]).
    every_dc: bool,
}

impl FrameIndex {
    /// Index the datagram chain starting at `first` (offset of the first datagram header in
    /// `frame`, which ends at `end`). Returns false if the chain is broken.
    pub fn build(&mut self, frame: &[u8], first: usize, end: usize) -> bool {
        self.dgs.clear();
        self.stations.clear();
        self.positions.clear();
        self.wide.clear();
        self.every = false;
        self.every_dc = false;
        let mut at = first;
        loop {
            let Some(h) = frame
                .get(at..at + HEADER_LEN)
                .filter(|_| at + OVERHEAD <= end)
            else {
                return false;
            };
            let lf = u16::from_le_bytes([h[6], h[7]]);
            let len = (lf & 0x07FF) as usize;
            let total = OVERHEAD + len;
            if at + total > end {
                return false;
            }
            let d = DgRef {
                at,
                total,
                cmd: Command::from_u8(h[0]),
                adp0: u16::from_le_bytes([h[2], h[3]]),
                ado: u16::from_le_bytes([h[4], h[5]]),
                len,
            };
            self.dgs.push(d);
            if d.concerns_every() {
                self.every = true;
                self.every_dc |= reaches_dc_registers(&d);
            }
            match d.cmd {
                None => {}
                Some(Command::Armw | Command::Frmw) => self.wide.push(d),
                Some(c) => match c.addressing() {
                    Addressing::None => {}
                    Addressing::AutoIncrement => self.positions.push(d.adp0.wrapping_neg()),
                    Addressing::Configured => self.stations.push(d.adp0),
                    Addressing::Broadcast | Addressing::Logical => self.wide.push(d),
                },
            }
            if lf & 0x8000 == 0 {
                self.stations.sort_unstable();
                self.positions.sort_unstable();
                return true;
            }
            at += total;
        }
    }

    /// Set the ADP of every auto-increment and broadcast datagram to what it is after
    /// `hops` ESCs incremented it.
    pub fn set_adp(&self, frame: &mut [u8], hops: usize) {
        for d in self.dgs.iter().filter(|d| d.counts_adp()) {
            let v = d.adp0.wrapping_add(hops as u16).to_le_bytes();
            frame[d.at + 2..d.at + 4].copy_from_slice(&v);
        }
    }

    /// Whether any datagram of the frame can concern the ESC with `route` passing as the
    /// `hop`-th ESC (the same answer as [`Route::concerns`] over every datagram).
    pub fn concerns(&self, route: &Route, hop: usize) -> bool {
        if self.every {
            return true;
        }
        let named = |v: &Vec<u16>, x: u16| !v.is_empty() && v.binary_search(&x).is_ok();
        named(&self.positions, hop as u16)
            || named(&self.stations, route.station)
            || route.alias.is_some_and(|a| named(&self.stations, a))
            || self.wide.iter().any(|d| route.concerns(d, hop))
    }

    /// OR `irq` into every datagram's IRQ field.
    pub fn or_irq(&self, frame: &mut [u8], irq: u16) {
        if irq == 0 {
            return;
        }
        for d in &self.dgs {
            self.or_irq_one(frame, d, irq);
        }
    }

    /// OR `irq` into the IRQ field of `d`.
    pub fn or_irq_one(&self, frame: &mut [u8], d: &DgRef, irq: u16) {
        if irq != 0 {
            let f = &mut frame[d.at + 8..d.at + 10];
            let v = u16::from_le_bytes([f[0], f[1]]) | irq;
            f.copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// Logical ranges a [`Route`] keeps apart (process data out and in, and one more, such as a
/// mailbox status bit).
pub(crate) const LOGICAL_RANGES: usize = 3;

/// What the network keeps per ESC to pass it without touching its memory: enough to decide
/// whether a datagram concerns it, its event request, and when its timers next have work.
/// Recomputed after every frame that ran the ESC ([`Esc::route`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Route {
    station: u16,
    /// The station alias when DL control enables alias addressing.
    alias: Option<u16>,
    /// Logical bits `[lo, hi)` of the enabled FMMUs, one range each in FMMU order (empty
    /// ranges have `lo >= hi`); an ESC with more than [`LOGICAL_RANGES`] of them has the
    /// last range widened over the rest. Kept apart because the FMMUs of one ESC are often
    /// far apart in the logical space (process data here, a mailbox status bit at the end):
    /// one range over both would make every logical datagram between concern it.
    logical: [(u64, u64); LOGICAL_RANGES],
    /// An enabled FMMU maps into the DC registers 0x0900–0x09FF.
    fmmu_dc: bool,
    /// ECAT event request ORed into every passing datagram.
    pub irq: u16,
    /// True time from which [`Esc::tick`] has something to do (`u64::MAX`: nothing).
    pub due: u64,
}

impl Route {
    /// Whether datagram `d`, which concerns this ESC, can reach its DC registers
    /// 0x0900–0x09FF (then the ESC needs the frame's passage times and its SYNC unit run up
    /// to the frame; see [`Esc::dc_frame`]).
    pub fn dc_relevant(&self, d: &DgRef) -> bool {
        match d.cmd.map(Command::addressing) {
            Some(Addressing::Logical) => self.fmmu_dc,
            Some(Addressing::None) | None => false,
            Some(_) => reaches_dc_registers(d),
        }
    }

    /// Whether a datagram of `index` that concerns this ESC, passing as the `hop`-th ESC,
    /// can reach its DC registers ([`Route::dc_relevant`] over the frame).
    pub fn dc_frame(&self, index: &FrameIndex, hop: usize) -> bool {
        index.every_dc
            || index
                .dgs
                .iter()
                .any(|d| self.concerns(d, hop) && self.dc_relevant(d))
    }

    /// Whether datagram `d` can concern this ESC when it passes as the `hop`-th ESC of the
    /// frame (conservative: true whenever processing it could read or write anything).
    pub fn concerns(&self, d: &DgRef, hop: usize) -> bool {
        let Some(cmd) = d.cmd else {
            return false;
        };
        match cmd.addressing() {
            Addressing::None => false,
            Addressing::Broadcast => true,
            // The non-addressed ESCs of ARMW/FRMW write.
            _ if matches!(cmd, Command::Armw | Command::Frmw) => true,
            Addressing::AutoIncrement => d.adp0.wrapping_add(hop as u16) == 0,
            Addressing::Configured => d.adp0 == self.station || self.alias == Some(d.adp0),
            Addressing::Logical => {
                let ds = d.logical_address() as u64 * 8;
                let de = ds + d.len as u64 * 8;
                self.logical.iter().any(|&(lo, hi)| lo.max(ds) < hi.min(de))
            }
        }
    }
}

/// Whether `[start, end)` overlaps a register [`Esc::route`] reads other than the event
/// request: station address and alias (0x0010–0x0013), DL control (0x0100–0x0103), FMMUs
/// (0x0600–0x06FF).
pub(crate) fn route_regs(start: u32, end: u32) -> bool {
    let over = |lo: u32, hi: u32| start < hi && end > lo;
    over(0x0010, 0x0014) || over(0x0100, 0x0104) || over(0x0600, 0x0700)
}

impl Esc {
    /// Bring `r` (this ESC's route as last computed) up to date: in full when a register it
    /// reads was written since ([`route_regs`]), else only the event request and the timers,
    /// which is what changes from frame to frame (the same result as [`Esc::route`]).
    pub(crate) fn refresh_route(&mut self, r: &mut Route) {
        if core::mem::take(&mut self.route_stale) {
            *r = self.route();
        } else {
            r.irq = self.irq();
            r.due = self.tick_due();
        }
        debug_assert_eq!(
            *r,
            self.route(),
            "a register the route reads changed unseen"
        );
    }

    /// This ESC's [`Route`] now.
    pub(crate) fn route(&self) -> Route {
        let (mut logical, mut used, mut fmmu_dc) = ([(u64::MAX, 0); LOGICAL_RANGES], 0, false);
        for f in (0..self.shape.fmmus).filter_map(|n| self.enabled_fmmu(n)) {
            let (fs, fe) = super::logical::logical_bits(&f);
            if fs < fe {
                let r = &mut logical[used.min(LOGICAL_RANGES - 1)];
                used += 1;
                r.0 = r.0.min(fs);
                r.1 = r.1.max(fe);
                let ps = f.physical_start as u64;
                fmmu_dc |= ps < 0x0A00 && ps + (fe - fs).div_ceil(8) + 1 > 0x0900;
            }
        }
        let alias_on = self.mem[reg::DL_CONTROL_ALIAS as usize] & 1 != 0;
        Route {
            station: self.station_address(),
            alias: alias_on.then(|| self.station_alias()),
            logical,
            fmmu_dc,
            irq: self.irq(),
            due: self.tick_due(),
        }
    }
}
