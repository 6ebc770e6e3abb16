//! The floors: what the wire and the kernel cost without any EtherCAT processing.
//!
//! The echo floor: the peer sends every echo frame straight back; this side sends one frame
//! of the cyclic frame's size per cycle, on the same absolute schedule as the MainDevice, and
//! times the round trip (a raw socket like the raw link's, Block or BusyPoll like the ecat row
//! it is compared with; echo frames have their own EtherType, see `packet`). It runs on its
//! own (`floor echo`, `floor echo busy`) and, as each ecat row's own floor, in alternating
//! windows with the ecat cycle in the same thread, so that a row's round trip and its floor
//! are measured in the same moments (see `ecat_rows`).
//!
//! Each frame carries its cycle's sequence number and only the reply with that number ends the
//! round trip, as the MainDevice matches its datagram indices: a reply that misses its cycle
//! (a VM stall) is counted lost, and when it turns up later it is discarded as stale instead
//! of ending the next cycle's wait at once. (Before, one late reply put the row one frame
//! behind for the rest of its window, every later "round trip" was the send call plus the
//! previous reply already waiting, about 15 µs, and the floor seemed to jump between 15 and
//! 60 µs from row to row.)
//!
//! `bare timer`: a thread with the cycle thread's settings that only sleeps to each boundary
//! (`clock_nanosleep` absolute) and records how late it woke, as cyclictest does; it counts an
//! overrun when it wakes past the next boundary (what the machine alone allows). Run on their
//! own, both start on a whole multiple of the period ([`first_boundary`]), so their phase to
//! the clock is the same in every round.

use super::packet::{socket, ETHERTYPE_FLOOR};
use super::row::{some, Row};
use ecat::cycle::{mono_ns, realtime_setup, sleep_until, CycleOptions};
use ecat::link::raw::RawSocket;
use ecat::link::Link;
use ecat::link::RecvMode;
use ecat::perf::Figure;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The first cycle boundary: a whole multiple of the period on CLOCK_MONOTONIC, at least one
/// period ahead, so that every floor round runs at the same phase to the clock and the phase
/// is not one more thing that differs between rounds.
pub fn first_boundary(period: u64) -> u64 {
    let period = period.max(1);
    (mono_ns() / period + 2) * period
}

/// An echo frame of `len` bytes (at least 60): broadcast, EtherType [`ETHERTYPE_FLOOR`], an
/// EtherCAT header and one BRD datagram filling it (what a cyclic frame of that size looks
/// like on the wire, apart from the EtherType).
pub fn echo_frame(len: usize) -> Vec<u8> {
    let len = len.clamp(60, 1514);
    let mut f = vec![0u8; len];
    f[..6].fill(0xff);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
    f[12..14].copy_from_slice(&ETHERTYPE_FLOOR.to_be_bytes());
    let data = len - 14 - 2 - 10 - 2;
    let ecat_len = (10 + data + 2) as u16;
    f[14..16].copy_from_slice(&(ecat_len | 0x1000).to_le_bytes());
    f[16] = 7; // BRD
    f[22..24].copy_from_slice(&(data as u16).to_le_bytes());
    f
}

/// Where an echo frame carries its sequence number: the first 4 bytes of the datagram's data
/// (an echo frame has at least 30 bytes of data).
const SEQ: std::ops::Range<usize> = 26..30;

/// Stamp `frame` with sequence number `seq` (also in the datagram index, for captures).
pub fn stamp(frame: &mut [u8], seq: u32) {
    frame[SEQ].copy_from_slice(&seq.to_le_bytes());
    frame[17] = seq as u8;
}

/// Whether the `n` bytes received in `buf` are the reply to the frame stamped `seq`.
pub fn is_reply(buf: &[u8], n: usize, seq: u32) -> bool {
    n >= SEQ.end && buf[SEQ] == seq.to_le_bytes()
}

/// The echo floor's client: its socket, frame and figures.
pub struct Echo {
    link: RawSocket,
    busy: bool,
    frame: Vec<u8>,
    buf: Vec<u8>,
    clock: Timer,
    rtt: Figure,
    sent: u64,
    lost: u64,
    stale: u64,
}

impl Echo {
    /// Open the echo socket on `iface` (Block or BusyPoll receive) for frames of `len` bytes.
    pub fn open(iface: &str, busy: bool, len: usize) -> Result<Echo, String> {
        let mode = if busy {
            RecvMode::BusyPoll
        } else {
            RecvMode::Block
        };
        Ok(Echo {
            link: socket(iface, ETHERTYPE_FLOOR, mode)?,
            busy,
            frame: echo_frame(len),
            buf: vec![0u8; 2048],
            clock: Timer::default(),
            rtt: Figure::default(),
            sent: 0,
            lost: 0,
            stale: 0,
        })
    }

    /// Echo one frame per period from boundary `first` on, for `duration` ns; stops early
    /// when `stop` is set.
    pub fn run(&mut self, first: u64, period: u64, duration: u64, stop: &AtomicBool) {
        let Echo {
            link,
            frame,
            buf,
            clock,
            rtt,
            sent,
            lost,
            stale,
            ..
        } = self;
        clock.run_with(first, period, duration, stop, || {
            let deadline = Instant::now() + Duration::from_nanos(period - period / 10);
            let seq = *sent as u32;
            stamp(frame, seq);
            let ts = mono_ns();
            if link.send(frame).is_err() {
                *lost += 1;
                return;
            }
            *sent += 1;
            loop {
                match link.recv(buf, Some(deadline)) {
                    Ok(Some(n)) if is_reply(buf, n, seq) => {
                        rtt.record(mono_ns() - ts);
                        return;
                    }
                    Ok(Some(_)) => *stale += 1,
                    _ => {
                        *lost += 1;
                        return;
                    }
                }
            }
        });
    }

    /// The round trip recorded so far.
    pub fn round_trip(&self) -> Option<ecat::perf::Summary> {
        some(self.rtt.summary())
    }

    /// Frames that did not come back in their cycle.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// The row of everything recorded, named `name`, the link described by `spec`.
    pub fn row(&self, name: &str, spec: &str) -> Row {
        let len = self.frame.len();
        Row {
            link: format!("{spec} ({len} bytes, EtherType {ETHERTYPE_FLOOR:#06x})"),
            busy: self.busy,
            cycles: self.sent,
            round_trip: self.round_trip(),
            frames_sent: self.sent,
            frames_lost: self.lost,
            ..self
                .clock
                .row(name, format!("{} late replies discarded", self.stale))
        }
    }
}

/// The echo floor on its own: round trip of an echo frame of `len` bytes on interface `iface`
/// at `opts.period_ns` for `opts.duration_ns`.
pub fn echo_row(
    name: &str,
    iface: &str,
    busy: bool,
    len: usize,
    opts: &CycleOptions,
    stop: &AtomicBool,
) -> Row {
    let mut echo = match Echo::open(iface, busy, len) {
        Ok(e) => e,
        Err(e) => return Row::unavailable(name, iface, e),
    };
    if let Err(e) = realtime_setup(opts) {
        return Row::unavailable(name, iface, e.to_string());
    }
    let period = opts.period_ns;
    echo.run(first_boundary(period), period, opts.duration_ns, stop);
    echo.row(name, iface)
}

/// A bare timer's figures: a thread that does nothing but sleep to each boundary (also the
/// echo floor's schedule).
#[derive(Debug, Default)]
pub struct Timer {
    wake: Figure,
    cyc: Figure,
    cycles: u64,
    overruns: u64,
}

impl Timer {
    /// Sleep to each boundary from `first` on for `duration` ns (a whole number of periods),
    /// recording how late each wake-up was; stops early when `stop` is set.
    pub fn run(&mut self, first: u64, period: u64, duration: u64, stop: &AtomicBool) {
        self.run_with(first, period, duration, stop, || {});
    }

    /// [`Timer::run`], calling `body` after each wake-up (counted an overrun when it ends
    /// past the next boundary, which the schedule then skips).
    pub fn run_with(
        &mut self,
        first: u64,
        period: u64,
        duration: u64,
        stop: &AtomicBool,
        mut body: impl FnMut(),
    ) {
        let period = period.max(1);
        let mut next = first;
        let mut last = 0;
        for _ in 0..duration / period {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            sleep_until(next);
            let t0 = mono_ns();
            self.wake.record(t0.saturating_sub(next));
            if last != 0 {
                self.cyc.record(t0 - last);
            }
            last = t0;
            self.cycles += 1;
            body();
            next += period;
            let now = mono_ns();
            if now >= next {
                self.overruns += 1;
                next += (now - next) / period * period + period;
            }
        }
    }

    /// The row of everything recorded, with `note` on how the thread was set up.
    pub fn row(&self, name: &str, note: String) -> Row {
        Row {
            name: name.into(),
            link: "clock_nanosleep(TIMER_ABSTIME)".into(),
            available: true,
            cycles: self.cycles,
            wake: some(self.wake.summary()),
            cycle_time: some(self.cyc.summary()),
            overruns: self.overruns,
            note,
            ..Default::default()
        }
    }
}

/// Wake-up latency of a thread with `opts`' settings that does nothing but sleep to each
/// boundary.
pub fn bare_timer_row(opts: &CycleOptions, stop: &AtomicBool) -> Row {
    let name = "bare timer";
    let notes = match realtime_setup(opts) {
        Ok(n) => n,
        Err(e) => return Row::unavailable(name, "-", e.to_string()),
    };
    let mut t = Timer::default();
    let period = opts.period_ns;
    t.run(first_boundary(period), period, opts.duration_ns, stop);
    t.row(name, notes.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_frame_is_well_formed() {
        for len in [10, 60, 183, 1514, 4000] {
            let f = echo_frame(len);
            assert_eq!(f.len(), len.clamp(60, 1514));
            let h = u16::from_le_bytes([f[14], f[15]]);
            assert_eq!(h >> 12, 1);
            assert_eq!((h & 0x7ff) as usize, f.len() - 16);
            let dlen = u16::from_le_bytes([f[22], f[23]]) as usize;
            assert_eq!(16 + 10 + dlen + 2, f.len());
        }
    }

    #[test]
    fn only_the_reply_with_the_cycles_sequence_number_ends_the_round_trip() {
        let mut f = echo_frame(60);
        stamp(&mut f, 7);
        assert!(is_reply(&f, f.len(), 7));
        // A late reply of the previous cycle, or a short frame, is not this cycle's reply.
        assert!(!is_reply(&f, f.len(), 8));
        assert!(!is_reply(&f, 20, 7));
        stamp(&mut f, 0x1_0008);
        assert!(!is_reply(&f, f.len(), 8));
    }
}
