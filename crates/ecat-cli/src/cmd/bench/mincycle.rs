//! `--find-min-cycle`: seed 002's headline figure. For each row (every ecat link, ethercrab and
//! the bare timer), run a window at ever shorter cycle times until a step is unstable; the
//! smallest stable cycle is the result. One rule for every row: a window is stable when it
//! ran and at most 0.1 % of its cycles had a lost frame, a WKC error or an overrun (counted
//! over the window only, never the bring-up; for the bare timer an overrun is a wake-up past
//! the next boundary). The ladder starts at 1 ms; a failed window (unstable, or not run at
//! all, e.g. a bring-up that timed out) is run once more before the step counts as unstable,
//! since on a shared machine one stall of a few milliseconds would otherwise decide the
//! result on its own; both windows are reported. Each row's limit is printed next to the bare
//! timer's: how far the machine itself allows.

use super::row::Row;
use serde_json::{json, Value};

/// Cycle times tried, in nanoseconds (1 ms down to 25 µs).
pub const LADDER_NS: [u64; 14] = [
    1_000_000, 500_000, 250_000, 200_000, 150_000, 125_000, 100_000, 80_000, 62_500, 50_000,
    40_000, 31_250, 25_000, 20_000,
];

/// One step of the ladder.
#[derive(Debug, Clone)]
pub struct Step {
    /// Cycle time (ns).
    pub period_ns: u64,
    /// The window's row.
    pub row: Row,
}

/// The result for one link.
#[derive(Debug, Clone)]
pub struct MinCycle {
    /// Row name (`ecat raw busy`, `ethercrab`, ...).
    pub name: String,
    /// The smallest stable cycle time (ns), if any step was stable.
    pub min_stable_ns: Option<u64>,
    /// Every step run.
    pub steps: Vec<Step>,
}

/// Walk the ladder with `measure(period_ns) -> Row` until a step is unstable.
pub fn find(name: &str, stop: &dyn Fn() -> bool, measure: &mut dyn FnMut(u64) -> Row) -> MinCycle {
    let mut m = MinCycle {
        name: name.into(),
        min_stable_ns: None,
        steps: Vec::new(),
    };
    for p in LADDER_NS {
        if stop() {
            break;
        }
        let row = measure(p);
        let mut ok = row.stable();
        let retry = !ok && !stop();
        m.steps.push(Step { period_ns: p, row });
        if retry {
            let row = measure(p);
            ok = row.stable();
            m.steps.push(Step { period_ns: p, row });
        }
        if !ok {
            break;
        }
        m.min_stable_ns = Some(p);
    }
    m
}

fn step_text(s: &Step) -> String {
    let r = &s.row;
    if !r.available {
        return format!("{:.1} µs: not run ({})", s.period_ns as f64 / 1e3, r.note);
    }
    format!(
        "{:.1} µs: {} cycles, lost {}, wkc {}, overruns {} -> {}",
        s.period_ns as f64 / 1e3,
        r.cycles,
        r.frames_lost,
        r.wkc_errors,
        r.overruns,
        if r.stable() { "stable" } else { "UNSTABLE" }
    )
}

/// The results as text: one line per row with the bare timer's limit beside it, then the
/// steps.
pub fn text(all: &[MinCycle]) -> String {
    let us = |m: &MinCycle| {
        m.min_stable_ns
            .map_or("none (unstable at 1 ms)".into(), |n| {
                format!("{:.1} µs", n as f64 / 1e3)
            })
    };
    let timer = all.iter().find(|m| m.name == "bare timer");
    let mut o = String::from(
        "smallest stable cycle (one rule for every row: ≤ 0.1 % of a window's cycles with a lost frame, a WKC error or an overrun; a failed window runs once more):\n",
    );
    o.push_str(&format!(
        "  {:<16} {:>24} {:>24}\n",
        "row", "limit", "bare timer"
    ));
    for m in all {
        o.push_str(&format!(
            "  {:<16} {:>24} {:>24}\n",
            m.name,
            us(m),
            timer.map_or("-".into(), us)
        ));
    }
    for m in all {
        o.push_str(&format!("  {} steps:\n", m.name));
        for s in &m.steps {
            o.push_str(&format!("      {}\n", step_text(s)));
        }
    }
    o
}

/// The results as JSON.
pub fn json(all: &[MinCycle]) -> Value {
    let timer = all
        .iter()
        .find(|m| m.name == "bare timer")
        .and_then(|m| m.min_stable_ns)
        .map(|n| n as f64 / 1e3);
    Value::Array(
        all.iter()
            .map(|m| {
                json!({
                    "name": m.name,
                    "min_stable_cycle_us": m.min_stable_ns.map(|n| n as f64 / 1e3),
                    "bare_timer_min_stable_cycle_us": timer,
                    "steps": m.steps.iter().map(|s| json!({
                        "cycle_us": s.period_ns as f64 / 1e3,
                        "ran": s.row.available,
                        "note": s.row.note,
                        "cycles": s.row.cycles,
                        "frames_lost": s.row.frames_lost,
                        "wkc_errors": s.row.wkc_errors,
                        "overruns": s.row.overruns,
                        "stable": s.row.stable(),
                        "round_trip_p50_us": s.row.round_trip.map(|r| r.p50 as f64 / 1e3),
                        "task_p50_us": s.row.task.map(|r| r.p50 as f64 / 1e3),
                        "wake_to_data_back_p50_us": s.row.back.map(|r| r.p50 as f64 / 1e3),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_stops_at_first_unstable_step() {
        let mut seen = Vec::new();
        let m = find("x", &|| false, &mut |p| {
            seen.push(p);
            Row {
                available: true,
                cycles: 1000,
                overruns: if p < 150_000 { 5 } else { 1 },
                ..Default::default()
            }
        });
        assert_eq!(m.min_stable_ns, Some(150_000));
        assert_eq!(seen[seen.len() - 2..], [125_000, 125_000]);
        assert_eq!(m.steps.len(), 7);
    }

    #[test]
    fn a_window_that_did_not_run_gets_the_same_second_chance() {
        let mut n = 0;
        let m = find("x", &|| false, &mut |p| {
            n += 1;
            Row {
                available: n != 2,
                cycles: 1000,
                overruns: if p < 250_000 { 5 } else { 0 },
                ..Default::default()
            }
        });
        assert_eq!(m.min_stable_ns, Some(250_000));
        assert_eq!(m.steps.len(), 6);
        assert!(!m.steps[1].row.available && m.steps[2].row.available);
    }
}
