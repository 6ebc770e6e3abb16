//! The ecat rows: the real MainDevice on one link against the simulated network.
//!
//! Open the link, scan, activate (configuration from the SII), bring every SubDevice to OP,
//! apply the cycle thread's real-time settings, then `cycle::run` for the window with seed
//! 003's kind of application (read every input byte, count every output byte up). The row
//! carries every `Perf` figure (wake-up to data back included), the frame counters of the
//! window (bring-up losses are not counted against it, as for ethercrab and the floors), WKC
//! errors (cycles in which a domain was not complete while every SubDevice was in OP) and
//! overruns. [`Setup`] chooses how the thread is prepared: the bench's settings, or with
//! `ecat run`'s defaults, or not at all (an ordinary thread), for the wake-up comparison.

use super::floor::{Echo, Timer};
use super::row::{some, Row};
use ecat::cycle::{self, mono_ns, realtime_setup, CycleOptions, LoopCounters};
use ecat::domain::DomainState;
use ecat::link::{LinkOptions, RecvMode};
use ecat::perf::{Metric, Perf, Summary};
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_wire::al::AlState;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes per cycle of the cyclic frames for `network`, found on the in-process simulator
/// (so the echo floor sends a frame of the same size).
pub fn cyclic_frame_len(network: &str) -> Result<usize, String> {
    let mut md = MainDevice::open(&format!("sim:{network}")).map_err(|e| e.to_string())?;
    md.scan().map_err(|e| e.to_string())?;
    let rt = md
        .activate(Activation::default())
        .map_err(|e| e.to_string())?;
    Ok(rt.frame_layout().1)
}

/// How the measured thread is prepared before the cycle starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// `realtime_setup` with the options given (the bench's or `ecat run`'s).
    Realtime,
    /// Nothing at all: an ordinary SCHED_OTHER thread with the timer slack it inherited
    /// (Linux's default 50 µs).
    Plain,
}

/// The echo floor measured with an ecat row: the interface, the frame size, and how long the
/// cycle and the echo run in turn (ns).
#[derive(Debug, Clone, Copy)]
pub struct PairedFloor<'a> {
    /// Interface of the echo socket (the row's link's).
    pub iface: &'a str,
    /// Echo frame size (the cyclic frames' bytes).
    pub len: usize,
    /// Window of each turn.
    pub window: u64,
}

/// One ecat row on `spec` (e.g. `raw:ecb1a`). With `floor`, the cycle alternates with the echo
/// floor (same thread, same settings, same receive mode, same peer thread) in windows, each
/// running for `opts.duration_ns` in all, and the row carries the floor's round trip; the
/// SubDevices stay in OP through the echo's windows (shorter than their 100 ms process-data
/// watchdog).
pub fn ecat_row(
    name: &str,
    spec: &str,
    busy: bool,
    opts: &CycleOptions,
    setup: Setup,
    floor: Option<PairedFloor>,
    stop: &AtomicBool,
) -> Row {
    let r = Measured::bring_up(spec, busy, opts.period_ns).and_then(|mut m| {
        let mut echo = match floor {
            Some(f) => Some((Echo::open(f.iface, busy, f.len)?, f.window)),
            None => None,
        };
        let notes = m.setup(opts, setup)?;
        match &mut echo {
            None => m.cycle(opts, opts.duration_ns, stop)?,
            Some((e, window)) => alternate(&mut m, opts, *window, stop, |w| {
                e.run(mono_ns() + opts.period_ns, opts.period_ns, w, stop)
            })?,
        }
        let mut row = m.finish(opts, notes);
        if let Some((e, _)) = echo {
            row.floor = e.round_trip();
            row.floor_lost = e.lost();
        }
        Ok(row)
    });
    match r {
        Ok(mut r) => {
            r.name = name.into();
            r
        }
        Err(e) => Row::unavailable(name, spec, e),
    }
}

/// Run the cycle and `other` in turn, in windows of `window` ns, until each has run for
/// `opts.duration_ns` (or `stop` is set).
fn alternate(
    m: &mut Measured,
    opts: &CycleOptions,
    window: u64,
    stop: &AtomicBool,
    mut other: impl FnMut(u64),
) -> Result<(), String> {
    let window = window.max(opts.period_ns);
    let mut left = opts.duration_ns;
    while left > 0 && !stop.load(Ordering::Relaxed) {
        let w = window.min(left);
        m.cycle(opts, w, stop)?;
        other(w);
        left -= w;
    }
    Ok(())
}

/// One wake-up row and its bare timer: the ecat cycle on `spec` and a bare timer in the same
/// thread under the same settings (`opts`, `setup`: priority, CPU placement, timer slack,
/// memory locking), alternating in windows of `window` ns for `opts.duration_ns` each, so
/// that both see the machine in the same moments. The SubDevices stay in OP through the
/// timer's windows (shorter than their 100 ms process-data watchdog).
pub fn wake_pair(
    name: &str,
    timer_name: &str,
    spec: &str,
    opts: &CycleOptions,
    setup: Setup,
    window: u64,
    stop: &AtomicBool,
) -> (Row, Row) {
    let mut timer = Timer::default();
    let r = Measured::bring_up(spec, false, opts.period_ns).and_then(|mut m| {
        let notes = m.setup(opts, setup)?;
        alternate(&mut m, opts, window, stop, |w| {
            timer.run(mono_ns() + opts.period_ns, opts.period_ns, w, stop)
        })?;
        Ok((m.finish(opts, notes.clone()), notes))
    });
    match r {
        Ok((mut row, notes)) => {
            row.name = name.into();
            (row, timer.row(timer_name, notes.join(", ")))
        }
        Err(e) => (
            Row::unavailable(name, spec, e.clone()),
            Row::unavailable(timer_name, "-", e),
        ),
    }
}

/// A MainDevice in OP on one link and what its cycle windows measured.
struct Measured {
    rt: Runtime,
    spec: String,
    busy: bool,
    describe: String,
    before: ecat::cyclic::CyclicCounters,
    perf: Perf,
    counters: LoopCounters,
    wkc_errors: u64,
}

impl Measured {
    /// Open the link, scan, activate and bring every SubDevice to OP.
    fn bring_up(spec: &str, busy: bool, period: u64) -> Result<Measured, String> {
        let lo = LinkOptions {
            recv_mode: if busy {
                RecvMode::BusyPoll
            } else {
                RecvMode::Block
            },
            ..Default::default()
        };
        let link = ecat::link::open_with(spec, lo).map_err(|e| e.to_string())?;
        let describe = link.describe();
        let mut md = MainDevice::with_link(link);
        md.scan().map_err(|e| format!("scan: {e}"))?;
        let mut rt = md
            .activate(Activation::default())
            .map_err(|e| format!("activate: {e}"))?;
        let period = period.max(100_000);
        let bringup = rt.run_until_state(AlState::Op, period, 5_000_000_000 / period);
        while rt.next_event().is_some() {}
        bringup.map_err(|e| format!("bring-up to OP: {e}"))?;
        let (before, _, _) = rt.counters();
        Ok(Measured {
            rt,
            spec: spec.into(),
            busy,
            describe,
            before,
            perf: Perf::new(),
            counters: LoopCounters::default(),
            wkc_errors: 0,
        })
    }

    /// Prepare the calling thread; the notes say what it got.
    fn setup(&mut self, opts: &CycleOptions, setup: Setup) -> Result<Vec<String>, String> {
        match setup {
            Setup::Realtime => realtime_setup(opts).map_err(|e| e.to_string()),
            Setup::Plain => Ok(vec![format!(
                "SCHED_OTHER, timer slack {} ns",
                timer_slack_ns()
            )]),
        }
    }

    /// Run the cycle for `duration` ns with seed 003's kind of application (read every input
    /// byte, count every output byte up), counting WKC errors while every SubDevice is in OP.
    fn cycle(
        &mut self,
        opts: &CycleOptions,
        duration: u64,
        stop: &AtomicBool,
    ) -> Result<(), String> {
        let wkc_errors = &mut self.wkc_errors;
        let mut app = |rt: &mut Runtime, cycle: u64| {
            if rt.supervisor().all_running() {
                for d in 0..rt.domains().len() {
                    if rt.domain(d).state() != DomainState::Complete {
                        *wkc_errors += 1;
                    }
                }
            }
            let d = rt.domain_mut(0);
            let mut sink = 0u8;
            for b in d.inputs() {
                sink ^= *b;
            }
            std::hint::black_box(sink);
            for (i, b) in d.outputs_mut().iter_mut().enumerate() {
                *b = (cycle as u8).wrapping_add(i as u8);
            }
        };
        let mut report = |_: &mut Perf, rt: &mut Runtime, _: &LoopCounters| {
            while rt.next_event().is_some() {}
        };
        let o = CycleOptions {
            duration_ns: duration,
            ..opts.clone()
        };
        let c = cycle::run(
            &mut self.rt,
            &o,
            stop,
            &mut self.perf,
            &mut app,
            &mut report,
        )
        .map_err(|e| format!("cycle: {e}"))?;
        self.counters.cycles += c.cycles;
        self.counters.overruns += c.overruns;
        Ok(())
    }

    /// The row of every window, after leaving OP politely.
    fn finish(mut self, opts: &CycleOptions, notes: Vec<String>) -> Row {
        let (cy, _, _) = self.rt.counters();
        let totals: [Summary; ecat::perf::METRICS] =
            core::array::from_fn(|i| self.perf.total(Metric::ALL[i]));
        // Leave politely (the peer is replaced for the next row anyway).
        let _ = self
            .rt
            .run_until_state(AlState::Init, opts.period_ns.max(100_000), 200);
        Row {
            name: String::new(),
            link: format!("{} ({})", self.spec, self.describe),
            busy: self.busy,
            available: true,
            cycles: self.counters.cycles,
            round_trip: some(totals[Metric::RoundTrip as usize]),
            wake: some(totals[Metric::WakeLatency as usize]),
            task: some(totals[Metric::TaskDuration as usize]),
            back: some(totals[Metric::DataBack as usize]),
            cycle_time: some(totals[Metric::CycleTime as usize]),
            frames_sent: cy.frames_sent - self.before.frames_sent,
            frames_lost: cy.frames_lost - self.before.frames_lost,
            wkc_errors: self.wkc_errors,
            overruns: self.counters.overruns,
            perf: Some(totals),
            note: notes.join(", "),
            ..Default::default()
        }
    }
}

/// The calling thread's timer slack (ns).
pub fn timer_slack_ns() -> u64 {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer and returns the slack.
    unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) as u64 }
}
