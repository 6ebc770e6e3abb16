//! The SubDevices, how they are wired, and the path a frame takes through them.
//!
//! The MainDevice's frame enters port 0 of the first ESC. Every ESC executes the datagrams as
//! the frame passes its processing unit (entering port 0), then sends the frame out of its
//! other ports in processing order 3 → 1 → 2 (reference §1.5); a port with a link leads to a
//! SubDevice and the frame comes back through it, a port without link is closed and the frame
//! loops past it inside the ESC. So the ESCs process a frame depth-first through ports
//! 3, 1, 2, and that is also their auto-increment order: position `k` here (for
//! [`Network::subdevice`] and every other `position`) is that order. A line is the special
//! case where every SubDevice hangs on port 1 of the one before; junctions (EK1100 port 2,
//! EK1122 ports 2/3) make branches. Passive terminals (EL9011, …) are listed in the network
//! but are not on the frame path.
//!
//! **Time.** `now_ns` is the network's true time at which the frame leaves the MainDevice. It
//! reaches each ESC port at a true time accumulated hop by hop along its real path: each
//! cable adds the `cable_ns` of the SubDevice it leads to (the first SubDevice's cable comes
//! from the MainDevice), and inside an ESC the frame takes `forward_ns` from one port to the
//! next port with a link (port 0 included on the way back), the same in processing and
//! forwarding direction; closed ports add nothing. The receive time is latched half-way
//! (`forward_ns / 2` after the frame reaches the port), so that the one-way delay between two
//! ESCs' latch points is the same out and back even when their forwarding delays differ:
//! the MainDevice's delay measurement (§8.3, processing/forwarding difference ignored) is
//! then exact up to rounding (½ ns per hop when forwarding delays are odd) and the clocks'
//! drift during the round trip. [`Network::frame_passages`] gives the true times for tests.
//! Defaults ([`DEFAULT_CABLE_NS`] …) are in [`Wiring`].
//!
//! Before any ESC sees the frame it is checked as a whole: EtherType 0x88A4, EtherCAT header
//! type 1, a length that fits, and a datagram chain that ends inside that length. Anything
//! else is dropped and counted (a malformed EtherCAT frame also counts in the first ESC's
//! invalid-frame counter 0x0300, as the receiving port would).
//!
//! Faults ([`crate::faults`]) decide each frame's fate: lost or corrupted at some hop, delayed,
//! duplicated. Unplugged SubDevices are off the frame path (bypassed: the frame passes on to
//! what hangs behind them without delay), so the auto-increment positions behind them shift;
//! the test API (`subdevice`, `outputs`, `set_inputs`, `unplug`, …) keeps addressing ESCs by
//! their fixed position with everything plugged.
//!
//! An ESC's PDI side (its firmware) normally reacts to a frame before the next ESC sees it;
//! in deferred mode (`crate::deferred`, what `ecat sim` runs) the reaction waits until the
//! ESC is next concerned or the network settles, so that frames go back first.

use crate::esc::route::{FrameIndex, Route};
use crate::esc::{DcClock, Esc, FramePassage};
use crate::faults::{DropReason, FaultEvent, Faults, FrameFate, Rng, Roll};
use crate::ring::RingPort;
use crate::walk::{Pending, Walk};
use ecat_wire::frame::{EcatFrame, EthernetFrame, ECAT_HEADER_LEN, ETHERTYPE_ETHERCAT};
use ecat_wire::Error as WireError;
use std::ops::Range;

/// Frame statistics of a network.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimCounters {
    /// Frames handed to [`Network::process_frame`].
    pub frames: u64,
    /// Frames returned to the MainDevice.
    pub returned: u64,
    /// Dropped: not EtherType 0x88A4 (or shorter than an Ethernet header).
    pub dropped_not_ethercat: u64,
    /// Dropped: EtherCAT header type is not 1.
    pub dropped_wrong_type: u64,
    /// Dropped: length fields do not fit or the datagram chain is broken.
    pub dropped_malformed: u64,
    /// Dropped: no ESC on the line to return the frame.
    pub dropped_no_subdevice: u64,
    /// Datagrams processed (counted once per frame, not per ESC).
    pub datagrams: u64,
    /// Dropped: lost on the wire (fault).
    pub dropped_lost: u64,
    /// Dropped: corrupted on the wire, bad FCS (fault).
    pub dropped_corrupted: u64,
    /// Returned corrupted (a bit flipped) because [`Faults::deliver_corrupted`] is set.
    pub corrupted_delivered: u64,
    /// Returned frames marked to arrive twice.
    pub duplicated: u64,
}

/// How a validated frame starts its walk ([`Network::begin`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Start {
    /// Offset of the EtherCAT header in the frame.
    off: usize,
    /// What the faults do to the frame.
    roll: Roll,
    /// Hop at which the frame is lost or corrupted (else the number of hops).
    pub stop: usize,
    /// PDI reactions wait (see `crate::deferred`).
    pub defer: bool,
    /// The frame entered on the ring's backup port.
    backup: bool,
}

impl Start {
    /// The walk of `frame`, sent at `now_ns`, before the first ESC.
    pub(crate) fn walk<'a>(
        &self,
        frame: &'a mut [u8],
        index: &'a FrameIndex,
        now_ns: u64,
    ) -> Walk<'a> {
        Walk {
            frame,
            index,
            now_ns,
            stop: self.stop,
            defer: self.defer,
            hop: 0,
            passed_irq: 0,
        }
    }
}

/// One entry of the network (file order).
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub esc: Option<Esc>,
    pub name: String,
    pub order: String,
    /// Node index and port of the ESC this one hangs on (`None`: the first ESC, or the
    /// default: port 1 of the ESC entry before).
    pub parent: Option<(usize, usize)>,
    pub cable_ns: Option<u64>,
    pub forward_ns: Option<u64>,
    pub drift_ppm: Option<f64>,
    pub start_offset_ns: Option<u64>,
}

impl Node {
    pub(crate) fn new(esc: Option<Esc>, name: String, order: String) -> Node {
        Node {
            esc,
            name,
            order,
            parent: None,
            cable_ns: None,
            forward_ns: None,
            drift_ppm: None,
            start_offset_ns: None,
        }
    }
}

/// Default cable delay (ns) of an Ethernet cable (a port 0 or parent port with MII): about
/// 2 m at 5 ns/m. Also the cable from the MainDevice to the first SubDevice.
pub const DEFAULT_CABLE_NS: u64 = 10;
/// Default delay (ns) between two E-Bus terminals side by side (contacts only).
pub const DEFAULT_EBUS_CABLE_NS: u64 = 2;
/// Default forwarding delay (ns) of an ESC whose port 0 is E-Bus (terminals, EK1122): in
/// the range the EL2828/EL2889 of `replay-dc.pcapng` show (≈ 150 ns per hop).
pub const DEFAULT_EBUS_FORWARD_NS: u64 = 150;
/// Default forwarding delay (ns) of an ESC whose port 0 is MII (EK1100, drives): PHYs add
/// their receive and transmit latency.
pub const DEFAULT_MII_FORWARD_NS: u64 = 250;
/// Default range of random drifts (± ppm).
pub const DEFAULT_DRIFT_PPM: f64 = 100.0;

/// How one ESC is wired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wiring {
    /// Position and port of the ESC this one hangs on; `None` for the first.
    pub parent: Option<(usize, usize)>,
    /// Cable delay (ns) from the parent's port (or the MainDevice) to port 0, each way.
    pub cable_ns: u64,
    /// Forwarding delay (ns) of this ESC from one port to the next, in both directions.
    pub forward_ns: u64,
}

/// What a network file or preset line holds, for listings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubDeviceSummary {
    /// Index in wiring order, passive terminals included.
    pub position: usize,
    /// Position as the MainDevice counts it (auto-increment), `None` for passive terminals.
    pub bus_position: Option<usize>,
    /// Name (from the network file, else the SII device name).
    pub name: String,
    /// Order number / type, e.g. `EL2008`.
    pub order: String,
    /// Vendor ID (0 for passive terminals).
    pub vendor: u32,
    /// Product code.
    pub product: u32,
    /// Revision number.
    pub revision: u32,
    /// Serial number.
    pub serial: u32,
    /// Configured station alias loaded from the SII.
    pub alias: u16,
    /// A terminal without ESC.
    pub passive: bool,
}

/// The virtual EtherCAT network: SubDevices in wiring order.
#[derive(Debug, Clone)]
pub struct Network {
    pub(crate) nodes: Vec<Node>,
    /// Indices into `nodes` of the ESCs, in wiring order.
    pub(crate) bus: Vec<usize>,
    /// Per ESC (same order as `bus`): on the frame path.
    pub(crate) plugged: Vec<bool>,
    pub(crate) counters: SimCounters,
    pub(crate) faults: Faults,
    pub(crate) rng: Rng,
    /// Scheduled events, sorted by time.
    pub(crate) events: Vec<FaultEvent>,
    /// Per ESC (same order as `bus`): how it is wired.
    pub(crate) wiring: Vec<Wiring>,
    /// Per ESC: the ESC on each port.
    pub(crate) children: Vec<[Option<usize>; 4]>,
    /// Reused per frame (processing a frame allocates nothing).
    index_buf: FrameIndex,
    /// Per ESC: where a frame leaving at true time 0 passes it (`None`: not reached), for
    /// the plugging in `rel_plugged`; a frame leaving at `t` passes `t` later.
    pub(crate) rel_passages: Vec<Option<FramePassage>>,
    rel_plugged: Vec<bool>,
    /// Per ESC: its summary for passing it untouched (see `esc::route`); recomputed after
    /// every frame that ran it, and all of them after any outside access (`routes_dirty`).
    pub(crate) routes: Vec<Route>,
    routes_dirty: bool,
    /// Run the PDI side after frames lazily (see [`Network::set_deferred_pdi`]).
    pub(crate) defer_pdi: bool,
    /// Per ESC: the time of the frame whose PDI reaction is still to run (deferred mode).
    pub(crate) pdi_late: Vec<Option<u64>>,
    /// How many of `pdi_late` are set.
    pub(crate) pdi_late_count: usize,
    /// Ring closure and cut cable (`crate::ring`).
    pub(crate) ring: crate::ring::Ring,
}

impl Network {
    /// Build a network from its entries (file order); `dc_seed` draws the clocks not given.
    pub(crate) fn from_nodes(nodes: Vec<Node>, dc_seed: u64) -> Network {
        let escs: Vec<usize> = (0..nodes.len())
            .filter(|&i| nodes[i].esc.is_some())
            .collect();
        // Children per node and port; defaults: port 1 (else the first free one in processing
        // order) of the ESC entry before.
        let mut kids: Vec<[Option<usize>; 4]> = vec![[None; 4]; nodes.len()];
        let mut parent_of: Vec<Option<(usize, usize)>> = vec![None; nodes.len()];
        for (j, &i) in escs.iter().enumerate().skip(1) {
            let want = nodes[i].parent.or_else(|| {
                let prev = escs[j - 1];
                let esc = nodes[prev].esc.as_ref()?;
                [1, 3, 2]
                    .into_iter()
                    .find(|&p| esc.port_implemented(p) && kids[prev][p].is_none())
                    .map(|p| (prev, p))
            });
            if let Some((p, port)) = want {
                if port < 4 && kids[p][port].is_none() && nodes[p].esc.is_some() && p < i {
                    kids[p][port] = Some(i);
                    parent_of[i] = Some((p, port));
                }
            }
        }
        // Depth-first through ports 3, 1, 2: the auto-increment order.
        let mut bus = Vec::with_capacity(escs.len());
        if let Some(&root) = escs.first() {
            let mut stack = vec![root];
            while let Some(i) = stack.pop() {
                bus.push(i);
                for p in [2, 1, 3] {
                    if let Some(c) = kids[i][p] {
                        stack.push(c);
                    }
                }
            }
        }
        // ESCs without a valid place hang nowhere (never on the frame path).
        for &i in &escs {
            if !bus.contains(&i) {
                bus.push(i);
            }
        }
        let pos_of = |i: usize| bus.iter().position(|&b| b == i);
        let mut rng = Rng::new(dc_seed ^ 0x0DC0_FFEE);
        let mut wiring = Vec::with_capacity(bus.len());
        let mut children = Vec::with_capacity(bus.len());
        let mut clocks = Vec::with_capacity(bus.len());
        for &i in &bus {
            let n = &nodes[i];
            let esc = n.esc.as_ref().expect("bus entries have an ESC");
            let mii0 = esc.chip().port_descriptor & 3 == 3;
            let parent = parent_of[i].and_then(|(p, port)| Some((pos_of(p)?, port)));
            let parent_mii = parent_of[i].is_some_and(|(p, port)| {
                nodes[p]
                    .esc
                    .as_ref()
                    .is_some_and(|e| (e.chip().port_descriptor >> (2 * port)) & 3 == 3)
            });
            let default_cable = if parent_of[i].is_none() || mii0 || parent_mii {
                DEFAULT_CABLE_NS
            } else {
                DEFAULT_EBUS_CABLE_NS
            };
            wiring.push(Wiring {
                parent,
                cable_ns: n.cable_ns.unwrap_or(default_cable),
                forward_ns: n.forward_ns.unwrap_or(if mii0 {
                    DEFAULT_MII_FORWARD_NS
                } else {
                    DEFAULT_EBUS_FORWARD_NS
                }),
            });
            children.push(kids[i].map(|c| c.and_then(pos_of)));
            let drift = (rng.unit() * 2.0 - 1.0) * DEFAULT_DRIFT_PPM;
            let start = rng.next_u64() & 0xFFFF_FFFF;
            clocks.push(DcClock {
                drift_ppm: n.drift_ppm.unwrap_or(drift),
                start_offset_ns: n.start_offset_ns.unwrap_or(start),
                t0_ns: 0,
            });
        }
        let mut net = Network {
            plugged: vec![true; bus.len()],
            nodes,
            bus,
            counters: SimCounters::default(),
            faults: Faults::default(),
            rng: Rng::new(0),
            events: Vec::new(),
            wiring,
            children,
            index_buf: FrameIndex::default(),
            rel_passages: Vec::new(),
            rel_plugged: Vec::new(),
            routes: Vec::new(),
            routes_dirty: true,
            defer_pdi: false,
            pdi_late: Vec::new(),
            pdi_late_count: 0,
            ring: Default::default(),
        };
        for (k, c) in clocks.into_iter().enumerate() {
            if let Some(e) = net.subdevice_mut(k) {
                e.set_dc_clock(c);
            }
        }
        net.refresh_links();
        net
    }

    /// Per ESC: it or something behind it is on the frame path.
    fn live(&self) -> Vec<bool> {
        let mut live = Vec::new();
        self.live_into(&mut live);
        live
    }

    fn live_into(&self, live: &mut Vec<bool>) {
        live.clear();
        live.extend_from_slice(&self.plugged);
        // Children come after their parent in `bus`.
        for k in (0..self.bus.len()).rev() {
            if self.children[k].iter().flatten().any(|&c| live[c]) {
                live[k] = true;
            }
        }
    }

    /// Tell every ESC which of its ports lead to a plugged SubDevice.
    pub(crate) fn refresh_links(&mut self) {
        let live = self.live();
        for k in 0..self.bus.len() {
            let mut links = self.children[k].map(|c| c.is_some_and(|c| live[c]));
            self.ring_links(k, &mut links);
            if let Some(esc) = self.subdevice_mut(k) {
                esc.set_port_links(links);
            }
        }
    }

    /// How the ESC at `position` is wired.
    pub fn wiring(&self, position: usize) -> Option<Wiring> {
        self.wiring.get(position).copied()
    }

    /// Where a frame leaving the MainDevice at true time `now_ns` passes each ESC (true
    /// times), per position; `None` for ESCs it does not reach (unplugged, unattached).
    /// Propagation delay of ESC `k` from the reference `r`: `epu[k] − epu[r]`.
    pub fn frame_passages(&self, now_ns: u64) -> Vec<Option<FramePassage>> {
        let (mut live, mut out) = (Vec::new(), Vec::new());
        self.passages_into(now_ns, &mut live, &mut out);
        out
    }

    fn passages_into(
        &self,
        now_ns: u64,
        live: &mut Vec<bool>,
        out: &mut Vec<Option<FramePassage>>,
    ) {
        out.clear();
        out.resize(self.bus.len(), None);
        if self.bus.is_empty() || self.wiring[0].parent.is_some() {
            return;
        }
        self.live_into(live);
        if live[0] {
            let t = now_ns + self.wiring[0].cable_ns;
            self.visit(0, t, live, out);
        }
    }

    /// The frame reaches port 0 of ESC `k` at true time `t`; returns when it leaves port 0
    /// again. Inside an ESC a frame is latched (and, at port 0, processed) `in` ns after it
    /// reaches a port and leaves the next port with a link `out` ns after that latch
    /// (`in + out = forward_ns`, the halves of it): so the hop between two latches is the
    /// same on the way out and back, which is what the MainDevice's measurement assumes.
    fn visit(&self, k: usize, t: u64, live: &[bool], out: &mut [Option<FramePassage>]) -> u64 {
        let on = self.plugged[k];
        let fwd = if on { self.wiring[k].forward_ns } else { 0 };
        let (fin, fout) = (fwd / 2, fwd - fwd / 2);
        let entry = t + fin;
        let mut p = FramePassage {
            ports: [Some(entry), None, None, None],
            epu: entry,
        };
        let mut now = entry;
        for port in [3, 1, 2] {
            let Some(c) = self.children[k][port].filter(|&c| live[c] && self.ring.cut != Some(c))
            else {
                continue;
            };
            let cable = self.wiring[c].cable_ns;
            let back = self.visit(c, now + fout + cable, live, out) + cable + fin;
            p.ports[port] = Some(back);
            now = back;
        }
        if on {
            out[k] = Some(p);
        }
        now + fout
    }

    /// Bring the passage times and the routes up to date with the plugging and with what
    /// was done to the ESCs from outside since the last frame.
    pub(crate) fn refresh_caches(&mut self) {
        if self.rel_plugged != self.plugged || self.rel_passages.len() != self.bus.len() {
            let (mut live, mut rel) = (Vec::new(), std::mem::take(&mut self.rel_passages));
            self.passages_into(0, &mut live, &mut rel);
            self.ring_fix_main(&mut rel);
            self.rel_passages = rel;
            self.rel_plugged.clone_from(&self.plugged);
        }
        if self.routes_dirty || self.routes.len() != self.bus.len() {
            self.routes.clear();
            for &i in &self.bus {
                let r = self.nodes[i].esc.as_ref().map(Esc::route);
                self.routes.push(r.unwrap_or_default());
            }
            self.routes_dirty = false;
        }
        if self.pdi_late.len() != self.bus.len() {
            // Only after a change of the wiring, which settles first: nothing is pending.
            self.pdi_late.clear();
            self.pdi_late.resize(self.bus.len(), None);
            self.pdi_late_count = 0;
        }
    }

    /// Run every ESC's SYNC unit up to true time `now_ns` (frames do this themselves), so
    /// the pulses until then are in the logs.
    pub fn advance_to(&mut self, now_ns: u64) {
        for k in 0..self.bus.len() {
            if let Some(e) = self.subdevice_mut(k) {
                e.dc_advance(now_ns);
            }
        }
    }

    /// True times of the latest SYNC0 pulses of the ESC at `position` (bounded log, oldest
    /// first; see [`Esc::sync0_pulses`]).
    pub fn sync0_pulses(&self, position: usize) -> impl Iterator<Item = u64> + '_ {
        self.subdevice(position)
            .into_iter()
            .flat_map(|e| e.sync0_pulses())
    }

    /// One line per entry of the network, in wiring order.
    pub fn summary(&self) -> Vec<SubDeviceSummary> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(position, n)| match &n.esc {
                Some(esc) => {
                    let f = &esc.info().fixed;
                    SubDeviceSummary {
                        position,
                        bus_position: self.bus.iter().position(|&b| b == position),
                        name: n.name.clone(),
                        order: n.order.clone(),
                        vendor: f.vendor_id,
                        product: f.product_code,
                        revision: f.revision,
                        serial: f.serial,
                        alias: f.station_alias,
                        passive: false,
                    }
                }
                None => SubDeviceSummary {
                    position,
                    bus_position: None,
                    name: n.name.clone(),
                    order: n.order.clone(),
                    vendor: 0,
                    product: 0,
                    revision: 0,
                    serial: 0,
                    alias: 0,
                    passive: true,
                },
            })
            .collect()
    }

    /// The ESC at `position`: its index among the network's ESCs in wiring order (passive
    /// terminals do not count), which is its auto-increment position while every SubDevice
    /// is plugged in. Unplugged ones stay reachable here.
    pub fn subdevice(&self, position: usize) -> Option<&Esc> {
        let i = *self.bus.get(position)?;
        self.nodes[i].esc.as_ref()
    }

    /// The ESC at `position`, writable.
    pub fn subdevice_mut(&mut self, position: usize) -> Option<&mut Esc> {
        // Every change to an ESC from outside comes through here: deferred reactions belong
        // to the network as it was, so they run first (see `crate::deferred`).
        self.settle();
        // Whatever the caller changes, the next frame recomputes the routes and runs the
        // PDI side (e.g. publishes inputs set through the test API).
        self.routes_dirty = true;
        let i = *self.bus.get(position)?;
        let esc = self.nodes[i].esc.as_mut()?;
        esc.kick_pdi();
        Some(esc)
    }

    /// Number of ESCs on the frame path (plugged in).
    pub fn subdevice_count(&self) -> usize {
        self.plugged.iter().filter(|&&p| p).count()
    }

    /// Number of ESCs in the network, plugged in or not.
    pub fn esc_count(&self) -> usize {
        self.bus.len()
    }

    /// Frame statistics.
    pub fn counters(&self) -> &SimCounters {
        &self.counters
    }

    fn first_esc(&mut self) -> Option<&mut Esc> {
        let k = self.plugged.iter().position(|&p| p)?;
        self.subdevice_mut(k)
    }

    /// Process one whole Ethernet frame in place as the ring of SubDevices does; returns true
    /// if it comes back (see [`Network::process`], whose delay and duplication this ignores).
    /// On true the buffer holds the returned frame: same length, source MAC with the
    /// locally-administered bit (0x02 in byte 6) set.
    pub fn process_frame(&mut self, frame: &mut [u8], now_ns: u64) -> bool {
        self.process(frame, now_ns).returned()
    }

    /// Check the frame as a whole and index its datagrams into `index`; the offset of the
    /// EtherCAT header and the datagram count.
    fn validate(
        &mut self,
        frame: &[u8],
        index: &mut FrameIndex,
    ) -> Result<(usize, u64), DropReason> {
        let off = match EthernetFrame::new_checked(frame) {
            Ok(eth) if eth.ethertype() == ETHERTYPE_ETHERCAT => eth.payload_offset(),
            _ => return Err(DropReason::NotEthercat),
        };
        match EcatFrame::new_checked(&frame[off..]) {
            Err(WireError::UnsupportedType) => Err(DropReason::WrongType),
            Err(_) => Err(DropReason::Malformed),
            Ok(f) => {
                let first = off + ECAT_HEADER_LEN;
                let end = first + f.datagrams_len();
                if f.datagrams_len() == 0 {
                    index.dgs.clear();
                    return Ok((off, 0));
                }
                if !index.build(frame, first, end) {
                    return Err(DropReason::Malformed);
                }
                Ok((off, index.dgs.len() as u64))
            }
        }
    }

    fn count_drop(&mut self, r: DropReason) -> FrameFate {
        let c = &mut self.counters;
        match r {
            DropReason::NotEthercat => c.dropped_not_ethercat += 1,
            DropReason::WrongType => c.dropped_wrong_type += 1,
            DropReason::Malformed => c.dropped_malformed += 1,
            DropReason::NoSubDevice => c.dropped_no_subdevice += 1,
            DropReason::Lost => c.dropped_lost += 1,
            DropReason::Corrupted => c.dropped_corrupted += 1,
        }
        FrameFate::Dropped(r)
    }

    /// Process one whole Ethernet frame in place at network time `now_ns` and say what
    /// becomes of it. Scheduled events due by `now_ns` happen first. Dropped frames: not
    /// EtherType 0x88A4, header type ≠ 1, malformed (left unchanged), no SubDevice plugged,
    /// or a fault (lost or corrupted, possibly after some SubDevices processed it). A
    /// returned frame is in the buffer with the source MAC's locally-administered bit set,
    /// plus the extra delay and duplication the faults decided.
    ///
    /// Circulating frames: a frame is only dropped for circulation by an ESC whose port 0 has
    /// no link, which needs a cut cable; this network has none yet, so the C bit passes.
    pub fn process(&mut self, frame: &mut [u8], now_ns: u64) -> FrameFate {
        self.process_from(frame, now_ns, RingPort::Main).0
    }

    /// [`Network::process`] for a frame sent on the MainDevice's `entry` port; also says
    /// which port it comes back to (see `crate::ring`).
    pub fn process_from(
        &mut self,
        frame: &mut [u8],
        now_ns: u64,
        entry: RingPort,
    ) -> (FrameFate, RingPort) {
        let fate = self.process_inner(frame, now_ns, entry);
        let exit = match entry {
            RingPort::Main => self.main_exit(),
            RingPort::Backup if self.ring.cut.is_some() => RingPort::Backup,
            RingPort::Backup => RingPort::Main,
        };
        (fate, exit)
    }

    fn process_inner(&mut self, frame: &mut [u8], now_ns: u64, entry: RingPort) -> FrameFate {
        let mut index = std::mem::take(&mut self.index_buf);
        let fate = match self.begin(frame, now_ns, entry, &mut index) {
            Err(fate) => fate,
            Ok(start) => {
                let mut walk = start.walk(frame, &index, now_ns);
                self.walk_positions(&mut walk, 0..self.bus.len());
                walk.finish();
                self.end(frame, &start)
            }
        };
        self.index_buf = index;
        fate
    }

    /// What happens to a frame before any ESC sees it: events that are due, validation and
    /// indexing into `index`, the ring's backup entry, the faults' roll. `Err` is the fate
    /// of a frame that goes no further.
    pub(crate) fn begin(
        &mut self,
        frame: &mut [u8],
        now_ns: u64,
        entry: RingPort,
        index: &mut FrameIndex,
    ) -> Result<Start, FrameFate> {
        self.counters.frames += 1;
        // Deferred PDI reactions only on a plain line without injected faults (see
        // `set_deferred_pdi`); events change the line, so they come after the reactions.
        let defer = self.defer_pdi
            && entry == RingPort::Main
            && !self.ring.closed
            && self.ring.cut.is_none()
            && !self.faults.active();
        if !defer || self.events.first().is_some_and(|e| e.at_ns <= now_ns) {
            self.settle();
        }
        self.run_events(now_ns);
        let (off, count) = match self.validate(frame, index) {
            Ok(v) => v,
            Err(r) => {
                if r == DropReason::Malformed {
                    if let Some(esc) = self.first_esc() {
                        esc.count_invalid_frame();
                    }
                }
                return Err(self.count_drop(r));
            }
        };
        self.refresh_caches();
        let backup = entry == RingPort::Backup;
        if backup && !self.ring.closed {
            return Err(self.count_drop(DropReason::NoSubDevice));
        }
        if backup && !self.ring_enter_backup(index, now_ns) {
            // A closed ring forwards it untouched to the main port.
            self.ring_leave_backup();
            return Err(self.count_returned(frame, Roll::default()));
        }
        let hops = self.rel_passages.iter().flatten().count();
        if hops == 0 {
            if backup {
                self.ring_leave_backup();
            }
            return Err(self.count_drop(DropReason::NoSubDevice));
        }
        self.counters.datagrams += count;
        let roll = if self.faults.active() {
            Roll::new(&self.faults, &mut self.rng, hops)
        } else {
            Roll::default()
        };
        let stop = roll.lost_at.or(roll.corrupt_at).unwrap_or(hops);
        Ok(Start {
            off,
            roll,
            stop,
            defer,
            backup,
        })
    }

    /// Take `walk` past the ESCs at bus positions `positions` (those on the frame path).
    /// ESCs no datagram concerns only OR their event request into the IRQ fields and count
    /// in the auto-increment addresses (see `esc::route`).
    pub(crate) fn walk_positions(&mut self, walk: &mut Walk<'_>, positions: Range<usize>) {
        for k in positions {
            let Some(rel) = self.rel_passages[k] else {
                continue;
            };
            walk.step(
                &mut self.nodes[self.bus[k]].esc,
                &mut self.routes[k],
                rel,
                Pending {
                    at: &mut self.pdi_late[k],
                    count: &mut self.pdi_late_count,
                },
            );
        }
    }

    /// What happens to a frame after the last ESC: the ring's backup exit, loss or
    /// corruption by faults, the count of returned frames.
    fn end(&mut self, frame: &mut [u8], start: &Start) -> FrameFate {
        let roll = start.roll;
        if let Some(at) = roll.corrupt_at {
            self.count_rx_errors(at);
        }
        if start.backup {
            self.ring_leave_backup();
        }
        if roll.lost_at.is_some() {
            return self.count_drop(DropReason::Lost);
        }
        if roll.corrupt_at.is_some() {
            if !self.faults.deliver_corrupted {
                return self.count_drop(DropReason::Corrupted);
            }
            let off = start.off;
            let bits = (frame.len() - off) as u64 * 8;
            let b = off as u64 * 8 + roll.flip % bits.max(1);
            if let Some(byte) = frame.get_mut((b / 8) as usize) {
                *byte ^= 1 << (b % 8);
            }
            self.counters.corrupted_delivered += 1;
        }
        self.count_returned(frame, roll)
    }

    fn count_returned(&mut self, frame: &mut [u8], roll: Roll) -> FrameFate {
        if let Ok(mut eth) = EthernetFrame::new_checked(&mut frame[..]) {
            eth.mark_returned();
        }
        self.counters.returned += 1;
        if roll.duplicate {
            self.counters.duplicated += 1;
        }
        FrameFate::Returned {
            delay_ns: roll.delay_ns,
            duplicate: roll.duplicate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_is_send() {
        fn is_send<T: Send>() {}
        is_send::<Network>();
    }
}
