//! `ecat analyze FILE`: measure on the wire from a capture (pcap or pcapng) alone: cycles,
//! frame-to-frame interval (with a text histogram and a `PerfMsmt 'Frame Interval'` line),
//! round trip, lost / late / repeated frames and working-counter mismatches. The heuristics are
//! explained in `ecat::analyze`. `--json` prints the same as one JSON object.

use super::CmdResult;
use ecat::analyze::{analyze, Bucket, Report};
use ecat::capture_read::{read_file, Capture};
use ecat::perf::Summary;
use serde_json::json;

/// Options of `ecat analyze`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Capture file (pcap or pcapng), e.g. from `ecat run --capture`, tshark or Wireshark
    #[arg(value_name = "FILE")]
    file: std::path::PathBuf,
    /// Print JSON for scripts
    #[arg(long)]
    json: bool,
}

/// Run `ecat analyze`.
pub fn run(a: Args) -> CmdResult {
    let bytes = read_file(&a.file)?;
    let cap =
        Capture::parse(&bytes).map_err(|e| format!("cannot analyse {}: {e}", a.file.display()))?;
    let r = analyze(&cap);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&to_json(&r))?);
    } else {
        print!("{}", r.text());
    }
    Ok(())
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

fn bucket(b: &Bucket) -> serde_json::Value {
    json!({
        "from_us": b.from_ns.map(|x| x as f64 / 1e3),
        "to_us": b.to_ns.map(|x| x as f64 / 1e3),
        "count": b.count,
    })
}

/// The report as JSON.
pub fn to_json(r: &Report) -> serde_json::Value {
    let cyclic = r.cyclic.as_ref().map(|c| {
        json!({
            "ours": c.ours,
            "signatures": c.signatures,
            "cycles": c.cycles,
            "frames": {
                "sent": c.tx_frames, "returned": c.rx_frames, "lost": c.lost, "late": c.late,
                "repeated": c.repeated, "unmatched": c.unmatched_rx,
                "unanswered_at_end": c.unanswered_at_end,
            },
            "tag_gaps": c.tag_gaps,
            "interval": summary(&c.interval),
            "interval_histogram": c.interval_hist.iter().map(bucket).collect::<Vec<_>>(),
            "round_trip": summary(&c.round_trip),
            "wkc": c.wkc.iter().map(|w| json!({
                "datagram": w.datagram, "expected": w.expected, "samples": w.samples,
                "mismatches": w.mismatches,
                "others": w.others.iter().map(|(v, n)| json!({"wkc": v, "count": n})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    });
    json!({
        "format": r.format,
        "problem": r.problem,
        "packets": r.packets,
        "ecat_frames": r.ecat_frames,
        "other_frames": r.other_frames,
        "malformed": r.malformed,
        "first_ns": r.span_ns.0,
        "last_ns": r.span_ns.1,
        "duration_s": r.span_ns.1.saturating_sub(r.span_ns.0) as f64 / 1e9,
        "direction": r.direction.describe(),
        "tx_frames": r.tx_frames,
        "rx_frames": r.rx_frames,
        "acyclic": { "sent": r.acyclic_tx, "unanswered": r.acyclic_unanswered },
        "cycles": r.cyclic.as_ref().map_or(0, |c| c.cycles),
        "cyclic": cyclic,
    })
}
