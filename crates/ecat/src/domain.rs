//! Domains: process images in the logical address space, and how they travel.
//!
//! Layout (computed once at activation, [`layout`]): each domain's image holds all its outputs
//! first, then all its inputs, SubDevice by SubDevice in ring order, one region per process data
//! SyncManager, byte-aligned. Domains follow each other in the logical address space. Every
//! region gets an FMMU on its SubDevice (logical window → SM buffer).
//!
//! Transport: a domain is one LRW over its whole image, or, if any of its SubDevices cannot take
//! LRW, an LWR over the outputs and an LRD over the inputs. Anything longer than one datagram
//! (1486 bytes) is split; each datagram's expected working counter counts the SubDevices whose
//! regions it overlaps (LRW: +2 for outputs, +1 for inputs; LWR/LRD: +1).
//!
//! After each cycle the received WKCs give the domain state: zero, incomplete or complete.
//! A datagram may have *slack*: that much of its expected WKC may be missing and it still
//! counts as complete (the share of hot-connect group members not exchanging data, set by
//! [`crate::hotconnect`]).

use crate::config::{Direction, SubDeviceConfig};
use crate::error::{Error, Result};
use crate::subdevice::SubDevice;
use ecat_wire::datagram::MAX_DATA;
use ecat_wire::register::FmmuRepr;
use ecat_wire::Command;
use std::ops::Range;

/// One SyncManager's data in a domain image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// SubDevice position.
    pub position: u16,
    /// SyncManager index.
    pub sm: u8,
    /// Direction.
    pub direction: Direction,
    /// Offset in the domain image.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
}

impl Region {
    /// Byte range in the domain image.
    pub fn range(&self) -> Range<usize> {
        self.offset..self.offset + self.len
    }
}

/// One datagram that carries part of a domain every cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatagramPlan {
    /// LRW, LWR or LRD.
    pub command: Command,
    /// Logical address of its first byte.
    pub logical: u32,
    /// Offset of its first byte in the domain image.
    pub offset: usize,
    /// Length in bytes.
    pub len: usize,
    /// Expected working counter.
    pub expected_wkc: u16,
}

/// What the last cycle's working counters say about a domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DomainState {
    /// No SubDevice exchanged data (or the frame was lost).
    Zero,
    /// Some but not all expected exchanges happened.
    Incomplete,
    /// Every expected exchange happened.
    Complete,
}

impl DomainState {
    /// Lower-case name as IgH prints it.
    pub fn name(self) -> &'static str {
        match self {
            DomainState::Zero => "zero",
            DomainState::Incomplete => "incomplete",
            DomainState::Complete => "complete",
        }
    }
}

/// A process image and how it travels.
#[derive(Debug, Clone)]
pub struct Domain {
    /// Domain number.
    pub index: usize,
    /// Logical address of the image's first byte.
    pub logical_base: u32,
    /// Bytes of outputs (at the start of the image).
    pub outputs_len: usize,
    /// Bytes of inputs (after the outputs).
    pub inputs_len: usize,
    /// Regions, outputs first.
    pub regions: Vec<Region>,
    /// Datagrams per cycle.
    pub plans: Vec<DatagramPlan>,
    image: Vec<u8>,
    /// WKC received per plan in the last cycle (0 when lost).
    wkc: Vec<u16>,
    state: DomainState,
    /// Per plan: where its returned data goes in the image when not at its own offset (an
    /// LRW whose outputs and inputs share logical addresses, as ENI layouts do).
    rx_at: Vec<Option<usize>>,
    /// Outputs and inputs interleave ([`Domain::interleaved`]): returned data is taken back
    /// region by region, inputs only.
    interleaved: bool,
    /// Per plan: how much of its expected WKC may be missing (see the module notes).
    slack: Vec<u16>,
}

impl Domain {
    /// A domain with a layout decided elsewhere (e.g. an ENI file): `outputs_len` bytes of
    /// outputs then `inputs_len` bytes of inputs; each plan sends `image[offset..+len]`
    /// (except LRD) and its returned data goes to `rx_at[i]` when given, else to the inputs
    /// part of its own span. Plans must lie inside the image.
    pub fn from_parts(
        index: usize,
        logical_base: u32,
        outputs_len: usize,
        inputs_len: usize,
        regions: Vec<Region>,
        plans: Vec<DatagramPlan>,
        rx_at: Vec<Option<usize>>,
    ) -> Result<Domain> {
        let size = outputs_len + inputs_len;
        for (i, p) in plans.iter().enumerate() {
            let rx = rx_at.get(i).copied().flatten().unwrap_or(p.offset);
            if p.offset + p.len > size || rx + p.len > size {
                return Err(Error::Invalid(format!(
                    "datagram {i} of domain {index} ({:?} 0x{:08x}, {} bytes) does not fit its {size}-byte image",
                    p.command, p.logical, p.len
                )));
            }
        }
        let mut rx_at = rx_at;
        rx_at.resize(plans.len(), None);
        Ok(Domain {
            index,
            logical_base,
            outputs_len,
            inputs_len,
            regions,
            wkc: vec![0; plans.len()],
            slack: vec![0; plans.len()],
            plans,
            image: vec![0; size],
            state: DomainState::Zero,
            rx_at,
            interleaved: false,
        })
    }

    /// A domain whose regions lie at offsets decided elsewhere, outputs and inputs
    /// interleaved (an IgH application's registration order, see the C API): LRW spans over
    /// the whole image, and only the input regions take the returned data, so outputs written
    /// since the send are kept. Every SubDevice in it must take LRW.
    pub fn interleaved(index: usize, logical_base: u32, regions: Vec<Region>) -> Domain {
        let size = regions.iter().map(|r| r.offset + r.len).max().unwrap_or(0);
        let outputs_len = regions
            .iter()
            .filter(|r| r.direction == Direction::Output)
            .map(|r| r.len)
            .sum();
        let plans = plan(&regions, logical_base, outputs_len, size, true);
        Domain {
            index,
            logical_base,
            outputs_len,
            inputs_len: size - outputs_len,
            wkc: vec![0; plans.len()],
            slack: vec![0; plans.len()],
            regions,
            plans,
            image: vec![0; size],
            state: DomainState::Zero,
            rx_at: Vec::new(),
            interleaved: true,
        }
    }

    /// Take the data plan `plan` brought back into the image (its inputs; see
    /// [`Domain::input_copy`]). Allocates nothing.
    pub fn take_returned(&mut self, plan: usize, data: &[u8]) {
        if !self.interleaved {
            if let Some((to, from)) = self.input_copy(plan) {
                if let (Some(to), Some(from)) = (self.image.get_mut(to), data.get(from)) {
                    to.copy_from_slice(from);
                }
            }
            return;
        }
        let Some(p) = self.plans.get(plan) else {
            return;
        };
        let span = p.offset..p.offset + p.len.min(data.len());
        for r in self
            .regions
            .iter()
            .filter(|r| r.direction == Direction::Input)
        {
            let (from, to) = (r.offset.max(span.start), (r.offset + r.len).min(span.end));
            if from < to {
                self.image[from..to].copy_from_slice(&data[from - span.start..to - span.start]);
            }
        }
    }

    /// Where the data plan `plan` brings back goes: (range in the image, range in the
    /// datagram's data); `None` when nothing is copied back.
    pub fn input_copy(&self, plan: usize) -> Option<(Range<usize>, Range<usize>)> {
        let p = self.plans.get(plan)?;
        if let Some(at) = self.rx_at.get(plan).copied().flatten() {
            return Some((at..at + p.len, 0..p.len));
        }
        let from = p.offset.max(self.outputs_len);
        let to = p.offset + p.len;
        (from < to).then(|| (from..to, from - p.offset..p.len))
    }

    /// The whole image (outputs, then inputs).
    pub fn image(&self) -> &[u8] {
        &self.image
    }
    /// The whole image, writable (only the outputs part is sent).
    pub fn image_mut(&mut self) -> &mut [u8] {
        &mut self.image
    }
    /// Outputs part.
    pub fn outputs_mut(&mut self) -> &mut [u8] {
        &mut self.image[..self.outputs_len]
    }
    /// Inputs part.
    pub fn inputs(&self) -> &[u8] {
        &self.image[self.outputs_len..]
    }
    /// Size of the image.
    pub fn size(&self) -> usize {
        self.image.len()
    }
    /// The region of a SubDevice's data in one direction (its first SM of that direction).
    pub fn region(&self, position: u16, direction: Direction) -> Option<Range<usize>> {
        self.regions
            .iter()
            .find(|r| r.position == position && r.direction == direction)
            .map(Region::range)
    }
    /// The region of SyncManager `sm` of the SubDevice at `position`.
    pub fn region_of(&self, position: u16, sm: u8) -> Option<&Region> {
        self.regions
            .iter()
            .find(|r| r.position == position && r.sm == sm)
    }

    /// Expected WKC summed over the plans.
    pub fn expected_wkc(&self) -> u32 {
        self.plans.iter().map(|p| p.expected_wkc as u32).sum()
    }
    /// Replace the datagrams (same image; see [`crate::cyclic_pack`]); received WKCs reset.
    /// A domain whose datagrams return their data elsewhere than their span keeps its own.
    pub(crate) fn set_plans(&mut self, plans: Vec<DatagramPlan>) {
        if self.rx_at.iter().any(Option::is_some) {
            return;
        }
        self.wkc = vec![0; plans.len()];
        self.rx_at = Vec::new();
        self.plans = plans;
    }

    /// WKC received in the last cycle, summed over the plans.
    pub fn wkc(&self) -> u32 {
        self.wkc.iter().map(|&w| w as u32).sum()
    }
    /// State after the last [`Domain::process`].
    pub fn state(&self) -> DomainState {
        self.state
    }
    /// Record the WKC of plan `i` (called by the cyclic path when a frame returns).
    pub fn set_wkc(&mut self, i: usize, wkc: u16) {
        if let Some(w) = self.wkc.get_mut(i) {
            *w = wkc;
        }
    }
    /// WKC of plan `i` received in the last cycle.
    pub fn plan_wkc(&self, i: usize) -> u16 {
        self.wkc.get(i).copied().unwrap_or(0)
    }
    /// Let plan `i` count as complete with up to `slack` of its expected WKC missing.
    pub fn set_slack(&mut self, i: usize, slack: u16) {
        if let Some(s) = self.slack.get_mut(i) {
            *s = slack;
        }
    }
    /// Slack of plan `i` (see [`Domain::set_slack`]).
    pub fn slack(&self, i: usize) -> u16 {
        self.slack.get(i).copied().unwrap_or(0)
    }
    /// The share of plan `i`'s expected WKC that the SubDevice at `position` gives.
    pub fn member_wkc(&self, i: usize, position: u16) -> u16 {
        self.plans.get(i).map_or(0, |p| {
            position_wkc(
                &self.regions,
                p.command,
                p.offset..p.offset + p.len,
                position,
            )
        })
    }
    /// Forget the last WKCs (called before each send).
    pub fn clear_wkc(&mut self) {
        self.wkc.iter_mut().for_each(|w| *w = 0);
    }
    /// Evaluate the received WKCs into the domain state (IgH: `ecrt_domain_process`).
    pub fn process(&mut self) -> DomainState {
        self.state = self.evaluate();
        self.state
    }

    /// The state the WKCs received so far give, without recording it.
    pub fn evaluate(&self) -> DomainState {
        let exact = self
            .plans
            .iter()
            .zip(&self.wkc)
            .zip(&self.slack)
            .all(|((p, &w), &s)| w <= p.expected_wkc && w.saturating_add(s) >= p.expected_wkc);
        if exact {
            DomainState::Complete
        } else if self.wkc() == 0 {
            DomainState::Zero
        } else {
            DomainState::Incomplete
        }
    }
}

/// The FMMU and SM programming for one SubDevice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubDeviceMapping {
    /// FMMU register blocks in FMMU order.
    pub fmmus: Vec<FmmuRepr>,
}

/// Everything the layout decides.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Domains in order.
    pub domains: Vec<Domain>,
    /// Per SubDevice (by position): its FMMUs.
    pub mappings: Vec<SubDeviceMapping>,
    /// The cyclic frames, when the layout gives them (e.g. an ENI's); `None`: first fit.
    pub frames: Option<Vec<crate::cyclic::FrameItem>>,
}

/// Lay out `domains` domains over the SubDevices with their configurations (one per
/// SubDevice, same order), starting at logical address `base`.
pub fn layout(
    subs: &[SubDevice],
    configs: &[SubDeviceConfig],
    domains: usize,
    base: u32,
) -> Result<Layout> {
    let mut mappings = vec![SubDeviceMapping::default(); subs.len()];
    let mut out = Vec::with_capacity(domains);
    let mut logical = base;
    for d in 0..domains {
        let mut regions = Vec::new();
        let mut offset = 0usize;
        for dir in [Direction::Output, Direction::Input] {
            for (s, c) in subs.iter().zip(configs) {
                for sync in c
                    .sync
                    .iter()
                    .filter(|x| x.domain == d && x.direction == dir)
                {
                    let len = sync.bytes() as usize;
                    if len == 0 {
                        continue;
                    }
                    let phys = SubDeviceConfig::sm_register(s, sync).start;
                    let m = &mut mappings[s.position as usize];
                    if m.fmmus.len() >= s.fmmu_count.max(1) as usize {
                        return Err(Error::Invalid(format!(
                            "{} needs more than its {} FMMUs for this process data layout",
                            s.who(),
                            s.fmmu_count
                        )));
                    }
                    m.fmmus.push(FmmuRepr {
                        logical_start: logical + offset as u32,
                        length: len as u16,
                        logical_start_bit: 0,
                        logical_stop_bit: 7,
                        physical_start: phys,
                        physical_start_bit: 0,
                        kind: match dir {
                            Direction::Output => FmmuRepr::WRITE,
                            Direction::Input => FmmuRepr::READ,
                        },
                        enable: 1,
                    });
                    regions.push(Region {
                        position: s.position,
                        sm: sync.index,
                        direction: dir,
                        offset,
                        len,
                    });
                    offset += len;
                }
            }
        }
        let outputs_len = regions
            .iter()
            .filter(|r| r.direction == Direction::Output)
            .map(|r| r.len)
            .sum();
        let lrw = !regions.iter().any(|r| subs[r.position as usize].no_lrw());
        let plans = plan(&regions, logical, outputs_len, offset, lrw);
        out.push(Domain {
            index: d,
            logical_base: logical,
            outputs_len,
            inputs_len: offset - outputs_len,
            wkc: vec![0; plans.len()],
            slack: vec![0; plans.len()],
            regions,
            plans,
            image: vec![0; offset],
            state: DomainState::Zero,
            rx_at: Vec::new(),
            interleaved: false,
        });
        logical += offset as u32;
    }
    Ok(Layout {
        domains: out,
        mappings,
        frames: None,
    })
}

/// Split `[from, to)` of the image into datagrams of `command` with expected WKCs.
fn plan(
    regions: &[Region],
    logical: u32,
    outputs_len: usize,
    total: usize,
    lrw: bool,
) -> Vec<DatagramPlan> {
    let mut plans = Vec::new();
    let spans: Vec<(Command, usize, usize)> = if lrw {
        vec![(Command::Lrw, 0, total)]
    } else {
        vec![
            (Command::Lwr, 0, outputs_len),
            (Command::Lrd, outputs_len, total),
        ]
    };
    for (cmd, from, to) in spans {
        let mut start = from;
        while start < to {
            let end = (start + MAX_DATA).min(to);
            plans.push(DatagramPlan {
                command: cmd,
                logical: logical + start as u32,
                offset: start,
                len: end - start,
                expected_wkc: expected_wkc(regions, cmd, start..end),
            });
            start = end;
        }
    }
    plans
}

/// Expected WKC of a logical datagram over `span` of the image.
pub(crate) fn expected_wkc(regions: &[Region], cmd: Command, span: Range<usize>) -> u16 {
    let mut positions: Vec<u16> = regions.iter().map(|r| r.position).collect();
    positions.sort_unstable();
    positions.dedup();
    positions
        .iter()
        .map(|&p| position_wkc(regions, cmd, span.clone(), p))
        .sum()
}

/// The share of the SubDevice at `pos` in the WKC of a logical datagram over `span`.
fn position_wkc(regions: &[Region], cmd: Command, span: Range<usize>, pos: u16) -> u16 {
    let overlaps = |dir: Direction| {
        regions.iter().any(|r| {
            r.position == pos
                && r.direction == dir
                && r.offset < span.end
                && span.start < r.offset + r.len
        })
    };
    let (o, i) = (overlaps(Direction::Output), overlaps(Direction::Input));
    match cmd {
        Command::Lrw => 2 * u16::from(o) + u16::from(i),
        Command::Lwr => u16::from(o),
        _ => u16::from(i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{EntryConfig, PdoConfig, SyncConfig};
    use crate::subdevice::SiiSyncManager;

    fn sub(pos: u16, no_lrw: bool) -> SubDevice {
        SubDevice {
            position: pos,
            fmmu_count: 3,
            general_flags: if no_lrw { 0x02 } else { 0 },
            sync_managers: vec![
                SiiSyncManager {
                    start: 0x0F00,
                    control: 0x44,
                    kind: 3,
                    ..Default::default()
                },
                SiiSyncManager {
                    start: 0x1000,
                    control: 0x00,
                    kind: 4,
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
    }

    fn cfg(out_bits: u8, in_bits: u8) -> SubDeviceConfig {
        let mk = |index, direction, bits| SyncConfig {
            index,
            direction,
            pdos: vec![PdoConfig {
                index: 0x1600,
                entries: vec![EntryConfig {
                    index: 0x7000,
                    subindex: 1,
                    bits,
                }],
            }],
            domain: 0,
        };
        let mut sync = Vec::new();
        if out_bits > 0 {
            sync.push(mk(0, Direction::Output, out_bits));
        }
        if in_bits > 0 {
            sync.push(mk(1, Direction::Input, in_bits));
        }
        SubDeviceConfig { sync }
    }

    #[test]
    fn outputs_then_inputs_and_wkc() {
        // Like seed 003: coupler (nothing), digital out, digital in, analog out (2x16), analog in.
        let subs: Vec<_> = (0..5).map(|p| sub(p, false)).collect();
        let cfgs = vec![cfg(0, 0), cfg(8, 0), cfg(0, 8), cfg(32, 0), cfg(0, 32)];
        let l = layout(&subs, &cfgs, 1, 0x1_0000).unwrap();
        let d = &l.domains[0];
        assert_eq!((d.outputs_len, d.inputs_len), (5, 5));
        assert_eq!(d.region(1, Direction::Output), Some(0..1));
        assert_eq!(d.region(3, Direction::Output), Some(1..5));
        assert_eq!(d.region(2, Direction::Input), Some(5..6));
        assert_eq!(d.plans.len(), 1);
        assert_eq!(d.plans[0].command, Command::Lrw);
        assert_eq!(d.plans[0].expected_wkc, 2 + 1 + 2 + 1);
        assert!(l.mappings[0].fmmus.is_empty());
        let f = l.mappings[4].fmmus[0];
        assert_eq!(
            (f.logical_start, f.length, f.kind, f.physical_start),
            (0x1_0006, 4, FmmuRepr::READ, 0x1000)
        );
    }

    #[test]
    fn subdevice_with_outputs_and_inputs_counts_three_once() {
        let subs = vec![sub(0, false), sub(1, false)];
        let l = layout(&subs, &[cfg(8, 8), cfg(8, 8)], 1, 0).unwrap();
        assert_eq!(l.domains[0].plans[0].expected_wkc, 6);
    }

    #[test]
    fn no_lrw_uses_lwr_and_lrd() {
        let subs = vec![sub(0, true), sub(1, false)];
        let l = layout(&subs, &[cfg(8, 8), cfg(0, 16)], 1, 0).unwrap();
        let p = &l.domains[0].plans;
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].command, p[0].len, p[0].expected_wkc),
            (Command::Lwr, 1, 1)
        );
        assert_eq!(
            (p[1].command, p[1].offset, p[1].len, p[1].expected_wkc),
            (Command::Lrd, 1, 3, 2)
        );
    }

    #[test]
    fn big_images_split_with_per_datagram_wkc() {
        let subs: Vec<_> = (0..4).map(|p| sub(p, false)).collect();
        // 4 SubDevices x 250 bytes of outputs (split into PDOs of 250 x 8 bits).
        let big = |_: u16| SubDeviceConfig {
            sync: vec![SyncConfig {
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
                        500
                    ],
                }],
                domain: 0,
            }],
        };
        let cfgs: Vec<_> = (0..4).map(big).collect();
        let l = layout(&subs, &cfgs, 1, 0).unwrap();
        let d = &l.domains[0];
        assert_eq!(d.size(), 2000);
        assert_eq!(d.plans.len(), 2);
        assert_eq!(d.plans[0].len, 1486);
        // First datagram covers SubDevices 0,1,2 (bytes 0..1486), second 2 and 3.
        assert_eq!(d.plans[0].expected_wkc, 6);
        assert_eq!(d.plans[1].expected_wkc, 4);
    }

    #[test]
    fn domain_state() {
        let subs = vec![sub(0, false), sub(1, false)];
        let mut l = layout(&subs, &[cfg(8, 0), cfg(0, 8)], 1, 0).unwrap();
        let d = &mut l.domains[0];
        assert_eq!(d.process(), DomainState::Zero);
        d.set_wkc(0, 2);
        assert_eq!(d.process(), DomainState::Incomplete);
        d.set_wkc(0, 3);
        assert_eq!(d.process(), DomainState::Complete);
        d.clear_wkc();
        assert_eq!(d.process(), DomainState::Zero);
    }

    #[test]
    fn too_many_fmmus_is_an_error() {
        let mut s = sub(0, false);
        s.fmmu_count = 1;
        let e = layout(&[s], &[cfg(8, 8)], 1, 0).unwrap_err().to_string();
        assert!(e.contains("FMMUs"), "{e}");
    }

    #[test]
    fn interleaved_domain_takes_back_inputs_only() {
        let r = |position, direction, offset, len| Region {
            position,
            sm: 2,
            direction,
            offset,
            len,
        };
        let regions = vec![
            r(1, Direction::Output, 0, 1),
            r(2, Direction::Input, 1, 1),
            r(3, Direction::Output, 2, 2),
            r(4, Direction::Input, 4, 2),
        ];
        let mut d = Domain::interleaved(0, 0x100, regions);
        assert_eq!(d.size(), 6);
        assert_eq!(d.plans.len(), 1);
        assert_eq!(d.plans[0].command, Command::Lrw);
        assert_eq!(d.expected_wkc(), 2 + 1 + 2 + 1);
        d.image_mut().copy_from_slice(&[0xa0, 0, 0xb0, 0xb1, 0, 0]);
        d.take_returned(0, &[9, 8, 7, 6, 5, 4]);
        assert_eq!(d.image(), &[0xa0, 8, 0xb0, 0xb1, 5, 4], "outputs kept");
        d.take_returned(0, &[1, 2]);
        assert_eq!(d.image(), &[0xa0, 2, 0xb0, 0xb1, 5, 4], "a short datagram");
        d.take_returned(7, &[1, 2, 3, 4, 5, 6]);
    }
}
