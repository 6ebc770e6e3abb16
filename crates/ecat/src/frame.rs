//! The frame engine: datagram queue, index allocation, frames in flight, timeouts and retries.
//!
//! Sans-IO: the engine never touches a socket or a clock. Callers submit datagrams, then drive
//! it with [`FrameEngine::poll_transmit`] (fills a frame buffer with as many queued datagrams
//! as fit), [`FrameEngine::handle_frame`] (matches a received frame's datagrams to requests by
//! index, checking command, offset and length so a stale answer cannot be taken for a new
//! one), and [`FrameEngine::poll_timeouts`] (resends or fails datagrams whose deadline passed).
//! Time is a `u64` of nanoseconds the caller provides.
//!
//! Nothing from the wire is fatal: malformed frames, answers to unknown or already finished
//! indices (late and duplicated frames) are counted and dropped. All storage (256 slots, one per
//! index, each with a reusable data buffer) is allocated once.
//!
//! The engine uses datagram indices 0..=127 only; indices with bit 7 set belong to the cyclic
//! frames (see [`crate::cyclic`]), so a received frame is routed by its first index.

use ecat_wire::datagram::{Addressing, MAX_DATA};
use ecat_wire::frame::parse_ethernet;
use ecat_wire::{Command, DatagramRepr, FrameBuilder};
use std::collections::VecDeque;

/// Number of datagram indices the engine uses (0..=127).
const INDICES: u8 = 128;

/// Engine settings.
#[derive(Debug, Clone, Copy)]
pub struct EngineConfig {
    /// How long a datagram may be in flight before it is resent (ns).
    pub timeout_ns: u64,
    /// How many times a datagram is resent before it fails.
    pub retries: u32,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            timeout_ns: 20_000_000,
            retries: 3,
        }
    }
}

/// Counters of the engine; nothing that goes wrong on the wire is lost without a count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineCounters {
    /// Frames built for transmission.
    pub frames_sent: u64,
    /// Frames handed to [`FrameEngine::handle_frame`].
    pub frames_received: u64,
    /// Datagrams transmitted (including resends).
    pub datagrams_sent: u64,
    /// Datagrams matched to a request.
    pub datagrams_matched: u64,
    /// Received frames that could not be parsed as EtherCAT.
    pub malformed: u64,
    /// Received datagrams that matched no request in flight (late, duplicated, or foreign).
    pub unmatched: u64,
    /// Deadlines that passed.
    pub timeouts: u64,
    /// Datagrams resent after a timeout.
    pub resent: u64,
    /// Datagrams that failed after all retries.
    pub failed: u64,
}

/// Refers to one submitted datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handle {
    index: u8,
    generation: u32,
}

impl Handle {
    /// The datagram index on the wire.
    pub fn index(self) -> u8 {
        self.index
    }
}

/// Where a submitted datagram stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Queued or in flight.
    Pending,
    /// Answered: data and WKC are available.
    Done,
    /// No answer after all retries.
    Failed,
    /// The handle was released or never existed.
    Stale,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    Free,
    Queued,
    InFlight { deadline: u64 },
    Done,
    Failed,
}

#[derive(Debug)]
struct Slot {
    state: SlotState,
    generation: u32,
    command: Command,
    address: u32,
    data: Vec<u8>,
    wkc: u16,
    attempts: u32,
    retries: u32,
    sent_at: u64,
    round_trip_ns: u64,
}

/// Why a datagram could not be submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// All 256 indices are in use.
    #[error("all 256 datagram indices are in use")]
    Full,
    /// The data does not fit in one datagram.
    #[error("datagram data of {0} bytes exceeds the 1486-byte maximum")]
    TooLong(usize),
}

/// Datagram queue and matcher. See the module documentation.
#[derive(Debug)]
pub struct FrameEngine {
    slots: Vec<Slot>,
    queue: VecDeque<u8>,
    next_index: u8,
    mac: [u8; 6],
    config: EngineConfig,
    counters: EngineCounters,
    /// No deadline of a datagram in flight is earlier (`u64::MAX`: none in flight): a
    /// [`FrameEngine::poll_timeouts`] before it has nothing to look at.
    earliest: u64,
}

impl FrameEngine {
    /// An engine that sends frames from `mac`.
    pub fn new(mac: [u8; 6], config: EngineConfig) -> Self {
        let slots = (0..INDICES)
            .map(|_| Slot {
                state: SlotState::Free,
                generation: 0,
                command: Command::Nop,
                address: 0,
                data: Vec::with_capacity(64),
                wkc: 0,
                attempts: 0,
                retries: 0,
                sent_at: 0,
                round_trip_ns: 0,
            })
            .collect();
        FrameEngine {
            slots,
            queue: VecDeque::with_capacity(INDICES as usize),
            next_index: 0,
            mac,
            config,
            counters: EngineCounters::default(),
            earliest: u64::MAX,
        }
    }

    /// The engine's settings.
    pub fn config(&self) -> EngineConfig {
        self.config
    }

    /// Change the settings (applies to datagrams submitted afterwards).
    pub fn set_config(&mut self, config: EngineConfig) {
        self.config = config;
    }

    /// Counters so far.
    pub fn counters(&self) -> EngineCounters {
        self.counters
    }

    /// Queue a datagram with `data` (its length is the datagram length). For reads pass
    /// zeros of the wanted length. `retries` overrides the configured retry count (use 0 for
    /// commands that must not be repeated blindly).
    pub fn submit_with(
        &mut self,
        command: Command,
        address: u32,
        data: &[u8],
        retries: u32,
    ) -> Result<Handle, SubmitError> {
        if data.len() > MAX_DATA {
            return Err(SubmitError::TooLong(data.len()));
        }
        let start = self.next_index;
        let mut idx = start;
        while self.slots[idx as usize].state != SlotState::Free {
            idx = (idx + 1) % INDICES;
            if idx == start {
                return Err(SubmitError::Full);
            }
        }
        self.next_index = (idx + 1) % INDICES;
        let slot = &mut self.slots[idx as usize];
        slot.generation = slot.generation.wrapping_add(1);
        slot.state = SlotState::Queued;
        slot.command = command;
        slot.address = address;
        slot.data.clear();
        slot.data.extend_from_slice(data);
        slot.wkc = 0;
        slot.attempts = 0;
        slot.retries = retries;
        self.queue.push_back(idx);
        Ok(Handle {
            index: idx,
            generation: slot.generation,
        })
    }

    /// Queue a datagram with the configured retry count.
    pub fn submit(
        &mut self,
        command: Command,
        address: u32,
        data: &[u8],
    ) -> Result<Handle, SubmitError> {
        self.submit_with(command, address, data, self.config.retries)
    }

    /// Build the next frame from the queue into `buf`; returns its length, or `None` if the
    /// queue is empty. Call repeatedly to send everything queued.
    pub fn poll_transmit(&mut self, now: u64, buf: &mut [u8]) -> Option<usize> {
        if self.queue.is_empty() {
            return None;
        }
        let mut fb = FrameBuilder::new(buf, self.mac).ok()?;
        while let Some(&idx) = self.queue.front() {
            let slot = &mut self.slots[idx as usize];
            if slot.state != SlotState::Queued {
                // Released while queued.
                self.queue.pop_front();
                continue;
            }
            if !fb.fits(slot.data.len()) {
                break;
            }
            self.queue.pop_front();
            let repr = DatagramRepr {
                command: slot.command,
                index: idx,
                address: slot.address,
                data_len: slot.data.len() as u16,
                circulating: false,
                more: false,
                irq: 0,
                wkc: 0,
            };
            let Ok((_, mut d)) = fb.push(repr) else {
                break;
            };
            d.data_mut().copy_from_slice(&slot.data);
            let deadline = now.saturating_add(self.config.timeout_ns);
            slot.state = SlotState::InFlight { deadline };
            self.earliest = self.earliest.min(deadline);
            slot.attempts += 1;
            slot.sent_at = now;
            self.counters.datagrams_sent += 1;
        }
        if fb.is_empty() {
            return None;
        }
        self.counters.frames_sent += 1;
        Some(fb.finish())
    }

    /// Take a received Ethernet frame; returns how many datagrams it answered.
    pub fn handle_frame(&mut self, frame: &[u8], now: u64) -> usize {
        self.counters.frames_received += 1;
        let Ok(ecat) = parse_ethernet(frame) else {
            self.counters.malformed += 1;
            return 0;
        };
        let mut matched = 0;
        for d in ecat.datagrams() {
            let Ok(d) = d else {
                self.counters.malformed += 1;
                break;
            };
            let Some(slot) = self.slots.get_mut(d.index() as usize) else {
                self.counters.unmatched += 1;
                continue;
            };
            let in_flight = matches!(slot.state, SlotState::InFlight { .. });
            let same_cmd = d.command_code() == slot.command as u8;
            // Auto-increment and broadcast commands change ADP on the way: compare ADO only.
            let same_addr = match slot.command.addressing() {
                Addressing::AutoIncrement | Addressing::Broadcast => {
                    d.ado() == (slot.address >> 16) as u16
                }
                _ => d.logical_address() == slot.address,
            };
            if !(in_flight && same_cmd && same_addr && d.data_len() == slot.data.len()) {
                self.counters.unmatched += 1;
                continue;
            }
            slot.data.copy_from_slice(d.data());
            slot.wkc = d.wkc();
            slot.state = SlotState::Done;
            slot.round_trip_ns = now.saturating_sub(slot.sent_at);
            self.counters.datagrams_matched += 1;
            matched += 1;
        }
        matched
    }

    /// Resend or fail datagrams whose deadline has passed.
    pub fn poll_timeouts(&mut self, now: u64) {
        if now < self.earliest {
            return;
        }
        self.earliest = u64::MAX;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if let SlotState::InFlight { deadline } = slot.state {
                if now < deadline {
                    self.earliest = self.earliest.min(deadline);
                    continue;
                }
                self.counters.timeouts += 1;
                if slot.attempts <= slot.retries {
                    slot.state = SlotState::Queued;
                    self.queue.push_back(i as u8);
                    self.counters.resent += 1;
                } else {
                    slot.state = SlotState::Failed;
                    self.counters.failed += 1;
                }
            }
        }
    }

    /// The earliest deadline of a datagram in flight.
    pub fn next_deadline(&self) -> Option<u64> {
        self.slots
            .iter()
            .filter_map(|s| match s.state {
                SlotState::InFlight { deadline } => Some(deadline),
                _ => None,
            })
            .min()
    }

    /// True if datagrams wait to be transmitted.
    pub fn has_queued(&self) -> bool {
        !self.queue.is_empty()
    }

    fn slot(&self, h: Handle) -> Option<&Slot> {
        let s = &self.slots[h.index as usize];
        (s.generation == h.generation && s.state != SlotState::Free).then_some(s)
    }

    /// Where the datagram stands.
    pub fn status(&self, h: Handle) -> Status {
        match self.slot(h).map(|s| s.state) {
            None => Status::Stale,
            Some(SlotState::Done) => Status::Done,
            Some(SlotState::Failed) => Status::Failed,
            Some(_) => Status::Pending,
        }
    }

    /// The answer (data, WKC) once [`Status::Done`].
    pub fn response(&self, h: Handle) -> Option<(&[u8], u16)> {
        self.slot(h)
            .filter(|s| s.state == SlotState::Done)
            .map(|s| (&s.data[..], s.wkc))
    }

    /// Round trip of the answered datagram's last transmission (ns).
    pub fn round_trip(&self, h: Handle) -> Option<u64> {
        self.slot(h)
            .filter(|s| s.state == SlotState::Done)
            .map(|s| s.round_trip_ns)
    }

    /// When the datagram was last transmitted (the `now` of [`FrameEngine::poll_transmit`]):
    /// with an answer's data, the instant its values were read at (give or take the wire).
    pub fn sent_at(&self, h: Handle) -> Option<u64> {
        self.slot(h).filter(|s| s.attempts > 0).map(|s| s.sent_at)
    }

    /// How often the datagram was transmitted.
    pub fn attempts(&self, h: Handle) -> u32 {
        self.slot(h).map(|s| s.attempts).unwrap_or(0)
    }

    /// Free the index for reuse. A late answer to it is counted as unmatched.
    pub fn release(&mut self, h: Handle) {
        let s = &mut self.slots[h.index as usize];
        if s.generation == h.generation {
            s.state = SlotState::Free;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAC: [u8; 6] = [0, 0x0E, 0xCA, 0, 0, 1];

    /// Play a trivial ring: every datagram gets `wkc`, reads return 0x11 bytes.
    fn answer(frame: &mut [u8], wkc: u16) {
        let eth_off = 14;
        let mut f = ecat_wire::EcatFrame::new_checked(&mut frame[eth_off..]).unwrap();
        for d in f.datagrams_mut() {
            let mut d = d.unwrap();
            d.data_mut().fill(0x11);
            d.set_wkc(wkc);
            if d.command() == Some(Command::Brd) {
                let adp = d.adp();
                d.set_adp(adp.wrapping_add(3));
            }
        }
        frame[6] |= 2;
    }

    #[test]
    fn submit_transmit_match() {
        let mut e = FrameEngine::new(MAC, EngineConfig::default());
        let a = e.submit(Command::Brd, 0x0130 << 16, &[0; 2]).unwrap();
        let b = e
            .submit(Command::Fprd, 0x1001 | 0x0110 << 16, &[0; 2])
            .unwrap();
        let mut buf = [0u8; 1514];
        let n = e.poll_transmit(100, &mut buf).unwrap();
        let mut frame = buf;
        answer(&mut frame[..n], 3);
        assert_eq!(e.handle_frame(&frame[..n], 150), 2);
        assert_eq!(e.status(a), Status::Done);
        assert_eq!(e.response(b).unwrap(), (&[0x11, 0x11][..], 3));
        assert_eq!(e.round_trip(a), Some(50));
        // A duplicate of the same frame matches nothing more.
        assert_eq!(e.handle_frame(&frame[..n], 160), 0);
        assert_eq!(e.counters().unmatched, 2);
        e.release(a);
        assert_eq!(e.status(a), Status::Stale);
    }

    #[test]
    fn timeout_resends_then_fails() {
        let cfg = EngineConfig {
            timeout_ns: 1000,
            retries: 1,
        };
        let mut e = FrameEngine::new(MAC, cfg);
        let h = e.submit(Command::Aprd, 0, &[0; 2]).unwrap();
        let mut buf = [0u8; 1514];
        assert!(e.poll_transmit(0, &mut buf).is_some());
        assert_eq!(e.next_deadline(), Some(1000));
        e.poll_timeouts(999);
        assert_eq!(e.status(h), Status::Pending);
        e.poll_timeouts(1000);
        assert!(e.has_queued());
        assert!(e.poll_transmit(1000, &mut buf).is_some());
        e.poll_timeouts(2000);
        assert_eq!(e.status(h), Status::Failed);
        assert_eq!(e.attempts(h), 2);
        let c = e.counters();
        assert_eq!((c.timeouts, c.resent, c.failed), (2, 1, 1));
    }

    #[test]
    fn late_answer_to_reused_index_is_not_taken() {
        let mut e = FrameEngine::new(MAC, EngineConfig::default());
        let mut buf = [0u8; 1514];
        let h = e
            .submit(Command::Fprd, 0x1001 | 0x0130 << 16, &[0; 2])
            .unwrap();
        let n = e.poll_transmit(0, &mut buf).unwrap();
        let mut late = buf;
        answer(&mut late[..n], 1);
        e.release(h);
        // Walk the indices round so the same index is used for a different register.
        for _ in 0..(INDICES - 1) {
            let x = e.submit(Command::Nop, 0, &[]).unwrap();
            e.release(x);
        }
        let h2 = e
            .submit(Command::Fprd, 0x1001 | 0x0110 << 16, &[0; 2])
            .unwrap();
        assert_eq!(h2.index(), h.index());
        e.poll_transmit(0, &mut buf).unwrap();
        assert_eq!(e.handle_frame(&late[..n], 10), 0);
        assert_eq!(e.status(h2), Status::Pending);
    }

    #[test]
    fn many_datagrams_span_frames() {
        let mut e = FrameEngine::new(MAC, EngineConfig::default());
        let hs: Vec<_> = (0..5)
            .map(|_| e.submit(Command::Lrd, 0, &[0; 600]).unwrap())
            .collect();
        let mut buf = [0u8; 1514];
        let mut frames = 0;
        while let Some(n) = e.poll_transmit(0, &mut buf) {
            frames += 1;
            answer(&mut buf[..n], 1);
            e.handle_frame(&buf[..n], 1);
        }
        assert_eq!(frames, 3, "two 600-byte datagrams per frame");
        assert!(hs.iter().all(|h| e.status(*h) == Status::Done));
    }

    #[test]
    fn garbage_is_counted_not_fatal() {
        let mut e = FrameEngine::new(MAC, EngineConfig::default());
        assert_eq!(e.handle_frame(&[1, 2, 3], 0), 0);
        let mut f = [0u8; 60];
        f[12..14].copy_from_slice(&[0x88, 0xA4]);
        f[14..16].copy_from_slice(&[0xFF, 0x17]);
        assert_eq!(e.handle_frame(&f, 0), 0);
        assert_eq!(e.counters().malformed, 2);
        assert_eq!(
            e.submit(Command::Lrw, 0, &[0; 1487]).unwrap_err(),
            SubmitError::TooLong(1487)
        );
    }

    #[test]
    fn full_when_all_indices_pending() {
        let mut e = FrameEngine::new(MAC, EngineConfig::default());
        for _ in 0..INDICES {
            let h = e.submit(Command::Nop, 0, &[]).unwrap();
            assert!(h.index() < 0x80, "cyclic indices are never used");
        }
        assert_eq!(
            e.submit(Command::Nop, 0, &[]).unwrap_err(),
            SubmitError::Full
        );
    }
}
