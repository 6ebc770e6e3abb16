//! The cyclic frames: built once at activation, patched and sent every cycle, matched on return.
//!
//! Every domain datagram ([`crate::domain::DatagramPlan`]) gets a fixed place in one of the
//! frame templates (in domain order after the DC datagrams, a new frame when the open one is
//! full), and the first frame with spare room carries a BRD of AL status: its WKC is the number of SubDevices that answered and its data the OR of
//! their states, so a SubDevice leaving OP or the ring is seen within one cycle at no extra
//! frame. A layout may instead give the frames itself ([`FrameItem`], e.g. an ENI's cyclic
//! frames): then every frame starts where the plan starts one and holds its datagrams in the
//! plan's order, including datagrams sent as given ([`FrameItem::Fixed`]: a NOP, a
//! mailbox-state LRD) whose working counters are checked against theirs. The probes take
//! the first frame with room: on a large network split over several frames that is usually
//! the first, next to the DC datagrams, so the datagrams every SubDevice answers share one
//! frame and each other frame concerns only the SubDevices its process data belongs to.
//!
//! Datagram indices of cyclic frames have bit 7 set (the acyclic frame engine uses 0..127);
//! the low bits carry the frame number (as few as the frame count needs: none for one frame,
//! at most 4) and the bits between carry the cycle number modulo 2^(7 − those), so a frame
//! that returns in a later cycle is recognised as late and dropped, and a duplicate as a
//! duplicate. The tag space is as wide as it can be because a reply delayed by a whole tag
//! period (128 cycles with one frame, 8 with sixteen) would be taken for the current cycle's
//! (stale inputs accepted, the real reply then counted as a duplicate): with a fixed 3-bit
//! tag, one 8 ms stall of the SubDevices' side at 1 ms did exactly that.
//!
//! With [`Extras::mailbox_status`], an LRD of a small logical area reads every mailbox
//! SubDevice's SM1 "mailbox full" bit (each maps it there with an FMMU, see
//! [`crate::runtime`]), so the MainDevice learns every cycle, at no extra frame, which
//! mailboxes hold an answer or a message sent on their own.
//!
//! Per cycle: [`CyclicFrames::prepare`] copies outputs from the domain images into the
//! templates (one `memcpy` per datagram) and stamps the indices; the caller transmits
//! [`CyclicFrames::frame`]s; [`CyclicFrames::handle_frame`] copies inputs back and records
//! WKCs. Nothing here allocates after construction.

use crate::domain::Domain;
use crate::error::{Error, Result};
use ecat_wire::datagram::{Addressing, DatagramRepr, HEADER_LEN, OVERHEAD};
use ecat_wire::frame::{parse_ethernet, ECAT_HEADER_LEN, ETH_HEADER_LEN};
use ecat_wire::register::{AL_STATUS, DC_SYSTEM_TIME, DC_SYSTEM_TIME_DIFFERENCE};
use ecat_wire::{Command, FrameBuilder};

/// Datagram indices with this bit set belong to cyclic frames.
pub const CYCLIC_INDEX: u8 = 0x80;
/// Most frames per cycle (frame number in 4 bits).
pub const MAX_FRAMES: usize = 16;

/// Counters of the cyclic path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CyclicCounters {
    /// Cycles prepared.
    pub cycles: u64,
    /// Frames transmitted.
    pub frames_sent: u64,
    /// Frames that came back in time.
    pub frames_received: u64,
    /// Frames that did not come back before the next cycle.
    pub frames_lost: u64,
    /// Frames that came back after their cycle ended (dropped).
    pub frames_late: u64,
    /// Frames that came back twice in one cycle (second copy dropped).
    pub frames_duplicated: u64,
    /// Cyclic frames whose structure did not match their template (dropped).
    pub frames_corrupted: u64,
    /// Datagrams sent as given ([`FrameItem::Fixed`]) that returned with another working
    /// counter than expected.
    pub fixed_wkc_mismatches: u64,
}

/// A datagram sent as given every cycle (zero data), e.g. an ENI's NOP or mailbox-state LRD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedDatagram {
    /// Command.
    pub command: Command,
    /// Address: ADP | ADO << 16, or the logical address.
    pub address: u32,
    /// Data length.
    pub len: u16,
    /// Working counter to expect, if checked.
    pub expected_wkc: Option<u16>,
}

impl FixedDatagram {
    fn repr(&self) -> DatagramRepr {
        match self.command.addressing() {
            Addressing::Logical => DatagramRepr::logical(self.command, 0, self.address, self.len),
            _ => DatagramRepr::physical(
                self.command,
                0,
                self.address as u16,
                (self.address >> 16) as u16,
                self.len,
            ),
        }
    }
}

/// One datagram of a frame plan given by the layout (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameItem {
    /// Starts the next frame.
    NewFrame,
    /// Datagram `plan` of domain `domain`.
    Domain {
        /// Domain index.
        domain: usize,
        /// Plan index in the domain.
        plan: usize,
    },
    /// The AL-status probe (BRD 0x0130).
    AlProbe,
    /// The DC datagrams (FRMW of the reference clock's time, after the master-time write
    /// when the reference follows the master); without DC, the given datagram if any.
    Dc(Option<FixedDatagram>),
    /// A datagram sent as given.
    Fixed(FixedDatagram),
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    domain: usize,
    plan: usize,
    /// Offset of the datagram header in the frame.
    at: usize,
    len: usize,
}

/// What a datagram of the layout carries: domain plan (domain, plan index) or a special one.
type Item = (core::result::Result<(usize, usize), Kind>, DatagramRepr);

/// A frame being filled during layout: buffer, slots, datagram header offsets, next offset.
type OpenFrame = (Vec<u8>, Vec<Slot>, Vec<usize>, usize);

/// Where a datagram goes while the templates are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In the last frame if it has room, else in a new one.
    Next,
    /// In a new frame (unless the last one is still empty).
    NewFrame,
    /// In the first frame with room (the probes: next to the DC datagrams on a large network).
    FirstFit,
}

#[derive(Debug)]
struct Template {
    buf: Vec<u8>,
    len: usize,
    slots: Vec<Slot>,
    /// Offsets of every datagram header in the frame (for stamping the index).
    headers: Vec<usize>,
    outstanding: bool,
    sent_at: u64,
    round_trip_ns: u64,
}

/// Which special datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// FPWR 0x0910 of the reference clock with the master's time (reference follows master).
    DcWrite,
    /// FRMW 0x0910 of the reference clock: distributes its time to every other clock.
    DcSync,
    /// BRD 0x0130: OR of every AL status, WKC = SubDevices answering.
    AlProbe,
    /// BRD 0x092C: OR of every |system time difference| (an upper bound of the largest).
    SyncMonitor,
    /// LRD of the mailbox status bits.
    MailboxStatus,
    /// A datagram sent as given, with the working counter to expect.
    Fixed(Option<u16>),
}

/// A special datagram's place and its last answer.
#[derive(Debug, Clone, Copy)]
struct Special {
    kind: Kind,
    frame: usize,
    at: usize,
    len: usize,
    value: u64,
    wkc: u16,
    /// The frame carrying it came back this cycle.
    returned: bool,
}

/// Distributed-clock datagrams in the cyclic frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CyclicDc {
    /// Station address of the reference clock.
    pub reference: u16,
    /// Also write the master's time to the reference clock every cycle (the reference
    /// follows the master, IgH's default); else the master follows the reference.
    pub write_master_time: bool,
    /// Add the sync monitor (BRD of 0x092C).
    pub monitor: bool,
}

/// What the cyclic frames carry besides the process data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extras {
    /// The BRD of AL status (spots SubDevices that leave the state or the ring).
    pub al_probe: bool,
    /// Distributed clocks.
    pub dc: Option<CyclicDc>,
    /// LRD of the SM1 status bits: (logical address, bytes).
    pub mailbox_status: Option<(u32, u16)>,
}

/// The cyclic frame templates. See the module documentation.
#[derive(Debug)]
pub struct CyclicFrames {
    frames: Vec<Template>,
    specials: Vec<Special>,
    tag: u8,
    /// Index bits for the frame number; the cycle tag sits above them.
    frame_bits: u8,
    counters: CyclicCounters,
    /// The mailbox status bits of the last cycle (valid while `mailbox_returned`).
    mailbox: Vec<u8>,
    mailbox_returned: bool,
    /// What the FRMW of the reference clock's time carries out (see
    /// [`CyclicFrames::set_expected_reference_time`]).
    expected_reference: u64,
}

impl CyclicFrames {
    /// Lay out the domains' datagrams into frames from `mac`, with the DC datagrams first;
    /// the AL probe, the mailbox status LRD and the sync monitor take the first frame with
    /// spare room (on a large network the DC frame, so each other frame concerns only the
    /// SubDevices whose process data it carries).
    pub fn new(domains: &[Domain], mac: [u8; 6], extras: Extras) -> Result<CyclicFrames> {
        let mut plan = vec![FrameItem::Dc(None)];
        for d in domains {
            plan.extend((0..d.plans.len()).map(|plan| FrameItem::Domain {
                domain: d.index,
                plan,
            }));
        }
        Self::with_plan(domains, mac, extras, &plan)
    }

    /// Lay out the datagrams `plan` gives, in its order and frames (a frame that would
    /// overflow continues in the next one). The AL probe (when `extras` asks for it), the
    /// mailbox status LRD and the sync monitor (with DC) take the first frame with room when
    /// the plan does not place them; the DC datagrams go at the start.
    pub fn with_plan(
        domains: &[Domain],
        mac: [u8; 6],
        extras: Extras,
        plan: &[FrameItem],
    ) -> Result<CyclicFrames> {
        let mut items: Vec<(Item, Place)> = Vec::new();
        let dc_items = |items: &mut Vec<(Item, Place)>, new: bool| {
            if let Some(dc) = extras.dc {
                let place = |first: bool| match first && new {
                    true => Place::NewFrame,
                    false => Place::Next,
                };
                if dc.write_master_time {
                    items.push((
                        (
                            Err(Kind::DcWrite),
                            DatagramRepr::physical(
                                Command::Fpwr,
                                0,
                                dc.reference,
                                DC_SYSTEM_TIME,
                                8,
                            ),
                        ),
                        place(true),
                    ));
                }
                items.push((
                    (
                        Err(Kind::DcSync),
                        DatagramRepr::physical(Command::Frmw, 0, dc.reference, DC_SYSTEM_TIME, 8),
                    ),
                    place(!dc.write_master_time),
                ));
            }
        };
        let probe = (
            Err(Kind::AlProbe),
            DatagramRepr::physical(Command::Brd, 0, 0, AL_STATUS, 2),
        );
        if !plan.iter().any(|x| matches!(x, FrameItem::Dc(_))) {
            dc_items(&mut items, false);
        }
        let mut new = false;
        for item in plan {
            let before = items.len();
            let place = match new {
                true => Place::NewFrame,
                false => Place::Next,
            };
            match *item {
                FrameItem::NewFrame => {
                    new = true;
                    continue;
                }
                FrameItem::Domain { domain, plan } => {
                    let p = domains
                        .iter()
                        .find(|d| d.index == domain)
                        .and_then(|d| d.plans.get(plan))
                        .ok_or_else(|| {
                            Error::Invalid(format!(
                                "cyclic frame plan: domain {domain} has no datagram {plan}"
                            ))
                        })?;
                    items.push((
                        (
                            Ok((domain, plan)),
                            DatagramRepr::logical(p.command, 0, p.logical, p.len as u16),
                        ),
                        place,
                    ));
                }
                FrameItem::AlProbe if extras.al_probe => items.push((probe, place)),
                FrameItem::AlProbe => {}
                FrameItem::Dc(_) if extras.dc.is_some() => dc_items(&mut items, new),
                FrameItem::Dc(None) => {}
                FrameItem::Dc(Some(f)) | FrameItem::Fixed(f) => {
                    items.push(((Err(Kind::Fixed(f.expected_wkc)), f.repr()), place))
                }
            }
            if items.len() > before {
                new = false;
            }
        }
        if extras.al_probe && !plan.contains(&FrameItem::AlProbe) {
            items.push((probe, Place::FirstFit));
        }
        if let Some((logical, len)) = extras.mailbox_status {
            items.push((
                (
                    Err(Kind::MailboxStatus),
                    DatagramRepr::logical(Command::Lrd, 0, logical, len),
                ),
                Place::FirstFit,
            ));
        }
        if extras.dc.is_some_and(|d| d.monitor) {
            items.push((
                (
                    Err(Kind::SyncMonitor),
                    DatagramRepr::physical(Command::Brd, 0, 0, DC_SYSTEM_TIME_DIFFERENCE, 4),
                ),
                Place::FirstFit,
            ));
        }
        let mut open: Vec<OpenFrame> = Vec::new();
        let mut specials = Vec::new();
        for ((what, repr), place) in items {
            let fits = |f: &OpenFrame| {
                repr.total_len() <= FrameBuilder::FIRST + ecat_wire::frame::MAX_DATAGRAMS_LEN - f.3
            };
            let n = match place {
                Place::FirstFit => open.iter().position(fits),
                Place::Next => open.last().filter(|f| fits(f)).map(|_| open.len() - 1),
                Place::NewFrame => open
                    .last()
                    .filter(|f| f.2.is_empty() && fits(f))
                    .map(|_| open.len() - 1),
            };
            let n = n.unwrap_or_else(|| {
                open.push((vec![0u8; 1514], Vec::new(), Vec::new(), FrameBuilder::FIRST));
                open.len() - 1
            });
            let (buf, slots, headers, pos) = &mut open[n];
            let at = *pos;
            let mut r = repr;
            r.more = false;
            r.emit(&mut buf[at..])
                .map_err(|e| Error::Invalid(format!("cyclic frame layout: {e}")))?;
            if let Some(&prev) = headers.last() {
                buf[prev + 7] |= 0x80; // M bit of the previous datagram
            }
            headers.push(at);
            *pos += repr.total_len();
            match what {
                Ok((domain, plan)) => slots.push(Slot {
                    domain,
                    plan,
                    at,
                    len: repr.data_len as usize,
                }),
                Err(kind) => specials.push(Special {
                    kind,
                    frame: n,
                    at,
                    len: repr.data_len as usize,
                    value: 0,
                    wkc: 0,
                    returned: false,
                }),
            }
        }
        let frames: Vec<Template> = open
            .into_iter()
            .map(|(buf, slots, headers, pos)| close(buf, slots, headers, pos, mac))
            .collect();
        if frames.len() > MAX_FRAMES {
            return Err(Error::Invalid(format!(
                "the process data needs {} frames per cycle; at most {MAX_FRAMES} are supported",
                frames.len()
            )));
        }
        let frame_bits = (usize::BITS - frames.len().saturating_sub(1).leading_zeros()) as u8;
        Ok(CyclicFrames {
            frames,
            specials,
            tag: 0,
            frame_bits,
            counters: CyclicCounters::default(),
            mailbox: vec![0; extras.mailbox_status.map_or(0, |(_, n)| n as usize)],
            mailbox_returned: false,
            expected_reference: 0,
        })
    }

    /// The cycle tag's mask: 7 bits less the frame number's.
    fn tag_mask(&self) -> u8 {
        0x7F >> self.frame_bits
    }

    /// Number of frames per cycle.
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// Bytes on the wire per cycle (frames without FCS).
    pub fn bytes_per_cycle(&self) -> usize {
        self.frames.iter().map(|f| f.len).sum()
    }

    /// Counters.
    pub fn counters(&self) -> CyclicCounters {
        self.counters
    }

    /// AL status probe result of the last cycle: (OR of states, WKC = SubDevices answering);
    /// `None` if its frame did not come back (a lost frame says nothing about SubDevices).
    pub fn al_probe(&self) -> Option<(u16, u16)> {
        self.special(Kind::AlProbe).map(|p| (p.value as u16, p.wkc))
    }

    /// The reference clock's system time this cycle (from the FRMW), if it came back.
    pub fn dc_time(&self) -> Option<u64> {
        self.special(Kind::DcSync)
            .filter(|p| p.wkc > 0)
            .map(|p| p.value)
    }

    /// Sync monitor: OR of every SubDevice's |system time difference| (ns), an upper bound of
    /// the largest; `None` without DC or if its frame did not come back.
    pub fn sync_monitor(&self) -> Option<u32> {
        self.special(Kind::SyncMonitor)
            .map(|p| p.value as u32 & 0x7FFF_FFFF)
    }

    /// The mailbox status bits read by the last cycle's frames (bit n of the area: the
    /// SubDevice given bit n), if their frame came back.
    pub fn mailbox_status(&self) -> Option<&[u8]> {
        self.mailbox_returned.then_some(&self.mailbox[..])
    }

    fn special(&self, kind: Kind) -> Option<&Special> {
        self.specials.iter().find(|p| p.kind == kind && p.returned)
    }

    /// Longest round trip among the frames that returned in the last cycle (ns).
    pub fn round_trip_ns(&self) -> u64 {
        self.frames
            .iter()
            .map(|f| f.round_trip_ns)
            .max()
            .unwrap_or(0)
    }

    /// Start a cycle: count frames of the previous cycle that never came back, copy outputs
    /// into the templates, stamp indices and zero the WKCs, and clear the domains' WKCs.
    /// `master_time` (ns since 2000) goes to the reference clock when the DC mode writes it.
    pub fn prepare(&mut self, domains: &mut [Domain], master_time: u64) {
        self.counters.cycles += 1;
        self.tag = (self.tag + 1) & self.tag_mask();
        self.mailbox_returned = false;
        for p in &mut self.specials {
            p.value = 0;
            p.wkc = 0;
            p.returned = false;
        }
        for d in domains.iter_mut() {
            d.clear_wkc();
        }
        for (n, f) in self.frames.iter_mut().enumerate() {
            if f.outstanding {
                self.counters.frames_lost += 1;
            }
            f.round_trip_ns = 0;
            let index = CYCLIC_INDEX | (self.tag << self.frame_bits) | n as u8;
            for &h in &f.headers {
                f.buf[h + 1] = index;
                let len = (u16::from_le_bytes([f.buf[h + 6], f.buf[h + 7]]) & 0x07FF) as usize;
                f.buf[h + HEADER_LEN + len..h + OVERHEAD + len].fill(0);
            }
            for s in &f.slots {
                let d = &domains[s.domain];
                let p = d.plans[s.plan];
                if p.command != Command::Lrd {
                    let src = &d.image()[p.offset..p.offset + p.len];
                    f.buf[s.at + HEADER_LEN..s.at + HEADER_LEN + s.len].copy_from_slice(src);
                }
            }
            for p in self.specials.iter().filter(|p| p.frame == n) {
                let data = &mut f.buf[p.at + HEADER_LEN..p.at + HEADER_LEN + p.len];
                if p.kind == Kind::DcWrite {
                    data.copy_from_slice(&master_time.to_le_bytes());
                } else if p.kind == Kind::DcSync {
                    data.copy_from_slice(&self.expected_reference.to_le_bytes());
                } else {
                    data.fill(0);
                }
            }
        }
    }

    /// The reference clock's time expected at the next send (ns since 2000): the FRMW of its
    /// time carries this out, so while the reference clock is away (unplugged, lost) the
    /// other SubDevices' control loops are fed a plausible time instead of 0.
    pub fn set_expected_reference_time(&mut self, t: u64) {
        self.expected_reference = t;
    }

    /// Frame `n` of this cycle, ready to transmit; marks it outstanding at `now`.
    pub fn frame(&mut self, n: usize, now: u64) -> &[u8] {
        let f = &mut self.frames[n];
        f.outstanding = true;
        f.sent_at = now;
        self.counters.frames_sent += 1;
        &f.buf[..f.len]
    }

    /// True if `frame` is a cyclic frame (first datagram index has bit 7).
    pub fn is_cyclic(frame: &[u8]) -> bool {
        let i = ETH_HEADER_LEN + ECAT_HEADER_LEN + 1;
        frame.len() > i && frame[i] & CYCLIC_INDEX != 0
    }

    /// Take a returned cyclic frame: copy inputs into the domains, record WKCs and the probe.
    /// Late, duplicated and corrupted frames are counted and dropped.
    pub fn handle_frame(&mut self, frame: &[u8], domains: &mut [Domain], now: u64) {
        let Ok(ecat) = parse_ethernet(frame) else {
            self.counters.frames_corrupted += 1;
            return;
        };
        let Some(Ok(first)) = ecat.datagrams().next() else {
            self.counters.frames_corrupted += 1;
            return;
        };
        let index = first.index();
        let n = (index & ((1 << self.frame_bits) - 1)) as usize;
        if n >= self.frames.len() || (index & !CYCLIC_INDEX) >> self.frame_bits != self.tag {
            self.counters.frames_late += 1;
            return;
        }
        let f = &mut self.frames[n];
        if !f.outstanding {
            self.counters.frames_duplicated += 1;
            return;
        }
        // The structure must be exactly the template's: same length and datagram headers.
        let body_len = ecat.datagrams_len();
        let tpl_len = f.headers.last().map(|&h| {
            let len = (u16::from_le_bytes([f.buf[h + 6], f.buf[h + 7]]) & 0x07FF) as usize;
            h + OVERHEAD + len - FrameBuilder::FIRST
        });
        let payload = &frame[ETH_HEADER_LEN..];
        let same = Some(body_len) == tpl_len
            && payload.len() >= ECAT_HEADER_LEN + body_len
            && f.headers.iter().all(|&h| {
                let o = h - ETH_HEADER_LEN;
                // Command, ADO and length must match; ADP too, except where SubDevices
                // increment it on the way (broadcast and auto-increment commands).
                let adp_moves = matches!(
                    Command::from_u8(f.buf[h]).map(|c| c.addressing()),
                    Some(Addressing::Broadcast | Addressing::AutoIncrement)
                );
                payload[o] == f.buf[h]
                    && payload[o + 4..o + 8] == f.buf[h + 4..h + 8]
                    && (adp_moves || payload[o + 2..o + 4] == f.buf[h + 2..h + 4])
            });
        if !same {
            self.counters.frames_corrupted += 1;
            return;
        }
        f.outstanding = false;
        f.round_trip_ns = now.saturating_sub(f.sent_at);
        self.counters.frames_received += 1;
        for s in &f.slots {
            let o = s.at - ETH_HEADER_LEN;
            let data = &payload[o + HEADER_LEN..o + HEADER_LEN + s.len];
            let wkc = u16::from_le_bytes([
                payload[o + HEADER_LEN + s.len],
                payload[o + HEADER_LEN + s.len + 1],
            ]);
            let d = &mut domains[s.domain];
            // Copy only the inputs part of what the datagram covers.
            d.take_returned(s.plan, data);
            d.set_wkc(s.plan, wkc);
        }
        for p in self.specials.iter_mut().filter(|p| p.frame == n) {
            let o = p.at - ETH_HEADER_LEN + HEADER_LEN;
            if p.kind == Kind::MailboxStatus {
                self.mailbox.copy_from_slice(&payload[o..o + p.len]);
                self.mailbox_returned = true;
                continue;
            }
            let mut v = [0u8; 8];
            let k = p.len.min(8);
            v[..k].copy_from_slice(&payload[o..o + k]);
            p.value = u64::from_le_bytes(v);
            p.wkc = u16::from_le_bytes([payload[o + p.len], payload[o + p.len + 1]]);
            p.returned = true;
            if let Kind::Fixed(Some(e)) = p.kind {
                if e != p.wkc {
                    self.counters.fixed_wkc_mismatches += 1;
                }
            }
        }
    }

    /// True if every frame of this cycle has returned.
    pub fn all_returned(&self) -> bool {
        self.frames.iter().all(|f| !f.outstanding)
    }
}

fn close(
    mut buf: Vec<u8>,
    slots: Vec<Slot>,
    headers: Vec<usize>,
    pos: usize,
    mac: [u8; 6],
) -> Template {
    // Write the Ethernet and EtherCAT headers and the padding once.
    buf[0..6].copy_from_slice(&ecat_wire::frame::BROADCAST_MAC);
    buf[6..12].copy_from_slice(&mac);
    buf[12..14].copy_from_slice(&ecat_wire::ETHERTYPE_ETHERCAT.to_be_bytes());
    let len = (pos - FrameBuilder::FIRST) as u16 | 0x1000;
    buf[14..16].copy_from_slice(&len.to_le_bytes());
    let end = pos.max(ecat_wire::frame::ETH_MIN_LEN);
    buf[pos..end].fill(0);
    Template {
        buf,
        len: end,
        slots,
        headers,
        outstanding: false,
        sent_at: 0,
        round_trip_ns: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Direction, EntryConfig, PdoConfig, SubDeviceConfig, SyncConfig};
    use crate::domain::{layout, DomainState};
    use crate::subdevice::{SiiSyncManager, SubDevice};

    fn setup(out_bytes: usize, subs: u16) -> Vec<Domain> {
        let s: Vec<SubDevice> = (0..subs)
            .map(|p| SubDevice {
                position: p,
                fmmu_count: 2,
                sync_managers: vec![
                    SiiSyncManager {
                        start: 0x1000,
                        kind: 3,
                        ..Default::default()
                    },
                    SiiSyncManager {
                        start: 0x1800,
                        kind: 4,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            })
            .collect();
        let c: Vec<SubDeviceConfig> = (0..subs)
            .map(|_| SubDeviceConfig {
                sync: vec![
                    SyncConfig {
                        index: 0,
                        direction: Direction::Output,
                        pdos: vec![PdoConfig {
                            index: 0x1600,
                            entries: vec![
                                EntryConfig {
                                    index: 0x7000,
                                    subindex: 1,
                                    bits: 8
                                };
                                out_bytes
                            ],
                        }],
                        domain: 0,
                    },
                    SyncConfig {
                        index: 1,
                        direction: Direction::Input,
                        pdos: vec![PdoConfig {
                            index: 0x1A00,
                            entries: vec![
                                EntryConfig {
                                    index: 0x6000,
                                    subindex: 1,
                                    bits: 8
                                };
                                2
                            ],
                        }],
                        domain: 0,
                    },
                ],
            })
            .collect();
        layout(&s, &c, 1, 0).unwrap().domains
    }

    /// Answer like a ring: each LRW datagram gets WKC `wkc`, inputs become 0xC0+i.
    fn ring(frame: &mut [u8], wkc: u16, al: u16) {
        let mut f = ecat_wire::EcatFrame::new_checked(&mut frame[14..]).unwrap();
        for d in f.datagrams_mut() {
            let mut d = d.unwrap();
            match d.command() {
                Some(Command::Brd) => {
                    d.data_mut().copy_from_slice(&al.to_le_bytes());
                    d.set_wkc(2);
                    d.set_adp(2); // every SubDevice increments ADP
                }
                _ => {
                    let base = d.logical_address() as usize;
                    for (i, b) in d.data_mut().iter_mut().enumerate() {
                        if base + i >= 2 {
                            *b = 0xC0u8.wrapping_add((base + i) as u8);
                        }
                    }
                    d.set_wkc(wkc);
                }
            }
        }
    }

    /// Templates with the AL probe and no DC.
    fn frames(doms: &[Domain]) -> CyclicFrames {
        CyclicFrames::new(
            doms,
            [0; 6],
            Extras {
                al_probe: true,
                ..Default::default()
            },
        )
        .unwrap()
    }

    #[test]
    fn round_trip_copies_inputs_not_outputs() {
        let mut doms = setup(1, 2);
        let mut c = frames(&doms);
        assert_eq!(c.frame_count(), 1);
        doms[0].outputs_mut().copy_from_slice(&[0x11, 0x22]);
        c.prepare(&mut doms, 0);
        let mut f = c.frame(0, 100).to_vec();
        assert_eq!(
            &f[16 + 10..16 + 12],
            &[0x11, 0x22],
            "outputs patched into the LRW"
        );
        // The application changes outputs while the frame is on the wire: must survive.
        doms[0].outputs_mut()[0] = 0x33;
        ring(&mut f, 6, 0x08);
        c.handle_frame(&f, &mut doms, 150);
        assert_eq!(doms[0].image(), &[0x33, 0x22, 0xC2, 0xC3, 0xC4, 0xC5]);
        assert_eq!(doms[0].process(), DomainState::Complete);
        assert_eq!(c.al_probe(), Some((0x08, 2)));
        assert_eq!(c.round_trip_ns(), 50);
        assert!(c.all_returned());
    }

    #[test]
    fn lost_late_duplicate_corrupt_are_counted() {
        let mut doms = setup(1, 2);
        let mut c = frames(&doms);
        c.prepare(&mut doms, 0);
        let mut old = c.frame(0, 0).to_vec();
        ring(&mut old, 6, 8);
        c.prepare(&mut doms, 0); // previous frame never came back
        assert_eq!(c.counters().frames_lost, 1);
        let mut f = c.frame(0, 0).to_vec();
        c.handle_frame(&old, &mut doms, 1);
        assert_eq!(c.counters().frames_late, 1);
        assert_eq!(doms[0].process(), DomainState::Zero);
        ring(&mut f, 6, 8);
        let mut bad = f.clone();
        bad[16] = 11; // LWR instead of LRW
        c.handle_frame(&bad, &mut doms, 1);
        assert_eq!(c.counters().frames_corrupted, 1);
        c.handle_frame(&f, &mut doms, 1);
        c.handle_frame(&f, &mut doms, 1);
        assert_eq!(c.counters().frames_duplicated, 1);
        assert_eq!(c.counters().frames_received, 1);
        c.handle_frame(&f[..20], &mut doms, 1);
        assert_eq!(c.counters().frames_corrupted, 2);
    }

    #[test]
    fn a_given_plan_keeps_frames_order_and_fixed_datagrams() {
        let mut doms = setup(1, 2);
        let nop = FixedDatagram {
            command: Command::Nop,
            address: 0x0900 << 16,
            len: 4,
            expected_wkc: Some(0),
        };
        let plan = [
            FrameItem::NewFrame,
            FrameItem::Fixed(nop),
            FrameItem::Domain { domain: 0, plan: 0 },
            FrameItem::NewFrame,
            FrameItem::Dc(None),
            FrameItem::AlProbe,
        ];
        let extras = Extras {
            al_probe: true,
            dc: None,
            mailbox_status: None,
        };
        let mut c = CyclicFrames::with_plan(&doms, [0; 6], extras, &plan).unwrap();
        assert_eq!(c.frame_count(), 2);
        c.prepare(&mut doms, 0);
        let mut f0 = c.frame(0, 0).to_vec();
        // NOP first, then the LRW, in the first frame; the probe alone in the second.
        assert_eq!((f0[16], f0[16 + 12 + 4]), (0, Command::Lrw as u8));
        let mut f1 = c.frame(1, 0).to_vec();
        assert_eq!(f1[16], Command::Brd as u8);
        ring(&mut f0, 6, 8); // answers the NOP with WKC 6: a mismatch
        ring(&mut f1, 6, 8);
        c.handle_frame(&f0, &mut doms, 1);
        c.handle_frame(&f1, &mut doms, 1);
        assert_eq!(c.counters().fixed_wkc_mismatches, 1);
        assert_eq!(c.al_probe(), Some((8, 2)));
        assert_eq!(doms[0].process(), DomainState::Complete);
    }

    #[test]
    fn a_reply_eight_cycles_late_is_late_not_current() {
        let mut doms = setup(1, 2);
        let mut c = frames(&doms);
        c.prepare(&mut doms, 0);
        let mut old = c.frame(0, 0).to_vec();
        ring(&mut old, 6, 8);
        for _ in 0..8 {
            c.prepare(&mut doms, 0);
        }
        let mut f = c.frame(0, 0).to_vec();
        c.handle_frame(&old, &mut doms, 1);
        assert_eq!(c.counters().frames_late, 1, "the stale reply is late");
        ring(&mut f, 6, 8);
        c.handle_frame(&f, &mut doms, 1);
        assert_eq!(
            c.counters().frames_received,
            1,
            "the current reply is taken"
        );
        assert_eq!(c.counters().frames_duplicated, 0);
        // The tag wraps after 128 cycles with one frame.
        assert_eq!(c.tag_mask(), 0x7F);
    }

    #[test]
    fn large_images_use_several_frames() {
        let mut doms = setup(700, 3); // 2100 + 6 bytes -> two datagrams, two frames
        let mut c = frames(&doms);
        assert_eq!(doms[0].plans.len(), 2);
        assert_eq!(c.frame_count(), 2);
        c.prepare(&mut doms, 0);
        for n in 0..2 {
            let mut f = c.frame(n, 0).to_vec();
            assert!(CyclicFrames::is_cyclic(&f));
            ring(&mut f, 3, 8);
            c.handle_frame(&f, &mut doms, 0);
        }
        assert!(c.all_returned());
        assert_eq!(doms[0].wkc(), 6);
    }
}
