//! Replays the saved corpora of the stateful and file fuzz targets (`fuzz/corpus/<target>` at
//! the repository root) through the same functions the cargo-fuzz targets call, so `cargo
//! test` on stable exercises them. `write_seeds` (ignored; run it with
//! `cargo test -p ecat --test fuzz_corpus -- --ignored write_seeds`) regenerates the seed
//! inputs that come from running the MainDevice against the simulator.

use ecat::clock::VirtualTime;
use ecat::link::capture;
use ecat::link::sim::SimLink;
use ecat::link::{Link, LinkCounters};
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::fuzzing::{encode, replay_corpus};
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

fn corpus(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

#[test]
fn receive_path_corpus() {
    // One runtime per input: a failure reproduces from its input alone.
    std::env::set_var("ECAT_FUZZ_FRESH", "1");
    replay_corpus(&corpus("receive_path"), &ecat::fuzzing::receive_path, false);
}

#[test]
fn sii_decode_corpus() {
    replay_corpus(&corpus("sii_decode"), &ecat::fuzzing::sii, true);
}

#[test]
fn netfile_corpus() {
    replay_corpus(&corpus("netfile"), &ecat::fuzzing::netfile, true);
}

#[test]
fn esi_corpus() {
    replay_corpus(&corpus("esi"), &ecat::fuzzing::esi, false);
}

#[test]
fn eni_corpus() {
    replay_corpus(&corpus("eni"), &ecat::fuzzing::eni, false);
}

#[test]
fn analyze_corpus() {
    replay_corpus(&corpus("analyze"), &ecat::fuzzing::capture, true);
}

/// A frame seen on the link: virtual time, sent (true) or received, bytes.
type Logged = (u64, bool, Vec<u8>);

/// Records every frame the MainDevice sends and receives, with the virtual time.
struct Recorder {
    inner: SimLink,
    log: Arc<Mutex<Vec<Logged>>>,
    vt: VirtualTime,
}

impl Link for Recorder {
    fn send(&mut self, frame: &[u8]) -> ecat::Result<()> {
        let t = self.vt.now();
        self.log.lock().unwrap().push((t, true, frame.to_vec()));
        self.inner.send(frame)
    }
    fn recv(&mut self, buf: &mut [u8], d: Option<Instant>) -> ecat::Result<Option<usize>> {
        let n = self.inner.recv(buf, d)?;
        if let Some(n) = n {
            let t = self.vt.now();
            self.log.lock().unwrap().push((t, false, buf[..n].to_vec()));
        }
        Ok(n)
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
    fn virtual_time(&self) -> Option<VirtualTime> {
        self.inner.virtual_time()
    }
}

/// The frames a MainDevice sends and receives to bring `preset` to OP and run `cycles` cycles
/// (with an SDO upload from position `sdo` when given).
fn record(preset: &str, cycles: u32, sdo: Option<usize>) -> Vec<Logged> {
    let vt = VirtualTime::new();
    let sim = SimLink::with_network(Network::preset(preset).unwrap(), "sim".into(), "".into())
        .on_virtual_time(vt.clone());
    let log = Arc::new(Mutex::new(Vec::new()));
    let link = Recorder {
        inner: sim,
        log: log.clone(),
        vt: vt.clone(),
    };
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    if let Some(p) = sdo {
        let _ = rt.sdo_client().upload(p, 0x1018, 1).unwrap();
    }
    for _ in 0..cycles {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
    }
    let v = log.lock().unwrap().clone();
    v
}

/// Records of a frame script: header byte and data.
type Script<'a> = Vec<(u8, &'a [u8])>;

/// Time step class (header bits 1–3) closest to `dt` ns.
fn step_bits(dt: u64) -> u8 {
    let steps = ecat_sim::fuzzing::TIME_STEPS_NS;
    let i = (0..steps.len())
        .min_by_key(|&i| steps[i].abs_diff(dt))
        .unwrap_or(0);
    (i as u8) << 1
}

/// Every datagram of the frame addresses the EEPROM interface (0x0500–0x050F): the SII reads
/// of a scan, left out of the simulator's seeds to keep them small.
fn eeprom_only(frame: &[u8]) -> bool {
    let Ok(f) = ecat_wire::frame::parse_ethernet(frame) else {
        return false;
    };
    f.datagrams()
        .all(|d| d.is_ok_and(|d| (0x0500..0x0510).contains(&d.ado())))
}

fn write(target: &str, name: &str, data: &[u8]) {
    let dir = corpus(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), data).unwrap();
}

#[test]
#[ignore = "regenerates the seed corpora; run by hand"]
fn write_seeds() {
    // Simulator: a MainDevice's whole session, frame by frame (first byte picks the preset).
    for (sel, preset) in [(0u8, "io"), (2, "servo6"), (3, "dc8")] {
        let frames = record(preset, 20, (preset != "dc8").then_some(1));
        let mut last = 0;
        let recs: Vec<(u8, &[u8])> = frames
            .iter()
            .filter(|(_, tx, f)| *tx && !eeprom_only(f))
            .map(|(t, _, f)| {
                let h = step_bits(t - last);
                last = *t;
                (h, f.as_slice())
            })
            .collect();
        let mut script = vec![sel];
        script.extend(encode(&recs));
        write("sim_frames", &format!("session_{preset}"), &script);
        // Only the first few frames, fixed up, with a power cycle in the middle.
        let mut short = vec![sel];
        let pc = [0x07u8 << 2 | 3];
        let mut recs: Vec<(u8, &[u8])> = recs.iter().take(40).copied().collect();
        recs.insert(20, (0xF0, &pc));
        short.extend(encode(&recs));
        write("sim_frames", &format!("start_{preset}_power_cycle"), &short);
    }
    // Receive path: real cyclic and acyclic frames in every role.
    let frames = record("io", 3, None);
    let cyclic = &frames.iter().rev().find(|f| f.1).unwrap().2;
    let flips: Vec<u8> = [20u16, 22, 30, 40]
        .iter()
        .flat_map(|&o| [o as u8, (o >> 8) as u8, 0x01])
        .collect();
    let sdo = [1u8, 0x18, 0x10, 1];
    let seeds: [(&str, Script); 6] = [
        ("inject_before", vec![(0x00, cyclic), (0x00, &[])]),
        (
            "inject_after",
            vec![(0x40, cyclic), (0x01 | 0x40, &cyclic[..40])],
        ),
        ("substitute", vec![(0x60, cyclic), (0x71, cyclic)]),
        ("flip", vec![(0x90, &flips), (0xC0, &flips), (0xF0, &flips)]),
        ("withhold", vec![(0xD0, &[]), (0xD6, &[]), (0xD0, &[])]),
        (
            "sdo_then_meddle",
            vec![(0xE0, &sdo), (0xC0, &flips), (0x00, cyclic)],
        ),
    ];
    for (name, recs) in seeds {
        write("receive_path", name, &encode(&recs));
    }
    // Analyze: the first and last frames of a session (scan, then cycles in OP), both formats.
    let log = record("io", 20, Some(1));
    let keep: Vec<&Logged> = log
        .iter()
        .take(16)
        .chain(log.iter().rev().take(48).rev())
        .collect();
    let (mut pcap, mut pcapng) = (Vec::new(), Vec::new());
    capture::write_pcap_header(&mut pcap);
    capture::write_pcapng_header(&mut pcapng, "sim:io");
    for (t, tx, f) in keep {
        let ts = 1_700_000_000_000_000_000 + t;
        capture::pcap_record(&mut pcap, ts, f, f.len());
        let dir = if *tx {
            capture::Direction::Tx
        } else {
            capture::Direction::Rx
        };
        capture::pcapng_epb(&mut pcapng, ts, f, f.len(), Some(dir));
    }
    write("analyze", "io.pcap", &pcap);
    write("analyze", "io.pcapng", &pcapng);
    // ENI: the automatic configuration of io and servo6 exported.
    for preset in ["io", "servo6"] {
        let sim = SimLink::with_network(Network::preset(preset).unwrap(), "sim".into(), "".into())
            .on_virtual_time(VirtualTime::new());
        let mut md = MainDevice::with_link(Box::new(sim));
        md.scan().unwrap();
        let configs = md.discover_configs().unwrap();
        let l = ecat::domain::layout(md.subdevices(), &configs, 1, 0).unwrap();
        let eni = ecat::eni::export::eni_from_layout(md.subdevices(), &configs, &[], &l, 1_000_000);
        write("eni", &format!("{preset}.xml"), eni.to_xml().as_bytes());
    }
}
