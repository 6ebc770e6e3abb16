//! Wake-up latency of `ecat run`'s own settings, side by side in one run: the real cycle
//! (`ecat raw` against the simulated network on the blocking peer) with `ecat run`'s default
//! options (SCHED_FIFO 80 and locked memory when permitted, timer slack 1 ns, no CPU pinning),
//! with `--no-rt` (SCHED_OTHER, timer slack still 1 ns), and on a plain thread that was not
//! prepared at all (SCHED_OTHER with Linux's 50 µs of timer slack).
//!
//! Like for like: each setting's cycle is compared with a bare timer (a thread that only
//! sleeps to each boundary) in the same thread under the same settings (priority, CPU
//! placement, timer slack; memory is locked for the whole process once any row locks it), the
//! two alternating in windows of [`WINDOW_NS`] so both see the machine in the same moments.
//! On this shared VM (a kernel without preemption, builds running) a wake-up waits for
//! whatever the CPU is doing in the kernel, and the median of a window moved by about ±30 %
//! from one second to the next; two rows a minute apart differed by that much, alternating
//! windows do not. The rows run in the bench's rounds like every other row; a ratio is the
//! median of the rounds' ratios, with their spread.

use super::report::cell;
use super::rounds::{median, ratio, ratio_per_round, Agg, Fig};
use ecat::cycle::CycleOptions;

/// The wake-up rows: (name, `ecat run` flags they stand for).
pub const ROWS: [(&str, &str); 3] = [
    ("ecat run (default)", "no options"),
    ("ecat run --no-rt", "--no-rt"),
    ("plain SCHED_OTHER", "an unprepared thread"),
];

/// Name of a setting's bare timer.
pub fn timer_name(i: usize) -> String {
    format!("bare timer, {}", ROWS[i].1)
}

/// How long the cycle and the bare timer run in turn.
pub const WINDOW_NS: u64 = 50_000_000;

/// The target: the default run's median wake-up latency within this factor of the bare
/// timer's (with the same settings).
pub const TARGET: f64 = 1.1;

/// One setting over the rounds: its cycle and its bare timer.
#[derive(Debug, Clone, Default)]
pub struct Pair {
    /// The ecat cycle.
    pub cycle: Agg,
    /// The bare timer with the same settings.
    pub timer: Agg,
}

impl Pair {
    /// An empty pair for setting `i`.
    pub fn new(i: usize) -> Pair {
        Pair {
            cycle: Agg::new(ROWS[i].0),
            timer: Agg::new(&timer_name(i)),
        }
    }

    /// Cycle / timer: the median of the rounds' ratios.
    pub fn ratio(&self) -> Option<f64> {
        ratio(&self.cycle, Fig::Wake, Some(&self.timer), Fig::Wake)
    }

    /// Cycle / timer in each round.
    pub fn per_round(&self) -> Vec<Option<f64>> {
        ratio_per_round(&self.cycle, Fig::Wake, Some(&self.timer), Fig::Wake)
    }
}

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

/// Ratios as `1.02 (0.98, 1.03, 1.05)`: the median and each round's.
fn with_rounds(m: Option<f64>, rounds: &[Option<f64>]) -> String {
    let r: Vec<String> = rounds
        .iter()
        .map(|v| v.map_or("-".into(), |v| format!("{v:.2}")))
        .collect();
    format!(
        "{} ({})",
        m.map_or("-".into(), |v| format!("{v:.2}")),
        r.join(", ")
    )
}

/// The spread of the rounds' ratios around their median, in percent.
pub fn spread_pct(rounds: &[Option<f64>]) -> Option<f64> {
    let mut v: Vec<f64> = rounds.iter().flatten().copied().collect();
    let m = median(&mut v)?;
    let far = v.iter().map(|x| (x - m).abs()).fold(0.0, f64::max);
    (m > 0.0).then(|| far / m * 100.0)
}

/// The section as text: one line per setting (its cycle, its bare timer, the ratio round by
/// round), each setting against the default's bare timer, the bench's pinned bare timer, and
/// the target.
pub fn text(pairs: &[Pair], bench_timer: &Agg, rounds: usize) -> String {
    let mut o = format!(
        "wake-up latency of ecat run's settings: the ecat raw cycle (blocking peer) and a bare timer in the same thread under the same settings, alternating in {} ms windows; µs over {rounds} round(s), p50±spread p99/max:\n",
        WINDOW_NS / 1_000_000
    );
    o.push_str(&format!(
        "  {:<20} {:>22} {:>26} {:>26}  {}\n",
        "setting",
        "ecat cycle",
        "bare timer, same settings",
        "cycle/timer (rounds)",
        "what the thread got"
    ));
    for p in pairs {
        if !p.cycle.available() {
            o.push_str(&format!(
                "  {:<20} not available ({})\n",
                p.cycle.name,
                p.cycle.why_not()
            ));
            continue;
        }
        o.push_str(&format!(
            "  {:<20} {:>22} {:>26} {:>26}  {}\n",
            p.cycle.name,
            cell(p.cycle.fig(Fig::Wake)),
            cell(p.timer.fig(Fig::Wake)),
            with_rounds(p.ratio(), &p.per_round()),
            p.cycle.first().map_or("", |f| f.note.as_str())
        ));
    }
    let cycles: Vec<Agg> = pairs.iter().map(|p| p.cycle.clone()).collect();
    o.push_str(&super::report::missed_rounds(&cycles));
    if let Some(d) = pairs.first().filter(|d| d.timer.available()) {
        let vs: Vec<String> = pairs
            .iter()
            .filter(|p| p.cycle.available())
            .map(|p| {
                let r = ratio(&p.cycle, Fig::Wake, Some(&d.timer), Fig::Wake);
                format!(
                    "{} {}",
                    p.cycle.name,
                    r.map_or("-".into(), |v| format!("{v:.2}x"))
                )
            })
            .collect();
        o.push_str(&format!(
            "  against the default's bare timer (SCHED_FIFO {}): {}\n",
            ecat::cycle::DEFAULT_PRIORITY,
            vs.join(", ")
        ));
    }
    if bench_timer.available() {
        o.push_str(&format!(
            "  the bench's bare timer ({}): {}\n",
            bench_timer.first().map_or("", |f| f.note.as_str()),
            cell(bench_timer.fig(Fig::Wake))
        ));
    }
    o.push_str("  (cycle/timer = the median over the rounds of the cycle's median wake-up latency / its bare timer's in the same round)\n");
    o
}

/// The default run's ratio to the bare timer with its settings.
pub fn default_ratio(pairs: &[Pair]) -> Option<f64> {
    pairs.first()?.ratio()
}

/// The target line of the default run.
pub fn target_text(pairs: &[Pair]) -> String {
    let r = default_ratio(pairs);
    let rounds = pairs.first().map(|p| p.per_round()).unwrap_or_default();
    format!(
        "  wake-up latency of ecat run's defaults vs a bare timer with the same settings: {}, spread ±{:.0}% (target ≤ {TARGET}) {}\n",
        with_rounds(r, &rounds),
        spread_pct(&rounds).unwrap_or(0.0),
        if r.is_some_and(|v| v <= TARGET) {
            "met"
        } else {
            "NOT met"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_the_rounds_ratios() {
        let s = spread_pct(&[Some(1.0), None, Some(1.2), Some(0.9)]).unwrap();
        assert!((s - 20.0).abs() < 1e-9, "{s}");
        assert_eq!(spread_pct(&[None]), None);
        assert_eq!(with_rounds(Some(1.0), &[Some(0.9), None]), "1.00 (0.90, -)");
    }
}
