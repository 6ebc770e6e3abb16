//! The ethercrab row: the same simulated network, the same veth end, the same cycle, driven by
//! ethercrab (crates.io) through the bench-only crate `bench/ethercrab-peer` (outside the main
//! workspace, so CI's workspace build never compiles ethercrab).
//!
//! The peer binary comes from `ECAT_ETHERCRAB_PEER` (a prebuilt path) or is built with
//! `cargo build --release --manifest-path bench/ethercrab-peer/Cargo.toml` before anything
//! is measured. It prints one JSON object (see its source); this module turns it into a row.

use super::row::Row;
use ecat::cycle::CycleOptions;
use ecat::perf::Summary;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The peer crate's manifest in this source tree.
fn manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/ethercrab-peer/Cargo.toml")
}

/// The ethercrab version the peer is locked to (from its Cargo.lock), if known.
pub fn version() -> Option<String> {
    let lock = std::fs::read_to_string(manifest().with_file_name("Cargo.lock")).ok()?;
    let at = lock.find("name = \"ethercrab\"\nversion = \"")?;
    let rest = &lock[at + "name = \"ethercrab\"\nversion = \"".len()..];
    Some(rest[..rest.find('"')?].to_string())
}

/// The peer binary: prebuilt via `ECAT_ETHERCRAB_PEER`, or built now with cargo. The error
/// says why ethercrab is not available.
pub fn prepare() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("ECAT_ETHERCRAB_PEER") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "ECAT_ETHERCRAB_PEER={} does not exist",
                p.display()
            ))
        };
    }
    let m = manifest();
    if !m.is_file() {
        return Err(format!(
            "{} not found (set ECAT_ETHERCRAB_PEER to a prebuilt ethercrab-peer)",
            m.display()
        ));
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if Command::new(&cargo)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| !s.success())
        .unwrap_or(true)
    {
        return Err("cargo is not installed (or set ECAT_ETHERCRAB_PEER)".into());
    }
    let target = m.with_file_name("target");
    println!(
        "building the ethercrab peer (cargo build --release --manifest-path {}) ...",
        m.display()
    );
    let out = Command::new(&cargo)
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&m)
        .arg("--target-dir")
        .arg(&target)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(format!("building the ethercrab peer failed: {last}"));
    }
    Ok(target.join("release/ethercrab-peer"))
}

fn summary(v: &serde_json::Value) -> Option<Summary> {
    let n = |k: &str| v.get(k).and_then(|x| x.as_f64());
    Some(Summary {
        count: n("count")? as u64,
        min: n("min")? as u64,
        avg: n("avg")?,
        max: n("max")? as u64,
        std: 0.0,
        p50: n("p50")? as u64,
        p99: n("p99")? as u64,
    })
}

/// Run the peer on `iface` for the window of `opts` and make its row.
pub fn ethercrab_row(
    bin: &Path,
    iface: &str,
    opts: &CycleOptions,
    cpu: usize,
    prio: i32,
    stop: &AtomicBool,
) -> Row {
    let name = "ethercrab";
    let link = format!(
        "{iface} (ethercrab {}, tx_rx_task)",
        version().unwrap_or_else(|| "?".into())
    );
    let seconds = opts.duration_ns as f64 / 1e9;
    let mut child = match Command::new(bin)
        .args([
            iface.to_string(),
            opts.period_ns.to_string(),
            format!("{seconds}"),
            cpu.to_string(),
            prio.to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            return Row::unavailable(name, &link, format!("cannot run {}: {e}", bin.display()))
        }
    };
    let limit = Instant::now() + Duration::from_secs_f64(seconds + 60.0);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if stop.load(Ordering::Relaxed) || Instant::now() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Row::unavailable(name, &link, "stopped before it finished".into());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Row::unavailable(name, &link, e.to_string()),
        }
    }
    let out = match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => return Row::unavailable(name, &link, e.to_string()),
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(j) = text
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
    else {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        return Row::unavailable(name, &link, format!("ethercrab peer failed: {last}"));
    };
    if let Some(e) = j.get("error").and_then(|e| e.as_str()) {
        return Row::unavailable(name, &link, e.to_string());
    }
    let u = |k: &str| j.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
    let cycles = u("cycles");
    let errors = u("errors");
    Row {
        name: name.into(),
        link,
        available: true,
        cycles,
        round_trip: j.get("round_trip").and_then(summary),
        wake: j.get("wake_latency").and_then(summary),
        back: j.get("per_cycle").and_then(summary),
        frames_sent: cycles,
        frames_lost: errors,
        wkc_errors: u("wkc_errors"),
        overruns: u("overruns"),
        note: format!(
            "{} SubDevices, expected WKC {}, bring-up {} ms",
            u("subdevices"),
            j.get("expected_wkc").map_or("?".into(), |w| w.to_string()),
            j.get("bringup_ms").map_or("?".into(), |w| w.to_string())
        ),
        ..Default::default()
    }
}
