//! Capture wrapper: records every frame a link sends and receives to a file Wireshark reads.
//!
//! [`CaptureLink`] sits on top of any [`Link`]. Each frame handed to `send` and each frame
//! `recv` returns is written with a nanosecond timestamp: the wall clock (CLOCK_REALTIME) read
//! once when the capture opens, advanced by CLOCK_MONOTONIC from then on (so intervals in the
//! file are never bent by NTP steps), or by the link's virtual clock when it runs on virtual
//! time (deterministic captures in tests). A transmitted frame is stamped when it is handed to
//! the link, a received one when the link returns it: the times the MainDevice sees.
//!
//! Two formats, chosen by the file name:
//! - `*.pcapng`: pcapng with one interface (`if_tsresol` = 9, nanoseconds) and one Enhanced
//!   Packet Block per frame whose `epb_flags` option notes the direction (inbound/outbound);
//! - anything else: classic libpcap, nanosecond magic `0xA1B23C4D`, LINKTYPE_ETHERNET. Classic
//!   pcap has no direction field; returned frames are still told apart by the
//!   locally-administered bit the first SubDevice sets in the source MAC (see
//!   [`crate::analyze`]).
//!
//! Records go into a buffer allocated once at open ([`BUFFER_BYTES`]); it is written to the
//! file in one `write` when full and on drop (or [`CaptureLink::flush`]), so the cyclic path
//! neither allocates nor makes a syscall per frame. A write error stops the capture (the link
//! goes on working) and is reported once on stderr when the capture closes.

use super::{Link, LinkCounters};
use crate::clock::VirtualTime;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Size of the record buffer, allocated once.
pub const BUFFER_BYTES: usize = 256 * 1024;
/// Longest frame recorded in full (longer ones are cut, with their original length noted).
pub const SNAPLEN: usize = 65535;

/// Classic pcap magic for nanosecond timestamps.
pub const PCAP_MAGIC_NS: u32 = 0xA1B2_3C4D;
/// Classic pcap magic for microsecond timestamps.
pub const PCAP_MAGIC_US: u32 = 0xA1B2_C3D4;
/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u16 = 1;

/// File format of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureFormat {
    /// Classic libpcap with nanosecond timestamps.
    Pcap,
    /// pcapng with direction flags.
    Pcapng,
}

impl CaptureFormat {
    /// pcapng for `*.pcapng`, classic pcap otherwise.
    pub fn for_path(path: &Path) -> CaptureFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("pcapng") => CaptureFormat::Pcapng,
            _ => CaptureFormat::Pcap,
        }
    }
}

/// Direction of a recorded frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Sent by the MainDevice.
    Tx,
    /// Received by the MainDevice.
    Rx,
}

/// CLOCK_REALTIME in nanoseconds since the Unix epoch.
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A link that records its frames. See the module documentation.
pub struct CaptureLink {
    inner: Box<dyn Link>,
    path: PathBuf,
    format: CaptureFormat,
    file: Option<File>,
    buf: Vec<u8>,
    frames: u64,
    error: Option<std::io::Error>,
    epoch_real_ns: u64,
    epoch_mono: Instant,
    virtual_time: Option<VirtualTime>,
}

impl std::fmt::Debug for CaptureLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CaptureLink")
            .field("inner", &self.inner.name())
            .field("path", &self.path)
            .field("frames", &self.frames)
            .finish()
    }
}

/// Wrap `link` so that every frame is recorded to `path` (pcapng if it ends in `.pcapng`,
/// classic nanosecond pcap otherwise).
pub fn wrap_capture(link: Box<dyn Link>, path: impl AsRef<Path>) -> Result<Box<dyn Link>> {
    Ok(Box::new(CaptureLink::new(link, path)?))
}

impl CaptureLink {
    /// Create (truncate) `path` and write the file header.
    pub fn new(inner: Box<dyn Link>, path: impl AsRef<Path>) -> Result<CaptureLink> {
        let path = path.as_ref().to_path_buf();
        let file = File::create(&path).map_err(|e| {
            Error::Invalid(format!(
                "cannot create the capture file {}: {e}",
                path.display()
            ))
        })?;
        let format = CaptureFormat::for_path(&path);
        let virtual_time = inner.virtual_time();
        let mut c = CaptureLink {
            path,
            format,
            file: Some(file),
            buf: Vec::with_capacity(BUFFER_BYTES),
            frames: 0,
            error: None,
            epoch_real_ns: realtime_ns(),
            epoch_mono: Instant::now(),
            virtual_time,
            inner,
        };
        match format {
            CaptureFormat::Pcap => write_pcap_header(&mut c.buf),
            CaptureFormat::Pcapng => write_pcapng_header(&mut c.buf, c.inner.name()),
        }
        c.flush();
        if let Some(e) = c.error.take() {
            return Err(Error::Invalid(format!(
                "cannot write the capture file {}: {e}",
                c.path.display()
            )));
        }
        Ok(c)
    }

    /// Frames recorded so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The capture file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write the buffered records to the file now.
    pub fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        if let Some(f) = self.file.as_mut() {
            if let Err(e) = f.write_all(&self.buf) {
                self.error = Some(e);
                self.file = None;
            }
        }
        self.buf.clear();
    }

    fn now_ns(&self) -> u64 {
        match &self.virtual_time {
            Some(v) => self.epoch_real_ns + v.now(),
            None => self.epoch_real_ns + self.epoch_mono.elapsed().as_nanos() as u64,
        }
    }

    fn record(&mut self, ts_ns: u64, frame: &[u8], dir: Direction) {
        if self.file.is_none() {
            return;
        }
        let caplen = frame.len().min(SNAPLEN);
        let need = record_len(self.format, caplen);
        if self.buf.len() + need > self.buf.capacity() {
            self.flush();
        }
        if need > self.buf.capacity() {
            return; // cannot happen with SNAPLEN < BUFFER_BYTES
        }
        match self.format {
            CaptureFormat::Pcap => pcap_record(&mut self.buf, ts_ns, &frame[..caplen], frame.len()),
            CaptureFormat::Pcapng => pcapng_epb(
                &mut self.buf,
                ts_ns,
                &frame[..caplen],
                frame.len(),
                Some(dir),
            ),
        }
        self.frames += 1;
    }
}

impl Drop for CaptureLink {
    fn drop(&mut self) {
        self.flush();
        if let Some(f) = self.file.as_mut() {
            let _ = f.flush();
        }
        if let Some(e) = &self.error {
            eprintln!(
                "ecat: the capture {} is incomplete: writing failed ({e})",
                self.path.display()
            );
        }
    }
}

impl Link for CaptureLink {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        let ts = self.now_ns();
        self.inner.send(frame)?;
        self.record(ts, frame, Direction::Tx);
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        let got = self.inner.recv(buf, deadline)?;
        if let Some(n) = got {
            let ts = self.now_ns();
            self.record(ts, &buf[..n], Direction::Rx);
        }
        Ok(got)
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
        format!(
            "{}, recorded to {}",
            self.inner.describe(),
            self.path.display()
        )
    }

    fn virtual_time(&self) -> Option<VirtualTime> {
        self.inner.virtual_time()
    }

    fn redundancy(&self) -> Option<super::redundant::RingStatus> {
        self.inner.redundancy()
    }

    fn set_dc_shift(&mut self, shift_ns: i64) {
        self.inner.set_dc_shift(shift_ns);
    }
}

/// Bytes one record takes in `format` for `caplen` captured bytes.
pub fn record_len(format: CaptureFormat, caplen: usize) -> usize {
    match format {
        CaptureFormat::Pcap => 16 + caplen,
        CaptureFormat::Pcapng => 28 + pad4(caplen) + 12 + 4,
    }
}

fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

/// The classic pcap global header (nanosecond magic, Ethernet), little-endian.
pub fn write_pcap_header(out: &mut Vec<u8>) {
    out.extend_from_slice(&PCAP_MAGIC_NS.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes()); // thiszone
    out.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
    out.extend_from_slice(&(SNAPLEN as u32).to_le_bytes());
    out.extend_from_slice(&(LINKTYPE_ETHERNET as u32).to_le_bytes());
}

/// One classic pcap record (nanosecond timestamps).
pub fn pcap_record(out: &mut Vec<u8>, ts_ns: u64, data: &[u8], orig_len: usize) {
    out.extend_from_slice(&((ts_ns / 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&(orig_len as u32).to_le_bytes());
    out.extend_from_slice(data);
}

/// pcapng Section Header Block and one Ethernet Interface Description Block with nanosecond
/// resolution and the link name.
pub fn write_pcapng_header(out: &mut Vec<u8>, if_name: &str) {
    // SHB: type, length, byte-order magic, version 1.0, section length unknown, length.
    out.extend_from_slice(&0x0A0D_0D0Au32.to_le_bytes());
    out.extend_from_slice(&28u32.to_le_bytes());
    out.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(-1i64).to_le_bytes());
    out.extend_from_slice(&28u32.to_le_bytes());
    // IDB with if_name (2) and if_tsresol (9) = 9 (10^-9 s).
    let name = &if_name.as_bytes()[..if_name.len().min(255)];
    let len = 16 + 4 + pad4(name.len()) + 8 + 4 + 4;
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes()); // snaplen: no limit
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(name);
    out.resize(out.len() + pad4(name.len()) - name.len(), 0);
    out.extend_from_slice(&9u16.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&[9, 0, 0, 0]);
    out.extend_from_slice(&[0, 0, 0, 0]); // opt_endofopt
    out.extend_from_slice(&(len as u32).to_le_bytes());
}

/// One pcapng Enhanced Packet Block on interface 0 (nanosecond timestamps), with `epb_flags`
/// giving the direction when known.
pub fn pcapng_epb(
    out: &mut Vec<u8>,
    ts_ns: u64,
    data: &[u8],
    orig_len: usize,
    dir: Option<Direction>,
) {
    let opts = if dir.is_some() { 12 } else { 0 };
    let len = 28 + pad4(data.len()) + opts + 4;
    out.extend_from_slice(&6u32.to_le_bytes());
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&((ts_ns >> 32) as u32).to_le_bytes());
    out.extend_from_slice(&(ts_ns as u32).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(&(orig_len as u32).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&[0u8; 3][..pad4(data.len()) - data.len()]);
    if let Some(d) = dir {
        let flags: u32 = match d {
            Direction::Rx => 1,
            Direction::Tx => 2,
        };
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&4u16.to_le_bytes());
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
    }
    out.extend_from_slice(&(len as u32).to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loopback link: every frame sent comes back with the locally-administered bit set.
    struct Echo {
        q: std::collections::VecDeque<Vec<u8>>,
    }
    impl Link for Echo {
        fn send(&mut self, frame: &[u8]) -> Result<()> {
            let mut f = frame.to_vec();
            f[6] |= 2;
            self.q.push_back(f);
            Ok(())
        }
        fn recv(&mut self, buf: &mut [u8], _: Option<Instant>) -> Result<Option<usize>> {
            Ok(self.q.pop_front().map(|f| {
                buf[..f.len()].copy_from_slice(&f);
                f.len()
            }))
        }
        fn mac(&self) -> [u8; 6] {
            [0, 1, 2, 3, 4, 5]
        }
        fn name(&self) -> &str {
            "echo"
        }
        fn counters(&self) -> LinkCounters {
            LinkCounters::default()
        }
    }

    fn frame(i: u8) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[0..6].fill(0xFF);
        f[12] = 0x88;
        f[13] = 0xA4;
        f[14] = 12;
        f[15] = 0x10;
        f[16] = 7; // BRD
        f[17] = i;
        f
    }

    #[test]
    fn writes_pcap_and_pcapng_that_read_back() {
        let dir = std::env::temp_dir();
        for name in ["ecat-capture-test.pcap", "ecat-capture-test.pcapng"] {
            let path = dir.join(format!("{}-{name}", std::process::id()));
            {
                let mut l = CaptureLink::new(
                    Box::new(Echo {
                        q: Default::default(),
                    }),
                    &path,
                )
                .unwrap();
                let mut buf = [0u8; 1518];
                for i in 0..1000u32 {
                    l.send(&frame(i as u8)).unwrap();
                    assert_eq!(l.recv(&mut buf, None).unwrap(), Some(60));
                }
                assert_eq!(l.frames(), 2000);
            }
            let data = std::fs::read(&path).unwrap();
            let recs = crate::capture_read::read_all(&data).unwrap();
            assert_eq!(recs.len(), 2000, "{name}");
            assert_eq!(recs[0].data, frame(0));
            assert_eq!(recs[1].data[6] & 2, 2);
            assert!(recs.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
            let now = realtime_ns();
            assert!(recs[0].ts_ns <= now && now - recs[0].ts_ns < 60_000_000_000);
            if name.ends_with("ng") {
                assert_eq!(recs[0].dir, Some(Direction::Tx));
                assert_eq!(recs[1].dir, Some(Direction::Rx));
            } else {
                assert_eq!(recs[0].dir, None);
            }
            let _ = std::fs::remove_file(&path);
        }
    }

    #[test]
    fn record_len_matches_written() {
        for n in [0usize, 1, 59, 60, 61, 63, 64, 1514] {
            let data = vec![0xA5u8; n];
            let mut v = Vec::new();
            pcap_record(&mut v, 5, &data, n);
            assert_eq!(v.len(), record_len(CaptureFormat::Pcap, n));
            let mut v = Vec::new();
            pcapng_epb(&mut v, 5, &data, n, Some(Direction::Rx));
            assert_eq!(v.len(), record_len(CaptureFormat::Pcapng, n));
            assert_eq!(v.len() % 4, 0);
        }
    }
}
