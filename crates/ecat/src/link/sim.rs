//! The in-process simulated link: frames go straight into an [`ecat_sim::Network`] and come
//! back without a syscall.
//!
//! Sending processes the frame at once (the virtual ring answers synchronously) and queues the
//! returned frame in a fixed ring of preallocated buffers, so the cyclic path allocates nothing.
//! The simulator decides each frame's fate: dropped (malformed, or a fault) frames are never
//! returned, exactly like on a wire, and the frame engine's timeout sees it; delayed frames
//! become receivable at their time; duplicated frames are delivered twice. Time for the
//! simulator is the monotonic time since the link was opened, or a shared virtual clock.

use super::{Link, LinkCounters};
use crate::clock::VirtualTime;
use crate::error::{Error, Result};
use ecat_sim::{FrameFate, Network};
use std::time::Instant;

/// Returned frames that may wait to be received before new ones are dropped.
const QUEUE: usize = 64;
/// Buffer size per queued frame (a full Ethernet frame without FCS, with a VLAN tag).
const FRAME_MAX: usize = 1518;

/// A link to an in-process simulated EtherCAT network.
pub struct SimLink {
    net: Network,
    name: String,
    what: String,
    bufs: Vec<[u8; FRAME_MAX]>,
    lens: [usize; QUEUE],
    /// Time (link clock, ns) from which each queued frame may be received.
    due: [u64; QUEUE],
    head: usize,
    count: usize,
    counters: LinkCounters,
    epoch: Instant,
    virtual_time: Option<VirtualTime>,
}

impl std::fmt::Debug for SimLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimLink").field("name", &self.name).finish()
    }
}

impl SimLink {
    /// Open `spec` (the part after `sim:`): a preset name such as `io`, or a network file.
    pub fn open(spec: &str) -> Result<SimLink> {
        let net = Network::open(spec).map_err(|e| Error::BadLinkSpec {
            spec: format!("sim:{spec}"),
            reason: e.to_string(),
        })?;
        let what = if Network::preset_names().contains(&spec) {
            format!("built-in simulated network '{spec}'")
        } else {
            format!("simulated network from {spec}")
        };
        Ok(Self::with_network(net, format!("sim:{spec}"), what))
    }

    /// Wrap an already built network.
    pub fn with_network(mut net: Network, name: String, what: String) -> SimLink {
        // A ring's backup port is not connected here: its last SubDevice ends the line.
        if net.is_ring() {
            let _ = net.set_ring(false);
        }
        SimLink {
            net,
            name,
            what,
            bufs: vec![[0u8; FRAME_MAX]; QUEUE],
            lens: [0; QUEUE],
            due: [0; QUEUE],
            head: 0,
            count: 0,
            counters: LinkCounters::default(),
            epoch: Instant::now(),
            virtual_time: None,
        }
    }

    /// Run on virtual time: the network sees `vt` as its clock, and receiving never waits.
    pub fn on_virtual_time(mut self, vt: VirtualTime) -> SimLink {
        self.virtual_time = Some(vt);
        self
    }

    fn now_ns(&self) -> u64 {
        match &self.virtual_time {
            Some(v) => v.now(),
            None => self.epoch.elapsed().as_nanos() as u64,
        }
    }

    /// The simulated network (for tests: read registers, inject faults).
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// The simulated network, writable.
    pub fn network_mut(&mut self) -> &mut Network {
        &mut self.net
    }
}

impl Link for SimLink {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        self.counters.tx_frames += 1;
        if self.count == QUEUE || frame.len() > FRAME_MAX {
            self.counters.tx_errors += 1;
            return Ok(());
        }
        let slot = (self.head + self.count) % QUEUE;
        self.bufs[slot][..frame.len()].copy_from_slice(frame);
        let now = self.now_ns();
        let fate = self.net.process(&mut self.bufs[slot][..frame.len()], now);
        if let FrameFate::Returned {
            delay_ns,
            duplicate,
        } = fate
        {
            self.lens[slot] = frame.len();
            self.due[slot] = now + delay_ns;
            self.count += 1;
            if duplicate && self.count < QUEUE {
                let copy = (slot + 1) % QUEUE;
                let (a, b) = if copy > slot {
                    let (x, y) = self.bufs.split_at_mut(copy);
                    (&x[slot], &mut y[0])
                } else {
                    let (x, y) = self.bufs.split_at_mut(slot);
                    (&y[0], &mut x[copy])
                };
                b[..frame.len()].copy_from_slice(&a[..frame.len()]);
                self.lens[copy] = frame.len();
                self.due[copy] = now + delay_ns;
                self.count += 1;
            }
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        loop {
            let now = self.now_ns();
            if self.count > 0 && self.due[self.head] <= now {
                let len = self.lens[self.head];
                let n = len.min(buf.len());
                buf[..n].copy_from_slice(&self.bufs[self.head][..n]);
                self.head = (self.head + 1) % QUEUE;
                self.count -= 1;
                self.counters.rx_frames += 1;
                return Ok(Some(n));
            }
            // Nothing receivable yet. On virtual time the caller moves the clock; on the
            // monotonic clock wait (until the deadline, or until the next frame is due).
            let (Some(d), None) = (deadline, &self.virtual_time) else {
                return Ok(None);
            };
            let wall = Instant::now();
            if d <= wall {
                return Ok(None);
            }
            let mut until = d;
            if self.count > 0 {
                let due_in = self.due[self.head].saturating_sub(now);
                until = until.min(wall + std::time::Duration::from_nanos(due_in));
            }
            std::thread::sleep(until - wall);
            if self.count == 0 {
                return Ok(None);
            }
        }
    }

    fn mac(&self) -> [u8; 6] {
        [0x00, 0x0E, 0xCA, 0x00, 0x00, 0x01]
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn counters(&self) -> LinkCounters {
        self.counters
    }

    fn describe(&self) -> String {
        self.what.clone()
    }

    fn virtual_time(&self) -> Option<VirtualTime> {
        self.virtual_time.clone()
    }

    fn sim_network(&mut self) -> Option<&mut Network> {
        Some(&mut self.net)
    }
}
