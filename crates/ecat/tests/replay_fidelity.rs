//! The simulator against real devices: every request of the real captures we ship is replayed
//! (`ecat_sim::replay`, what `ecat replay` runs) against a network built from the same
//! devices' SII dumps, and the answers are compared datagram by datagram.
//!
//! Acceptance: at least 98 % of the datagrams that carry no DC time value must come back
//! exactly as the real devices answered them, and every remaining difference must be one we
//! know and can explain (the lists below, each with its reason). DC time values (receive
//! times, system time, ...) differ by nature; for them the working counter, the returned
//! address and the IRQ field must still match.

use ecat::capture_read::Capture;
use ecat_sim::replay::{replay, CapturedFrame, Report};
use ecat_sim::Network;
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn run(capture: &str, network: &str) -> Report {
    let bytes = std::fs::read(testdata().join("captures").join(capture)).unwrap();
    let cap = Capture::parse(&bytes).unwrap();
    assert!(cap.problem.is_none(), "{capture}: {:?}", cap.problem);
    let frames: Vec<CapturedFrame> = cap
        .packets
        .iter()
        .map(|p| CapturedFrame {
            ts_ns: p.ts_ns,
            data: p.data,
        })
        .collect();
    let mut net = Network::from_file(&testdata().join("networks").join(network)).unwrap();
    let r = replay(&mut net, &frames);
    println!("{capture}:\n{r}");
    r
}

/// Check the figure and that each difference is expected: `expected` lists group keys
/// ("FPRD 0x0130 AL status") with the reason they differ.
fn check(r: &Report, min_percent: f64, expected: &[(&str, &str)]) {
    assert_eq!(r.unanswered + r.orphan_answers + r.sim_lost, 0);
    assert!(
        r.fidelity_percent >= min_percent,
        "fidelity {:.2} % < {min_percent} %",
        r.fidelity_percent
    );
    let unexplained: Vec<_> = r
        .plain_differences()
        .filter(|d| !expected.iter().any(|(k, _)| *k == d.key))
        .map(|d| format!("packet {} {} ({})", d.packet, d.key, d.mismatch.describe()))
        .collect();
    assert!(
        unexplained.is_empty(),
        "differences nobody explained:\n{}",
        unexplained.join("\n")
    );
    // Every listed reason still applies (stale entries are removed, not kept).
    for (k, why) in expected {
        assert!(
            r.plain_differences().any(|d| d.key == *k),
            "expected difference {k} ({why}) no longer occurs; remove it from the list"
        );
    }
    // DC time values: only the values may differ.
    assert_eq!(
        r.dc_time_structure_equal, r.dc_time,
        "DC datagrams with a different WKC, ADP or IRQ"
    );
}

#[test]
fn replay_of_ek1100_el2828_el2889_matches_the_real_devices() {
    let r = run(
        "replay-ek1100-el2828-el2889.pcapng",
        "replay-ek1100-el2828-el2889.toml",
    );
    assert!(
        r.plain > 1900 && r.dc_time > 100,
        "{} / {}",
        r.plain,
        r.dc_time
    );
    // No difference left outside DC time values.
    check(&r, 98.0, &[]);
}

#[test]
fn replay_of_the_dc_bring_up_matches_the_real_devices() {
    let r = run("replay-dc.pcapng", "replay-ek1100-el2828-el2889.toml");
    assert!(
        r.plain > 2400 && r.dc_time > 350,
        "{} / {}",
        r.plain,
        r.dc_time
    );
    check(&r, 98.0, &[]);
}
