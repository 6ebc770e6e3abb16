//! Frame rates over IgH's windows (1, 10 and 60 s) for `ecat master`: the server's accept
//! thread asks the application for its live counters about once a second (one extra copy of
//! the live figures per second on the application's thread) and keeps a minute of samples.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The windows IgH's `ethercat master` shows, in seconds.
pub const WINDOWS: [u32; 3] = [1, 10, 60];

/// Samples kept at most (a minute and a bit at one per second). The buffer is allocated
/// once, up front: sampling never allocates (the C tests count the whole process's heap
/// allocations while cycling).
const CAPACITY: usize = 128;

/// Samples of (when, frames sent, received, lost).
#[derive(Debug)]
pub struct History {
    samples: VecDeque<(Instant, u64, u64, u64)>,
}

impl Default for History {
    fn default() -> Self {
        History {
            samples: VecDeque::with_capacity(CAPACITY),
        }
    }
}

impl History {
    /// Add a sample; keeps a little over the longest window.
    pub fn push(&mut self, at: Instant, tx: u64, rx: u64, lost: u64) {
        if self.samples.len() == CAPACITY {
            self.samples.pop_front();
        }
        self.samples.push_back((at, tx, rx, lost));
        let keep = Duration::from_secs(WINDOWS[2] as u64 + 2);
        while self
            .samples
            .front()
            .is_some_and(|s| at.duration_since(s.0) > keep)
        {
            self.samples.pop_front();
        }
    }

    /// Forget everything (a new runtime starts its counters at zero).
    pub fn clear(&mut self) {
        self.samples.clear();
    }

    /// Per window: (seconds, sent/s, received/s, lost/s) from the newest sample back to the
    /// oldest one within the window; windows the samples do not cover yet are left out.
    pub fn rates(&self) -> Vec<(u32, f64, f64, f64)> {
        let Some(&(t1, tx1, rx1, lost1)) = self.samples.back() else {
            return Vec::new();
        };
        WINDOWS
            .iter()
            .filter_map(|&w| {
                let from = self.samples.iter().find(|s| {
                    t1.duration_since(s.0)
                        <= Duration::from_secs(w as u64) + Duration::from_millis(500)
                })?;
                let dt = t1.duration_since(from.0).as_secs_f64();
                (dt > 0.0 && dt + 0.5 >= w as f64).then(|| {
                    let r = |a: u64, b: u64| a.saturating_sub(b) as f64 / dt;
                    (w, r(tx1, from.1), r(rx1, from.2), r(lost1, from.3))
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_over_windows() {
        let t0 = Instant::now();
        let mut h = History::default();
        assert!(h.rates().is_empty());
        for s in 0..=70u64 {
            // 1000 frames/s sent, 990 received, 10 lost.
            h.push(t0 + Duration::from_secs(s), s * 1000, s * 990, s * 10);
        }
        let mut young = History::default();
        for s in 0..=5u64 {
            young.push(t0 + Duration::from_secs(s), s * 1000, s * 1000, 0);
        }
        assert_eq!(
            young.rates().len(),
            1,
            "only the 1 s window is covered after 5 s"
        );
        let r = h.rates();
        assert_eq!(r.len(), 3);
        for (w, tx, rx, lost) in r {
            assert!(WINDOWS.contains(&w));
            assert!(
                (tx - 1000.0).abs() < 1e-6 && (rx - 990.0).abs() < 1e-6,
                "{tx} {rx}"
            );
            assert!((lost - 10.0).abs() < 1e-6);
        }
        assert!(
            h.samples.len() <= 63,
            "a minute of samples is kept, not more"
        );
    }
}
