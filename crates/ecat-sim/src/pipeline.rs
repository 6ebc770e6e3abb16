//! Two threads along one line: the first half of the ESCs on the caller's thread, the second
//! half on a worker, as real ESCs work on different frames at the same time.
//!
//! Design: a frame's walk ([`crate::walk`]) can stop after any ESC and go on elsewhere. The
//! pipeline takes the ESCs from bus position `split` on out of the network into a segment that
//! a worker thread owns; the caller's thread keeps the network with the ESCs before `split`.
//! [`Pipeline::process`] validates a frame, walks it past the first half and hands it (with its
//! index and walk state, in a job from a fixed pool) to the worker, which walks it past the
//! second half, finishes it and sends it back through the caller's `send`. So while the
//! worker runs the second half of frame N, the caller already runs the first half of frame
//! N+1: each thread does about half the work of a cycle, and the simulator keeps up with
//! about twice the frame rate (it catches up twice as fast after a stall). One frame still
//! passes the two halves one after the other, so a cycle whose first frame concerns every
//! ESC (broadcasts, the DC time) comes back only a little sooner. Every ESC is owned by
//! exactly one thread and sees the frames in order, with the same times as on one thread;
//! each thread settles its own deferred PDI reactions when it has no frame waiting (both run
//! deferred, see `crate::deferred`), so a frame returns exactly what it returns on one
//! thread apart from IRQ fields, as with the deferral alone.
//!
//! Only a plain line runs pipelined: no ring, no injected faults, no scheduled events (those
//! act on the whole line at once); [`Pipeline::start`] says why otherwise and gives the network
//! back. [`Pipeline::stop`] joins the worker and puts the ESCs back. The jobs travel over
//! bounded channels whose slots exist from the start, so processing a frame allocates nothing.

use crate::esc::route::{FrameIndex, Route};
use crate::esc::{Esc, FramePassage};
use crate::faults::FrameFate;
use crate::walk::{react_late, Pending, Walk};
use crate::{Network, RingPort};
use ecat_wire::frame::EthernetFrame;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Frames that can be on their way through the worker at once; beyond that the caller waits
/// for the worker (the socket's buffer holds the rest).
const JOBS: usize = 64;

/// How long the worker stays awake, polling for the next frame, after a frame or a heads-up
/// from the caller: waking a sleeping thread costs tens to hundreds of microseconds on a
/// virtual machine, more than the first half of a frame takes to run.
const AWAKE: Duration = Duration::from_micros(250);

/// The longest the worker sleeps without a heads-up (it then checks the channel again).
const NAP: Duration = Duration::from_millis(50);

/// Sends a finished frame back to the MainDevice (from the worker thread).
pub type SendFn = Box<dyn FnMut(&[u8]) -> std::io::Result<()> + Send>;

/// Runs first on the worker thread ([`Pipeline::start_with`]); `Err` is one sentence.
pub type PrepareFn = Box<dyn FnOnce() -> Result<(), String> + Send>;

/// One frame on its way from the first half to the second.
#[derive(Default)]
struct Job {
    frame: Vec<u8>,
    index: FrameIndex,
    now_ns: u64,
    stop: usize,
    defer: bool,
    hop: usize,
    passed_irq: u16,
}

/// The ESCs from bus position `split` on, owned by the worker.
struct Segment {
    escs: Vec<Option<Esc>>,
    routes: Vec<Route>,
    rel: Vec<Option<FramePassage>>,
    pending: Vec<Option<u64>>,
    pending_count: usize,
    send: SendFn,
    sent: u64,
    send_errors: u64,
    first_send_error: Option<String>,
}

/// What the worker reports when it is stopped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PipelineReport {
    /// Frames the worker sent back.
    pub sent: u64,
    /// Frames whose sending failed.
    pub send_errors: u64,
    /// The first failure, as text.
    pub first_send_error: Option<String>,
    /// Bus position of the first ESC the worker ran.
    pub split: usize,
}

/// A network [`Pipeline::start`] did not split: the network, given back whole, and why.
#[derive(Debug)]
pub struct NotSplit {
    /// The network, unchanged.
    pub network: Box<Network>,
    /// Why it was not split, as one sentence fragment ("the network is a ring").
    pub reason: String,
}

impl NotSplit {
    fn new(network: Network, reason: impl Into<String>) -> NotSplit {
        NotSplit {
            network: Box::new(network),
            reason: reason.into(),
        }
    }
}

/// A network run on two threads (see the module note).
pub struct Pipeline {
    net: Network,
    split: usize,
    jobs: SyncSender<Job>,
    free: Receiver<Job>,
    worker: Option<JoinHandle<Option<Segment>>>,
    /// Set with each heads-up (see [`Pipeline::process`]).
    kick: Arc<AtomicBool>,
    /// A job that did not go to the worker (its frame was dropped), used next.
    spare: Option<Job>,
}

impl Pipeline {
    /// Split `net` at bus position `split` (`None`: half-way) and start the worker; `send`
    /// sends finished frames back. Deferred PDI reactions are switched on. A network that
    /// cannot run pipelined comes back with the reason.
    pub fn start(net: Network, split: Option<usize>, send: SendFn) -> Result<Pipeline, NotSplit> {
        Self::start_with(net, split, send, None)
    }

    /// [`Pipeline::start`], with `prepare` run first on the worker thread (e.g. to pin it to
    /// a CPU, so that each half of the line keeps its state in its own CPU's caches); if it
    /// fails, the network comes back with its sentence.
    pub fn start_with(
        mut net: Network,
        split: Option<usize>,
        send: SendFn,
        prepare: Option<PrepareFn>,
    ) -> Result<Pipeline, NotSplit> {
        if let Some(why) = why_not_split(&net) {
            return Err(NotSplit::new(net, why));
        }
        let n = net.bus.len();
        if n < 2 {
            return Err(NotSplit::new(
                net,
                format!("{n} ESC on the line: nothing to split"),
            ));
        }
        let split = split.unwrap_or(n / 2);
        if split == 0 || split >= n {
            let why = format!(
                "split at position {split}: give a position from 1 to {}",
                n - 1
            );
            return Err(NotSplit::new(net, why));
        }
        net.set_deferred_pdi(true);
        net.settle();
        net.refresh_caches();
        let mut seg = Segment {
            escs: Vec::with_capacity(n - split),
            routes: net.routes[split..].to_vec(),
            rel: net.rel_passages[split..].to_vec(),
            pending: vec![None; n - split],
            pending_count: 0,
            send,
            sent: 0,
            send_errors: 0,
            first_send_error: None,
        };
        for k in split..n {
            let i = net.bus[k];
            seg.escs.push(net.nodes[i].esc.take());
        }
        let (jobs, jobs_rx) = sync_channel::<Job>(JOBS);
        let (free_tx, free) = sync_channel::<Job>(JOBS);
        for _ in 0..JOBS {
            // Cannot fail: the channel has room for every job and its receiver is alive.
            let _ = free_tx.send(Job::default());
        }
        // The segment goes to the worker once it runs, so that it is still here if the
        // thread cannot be started.
        let (seg_tx, seg_rx) = sync_channel::<Segment>(1);
        let (ready_tx, ready_rx) = sync_channel::<Result<(), String>>(1);
        let kick = Arc::new(AtomicBool::new(false));
        let kicked = kick.clone();
        let worker = std::thread::Builder::new()
            .name("ecat-sim-back".into())
            .spawn(move || {
                let ready = prepare.map_or(Ok(()), |p| p());
                let failed = ready.is_err();
                let _ = ready_tx.send(ready);
                let mut seg = seg_rx.recv().ok()?;
                if !failed {
                    seg.run(jobs_rx, free_tx, &kicked);
                }
                Some(seg)
            });
        let worker = match worker {
            Ok(w) => w,
            Err(e) => {
                put_back(&mut net, split, seg);
                return Err(NotSplit::new(
                    net,
                    format!("cannot start a second thread: {e}"),
                ));
            }
        };
        let ready = ready_rx
            .recv()
            .unwrap_or_else(|_| Err("the second thread ended at once".into()));
        if let Err(e) = seg_tx.send(seg) {
            // Only if the new thread died before receiving: take the segment back.
            put_back(&mut net, split, e.0);
            return Err(NotSplit::new(net, "the second thread ended at once"));
        }
        if let Err(why) = ready {
            // The worker hands the segment straight back.
            if let Ok(Some(seg)) = worker.join() {
                put_back(&mut net, split, seg);
            }
            return Err(NotSplit::new(net, why));
        }
        Ok(Pipeline {
            net,
            split,
            jobs,
            free,
            worker: Some(worker),
            kick,
            spare: None,
        })
    }

    /// Bus position of the first ESC the worker runs.
    pub fn split(&self) -> usize {
        self.split
    }

    /// Process `frame`, received at network time `now_ns`: the first half now, the second
    /// on the worker, which sends it back. Returns what happens to it: dropped frames never
    /// reach the worker; `Returned` means the worker will send it. The worker gets a
    /// heads-up first, so that it is awake when the first half is done.
    pub fn process(&mut self, frame: &[u8], now_ns: u64) -> FrameFate {
        self.wake_worker();
        let job = match self.spare.take() {
            Some(j) => Some(j),
            None => self.free.recv().ok(),
        };
        let Some(mut job) = job else {
            return Self::worker_gone();
        };
        job.frame.clear();
        job.frame.extend_from_slice(frame);
        let start = match self
            .net
            .begin(&mut job.frame, now_ns, RingPort::Main, &mut job.index)
        {
            Ok(s) => s,
            Err(fate) => {
                self.spare = Some(job);
                return fate;
            }
        };
        let mut walk = start.walk(&mut job.frame, &job.index, now_ns);
        self.net.walk_positions(&mut walk, 0..self.split);
        let (hop, passed_irq) = (walk.hop, walk.passed_irq);
        job.now_ns = now_ns;
        job.stop = start.stop;
        job.defer = start.defer;
        job.hop = hop;
        job.passed_irq = passed_irq;
        self.net.counters.returned += 1;
        if self.jobs.send(job).is_err() {
            return Self::worker_gone();
        }
        // In case it went back to sleep meanwhile.
        self.wake_worker();
        FrameFate::Returned {
            delay_ns: 0,
            duplicate: false,
        }
    }

    /// Tell the worker a frame is coming (cheap when it is awake).
    fn wake_worker(&self) {
        self.kick.store(true, Ordering::Release);
        if let Some(w) = &self.worker {
            w.thread().unpark();
        }
    }

    /// The worker ended (it can only have panicked): the frame cannot be finished.
    fn worker_gone() -> FrameFate {
        FrameFate::Dropped(crate::DropReason::NoSubDevice)
    }

    /// Run the first half's pending PDI reactions (the worker settles its own when idle);
    /// returns how many ran.
    pub fn settle(&mut self) -> usize {
        self.net.settle()
    }

    /// Stop the worker after the frames handed to it, put its ESCs back and return the whole
    /// network (settled) with the worker's report. `Err` only if the worker panicked (a bug
    /// in a device model, reported on stderr when it happened): its half of the line is gone.
    pub fn stop(mut self) -> Result<(Network, PipelineReport), String> {
        // Closing the job channel ends the worker's loop once it has run every job.
        self.wake_worker();
        let worker = self.worker.take();
        let Pipeline {
            mut net,
            split,
            jobs,
            free,
            ..
        } = self;
        drop(jobs);
        drop(free);
        let mut report = PipelineReport {
            split,
            ..PipelineReport::default()
        };
        let seg = match worker.map(JoinHandle::join) {
            Some(Ok(Some(seg))) => seg,
            _ => {
                return Err(format!(
                    "the simulator's second thread failed; SubDevices {split} and on are lost"
                ))
            }
        };
        let (sent, send_errors, first_send_error) =
            (seg.sent, seg.send_errors, seg.first_send_error.clone());
        put_back(&mut net, split, seg);
        report.sent = sent;
        report.send_errors = send_errors;
        report.first_send_error = first_send_error;
        Ok((net, report))
    }
}

/// Why `net` cannot run on two threads, if it cannot: the ring, faults and events act on the
/// whole line at once.
fn why_not_split(net: &Network) -> Option<String> {
    if net.ring.closed || net.ring.cut.is_some() {
        Some("the network is a ring".into())
    } else if net.faults.active() {
        Some("the network injects faults".into())
    } else if !net.events.is_empty() {
        Some("the network has scheduled events".into())
    } else {
        None
    }
}

/// Put a segment's ESCs, routes and pending reactions back into the network it came from
/// and settle.
fn put_back(net: &mut Network, split: usize, seg: Segment) {
    for (j, esc) in seg.escs.into_iter().enumerate() {
        let k = split + j;
        let i = net.bus[k];
        net.nodes[i].esc = esc;
        net.routes[k] = seg.routes[j];
        net.pdi_late[k] = seg.pending[j];
    }
    net.pdi_late_count += seg.pending_count;
    net.settle();
}
impl Segment {
    /// The worker: run each job's second half, send it, return the job; settle its own
    /// pending reactions when no job is waiting; stay awake (polling) for a while after a
    /// job or a heads-up (`kick`), then sleep until the next heads-up.
    fn run(&mut self, jobs: Receiver<Job>, free: SyncSender<Job>, kick: &AtomicBool) {
        let mut awake_until = Instant::now() + AWAKE;
        loop {
            match jobs.try_recv() {
                Ok(mut job) => {
                    self.walk(&mut job);
                    match (self.send)(&job.frame) {
                        Ok(()) => self.sent += 1,
                        Err(e) => {
                            self.send_errors += 1;
                            self.first_send_error.get_or_insert_with(|| e.to_string());
                        }
                    }
                    // The caller may be gone already (stopping): then the job is not needed.
                    let _ = free.send(job);
                    awake_until = Instant::now() + AWAKE;
                    continue;
                }
                Err(TryRecvError::Disconnected) => break,
                Err(TryRecvError::Empty) => {}
            }
            if self.pending_count > 0 {
                self.settle();
                continue;
            }
            if kick.swap(false, Ordering::Acquire) {
                awake_until = Instant::now() + AWAKE;
            }
            if Instant::now() < awake_until {
                std::hint::spin_loop();
                continue;
            }
            // A heads-up given before this unparks at once (the token is kept).
            std::thread::park_timeout(NAP);
        }
        self.settle();
    }

    /// Walk the job's frame past this segment's ESCs and finish it.
    fn walk(&mut self, job: &mut Job) {
        let mut walk = Walk {
            frame: &mut job.frame,
            index: &job.index,
            now_ns: job.now_ns,
            stop: job.stop,
            defer: job.defer,
            hop: job.hop,
            passed_irq: job.passed_irq,
        };
        for j in 0..self.escs.len() {
            let Some(rel) = self.rel[j] else {
                continue;
            };
            walk.step(
                &mut self.escs[j],
                &mut self.routes[j],
                rel,
                Pending {
                    at: &mut self.pending[j],
                    count: &mut self.pending_count,
                },
            );
        }
        walk.finish();
        if let Ok(mut eth) = EthernetFrame::new_checked(&mut job.frame[..]) {
            eth.mark_returned();
        }
    }

    /// Run this segment's pending PDI reactions.
    fn settle(&mut self) {
        if self.pending_count == 0 {
            return;
        }
        for j in 0..self.pending.len() {
            if let Some(t) = self.pending[j].take() {
                if let Some(esc) = self.escs[j].as_mut() {
                    react_late(esc, &mut self.routes[j], t);
                }
            }
        }
        self.pending_count = 0;
    }
}
