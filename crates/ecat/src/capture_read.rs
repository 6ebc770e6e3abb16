//! Reading capture files: classic libpcap and pcapng, whatever wrote them.
//!
//! [`Capture::parse`] takes the whole file in memory and yields [`Packet`]s (timestamp in ns
//! since the Unix epoch, the captured bytes, the link type, the direction when the file says).
//! Supported:
//! - classic pcap: microsecond (`0xA1B2C3D4`) and nanosecond (`0xA1B23C4D`) magic, either byte
//!   order;
//! - pcapng: Section Header Blocks (either byte order, several sections), Interface
//!   Description Blocks with `if_tsresol` (powers of 10 or 2) and `if_tsoffset`, Enhanced
//!   Packet Blocks (with `epb_flags` direction), Simple Packet Blocks (no timestamp: they get
//!   the previous packet's) and the obsolete Packet Block; every other block is skipped.
//!
//! Garbage never panics: a file that is not a capture is an error; a capture that goes bad
//! part way (truncated record, impossible length) yields what came before and notes the
//! problem in [`Capture::problem`].

use crate::link::capture::Direction;
use std::fmt;
use std::path::Path;

/// A capture that could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError(pub String);

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CaptureError {}

/// One captured frame, borrowing the file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<'a> {
    /// Timestamp, ns since the Unix epoch.
    pub ts_ns: u64,
    /// Captured bytes (maybe fewer than `orig_len`).
    pub data: &'a [u8],
    /// Length on the wire.
    pub orig_len: u32,
    /// LINKTYPE_* of the interface (1 = Ethernet).
    pub linktype: u16,
    /// Direction, if the file records it (pcapng `epb_flags`).
    pub dir: Option<Direction>,
}

/// An owned copy of a [`Packet`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Timestamp, ns since the Unix epoch.
    pub ts_ns: u64,
    /// Captured bytes.
    pub data: Vec<u8>,
    /// LINKTYPE_* of the interface.
    pub linktype: u16,
    /// Direction, if recorded.
    pub dir: Option<Direction>,
}

/// File format detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Classic pcap, microsecond timestamps.
    PcapMicro,
    /// Classic pcap, nanosecond timestamps.
    PcapNano,
    /// pcapng.
    Pcapng,
}

impl Format {
    /// Name for humans.
    pub fn name(self) -> &'static str {
        match self {
            Format::PcapMicro => "pcap (microsecond timestamps)",
            Format::PcapNano => "pcap (nanosecond timestamps)",
            Format::Pcapng => "pcapng",
        }
    }
}

/// A parsed capture file.
#[derive(Debug, Clone)]
pub struct Capture<'a> {
    /// The format.
    pub format: Format,
    /// Every packet read, in file order.
    pub packets: Vec<Packet<'a>>,
    /// Why reading stopped early, if it did.
    pub problem: Option<String>,
}

/// Largest record length believed (anything bigger is corruption).
const MAX_RECORD: usize = 1 << 20;

#[derive(Clone, Copy)]
struct Endian(bool); // true = big-endian

impl Endian {
    fn u16(self, b: &[u8], at: usize) -> Option<u16> {
        let x: [u8; 2] = b.get(at..at + 2)?.try_into().ok()?;
        Some(if self.0 {
            u16::from_be_bytes(x)
        } else {
            u16::from_le_bytes(x)
        })
    }
    fn u32(self, b: &[u8], at: usize) -> Option<u32> {
        let x: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
        Some(if self.0 {
            u32::from_be_bytes(x)
        } else {
            u32::from_le_bytes(x)
        })
    }
    fn u64(self, b: &[u8], at: usize) -> Option<u64> {
        let x: [u8; 8] = b.get(at..at + 8)?.try_into().ok()?;
        Some(if self.0 {
            u64::from_be_bytes(x)
        } else {
            u64::from_le_bytes(x)
        })
    }
}

/// Read and parse a whole file into owned records (convenience for tests and small files).
pub fn read_all(bytes: &[u8]) -> Result<Vec<Record>, CaptureError> {
    let c = Capture::parse(bytes)?;
    Ok(c.packets
        .iter()
        .map(|p| Record {
            ts_ns: p.ts_ns,
            data: p.data.to_vec(),
            linktype: p.linktype,
            dir: p.dir,
        })
        .collect())
}

/// Read a file from disk (the caller keeps the bytes; see [`Capture::parse`]).
pub fn read_file(path: &Path) -> Result<Vec<u8>, CaptureError> {
    std::fs::read(path).map_err(|e| CaptureError(format!("cannot read {}: {e}", path.display())))
}

impl<'a> Capture<'a> {
    /// Parse a whole capture file.
    pub fn parse(bytes: &'a [u8]) -> Result<Capture<'a>, CaptureError> {
        let Some(magic) = bytes.get(0..4) else {
            return Err(CaptureError(
                "the file is too short to be a capture (fewer than 4 bytes)".into(),
            ));
        };
        let m = u32::from_le_bytes(magic.try_into().expect("4 bytes"));
        match m {
            0xA1B2_C3D4 => parse_pcap(bytes, Endian(false), false),
            0xA1B2_3C4D => parse_pcap(bytes, Endian(false), true),
            0xD4C3_B2A1 => parse_pcap(bytes, Endian(true), false),
            0x4D3C_B2A1 => parse_pcap(bytes, Endian(true), true),
            0x0A0D_0D0A => parse_pcapng(bytes),
            _ => Err(CaptureError(format!(
                "not a pcap or pcapng file (first bytes {:02x} {:02x} {:02x} {:02x})",
                magic[0], magic[1], magic[2], magic[3]
            ))),
        }
    }
}

fn parse_pcap(b: &[u8], e: Endian, nano: bool) -> Result<Capture<'_>, CaptureError> {
    if b.len() < 24 {
        return Err(CaptureError(
            "truncated pcap file header (fewer than 24 bytes)".into(),
        ));
    }
    let linktype = (e.u32(b, 20).unwrap_or(0) & 0xFFFF) as u16;
    let mut packets = Vec::new();
    let mut problem = None;
    let mut at = 24;
    while at < b.len() {
        let (Some(sec), Some(frac), Some(incl), Some(orig)) = (
            e.u32(b, at),
            e.u32(b, at + 4),
            e.u32(b, at + 8),
            e.u32(b, at + 12),
        ) else {
            problem = Some(format!("truncated record header at byte {at}"));
            break;
        };
        let incl = incl as usize;
        if incl > MAX_RECORD {
            problem = Some(format!(
                "impossible record length {incl} at byte {at} (corrupt file)"
            ));
            break;
        }
        let Some(data) = b.get(at + 16..at + 16 + incl) else {
            problem = Some(format!(
                "truncated record at byte {at} ({incl} bytes announced, {} left)",
                b.len() - at - 16.min(b.len() - at)
            ));
            break;
        };
        let frac_ns = if nano {
            frac as u64
        } else {
            frac as u64 * 1_000
        };
        packets.push(Packet {
            ts_ns: (sec as u64) * 1_000_000_000 + frac_ns,
            data,
            orig_len: orig,
            linktype,
            dir: None,
        });
        at += 16 + incl;
    }
    Ok(Capture {
        format: if nano {
            Format::PcapNano
        } else {
            Format::PcapMicro
        },
        packets,
        problem,
    })
}

#[derive(Debug, Clone, Copy)]
struct Iface {
    linktype: u16,
    snaplen: u32,
    /// Resolution: (is power of two, exponent).
    res: (bool, u8),
    offset_s: i64,
}

impl Iface {
    fn ns(&self, ticks: u64) -> u64 {
        let t = ticks as u128;
        let ns = match self.res {
            (false, 9) => t,
            (false, d) if d < 9 => t * 10u128.pow(9 - d as u32),
            (false, d) => t / 10u128.pow((d as u32 - 9).min(38)),
            (true, b) => (t * 1_000_000_000) >> b.min(127),
        };
        let off = self.offset_s as i128 * 1_000_000_000;
        (ns as i128 + off).clamp(0, u64::MAX as i128) as u64
    }
}

fn parse_pcapng(b: &[u8]) -> Result<Capture<'_>, CaptureError> {
    let mut packets = Vec::new();
    let mut problem = None;
    let mut ifaces: Vec<Iface> = Vec::new();
    let mut e = Endian(false);
    let mut at = 0usize;
    let mut last_ts = 0u64;
    let mut sections = 0;
    while at < b.len() {
        let Some(raw_type) = b.get(at..at + 4) else {
            problem = Some(format!("truncated block header at byte {at}"));
            break;
        };
        let is_shb = raw_type == [0x0A, 0x0D, 0x0D, 0x0A];
        if is_shb {
            match b.get(at + 8..at + 12) {
                Some([0x4D, 0x3C, 0x2B, 0x1A]) => e = Endian(false),
                Some([0x1A, 0x2B, 0x3C, 0x4D]) => e = Endian(true),
                _ => {
                    if sections == 0 {
                        return Err(CaptureError(
                            "pcapng section header with an unknown byte-order magic".into(),
                        ));
                    }
                    problem = Some(format!("bad section header at byte {at}"));
                    break;
                }
            }
            sections += 1;
            ifaces.clear();
        }
        let btype = e.u32(b, at).unwrap_or(0);
        let Some(blen) = e.u32(b, at + 4).map(|l| l as usize) else {
            problem = Some(format!("truncated block header at byte {at}"));
            break;
        };
        if !(12..=MAX_RECORD + 64).contains(&blen) || at + blen > b.len() {
            problem = Some(format!(
                "block of type 0x{btype:08x} at byte {at} has an impossible or truncated length {blen}"
            ));
            break;
        }
        let body = &b[at + 8..at + blen - 4];
        match btype {
            0x0A0D_0D0A => {}
            1 => {
                let (Some(linktype), Some(snaplen)) = (e.u16(body, 0), e.u32(body, 4)) else {
                    problem = Some(format!("short interface description block at byte {at}"));
                    break;
                };
                let mut iface = Iface {
                    linktype,
                    snaplen,
                    res: (false, 6),
                    offset_s: 0,
                };
                for (code, val) in options(body.get(8..).unwrap_or(&[]), e) {
                    match (code, val) {
                        (9, [r, ..]) => iface.res = (r & 0x80 != 0, r & 0x7F),
                        (14, v) if v.len() >= 8 => {
                            iface.offset_s = e.u64(v, 0).unwrap_or(0) as i64;
                        }
                        _ => {}
                    }
                }
                ifaces.push(iface);
            }
            6 | 2 => {
                // EPB: if_id u32, ts hi, ts lo, caplen, origlen, data, options.
                // Obsolete PB: if_id u16, drops u16, ts hi, ts lo, caplen, len, data, options.
                let if_id = if btype == 6 {
                    e.u32(body, 0)
                } else {
                    e.u16(body, 0).map(u32::from)
                };
                let (Some(if_id), Some(hi), Some(lo), Some(cap), Some(orig)) = (
                    if_id,
                    e.u32(body, 4),
                    e.u32(body, 8),
                    e.u32(body, 12),
                    e.u32(body, 16),
                ) else {
                    problem = Some(format!("short packet block at byte {at}"));
                    break;
                };
                let Some(iface) = ifaces.get(if_id as usize) else {
                    problem = Some(format!(
                        "packet block at byte {at} names interface {if_id}, which was not described"
                    ));
                    break;
                };
                let cap = cap as usize;
                let Some(data) = body.get(20..20 + cap) else {
                    problem = Some(format!(
                        "packet block at byte {at} announces {cap} bytes but holds fewer"
                    ));
                    break;
                };
                let mut dir = None;
                let opts = body.get(20 + ((cap + 3) & !3)..).unwrap_or(&[]);
                for (code, val) in options(opts, e) {
                    if code == 2 && val.len() >= 4 {
                        dir = match e.u32(val, 0).unwrap_or(0) & 3 {
                            1 => Some(Direction::Rx),
                            2 => Some(Direction::Tx),
                            _ => None,
                        };
                    }
                }
                last_ts = iface.ns(((hi as u64) << 32) | lo as u64);
                packets.push(Packet {
                    ts_ns: last_ts,
                    data,
                    orig_len: orig,
                    linktype: iface.linktype,
                    dir,
                });
            }
            3 => {
                let Some(iface) = ifaces.first() else {
                    problem = Some(format!(
                        "simple packet block at byte {at} before any interface"
                    ));
                    break;
                };
                let Some(orig) = e.u32(body, 0) else {
                    problem = Some(format!("short simple packet block at byte {at}"));
                    break;
                };
                let mut cap = (orig as usize).min(body.len() - 4);
                if iface.snaplen != 0 {
                    cap = cap.min(iface.snaplen as usize);
                }
                packets.push(Packet {
                    ts_ns: last_ts,
                    data: &body[4..4 + cap],
                    orig_len: orig,
                    linktype: iface.linktype,
                    dir: None,
                });
            }
            _ => {} // name resolution, statistics, custom, decryption secrets...
        }
        at += blen.next_multiple_of(4).min(b.len() - at).max(4);
    }
    Ok(Capture {
        format: Format::Pcapng,
        packets,
        problem,
    })
}

/// pcapng options: (code, value) until opt_endofopt or the end; stops quietly on garbage.
fn options(mut b: &[u8], e: Endian) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let code = e.u16(b, 0)?;
        let len = e.u16(b, 2)? as usize;
        if code == 0 {
            return None;
        }
        let val = b.get(4..4 + len)?;
        b = b.get(4 + ((len + 3) & !3)..).unwrap_or(&[]);
        Some((code, val))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::capture::{pcap_record, pcapng_epb, write_pcap_header, write_pcapng_header};

    fn testdata(name: &str) -> Vec<u8> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/captures")
            .join(name);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn real_captures() {
        // Packet counts and first timestamps as `capinfos` reports them.
        for (name, n, first_ns, fmt) in [
            (
                "replay-dc.pcapng",
                3604,
                1_773_540_979_389_182_856u64,
                Format::Pcapng,
            ),
            (
                "replay-ek1100-el2828-el2889.pcapng",
                3578,
                1_773_540_991_621_081_636,
                Format::Pcapng,
            ),
            (
                "wireshark-sample-ethercat.cap",
                986,
                1_189_592_331_278_522_000,
                Format::PcapMicro,
            ),
        ] {
            let bytes = testdata(name);
            let c = Capture::parse(&bytes).unwrap();
            assert_eq!(c.format, fmt, "{name}");
            assert_eq!(c.problem, None, "{name}");
            assert_eq!(c.packets.len(), n, "{name}");
            assert_eq!(c.packets[0].ts_ns, first_ns, "{name}");
            assert!(c.packets.iter().all(|p| p.linktype == 1));
            assert!(c.packets.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
            assert_eq!(&c.packets[0].data[12..14], &[0x88, 0xA4], "{name}");
        }
    }

    fn sample_files() -> Vec<Vec<u8>> {
        let frame: Vec<u8> = (0..60u8).collect();
        let mut pcap = Vec::new();
        write_pcap_header(&mut pcap);
        let mut ng = Vec::new();
        write_pcapng_header(&mut ng, "sim:io");
        for i in 0..5u64 {
            pcap_record(&mut pcap, 1_000_000_000 + i, &frame[..50 + i as usize], 60);
            pcapng_epb(
                &mut ng,
                1_000_000_000 + i,
                &frame[..50 + i as usize],
                60,
                Some(Direction::Tx),
            );
        }
        vec![pcap, ng]
    }

    #[test]
    fn our_own_files_and_big_endian() {
        for f in sample_files() {
            let c = Capture::parse(&f).unwrap();
            assert_eq!(c.packets.len(), 5);
            assert_eq!(c.packets[4].ts_ns, 1_000_000_004);
            assert_eq!(c.packets[4].data.len(), 54);
            assert_eq!(c.problem, None);
        }
        // A big-endian microsecond pcap written by hand.
        let mut be = Vec::new();
        be.extend_from_slice(&0xA1B2_C3D4u32.to_be_bytes());
        be.extend_from_slice(&[
            0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 1,
        ]);
        be.extend_from_slice(&7u32.to_be_bytes());
        be.extend_from_slice(&5u32.to_be_bytes());
        be.extend_from_slice(&3u32.to_be_bytes());
        be.extend_from_slice(&3u32.to_be_bytes());
        be.extend_from_slice(&[1, 2, 3]);
        let c = Capture::parse(&be).unwrap();
        assert_eq!(c.format, Format::PcapMicro);
        assert_eq!(c.packets[0].ts_ns, 7_000_005_000);
        assert_eq!(c.packets[0].data, &[1, 2, 3]);
    }

    #[test]
    fn tsresol_powers() {
        let i = Iface {
            linktype: 1,
            snaplen: 0,
            res: (false, 6),
            offset_s: 0,
        };
        assert_eq!(i.ns(5), 5_000);
        let i = Iface {
            res: (true, 10),
            ..i
        };
        assert_eq!(i.ns(1024), 1_000_000_000);
        let i = Iface {
            res: (false, 12),
            offset_s: 2,
            ..i
        };
        assert_eq!(i.ns(3_000), 2_000_000_003);
    }

    #[test]
    fn garbage_never_panics() {
        let mut inputs: Vec<Vec<u8>> = sample_files();
        inputs.push(testdata("wireshark-sample-ethercat.cap")[..4000].to_vec());
        inputs.push(testdata("replay-dc.pcapng")[..4000].to_vec());
        let mut seed = 0x1234_5678_9ABC_DEF0u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for base in &inputs {
            // Every truncation.
            for cut in 0..base.len().min(1500) {
                let _ = Capture::parse(&base[..cut]);
            }
            // Random byte flips.
            for _ in 0..2000 {
                let mut f = base.clone();
                for _ in 0..1 + rnd() % 8 {
                    let at = (rnd() as usize) % f.len();
                    f[at] = rnd() as u8;
                }
                if let Ok(c) = Capture::parse(&f) {
                    assert!(c.packets.len() <= f.len());
                }
            }
        }
        // Truncated mid-record: what came before survives, the problem is noted.
        let f = &sample_files()[1];
        let c = Capture::parse(&f[..f.len() - 10]).unwrap();
        assert_eq!(c.packets.len(), 4);
        assert!(c.problem.is_some());
        assert!(Capture::parse(b"hello world").is_err());
        assert!(Capture::parse(&[]).is_err());
    }
}
