//! The real-time cycle: wake up on an absolute schedule, exchange process data, measure.
//!
//! [`realtime_setup`] applies what a real-time EtherCAT host needs for the calling thread
//! (SCHED_FIFO priority, CPU affinity, locked and prefaulted memory, minimal timer slack) and
//! says plainly what was refused and how to allow it. Real-time is the default: the timer
//! slack is always cut to 1 ns (Linux gives ordinary threads 50 µs, which shows as wake-up
//! latency), and with [`CycleOptions::auto_realtime`] the thread takes SCHED_FIFO at
//! [`DEFAULT_PRIORITY`] and locks memory when the process may, and only notes it when it may
//! not. Explicit settings (`priority`, `lock_memory`) are requirements: refused, they fail.
//! [`CycleOptions::validate`] refuses periods the loop cannot serve (below [`MIN_PERIOD_NS`]). [`run`] is the loop: `clock_nanosleep(CLOCK_MONOTONIC,
//! TIMER_ABSTIME)` to the next period boundary (optionally waking early and spinning the last
//! microseconds), then
//! `process received frames → application → send cyclic frames → acyclic work`, then wait for
//! the cyclic frames to come back (the round trip) and collect them, and do the next cycle's
//! supervisor and mailbox work ([`Runtime::prepare_acyclic`]) in the slack. Every step is timed into
//! [`Perf`]. Nothing in the loop allocates or blocks other than the sleep and the wait for the
//! frames; a report callback runs once per report interval, in the slack after the exchange.

use crate::error::{Error, Result};
use crate::perf::{Metric, Perf};
use crate::runtime::Runtime;
use std::sync::atomic::{AtomicBool, Ordering};

/// The SCHED_FIFO priority taken by default: above the kernel's threaded interrupt handlers
/// (50), as cyclictest is usually run, below the watchdog and migration threads (99).
pub const DEFAULT_PRIORITY: i32 = 80;

/// The shortest cycle the loop accepts (20 µs, the last step of `ecat bench`'s ladder): below
/// it a Linux timer wake-up alone takes most of the period, so every cycle would overrun.
pub const MIN_PERIOD_NS: u64 = 20_000;

/// How to run the cycle.
#[derive(Debug, Clone)]
pub struct CycleOptions {
    /// Period in nanoseconds.
    pub period_ns: u64,
    /// Stop after this long (0 = until `stop` is set).
    pub duration_ns: u64,
    /// SCHED_FIFO priority (1..99), if any.
    pub priority: Option<i32>,
    /// CPU to pin the thread to, if any.
    pub cpu: Option<usize>,
    /// Lock all memory and prefault the stack.
    pub lock_memory: bool,
    /// Wake this much early and spin to the boundary (ns; 0 = plain sleep).
    pub busy_wait_ns: u64,
    /// How often the report callback runs (ns).
    pub report_interval_ns: u64,
    /// Take SCHED_FIFO at [`DEFAULT_PRIORITY`] (when `priority` is `None`) and lock memory
    /// (when `lock_memory` is false) if the process is permitted, noting it if not.
    pub auto_realtime: bool,
}

impl Default for CycleOptions {
    fn default() -> Self {
        CycleOptions {
            period_ns: 1_000_000,
            duration_ns: 10_000_000_000,
            priority: None,
            cpu: None,
            lock_memory: false,
            busy_wait_ns: 0,
            report_interval_ns: 2_000_000_000,
            auto_realtime: true,
        }
    }
}

impl CycleOptions {
    /// Check the numbers: a period of at least [`MIN_PERIOD_NS`], a busy-wait shorter than
    /// the period, a report interval that is not 0. One sentence per problem.
    pub fn validate(&self) -> Result<()> {
        if self.period_ns < MIN_PERIOD_NS {
            return Err(Error::Invalid(format!(
                "a cycle time of {} is too short: the smallest accepted cycle is {} us",
                fmt_ns(self.period_ns),
                MIN_PERIOD_NS as f64 / 1e3
            )));
        }
        if self.busy_wait_ns >= self.period_ns {
            return Err(Error::Invalid(format!(
                "a busy-wait of {} does not fit in a cycle of {}: use less than the cycle time",
                fmt_ns(self.busy_wait_ns),
                fmt_ns(self.period_ns)
            )));
        }
        if let Some(prio) = self.priority.filter(|p| !(1..=99).contains(p)) {
            return Err(Error::Invalid(format!(
                "SCHED_FIFO priority {prio} is out of range: use 1..99"
            )));
        }
        let cpus = online_cpus();
        if let Some(cpu) = self.cpu.filter(|&c| c >= cpus) {
            return Err(Error::Invalid(format!(
                "CPU {cpu} does not exist: this machine has CPUs 0..{}",
                cpus - 1
            )));
        }
        if self.report_interval_ns == 0 {
            return Err(Error::Invalid(
                "a report interval of 0 would report every cycle: give at least 100ms".into(),
            ));
        }
        Ok(())
    }
}

/// CPUs of the machine (online), not of the calling thread's affinity mask: a thread
/// already pinned to CPU 1 must still accept `--cpu 1`.
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as usize
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// A duration for a message: `1.5 us`, `2 ms`, `0 ns`.
fn fmt_ns(ns: u64) -> String {
    match ns {
        0..=999 => format!("{ns} ns"),
        1_000..=999_999 => format!("{} us", ns as f64 / 1e3),
        1_000_000..=999_999_999 => format!("{} ms", ns as f64 / 1e6),
        _ => format!("{} s", ns as f64 / 1e9),
    }
}

/// Counters of the loop itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopCounters {
    /// Cycles run.
    pub cycles: u64,
    /// Cycles whose work ended after the next boundary (the schedule skipped ahead).
    pub overruns: u64,
    /// Cycles whose cyclic frames did not all return within the period.
    pub incomplete_returns: u64,
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until CLOCK_MONOTONIC reaches `t` (absolute, immune to drift).
pub fn sleep_until(t: u64) {
    let ts = libc::timespec {
        tv_sec: (t / 1_000_000_000) as libc::time_t,
        tv_nsec: (t % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: valid timespec; EINTR just means we wake early and the caller's check repeats.
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
    {}
}

/// Pin the calling thread (`what`, for the error) to CPU `cpu`; fails with a sentence naming
/// the CPUs there are or the reason the kernel gave.
pub fn pin_current_thread(cpu: usize, what: &str) -> Result<()> {
    let n = online_cpus();
    if cpu >= n || cpu >= libc::CPU_SETSIZE as usize {
        return Err(Error::Invalid(format!(
            "CPU {cpu} does not exist: this machine has CPUs 0..{}",
            n - 1
        )));
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET stays in bounds (checked above).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(Error::Invalid(format!(
            "cannot pin {what} to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// Apply the real-time settings to the calling thread. Returns notes on what was applied;
/// fails with a sentence saying how to allow a refused setting.
pub fn realtime_setup(opts: &CycleOptions) -> Result<Vec<String>> {
    opts.validate()?;
    let mut notes = Vec::new();
    if let Some(cpu) = opts.cpu {
        pin_current_thread(cpu, "the cycle thread")?;
        notes.push(format!("pinned to CPU {cpu}"));
    }
    if let Some(prio) = opts.priority {
        if !(1..=99).contains(&prio) {
            return Err(Error::Invalid(format!(
                "SCHED_FIFO priority {prio} is out of range: use 1..99"
            )));
        }
        if let Err(e) = set_fifo(prio) {
            return Err(Error::Invalid(format!(
                "SCHED_FIFO priority {prio} is not permitted ({e}): run as root, grant CAP_SYS_NICE, or raise `ulimit -r`"
            )));
        }
        notes.push(format!("SCHED_FIFO priority {prio}"));
    } else if opts.auto_realtime {
        notes.push(match set_fifo(DEFAULT_PRIORITY) {
            Ok(()) => format!("SCHED_FIFO priority {DEFAULT_PRIORITY}"),
            Err(e) => format!(
                "SCHED_OTHER (SCHED_FIFO not permitted: {e}; run as root, grant CAP_SYS_NICE or `ulimit -r {DEFAULT_PRIORITY}`)"
            ),
        });
    }
    if !opts.lock_memory && opts.auto_realtime {
        match memlock_limit() {
            Some(kib) => notes.push(format!(
                "memory not locked (the memlock limit is {kib} KiB; run as root or `ulimit -l unlimited`)"
            )),
            // SAFETY: plain syscall.
            None if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 => {
                prefault_stack();
                notes.push("memory locked".into());
            }
            None => notes.push(format!(
                "memory not locked ({}; run as root or `ulimit -l unlimited`)",
                std::io::Error::last_os_error()
            )),
        }
    }
    if opts.lock_memory {
        if let Some(kib) = memlock_limit() {
            return Err(Error::Invalid(format!(
                "cannot lock memory: the memlock limit is {kib} KiB and every later allocation past it would fail; run as root or `ulimit -l unlimited`"
            )));
        }
        // SAFETY: plain syscall.
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
            return Err(Error::Invalid(format!(
                "cannot lock memory ({}): run as root or raise the memlock limit (`ulimit -l unlimited`)",
                std::io::Error::last_os_error()
            )));
        }
        prefault_stack();
        notes.push("memory locked, stack prefaulted".into());
    }
    // SAFETY: plain prctl on the calling thread; 1 ns is the smallest slack Linux takes.
    if unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) } == 0 {
        notes.push("timer slack 1 ns".into());
    }
    Ok(notes)
}

/// The memlock limit in KiB when it would bind `mlockall(MCL_FUTURE)`: `None` for root (which
/// may lock past the limit) or an unlimited limit. Locking all future memory under a finite
/// limit makes every allocation past it fail, so such a limit means "don't lock".
fn memlock_limit() -> Option<u64> {
    // SAFETY: plain syscalls with a valid rlimit pointer.
    unsafe {
        if libc::geteuid() == 0 {
            return None;
        }
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) != 0
            || lim.rlim_cur == libc::RLIM_INFINITY
        {
            return None;
        }
        Some(lim.rlim_cur / 1024)
    }
}

/// Put the calling thread under SCHED_FIFO at `prio`.
fn set_fifo(prio: i32) -> std::result::Result<(), std::io::Error> {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: valid sched_param for the calling thread.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Touch 512 KiB of stack so page faults do not happen inside the loop.
#[inline(never)]
fn prefault_stack() {
    let mut buf = [0u8; 512 * 1024];
    for i in (0..buf.len()).step_by(4096) {
        buf[i] = 1;
    }
    std::hint::black_box(&mut buf);
}

/// Run the cycle until `stop` is set or the duration has passed. `app` runs each cycle between
/// processing the received frames and sending; `report` runs once per report interval.
pub fn run(
    rt: &mut Runtime,
    opts: &CycleOptions,
    stop: &AtomicBool,
    perf: &mut Perf,
    app: &mut dyn FnMut(&mut Runtime, u64),
    report: &mut dyn FnMut(&mut Perf, &mut Runtime, &LoopCounters),
) -> Result<LoopCounters> {
    opts.validate()?;
    let period = opts.period_ns;
    let start = mono_ns();
    let end = if opts.duration_ns == 0 {
        u64::MAX
    } else {
        start + opts.duration_ns
    };
    let mut counters = LoopCounters::default();
    let mut next = start + period;
    let mut last_wake = 0u64;
    let mut next_report = start + opts.report_interval_ns;
    while !stop.load(Ordering::Relaxed) {
        if next >= end {
            break;
        }
        if opts.busy_wait_ns > 0 && next > opts.busy_wait_ns {
            sleep_until(next - opts.busy_wait_ns);
            while mono_ns() < next {
                std::hint::spin_loop();
            }
        } else {
            sleep_until(next);
        }
        let t0 = mono_ns();
        perf.record(Metric::WakeLatency, t0.saturating_sub(next));
        if last_wake != 0 {
            perf.record(Metric::CycleTime, t0 - last_wake);
        }
        last_wake = t0;
        rt.receive()?;
        rt.process();
        let t1 = mono_ns();
        app(rt, counters.cycles);
        let t2 = mono_ns();
        rt.send_cyclic()?;
        let t3 = mono_ns();
        rt.send_acyclic()?;
        let t4 = mono_ns();
        perf.record(Metric::JobReceive, t1 - t0);
        perf.record(Metric::JobApp, t2 - t1);
        perf.record(Metric::JobSendCyclic, t3 - t2);
        perf.record(Metric::JobAcyclic, t4 - t3);
        perf.record(Metric::TaskDuration, t4 - t0);
        // Wait for the frames (at most until shortly before the next boundary).
        let deadline = rt.now()
            + (next + period)
                .saturating_sub(mono_ns())
                .saturating_sub(period / 10);
        if rt.wait_return(deadline)? {
            perf.record(Metric::DataBack, mono_ns().saturating_sub(t0));
            perf.record(Metric::RoundTrip, rt.round_trip_ns());
            if let Some(m) = rt.dc_sync_monitor_ns() {
                perf.record(Metric::DcSyncMonitor, m as u64);
            }
            // The next cycle's supervisor and mailbox work, in the time left in this one.
            rt.prepare_acyclic();
        } else {
            counters.incomplete_returns += 1;
        }
        counters.cycles += 1;
        perf.tick(t0);
        next = (next as i64 + period as i64 + rt.dc_correction_ns()) as u64;
        let now = mono_ns();
        if now >= next {
            counters.overruns += 1;
            // Skip the missed boundaries; keep the phase.
            next += (now - next) / period * period + period;
        }
        if now >= next_report {
            report(perf, rt, &counters);
            next_report += opts.report_interval_ns;
        }
    }
    Ok(counters)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_period(period_ns: u64) -> CycleOptions {
        CycleOptions {
            period_ns,
            ..Default::default()
        }
    }

    #[test]
    fn a_thread_already_pinned_accepts_its_own_cpu_and_the_others() {
        let last = online_cpus() - 1;
        std::thread::spawn(move || {
            // SAFETY: plain data; `last` is below CPU_SETSIZE on any machine this runs on.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(last, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            for cpu in 0..=last {
                let opts = CycleOptions {
                    cpu: Some(cpu),
                    ..Default::default()
                };
                assert!(opts.validate().is_ok(), "CPU {cpu} refused when pinned");
            }
            let beyond = CycleOptions {
                cpu: Some(last + 1),
                ..Default::default()
            };
            assert!(beyond.validate().is_err());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn periods_below_the_floor_are_refused_with_the_smallest_accepted() {
        for p in [0, 1, 19_999] {
            let e = with_period(p).validate().unwrap_err().to_string();
            assert!(e.contains("smallest accepted cycle is 20 us"), "{e}");
        }
        assert!(with_period(MIN_PERIOD_NS).validate().is_ok());
        assert!(with_period(1_000_000).validate().is_ok());
    }

    #[test]
    fn busy_wait_must_fit_and_reports_must_not_be_every_cycle() {
        let o = CycleOptions {
            busy_wait_ns: 1_000_000,
            ..Default::default()
        };
        assert!(o.validate().unwrap_err().to_string().contains("busy-wait"));
        let o = CycleOptions {
            report_interval_ns: 0,
            ..Default::default()
        };
        assert!(o.validate().is_err());
    }

    #[test]
    fn the_library_runner_is_real_time_by_default() {
        assert!(CycleOptions::default().auto_realtime);
        assert_eq!(fmt_ns(1), "1 ns");
        assert_eq!(fmt_ns(1_500), "1.5 us");
    }
}
