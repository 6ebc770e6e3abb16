//! The cycle thread's side of a [`crate::runtime::PyRuntime`]: what it shares with Python
//! and the body it runs.
//!
//! Each cycle, between processing the received frames and sending (ecat's `app` slot in
//! `ecat::cycle::run`): advance virtual time if the network is simulated on it, mirror the
//! process image (inputs out, outputs in), move supervisor events into the queue Python reads,
//! and run the jobs Python queued (state requests, queries). Once per report interval the
//! figures are copied out for `Runtime.perf()`. Nothing here takes the GIL.

use crate::image::Mirrors;
use ecat::clock::VirtualTime;
use ecat::cycle::{self, CycleOptions, LoopCounters};
use ecat::latency_hold::LatencyHold;
use ecat::perf::{Metric, Perf, Summary, METRICS};
use ecat::runtime::Runtime;
use ecat::supervisor::Event;
use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// An event as Python gets it: (kind, position, message, code, data). Kinds: lost, found,
/// reached, refused (code: AL status code), startup_failed, startup_skipped (an optional
/// startup request failed and was passed over), pdo_warning (a PDO write refused or not
/// allowed; the SubDevice goes on), pdo_mismatch (SAFEOP refused, code: AL status code, while
/// its PDOs differ from the configuration), wrong_device, group_connected,
/// group_disconnected, group_ready (position: the group head's; code: the group number),
/// emergency (code: the emergency error code; data: error register and the 5 manufacturer
/// bytes).
pub type QueuedEvent = (&'static str, u16, String, u32, Vec<u8>);

fn queued(e: Event) -> QueuedEvent {
    let msg = e.to_string();
    let group = |kind, g: usize, m: std::ops::Range<usize>| (kind, m.start as u16, g as u32);
    let (kind, position, code) = match e {
        Event::Lost { who, .. } => ("lost", who.position, 0),
        Event::Found { who, .. } => ("found", who.position, 0),
        Event::Reached { who, .. } => ("reached", who.position, 0),
        Event::Refused { who, code, .. } => ("refused", who.position, code.0 as u32),
        Event::StartupFailed { who, .. } => ("startup_failed", who.position, 0),
        Event::StartupSkipped { who, .. } => ("startup_skipped", who.position, 0),
        Event::PdoWarning { who, .. } => ("pdo_warning", who.position, 0),
        Event::PdoMismatch { who, code, .. } => ("pdo_mismatch", who.position, code.0 as u32),
        Event::WrongDevice { who, .. } => ("wrong_device", who.position, 0),
        Event::GroupConnected {
            group: g, members, ..
        } => group("group_connected", g, members),
        Event::GroupDisconnected {
            group: g, members, ..
        } => group("group_disconnected", g, members),
        Event::GroupReady {
            group: g, members, ..
        } => group("group_ready", g, members),
        Event::DcDelaysMeasured { corrected, .. } => ("dc_delays_measured", 0, corrected as u32),
    };
    (kind, position, msg, code, Vec::new())
}

/// A query or request from Python, run on the Runtime at the next cycle.
pub type Job = Box<dyn FnOnce(&mut Runtime) + Send>;

/// The cycle thread; it hands the Runtime back when it ends.
pub type CycleThread = JoinHandle<(Runtime, ecat::Result<LoopCounters>)>;

/// What the Python side and the cycle thread share.
pub struct Shared {
    /// The process image mirrors.
    pub mirrors: Mirrors,
    /// Events waiting for Python.
    pub events: Mutex<VecDeque<QueuedEvent>>,
    /// Signalled when events arrive.
    pub events_cv: Condvar,
    /// Jobs Python queued for the next cycle.
    pub jobs: Mutex<Vec<Job>>,
    /// Set to end the loop.
    pub stop: AtomicBool,
    /// The figures as of the last report.
    pub perf: Mutex<Option<[Summary; METRICS]>>,
    /// The loop counters as of the last report.
    pub loop_counters: Mutex<LoopCounters>,
}

impl Shared {
    /// Move the supervisor's events and the emergencies into the queue.
    pub fn drain_events(&self, rt: &mut Runtime) {
        let mut got = false;
        let mut q = self.events.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(e) = rt.next_event() {
            q.push_back(queued(e));
            got = true;
        }
        while let Some((p, e)) = rt.take_emergency() {
            let who = rt
                .supervisor()
                .states()
                .nth(p)
                .map(|s| s.info.who().to_string())
                .unwrap_or_else(|| format!("SubDevice {p}"));
            let msg = format!(
                "cycle {}: {who} sent emergency 0x{:04X} (error register 0x{:02X}, data {})",
                rt.cycle_count(),
                e.error_code,
                e.error_register,
                e.data
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            );
            let mut data = vec![e.error_register];
            data.extend_from_slice(&e.data);
            q.push_back(("emergency", p as u16, msg, e.error_code as u32, data));
            got = true;
        }
        if got {
            self.events_cv.notify_all();
        }
    }

    /// Run the jobs Python queued.
    pub fn run_jobs(&self, rt: &mut Runtime) {
        if let Ok(mut j) = self.jobs.try_lock() {
            for job in j.drain(..) {
                job(rt);
            }
        }
    }
}

/// The thread's body: real-time setup (its notes or error go to `notes`), the latency hold
/// when `hold` (kept until the loop ends), then the loop.
pub fn cycle_body(
    mut rt: Runtime,
    opts: CycleOptions,
    hold: bool,
    sh: Arc<Shared>,
    vt: Option<VirtualTime>,
    period: u64,
    ntx: mpsc::SyncSender<ecat::Result<Vec<String>>>,
) -> (Runtime, ecat::Result<LoopCounters>) {
    let mut _latency_hold = None;
    match cycle::realtime_setup(&opts) {
        Ok(mut n) => {
            if hold {
                match LatencyHold::acquire("pass latency_hold=False to cycle without it") {
                    Ok(h) => {
                        _latency_hold = Some(h);
                        n.push(ecat::latency_hold::NOTE.into());
                    }
                    Err(e) => eprintln!("ecat: {e}"),
                }
            }
            let _ = ntx.send(Ok(n));
        }
        Err(e) => {
            let _ = ntx.send(Err(e));
            return (rt, Ok(LoopCounters::default()));
        }
    }
    let mut perf = Perf::new();
    let s2 = sh.clone();
    let mut app = |rt: &mut Runtime, _c: u64| {
        if let Some(v) = &vt {
            v.advance(period);
        }
        sh.mirrors.inputs_out(rt);
        sh.mirrors.outputs_in(rt);
        sh.drain_events(rt);
        sh.run_jobs(rt);
    };
    let mut report = |perf: &mut Perf, _rt: &mut Runtime, c: &LoopCounters| {
        let t: [Summary; METRICS] = core::array::from_fn(|i| perf.total(Metric::ALL[i]));
        *s2.perf.lock().unwrap_or_else(|p| p.into_inner()) = Some(t);
        *s2.loop_counters.lock().unwrap_or_else(|p| p.into_inner()) = *c;
    };
    let r = cycle::run(&mut rt, &opts, &sh.stop, &mut perf, &mut app, &mut report);
    let t: [Summary; METRICS] = core::array::from_fn(|i| perf.total(Metric::ALL[i]));
    *sh.perf.lock().unwrap_or_else(|p| p.into_inner()) = Some(t);
    if let Ok(c) = &r {
        *sh.loop_counters.lock().unwrap_or_else(|p| p.into_inner()) = *c;
    }
    (rt, r)
}
