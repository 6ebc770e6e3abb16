//! The blocking driver for the configuration phase: a [`Link`] plus a [`FrameEngine`] plus the
//! monotonic clock.
//!
//! Configuration work (scan, SII, state changes, register access) is a sequence of request
//! batches; [`Bus::exchange`] sends a batch (packed into as few frames as fit), waits for every
//! answer or its final timeout, and returns. The engine stays sans-IO; this is the one place
//! where it meets the socket and the clock for non-cyclic work.

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::frame::{EngineConfig, EngineCounters, FrameEngine, Handle, Status, SubmitError};
use crate::link::Link;
use ecat_wire::Command;

/// Virtual time one frame costs on the wire.
const VIRTUAL_FRAME_NS: u64 = 10_000;

/// One datagram of a batch: what to send and, after [`Bus::exchange`], what came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdu {
    /// Command.
    pub command: Command,
    /// ADP | ADO << 16, or the logical address.
    pub address: u32,
    /// Data sent; replaced by the data received.
    pub data: Vec<u8>,
    /// Working counter received.
    pub wkc: u16,
}

impl Pdu {
    /// A physical-address datagram with `data`.
    pub fn physical(command: Command, adp: u16, ado: u16, data: Vec<u8>) -> Pdu {
        Pdu {
            command,
            address: adp as u32 | (ado as u32) << 16,
            data,
            wkc: 0,
        }
    }

    /// Human description for error messages, e.g. `FPRD 0x1001:0x0130 (2 bytes)`.
    pub fn describe(&self) -> String {
        let adp = self.address as u16;
        let ado = (self.address >> 16) as u16;
        match self.command {
            Command::Lrd | Command::Lrw | Command::Lwr => format!(
                "{} 0x{:08X} ({} bytes)",
                self.command,
                self.address,
                self.data.len()
            ),
            Command::Brd | Command::Bwr | Command::Brw => {
                format!("{} 0x{:04X} ({} bytes)", self.command, ado, self.data.len())
            }
            Command::Aprd | Command::Apwr | Command::Aprw | Command::Armw => format!(
                "{} position {} register 0x{:04X} ({} bytes)",
                self.command,
                (adp as i16).unsigned_abs(),
                ado,
                self.data.len()
            ),
            _ => format!(
                "{} 0x{:04X}:0x{:04X} ({} bytes)",
                self.command,
                adp,
                ado,
                self.data.len()
            ),
        }
    }
}

/// A link driven synchronously through a frame engine.
pub struct Bus {
    link: Box<dyn Link>,
    engine: FrameEngine,
    tx: Vec<u8>,
    rx: Vec<u8>,
    clock: Clock,
    handles: Vec<Handle>,
}

impl std::fmt::Debug for Bus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bus")
            .field("link", &self.link.name())
            .finish()
    }
}

impl Bus {
    /// Drive `link` with the default engine settings.
    pub fn new(link: Box<dyn Link>) -> Bus {
        let engine = FrameEngine::new(link.mac(), EngineConfig::default());
        let clock = match link.virtual_time() {
            Some(v) => Clock::Virtual(v),
            None => Clock::monotonic(),
        };
        Bus {
            link,
            engine,
            tx: vec![0; 1518],
            rx: vec![0; 2048],
            clock,
            handles: Vec::with_capacity(256),
        }
    }

    /// The link.
    pub fn link(&self) -> &dyn Link {
        &*self.link
    }

    /// The link, writable (e.g. to reach the simulated network in tests).
    pub fn link_mut(&mut self) -> &mut dyn Link {
        &mut *self.link
    }

    /// Engine counters.
    pub fn counters(&self) -> EngineCounters {
        self.engine.counters()
    }

    /// Change timeout and retries.
    pub fn set_engine_config(&mut self, c: EngineConfig) {
        self.engine.set_config(c);
    }

    /// Nanoseconds on the bus clock (monotonic since opening, or virtual).
    pub fn now(&self) -> u64 {
        self.clock.now_ns()
    }

    /// The bus clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Wait `ns` (sleeps on the monotonic clock, advances virtual time).
    pub fn pause(&self, ns: u64) {
        match &self.clock {
            Clock::Monotonic(_) => std::thread::sleep(std::time::Duration::from_nanos(ns)),
            Clock::Virtual(v) => v.advance(ns),
        }
    }

    /// Take the link and engine apart (to hand them to the cyclic runtime).
    pub fn into_parts(self) -> (Box<dyn Link>, FrameEngine, Clock) {
        (self.link, self.engine, self.clock)
    }

    /// Send every PDU of the batch and wait for all answers. On return each PDU holds the data
    /// and WKC received. Fails if any datagram got no answer after all retries.
    pub fn exchange(&mut self, pdus: &mut [Pdu]) -> Result<()> {
        for chunk in pdus.chunks_mut(100) {
            self.exchange_chunk(chunk)?;
        }
        Ok(())
    }

    fn exchange_chunk(&mut self, pdus: &mut [Pdu]) -> Result<()> {
        self.handles.clear();
        for p in pdus.iter() {
            let h = self
                .engine
                .submit(p.command, p.address, &p.data)
                .map_err(|e| match e {
                    SubmitError::TooLong(_) => Error::Invalid(format!("{}: {e}", p.describe())),
                    SubmitError::Full => Error::Invalid(e.to_string()),
                });
            match h {
                Ok(h) => self.handles.push(h),
                Err(e) => {
                    self.release_all();
                    return Err(e);
                }
            }
        }
        let result = self.drive();
        if result.is_ok() {
            for (p, h) in pdus.iter_mut().zip(&self.handles) {
                match self.engine.status(*h) {
                    Status::Done => {
                        let (data, wkc) = self.engine.response(*h).unwrap_or((&[], 0));
                        p.data.copy_from_slice(data);
                        p.wkc = wkc;
                    }
                    _ => {
                        let attempts = self.engine.attempts(*h);
                        self.release_all();
                        return Err(Error::Timeout {
                            what: p.describe(),
                            attempts,
                        });
                    }
                }
            }
        }
        self.release_all();
        result
    }

    fn release_all(&mut self) {
        for h in self.handles.drain(..) {
            self.engine.release(h);
        }
    }

    /// Transmit, receive and time out until every handle of the batch is settled.
    fn drive(&mut self) -> Result<()> {
        loop {
            let now = self.now();
            while let Some(n) = self.engine.poll_transmit(now, &mut self.tx) {
                self.link.send(&self.tx[..n])?;
                // On virtual time a frame still takes time on the wire (about 10 us for a short
                // frame through a few SubDevices), so polling loops see time pass.
                if let Clock::Virtual(v) = &self.clock {
                    v.advance(VIRTUAL_FRAME_NS);
                }
            }
            let pending = self
                .handles
                .iter()
                .any(|h| self.engine.status(*h) == Status::Pending);
            if !pending {
                return Ok(());
            }
            let next = self.engine.next_deadline();
            let deadline = next.and_then(|d| self.clock.instant_at(d));
            if let Some(n) = self.link.recv(&mut self.rx, deadline)? {
                let now = self.now();
                self.engine.handle_frame(&self.rx[..n], now);
            } else if let Some(d) = next {
                // Nothing came: on virtual time, this is where the wait would have ended.
                self.clock.wait_until(d);
            }
            self.engine.poll_timeouts(self.now());
        }
    }

    /// One datagram: send `data`, return (data received, WKC).
    pub fn transact(
        &mut self,
        command: Command,
        adp: u16,
        ado: u16,
        data: Vec<u8>,
    ) -> Result<(Vec<u8>, u16)> {
        let mut p = [Pdu::physical(command, adp, ado, data)];
        self.exchange(&mut p)?;
        let [p] = p;
        Ok((p.data, p.wkc))
    }

    /// Read `len` bytes with a physical read command; returns (data, WKC).
    pub fn read(
        &mut self,
        command: Command,
        adp: u16,
        ado: u16,
        len: usize,
    ) -> Result<(Vec<u8>, u16)> {
        self.transact(command, adp, ado, vec![0; len])
    }

    /// Write `data` with a physical write command; returns the WKC.
    pub fn write(&mut self, command: Command, adp: u16, ado: u16, data: &[u8]) -> Result<u16> {
        Ok(self.transact(command, adp, ado, data.to_vec())?.1)
    }

    /// Write and require a WKC.
    pub fn write_expect(
        &mut self,
        command: Command,
        adp: u16,
        ado: u16,
        data: &[u8],
        expected: u16,
    ) -> Result<()> {
        let wkc = self.write(command, adp, ado, data)?;
        check_wkc(
            &Pdu::physical(command, adp, ado, data.to_vec()),
            wkc,
            expected,
        )
    }

    /// FPRD a little-endian u16 register of the SubDevice at `station`; requires WKC 1.
    pub fn fprd_u16(&mut self, station: u16, reg: u16) -> Result<u16> {
        let (d, wkc) = self.read(Command::Fprd, station, reg, 2)?;
        check_wkc(
            &Pdu::physical(Command::Fprd, station, reg, d.clone()),
            wkc,
            1,
        )?;
        Ok(u16::from_le_bytes([d[0], d[1]]))
    }

    /// FPWR a little-endian u16 register of the SubDevice at `station`; requires WKC 1.
    pub fn fpwr_u16(&mut self, station: u16, reg: u16, value: u16) -> Result<()> {
        self.write_expect(Command::Fpwr, station, reg, &value.to_le_bytes(), 1)
    }
}

/// Turn a WKC mismatch into an error naming the datagram.
pub fn check_wkc(p: &Pdu, got: u16, expected: u16) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::Wkc {
            what: p.describe(),
            expected,
            got,
        })
    }
}
