//! CPU load over a run: the CPU time the cycle thread and the whole process used, as a share
//! of the wall time that passed (seed 003 reports it for the cyclic task at 100 µs, 500 µs
//! and 1 ms).
//!
//! [`CpuLoad::start`] is called on the cycle thread before the loop and reads
//! CLOCK_THREAD_CPUTIME_ID (that thread's user and system time), CLOCK_PROCESS_CPUTIME_ID
//! (every thread of the process) and CLOCK_MONOTONIC; [`CpuLoad::finish`], on the same thread
//! after the loop, reads them again and returns the differences as [`CpuLoadFigures`]. These
//! clocks are the scheduler's own nanosecond run times, unlike `getrusage`, whose user/system
//! split is scaled from tick samples and can put a thread above its process. The process is
//! read first at the start and last at the end, so its window holds the thread's. Nothing is
//! read in the loop.

use crate::cycle::mono_ns;

/// CPU times at the start of a run (see the module notes).
#[derive(Debug, Clone, Copy)]
pub struct CpuLoad {
    wall_ns: u64,
    thread_ns: u64,
    process_ns: u64,
}

/// CPU load over a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuLoadFigures {
    /// Wall time of the run (s).
    pub wall_s: f64,
    /// CPU time of the cycle thread (s, user + system).
    pub thread_s: f64,
    /// CPU time of the whole process (s, user + system, every thread).
    pub process_s: f64,
}

impl CpuLoadFigures {
    /// The cycle thread's CPU time in percent of the wall time.
    pub fn thread_percent(&self) -> f64 {
        percent(self.thread_s, self.wall_s)
    }

    /// The whole process's CPU time in percent of the wall time (may pass 100 with several
    /// threads busy).
    pub fn process_percent(&self) -> f64 {
        percent(self.process_s, self.wall_s)
    }

    /// `CPU load: cycle thread 1.23 % (0.123 s of 10.0 s), whole process 1.50 % (0.150 s)`.
    pub fn line(&self) -> String {
        format!(
            "CPU load: cycle thread {:.2} % ({:.3} s of {:.1} s), whole process {:.2} % ({:.3} s)",
            self.thread_percent(),
            self.thread_s,
            self.wall_s,
            self.process_percent(),
            self.process_s
        )
    }
}

fn percent(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        0.0
    }
}

/// CPU time on `clock` (CLOCK_THREAD_CPUTIME_ID or CLOCK_PROCESS_CPUTIME_ID) in nanoseconds.
fn cpu_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec; both clocks exist on every Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl CpuLoad {
    /// Take the CPU times now (call it on the cycle thread).
    pub fn start() -> CpuLoad {
        let process_ns = cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID);
        CpuLoad {
            wall_ns: mono_ns(),
            thread_ns: cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID),
            process_ns,
        }
    }

    /// The load since [`CpuLoad::start`] (call it on the same thread).
    pub fn finish(&self) -> CpuLoadFigures {
        let s = |a: u64, b: u64| a.saturating_sub(b) as f64 / 1e9;
        let thread_s = s(cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID), self.thread_ns);
        let wall_s = s(mono_ns(), self.wall_ns);
        CpuLoadFigures {
            wall_s,
            thread_s,
            process_s: s(cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID), self.process_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spinning_thread_uses_its_cpu_time_and_a_sleeping_one_none() {
        // Spin until the thread's own clock says 50 ms: on a shared machine the wall time
        // that takes varies, the thread's CPU time may not.
        let spin = std::thread::spawn(|| {
            let l = CpuLoad::start();
            let end = cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID) + 50_000_000;
            while cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID) < end {
                std::hint::spin_loop();
            }
            l.finish()
        })
        .join()
        .unwrap();
        assert!(
            spin.thread_s >= 0.05 && spin.thread_s < 0.06,
            "{}",
            spin.line()
        );
        assert!(spin.thread_s <= spin.wall_s, "{}", spin.line());
        assert!(spin.process_s >= spin.thread_s, "{}", spin.line());
        assert!(
            (spin.thread_percent() - 100.0 * spin.thread_s / spin.wall_s).abs() < 1e-9,
            "{}",
            spin.line()
        );
        let sleep = std::thread::spawn(|| {
            let l = CpuLoad::start();
            std::thread::sleep(std::time::Duration::from_millis(100));
            l.finish()
        })
        .join()
        .unwrap();
        assert!(sleep.thread_s < 0.01, "{}", sleep.line());
        assert!(sleep.wall_s >= 0.1, "{}", sleep.line());
    }

    #[test]
    fn the_line_gives_both_percentages() {
        let f = CpuLoadFigures {
            wall_s: 10.0,
            thread_s: 0.1,
            process_s: 0.25,
        };
        assert_eq!(
            f.line(),
            "CPU load: cycle thread 1.00 % (0.100 s of 10.0 s), whole process 2.50 % (0.250 s)"
        );
        let zero = CpuLoadFigures {
            wall_s: 0.0,
            thread_s: 0.0,
            process_s: 0.0,
        };
        assert_eq!(zero.thread_percent(), 0.0);
    }
}
