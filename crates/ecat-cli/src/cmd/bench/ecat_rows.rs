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

use super::row::{some, Row};
use ecat::cycle::{self, realtime_setup, CycleOptions, LoopCounters};
use ecat::domain::DomainState;
use ecat::link::{LinkOptions, RecvMode};
use ecat::perf::{Metric, Perf, Summary};
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_wire::al::AlState;
use std::sync::atomic::AtomicBool;

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

/// One ecat row on `spec` (e.g. `raw:ecb1a`).
pub fn ecat_row(
    name: &str,
    spec: &str,
    busy: bool,
    opts: &CycleOptions,
    setup: Setup,
    stop: &AtomicBool,
) -> Row {
    match measure(spec, busy, opts, setup, stop) {
        Ok(mut r) => {
            r.name = name.into();
            r
        }
        Err(e) => Row::unavailable(name, spec, e),
    }
}

fn measure(
    spec: &str,
    busy: bool,
    opts: &CycleOptions,
    setup: Setup,
    stop: &AtomicBool,
) -> Result<Row, String> {
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
    let period = opts.period_ns.max(100_000);
    let bringup = rt.run_until_state(AlState::Op, period, 5_000_000_000 / period);
    while rt.next_event().is_some() {}
    bringup.map_err(|e| format!("bring-up to OP: {e}"))?;
    let notes = match setup {
        Setup::Realtime => realtime_setup(opts).map_err(|e| e.to_string())?,
        Setup::Plain => vec![format!("SCHED_OTHER, timer slack {} ns", timer_slack_ns())],
    };
    let (before, _, _) = rt.counters();
    let mut perf = Perf::new();
    let mut wkc_errors = 0u64;
    let mut app = |rt: &mut Runtime, cycle: u64| {
        if rt.supervisor().all_running() {
            for d in 0..rt.domains().len() {
                if rt.domain(d).state() != DomainState::Complete {
                    wkc_errors += 1;
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
    let counters = cycle::run(&mut rt, opts, stop, &mut perf, &mut app, &mut report)
        .map_err(|e| format!("cycle: {e}"))?;
    let (cy, _, _) = rt.counters();
    let totals: [Summary; ecat::perf::METRICS] =
        core::array::from_fn(|i| perf.total(Metric::ALL[i]));
    // Leave politely (the peer is replaced for the next row anyway).
    let _ = rt.run_until_state(AlState::Init, period, 200);
    Ok(Row {
        name: String::new(),
        link: format!("{spec} ({describe})"),
        busy,
        available: true,
        cycles: counters.cycles,
        round_trip: some(totals[Metric::RoundTrip as usize]),
        wake: some(totals[Metric::WakeLatency as usize]),
        task: some(totals[Metric::TaskDuration as usize]),
        back: some(totals[Metric::DataBack as usize]),
        cycle_time: some(totals[Metric::CycleTime as usize]),
        frames_sent: cy.frames_sent - before.frames_sent,
        frames_lost: cy.frames_lost - before.frames_lost,
        wkc_errors,
        overruns: counters.overruns,
        perf: Some(totals),
        note: notes.join(", "),
    })
}

/// The calling thread's timer slack (ns).
pub fn timer_slack_ns() -> u64 {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer and returns the slack.
    unsafe { libc::prctl(libc::PR_GET_TIMERSLACK) as u64 }
}
