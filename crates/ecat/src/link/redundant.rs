//! Cable redundancy: one [`Link`] over two ports, main and backup, cabled to the two ends of
//! a ring of SubDevices (`ecat run -i eth0 --backup eth1`).
//!
//! Every frame leaves on the main port; with the ring closed it passes every SubDevice and
//! arrives at the backup port, and that is the answer. With every frame a small companion goes
//! out of the backup port: one BRD of 2 bytes with the same datagram index (SOEM's scheme). On
//! a closed ring the companion is only forwarded and arrives at the main port untouched; when a
//! cable breaks, the SubDevices in front of the break answer the frame back to the main port
//! and those behind it answer the companion back to the backup port, its working counter
//! telling how many they are. The half answered on the main port is then sent on through the
//! backup port: it loops at the break into the back half, whose SubDevices process it as if it
//! had come through the whole line (auto-increment addresses go on counting, working counters
//! add up), and it comes back to the backup port complete. So the process data of every
//! SubDevice stays complete, at the cost of a second pass through the back half.
//!
//! The ring state ([`RingStatus`]) follows the frames: open when a frame comes back to the main
//! port, closed again when one passes from main to backup by itself. The caller maps "behind"
//! (the back half's size) to positions.
//!
//! Distributed clocks: a frame that carries the latch write (0x0900) and arrives at the backup
//! port through the closed ring is sent back once through the backup port, so every port 1
//! latches a receive time as in a line and the delays measure as usual (the turnaround cancels
//! out of the differences). After a break the back half sees every frame later than through
//! the closed ring, by the same amount S for all of them (from the break on, the path through
//! the back half is the same). Rather than changing their delays (which would be wrong again
//! the moment the ring closes), the reference time the second pass carries to them (FRMW) is
//! advanced by S, and put back before the caller sees the frame. Until the MainDevice has
//! measured S after a break ([`Link::set_dc_shift`], see [`super::redundant_dc`]) the back
//! half does not execute the FRMW at all (it is turned into a NOP for the second pass), so
//! its clocks run on undisturbed.
//!
//! Receiving waits on both ports at once (`ppoll` on the two sockets, see [`Link::poll_fd`]);
//! frames are received into the caller's buffer and sent on from there, so nothing allocates.

use super::{Link, LinkCounters};
use crate::clock::VirtualTime;
use crate::error::{Error, Result};
use std::time::{Duration, Instant};

/// What the redundant link knows about the ring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingStatus {
    /// A cable is broken: frames come back in two halves.
    pub open: bool,
    /// While open: SubDevices behind the break (answering on the backup port), if known.
    pub behind: Option<u16>,
    /// Changes of `open` since the link was opened.
    pub changes: u64,
    /// Frames sent on through the backup port (second passes).
    pub resent: u64,
    /// While open: how much later (ns) the back half sees a frame than through the closed
    /// ring, once measured.
    pub dc_shift: Option<i64>,
}

impl RingStatus {
    /// The broken cable as positions (last in front, first behind) of a bus of `count`
    /// SubDevices, when open and known.
    pub fn break_between(&self, count: usize) -> Option<(usize, usize)> {
        let behind = self.behind? as usize;
        (self.open && behind >= 1 && behind < count).then(|| (count - behind - 1, count - behind))
    }
}

const ETH_HDR: usize = 14;
const IDX_AT: usize = ETH_HDR + 3;
const CMD_AT: usize = ETH_HDR + 2;
const CMD_FRMW: u8 = 14;
const CMD_NOP: u8 = 0;
const TAG_COMPANION: u8 = 0x40;
const TAG_REFLECT: u8 = 0x80;

/// What a received frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Primary,
    Companion,
    Reflect,
    Other,
}

/// A link over a main and a backup port (see the module note).
pub struct RedundantLink {
    main: Box<dyn Link>,
    backup: Box<dyn Link>,
    name: String,
    mac: [u8; 6],
    /// Per datagram index: the frame's first half came back and was sent on.
    resent: [bool; 256],
    /// Per datagram index: offset of the FRMW held back or shifted in the second pass (0:
    /// none), and the shift applied (`None`: held back).
    held_at: [u16; 256],
    shifted: [Option<i64>; 256],
    companion: [u8; 60],
    status: RingStatus,
    counters: LinkCounters,
}

impl std::fmt::Debug for RedundantLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedundantLink")
            .field("name", &self.name)
            .field("status", &self.status)
            .finish()
    }
}

impl RedundantLink {
    /// Combine `main` and `backup`. Fails if they are the same port.
    pub fn new(main: Box<dyn Link>, backup: Box<dyn Link>) -> Result<RedundantLink> {
        if main.name() == backup.name() {
            return Err(Error::BadLinkSpec {
                spec: backup.name().to_string(),
                reason: "the backup interface is the main interface; give the second interface, the one cabled to the far end of the ring".into(),
            });
        }
        let mac = main.mac();
        let name = format!("{}+{}", main.name(), backup.name());
        let mut companion = [0u8; 60];
        companion[..6].copy_from_slice(&[0xFF; 6]);
        companion[6..12].copy_from_slice(&tagged(mac, TAG_COMPANION));
        companion[12..14].copy_from_slice(&ecat_wire::frame::ETHERTYPE_ETHERCAT.to_be_bytes());
        // EtherCAT header: 14 bytes of datagrams, type 1.
        companion[14..16].copy_from_slice(&(14u16 | 1 << 12).to_le_bytes());
        companion[CMD_AT] = 7; // BRD of 0x0000, 2 bytes, WKC counts the ESCs that got it
        companion[ETH_HDR + 8..ETH_HDR + 10].copy_from_slice(&2u16.to_le_bytes());
        Ok(RedundantLink {
            main,
            backup,
            name,
            mac,
            resent: [false; 256],
            held_at: [0; 256],
            shifted: [None; 256],
            companion,
            status: RingStatus::default(),
            counters: LinkCounters::default(),
        })
    }

    /// The ring state.
    pub fn status(&self) -> RingStatus {
        self.status
    }

    /// Advance the reference time carried into the back half of an open ring by `shift_ns`
    /// (see the module note); ignored while the ring is closed.
    pub fn set_dc_shift(&mut self, shift_ns: i64) {
        if self.status.open {
            self.status.dc_shift = Some(shift_ns);
        }
    }

    fn kind(&self, f: &[u8]) -> Kind {
        if f.len() < ETH_HDR + 12 || f[12..14] != ecat_wire::frame::ETHERTYPE_ETHERCAT.to_be_bytes()
        {
            return Kind::Other;
        }
        let m = &self.mac;
        let src = &f[6..12];
        if src[0] & !0x02 != m[0] & !0x02 || src[1..5] != m[1..5] {
            return Kind::Other;
        }
        match src[5] ^ m[5] {
            0 => Kind::Primary,
            TAG_COMPANION => Kind::Companion,
            TAG_REFLECT => Kind::Reflect,
            _ => Kind::Other,
        }
    }

    fn set_open(&mut self, open: bool) {
        if self.status.open != open {
            self.status.open = open;
            self.status.changes += 1;
            self.status.behind = None;
            self.status.dc_shift = None;
        }
    }

    /// Handle a frame from the main port in `buf[..n]`; true if it goes to the caller.
    fn on_main(&mut self, buf: &mut [u8], n: usize) -> Result<bool> {
        match self.kind(&buf[..n]) {
            Kind::Primary => {
                // The front half of a broken ring: send it on into the back half.
                self.set_open(true);
                let idx = buf[IDX_AT] as usize;
                self.resent[idx] = true;
                self.status.resent += 1;
                self.held_at[idx] = frmw_second_pass(&mut buf[..n], self.status.dc_shift);
                self.shifted[idx] = self.status.dc_shift;
                self.backup.send(&buf[..n])?;
                Ok(false)
            }
            Kind::Companion | Kind::Reflect => Ok(false),
            Kind::Other => Ok(true),
        }
    }

    /// Handle a frame from the backup port; true if it goes to the caller.
    fn on_backup(&mut self, buf: &mut [u8], n: usize) -> Result<bool> {
        match self.kind(&buf[..n]) {
            Kind::Primary => {
                let idx = buf[IDX_AT] as usize;
                if std::mem::take(&mut self.resent[idx]) {
                    let at = std::mem::take(&mut self.held_at[idx]) as usize;
                    frmw_restore(&mut buf[..n], at, self.shifted[idx]);
                    return Ok(true);
                }
                // Through the whole ring by itself: the ring is closed.
                self.set_open(false);
                if carries_latch(&buf[..n]) {
                    let own = buf[11];
                    buf[11] = self.mac[5] ^ TAG_REFLECT;
                    let r = self.backup.send(&buf[..n]);
                    buf[11] = own;
                    r?;
                }
                Ok(true)
            }
            Kind::Companion => {
                let wkc = u16::from_le_bytes([buf[ETH_HDR + 14], buf[ETH_HDR + 15]]);
                if wkc > 0 {
                    self.set_open(true);
                    self.status.behind = Some(wkc);
                }
                Ok(false)
            }
            Kind::Reflect => Ok(false),
            Kind::Other => Ok(true),
        }
    }

    /// Take every frame waiting on either port; the first for the caller ends it.
    fn drain(&mut self, buf: &mut [u8]) -> Result<Option<usize>> {
        loop {
            let mut any = false;
            if let Some(n) = self.backup.recv(buf, None)? {
                any = true;
                if self.on_backup(buf, n)? {
                    return Ok(Some(n));
                }
            }
            if let Some(n) = self.main.recv(buf, None)? {
                any = true;
                if self.on_main(buf, n)? {
                    return Ok(Some(n));
                }
            }
            if !any {
                return Ok(None);
            }
        }
    }
}

/// The source MAC of the frames of `kind` (last byte marked).
fn tagged(mut mac: [u8; 6], tag: u8) -> [u8; 6] {
    mac[5] ^= tag;
    mac
}

/// Walk the datagrams of an EtherCAT frame: `f(offset of the datagram, its data length)`.
fn for_each_datagram(frame: &[u8], mut f: impl FnMut(usize, usize)) {
    let mut at = ETH_HDR + 2;
    while at + 12 <= frame.len() {
        let len_word = u16::from_le_bytes([frame[at + 6], frame[at + 7]]);
        let len = (len_word & 0x07FF) as usize;
        if at + 10 + len + 2 > frame.len() {
            return;
        }
        f(at, len);
        if len_word & 0x8000 == 0 {
            return;
        }
        at += 10 + len + 2;
    }
}

/// True if a datagram of the frame writes 0x0900 (the DC receive-time latch).
fn carries_latch(frame: &[u8]) -> bool {
    let mut latch = false;
    for_each_datagram(frame, |at, len| {
        let cmd = frame[at];
        let ado = u16::from_le_bytes([frame[at + 4], frame[at + 5]]) as usize;
        // APWR 2, FPWR 5, BWR 8.
        if matches!(cmd, 2 | 5 | 8) && ado <= 0x0903 && ado + len > 0x0900 {
            latch = true;
        }
    });
    latch
}

/// Add `v` to the little-endian number in `b` (up to 8 bytes, wrapping).
fn add_le(b: &mut [u8], v: i64) {
    let n = b.len().min(8);
    let mut x = [0u8; 8];
    x[..n].copy_from_slice(&b[..n]);
    let y = u64::from_le_bytes(x).wrapping_add(v as u64).to_le_bytes();
    b[..n].copy_from_slice(&y[..n]);
}

/// Prepare the first FRMW datagram of a frame for the second pass: advance the reference time
/// it carries by `shift`, or without one turn it into a NOP (its data, the reference's time
/// read in the front half, stays). Returns its offset (0: none).
fn frmw_second_pass(frame: &mut [u8], shift: Option<i64>) -> u16 {
    let mut first = (0, 0);
    for_each_datagram(frame, |at, len| {
        if frame[at] == CMD_FRMW && first.0 == 0 {
            first = (at, len);
        }
    });
    let (at, len) = first;
    if at != 0 {
        match shift {
            Some(s) => add_le(&mut frame[at + 10..at + 10 + len], s),
            None => frame[at] = CMD_NOP,
        }
    }
    at as u16
}

/// Undo [`frmw_second_pass`] on the returned frame, so the caller sees the reference time.
fn frmw_restore(frame: &mut [u8], at: usize, shift: Option<i64>) {
    if at == 0 || at + 12 > frame.len() {
        return;
    }
    let len = (u16::from_le_bytes([frame[at + 6], frame[at + 7]]) & 0x07FF) as usize;
    if at + 10 + len > frame.len() {
        return;
    }
    match shift {
        Some(s) => add_le(&mut frame[at + 10..at + 10 + len], s.wrapping_neg()),
        None => frame[at] = CMD_FRMW,
    }
}

impl Link for RedundantLink {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        self.counters.tx_frames += 1;
        if frame.len() > IDX_AT {
            self.resent[frame[IDX_AT] as usize] = false;
            self.held_at[frame[IDX_AT] as usize] = 0;
            self.companion[IDX_AT] = frame[IDX_AT];
        }
        let r = self.main.send(frame);
        if r.is_err() {
            self.counters.tx_errors += 1;
        }
        // The companion finds out which SubDevices sit behind a break.
        let c = self.companion;
        let rb = self.backup.send(&c);
        r.and(rb)
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        loop {
            if let Some(n) = self.drain(buf)? {
                self.counters.rx_frames += 1;
                return Ok(Some(n));
            }
            let Some(d) = deadline else {
                return Ok(None);
            };
            if self.virtual_time().is_some() || Instant::now() >= d {
                return Ok(None);
            }
            match (self.main.poll_fd(), self.backup.poll_fd()) {
                (Some(a), Some(b)) => wait_readable(&[a, b], d)?,
                _ => std::thread::sleep(Duration::from_micros(20).min(d - Instant::now())),
            }
        }
    }

    fn mac(&self) -> [u8; 6] {
        self.mac
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn counters(&self) -> LinkCounters {
        let (m, b) = (self.main.counters(), self.backup.counters());
        LinkCounters {
            tx_frames: self.counters.tx_frames,
            rx_frames: self.counters.rx_frames,
            rx_ignored: m.rx_ignored + b.rx_ignored,
            tx_errors: m.tx_errors + b.tx_errors,
        }
    }

    fn describe(&self) -> String {
        format!(
            "redundant ring: main {}, backup {}",
            self.main.describe(),
            self.backup.describe()
        )
    }

    fn kernel_drops(&mut self) -> Option<u64> {
        match (self.main.kernel_drops(), self.backup.kernel_drops()) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        }
    }

    fn virtual_time(&self) -> Option<VirtualTime> {
        self.main.virtual_time()
    }

    fn redundancy(&self) -> Option<RingStatus> {
        Some(self.status)
    }

    fn set_dc_shift(&mut self, shift_ns: i64) {
        RedundantLink::set_dc_shift(self, shift_ns);
    }
}

/// Sleep until one of `fds` is readable or `deadline`.
pub(crate) fn wait_readable(fds: &[std::os::fd::RawFd; 2], deadline: Instant) -> Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    let ts = libc::timespec {
        tv_sec: left.as_secs() as libc::time_t,
        tv_nsec: left.subsec_nanos() as libc::c_long,
    };
    let mut p = fds.map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    // SAFETY: `p` is a valid array of two pollfd, `ts` a valid timespec.
    let rc = unsafe { libc::ppoll(p.as_mut_ptr(), 2, &ts, std::ptr::null()) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(Error::Io {
                op: "waiting for a frame on the main or backup port",
                iface: String::new(),
                source: e,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn break_positions_from_the_back_half() {
        let s = RingStatus {
            open: true,
            behind: Some(3),
            ..Default::default()
        };
        assert_eq!(s.break_between(8), Some((4, 5)));
        assert_eq!(RingStatus::default().break_between(8), None);
    }
}
