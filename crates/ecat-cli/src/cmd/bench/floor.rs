//! The floors: what the wire and the kernel cost without any EtherCAT processing.
//!
//! `floor echo`: the peer sends every frame straight back; this side sends one frame of the
//! cyclic frame's size per cycle, on the same absolute schedule as the MainDevice, and times
//! the round trip (raw socket, Block or BusyPoll like the ecat row it is compared with).
//! `bare timer`: a thread with the cycle thread's settings that only sleeps to each boundary
//! (`clock_nanosleep` absolute) and records how late it woke, as cyclictest does; it counts an
//! overrun when it wakes past the next boundary (what the machine alone allows). Both start
//! on a whole multiple of the period ([`first_boundary`]), so their phase to the clock is the
//! same in every round.

use super::row::{some, Row};
use ecat::cycle::{mono_ns, realtime_setup, sleep_until, CycleOptions};
use ecat::link::{LinkOptions, RecvMode};
use ecat::perf::Figure;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The first cycle boundary: a whole multiple of the period on CLOCK_MONOTONIC, at least one
/// period ahead, so that every floor round runs at the same phase to the clock and the phase
/// is not one more thing that differs between rounds. It does not remove the two levels the
/// echo floor shows on this shared 2-core VM: a row's median round trip sits either near
/// 15 µs or near 40–70 µs and keeps that level for its whole window (the ecat rows, against
/// the simulated network, do not jump like this), so with 3 rounds the floor's median of
/// medians, and every rtt/floor ratio with it, can move by about 2x from run to run.
pub fn first_boundary(period: u64) -> u64 {
    let period = period.max(1);
    (mono_ns() / period + 2) * period
}

/// An EtherCAT frame of `len` bytes (at least 60): broadcast, one BRD datagram filling it.
pub fn echo_frame(len: usize) -> Vec<u8> {
    let len = len.clamp(60, 1514);
    let mut f = vec![0u8; len];
    f[..6].fill(0xff);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
    f[12..14].copy_from_slice(&[0x88, 0xa4]);
    let data = len - 14 - 2 - 10 - 2;
    let ecat_len = (10 + data + 2) as u16;
    f[14..16].copy_from_slice(&(ecat_len | 0x1000).to_le_bytes());
    f[16] = 7; // BRD
    f[22..24].copy_from_slice(&(data as u16).to_le_bytes());
    f
}

/// Round trip of an echoed frame of `len` bytes on `spec` at `opts.period_ns` for `seconds`.
pub fn echo_row(
    name: &str,
    spec: &str,
    busy: bool,
    len: usize,
    opts: &CycleOptions,
    stop: &AtomicBool,
) -> Row {
    let mode = if busy {
        RecvMode::BusyPoll
    } else {
        RecvMode::Block
    };
    let mut link = match ecat::link::open_with(
        spec,
        LinkOptions {
            recv_mode: mode,
            ..Default::default()
        },
    ) {
        Ok(l) => l,
        Err(e) => return Row::unavailable(name, spec, e.to_string()),
    };
    if let Err(e) = realtime_setup(opts) {
        return Row::unavailable(name, spec, e.to_string());
    }
    let frame = echo_frame(len);
    let mut buf = vec![0u8; 2048];
    let (mut rtt, mut wake, mut cyc) = (Figure::default(), Figure::default(), Figure::default());
    let period = opts.period_ns;
    let cycles = opts.duration_ns / period.max(1);
    let (mut lost, mut overruns, mut sent) = (0u64, 0u64, 0u64);
    let mut next = first_boundary(period);
    let mut last = 0;
    for _ in 0..cycles {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        sleep_until(next);
        let t0 = mono_ns();
        wake.record(t0.saturating_sub(next));
        if last != 0 {
            cyc.record(t0 - last);
        }
        last = t0;
        let deadline = Instant::now() + Duration::from_nanos(period - period / 10);
        let ts = mono_ns();
        if link.send(&frame).is_err() {
            lost += 1;
            continue;
        }
        sent += 1;
        match link.recv(&mut buf, Some(deadline)) {
            Ok(Some(_)) => rtt.record(mono_ns() - ts),
            _ => lost += 1,
        }
        next += period;
        let now = mono_ns();
        if now >= next {
            overruns += 1;
            next += (now - next) / period * period + period;
        }
    }
    // Anything that came back late is not counted twice: drain it.
    while let Ok(Some(_)) = link.recv(&mut buf, Some(Instant::now() + Duration::from_millis(5))) {}
    Row {
        name: name.into(),
        link: format!("{spec} ({} bytes)", frame.len()),
        busy,
        available: true,
        cycles: sent,
        round_trip: some(rtt.summary()),
        wake: some(wake.summary()),
        cycle_time: some(cyc.summary()),
        frames_sent: sent,
        frames_lost: lost,
        overruns,
        ..Default::default()
    }
}

/// Wake-up latency of a thread that does nothing but sleep to each boundary.
pub fn bare_timer_row(opts: &CycleOptions, stop: &AtomicBool) -> Row {
    let name = "bare timer";
    let notes = match realtime_setup(opts) {
        Ok(n) => n,
        Err(e) => return Row::unavailable(name, "-", e.to_string()),
    };
    let (mut wake, mut cyc) = (Figure::default(), Figure::default());
    let period = opts.period_ns;
    let cycles = opts.duration_ns / period.max(1);
    let mut next = first_boundary(period);
    let mut last = 0;
    let (mut n, mut overruns) = (0, 0);
    for _ in 0..cycles {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        sleep_until(next);
        let t0 = mono_ns();
        wake.record(t0.saturating_sub(next));
        if last != 0 {
            cyc.record(t0 - last);
        }
        last = t0;
        n += 1;
        next += period;
        let now = mono_ns();
        if now >= next {
            overruns += 1;
            next += (now - next) / period * period + period;
        }
    }
    Row {
        name: name.into(),
        link: "clock_nanosleep(TIMER_ABSTIME)".into(),
        available: true,
        cycles: n,
        wake: some(wake.summary()),
        cycle_time: some(cyc.summary()),
        overruns,
        note: notes.join(", "),
        ..Default::default()
    }
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
}
