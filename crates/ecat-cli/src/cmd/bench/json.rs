//! The bench's figures as JSON: per row the median of the rounds' medians with its spread and
//! every round's own summary, the ratios (medians of the rounds' ratios) and round by round.

use super::mincycle::{self, MinCycle};
use super::report::{self, ratios, summary_json, Target, RATIOS};
use super::rounds::{Agg, Fig, Spread};
use super::row::Row;
use super::wake;
use ecat::perf::{Metric, Summary};
use serde_json::{json, Value};

/// A figure over the rounds: `p50_us` (median of the rounds' medians), `p50_min_us` and
/// `p50_max_us` (the spread of the round medians), `spread_pct`, `p99_us`, `max_us`, and
/// `per_round` (each round's summary, `null` where it did not run).
pub fn figure(s: Option<Spread>, per_round: Vec<Option<Summary>>) -> Value {
    match s {
        Some(s) => json!({
            "p50_us": s.p50 / 1e3,
            "p50_min_us": s.lo / 1e3,
            "p50_max_us": s.hi / 1e3,
            "spread_pct": s.pct(),
            "p99_us": s.p99 / 1e3,
            "max_us": s.max as f64 / 1e3,
            "rounds": s.rounds,
            "per_round": per_round.iter().map(summary_json).collect::<Vec<_>>(),
        }),
        None => Value::Null,
    }
}

fn fig(a: &Agg, f: Fig) -> Value {
    figure(
        a.fig(f),
        a.rounds
            .iter()
            .map(|r| f.of(r).filter(|_| r.available))
            .collect(),
    )
}

/// The JSON key of each ratio, in [`RATIOS`] order.
pub const RATIO_KEYS: [&str; 4] = [
    "round_trip_vs_floor",
    "wake_vs_bare_timer",
    "task_vs_ethercrab_data_back",
    "data_back_vs_ethercrab_data_back",
];

/// One row as JSON (`rows` for the ratios' references).
pub fn row(rows: &[Agg], r: &Agg) -> Value {
    let first = r.first().cloned().unwrap_or_default();
    let rs = ratios(rows, r);
    let mut ratio = serde_json::Map::new();
    let mut per_round = serde_json::Map::new();
    for i in 0..RATIOS.len() {
        ratio.insert(RATIO_KEYS[i].into(), json!(rs[i]));
        per_round.insert(
            RATIO_KEYS[i].into(),
            json!(report::ratio_rounds(rows, r, i)),
        );
    }
    ratio.insert("per_round".into(), Value::Object(per_round));
    ratio.insert("columns".into(), json!(RATIOS));
    let mut v = json!({
        "name": r.name, "link": first.link, "busy_poll": first.busy,
        "available": r.available(), "note": if r.available() { first.note } else { r.why_not() },
        "rounds_ran": r.ran().count(),
        "cycles": r.sum(|x| x.cycles),
        "round_trip": fig(r, Fig::RoundTrip), "own_floor_round_trip": fig(r, Fig::Floor),
        "own_floor_lost": r.sum(|x| x.floor_lost), "wake_latency": fig(r, Fig::Wake),
        "task_duration": fig(r, Fig::Task), "wake_to_data_back": fig(r, Fig::Back),
        "cycle_time": fig(r, Fig::CycleTime),
        "frames_sent": r.sum(|x| x.frames_sent), "frames_lost": r.sum(|x| x.frames_lost),
        "wkc_errors": r.sum(|x| x.wkc_errors), "overruns": r.sum(|x| x.overruns),
        "ratios": Value::Object(ratio),
    });
    if r.name == "ethercrab" {
        v["per_cycle"] = v["wake_to_data_back"].clone();
    }
    if r.ran().any(|x| x.perf.is_some()) {
        let mut o = serde_json::Map::new();
        for m in Metric::ALL {
            o.insert(m.key().into(), perf_figure(r, m));
        }
        v["perf"] = Value::Object(o);
    }
    v
}

/// Every `Perf` figure of an ecat row over the rounds (figures without samples are `null`).
fn perf_figure(r: &Agg, m: Metric) -> Value {
    let per: Vec<Option<Summary>> = r
        .rounds
        .iter()
        .map(|x: &Row| {
            x.perf
                .filter(|_| x.available)
                .map(|p| p[m as usize])
                .filter(|s| s.count > 0)
        })
        .collect();
    let only = Agg {
        name: r.name.clone(),
        rounds: per
            .iter()
            .map(|s| Row {
                available: s.is_some(),
                wake: *s,
                ..Default::default()
            })
            .collect(),
    };
    figure(only.fig(Fig::Wake), per)
}

/// Targets as JSON.
pub fn targets(t: &[Target]) -> Value {
    t.iter()
        .map(|x| {
            json!({"what": x.what, "value": x.value, "limit": x.limit, "met": x.met,
                   "per_round": x.per_round})
        })
        .collect()
}

/// One peer's table: its rows, best link (see [`report::best`]), how often its peer was
/// preempted per second, targets and min-cycle ladders.
pub fn peer_table(
    key: &str,
    description: &str,
    rows: &[Agg],
    t: &[Target],
    mins: &[MinCycle],
) -> Value {
    json!({
        "peer": key,
        "description": description,
        "rows": rows.iter().map(|r| row(rows, r)).collect::<Vec<_>>(),
        "best_link": report::best(rows).map(|b| b.name.clone()),
        "peer_preempted_per_s": report::peer_preempted(rows).map(|p| p.0),
        "targets": targets(t),
        "min_cycle": mincycle::json(mins),
    })
}

/// The wake-up comparison: every setting's cycle and its bare timer with the same settings,
/// their ratio (median of the rounds' ratios, and round by round), the bench's pinned bare
/// timer, and the default's ratio against the target.
pub fn wake(pairs: &[wake::Pair], bench_timer: &Agg) -> Value {
    let r = wake::default_ratio(pairs);
    let settings: Vec<Value> = pairs
        .iter()
        .map(|p| {
            let refs = std::slice::from_ref(&p.timer);
            let mut cycle = row(refs, &p.cycle);
            cycle["ratios"] = Value::Null;
            let per_round = p.per_round();
            json!({
                "name": p.cycle.name,
                "cycle": cycle,
                "bare_timer_same_settings": row(&[], &p.timer),
                "cycle_vs_timer": p.ratio(),
                "cycle_vs_timer_per_round": per_round,
                "cycle_vs_timer_spread_pct": wake::spread_pct(&per_round),
            })
        })
        .collect();
    json!({
        "window_ms": wake::WINDOW_NS as f64 / 1e6,
        "settings": settings,
        "bench_bare_timer": row(&[], bench_timer),
        "default_vs_bare_timer": r,
        "target": wake::TARGET,
        "met": r.is_some_and(|v| v <= wake::TARGET),
    })
}
