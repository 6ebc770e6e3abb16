//! Wake-up latency of `ecat run`'s own settings, side by side in one run: the real cycle
//! (`ecat raw` against the simulated network on the blocking peer) with `ecat run`'s default
//! options (SCHED_FIFO 80 and locked memory when permitted, timer slack 1 ns, no CPU pinning),
//! with `--no-rt` (SCHED_OTHER, timer slack still 1 ns), on a plain thread that was not
//! prepared at all (SCHED_OTHER with Linux's 50 µs of timer slack), and the bench's bare timer
//! (a pinned SCHED_FIFO thread that only sleeps). The rows run in the bench's rounds like every
//! other row; the ratios divide medians of medians by the bare timer's.

use super::report::{cell, find};
use super::rounds::{ratio, Agg, Fig};
use ecat::cycle::CycleOptions;

/// The wake-up rows: (name, `ecat run` flags they stand for).
pub const ROWS: [(&str, &str); 3] = [
    ("ecat run (default)", "no options"),
    ("ecat run --no-rt", "--no-rt"),
    ("plain SCHED_OTHER", "an unprepared thread"),
];

/// The target: the default run's median wake-up latency within this factor of the bare
/// timer's.
pub const TARGET: f64 = 1.1;

/// The cycle options of wake-up row `i` (as `ecat run` builds them), and whether the thread
/// is prepared at all.
pub fn options(i: usize, period: u64, duration: u64) -> (CycleOptions, bool) {
    let o = CycleOptions {
        period_ns: period,
        duration_ns: duration,
        priority: None,
        cpu: None,
        lock_memory: false,
        busy_wait_ns: 0,
        report_interval_ns: u64::MAX / 4,
        auto_realtime: i == 0,
    };
    (o, i < 2)
}

/// The section as text: one line per setting with its ratio to the bare timer, then the
/// target.
pub fn text(rows: &[Agg], timer: &Agg, rounds: usize) -> String {
    let mut o = format!(
        "wake-up latency of ecat run's settings (the ecat raw cycle on the blocking peer; µs over {rounds} round(s), p50±spread p99/max):\n"
    );
    o.push_str(&format!(
        "  {:<20} {:>22} {:>10}  {}\n",
        "setting", "wake-up latency", "/timer", "what the thread got"
    ));
    let all = rows.iter().chain(std::iter::once(timer));
    for r in all {
        if !r.available() {
            o.push_str(&format!(
                "  {:<20} not available ({})\n",
                r.name,
                r.why_not()
            ));
            continue;
        }
        let x = ratio(r, Fig::Wake, Some(timer), Fig::Wake);
        o.push_str(&format!(
            "  {:<20} {:>22} {:>10}  {}\n",
            r.name,
            cell(r.fig(Fig::Wake)),
            x.map_or("-".into(), |v| format!("{v:.2}x")),
            r.first().map_or("", |f| f.note.as_str())
        ));
    }
    o.push_str(&super::report::missed_rounds(rows));
    o.push_str(
        "  (/timer = the setting's median of medians of wake-up latency / the bare timer's)\n",
    );
    o
}

/// The default run's ratio to the bare timer.
pub fn default_ratio(rows: &[Agg], timer: &Agg) -> Option<f64> {
    let d = find(rows, ROWS[0].0)?;
    ratio(d, Fig::Wake, Some(timer), Fig::Wake)
}

/// The target line of the default run.
pub fn target_text(rows: &[Agg], timer: &Agg) -> String {
    let r = default_ratio(rows, timer);
    format!(
        "  wake-up latency of ecat run's defaults vs the bare timer: {} (target ≤ {TARGET}) {}\n",
        r.map_or("n/a".into(), |v| format!("{v:.2}")),
        if r.is_some_and(|v| v <= TARGET) {
            "met"
        } else {
            "NOT met"
        }
    )
}
