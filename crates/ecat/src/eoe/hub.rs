//! The meeting point of the cyclic thread and the TAP bridge thread, one [`EoePort`] per EoE
//! SubDevice.
//!
//! Receive: the mailbox service hands every EoE message a SubDevice sent on its own to
//! [`EoeHub::on_message`] (on the cyclic thread); fragments are reassembled into a buffer
//! allocated once, and a complete frame is copied into a ring of preallocated slots
//! ([`RX_SLOTS`] frames), which the bridge thread empties ([`EoeHub::pop_rx`]). Nothing is
//! allocated there; a full ring drops the frame (counted), as a full NIC ring would.
//!
//! Counters are atomics, written by whichever thread sees the event and read by anyone
//! ([`EoeHub::stats`]).

use crate::error::Who;
use crate::mailbox::service::UnsolicitedSink;
use ecat_wire::eoe::{parse_eoe, EoeFrameType, Reassembler};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// Frames one port's receive ring holds.
pub const RX_SLOTS: usize = 32;
/// Bytes of one slot (any Ethernet frame without FCS, VLAN tag included).
pub const SLOT: usize = 1536;

/// Counters of one EoE port.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EoeStats {
    /// Frames sent to the SubDevice (all fragments taken by its mailbox).
    pub tx_frames: u64,
    /// Their bytes.
    pub tx_bytes: u64,
    /// Frames whose transfer failed.
    pub tx_errors: u64,
    /// Frames received from the SubDevice (reassembled).
    pub rx_frames: u64,
    /// Their bytes.
    pub rx_bytes: u64,
    /// Fragments refused (out of sequence, overrun, undecodable).
    pub rx_errors: u64,
    /// Received frames dropped because the bridge did not keep up.
    pub rx_dropped: u64,
}

#[derive(Default)]
struct Counters([AtomicU64; 7]);

impl Counters {
    fn add(&self, i: usize, n: u64) {
        self.0[i].fetch_add(n, Relaxed);
    }
    fn snapshot(&self) -> EoeStats {
        let v = |i: usize| self.0[i].load(Relaxed);
        EoeStats {
            tx_frames: v(0),
            tx_bytes: v(1),
            tx_errors: v(2),
            rx_frames: v(3),
            rx_bytes: v(4),
            rx_errors: v(5),
            rx_dropped: v(6),
        }
    }
}

const TX_FRAMES: usize = 0;
const TX_BYTES: usize = 1;
const TX_ERRORS: usize = 2;
const RX_FRAMES: usize = 3;
const RX_BYTES: usize = 4;
const RX_ERRORS: usize = 5;
const RX_DROPPED: usize = 6;

struct Rx {
    reasm: Reassembler<Vec<u8>>,
    slots: Vec<Vec<u8>>,
    lens: [usize; RX_SLOTS],
    head: usize,
    count: usize,
}

impl Rx {
    fn new() -> Rx {
        Rx {
            reasm: Reassembler::new(vec![0; SLOT]),
            slots: (0..RX_SLOTS).map(|_| vec![0; SLOT]).collect(),
            lens: [0; RX_SLOTS],
            head: 0,
            count: 0,
        }
    }
}

/// One EoE SubDevice: its interface name, who it is, its receive ring and counters.
pub struct EoePort {
    /// Ring position.
    pub position: usize,
    /// The SubDevice.
    pub who: Who,
    /// The interface name (IgH style, `eoe0s3`).
    pub name: String,
    rx: Mutex<Rx>,
    counters: Counters,
}

impl std::fmt::Debug for EoePort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EoePort").field("name", &self.name).finish()
    }
}

/// Every EoE port of one MainDevice. See the module documentation.
#[derive(Debug)]
pub struct EoeHub {
    ports: Vec<EoePort>,
}

/// The interface name IgH gives the EoE handler of the SubDevice at `position` of master
/// `master`: `eoe<master>s<position>`.
pub fn interface_name(master: u32, position: usize) -> String {
    format!("eoe{master}s{position}")
}

impl EoeHub {
    /// A hub for these SubDevices (who, interface name), buffers allocated now.
    pub fn new(ports: impl IntoIterator<Item = (Who, String)>) -> EoeHub {
        EoeHub {
            ports: ports
                .into_iter()
                .map(|(who, name)| EoePort {
                    position: who.position as usize,
                    who,
                    name,
                    rx: Mutex::new(Rx::new()),
                    counters: Counters::default(),
                })
                .collect(),
        }
    }

    /// The ports, in the order given.
    pub fn ports(&self) -> &[EoePort] {
        &self.ports
    }

    /// The counters of port `i`.
    pub fn stats(&self, i: usize) -> EoeStats {
        self.ports[i].counters.snapshot()
    }

    /// The sink for [`crate::mailbox::service::MailboxService::set_unsolicited_sink`].
    pub fn sink(self: &Arc<Self>) -> UnsolicitedSink {
        let hub = self.clone();
        Box::new(move |position, msg| hub.on_message(position, msg))
    }

    /// Take a message the SubDevice at `position` sent on its own (cyclic thread; no
    /// allocation). Returns true if it was an EoE message of an EoE port (taken); others are
    /// left to the caller.
    pub fn on_message(&self, position: usize, msg: &[u8]) -> bool {
        let Some(port) = self.ports.iter().find(|p| p.position == position) else {
            return false;
        };
        if !ecat_wire::mailbox::parse_message(msg)
            .is_ok_and(|(h, _)| h.kind == ecat_wire::mailbox::MailboxType::Eoe)
        {
            return false;
        }
        let Ok((_, eoe)) = parse_eoe(msg) else {
            port.counters.add(RX_ERRORS, 1);
            return true;
        };
        if eoe.header.frame_type != EoeFrameType::FragmentData {
            return true; // a late set-IP response or a timestamp: nobody waits for it
        }
        let Ok(mut rx) = port.rx.lock() else {
            return true;
        };
        let n = match rx.reasm.push(&eoe) {
            Ok(Some(n)) => n,
            Ok(None) => return true,
            Err(_) => {
                port.counters.add(RX_ERRORS, 1);
                return true;
            }
        };
        if rx.count == RX_SLOTS {
            port.counters.add(RX_DROPPED, 1);
            return true;
        }
        let at = (rx.head + rx.count) % RX_SLOTS;
        let Rx {
            reasm, slots, lens, ..
        } = &mut *rx;
        slots[at][..n].copy_from_slice(&reasm.frame()[..n]);
        lens[at] = n;
        rx.count += 1;
        port.counters.add(RX_FRAMES, 1);
        port.counters.add(RX_BYTES, n as u64);
        true
    }

    /// Copy the oldest received frame of port `i` into `buf` and return its length.
    pub fn pop_rx(&self, i: usize, buf: &mut [u8]) -> Option<usize> {
        let mut rx = self.ports.get(i)?.rx.lock().ok()?;
        if rx.count == 0 {
            return None;
        }
        let at = rx.head;
        let n = rx.lens[at].min(buf.len());
        buf[..n].copy_from_slice(&rx.slots[at][..n]);
        rx.head = (at + 1) % RX_SLOTS;
        rx.count -= 1;
        Some(n)
    }

    /// Count a frame of `bytes` sent to port `i` (`ok`: taken by the SubDevice).
    pub fn count_tx(&self, i: usize, bytes: usize, ok: bool) {
        let c = &self.ports[i].counters;
        if ok {
            c.add(TX_FRAMES, 1);
            c.add(TX_BYTES, bytes as u64);
        } else {
            c.add(TX_ERRORS, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat_wire::eoe::{emit_eoe, fragments, EoeRepr};

    fn hub() -> EoeHub {
        let who = Who {
            position: 2,
            station: 0x1003,
            name: "drive".into(),
        };
        EoeHub::new([(who, interface_name(0, 2))])
    }

    fn send(hub: &EoeHub, position: usize, frame: &[u8], frame_no: u8) {
        let mut msg = [0u8; 128];
        for (header, data) in fragments(frame, 128, 0, frame_no).unwrap() {
            let n = emit_eoe(&mut msg, 1, &EoeRepr { header, data }).unwrap();
            assert_eq!(hub.on_message(position, &msg[..n]), position == 2);
        }
    }

    #[test]
    fn fragments_become_frames_in_order_and_a_full_ring_drops() {
        let h = hub();
        assert_eq!(h.ports()[0].name, "eoe0s2");
        let a: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let b: Vec<u8> = (0..60u32).map(|i| (i * 5) as u8).collect();
        send(&h, 2, &a, 1);
        send(&h, 1, &b, 2); // not an EoE port: ignored
        send(&h, 2, &b, 2);
        let mut buf = [0u8; SLOT];
        assert_eq!(h.pop_rx(0, &mut buf), Some(300));
        assert_eq!(&buf[..300], &a[..]);
        assert_eq!(h.pop_rx(0, &mut buf), Some(60));
        assert_eq!(&buf[..60], &b[..]);
        assert_eq!(h.pop_rx(0, &mut buf), None);
        for i in 0..RX_SLOTS + 3 {
            send(&h, 2, &b, i as u8 & 15);
        }
        let s = h.stats(0);
        assert_eq!(s.rx_frames, 2 + RX_SLOTS as u64);
        assert_eq!(s.rx_bytes, 360 + 60 * RX_SLOTS as u64);
        assert_eq!(s.rx_dropped, 3);
        assert_eq!(s.rx_errors, 0);
    }

    #[test]
    fn a_fragment_out_of_sequence_counts_as_an_error() {
        let h = hub();
        let frame = vec![7u8; 300];
        let mut msg = [0u8; 128];
        let (header, data) = fragments(&frame, 128, 0, 3).unwrap().nth(1).unwrap();
        let n = emit_eoe(&mut msg, 1, &EoeRepr { header, data }).unwrap();
        assert!(h.on_message(2, &msg[..n]));
        assert!(!h.on_message(2, &[0xFF; 3])); // not a mailbox message: left to the caller
        assert_eq!(h.stats(0).rx_errors, 1);
        assert_eq!(h.pop_rx(0, &mut [0u8; SLOT]), None);
    }

    #[test]
    fn arbitrary_messages_never_panic() {
        let h = hub();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut msg = [0u8; 200];
        let mut buf = [0u8; SLOT];
        for i in 0..20_000 {
            for b in msg.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            let n = (x as usize >> 8) % msg.len();
            // A valid mailbox header of type EoE, fragment data, half of the time.
            if i % 2 == 0 && n >= 10 {
                msg[0..2].copy_from_slice(&((n - 6) as u16).to_le_bytes());
                msg[5] = 0x02;
                msg[6] &= 0xF0;
            }
            h.on_message(2, &msg[..n]);
            while h.pop_rx(0, &mut buf).is_some() {}
        }
        assert!(h.stats(0).rx_errors > 1000, "{:?}", h.stats(0));
    }
}
