//! `--find-min-cycle`: seed 002's headline figure. For each link, run a window at ever shorter
//! cycle times until a window is unstable (more than 0.1 % of its cycles with a lost frame, a
//! WKC error or an overrun, or it could not run at all); the smallest stable cycle is the
//! result. The ladder starts at 1 ms and stops at the first unstable step. A failed window is
//! run once more before the step counts as unstable: on a shared machine one stall of a few
//! milliseconds would otherwise decide the result on its own. Both windows are reported.
//! The `bare timer` ladder (a thread that only sleeps; an overrun is a wake-up past the next
//! boundary) shows how far the machine itself allows.

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
        let retry = !ok && row.available && !stop();
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

/// The results as text: one line per link, then the steps.
pub fn text(all: &[MinCycle]) -> String {
    let mut o = String::from(
        "smallest stable cycle (≤ 0.1 % of cycles with lost frames, WKC errors or overruns):\n",
    );
    for m in all {
        o.push_str(&format!(
            "  {:<16} {}\n",
            m.name,
            m.min_stable_ns
                .map_or("none (unstable at 1 ms)".into(), |n| format!(
                    "{:.1} µs",
                    n as f64 / 1e3
                ))
        ));
        for s in &m.steps {
            o.push_str(&format!("      {}\n", step_text(s)));
        }
    }
    o
}

/// The results as JSON.
pub fn json(all: &[MinCycle]) -> Value {
    Value::Array(
        all.iter()
            .map(|m| {
                json!({
                    "name": m.name,
                    "min_stable_cycle_us": m.min_stable_ns.map(|n| n as f64 / 1e3),
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
}
