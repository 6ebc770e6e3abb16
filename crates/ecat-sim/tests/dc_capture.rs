//! The DC part of a real bring-up, replayed: `testdata/captures/replay-dc.pcapng` holds
//! ethercrab bringing up an EK1100 + EL2828 + EL2889 with distributed clocks. Every request
//! of the capture is sent, at its captured time, to a network built from the same devices'
//! SII dumps; for every datagram on the DC registers (0x0900–0x09FF) the simulator's answer
//! must have the real answer's structure: the same working counter, and after the latch the
//! same ports holding receive times (a time close to port 0's) and an EPU time equal to the
//! port-0 time. Values themselves differ (other clocks), so they are not compared.

use ecat_sim::Network;
use ecat_wire::frame::parse_ethernet;
use ecat_wire::Command;
use std::path::Path;

/// Minimal pcapng reader: (timestamp ns, packet bytes) of every enhanced or simple packet
/// block. Little-endian sections only (the capture is one).
fn read_pcapng(bytes: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let u32at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    let mut out = Vec::new();
    let mut res_ns = 1000u64; // default resolution: µs
    let mut i = 0;
    while i + 12 <= bytes.len() {
        let kind = u32at(i);
        let len = u32at(i + 4) as usize;
        assert!(len >= 12 && i + len <= bytes.len(), "block at {i}");
        let body = &bytes[i + 8..i + len - 4];
        match kind {
            1 => {
                // Interface description: options after 8 bytes; if_tsresol is code 9.
                let mut o = 8;
                while o + 4 <= body.len() {
                    let code = u16::from_le_bytes([body[o], body[o + 1]]);
                    let olen = u16::from_le_bytes([body[o + 2], body[o + 3]]) as usize;
                    if code == 0 {
                        break;
                    }
                    if code == 9 && olen >= 1 {
                        let r = body[o + 4];
                        assert_eq!(r & 0x80, 0, "decimal resolutions only");
                        res_ns = 10u64.pow(9u32.saturating_sub(r as u32)).max(1);
                    }
                    o += 4 + olen.div_ceil(4) * 4;
                }
            }
            6 => {
                let ts = ((u32::from_le_bytes(body[4..8].try_into().unwrap()) as u64) << 32)
                    | u32::from_le_bytes(body[8..12].try_into().unwrap()) as u64;
                let cap = u32::from_le_bytes(body[12..16].try_into().unwrap()) as usize;
                out.push((ts * res_ns, body[20..20 + cap].to_vec()));
            }
            3 => {
                let orig = u32::from_le_bytes(body[0..4].try_into().unwrap()) as usize;
                out.push((0, body[4..4 + orig.min(body.len() - 4)].to_vec()));
            }
            _ => {}
        }
        i += len;
    }
    out
}

fn testdata() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// What one answered datagram shows.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    cmd: u8,
    adp: u16,
    ado: u16,
    wkc: u16,
    /// For 16-byte reads of 0x0900: ports holding a receive time.
    latched: Option<[bool; 4]>,
}

fn answers(frame: &[u8], latch_seen: bool) -> Vec<(Answer, Vec<u8>)> {
    let f = parse_ethernet(frame).expect("EtherCAT frame");
    f.datagrams()
        .map(|d| {
            let d = d.expect("datagram");
            let data = d.data().to_vec();
            let cmd = d.command().map_or(0, |c| c as u8);
            let read_0900 = matches!(d.command(), Some(Command::Fprd | Command::Aprd))
                && d.ado() == 0x0900
                && data.len() == 16
                && d.wkc() == 1
                && latch_seen;
            let latched = read_0900.then(|| {
                let t = |p: usize| u32::from_le_bytes(data[4 * p..4 * p + 4].try_into().unwrap());
                let t0 = t(0);
                [0, 1, 2, 3]
                    .map(|p| t(p) != 0 && (t(p).wrapping_sub(t0) as i32).unsigned_abs() < 100_000)
            });
            (
                Answer {
                    cmd,
                    adp: d.adp(),
                    ado: d.ado(),
                    wkc: d.wkc(),
                    latched,
                },
                data,
            )
        })
        .collect()
}

#[test]
fn dc_bring_up_answers_like_the_real_devices() {
    let dir = testdata();
    let capture = std::fs::read(dir.join("captures/replay-dc.pcapng")).unwrap();
    let packets = read_pcapng(&capture);
    assert!(packets.len() > 1000);
    let toml = "[[subdevice]]\nsii = \"ek1100-eeprom-dump.bin\"\n\
                [[subdevice]]\nsii = \"el2828.bin\"\nchip = \"ET1200\"\n\
                [[subdevice]]\nsii = \"el2889.bin\"\n";
    let mut net = Network::from_toml_str(toml, "capture.toml", &dir.join("sii")).unwrap();
    let t_first = packets[0].0;
    let mut compared = 0;
    let mut latch_seen = false;
    let mut epu_checked = 0;
    let mut latched_patterns = Vec::new();
    let mut epu: [Option<u32>; 3] = [None; 3];
    let mut real_epu: [Option<u32>; 3] = [None; 3];
    let mut k = 0;
    while k + 1 < packets.len() {
        let (ts, req) = &packets[k];
        // Requests come from 10:10:10:10:10:10, answers from 12:10:10:10:10:10.
        if req.len() < 14 || req[6] & 0x02 != 0 || req[12..14] != [0x88, 0xA4] {
            k += 1;
            continue;
        }
        let real = &packets[k + 1].1;
        assert_eq!(real[6] & 0x02, 0x02, "packet {} answers {}", k + 2, k + 1);
        let mut sim = req.clone();
        let now = 1_000_000_000 + (ts - t_first);
        assert!(net.process_frame(&mut sim, now), "frame {} returned", k + 1);
        let is_latch = answers(req, false)
            .iter()
            .any(|(a, _)| a.ado == 0x0900 && a.cmd == Command::Bwr as u8);
        let ra = answers(real, latch_seen);
        let sa = answers(&sim, latch_seen);
        assert_eq!(ra.len(), sa.len());
        for ((r, rd), (s, sd)) in ra.iter().zip(&sa) {
            let logical = matches!(r.cmd, 0x0A..=0x0C);
            if logical || !(0x0900..0x0A00).contains(&r.ado) {
                continue;
            }
            compared += 1;
            assert_eq!(
                (r.cmd, r.adp, r.ado, r.wkc, r.latched),
                (s.cmd, s.adp, s.ado, s.wkc, s.latched),
                "frame {}: real answer vs simulator",
                k + 2
            );
            if let Some(l) = r.latched {
                latched_patterns.push(l);
                let who = (r.adp.wrapping_sub(0x1000)) as usize;
                let p0 = u32::from_le_bytes(sd[0..4].try_into().unwrap());
                if let Some(Some(e)) = epu.get(who) {
                    assert_eq!(*e, p0, "EPU time = port-0 time of SubDevice {who}");
                    epu_checked += 1;
                }
                // The real devices' EPU time equals their port-0 time too.
                if let Some(Some(e)) = real_epu.get(who) {
                    assert_eq!(*e, u32::from_le_bytes(rd[0..4].try_into().unwrap()));
                }
            }
            // EPU time = port-0 time (port 0 open), in the real answer and ours.
            if r.cmd == Command::Fprd as u8 && r.ado == 0x0918 && r.wkc == 1 && latch_seen {
                let who = (r.adp.wrapping_sub(0x1000)) as usize;
                assert_ne!(u64::from_le_bytes(sd[..8].try_into().unwrap()), 0);
                if who < 3 {
                    epu[who] = Some(u32::from_le_bytes(sd[0..4].try_into().unwrap()));
                    real_epu[who] = Some(u32::from_le_bytes(rd[0..4].try_into().unwrap()));
                }
            }
        }
        latch_seen |= is_latch;
        k += 2;
    }
    assert!(compared > 200, "compared {compared} DC datagrams");
    assert!(epu_checked >= 2);
    // The real pattern: EK1100 ports 0 and 1, EL2828 ports 0 and 1, EL2889 port 0 only.
    assert_eq!(
        latched_patterns,
        vec![
            [true, true, false, false],
            [true, true, false, false],
            [true, false, false, false]
        ]
    );
}
