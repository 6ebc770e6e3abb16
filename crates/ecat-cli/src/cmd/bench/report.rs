//! The bench's one table, its JSON form, seed 003's line-up for the best link, and how the
//! figures compare with the targets the project set itself (reported, never asserted).

use super::mincycle::MinCycle;
use super::row::Row;
use ecat::perf::{Metric, Summary};
use serde_json::{json, Value};

/// Which ratios a row gets: the floor it is compared with, found by name.
fn floor_of(row: &Row) -> &'static str {
    if row.busy {
        "floor echo busy"
    } else {
        "floor echo"
    }
}

fn find<'a>(rows: &'a [Row], name: &str) -> Option<&'a Row> {
    rows.iter().find(|r| r.name == name && r.available)
}

fn ratio(a: Option<&Summary>, b: Option<&Summary>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (b.p50 > 0).then(|| a.p50 as f64 / b.p50 as f64)
}

/// The three ratios of a row: round trip vs its echo floor, wake-up latency vs the bare timer,
/// task duration vs ethercrab's per-cycle time (medians).
pub fn ratios(rows: &[Row], r: &Row) -> [Option<f64>; 3] {
    let is_ecat = r.name.starts_with("ecat ");
    let is_cmp = is_ecat || r.name == "ethercrab";
    let floor = find(rows, floor_of(r));
    let timer = find(rows, "bare timer");
    let crab = find(rows, "ethercrab");
    [
        if is_cmp {
            ratio(
                r.round_trip.as_ref(),
                floor.and_then(|f| f.round_trip.as_ref()),
            )
        } else {
            None
        },
        if r.name != "bare timer" {
            ratio(r.wake.as_ref(), timer.and_then(|t| t.wake.as_ref()))
        } else {
            None
        },
        if is_ecat {
            ratio(r.task.as_ref(), crab.and_then(|c| c.task.as_ref()))
        } else {
            None
        },
    ]
}

fn us3(s: &Option<Summary>) -> String {
    match s {
        Some(s) => format!(
            "{:.1}/{:.1}/{:.0}",
            s.p50 as f64 / 1e3,
            s.p99 as f64 / 1e3,
            s.max as f64 / 1e3
        ),
        None => "-".into(),
    }
}

fn x(r: Option<f64>) -> String {
    r.map_or("-".into(), |v| format!("{v:.2}x"))
}

/// The table, one line per row (figures in µs: median/p99/max).
pub fn table(rows: &[Row]) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "{:<16} {:>20} {:>20} {:>20} {:>13} {:>9} {:>10} {:>10} {:>10}\n",
        "row",
        "round trip µs",
        "wake-up latency µs",
        "task/cycle µs",
        "lost/cycles",
        "wkc/ovr",
        "rtt/floor",
        "wake/timer",
        "task/crab"
    ));
    o.push_str(&format!(
        "{:<16} {:>20} {:>20} {:>20}\n",
        "", "p50/p99/max", "p50/p99/max", "p50/p99/max"
    ));
    for r in rows {
        if !r.available {
            o.push_str(&format!("{:<16} not available ({})\n", r.name, r.note));
            continue;
        }
        let [a, b, c] = ratios(rows, r);
        o.push_str(&format!(
            "{:<16} {:>20} {:>20} {:>20} {:>13} {:>9} {:>10} {:>10} {:>10}\n",
            r.name,
            us3(&r.round_trip),
            us3(&r.wake),
            us3(&r.task),
            format!("{}/{}", r.frames_lost, r.cycles),
            format!("{}/{}", r.wkc_errors, r.overruns),
            x(a),
            x(b),
            x(c)
        ));
    }
    o
}

/// The best ecat row: lowest median round trip among the rows that ran.
pub fn best(rows: &[Row]) -> Option<&Row> {
    rows.iter()
        .filter(|r| r.available && r.name.starts_with("ecat ") && r.round_trip.is_some())
        .min_by_key(|r| r.round_trip.map_or(u64::MAX, |s| s.p50))
}

/// Seed 003's figures for one row, in `PerfMsmt` form with the seed's abbreviations.
pub fn seed003(r: &Row) -> String {
    let Some(p) = &r.perf else {
        return String::new();
    };
    let mut o = format!("seed 003 line-up on {} ({}):\n", r.name, r.link);
    for (abbr, m) in [
        ("CRX ", Metric::JobReceive),
        ("CPR ", Metric::JobApp),
        ("CTX ", Metric::JobSendCyclic),
        ("ATSK", Metric::JobAcyclic),
        ("CTSK", Metric::TaskDuration),
        ("RTT ", Metric::RoundTrip),
        ("TJ  ", Metric::WakeLatency),
        ("    ", Metric::CycleTime),
    ] {
        o.push_str(&format!("  {abbr} {}\n", p[m as usize].perfmsmt(m.label())));
    }
    o
}

/// The targets, each with the measured value and whether it is met.
pub fn targets(rows: &[Row], min: &[MinCycle]) -> Vec<(String, Option<f64>, f64, bool)> {
    let mut t = Vec::new();
    let Some(b) = best(rows) else {
        return t;
    };
    let [rtt, wake, task] = ratios(rows, b);
    let mut push = |what: String, v: Option<f64>, limit: f64| {
        t.push((what, v, limit, v.is_some_and(|v| v <= limit)));
    };
    push(
        format!("round trip on the best link ({}) vs the echo floor", b.name),
        rtt,
        1.5,
    );
    push(
        format!("task duration ({}) vs ethercrab's per-cycle time", b.name),
        task,
        0.5,
    );
    push(
        format!("wake-up latency ({}) vs the bare timer", b.name),
        wake,
        1.2,
    );
    if let Some(m) = min
        .iter()
        .filter(|m| m.name.starts_with("ecat ") && m.min_stable_ns.is_some())
        .min_by_key(|m| m.min_stable_ns)
    {
        push(
            format!("smallest stable cycle in µs ({})", m.name),
            m.min_stable_ns.map(|n| n as f64 / 1e3),
            100.0,
        );
    }
    t
}

/// Print the targets.
pub fn targets_text(t: &[(String, Option<f64>, f64, bool)]) -> String {
    let mut o = String::from("targets (medians; reported, not asserted):\n");
    for (what, v, limit, met) in t {
        o.push_str(&format!(
            "  {what}: {} (target ≤ {limit}) {}\n",
            v.map_or("n/a".into(), |v| format!("{v:.2}")),
            if *met { "met" } else { "NOT met" }
        ));
    }
    o
}

fn sj(s: &Option<Summary>) -> Value {
    match s {
        Some(s) => json!({
            "count": s.count,
            "p50_us": s.p50 as f64 / 1e3,
            "p99_us": s.p99 as f64 / 1e3,
            "max_us": s.max as f64 / 1e3,
            "min_us": s.min as f64 / 1e3,
            "avg_us": s.avg / 1e3,
        }),
        None => Value::Null,
    }
}

/// One row as JSON.
pub fn row_json(rows: &[Row], r: &Row) -> Value {
    let [a, b, c] = ratios(rows, r);
    let mut v = json!({
        "name": r.name, "link": r.link, "busy_poll": r.busy, "available": r.available,
        "note": r.note, "cycles": r.cycles,
        "round_trip": sj(&r.round_trip), "wake_latency": sj(&r.wake),
        "task_duration": sj(&r.task), "cycle_time": sj(&r.cycle_time),
        "frames_sent": r.frames_sent, "frames_lost": r.frames_lost,
        "wkc_errors": r.wkc_errors, "overruns": r.overruns,
        "ratios": {"round_trip_vs_floor": a, "wake_vs_bare_timer": b, "task_vs_ethercrab": c},
    });
    if r.name == "ethercrab" {
        v["per_cycle"] = v["task_duration"].take();
    }
    if let Some(p) = &r.perf {
        let mut o = serde_json::Map::new();
        for m in Metric::ALL {
            o.insert(m.key().into(), sj(&Some(p[m as usize])));
        }
        v["perf"] = Value::Object(o);
    }
    v
}
