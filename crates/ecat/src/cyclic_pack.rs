//! Packing the process data into as few cyclic frames as the bytes need.
//!
//! The domain layout cuts each image into datagrams of at most 1486 bytes, frame by frame,
//! without knowing what else the cyclic frames carry: on a large network the first frame then
//! holds only the DC datagram and the probes (some hundred bytes) and the next 1486-byte LRW
//! opens a new frame, so 2,994 bytes of process data at 1,000 SubDevices took four frames.
//! Here, once at activation, each run of datagrams the layout cut from one span (contiguous,
//! same command, every one but the last full) is cut again where the frames end: the first
//! datagram fills the room the first frame has after the DC datagrams and the probes, the
//! next ones fill whole frames. Every datagram keeps its own expected working counter (the
//! SubDevices its span reaches), so a lost frame or a missing SubDevice still shows in the
//! datagram it concerns. Datagrams a layout made on purpose (shorter than full, e.g. one per
//! group) are left as they are.

use crate::cyclic::Extras;
use crate::domain::{expected_wkc, DatagramPlan, Domain};
use ecat_wire::datagram::{MAX_DATA, OVERHEAD};
use ecat_wire::frame::MAX_DATAGRAMS_LEN;

/// A datagram shorter than this is not worth starting in a frame's last bytes: the frame is
/// closed and the datagram starts the next one.
const MIN_PIECE: usize = 32;

/// Bytes of the datagrams the cyclic frames carry besides the process data (DC, AL probe,
/// mailbox status LRD, sync monitor), which take the first frame.
pub fn extras_len(extras: &Extras) -> usize {
    let dg = |data: usize| OVERHEAD + data;
    let mut n = 0;
    if let Some(dc) = extras.dc {
        n += dg(8);
        if dc.write_master_time {
            n += dg(8);
        }
        if dc.monitor {
            n += dg(4);
        }
    }
    if extras.al_probe {
        n += dg(2);
    }
    if let Some((_, len)) = extras.mailbox_status {
        n += dg(len as usize);
    }
    n
}

/// Cut the domains' datagram runs again so that the frames fill up, the first one leaving
/// `reserved` bytes for the other datagrams (see the module documentation).
pub fn pack(domains: &mut [Domain], reserved: usize) {
    let mut room = MAX_DATAGRAMS_LEN.saturating_sub(reserved);
    for d in domains.iter_mut() {
        let mut plans = Vec::with_capacity(d.plans.len() + 1);
        let mut i = 0;
        while i < d.plans.len() {
            let first = d.plans[i];
            let mut end = first.offset + first.len;
            let mut j = i + 1;
            while j < d.plans.len() && d.plans[j - 1].len == MAX_DATA && {
                let p = &d.plans[j];
                p.command == first.command
                    && p.offset == end
                    && p.logical == first.logical + (p.offset - first.offset) as u32
            } {
                end += d.plans[j].len;
                j += 1;
            }
            if j - i == 1 {
                // Not a run the layout cut: keep it whole.
                place(&mut room, first.len);
                plans.push(first);
            } else {
                let mut start = first.offset;
                while start < end {
                    if room < OVERHEAD + MIN_PIECE.min(end - start) {
                        room = MAX_DATAGRAMS_LEN;
                    }
                    let len = (room - OVERHEAD).min(MAX_DATA).min(end - start);
                    room -= OVERHEAD + len;
                    plans.push(DatagramPlan {
                        command: first.command,
                        logical: first.logical + (start - first.offset) as u32,
                        offset: start,
                        len,
                        expected_wkc: expected_wkc(&d.regions, first.command, start..start + len),
                    });
                    start += len;
                }
            }
            i = j;
        }
        d.set_plans(plans);
    }
}

/// Account a datagram of `len` bytes placed as the frames would place it.
fn place(room: &mut usize, len: usize) {
    if *room < OVERHEAD + len {
        *room = MAX_DATAGRAMS_LEN;
    }
    *room = room.saturating_sub(OVERHEAD + len);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Direction;
    use crate::cyclic::{CyclicDc, CyclicFrames};
    use crate::domain::Region;
    use ecat_wire::Command;

    /// A domain of `n` SubDevices with 3 bytes of outputs and 3 of inputs each, cut the way
    /// the layout cuts it.
    fn domain(n: u16) -> Domain {
        let mut regions = Vec::new();
        for (k, dir) in [Direction::Output, Direction::Input]
            .into_iter()
            .enumerate()
        {
            for p in 0..n {
                regions.push(Region {
                    position: p,
                    sm: 2 + k as u8,
                    direction: dir,
                    offset: (k * n as usize + p as usize) * 3,
                    len: 3,
                });
            }
        }
        let total = 6 * n as usize;
        let plans = (0..total)
            .step_by(MAX_DATA)
            .map(|s| {
                let len = MAX_DATA.min(total - s);
                DatagramPlan {
                    command: Command::Lrw,
                    logical: 0x1000 + s as u32,
                    offset: s,
                    len,
                    expected_wkc: expected_wkc(&regions, Command::Lrw, s..s + len),
                }
            })
            .collect();
        Domain::from_parts(0, 0x1000, total / 2, total / 2, regions, plans, Vec::new()).unwrap()
    }

    fn extras() -> Extras {
        Extras {
            al_probe: true,
            dc: Some(CyclicDc {
                reference: 0x1001,
                write_master_time: false,
                monitor: true,
            }),
            mailbox_status: Some((0x8000, 63)),
        }
    }

    #[test]
    fn a_large_image_takes_as_few_frames_as_its_bytes_need() {
        let mut doms = vec![domain(500)];
        let before = CyclicFrames::new(&doms, [2; 6], extras()).unwrap();
        assert_eq!(
            before.frame_count(),
            4,
            "3,000 bytes cut at 1486 with the probes apart"
        );
        pack(&mut doms, extras_len(&extras()));
        let after = CyclicFrames::new(&doms, [2; 6], extras()).unwrap();
        assert_eq!(after.frame_count(), 3);
        let d = &doms[0];
        // The pieces cover the image once, in order, and every WKC counts what each reaches.
        let mut at = 0;
        for p in &d.plans {
            assert_eq!(p.offset, at);
            assert_eq!(p.logical, 0x1000 + at as u32);
            assert!(p.len <= MAX_DATA && p.len > 0);
            assert_eq!(
                p.expected_wkc,
                expected_wkc(&d.regions, Command::Lrw, at..at + p.len)
            );
            at += p.len;
        }
        assert_eq!(at, 3000);
        let sum: u32 = d.plans.iter().map(|p| p.expected_wkc as u32).sum();
        assert!(
            sum >= 3 * 500,
            "every SubDevice counted at least once: {sum}"
        );
    }

    #[test]
    fn datagrams_a_layout_made_on_purpose_stay_whole() {
        let mut d = domain(100);
        let regions = d.regions.clone();
        let plans = vec![
            DatagramPlan {
                command: Command::Lrw,
                logical: 0x1000,
                offset: 0,
                len: 300,
                expected_wkc: expected_wkc(&regions, Command::Lrw, 0..300),
            },
            DatagramPlan {
                command: Command::Lrw,
                logical: 0x1000 + 300,
                offset: 300,
                len: 300,
                expected_wkc: expected_wkc(&regions, Command::Lrw, 300..600),
            },
        ];
        d.set_plans(plans.clone());
        let mut doms = vec![d];
        pack(&mut doms, 100);
        assert_eq!(doms[0].plans, plans);
    }
}
