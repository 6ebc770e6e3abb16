//! The two ports of an in-process simulated ring (`ring = true` networks): a main and a
//! backup [`Link`] onto one [`ecat_sim::Network`], for [`super::redundant::RedundantLink`].
//!
//! Both ports share the network behind a mutex. Sending on a port processes the frame at once
//! ([`Network::process_from`]) and queues the answer on the port it comes out of, in a fixed
//! ring of preallocated buffers per port (nothing allocates per frame). A frame sent on the
//! backup port cannot leave before the frame the MainDevice received last has physically
//! arrived (so a frame sent on through the backup port as soon as its first half came back
//! passes the ESCs when it would on a wire, and a latch frame sent back passes after it
//! arrived). Dropped frames are not
//! queued; fault delays and duplicates are honoured as in [`super::sim::SimLink`].

use super::{Link, LinkCounters};
use crate::clock::VirtualTime;
use crate::error::{Error, Result};
use ecat_sim::{FrameFate, Network, RingPort};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

const QUEUE: usize = 64;
const FRAME_MAX: usize = 1518;

/// Frames waiting at one port.
struct Queue {
    bufs: Vec<[u8; FRAME_MAX]>,
    lens: [usize; QUEUE],
    due: [u64; QUEUE],
    /// True arrival time at the port.
    arrive: [u64; QUEUE],
    head: usize,
    count: usize,
}

impl Queue {
    fn new() -> Queue {
        Queue {
            bufs: vec![[0u8; FRAME_MAX]; QUEUE],
            lens: [0; QUEUE],
            due: [0; QUEUE],
            arrive: [0; QUEUE],
            head: 0,
            count: 0,
        }
    }

    fn push(&mut self, frame: &[u8], due: u64, arrive: u64) {
        if self.count == QUEUE {
            return;
        }
        let slot = (self.head + self.count) % QUEUE;
        self.bufs[slot][..frame.len()].copy_from_slice(frame);
        self.lens[slot] = frame.len();
        self.due[slot] = due;
        self.arrive[slot] = arrive;
        self.count += 1;
    }

    /// The next frame due by `now` into `buf`: its length and true arrival time.
    fn pop(&mut self, buf: &mut [u8], now: u64) -> Option<(usize, u64)> {
        if self.count == 0 || self.due[self.head] > now {
            return None;
        }
        let arrive = self.arrive[self.head];
        let n = self.lens[self.head].min(buf.len());
        buf[..n].copy_from_slice(&self.bufs[self.head][..n]);
        self.head = (self.head + 1) % QUEUE;
        self.count -= 1;
        Some((n, arrive))
    }
}

/// The network and what waits at its two ports.
pub struct SimRing {
    net: Network,
    queues: [Queue; 2],
    /// True arrival time of the frame the MainDevice received last.
    last_arrival: u64,
    scratch: Box<[u8; FRAME_MAX]>,
}

impl SimRing {
    /// The simulated network.
    pub fn network(&mut self) -> &mut Network {
        &mut self.net
    }
}

/// A handle to the shared ring (tests: break cables, read devices).
pub type SharedRing = Arc<Mutex<SimRing>>;

fn lock(s: &SharedRing) -> MutexGuard<'_, SimRing> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// One port of the simulated ring.
pub struct SimRingPort {
    ring: SharedRing,
    port: RingPort,
    name: String,
    counters: LinkCounters,
    epoch: Instant,
    virtual_time: Option<VirtualTime>,
}

/// Open the ring network `spec` (a network file or preset with `ring = true`): its main and
/// backup ports and a handle to the network.
pub fn open(spec: &str, vt: Option<VirtualTime>) -> Result<(SimRingPort, SimRingPort, SharedRing)> {
    let net = Network::open(spec).map_err(|e| Error::BadLinkSpec {
        spec: format!("sim:{spec}"),
        reason: e.to_string(),
    })?;
    with_network(net, spec, vt)
}

/// The two ports onto an already built network (which must be a ring).
pub fn with_network(
    net: Network,
    spec: &str,
    vt: Option<VirtualTime>,
) -> Result<(SimRingPort, SimRingPort, SharedRing)> {
    if !net.is_ring() {
        return Err(Error::BadLinkSpec {
            spec: format!("sim:{spec}"),
            reason: "this simulated network is not a ring, so it has no backup port; add `ring = true` to its network file".into(),
        });
    }
    let ring = Arc::new(Mutex::new(SimRing {
        net,
        queues: [Queue::new(), Queue::new()],
        last_arrival: 0,
        scratch: Box::new([0u8; FRAME_MAX]),
    }));
    let epoch = Instant::now();
    let port = |port, name: String| SimRingPort {
        ring: ring.clone(),
        port,
        name,
        counters: LinkCounters::default(),
        epoch,
        virtual_time: vt.clone(),
    };
    Ok((
        port(RingPort::Main, format!("sim:{spec}")),
        port(RingPort::Backup, format!("sim:{spec}#backup")),
        ring.clone(),
    ))
}

fn slot(p: RingPort) -> usize {
    match p {
        RingPort::Main => 0,
        RingPort::Backup => 1,
    }
}

impl SimRingPort {
    fn now_ns(&self) -> u64 {
        match &self.virtual_time {
            Some(v) => v.now(),
            None => self.epoch.elapsed().as_nanos() as u64,
        }
    }
}

impl Link for SimRingPort {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        self.counters.tx_frames += 1;
        if frame.len() > FRAME_MAX {
            self.counters.tx_errors += 1;
            return Ok(());
        }
        let now = self.now_ns();
        let mut g = lock(&self.ring);
        let r = &mut *g;
        let t = match self.port {
            RingPort::Backup => now.max(r.last_arrival),
            RingPort::Main => now,
        };
        let buf = &mut r.scratch[..frame.len()];
        buf.copy_from_slice(frame);
        let (fate, exit) = r.net.process_from(buf, t, self.port);
        if let FrameFate::Returned {
            delay_ns,
            duplicate,
        } = fate
        {
            let arrive = t + r.net.transit_ns(self.port);
            // Receivable at once on virtual time (the runtime never waits), later by the
            // fault delay.
            let due = now + delay_ns;
            let q = &mut r.queues[slot(exit)];
            q.push(&r.scratch[..frame.len()], due, arrive);
            if duplicate {
                q.push(&r.scratch[..frame.len()], due, arrive);
            }
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        loop {
            let now = self.now_ns();
            let mut g = lock(&self.ring);
            if let Some((n, arrive)) = g.queues[slot(self.port)].pop(buf, now) {
                g.last_arrival = arrive;
                self.counters.rx_frames += 1;
                return Ok(Some(n));
            }
            drop(g);
            let (Some(d), None) = (deadline, &self.virtual_time) else {
                return Ok(None);
            };
            let wall = Instant::now();
            if d <= wall {
                return Ok(None);
            }
            std::thread::sleep((d - wall).min(std::time::Duration::from_micros(20)));
        }
    }

    fn mac(&self) -> [u8; 6] {
        [0x00, 0x0E, 0xCA, 0x00, 0x00, 0x01 + slot(self.port) as u8]
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn counters(&self) -> LinkCounters {
        self.counters
    }

    fn describe(&self) -> String {
        match self.port {
            RingPort::Main => format!("simulated ring {} (main port)", self.name),
            RingPort::Backup => format!("simulated ring {} (backup port)", self.name),
        }
    }

    fn virtual_time(&self) -> Option<VirtualTime> {
        self.virtual_time.clone()
    }
}

/// Answer one frame for a simulated ring on two real ports (`ecat sim --backup`, veth tests):
/// wait until `deadline` for a frame on either port, process it as entering by that port at
/// true time `now_ns()` and send it out of the port it leaves by (twice if duplicated; the
/// faults' extra delay is not applied here). Returns its fate, `None` if nothing arrived.
pub fn answer_one(
    net: &mut Network,
    main: &mut dyn Link,
    backup: &mut dyn Link,
    buf: &mut [u8],
    deadline: Instant,
    now_ns: &dyn Fn() -> u64,
) -> Result<Option<FrameFate>> {
    loop {
        for (port, entry) in [(0, RingPort::Main), (1, RingPort::Backup)] {
            let link: &mut dyn Link = if port == 0 { &mut *main } else { &mut *backup };
            let Some(n) = link.recv(buf, None)? else {
                continue;
            };
            let (fate, exit) = net.process_from(&mut buf[..n], now_ns(), entry);
            if let FrameFate::Returned { duplicate, .. } = fate {
                let out: &mut dyn Link = match exit {
                    RingPort::Main => &mut *main,
                    RingPort::Backup => &mut *backup,
                };
                out.send(&buf[..n])?;
                if duplicate {
                    out.send(&buf[..n])?;
                }
            }
            return Ok(Some(fate));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        match (main.poll_fd(), backup.poll_fd()) {
            (Some(a), Some(b)) => super::redundant::wait_readable(&[a, b], deadline)?,
            _ => std::thread::sleep(std::time::Duration::from_micros(20)),
        }
    }
}
