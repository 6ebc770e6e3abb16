//! Replaying a real capture against the simulator, datagram by datagram.
//!
//! A capture of a MainDevice talking to real SubDevices holds each frame twice: the request
//! as sent (source MAC as the MainDevice set it) and the answer as it came back (the first ESC
//! sets the locally-administered bit, 0x02 of the source MAC's first byte). [`replay`] sends
//! every request, in capture order, to a [`Network`] on virtual time that follows the
//! capture's timestamps, pairs each captured answer with its request (same datagrams:
//! command, index, length and the addresses that do not change on the way) and compares the
//! simulator's answer with the real one datagram by datagram ([`compare`]). The [`Report`]
//! says how many datagrams came back exactly as from the real devices and groups the
//! differences by command and register ([`report`]).
//!
//! Requests without an answer in the capture are still sent (they change the devices'
//! state), just not compared. Nothing in the capture can make this panic: frames that do not
//! decode are counted as skipped.

pub mod compare;
pub mod report;

pub use compare::{register_name, Mismatch};
pub use report::{Difference, Group, Report};

use crate::Network;
use compare::{datagrams, Dg};
use std::collections::{BTreeMap, VecDeque};

/// One frame of a capture: timestamp (ns, any epoch) and the Ethernet frame's bytes.
#[derive(Debug, Clone, Copy)]
pub struct CapturedFrame<'a> {
    /// Timestamp in ns.
    pub ts_ns: u64,
    /// The frame from the destination MAC on (no FCS).
    pub data: &'a [u8],
}

/// Network time of the first request: past zero, so that "time 0" stays special nowhere.
const START_NS: u64 = 1_000_000_000;

/// How many requests may wait for their answer before the oldest counts as unanswered.
const PENDING_LIMIT: usize = 256;

struct Pending {
    request: Vec<Dg>,
    /// The simulator's answer, `None` if it did not return the frame.
    sim: Option<Vec<Dg>>,
}

fn same_request(req: &[Dg], answer: &[Dg]) -> bool {
    req.len() == answer.len()
        && req
            .iter()
            .zip(answer)
            .all(|(a, b)| a.signature() == b.signature())
}

/// Replay `frames` (a whole capture, in file order) against `net` and compare every answer.
pub fn replay(net: &mut Network, frames: &[CapturedFrame<'_>]) -> Report {
    let mut report = Report {
        packets: frames.len(),
        ..Report::default()
    };
    let mut tally = BTreeMap::new();
    let mut pending: VecDeque<Pending> = VecDeque::new();
    let mut t0: Option<u64> = None;
    let mut last_now = START_NS;
    for (i, f) in frames.iter().enumerate() {
        let Some(dgs) = datagrams(f.data) else {
            report.skipped += 1;
            continue;
        };
        let returned = f.data.get(6).is_some_and(|b| b & 0x02 != 0);
        if !returned {
            report.requests += 1;
            let t0 = *t0.get_or_insert(f.ts_ns);
            let now = (START_NS + f.ts_ns.saturating_sub(t0)).max(last_now);
            last_now = now;
            let mut buf = f.data.to_vec();
            let sim = if net.process_frame(&mut buf, now) {
                datagrams(&buf)
            } else {
                None
            };
            pending.push_back(Pending { request: dgs, sim });
            if pending.len() > PENDING_LIMIT {
                pending.pop_front();
                report.unanswered += 1;
            }
            continue;
        }
        let Some(p) = pending.iter().position(|p| same_request(&p.request, &dgs)) else {
            report.orphan_answers += 1;
            continue;
        };
        let Some(p) = pending.remove(p) else {
            continue;
        };
        report.answered += 1;
        let sim = match p.sim {
            Some(s) if s.len() == dgs.len() => s,
            _ => {
                // Not returned: what the MainDevice sees is its request, never answered.
                report.sim_lost += 1;
                p.request.clone()
            }
        };
        for (k, ((req, real), sim)) in p.request.iter().zip(&dgs).zip(&sim).enumerate() {
            report.add(&mut tally, (i + 1, k), req, real, sim);
        }
    }
    report.unanswered += pending.len();
    report.finish(&tally);
    report
}
