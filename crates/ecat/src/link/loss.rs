//! Losses by cause: where the cyclic frames that did not come back in their cycle went.
//!
//! The cyclic path counts a frame *lost* when it has not returned by the next cycle
//! ([`CyclicCounters::frames_lost`]). Some of those come back later (*late*), some come back
//! broken (*corrupted*: their structure differs from what was sent). The rest never reach
//! the MainDevice, and the kernel can say why for some of them: the packet socket's own
//! drops (receive buffer or ring full: [`super::Link::kernel_drops`]), and the interface's
//! counters in `/sys/class/net/IF/statistics` (frames dropped on receive, bad FCS), on our
//! end and, for a veth pair in the same network namespace, on the peer's end (where the
//! simulator listens). What remains is *never answered*: the frame left and nothing came back
//! (a SubDevice or the wire dropped it, or it was lost where no counter sees it).
//!
//! [`LossReport`] takes the counters at the start and at the end of a run and attributes each
//! lost frame to one cause, in that order (late, late by a whole tag period, corrupted,
//! dropped by the kernel, bad FCS, never answered). Kernel and interface counters see every frame, not only cyclic ones,
//! so at most the lost frames not explained before are attributed to them.

use crate::cyclic::CyclicCounters;
use std::fmt::Write as _;
use std::path::Path;

/// Receive and transmit counters of one network interface (deltas or absolute).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IfaceStats {
    /// Frames the interface dropped on receive (`rx_dropped`, plus `rx_missed_errors` and
    /// `rx_fifo_errors`: the NIC or its ring had no room).
    pub rx_dropped: u64,
    /// Frames received with a bad FCS (`rx_crc_errors`).
    pub rx_crc: u64,
    /// Other receive errors (`rx_errors` minus the CRC ones).
    pub rx_other_errors: u64,
    /// Frames dropped on transmit (`tx_dropped`, `tx_errors`, `tx_fifo_errors`).
    pub tx_dropped: u64,
}

impl IfaceStats {
    /// Read the counters of `ifname` from sysfs; `None` if it has none (no such interface,
    /// another network namespace).
    pub fn read(ifname: &str) -> Option<IfaceStats> {
        let dir = Path::new("/sys/class/net").join(ifname).join("statistics");
        let get = |f: &str| -> Option<u64> {
            std::fs::read_to_string(dir.join(f))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        let rx_errors = get("rx_errors")?;
        let rx_crc = get("rx_crc_errors").unwrap_or(0);
        Some(IfaceStats {
            rx_dropped: get("rx_dropped")?
                + get("rx_missed_errors").unwrap_or(0)
                + get("rx_fifo_errors").unwrap_or(0),
            rx_crc,
            rx_other_errors: rx_errors.saturating_sub(rx_crc),
            tx_dropped: get("tx_dropped")? + get("tx_errors")? + get("tx_fifo_errors").unwrap_or(0),
        })
    }

    /// `self - earlier`, counter by counter.
    pub fn since(&self, earlier: &IfaceStats) -> IfaceStats {
        IfaceStats {
            rx_dropped: self.rx_dropped.saturating_sub(earlier.rx_dropped),
            rx_crc: self.rx_crc.saturating_sub(earlier.rx_crc),
            rx_other_errors: self.rx_other_errors.saturating_sub(earlier.rx_other_errors),
            tx_dropped: self.tx_dropped.saturating_sub(earlier.tx_dropped),
        }
    }
}

/// The other end of veth `ifname`, if it is in this network namespace.
pub fn veth_peer(ifname: &str) -> Option<String> {
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let base = Path::new("/sys/class/net");
    let iflink = read(&base.join(ifname).join("iflink"))?;
    let own = read(&base.join(ifname).join("ifindex"))?;
    if iflink.trim() == own.trim() {
        return None;
    }
    std::fs::read_dir(base).ok()?.flatten().find_map(|e| {
        let idx = read(&e.path().join("ifindex"))?;
        (idx.trim() == iflink.trim()).then(|| e.file_name().to_string_lossy().into_owned())
    })
}

/// The interface a link name (`raw:eth0`, `mmap:eth0`, `xdp:eth0`, `eth0`) is on.
pub fn link_iface(link_name: &str) -> Option<String> {
    match super::LinkSpec::parse(link_name).ok()? {
        super::LinkSpec::Raw(i) | super::LinkSpec::Mmap(i) | super::LinkSpec::Xdp(i) => Some(i),
        super::LinkSpec::Sim(_) | super::LinkSpec::Dpdk(_) => None,
    }
}

/// Counters taken at one moment, to be compared with a later snapshot.
#[derive(Debug, Clone, Default)]
pub struct LossSnapshot {
    /// The cyclic path's counters.
    pub cyclic: CyclicCounters,
    /// The socket's kernel drops, if the link can tell.
    pub kernel_drops: Option<u64>,
    /// Our interface and its counters.
    pub iface: Option<(String, IfaceStats)>,
    /// The veth peer and its counters.
    pub peer: Option<(String, IfaceStats)>,
}

impl LossSnapshot {
    /// Take the counters now: `link_name` names the interface, `kernel_drops` comes from
    /// [`super::Link::kernel_drops`].
    pub fn take(cyclic: CyclicCounters, kernel_drops: Option<u64>, link_name: &str) -> Self {
        let iface = link_iface(link_name);
        let peer = iface.as_deref().and_then(veth_peer);
        let with = |n: Option<String>| n.and_then(|n| IfaceStats::read(&n).map(|s| (n, s)));
        LossSnapshot {
            cyclic,
            kernel_drops,
            iface: with(iface),
            peer: with(peer),
        }
    }
}

/// Lost cyclic frames by cause between two snapshots. See the module documentation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LossReport {
    /// Cyclic frames sent.
    pub sent: u64,
    /// Cyclic frames not back in their cycle.
    pub lost: u64,
    /// Of those: came back after their cycle.
    pub late: u64,
    /// Came back a whole tag period late and were taken for a later cycle's reply, which was
    /// then counted as a duplicate (see [`crate::cyclic`]).
    pub late_wrapped: u64,
    /// Came back broken.
    pub corrupted: u64,
    /// Dropped by the kernel for our socket (buffer or ring full).
    pub kernel_socket: u64,
    /// Dropped by our interface or the veth peer on receive or transmit.
    pub kernel_iface: u64,
    /// Dropped by an interface for a bad FCS.
    pub bad_fcs: u64,
    /// Sent, and nothing came back.
    pub never_answered: u64,
    /// Counter deltas the causes were read from, for the report.
    pub detail: String,
}

impl LossReport {
    /// Attribute the losses between `start` and `end`.
    pub fn between(start: &LossSnapshot, end: &LossSnapshot) -> LossReport {
        let (a, b) = (&start.cyclic, &end.cyclic);
        let lost = b.frames_lost - a.frames_lost;
        let mut left = lost;
        let mut take = |n: u64| {
            let t = n.min(left);
            left -= t;
            t
        };
        let late = take(b.frames_late - a.frames_late);
        let late_wrapped = take(b.frames_duplicated - a.frames_duplicated);
        let corrupted = take(b.frames_corrupted - a.frames_corrupted);
        let socket = match (start.kernel_drops, end.kernel_drops) {
            (Some(x), Some(y)) => y.saturating_sub(x),
            _ => 0,
        };
        let delta =
            |s: &Option<(String, IfaceStats)>, e: &Option<(String, IfaceStats)>| match (s, e) {
                (Some((n, x)), Some((_, y))) => Some((n.clone(), y.since(x))),
                _ => None,
            };
        let ours = delta(&start.iface, &end.iface);
        let peer = delta(&start.peer, &end.peer);
        // What either end did not send on or receive.
        let drops = |d: &Option<(String, IfaceStats)>| {
            d.as_ref()
                .map_or(0, |(_, d)| d.rx_dropped + d.rx_other_errors + d.tx_dropped)
        };
        let iface_drops = drops(&ours) + drops(&peer);
        let fcs =
            ours.as_ref().map_or(0, |(_, d)| d.rx_crc) + peer.as_ref().map_or(0, |(_, d)| d.rx_crc);
        let kernel_socket = take(socket);
        let kernel_iface = take(iface_drops);
        let bad_fcs = take(fcs);
        let mut detail = format!(
            "socket drops {}",
            end.kernel_drops
                .map_or("n/a".into(), |_| socket.to_string())
        );
        for (who, d) in [("", &ours), ("peer ", &peer)] {
            if let Some((n, d)) = d {
                let _ = write!(
                    detail,
                    "; {who}{n}: rx dropped {}, rx bad FCS {}, rx other errors {}, tx dropped {}",
                    d.rx_dropped, d.rx_crc, d.rx_other_errors, d.tx_dropped
                );
            }
        }
        LossReport {
            sent: b.frames_sent - a.frames_sent,
            lost,
            late,
            late_wrapped,
            corrupted,
            kernel_socket,
            kernel_iface,
            bad_fcs,
            never_answered: left,
            detail,
        }
    }

    /// The report for humans: one line of causes, one of the counters behind them.
    pub fn text(&self) -> String {
        format!(
            "losses by cause: {} of {} cyclic frames not back in their cycle: late {}, late by a whole tag period (counted as duplicates) {}, corrupted {}, dropped by the kernel (socket) {}, dropped by an interface {}, bad FCS {}, never answered {} (the other side's own counters tell where: `ecat sim` reports the frames its socket dropped)\nloss counters: {}\n",
            self.lost,
            self.sent,
            self.late,
            self.late_wrapped,
            self.corrupted,
            self.kernel_socket,
            self.kernel_iface,
            self.bad_fcs,
            self.never_answered,
            self.detail
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(lost: u64, late: u64, corrupted: u64, drops: u64) -> LossSnapshot {
        LossSnapshot {
            cyclic: CyclicCounters {
                frames_sent: 1000 + lost,
                frames_lost: lost,
                frames_late: late,
                frames_corrupted: corrupted,
                ..Default::default()
            },
            kernel_drops: Some(drops),
            iface: Some((
                "x".into(),
                IfaceStats {
                    rx_dropped: drops,
                    ..Default::default()
                },
            )),
            peer: None,
        }
    }

    #[test]
    fn every_lost_frame_gets_one_cause() {
        let r = LossReport::between(&snap(1, 0, 0, 5), &snap(11, 3, 2, 7));
        assert_eq!(r.lost, 10);
        assert_eq!((r.late, r.corrupted), (3, 2));
        assert_eq!(r.kernel_socket, 2);
        assert_eq!(r.kernel_iface, 2);
        assert_eq!(r.never_answered, 1);
        assert_eq!(
            r.late
                + r.late_wrapped
                + r.corrupted
                + r.kernel_socket
                + r.kernel_iface
                + r.bad_fcs
                + r.never_answered,
            r.lost
        );
        // More kernel drops than losses: only the losses are attributed.
        let r = LossReport::between(&snap(0, 0, 0, 0), &snap(1, 0, 0, 50));
        assert_eq!((r.kernel_socket, r.never_answered), (1, 0));
        assert!(r.text().contains("never answered 0"), "{}", r.text());
    }

    #[test]
    fn reads_the_loopback_counters() {
        if let Some(s) = IfaceStats::read("lo") {
            assert_eq!(s.since(&s), IfaceStats::default());
        }
        assert_eq!(IfaceStats::read("no-such-iface-reliab"), None);
        assert_eq!(link_iface("raw:eth7").as_deref(), Some("eth7"));
        assert_eq!(link_iface("sim:io"), None);
    }
}
