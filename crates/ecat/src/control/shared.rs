//! What the control server and the cycling application share, and the application side of it.
//!
//! The server thread never touches the [`Runtime`]. It reads *statics* (SubDevices, layout,
//! configurations: copied when the application attaches its runtime, outside the cycle) and
//! asks the application's thread for *live* figures by raising a flag; the [`Endpoint`], called
//! from [`Runtime::send_acyclic`], copies states, images and counters into buffers sized at
//! attach time (no allocation on the real-time thread; `try_lock`, so a reader holding the lock
//! costs a cycle nothing but a skipped copy). Bus access (register reads and writes, state
//! requests) comes as [`Job`]s through a bounded channel: the endpoint submits at most one
//! datagram at a time into the runtime's acyclic frame engine and hands the job back when its
//! answer came. SDO transfers go through the runtime's own [`SdoClient`].

use super::protocol::{ConfigRecord, ConfigWire, DomainRecord, SubDeviceRecord};
use crate::frame::{Handle, Status};
use crate::mailbox::service::SdoClient;
use crate::runtime::Runtime;
use ecat_wire::al::AlState;
use ecat_wire::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

/// Jobs that may wait for the application's thread.
pub const JOB_QUEUE: usize = 16;

/// Copied once per attach (or per scan in the idle phase).
#[derive(Default)]
pub struct Statics {
    /// True while a runtime cycles.
    pub active: bool,
    /// The SubDevices.
    pub subdevices: Vec<SubDeviceRecord>,
    /// The process data configuration per position.
    pub pdos: Vec<ConfigWire>,
    /// Domains (their images and counters are in [`Live`]).
    pub domains: Vec<DomainRecord>,
    /// The application's slave configurations (C API).
    pub configs: Vec<ConfigRecord>,
    /// SDO access while cycling.
    pub sdo: Option<SdoClient>,
    /// Bus jobs while cycling.
    pub jobs: Option<SyncSender<Job>>,
    /// The application's MainDevice before activation (see [`super::idle`]).
    pub idle: Option<super::idle::IdleDevice>,
    /// DC reference clock position.
    pub dc_reference: Option<u16>,
    /// Link MAC.
    pub mac: [u8; 6],
    /// Cyclic frames per cycle and bytes per cycle.
    pub cyclic_layout: (usize, usize),
}

/// Live per-SubDevice state.
#[derive(Debug, Clone, Copy, Default)]
pub struct LiveSub {
    /// AL status word.
    pub status: u16,
    /// AL status code.
    pub code: u16,
    /// Not answering.
    pub lost: bool,
}

/// Live figures, written by the application's thread on request.
#[derive(Default)]
pub struct Live {
    /// Bumped at every copy.
    pub seq: u64,
    /// Per SubDevice.
    pub subs: Vec<LiveSub>,
    /// Per domain: image, WKC, expected WKC, state name.
    pub domains: Vec<(Vec<u8>, u32, u32, &'static str)>,
    /// Cycles sent.
    pub cycles: u64,
    /// Frames sent, received (cyclic and acyclic), cyclic frames lost, cyclic frames that came
    /// back after their cycle.
    pub frames: (u64, u64, u64, u64),
    /// Acyclic timeouts.
    pub timeouts: u64,
    /// DC time of the last cycle.
    pub dc_time: Option<u64>,
    /// Sync monitor of the last cycle.
    pub sync_monitor: Option<u32>,
}

/// Shared between the server thread and the application.
pub struct Shared {
    /// Master index.
    pub index: u32,
    /// Link name.
    pub link: String,
    /// When the master started.
    pub started: Instant,
    /// Statics.
    pub statics: Mutex<Statics>,
    /// Live figures.
    pub live: Mutex<Live>,
    /// Signalled when `live` was refreshed.
    pub fresh: Condvar,
    /// A reader wants `live` refreshed.
    pub wanted: AtomicBool,
    /// Jobs handed to the application and not yet taken: its cycle looks at the channel only
    /// while this is not 0.
    pub queued: AtomicUsize,
    /// The application time last given (C API), ns since 2000.
    pub app_time: AtomicU64,
    /// Frame counter samples for the rates `ecat master` shows.
    pub history: Mutex<super::rates::History>,
}

/// A bus access waiting for the application's acyclic frame.
pub struct Job {
    /// What to do.
    pub kind: JobKind,
    /// Where the result goes.
    pub reply: Arc<JobReply>,
}

/// What a job does.
pub enum JobKind {
    /// Read `data.len()` bytes at `address` of the SubDevice at `position` into `data`.
    Read {
        /// Position.
        position: usize,
        /// Register.
        address: u16,
        /// Buffer (its length is the size).
        data: Vec<u8>,
    },
    /// Write `data` at `address`.
    Write {
        /// Position.
        position: usize,
        /// Register.
        address: u16,
        /// Bytes.
        data: Vec<u8>,
    },
    /// Limit SubDevices to a state (all if empty).
    State {
        /// Positions.
        positions: Vec<usize>,
        /// State.
        state: AlState,
    },
}

/// The working counter a job reports when the acyclic frame engine had no room for it.
pub const ENGINE_FULL: u16 = u16::MAX;

/// A finished job: its kind (with the data read) and the working counter (`None`: no such
/// SubDevice; [`ENGINE_FULL`]: not sent).
pub type JobResult = (JobKind, Option<u16>);

/// The slot a job's result lands in.
#[derive(Default)]
pub struct JobReply {
    /// The result.
    pub slot: Mutex<Option<JobResult>>,
    /// Signalled when it is there.
    pub done: Condvar,
}

impl JobReply {
    fn finish(&self, r: JobResult) {
        if let Ok(mut s) = self.slot.lock() {
            *s = Some(r);
        }
        self.done.notify_all();
    }
}

/// The application's end, held by the [`Runtime`] and served from its send.
pub struct Endpoint {
    shared: Arc<Shared>,
    jobs: Receiver<Job>,
    running: Option<(Handle, Job)>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "control::Endpoint(master {})", self.shared.index)
    }
}

impl Endpoint {
    /// A new endpoint taking jobs from `jobs`.
    pub fn new(shared: Arc<Shared>, jobs: Receiver<Job>) -> Endpoint {
        Endpoint {
            shared,
            jobs,
            running: None,
        }
    }

    /// Called at the end of every receive on the application's thread (the images then hold
    /// this cycle's inputs and working counters): refresh the live figures if a reader asked.
    /// Allocates nothing; one flag read when nobody asked.
    #[inline]
    pub fn publish(&self, rt: &Runtime) {
        if self.shared.wanted.load(Ordering::Acquire) {
            self.publish_now(rt);
        }
    }

    #[cold]
    fn publish_now(&self, rt: &Runtime) {
        if let Ok(mut live) = self.shared.live.try_lock() {
            publish(&mut live, rt);
            self.shared.wanted.store(false, Ordering::Release);
            drop(live);
            self.shared.fresh.notify_all();
        }
    }

    /// True while a bus job is in flight or waiting: only then has [`Endpoint::step`]
    /// anything to do (one flag read otherwise).
    #[inline]
    pub fn busy(&self) -> bool {
        self.running.is_some() || self.shared.queued.load(Ordering::Acquire) != 0
    }

    /// Called once per send on the application's thread, after the cyclic frames went out:
    /// move the current bus job along (at most one datagram in flight). Allocates nothing.
    pub fn step(&mut self, rt: &mut Runtime) {
        if let Some((h, _)) = &self.running {
            let h = *h;
            let engine = rt.engine_mut();
            let wkc = match engine.status(h) {
                Status::Pending => return,
                Status::Done => engine.response(h),
                Status::Failed | Status::Stale => None,
            };
            let Some((_, mut job)) = self.running.take() else {
                return;
            };
            let wkc = wkc.map(|(d, wkc)| {
                if let JobKind::Read { data, .. } = &mut job.kind {
                    let n = data.len().min(d.len());
                    data[..n].copy_from_slice(&d[..n]);
                }
                wkc
            });
            engine.release(h);
            job.reply.finish((job.kind, Some(wkc.unwrap_or(0))));
            return;
        }
        let Ok(job) = self.jobs.try_recv() else {
            return;
        };
        self.shared.queued.fetch_sub(1, Ordering::Relaxed);
        let station = |p: usize| rt.supervisor().states().nth(p).map(|s| s.info.station);
        let (cmd, position, address) = match &job.kind {
            JobKind::Read {
                position, address, ..
            } => (Command::Fprd, *position, *address),
            JobKind::Write {
                position, address, ..
            } => (Command::Fpwr, *position, *address),
            JobKind::State { positions, state } => {
                let n = rt.supervisor().states().count();
                for p in 0..n {
                    if positions.is_empty() || positions.contains(&p) {
                        rt.limit_state(p, *state);
                    }
                }
                return job.reply.finish((job.kind, Some(0)));
            }
        };
        let Some(station) = station(position) else {
            return job.reply.finish((job.kind, None));
        };
        let data = match &job.kind {
            JobKind::Read { data, .. } | JobKind::Write { data, .. } => data,
            JobKind::State { .. } => return,
        };
        let addr = station as u32 | (address as u32) << 16;
        match rt.engine_mut().submit_with(cmd, addr, data, 2) {
            Ok(h) => self.running = Some((h, job)),
            Err(_) => job.reply.finish((job.kind, Some(ENGINE_FULL))),
        }
    }
}

/// Copy the live figures (into buffers sized at attach; no allocation).
fn publish(live: &mut Live, rt: &Runtime) {
    live.seq += 1;
    for (slot, s) in live.subs.iter_mut().zip(rt.supervisor().states()) {
        *slot = LiveSub {
            status: s.status.0,
            code: s.code.0,
            lost: s.lost,
        };
    }
    for (slot, d) in live.domains.iter_mut().zip(rt.domains()) {
        if slot.0.len() == d.image().len() {
            slot.0.copy_from_slice(d.image());
        }
        slot.1 = d.wkc();
        slot.2 = d.expected_wkc();
        slot.3 = d.evaluate().name();
    }
    let (cy, en, _) = rt.counters();
    live.cycles = rt.cycle_count();
    live.frames = (
        cy.frames_sent + en.frames_sent,
        cy.frames_received + en.frames_received,
        cy.frames_lost,
        cy.frames_late,
    );
    live.timeouts = en.timeouts;
    live.dc_time = rt.dc_time();
    live.sync_monitor = rt.dc_sync_monitor_ns();
}

/// The statics and live buffers for `rt` (called outside the cycle).
pub fn attach(shared: &Shared, rt: &Runtime, jobs: SyncSender<Job>) {
    let subs: Vec<SubDeviceRecord> = rt
        .supervisor()
        .states()
        .map(|s| SubDeviceRecord::from(s.info))
        .collect();
    let n = subs.len();
    let pdos = (0..n)
        .map(|p| {
            rt.supervisor()
                .config(p)
                .map(super::protocol::config_to_wire)
                .unwrap_or_default()
        })
        .collect();
    let domains: Vec<DomainRecord> = rt.domains().iter().map(DomainRecord::from).collect();
    {
        let mut live = shared.live.lock().unwrap_or_else(|e| e.into_inner());
        live.subs = vec![LiveSub::default(); n];
        live.domains = domains
            .iter()
            .map(|d| (d.image.clone(), 0, d.wkc.1, "zero"))
            .collect();
    }
    let mut st = shared.statics.lock().unwrap_or_else(|e| e.into_inner());
    st.active = true;
    st.dc_reference = subs
        .iter()
        .position(|s| s.dc.is_some_and(|d| d.0))
        .map(|p| p as u16);
    st.subdevices = subs;
    st.pdos = pdos;
    st.domains = domains;
    st.sdo = Some(rt.sdo_client());
    st.jobs = Some(jobs);
    st.idle = None;
    st.mac = rt.link().mac();
    st.cyclic_layout = rt.frame_layout();
}
