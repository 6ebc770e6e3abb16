//! Fault injection on any link: drop, corrupt, duplicate and delay frames, reproducibly.
//!
//! [`FaultLink`] wraps a [`Link`] and, for each frame sent and each frame received, draws from
//! a seeded PRNG (splitmix64 to seed, xorshift64* to draw; no external crate) whether to:
//! - **drop** it (a sent frame never reaches the inner link; a received one is never returned);
//! - **corrupt** it: flip bits of one byte after the Ethernet header (so it still reaches the
//!   MainDevice as an EtherCAT frame and its parser has to cope);
//! - **duplicate** it (sent twice; or returned, then returned again on the next `recv`);
//! - **delay** it: hold it and release it `delay_ns` later, on a later `send` or `recv` call
//!   (a delayed received frame typically comes back in the next cycle: a late frame).
//!
//! Faults are given per direction ([`FaultSpec::parse`]: `rx-drop=0.01,tx-corrupt=0.001,
//! delay=0.01,delay-time=2ms,seed=7`). Held frames live in a fixed pool allocated at wrap time,
//! so nothing allocates per frame. Times come from the link's virtual clock when it runs on
//! virtual time, from the monotonic clock otherwise.

use super::{Link, LinkCounters};
use crate::clock::VirtualTime;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Frames that can be held (delayed or duplicated) at once; more pass through unharmed.
pub const HOLD_SLOTS: usize = 32;
/// Largest frame that can be held or corrupted.
pub const HOLD_MAX: usize = 1536;

/// Probabilities (0..=1) of each fault in one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FaultRates {
    /// Drop the frame.
    pub drop: f64,
    /// Flip bits of one byte.
    pub corrupt: f64,
    /// Deliver it twice.
    pub duplicate: f64,
    /// Hold it for `delay_ns`.
    pub delay: f64,
}

impl FaultRates {
    fn any(&self) -> bool {
        self.drop > 0.0 || self.corrupt > 0.0 || self.duplicate > 0.0 || self.delay > 0.0
    }
}

/// What faults to inject.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultSpec {
    /// On frames the MainDevice sends.
    pub tx: FaultRates,
    /// On frames the MainDevice receives.
    pub rx: FaultRates,
    /// How long a delayed frame is held (ns).
    pub delay_ns: u64,
    /// PRNG seed (same seed, same frames, same faults).
    pub seed: u64,
}

impl Default for FaultSpec {
    fn default() -> Self {
        FaultSpec {
            tx: FaultRates::default(),
            rx: FaultRates::default(),
            delay_ns: 2_000_000,
            seed: 1,
        }
    }
}

impl FaultSpec {
    /// Parse `KEY=VALUE,...`. Keys: `drop`, `corrupt`, `dup` (or `duplicate`), `delay` with an
    /// optional `tx-` or `rx-` prefix (no prefix: both directions), as a probability (`0.01`)
    /// or percentage (`1%`); `delay-time` (`2ms`, `500us`, `100ns`, bare = µs); `seed`.
    pub fn parse(s: &str) -> Result<FaultSpec> {
        let bad = |why: String| Error::Invalid(format!("cannot understand faults '{s}': {why}"));
        let mut spec = FaultSpec::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| bad(format!("'{part}' is not KEY=VALUE")))?;
            let (k, v) = (k.trim(), v.trim());
            match k {
                "seed" => {
                    spec.seed = parse_u64(v).ok_or_else(|| bad(format!("seed '{v}'")))?;
                    continue;
                }
                "delay-time" | "delay_time" => {
                    spec.delay_ns = parse_time(v)
                        .ok_or_else(|| bad(format!("delay time '{v}' (use e.g. 2ms, 500us)")))?;
                    continue;
                }
                _ => {}
            }
            let (dirs, kind): (&[bool], &str) = if let Some(r) = k.strip_prefix("tx-") {
                (&[true], r)
            } else if let Some(r) = k.strip_prefix("rx-") {
                (&[false], r)
            } else {
                (&[true, false], k)
            };
            let p = parse_prob(v)
                .ok_or_else(|| bad(format!("'{v}' is not a probability (0..1 or 0%..100%)")))?;
            for &tx in dirs {
                let r = if tx { &mut spec.tx } else { &mut spec.rx };
                match kind {
                    "drop" => r.drop = p,
                    "corrupt" => r.corrupt = p,
                    "dup" | "duplicate" => r.duplicate = p,
                    "delay" => r.delay = p,
                    _ => {
                        return Err(bad(format!(
                            "unknown key '{k}'; use [tx-|rx-]drop, corrupt, dup, delay, delay-time, seed"
                        )))
                    }
                }
            }
        }
        Ok(spec)
    }
}

fn parse_u64(v: &str) -> Option<u64> {
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

fn parse_prob(v: &str) -> Option<f64> {
    let p = match v.strip_suffix('%') {
        Some(pct) => pct.trim().parse::<f64>().ok()? / 100.0,
        None => v.parse::<f64>().ok()?,
    };
    (0.0..=1.0).contains(&p).then_some(p)
}

fn parse_time(v: &str) -> Option<u64> {
    let (num, mult) = if let Some(n) = v.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = v.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1e9)
    } else {
        (v, 1e3)
    };
    let x: f64 = num.trim().parse().ok()?;
    (x >= 0.0 && x.is_finite()).then_some((x * mult) as u64)
}

/// A tiny seeded PRNG: splitmix64 for the seed, xorshift64* for the stream.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seed it (any value, 0 included).
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 0x2545_F491_4F6C_DD1D } else { z })
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }
    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// How many faults were injected (shared, readable while the link runs).
#[derive(Debug, Default)]
pub struct FaultStats {
    /// Frames dropped (sent, received).
    pub dropped: [AtomicU64; 2],
    /// Frames corrupted (sent, received).
    pub corrupted: [AtomicU64; 2],
    /// Frames duplicated (sent, received).
    pub duplicated: [AtomicU64; 2],
    /// Frames delayed (sent, received).
    pub delayed: [AtomicU64; 2],
    /// Faults not injected because the hold pool was full.
    pub pool_full: AtomicU64,
    /// While true no new fault is injected (held frames are still released): lets a test
    /// switch the faults of a running link off and on.
    pub paused: AtomicBool,
}

impl FaultStats {
    /// One line for humans.
    pub fn summary(&self) -> String {
        let g = |a: &[AtomicU64; 2]| (a[0].load(Ordering::Relaxed), a[1].load(Ordering::Relaxed));
        let (dt, dr) = g(&self.dropped);
        let (ct, cr) = g(&self.corrupted);
        let (ut, ur) = g(&self.duplicated);
        let (lt, lr) = g(&self.delayed);
        format!(
            "faults injected (tx/rx): dropped {dt}/{dr}, corrupted {ct}/{cr}, duplicated {ut}/{ur}, delayed {lt}/{lr}"
        )
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Held {
    used: bool,
    tx: bool,
    release_ns: u64,
    len: usize,
    /// Order of holding, so frames due together come out in order.
    seq: u64,
}

/// A link with injected faults. See the module documentation.
pub struct FaultLink {
    inner: Box<dyn Link>,
    spec: FaultSpec,
    rng: Rng,
    held: [Held; HOLD_SLOTS],
    pool: Vec<u8>,
    scratch: Vec<u8>,
    seq: u64,
    stats: Arc<FaultStats>,
    epoch: Instant,
    virtual_time: Option<VirtualTime>,
    what: String,
}

impl std::fmt::Debug for FaultLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultLink")
            .field("inner", &self.inner.name())
            .field("spec", &self.spec)
            .finish()
    }
}

/// Wrap `link` with the faults of `spec`.
pub fn wrap_faults(link: Box<dyn Link>, spec: FaultSpec) -> Box<dyn Link> {
    Box::new(FaultLink::new(link, spec))
}

const TX: usize = 0;
const RX: usize = 1;

impl FaultLink {
    /// Wrap `inner`.
    pub fn new(inner: Box<dyn Link>, spec: FaultSpec) -> FaultLink {
        let virtual_time = inner.virtual_time();
        let what = format!("{} with injected faults", inner.describe());
        FaultLink {
            inner,
            spec,
            rng: Rng::new(spec.seed),
            held: [Held::default(); HOLD_SLOTS],
            pool: vec![0; HOLD_SLOTS * HOLD_MAX],
            scratch: vec![0; HOLD_MAX],
            seq: 0,
            stats: Arc::new(FaultStats::default()),
            epoch: Instant::now(),
            virtual_time,
            what,
        }
    }

    /// The fault counters (keep the handle before boxing the link).
    pub fn stats(&self) -> Arc<FaultStats> {
        self.stats.clone()
    }

    fn now_ns(&self) -> u64 {
        match &self.virtual_time {
            Some(v) => v.now(),
            None => self.epoch.elapsed().as_nanos() as u64,
        }
    }

    fn hold(&mut self, frame: &[u8], tx: bool, release_ns: u64) -> bool {
        if frame.len() > HOLD_MAX {
            return false;
        }
        let Some(i) = self.held.iter().position(|h| !h.used) else {
            self.stats.pool_full.fetch_add(1, Ordering::Relaxed);
            return false;
        };
        self.pool[i * HOLD_MAX..i * HOLD_MAX + frame.len()].copy_from_slice(frame);
        self.seq += 1;
        self.held[i] = Held {
            used: true,
            tx,
            release_ns,
            len: frame.len(),
            seq: self.seq,
        };
        true
    }

    /// The held frame of direction `tx` due at `now` that was held first.
    fn due(&self, tx: bool, now: u64) -> Option<usize> {
        self.held
            .iter()
            .enumerate()
            .filter(|(_, h)| h.used && h.tx == tx && h.release_ns <= now)
            .min_by_key(|(_, h)| h.seq)
            .map(|(i, _)| i)
    }

    fn earliest(&self, tx: bool) -> Option<u64> {
        self.held
            .iter()
            .filter(|h| h.used && h.tx == tx)
            .map(|h| h.release_ns)
            .min()
    }

    /// Send the delayed transmit frames whose time has come.
    fn release_tx(&mut self) -> Result<()> {
        let now = self.now_ns();
        while let Some(i) = self.due(true, now) {
            let h = self.held[i];
            self.held[i].used = false;
            self.inner
                .send(&self.pool[i * HOLD_MAX..i * HOLD_MAX + h.len])?;
        }
        Ok(())
    }

    /// Flip bits of one byte after the Ethernet header.
    fn corrupt(rng: &mut Rng, frame: &mut [u8]) {
        if frame.len() > 14 {
            let at = 14 + rng.below(frame.len() - 14);
            let mask = (rng.next_u64() as u8) | 1;
            frame[at] ^= mask;
        }
    }
}

impl Link for FaultLink {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        self.release_tx()?;
        let r = self.spec.tx;
        if !r.any() || self.stats.paused.load(Ordering::Relaxed) {
            return self.inner.send(frame);
        }
        if self.rng.chance(r.drop) {
            self.stats.dropped[TX].fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let len = frame.len();
        let corrupted = self.rng.chance(r.corrupt) && len <= HOLD_MAX;
        if corrupted {
            self.scratch[..len].copy_from_slice(frame);
            Self::corrupt(&mut self.rng, &mut self.scratch[..len]);
            self.stats.corrupted[TX].fetch_add(1, Ordering::Relaxed);
        }
        let dup = self.rng.chance(r.duplicate);
        if self.rng.chance(r.delay) {
            let release = self.now_ns() + self.spec.delay_ns;
            let held = if corrupted {
                // Moving the Vec out and back does not allocate.
                let tmp = std::mem::take(&mut self.scratch);
                let ok = self.hold(&tmp[..len], true, release);
                self.scratch = tmp;
                ok
            } else {
                self.hold(frame, true, release)
            };
            if held {
                self.stats.delayed[TX].fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
        }
        let out = if corrupted {
            &self.scratch[..len]
        } else {
            frame
        };
        self.inner.send(out)?;
        if dup {
            self.stats.duplicated[TX].fetch_add(1, Ordering::Relaxed);
            self.inner.send(out)?;
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        self.release_tx()?;
        loop {
            let now = self.now_ns();
            if let Some(i) = self.due(false, now) {
                let h = self.held[i];
                self.held[i].used = false;
                let n = h.len.min(buf.len());
                buf[..n].copy_from_slice(&self.pool[i * HOLD_MAX..i * HOLD_MAX + n]);
                return Ok(Some(n));
            }
            // Wait no longer than the next held frame's release (monotonic clock only).
            let until = match (self.earliest(false), self.virtual_time.is_none()) {
                (Some(t), true) => {
                    let at = self.epoch + Duration::from_nanos(t);
                    Some(deadline.map_or(at, |d| d.min(at)))
                }
                _ => deadline,
            };
            let Some(n) = self.inner.recv(buf, until)? else {
                let now = self.now_ns();
                if self.due(false, now).is_some() {
                    continue;
                }
                if until != deadline && deadline.is_some_and(|d| Instant::now() < d) {
                    continue;
                }
                return Ok(None);
            };
            let r = self.spec.rx;
            if !r.any() || self.stats.paused.load(Ordering::Relaxed) {
                return Ok(Some(n));
            }
            if self.rng.chance(r.drop) {
                self.stats.dropped[RX].fetch_add(1, Ordering::Relaxed);
                continue;
            }
            if self.rng.chance(r.corrupt) {
                Self::corrupt(&mut self.rng, &mut buf[..n]);
                self.stats.corrupted[RX].fetch_add(1, Ordering::Relaxed);
            }
            let dup = self.rng.chance(r.duplicate);
            if self.rng.chance(r.delay) {
                let release = self.now_ns() + self.spec.delay_ns;
                if self.hold(&buf[..n], false, release) {
                    self.stats.delayed[RX].fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            }
            if dup {
                let now = self.now_ns();
                if self.hold(&buf[..n], false, now) {
                    self.stats.duplicated[RX].fetch_add(1, Ordering::Relaxed);
                }
            }
            return Ok(Some(n));
        }
    }

    fn mac(&self) -> [u8; 6] {
        self.inner.mac()
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn counters(&self) -> LinkCounters {
        self.inner.counters()
    }

    fn kernel_drops(&mut self) -> Option<u64> {
        self.inner.kernel_drops()
    }

    fn describe(&self) -> String {
        self.what.clone()
    }

    fn virtual_time(&self) -> Option<VirtualTime> {
        self.inner.virtual_time()
    }

    #[cfg(feature = "sim")]
    fn sim_network(&mut self) -> Option<&mut ecat_sim::Network> {
        self.inner.sim_network()
    }

    fn redundancy(&self) -> Option<super::redundant::RingStatus> {
        self.inner.redundancy()
    }

    fn set_dc_shift(&mut self, shift_ns: i64) {
        self.inner.set_dc_shift(shift_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    struct Echo {
        q: VecDeque<Vec<u8>>,
        sent: usize,
        vt: VirtualTime,
    }
    impl Link for Echo {
        fn send(&mut self, frame: &[u8]) -> Result<()> {
            self.sent += 1;
            self.q.push_back(frame.to_vec());
            Ok(())
        }
        fn recv(&mut self, buf: &mut [u8], _: Option<Instant>) -> Result<Option<usize>> {
            Ok(self.q.pop_front().map(|f| {
                buf[..f.len()].copy_from_slice(&f);
                f.len()
            }))
        }
        fn mac(&self) -> [u8; 6] {
            [0; 6]
        }
        fn name(&self) -> &str {
            "echo"
        }
        fn counters(&self) -> LinkCounters {
            LinkCounters::default()
        }
        fn virtual_time(&self) -> Option<VirtualTime> {
            Some(self.vt.clone())
        }
    }

    fn echo(vt: &VirtualTime) -> Box<dyn Link> {
        Box::new(Echo {
            q: VecDeque::new(),
            sent: 0,
            vt: vt.clone(),
        })
    }

    fn frame(i: u32) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[12..14].copy_from_slice(&[0x88, 0xA4]);
        f[16..20].copy_from_slice(&i.to_le_bytes());
        f
    }

    #[test]
    fn parse_specs() {
        let s =
            FaultSpec::parse("rx-drop=1%,tx-corrupt=0.5,dup=0.1,delay-time=3ms,seed=0x10").unwrap();
        assert_eq!(s.rx.drop, 0.01);
        assert_eq!(s.tx.drop, 0.0);
        assert_eq!(s.tx.corrupt, 0.5);
        assert_eq!((s.tx.duplicate, s.rx.duplicate), (0.1, 0.1));
        assert_eq!(s.delay_ns, 3_000_000);
        assert_eq!(s.seed, 16);
        assert!(FaultSpec::parse("drop=2").is_err());
        assert!(FaultSpec::parse("jitter=0.1").is_err());
        assert!(FaultSpec::parse("drop").is_err());
        assert_eq!(FaultSpec::parse("").unwrap(), FaultSpec::default());
    }

    #[test]
    fn rng_is_seeded_and_uniform() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        assert_eq!(a.next_u64(), b.next_u64());
        let hits = (0..100_000).filter(|_| a.chance(0.1)).count();
        assert!((9_000..11_000).contains(&hits), "{hits}");
        assert_ne!(Rng::new(0).next_u64(), 0);
    }

    fn run(spec: &str, n: u32) -> (Vec<Vec<u8>>, Arc<FaultStats>) {
        let vt = VirtualTime::new();
        let mut l = FaultLink::new(echo(&vt), FaultSpec::parse(spec).unwrap());
        let stats = l.stats();
        let mut got = Vec::new();
        let mut buf = [0u8; 1518];
        for i in 0..n {
            l.send(&frame(i)).unwrap();
            while let Some(k) = l.recv(&mut buf, None).unwrap() {
                got.push(buf[..k].to_vec());
            }
            vt.advance(1_000_000);
        }
        for _ in 0..10 {
            vt.advance(1_000_000);
            while let Some(k) = l.recv(&mut buf, None).unwrap() {
                got.push(buf[..k].to_vec());
            }
        }
        (got, stats)
    }

    #[test]
    fn drop_and_reproducible() {
        let (a, s) = run("rx-drop=0.2,seed=3", 1000);
        let dropped = s.dropped[RX].load(Ordering::Relaxed) as usize;
        assert!((150..250).contains(&dropped), "{dropped}");
        assert_eq!(a.len(), 1000 - dropped);
        let (b, _) = run("rx-drop=0.2,seed=3", 1000);
        assert_eq!(a, b);
        let (c, _) = run("rx-drop=0.2,seed=4", 1000);
        assert_ne!(a, c);
        let (d, s) = run("tx-drop=0.2,seed=3", 1000);
        assert_eq!(
            d.len(),
            1000 - s.dropped[TX].load(Ordering::Relaxed) as usize
        );
    }

    #[test]
    fn corrupt_duplicate_delay() {
        let (a, s) = run("corrupt=0.1,seed=1", 500);
        let bad = a
            .iter()
            .enumerate()
            .filter(|(i, f)| **f != frame(*i as u32))
            .count();
        let c = s.corrupted[TX].load(Ordering::Relaxed) + s.corrupted[RX].load(Ordering::Relaxed);
        assert!(bad > 50 && bad as u64 <= c, "{bad} {c}");
        assert!(a.iter().all(|f| f[..14] == frame(0)[..14]));

        let (a, s) = run("rx-dup=0.1,seed=1", 500);
        let d = s.duplicated[RX].load(Ordering::Relaxed) as usize;
        assert!(d > 20);
        assert_eq!(a.len(), 500 + d);

        // Delayed by 2.5 ms on a 1 ms schedule: comes back after later frames, none lost.
        let (a, s) = run("rx-delay=0.1,delay-time=2500us,seed=1", 500);
        let d = s.delayed[RX].load(Ordering::Relaxed);
        assert!(d > 20);
        assert_eq!(a.len(), 500);
        let out_of_order = a.windows(2).filter(|w| w[0][16] > w[1][16]).count();
        assert!(out_of_order > 10);

        let (a, s) = run("tx-delay=0.1,tx-dup=0.05,seed=9", 300);
        assert!(s.delayed[TX].load(Ordering::Relaxed) > 10);
        assert_eq!(
            a.len() as u64,
            300 + s.duplicated[TX].load(Ordering::Relaxed)
        );
    }
}
