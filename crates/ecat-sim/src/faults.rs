//! Faults on the virtual wire, seeded so every run is reproducible.
//!
//! [`Faults`] sets per-frame rates and delays; [`FaultEvent`]s unplug, replug or power-cycle a
//! SubDevice, or disconnect or connect a branch, at a time. The network rolls a small PRNG of its own (splitmix64, seeded from
//! [`Faults::seed`]) a fixed number of times per frame, so the same seed and the same frames
//! give the same fates.
//!
//! Model (our choice, unverified against hardware statistics):
//! * A **lost** frame disappears at a random hop: before SubDevice k on the way out (the ones
//!   before k have processed it: their writes happened, their buffers swapped) or on the way
//!   back (all processed it). The MainDevice sees nothing.
//! * A **corrupted** frame gets a bad FCS at a random hop on the way out. The SubDevices after
//!   that point check the FCS last and discard what the frame did to them (modelled as not
//!   acting on it); the first one counts it in its port-0 invalid-frame counter (0x0300),
//!   every later arrival of the marked frame at a port in that port's forwarded-error counter
//!   (0x0308 + port; see `rx_errors`). [`Faults::bad_cable`] fixes the hop. The MainDevice's NIC drops it, so it
//!   is reported as dropped, counted apart from lost frames — unless
//!   [`Faults::deliver_corrupted`] asks to see the garbage: then one bit of the EtherCAT
//!   payload is flipped and the frame is returned.
//! * Returned frames carry an extra delay (`delay_ns` plus a uniform jitter in
//!   `0..=jitter_ns`) and may be duplicated; the link that carries them honours both.

/// Per-frame fault settings. The default is a perfect wire.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Faults {
    /// PRNG seed.
    pub seed: u64,
    /// Probability (0..=1) that a frame is lost.
    pub drop_rate: f64,
    /// Probability (0..=1) that a frame is corrupted (bad FCS).
    pub corrupt_rate: f64,
    /// Return corrupted frames with a flipped bit instead of dropping them.
    pub deliver_corrupted: bool,
    /// Extra delay of every returned frame (ns).
    pub delay_ns: u64,
    /// Uniform extra jitter `0..=jitter_ns` (ns).
    pub jitter_ns: u64,
    /// Probability (0..=1) that a returned frame arrives twice.
    pub duplicate_rate: f64,
    /// A bad cable: lost and corrupted frames go bad on the cable into the SubDevice at this
    /// position in frame order (its port 0) instead of at a random hop; past the last
    /// SubDevice: on the way back. The ESCs count the corruptions where a real line would
    /// (see `rx_errors`), which `ecat crc` shows.
    pub bad_cable: Option<usize>,
}

impl Faults {
    /// True if any fault is configured (else no random numbers are drawn).
    pub fn active(&self) -> bool {
        self.drop_rate > 0.0
            || self.corrupt_rate > 0.0
            || self.delay_ns > 0
            || self.jitter_ns > 0
            || self.duplicate_rate > 0.0
    }
}

/// Why a frame did not come back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// Not EtherType 0x88A4 (or shorter than an Ethernet header).
    NotEthercat,
    /// EtherCAT header type is not 1.
    WrongType,
    /// Length fields do not fit or the datagram chain is broken.
    Malformed,
    /// No SubDevice on the frame path to return it.
    NoSubDevice,
    /// Lost on the wire (fault).
    Lost,
    /// Corrupted on the wire; the receiving NIC drops it (fault).
    Corrupted,
}

/// What became of a frame handed to [`crate::Network::process`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameFate {
    /// The frame does not come back.
    Dropped(DropReason),
    /// The buffer holds the returned frame; it arrives `delay_ns` later than an undisturbed
    /// one, and twice if `duplicate`.
    Returned {
        /// Extra delay (ns).
        delay_ns: u64,
        /// The frame arrives a second time.
        duplicate: bool,
    },
}

impl FrameFate {
    /// True if the frame comes back.
    pub fn returned(&self) -> bool {
        matches!(self, FrameFate::Returned { .. })
    }
}

/// What happens to a SubDevice at a scheduled time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventAction {
    /// Leave the frame path ([`crate::Network::unplug`]).
    Unplug,
    /// Come back ([`crate::Network::replug`]), power-cycled or not.
    Replug {
        /// The SubDevice lost power while unplugged.
        power_cycled: bool,
    },
    /// Power-cycle in place ([`crate::Network::power_cycle`]).
    PowerCycle,
    /// Cut the cable between `position` and `with` ([`crate::Network::break_cable`]).
    Break {
        /// The SubDevice at the other end of the cable.
        with: usize,
    },
    /// Reconnect it ([`crate::Network::heal_cable`]).
    Heal {
        /// The SubDevice at the other end of the cable.
        with: usize,
    },
    /// Take the branch headed here off the frame path ([`crate::Network::disconnect`]).
    Disconnect,
    /// Plug the branch headed here in again, freshly powered ([`crate::Network::connect`]).
    Connect,
}

/// A scripted event: at `at_ns` (applied before the first frame at or after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultEvent {
    /// When (network time, ns).
    pub at_ns: u64,
    /// What.
    pub action: EventAction,
    /// Which SubDevice (index among the network's ESCs in wiring order).
    pub position: usize,
}

/// splitmix64: tiny, fast, good enough for fault rolls.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `0..=max`.
    pub fn upto(&mut self, max: u64) -> u64 {
        match max.checked_add(1) {
            Some(m) => self.next_u64() % m,
            None => self.next_u64(),
        }
    }
}

/// The fault decisions for one frame.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Roll {
    /// Lost at hop k (k == n: on the way back).
    pub lost_at: Option<usize>,
    /// Corrupted before SubDevice k (k == n: on the way back).
    pub corrupt_at: Option<usize>,
    pub delay_ns: u64,
    pub duplicate: bool,
    /// Bit to flip when delivering a corrupted frame.
    pub flip: u64,
}

impl Roll {
    /// Roll the dice for a frame passing `hops` SubDevices (always six draws).
    pub fn new(f: &Faults, rng: &mut Rng, hops: usize) -> Roll {
        let (lost, corrupt, at, jitter, dup, flip) = (
            rng.unit(),
            rng.unit(),
            rng.upto(hops as u64) as usize,
            rng.upto(f.jitter_ns),
            rng.unit(),
            rng.next_u64(),
        );
        let at = f.bad_cable.map_or(at, |k| k.min(hops));
        let lost = lost < f.drop_rate;
        Roll {
            lost_at: lost.then_some(at),
            corrupt_at: (!lost && corrupt < f.corrupt_rate).then_some(at),
            delay_ns: f.delay_ns.saturating_add(jitter),
            duplicate: dup < f.duplicate_rate,
            flip,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_is_deterministic_and_uniform_enough() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        assert_eq!(a.next_u64(), b.next_u64());
        let mean = (0..10_000).map(|_| a.unit()).sum::<f64>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
        assert!((0..1000).all(|_| a.upto(3) <= 3));
    }
}
