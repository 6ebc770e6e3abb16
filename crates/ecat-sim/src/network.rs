//! A line of SubDevices and the path a frame takes through it.
//!
//! The MainDevice's frame enters port 0 of the first ESC; each ESC executes every datagram in
//! processing direction and passes the frame on through port 1; the last ESC loops it back
//! and the frame returns through the others (forwarding only) to the MainDevice. So
//! processing is simply "ESC 0 over the whole frame, then ESC 1, …". Passive terminals
//! (EL9011, …) are listed in the network but are not on the frame path.
//!
//! Before any ESC sees the frame it is checked as a whole: EtherType 0x88A4, EtherCAT header
//! type 1, a length that fits, and a datagram chain that ends inside that length. Anything
//! else is dropped and counted (a malformed EtherCAT frame also counts in the first ESC's
//! invalid-frame counter 0x0300, as the receiving port would).
//!
//! Faults ([`crate::faults`]) decide each frame's fate: lost or corrupted at some hop, delayed,
//! duplicated. Unplugged SubDevices are off the frame path (as behind an open junction port),
//! so the auto-increment positions behind them shift; the test API (`subdevice`, `outputs`,
//! `set_inputs`, `unplug`, …) keeps addressing ESCs by their fixed index in wiring order.

use crate::devices;
use crate::error::SimError;
use crate::esc::Esc;
use crate::faults::{DropReason, FaultEvent, Faults, FrameFate, Rng, Roll};
use crate::netfile;
use ecat_wire::frame::{EcatFrame, EthernetFrame, ETHERTYPE_ETHERCAT};
use ecat_wire::Error as WireError;
use std::path::Path;

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

/// One entry of the line.
#[derive(Debug)]
pub(crate) struct Node {
    pub esc: Option<Esc>,
    pub name: String,
    pub order: String,
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
#[derive(Debug)]
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
}

const PRESETS: &[(&str, &[&str])] = &[
    (
        "io",
        &["EK1100", "EL2008", "EL1018", "EL4132", "EL3102", "EL9011"],
    ),
    ("servo", &["ECAT-SERVO-402"]),
    ("servo6", &["ECAT-SERVO-402"; 6]),
];

impl Network {
    /// Build a network from its entries (wiring order).
    pub(crate) fn from_nodes(nodes: Vec<Node>) -> Network {
        let bus: Vec<usize> = (0..nodes.len())
            .filter(|&i| nodes[i].esc.is_some())
            .collect();
        let mut net = Network {
            plugged: vec![true; bus.len()],
            nodes,
            bus,
            counters: SimCounters::default(),
            faults: Faults::default(),
            rng: Rng::new(0),
            events: Vec::new(),
        };
        net.refresh_links();
        net
    }

    /// Tell every ESC whether a plugged SubDevice follows it.
    pub(crate) fn refresh_links(&mut self) {
        let last = self.plugged.iter().rposition(|&p| p);
        for (k, &i) in self.bus.iter().enumerate() {
            if let Some(esc) = self.nodes[i].esc.as_mut() {
                esc.set_next_link(self.plugged[k] && last.is_some_and(|l| k < l));
            }
        }
    }

    /// A built-in network by name (see [`Network::preset_names`]).
    pub fn preset(name: &str) -> Result<Network, SimError> {
        let Some((_, models)) = PRESETS.iter().find(|(n, _)| *n == name) else {
            return Err(SimError::UnknownPreset {
                name: name.to_string(),
                presets: Self::preset_names().join(", "),
            });
        };
        let nodes = models
            .iter()
            .enumerate()
            .map(|(i, m)| {
                // Preset names are catalogue names; the preset test builds every preset.
                let model = devices::find(m).expect("preset model in catalogue");
                netfile::node_from_model(&model, i as u32 + 1, None, None)
            })
            .collect();
        Ok(Network::from_nodes(nodes))
    }

    /// Names of the built-in networks: `io` (seed 003's line-up: EK1100, EL2008, EL1018,
    /// EL4132, EL3102, EL9011), `servo` (one CiA 402 drive) and `servo6` (six drives in a
    /// line with their default CSV mapping: 6 bytes out and 10 bytes in each, 96 in all).
    pub fn preset_names() -> &'static [&'static str] {
        &["io", "servo", "servo6"]
    }

    /// Read a TOML network file.
    pub fn from_file(path: &Path) -> Result<Network, SimError> {
        let text = std::fs::read_to_string(path).map_err(|source| SimError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::from_toml_str(&text, &path.display().to_string(), base)
    }

    /// Parse a TOML network description; `origin` names it in errors, `base_dir` resolves
    /// relative `sii` paths.
    pub fn from_toml_str(text: &str, origin: &str, base_dir: &Path) -> Result<Network, SimError> {
        let file = netfile::parse(text, origin, base_dir)?;
        let mut net = Network::from_nodes(file.nodes);
        if let Some(f) = file.faults {
            net.set_faults(f);
        }
        for e in file.events {
            net.schedule(e);
        }
        Ok(net)
    }

    /// Open `sim:<preset>` or `sim:<path>` (the `sim:` prefix is optional).
    pub fn open(spec: &str) -> Result<Network, SimError> {
        let what = spec.strip_prefix("sim:").unwrap_or(spec);
        if Self::preset_names().contains(&what) {
            return Self::preset(what);
        }
        let path = Path::new(what);
        if path.exists() || what.contains('/') || what.ends_with(".toml") {
            return Self::from_file(path);
        }
        Self::preset(what)
    }

    /// One line per entry of the network, in wiring order.
    pub fn summary(&self) -> Vec<SubDeviceSummary> {
        let mut bus = 0;
        self.nodes
            .iter()
            .enumerate()
            .map(|(position, n)| match &n.esc {
                Some(esc) => {
                    let f = &esc.info().fixed;
                    bus += 1;
                    SubDeviceSummary {
                        position,
                        bus_position: Some(bus - 1),
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
        let i = *self.bus.get(position)?;
        self.nodes[i].esc.as_mut()
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

    /// Check the frame as a whole; the offset of the EtherCAT header and the datagram count.
    fn validate(&mut self, frame: &[u8]) -> Result<(usize, u64), DropReason> {
        let off = match EthernetFrame::new_checked(frame) {
            Ok(eth) if eth.ethertype() == ETHERTYPE_ETHERCAT => eth.payload_offset(),
            _ => return Err(DropReason::NotEthercat),
        };
        match EcatFrame::new_checked(&frame[off..]) {
            Err(WireError::UnsupportedType) => Err(DropReason::WrongType),
            Err(_) => Err(DropReason::Malformed),
            Ok(f) => {
                let mut n = 0u64;
                for d in f.datagrams() {
                    if d.is_err() {
                        return Err(DropReason::Malformed);
                    }
                    n += 1;
                }
                Ok((off, n))
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
        self.counters.frames += 1;
        self.run_events(now_ns);
        let (off, count) = match self.validate(frame) {
            Ok(v) => v,
            Err(r) => {
                if r == DropReason::Malformed {
                    if let Some(esc) = self.first_esc() {
                        esc.count_invalid_frame();
                    }
                }
                return self.count_drop(r);
            }
        };
        let hops = self.subdevice_count();
        if hops == 0 {
            return self.count_drop(DropReason::NoSubDevice);
        }
        self.counters.datagrams += count;
        let roll = if self.faults.active() {
            Roll::new(&self.faults, &mut self.rng, hops)
        } else {
            Roll::default()
        };
        let stop = roll.lost_at.or(roll.corrupt_at).unwrap_or(hops);
        let mut hop = 0;
        for k in 0..self.bus.len() {
            if !self.plugged[k] {
                continue;
            }
            hop += 1;
            let hop = hop - 1;
            let i = self.bus[k];
            let Some(esc) = self.nodes[i].esc.as_mut() else {
                continue;
            };
            esc.tick(now_ns);
            if hop >= stop {
                if roll.corrupt_at.is_some() {
                    esc.count_crc_error(hop == stop);
                }
                continue;
            }
            let Ok(mut f) = EcatFrame::new_checked(&mut frame[off..]) else {
                continue;
            };
            for d in f.datagrams_mut().flatten() {
                let mut d = d;
                esc.process_datagram(&mut d);
            }
            esc.end_of_frame(now_ns);
        }
        if roll.lost_at.is_some() {
            return self.count_drop(DropReason::Lost);
        }
        if roll.corrupt_at.is_some() {
            if !self.faults.deliver_corrupted {
                return self.count_drop(DropReason::Corrupted);
            }
            let bits = (frame.len() - off) as u64 * 8;
            let b = off as u64 * 8 + roll.flip % bits.max(1);
            if let Some(byte) = frame.get_mut((b / 8) as usize) {
                *byte ^= 1 << (b % 8);
            }
            self.counters.corrupted_delivered += 1;
        }
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
    fn presets_build_and_list() {
        for p in Network::preset_names() {
            let n = Network::preset(p).unwrap();
            assert!(n.subdevice_count() > 0);
        }
        let io = Network::preset("io").unwrap();
        assert_eq!(io.subdevice_count(), 5);
        let s = io.summary();
        assert_eq!(s.len(), 6);
        assert!(s[5].passive && s[5].bus_position.is_none());
        assert_eq!(s[4].order, "EL3102");
        let err = Network::preset("nope").unwrap_err().to_string();
        assert!(err.contains("io, servo"), "{err}");
    }

    #[test]
    fn network_is_send() {
        fn is_send<T: Send>() {}
        is_send::<Network>();
    }
}
