//! Time for the MainDevice: the monotonic clock, or virtual time for deterministic tests.
//!
//! The sans-IO core only ever receives `now` as nanoseconds; this module is where those come
//! from. [`VirtualTime`] is shared between a test, the simulated link and the runtime: the test
//! (or the runtime, when it would otherwise wait) moves it forward, and nothing ever sleeps.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A shared virtual clock in nanoseconds.
#[derive(Debug, Clone, Default)]
pub struct VirtualTime(Arc<AtomicU64>);

impl VirtualTime {
    /// A virtual clock at 0 ns.
    pub fn new() -> Self {
        Self::default()
    }
    /// Current virtual time.
    pub fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
    /// Move forward by `ns`.
    pub fn advance(&self, ns: u64) {
        self.0.fetch_add(ns, Ordering::SeqCst);
    }
    /// Move forward to `t` (never backwards).
    pub fn advance_to(&self, t: u64) {
        self.0.fetch_max(t, Ordering::SeqCst);
    }
}

/// Where `now` comes from.
#[derive(Debug, Clone)]
pub enum Clock {
    /// CLOCK_MONOTONIC, counted from an epoch.
    Monotonic(Instant),
    /// Virtual time (tests, simulation).
    Virtual(VirtualTime),
}

impl Clock {
    /// The monotonic clock, counting from now.
    pub fn monotonic() -> Clock {
        Clock::Monotonic(Instant::now())
    }
    /// Nanoseconds since the epoch.
    pub fn now_ns(&self) -> u64 {
        match self {
            Clock::Monotonic(epoch) => epoch.elapsed().as_nanos() as u64,
            Clock::Virtual(v) => v.now(),
        }
    }
    /// The instant of `ns` on a monotonic clock (`None` on virtual time).
    pub fn instant_at(&self, ns: u64) -> Option<Instant> {
        match self {
            Clock::Monotonic(epoch) => Some(*epoch + std::time::Duration::from_nanos(ns)),
            Clock::Virtual(_) => None,
        }
    }
    /// On virtual time, jump to `ns` (what waiting would have done); no effect otherwise.
    pub fn wait_until(&self, ns: u64) {
        if let Clock::Virtual(v) = self {
            v.advance_to(ns);
        }
    }
}
