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

#[cfg(test)]
mod tests {
    use super::*;
    use ecat_wire::{Command, FrameBuilder};

    /// A request frame with one datagram; returns its bytes.
    fn request(cmd: Command, idx: u8, adp: u16, ado: u16, len: u16) -> Vec<u8> {
        let mut buf = vec![0u8; 1514];
        let mut fb = FrameBuilder::new(&mut buf, [0x10; 6]).unwrap();
        fb.push_physical(cmd, idx, adp, ado, len).unwrap();
        let n = fb.finish();
        buf.truncate(n);
        buf
    }

    /// A capture made on `real`: each request followed by its answer, 1 ms apart.
    fn capture(real: &mut Network, reqs: &[Vec<u8>]) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        for (k, r) in reqs.iter().enumerate() {
            let t = 1_000_000 * k as u64;
            let mut a = r.clone();
            assert!(real.process_frame(&mut a, START_NS + t));
            out.push((t, r.clone()));
            out.push((t + 20_000, a));
        }
        out
    }

    fn frames(c: &[(u64, Vec<u8>)]) -> Vec<CapturedFrame<'_>> {
        c.iter()
            .map(|(t, d)| CapturedFrame { ts_ns: *t, data: d })
            .collect()
    }

    #[test]
    fn same_network_replays_exactly_and_another_differs_where_it_should() {
        let reqs = vec![
            request(Command::Brd, 0, 0, 0x0000, 1),
            request(Command::Brd, 1, 0, 0x0130, 2),
            request(Command::Bwr, 2, 0, 0x0630, 16),
            request(Command::Aprd, 3, 0, 0x0008, 2),
        ];
        let c = capture(&mut Network::preset("io").unwrap(), &reqs);
        let r = replay(&mut Network::preset("io").unwrap(), &frames(&c));
        assert_eq!(
            (r.requests, r.answered, r.plain, r.plain_equal),
            (4, 4, 4, 4)
        );
        assert!(r.groups.is_empty());
        assert_eq!(r.fidelity_percent, 100.0);

        // One drive instead of six terminals: other counts, types and features.
        let r = replay(&mut Network::preset("servo").unwrap(), &frames(&c));
        assert_eq!(r.plain_equal, 0, "{r}");
        let keys: Vec<&str> = r.groups.iter().map(|g| g.key.as_str()).collect();
        assert!(keys.contains(&"BRD 0x0000 type"), "{keys:?}");
        assert!(keys.contains(&"BWR 0x0630 FMMU 3"), "{keys:?}");
        let d = &r.differences[0];
        assert_eq!((d.packet, d.datagram), (2, 0));
        assert!(d.mismatch.wkc && d.mismatch.adp);
    }

    #[test]
    fn garbage_orphans_and_lost_answers_are_counted_not_fatal() {
        let reqs = vec![request(Command::Brd, 0, 0, 0x0000, 1)];
        let mut c = capture(&mut Network::preset("io").unwrap(), &reqs);
        let orphan = {
            let mut a = request(Command::Brd, 9, 0, 0x0120, 2);
            a[6] |= 0x02;
            a
        };
        c.push((5_000_000, orphan));
        c.push((6_000_000, vec![0xFF; 7]));
        c.push((7_000_000, request(Command::Brd, 1, 0, 0x0000, 1)));
        let r = replay(&mut Network::preset("io").unwrap(), &frames(&c));
        assert_eq!(
            (
                r.packets,
                r.skipped,
                r.orphan_answers,
                r.unanswered,
                r.answered
            ),
            (5, 1, 1, 1, 1)
        );
        let r = replay(&mut Network::preset("io").unwrap(), &[]);
        assert_eq!((r.packets, r.fidelity_percent), (0, 100.0));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Whatever a capture holds, replay counts it and never panics.
        #[test]
        fn any_capture_content_is_counted_never_fatal(
            edits in proptest::collection::vec((0usize..8, 0usize..80, proptest::prelude::any::<u8>()), 0..40),
            junk in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..100), 0..6),
        ) {
            let reqs = vec![
                request(Command::Brd, 0, 0, 0x0000, 2),
                request(Command::Aprd, 1, 0, 0x0130, 2),
                request(Command::Fprd, 2, 0x1001, 0x0502, 2),
                request(Command::Lrw, 3, 0, 0, 8),
            ];
            let mut c = capture(&mut Network::preset("io").unwrap(), &reqs);
            for (f, at, v) in edits {
                if let Some(frame) = c.get_mut(f) {
                    if let Some(b) = frame.1.get_mut(at) {
                        *b = v;
                    }
                }
            }
            for (k, j) in junk.into_iter().enumerate() {
                c.push((10_000_000 + k as u64, j));
            }
            let r = replay(&mut Network::preset("io").unwrap(), &frames(&c));
            proptest::prop_assert_eq!(r.packets, c.len());
            proptest::prop_assert!(r.answered + r.unanswered <= r.requests);
            proptest::prop_assert!(r.plain_equal <= r.plain);
            proptest::prop_assert!((0.0..=100.0).contains(&r.fidelity_percent));
        }
    }
}
