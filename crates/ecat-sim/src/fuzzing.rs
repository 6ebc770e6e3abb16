//! Fuzzing entry points for the simulator (the workspace-external `fuzz/` crate's targets call
//! them, and `tests/fuzz_corpus.rs` replays the saved corpus through them on stable).
//!
//! **Input format: a frame script.** A sequence of records `HEADER LEN_LO LEN_HI BYTES…`
//! ([`Script`]); a record that runs past the end takes what is left. The header byte says:
//! - bit 0: *fix up* the bytes into a well-formed EtherCAT frame ([`fix_up`]): EtherType
//!   0x88A4, EtherCAT header type 1 with the right length, every datagram length clamped to
//!   what is left and the "more datagrams" bits set to match. Without it the bytes go to the
//!   wire as they are (exercising the whole-frame checks).
//! - bits 1–3: how far time moves before the frame ([`TIME_STEPS_NS`]).
//! - bits 4–7: the target's own use (the simulator target: 15 = a control action on the
//!   network named by the first data byte: unplug, replug, replug power-cycled, power-cycle).
//!
//! Fix-up lets the fuzzer spend its time on datagram contents (addresses, registers, mailbox
//! and AL control writes) instead of rediscovering length fields. One network lives across
//! all frames of an input, so multi-frame paths (EEPROM reads, AL transitions, mailbox
//! exchanges) are reachable. Each input gets a copy of a preset built once ([`preset_copy`]).

use crate::network::Network;
use ecat_wire::frame::{ECAT_HEADER_LEN, ETHERTYPE_ETHERCAT, ETH_HEADER_LEN, ETH_MAX_LEN};

/// Time advance per value of header bits 1–3 (ns).
pub const TIME_STEPS_NS: [u64; 8] = [
    0,
    10_000,
    100_000,
    1_000_000,
    1_000_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Records of one input that are run (longer inputs are cut: the fuzzer's time is better
/// spent on many short sessions than on a few long ones).
pub const MAX_RECORDS: usize = 256;

/// Datagram header plus working counter.
const DG_OVERHEAD: usize = 12;

/// One record of a frame script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// The header byte.
    pub header: u8,
    /// The bytes.
    pub data: &'a [u8],
}

impl Record<'_> {
    /// Bit 0: fix the bytes up into a well-formed frame.
    pub fn fix_up(&self) -> bool {
        self.header & 1 != 0
    }
    /// Bits 1–3 as nanoseconds.
    pub fn advance_ns(&self) -> u64 {
        TIME_STEPS_NS[((self.header >> 1) & 7) as usize]
    }
    /// Bits 4–7.
    pub fn op(&self) -> u8 {
        self.header >> 4
    }
    /// Copy the bytes into `buf` (at most a full Ethernet frame, at least 60 bytes, zero
    /// padded), fixed up if asked; the frame's length.
    pub fn frame_into(&self, buf: &mut [u8; ETH_MAX_LEN]) -> usize {
        let n = self.data.len().min(ETH_MAX_LEN);
        buf[..n].copy_from_slice(&self.data[..n]);
        if !self.fix_up() {
            return n;
        }
        let n = n.max(60);
        buf[self.data.len().min(n)..n].fill(0);
        fix_up(&mut buf[..n]);
        n
    }
}

/// The records of a frame script (see the module documentation).
#[derive(Debug, Clone)]
pub struct Script<'a> {
    rest: &'a [u8],
}

impl<'a> Script<'a> {
    /// Read `data` as a script.
    pub fn new(data: &'a [u8]) -> Script<'a> {
        Script { rest: data }
    }
}

impl<'a> Iterator for Script<'a> {
    type Item = Record<'a>;
    fn next(&mut self) -> Option<Record<'a>> {
        let (&header, rest) = self.rest.split_first()?;
        let len = match rest {
            [lo, hi, ..] => u16::from_le_bytes([*lo, *hi]) as usize,
            _ => 0,
        };
        let rest = rest.get(2..).unwrap_or(&[]);
        let (data, rest) = rest.split_at(len.min(rest.len()));
        self.rest = rest;
        Some(Record { header, data })
    }
}

/// Encode records as a script (for seed corpora).
pub fn encode(records: &[(u8, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (h, d) in records {
        out.push(*h);
        out.extend_from_slice(&(d.len() as u16).to_le_bytes());
        out.extend_from_slice(d);
    }
    out
}

/// Make `frame` (at least 16 bytes) a well-formed EtherCAT frame without touching the
/// datagrams' contents: EtherType, EtherCAT header, datagram lengths and "more" bits. No VLAN
/// tag (bytes 12–13 become 0x88A4).
pub fn fix_up(frame: &mut [u8]) {
    let first = ETH_HEADER_LEN + ECAT_HEADER_LEN;
    if frame.len() < first {
        return;
    }
    frame[12..14].copy_from_slice(&ETHERTYPE_ETHERCAT.to_be_bytes());
    let end = frame.len().min(first + 0x7FF);
    let mut at = first;
    while at + DG_OVERHEAD <= end {
        let w = u16::from_le_bytes([frame[at + 6], frame[at + 7]]);
        let len = ((w & 0x07FF) as usize).min(end - at - DG_OVERHEAD);
        let next = at + DG_OVERHEAD + len;
        let more = next + DG_OVERHEAD <= end && w & 0x8000 != 0;
        let w = (w & 0x4000) | len as u16 | if more { 0x8000 } else { 0 };
        frame[at + 6..at + 8].copy_from_slice(&w.to_le_bytes());
        at = next;
        if !more {
            break;
        }
    }
    let body = (at - first).max(DG_OVERHEAD.min(end - first));
    let h = body as u16 | 0x1000;
    frame[ETH_HEADER_LEN..first].copy_from_slice(&h.to_le_bytes());
}

/// The preset a script's first byte picks: `io` twice as often as `servo6` and `dc8`.
pub fn preset_for(selector: u8) -> &'static str {
    match selector % 4 {
        0 | 1 => "io",
        2 => "servo6",
        _ => "dc8",
    }
}

/// A fresh copy of preset `name`: built once per thread, then cloned (a clone costs a
/// fraction of a build: no TOML, SII images or object dictionaries to make).
pub fn preset_copy(name: &'static str) -> Network {
    thread_local! {
        static BUILT: std::cell::RefCell<Vec<(&'static str, Network)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    BUILT.with(|b| {
        let mut b = b.borrow_mut();
        if let Some((_, n)) = b.iter().find(|(n, _)| *n == name) {
            return n.clone();
        }
        let net = Network::preset(name).expect("presets build");
        b.push((name, net.clone()));
        net
    })
}

/// Fuzz target `sim_frames`: the first byte picks a preset network, the rest is a frame
/// script processed by that one network, frame after frame, on advancing time. Nothing may
/// panic; returned frames keep their length; the counters add up.
pub fn frames(data: &[u8]) {
    let Some((&sel, script)) = data.split_first() else {
        return;
    };
    let mut net = preset_copy(preset_for(sel));
    let mut buf = [0u8; ETH_MAX_LEN];
    let mut now = 0u64;
    for r in Script::new(script).take(MAX_RECORDS) {
        now += r.advance_ns();
        if r.op() == 15 {
            if let Some(&b) = r.data.first() {
                let pos = (b >> 2) as usize % net.esc_count().max(1);
                let _ = match b & 3 {
                    0 => net.unplug(pos),
                    1 => net.replug(pos, false),
                    2 => net.replug(pos, true),
                    _ => net.power_cycle(pos),
                };
            }
            continue;
        }
        let n = r.frame_into(&mut buf);
        let before = buf[..n].len();
        let _ = net.process(&mut buf[..n], now);
        assert_eq!(before, n);
    }
    let c = net.counters();
    let dropped = c.dropped_not_ethercat
        + c.dropped_wrong_type
        + c.dropped_malformed
        + c.dropped_no_subdevice
        + c.dropped_lost
        + c.dropped_corrupted;
    assert_eq!(
        c.returned + dropped,
        c.frames,
        "every frame returned or dropped"
    );
}

/// Replay every file in a saved corpus directory through `f` (the stable stand-in for the
/// fuzzer: `cargo test` runs this). With `mutate`, each input is also fed truncated at up to 64
/// lengths and with up to 64 single bytes inverted, spread over the input: a cheap
/// deterministic taste of the fuzzer's mutations. Returns the number of files; panics if
/// there are none.
pub fn replay_corpus(dir: &std::path::Path, f: &dyn Fn(&[u8]), mutate: bool) -> usize {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("fuzz corpus {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no corpus files in {}", dir.display());
    for path in &paths {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        f(&data);
        if !mutate || data.is_empty() {
            continue;
        }
        let step = data.len().div_ceil(64);
        for len in (0..data.len()).step_by(step) {
            f(&data[..len]);
        }
        let mut m = data.clone();
        for i in (0..m.len()).step_by(step) {
            m[i] ^= 0xFF;
            f(&m);
            m[i] ^= 0xFF;
        }
    }
    paths.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat_wire::frame::parse_ethernet;

    #[test]
    fn fix_up_makes_a_parsable_chain() {
        let mut f = [0xFFu8; 80];
        fix_up(&mut f);
        let e = parse_ethernet(&f).expect("parses");
        assert!(e.datagrams().all(|d| d.is_ok()));
        assert!(e.datagrams().count() >= 1);
        let mut g = [0u8; 60];
        g[16 + 6] = 4; // one datagram of 4 bytes
        fix_up(&mut g);
        let e = parse_ethernet(&g).unwrap();
        assert_eq!(e.datagrams().count(), 1);
        assert_eq!(e.datagrams_len(), 16);
    }

    #[test]
    fn script_reads_records_and_a_short_tail() {
        let s = encode(&[(1, &[1, 2, 3]), (0x30, &[])]);
        let r: Vec<_> = Script::new(&s).collect();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].data, &[1, 2, 3]);
        assert_eq!(r[1].op(), 3);
        let r: Vec<_> = Script::new(&[7, 9]).collect();
        assert_eq!(
            r,
            vec![Record {
                header: 7,
                data: &[]
            }]
        );
    }
}
