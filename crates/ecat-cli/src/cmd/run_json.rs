//! The JSON of `ecat run --json`: the figures over the whole run (every `Perf` metric with
//! its percentiles, the worst of every minute), the loop's, frames' and link's counters, the
//! domains, and the pieces `run` adds at the end (losses by cause, CPU load). One object,
//! written once after the cycling; the key names are what the tests and users script against.

use ecat::cpu_load::CpuLoadFigures;
use ecat::cycle::LoopCounters;
use ecat::link::loss::LossReport;
use ecat::perf::{Metric, Perf, Summary};
use ecat::runtime::Runtime;
use serde_json::json;

/// Losses by cause (see [`LossReport`]).
pub fn losses(l: &LossReport) -> serde_json::Value {
    json!({
        "sent": l.sent, "lost": l.lost, "late": l.late,
        "late_by_a_tag_period": l.late_wrapped,
        "corrupted": l.corrupted, "dropped_by_kernel_socket": l.kernel_socket,
        "dropped_by_interface": l.kernel_iface, "bad_fcs": l.bad_fcs,
        "never_answered": l.never_answered, "counters": l.detail,
    })
}

/// The CPU load of the cycle thread and of the whole process over the cycling.
pub fn cpu_load(c: &CpuLoadFigures) -> serde_json::Value {
    json!({
        "cycle_thread_percent": c.thread_percent(), "process_percent": c.process_percent(),
        "cycle_thread_s": c.thread_s, "process_s": c.process_s, "wall_s": c.wall_s,
    })
}

fn summary(s: &Summary) -> serde_json::Value {
    json!({
        "count": s.count,
        "min_us": s.min as f64 / 1e3,
        "avg_us": s.avg / 1e3,
        "max_us": s.max as f64 / 1e3,
        "std_us": s.std / 1e3,
        "p50_us": s.p50 as f64 / 1e3,
        "p99_us": s.p99 as f64 / 1e3,
    })
}

/// The run's figures and counters (the object the other pieces are added to).
pub fn figures(
    rt: &Runtime,
    perf: &Perf,
    c: &LoopCounters,
    incomplete: u64,
    elapsed: f64,
    link: &str,
    period: u64,
) -> serde_json::Value {
    let (cy, en, lk) = rt.counters();
    let mut figures = serde_json::Map::new();
    for m in Metric::ALL {
        figures.insert(m.key().into(), summary(&perf.total(m)));
    }
    let minutes: Vec<serde_json::Value> = perf
        .minutes()
        .iter()
        .map(|row| {
            let mut o = serde_json::Map::new();
            for m in Metric::ALL {
                o.insert(
                    format!("{}_max_us", m.key()),
                    json!(row[m as usize] as f64 / 1e3),
                );
            }
            serde_json::Value::Object(o)
        })
        .collect();
    json!({
        "link": link,
        "cycle_us": period as f64 / 1e3,
        "elapsed_s": elapsed,
        "cycles": c.cycles,
        "overruns": c.overruns,
        "incomplete_returns": c.incomplete_returns,
        "domain_incomplete_cycles": incomplete,
        "figures": figures,
        "per_minute_worst": minutes,
        "frames": {
            "sent": cy.frames_sent, "received": cy.frames_received, "lost": cy.frames_lost,
            "late": cy.frames_late, "duplicated": cy.frames_duplicated, "corrupted": cy.frames_corrupted,
            "fixed_wkc_mismatches": cy.fixed_wkc_mismatches,
        },
        "acyclic": { "datagrams": en.datagrams_sent, "resent": en.resent, "failed": en.failed, "unmatched": en.unmatched },
        "link_counters": { "tx": lk.tx_frames, "rx": lk.rx_frames, "ignored": lk.rx_ignored, "tx_errors": lk.tx_errors },
        "domains": rt.domains().iter().map(|d| json!({
            "index": d.index, "outputs": d.outputs_len, "inputs": d.inputs_len,
            "expected_wkc": d.expected_wkc(), "state": d.state().name(),
        })).collect::<Vec<_>>(),
    })
}
