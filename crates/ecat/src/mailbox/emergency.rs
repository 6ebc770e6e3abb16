//! CoE emergencies, kept per SubDevice until the application takes them.
//!
//! Each SubDevice has its own bounded queue (the oldest message is dropped when a SubDevice
//! sends more than [`PER_SUBDEVICE`] without being read, and counted); messages carry a
//! sequence number so [`Emergencies::take`] hands them out across SubDevices in arrival order.
//! Queues grow only when an emergency arrives, never per cycle.

use ecat_wire::coe::EmergencyRepr;
use std::collections::VecDeque;

/// Emergencies kept per SubDevice until taken.
pub const PER_SUBDEVICE: usize = 32;

/// The emergency queues of every SubDevice. See the module documentation.
#[derive(Debug, Default)]
pub struct Emergencies {
    queues: Vec<VecDeque<(u64, EmergencyRepr)>>,
    seq: u64,
    total: usize,
    dropped: u64,
}

impl Emergencies {
    /// Queues for `n` SubDevices.
    pub fn new(n: usize) -> Emergencies {
        Emergencies {
            queues: (0..n).map(|_| VecDeque::new()).collect(),
            ..Default::default()
        }
    }

    /// Keep `e` from the SubDevice at `position`.
    pub fn push(&mut self, position: usize, e: EmergencyRepr) {
        let Some(q) = self.queues.get_mut(position) else {
            return;
        };
        if q.len() == PER_SUBDEVICE {
            q.pop_front();
            self.total -= 1;
            self.dropped += 1;
        }
        self.seq += 1;
        q.push_back((self.seq, e));
        self.total += 1;
    }

    /// The oldest emergency of any SubDevice: (position, message).
    pub fn take(&mut self) -> Option<(usize, EmergencyRepr)> {
        if self.total == 0 {
            return None;
        }
        let p = self
            .queues
            .iter()
            .enumerate()
            .filter_map(|(p, q)| q.front().map(|(s, _)| (*s, p)))
            .min()?
            .1;
        self.take_of(p).map(|e| (p, e))
    }

    /// The oldest emergency of the SubDevice at `position`.
    pub fn take_of(&mut self, position: usize) -> Option<EmergencyRepr> {
        let (_, e) = self.queues.get_mut(position)?.pop_front()?;
        self.total -= 1;
        Some(e)
    }

    /// Emergencies waiting (all SubDevices).
    pub fn len(&self) -> usize {
        self.total
    }

    /// True if none is waiting.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Emergencies dropped because a SubDevice's queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// The CiA 301 class of an emergency error code (its high byte, or high nibble).
pub fn error_class(code: u16) -> &'static str {
    match code >> 8 {
        0x00 => "error reset or no error",
        0x10 => "generic error",
        0x20..=0x2F => "current",
        0x30..=0x3F => "voltage",
        0x40..=0x4F => "temperature",
        0x50 => "device hardware",
        0x60..=0x6F => "device software",
        0x70 => "additional modules",
        0x81 => "communication",
        0x82 => "protocol error",
        0x86 => "monitoring (following error / limits)",
        0x80..=0x8F => "monitoring",
        0x90 => "external error",
        0xF0 => "additional functions",
        0xFF => "device specific",
        _ => "unknown class",
    }
}

/// One line for a user: `emergency 0x8611 (monitoring ...), error register 0x80, data 01 02 ..`.
pub fn describe(e: &EmergencyRepr) -> String {
    let data: Vec<String> = e.data.iter().map(|b| format!("{b:02X}")).collect();
    format!(
        "emergency 0x{:04X} ({}), error register 0x{:02X}, data {}",
        e.error_code,
        error_class(e.error_code),
        e.error_register,
        data.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emcy(code: u16) -> EmergencyRepr {
        EmergencyRepr {
            error_code: code,
            error_register: 0,
            data: [0; 5],
        }
    }

    #[test]
    fn arrival_order_across_subdevices_and_bounded_per_subdevice() {
        let mut q = Emergencies::new(3);
        q.push(2, emcy(1));
        q.push(0, emcy(2));
        q.push(2, emcy(3));
        q.push(7, emcy(9)); // no such SubDevice: ignored
        assert_eq!(q.len(), 3);
        assert_eq!(q.take_of(0).map(|e| e.error_code), Some(2));
        assert_eq!(q.take().map(|(p, e)| (p, e.error_code)), Some((2, 1)));
        assert_eq!(q.take().map(|(p, e)| (p, e.error_code)), Some((2, 3)));
        assert!(q.take().is_none());
        for i in 0..PER_SUBDEVICE as u16 + 5 {
            q.push(1, emcy(i));
        }
        assert_eq!((q.len(), q.dropped()), (PER_SUBDEVICE, 5));
        assert_eq!(
            q.take().map(|(_, e)| e.error_code),
            Some(5),
            "oldest dropped first"
        );
    }
}
