//! Measuring on the wire from a capture alone: cycles, frame intervals, round trips, loss,
//! repeats and working-counter mismatches (ARCHITECTURE §7; the way seed 004 analysed its
//! Wireshark recording).
//!
//! # How frames are classified
//!
//! **Direction.** In order of preference:
//! 1. the file says (pcapng `epb_flags`, as `ecat run --capture x.pcapng` writes);
//! 2. the source MAC: the first SubDevice sets the locally-administered bit (0x02 of the first
//!    byte) in frames it returns, so when both `M` and `M | 0x02` occur as sources, frames
//!    from the latter are returned (RX) and from the former transmitted (TX);
//! 3. otherwise (the MainDevice's MAC is itself locally administered, as on veth pairs) the
//!    second copy of a frame with the same first datagram index and the same datagram
//!    structure is the returned one, provided it carries a non-zero working counter or comes
//!    within 2 ms (so a retransmission is not taken for an answer).
//!
//! **Cyclic frames.** A frame's *signature* is the list of its datagrams' (command, address,
//! length), where the address is the logical address for LRD/LWR/LRW, ADP and ADO for
//! configured-address commands, and only ADO where SubDevices rewrite ADP on the way
//! (auto-increment and broadcast). Process data travels in logical datagrams, every cycle,
//! with the same signature; mailbox, SII and state traffic varies. So the cyclic signatures
//! are those that contain a logical datagram (a capture without any has no process data:
//! scans, SII and mailbox traffic only, and no cycles are reported) and were
//! transmitted at least half as often as the most frequent such signature; the most frequent
//! one (the first seen on a tie) marks the cycles. Frames ecat sends itself are recognised by
//! their indices (bit 7 set, the same index on every datagram, the low bits the frame number
//! (as many as the frame count needs) and the bits above it a cycle tag that counts up by one
//! per cycle): for them, missing tags tell cycles absent from the capture.
//!
//! **Matching.** A returned frame belongs to the last transmitted frame with the same first
//! index and signature. A cyclic frame not back before the next transmission of its signature
//! is *lost* (what the MainDevice counts too); if it returns later it is also *late*. A second
//! copy of an answered frame is *repeated*, as is a transmission that repeats one still
//! unanswered (a retry). Per datagram of the cyclic frames the most common working counter is
//! taken as the expected one and every other value is a mismatch.

use crate::capture_read::{Capture, CaptureError};
use crate::link::capture::Direction;
use crate::perf::Summary;
use ecat_wire::frame::parse_ethernet;
use ecat_wire::Command;
use std::collections::HashMap;
use std::fmt::Write;

/// Command codes of the logical datagrams.
const LOGICAL: [u8; 3] = [10, 11, 12];

/// How the direction of frames was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectionMethod {
    /// Recorded in the file.
    File,
    /// Locally-administered bit of the source MAC.
    SourceMac,
    /// Second copy of a frame with the same index and structure.
    Pairing,
}

impl DirectionMethod {
    /// Description for humans.
    pub fn describe(self) -> &'static str {
        match self {
            DirectionMethod::File => "recorded in the capture file",
            DirectionMethod::SourceMac => "source MAC (locally-administered bit set on return)",
            DirectionMethod::Pairing => "second copy of the same index and datagram structure",
        }
    }
}

/// One text histogram bucket: `[from, to)` in ns; `None` = open end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    /// Lower bound (inclusive), `None` for the lowest bucket.
    pub from_ns: Option<u64>,
    /// Upper bound (exclusive), `None` for the highest bucket.
    pub to_ns: Option<u64>,
    /// Samples in it.
    pub count: u64,
}

/// Working counters of one datagram of the cyclic frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WkcReport {
    /// Which datagram (e.g. `LRW 0x00000000 12 bytes` in frame signature 0).
    pub datagram: String,
    /// Most common value, taken as expected.
    pub expected: u16,
    /// Returned copies seen.
    pub samples: u64,
    /// Returned copies with another value.
    pub mismatches: u64,
    /// The other values and how often they occurred.
    pub others: Vec<(u16, u64)>,
}

/// The cyclic traffic of a capture.
#[derive(Debug, Clone, PartialEq)]
pub struct CyclicReport {
    /// Frames sent by ecat itself (index bit 7, cycle tags).
    pub ours: bool,
    /// The cyclic frame signatures, described.
    pub signatures: Vec<String>,
    /// Cycles (transmissions of the first cyclic frame).
    pub cycles: u64,
    /// Cyclic frames transmitted.
    pub tx_frames: u64,
    /// Cyclic frames that came back in time.
    pub rx_frames: u64,
    /// Not back before the next transmission of their signature.
    pub lost: u64,
    /// Came back after that.
    pub late: u64,
    /// Repeated copies (duplicate returns and retransmissions).
    pub repeated: u64,
    /// Returned frames that match no transmission (corrupted, or sent before the capture).
    pub unmatched_rx: u64,
    /// Still unanswered when the capture ends.
    pub unanswered_at_end: u64,
    /// Cycles missing from the capture according to the cycle tags (ours only).
    pub tag_gaps: Option<u64>,
    /// Interval between consecutive cycles' first frames (ns).
    pub interval: Summary,
    /// Interval histogram.
    pub interval_hist: Vec<Bucket>,
    /// Transmission to return, per frame (ns).
    pub round_trip: Summary,
    /// Per cyclic datagram.
    pub wkc: Vec<WkcReport>,
}

/// Everything found in a capture.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// File format.
    pub format: &'static str,
    /// Why reading stopped early, if it did.
    pub problem: Option<String>,
    /// Packets in the file.
    pub packets: u64,
    /// EtherCAT frames (EtherType 0x88A4 with a datagram header).
    pub ecat_frames: u64,
    /// Other packets (other EtherTypes or link types).
    pub other_frames: u64,
    /// EtherCAT frames whose datagrams could not be parsed.
    pub malformed: u64,
    /// First and last timestamp (ns since the Unix epoch).
    pub span_ns: (u64, u64),
    /// How directions were told.
    pub direction: DirectionMethod,
    /// Frames transmitted by the MainDevice.
    pub tx_frames: u64,
    /// Frames returned.
    pub rx_frames: u64,
    /// Acyclic frames transmitted.
    pub acyclic_tx: u64,
    /// Acyclic frames that never came back (before a retry or the end).
    pub acyclic_unanswered: u64,
    /// Cyclic traffic, if any was found.
    pub cyclic: Option<CyclicReport>,
}

/// One EtherCAT frame, compact.
#[derive(Debug, Clone, Copy)]
struct Frame {
    ts: u64,
    sig: usize,
    idx: u8,
    same_idx: bool,
    src: [u8; 6],
    /// Range of this frame's WKCs in the shared list.
    wkc_at: usize,
    rx: bool,
    explicit: Option<Direction>,
}

type SigItem = (u8, u32, u16);

fn addr_sig(cmd: u8, adp: u16, ado: u16) -> u32 {
    match cmd {
        10..=12 => (adp as u32) | ((ado as u32) << 16),
        4..=6 | 14 => ((adp as u32) << 16) | ado as u32,
        0 => 0,
        _ => ado as u32,
    }
}

fn describe_sig(sig: &[SigItem]) -> String {
    sig.iter()
        .map(|&(c, a, l)| {
            let name = Command::from_u8(c)
                .map(|c| c.name().to_string())
                .unwrap_or_else(|| format!("cmd{c}"));
            match c {
                10..=12 => format!("{name} 0x{a:08X} {l}B"),
                4..=6 | 14 => format!("{name} 0x{:04X}:0x{:04X} {l}B", a >> 16, a & 0xFFFF),
                _ => format!("{name} 0x{a:04X} {l}B"),
            }
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Analyse a capture file's bytes.
pub fn analyze_bytes(bytes: &[u8]) -> Result<Report, CaptureError> {
    Ok(analyze(&Capture::parse(bytes)?))
}

/// Analyse a parsed capture. See the module documentation.
pub fn analyze(cap: &Capture<'_>) -> Report {
    let mut sigs: Vec<Vec<SigItem>> = Vec::new();
    let mut sig_ids: HashMap<Vec<SigItem>, usize> = HashMap::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut wkcs: Vec<u16> = Vec::new();
    let (mut other, mut malformed) = (0u64, 0u64);
    let mut items: Vec<SigItem> = Vec::new();
    for p in &cap.packets {
        if p.linktype != 1 {
            other += 1;
            continue;
        }
        let ecat = match parse_ethernet(p.data) {
            Ok(e) => e,
            Err(ecat_wire::Error::NotEtherCat) => {
                other += 1;
                continue;
            }
            Err(_) => {
                malformed += 1;
                continue;
            }
        };
        items.clear();
        let wkc_at = wkcs.len();
        let (mut idx, mut same_idx, mut ok) = (None, true, true);
        for d in ecat.datagrams() {
            let Ok(d) = d else {
                ok = false;
                break;
            };
            let i = d.index();
            match idx {
                None => idx = Some(i),
                Some(first) => same_idx &= first == i,
            }
            let c = d.command_code();
            items.push((c, addr_sig(c, d.adp(), d.ado()), d.data_len() as u16));
            wkcs.push(d.wkc());
        }
        let Some(idx) = idx.filter(|_| ok) else {
            wkcs.truncate(wkc_at);
            malformed += 1;
            continue;
        };
        let sig = match sig_ids.get(&items) {
            Some(&s) => s,
            None => {
                sigs.push(items.clone());
                sig_ids.insert(items.clone(), sigs.len() - 1);
                sigs.len() - 1
            }
        };
        let mut src = [0u8; 6];
        src.copy_from_slice(&p.data[6..12]);
        frames.push(Frame {
            ts: p.ts_ns,
            sig,
            idx,
            same_idx,
            src,
            wkc_at,
            rx: false,
            explicit: p.dir,
        });
    }
    let wkc_of = |f: &Frame, sigs: &[Vec<SigItem>]| &wkcs[f.wkc_at..f.wkc_at + sigs[f.sig].len()];

    // Direction.
    let direction = if !frames.is_empty() && frames.iter().all(|f| f.explicit.is_some()) {
        for f in &mut frames {
            f.rx = f.explicit == Some(Direction::Rx);
        }
        DirectionMethod::File
    } else {
        let plain: std::collections::HashSet<[u8; 6]> = frames
            .iter()
            .filter(|f| f.src[0] & 2 == 0)
            .map(|f| f.src)
            .collect();
        let paired = frames.iter().any(|f| {
            let mut m = f.src;
            m[0] &= !2;
            f.src[0] & 2 != 0 && plain.contains(&m)
        });
        if paired {
            for f in &mut frames {
                f.rx = f.src[0] & 2 != 0;
            }
            DirectionMethod::SourceMac
        } else {
            let mut pending: HashMap<(usize, u8), u64> = HashMap::new();
            for f in frames.iter_mut() {
                let key = (f.sig, f.idx);
                let answered = wkc_of(f, &sigs).iter().any(|&w| w != 0);
                match pending.get(&key) {
                    Some(&t) if answered || f.ts.saturating_sub(t) <= 2_000_000 => {
                        f.rx = true;
                        pending.remove(&key);
                    }
                    _ => {
                        pending.insert(key, f.ts);
                    }
                }
            }
            DirectionMethod::Pairing
        }
    };

    // Cyclic signatures.
    let mut tx_count = vec![0u64; sigs.len()];
    let mut first_seen = vec![usize::MAX; sigs.len()];
    for (i, f) in frames.iter().enumerate() {
        if !f.rx {
            tx_count[f.sig] += 1;
            first_seen[f.sig] = first_seen[f.sig].min(i);
        }
    }
    let has_logical = |s: usize| sigs[s].iter().any(|x| LOGICAL.contains(&x.0));
    let candidates: Vec<usize> = (0..sigs.len())
        .filter(|&s| tx_count[s] > 0 && has_logical(s))
        .collect();
    let max = candidates.iter().map(|&s| tx_count[s]).max().unwrap_or(0);
    let mut cyclic_sigs: Vec<usize> = candidates
        .into_iter()
        .filter(|&s| max >= 2 && tx_count[s] * 2 >= max)
        .collect();
    cyclic_sigs.sort_by_key(|&s| (std::cmp::Reverse(tx_count[s]), first_seen[s]));
    let is_cyclic = {
        let mut v = vec![false; sigs.len()];
        for &s in &cyclic_sigs {
            v[s] = true;
        }
        v
    };

    // Matching, loss, repeats.
    let tx_frames = frames.iter().filter(|f| !f.rx).count() as u64;
    let rx_frames = frames.len() as u64 - tx_frames;
    let mut pending: HashMap<(usize, u8), u64> = HashMap::new();
    let mut answered: HashMap<(usize, u8), u64> = HashMap::new();
    let mut lost_keys: HashMap<(usize, u8), u64> = HashMap::new();
    let (mut lost, mut late, mut repeated, mut unmatched, mut rx_ok) = (0u64, 0, 0, 0, 0);
    let (mut acyclic_tx, mut acyclic_unanswered) = (0u64, 0u64);
    let mut rtts: Vec<u64> = Vec::new();
    let mut wkc_hist: HashMap<(usize, usize), HashMap<u16, u64>> = HashMap::new();
    for f in &frames {
        let key = (f.sig, f.idx);
        let cyc = is_cyclic[f.sig];
        if !f.rx {
            if !cyc {
                acyclic_tx += 1;
                if pending.insert(key, 0).is_some() {
                    acyclic_unanswered += 1;
                }
                continue;
            }
            // A new transmission of this signature: older ones of it not back are lost.
            if pending.contains_key(&key) {
                repeated += 1;
            }
            let before = pending.len();
            pending.retain(|k, _| {
                if k.0 == f.sig {
                    lost_keys.insert(*k, f.ts);
                    false
                } else {
                    true
                }
            });
            lost += (before - pending.len()) as u64;
            lost_keys.remove(&key);
            answered.remove(&key);
            pending.insert(key, f.ts);
        } else if let Some(t) = pending.remove(&key) {
            if cyc {
                rx_ok += 1;
                rtts.push(f.ts.saturating_sub(t));
                for (pos, &w) in wkc_of(f, &sigs).iter().enumerate() {
                    *wkc_hist
                        .entry((f.sig, pos))
                        .or_default()
                        .entry(w)
                        .or_insert(0) += 1;
                }
                answered.insert(key, f.ts);
            }
        } else if cyc {
            if answered.contains_key(&key) {
                repeated += 1;
            } else if lost_keys.remove(&key).is_some() {
                late += 1;
            } else {
                unmatched += 1;
            }
        }
    }
    let unanswered_at_end = pending
        .keys()
        .filter(|k| is_cyclic.get(k.0).copied().unwrap_or(false))
        .count() as u64;
    acyclic_unanswered += pending.len() as u64 - unanswered_at_end;

    let cyclic = cyclic_sigs.first().map(|&primary| {
        let ctx: Vec<&Frame> = frames
            .iter()
            .filter(|f| !f.rx && is_cyclic[f.sig])
            .collect();
        let ours = ctx.iter().all(|f| f.idx & 0x80 != 0 && f.same_idx);
        let firsts: Vec<&Frame> = ctx.iter().copied().filter(|f| f.sig == primary).collect();
        // The cycle tag sits above the frame number, which takes as few bits as the frame
        // count needs (see `crate::cyclic`).
        let frame_bits = usize::BITS - cyclic_sigs.len().saturating_sub(1).leading_zeros();
        let mask = 0x7Fu8 >> frame_bits;
        let tag = |f: &Frame| (f.idx & 0x7F) >> frame_bits;
        let tag_gaps = ours.then(|| {
            firsts
                .windows(2)
                .map(|w| (tag(w[1]).wrapping_sub(tag(w[0])).wrapping_sub(1) & mask) as u64)
                .sum()
        });
        let intervals: Vec<u64> = firsts
            .windows(2)
            .map(|w| w[1].ts.saturating_sub(w[0].ts))
            .collect();
        let mut wkc: Vec<WkcReport> = Vec::new();
        for (n, &s) in cyclic_sigs.iter().enumerate() {
            for (pos, item) in sigs[s].iter().enumerate() {
                let Some(h) = wkc_hist.get(&(s, pos)) else {
                    continue;
                };
                let mut vals: Vec<(u16, u64)> = h.iter().map(|(&w, &c)| (w, c)).collect();
                vals.sort_by_key(|&(w, c)| (std::cmp::Reverse(c), w));
                let samples: u64 = vals.iter().map(|v| v.1).sum();
                wkc.push(WkcReport {
                    datagram: format!("frame {n} datagram {pos}: {}", describe_sig(&[*item])),
                    expected: vals[0].0,
                    samples,
                    mismatches: samples - vals[0].1,
                    others: vals[1..].to_vec(),
                });
            }
        }
        CyclicReport {
            ours,
            signatures: cyclic_sigs
                .iter()
                .map(|&s| describe_sig(&sigs[s]))
                .collect(),
            cycles: firsts.len() as u64,
            tx_frames: ctx.len() as u64,
            rx_frames: rx_ok,
            lost,
            late,
            repeated,
            unmatched_rx: unmatched,
            unanswered_at_end,
            tag_gaps,
            interval: summarize(&intervals),
            interval_hist: histogram(&intervals),
            round_trip: summarize(&rtts),
            wkc,
        }
    });

    Report {
        format: cap.format.name(),
        problem: cap.problem.clone(),
        packets: cap.packets.len() as u64,
        ecat_frames: frames.len() as u64,
        other_frames: other,
        malformed,
        span_ns: (
            cap.packets.first().map_or(0, |p| p.ts_ns),
            cap.packets.last().map_or(0, |p| p.ts_ns),
        ),
        direction,
        tx_frames,
        rx_frames,
        acyclic_tx,
        acyclic_unanswered,
        cyclic,
    }
}

/// Exact summary of samples (ns).
pub fn summarize(v: &[u64]) -> Summary {
    if v.is_empty() {
        return Summary::default();
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let n = s.len() as f64;
    let avg = s.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = s.iter().map(|&x| (x as f64 - avg).powi(2)).sum::<f64>() / n;
    let q = |p: f64| s[(((s.len() - 1) as f64) * p).round() as usize];
    Summary {
        count: s.len() as u64,
        min: s[0],
        avg,
        max: s[s.len() - 1],
        std: var.sqrt(),
        p50: q(0.5),
        p99: q(0.99),
    }
}

/// A round bucket width (1, 2 or 5 times a power of ten ns) near `x`.
fn nice(x: u64) -> u64 {
    let mut p = 1u64;
    loop {
        for m in [1, 2, 5] {
            if p.saturating_mul(m) >= x {
                return p.saturating_mul(m);
            }
        }
        p = p.saturating_mul(10);
    }
}

/// Text-histogram buckets: 20 equal buckets centred on the median, wide enough for the
/// 0.5 %..99.5 % range, plus one open bucket on each side for everything beyond.
pub fn histogram(v: &[u64]) -> Vec<Bucket> {
    if v.is_empty() {
        return Vec::new();
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let q = |p: f64| s[(((s.len() - 1) as f64) * p).round() as usize];
    let med = q(0.5);
    let half = (med - q(0.005)).max(q(0.995) - med).max(1);
    let width = nice(half.div_ceil(10));
    let lo = (med / width).saturating_sub(10) * width;
    let mut out = vec![Bucket {
        from_ns: None,
        to_ns: Some(lo),
        count: 0,
    }];
    for i in 0..21u64 {
        out.push(Bucket {
            from_ns: Some(lo.saturating_add(i.saturating_mul(width))),
            to_ns: Some(lo.saturating_add((i + 1).saturating_mul(width))),
            count: 0,
        });
    }
    // Saturating: a capture's times may be anything (found by the `analyze` fuzz target).
    let hi = lo.saturating_add(21u64.saturating_mul(width));
    out.push(Bucket {
        from_ns: Some(hi),
        to_ns: None,
        count: 0,
    });
    for &x in &s {
        let b = if x < lo {
            0
        } else if x >= hi {
            out.len() - 1
        } else {
            (1 + ((x - lo) / width) as usize).min(out.len() - 2)
        };
        out[b].count += 1;
    }
    out
}

fn us(ns: f64) -> f64 {
    ns / 1000.0
}

impl Report {
    /// The report for humans.
    pub fn text(&self) -> String {
        let mut o = String::new();
        let span = self.span_ns.1.saturating_sub(self.span_ns.0) as f64 / 1e9;
        let _ = writeln!(
            o,
            "capture: {}, {} packets over {span:.3} s; {} EtherCAT frames ({} transmitted, {} returned), {} other, {} malformed",
            self.format, self.packets, self.ecat_frames, self.tx_frames, self.rx_frames, self.other_frames, self.malformed
        );
        if let Some(p) = &self.problem {
            let _ = writeln!(o, "warning: reading stopped early: {p}");
        }
        let _ = writeln!(o, "direction: {}", self.direction.describe());
        let _ = writeln!(
            o,
            "acyclic: {} frames transmitted, {} never answered",
            self.acyclic_tx, self.acyclic_unanswered
        );
        let Some(c) = &self.cyclic else {
            let _ = writeln!(
                o,
                "cyclic: none (no repeating frames with process data, i.e. LRD/LWR/LRW datagrams)"
            );
            return o;
        };
        let _ = writeln!(
            o,
            "cyclic: {} ({} frame{} per cycle):",
            if c.ours {
                "frames of ecat (index bit 7, cycle tags)"
            } else {
                "the most frequent process-data frame signature"
            },
            c.signatures.len(),
            if c.signatures.len() == 1 { "" } else { "s" }
        );
        for (n, s) in c.signatures.iter().enumerate() {
            let _ = writeln!(o, "  frame {n}: {s}");
        }
        let _ = writeln!(o, "cycles {}", c.cycles);
        let _ = writeln!(
            o,
            "frames sent {} returned {} lost {} late {} repeated {} unmatched {} unanswered-at-end {}",
            c.tx_frames, c.rx_frames, c.lost, c.late, c.repeated, c.unmatched_rx, c.unanswered_at_end
        );
        if let Some(g) = c.tag_gaps {
            let _ = writeln!(o, "cycles missing from the capture (cycle-tag gaps): {g}");
        }
        if self.rx_frames == 0 {
            let _ = writeln!(
                o,
                "note: no returned frames in the capture: loss and round trip cannot be measured"
            );
        }
        if c.interval.count > 0 {
            let _ = writeln!(o, "{}", c.interval.perfmsmt("Frame Interval"));
            let _ = writeln!(
                o,
                "  p50 {:.1} us, p99 {:.1} us",
                us(c.interval.p50 as f64),
                us(c.interval.p99 as f64)
            );
        }
        if c.round_trip.count > 0 {
            let _ = writeln!(o, "{}", c.round_trip.perfmsmt("RoundTrip (TX+RX)"));
        }
        if !c.interval_hist.is_empty() {
            let _ = writeln!(o, "frame interval histogram [usec]:");
            let peak = c
                .interval_hist
                .iter()
                .map(|b| b.count)
                .max()
                .unwrap_or(1)
                .max(1);
            for b in &c.interval_hist {
                let label = match (b.from_ns, b.to_ns) {
                    (None, Some(t)) => format!("          < {:>9.1}", us(t as f64)),
                    (Some(f), None) => format!("         >= {:>9.1}", us(f as f64)),
                    (Some(f), Some(t)) => {
                        format!("{:>9.1} .. {:>9.1}", us(f as f64), us(t as f64))
                    }
                    (None, None) => String::new(),
                };
                let bar = "#".repeat(((b.count * 50).div_ceil(peak)) as usize);
                let _ = writeln!(o, "  {label} {:>8} {bar}", b.count);
            }
        }
        for w in &c.wkc {
            let others: Vec<String> = w.others.iter().map(|(v, n)| format!("{v} x{n}")).collect();
            let _ = writeln!(
                o,
                "WKC {}: expected {} (most common), {} of {} differ{}",
                w.datagram,
                w.expected,
                w.mismatches,
                w.samples,
                if others.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", others.join(", "))
                }
            );
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn testdata(name: &str) -> Report {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/captures")
            .join(name);
        analyze_bytes(&std::fs::read(p).unwrap()).unwrap()
    }

    #[test]
    fn replay_captures() {
        for name in ["replay-dc.pcapng", "replay-ek1100-el2828-el2889.pcapng"] {
            let r = testdata(name);
            let text = r.text();
            assert_eq!(r.direction, DirectionMethod::SourceMac, "{text}");
            assert_eq!(r.tx_frames, r.rx_frames, "{text}");
            assert_eq!(r.malformed, 0);
            let c = r.cyclic.as_ref().expect("cyclic frames");
            assert!(!c.ours);
            assert!(c.signatures[0].contains("LRW"), "{text}");
            assert!(c.cycles > 200, "{text}");
            assert_eq!(c.lost, 0, "{text}");
            // Sane numbers: intervals of a few hundred µs to a few ms, RTT well below.
            assert!(
                c.interval.avg > 100_000.0 && c.interval.avg < 10_000_000.0,
                "{text}"
            );
            assert!(c.interval.min <= c.interval.p50 && c.interval.p50 <= c.interval.max);
            assert!(
                c.round_trip.count > 0 && c.round_trip.max < 10_000_000,
                "{text}"
            );
            let total: u64 = c.interval_hist.iter().map(|b| b.count).sum();
            assert_eq!(total, c.cycles - 1);
            assert!(text.contains("PerfMsmt 'Frame Interval'"), "{text}");
        }
    }

    #[test]
    fn wireshark_sample() {
        let r = testdata("wireshark-sample-ethercat.cap");
        let text = r.text();
        assert_eq!(r.direction, DirectionMethod::SourceMac, "{text}");
        let c = r.cyclic.as_ref().expect("cyclic frames");
        assert!(c.cycles > 10, "{text}");
        assert!(c.interval.count > 0 && c.interval.min > 0, "{text}");
        assert!(c.round_trip.max < 1_000_000, "{text}");
    }

    #[test]
    fn histogram_buckets() {
        let v: Vec<u64> = (0..1000)
            .map(|i| 1_000_000 + (i % 21) * 1000 - 10_000)
            .collect();
        let h = histogram(&v);
        assert_eq!(h.iter().map(|b| b.count).sum::<u64>(), 1000);
        assert_eq!(h.first().unwrap().count, 0);
        assert_eq!(h.last().unwrap().count, 0);
        let s = summarize(&v);
        assert_eq!((s.min, s.max, s.p50), (990_000, 1_010_000, 1_000_000));
        assert!(histogram(&[]).is_empty());
        assert_eq!(histogram(&[5]).iter().map(|b| b.count).sum::<u64>(), 1);
    }
}
