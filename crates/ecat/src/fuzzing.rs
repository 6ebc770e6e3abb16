//! Fuzzing entry points for the MainDevice (the workspace-external `fuzz/` crate's targets
//! call them; `tests/fuzz_corpus.rs` replays the saved corpus through them on stable).
//!
//! - [`receive_path`]: a [`Runtime`] in OP on the simulated `io` network, over a
//!   [`FuzzLink`] that mixes fuzzer-chosen frames with the real answers: injected before or
//!   after them, substituted for one, a real answer with bytes flipped, answers withheld. The
//!   input is a frame script ([`ecat_sim::fuzzing::Script`]); each record is one cycle.
//!   Whatever arrives, nothing may panic, no call may fail, and once the fuzzer stops
//!   meddling every SubDevice must be back in OP with a complete domain within
//!   [`RECOVERY_CYCLES`]. The runtime in OP is built once per process and reused (bringing one
//!   up costs milliseconds); set `ECAT_FUZZ_FRESH=1` to build one per input, so a failure
//!   reproduces from its input alone.
//! - [`sii`]: SII images into the SubDevice decoder.
//! - [`capture`]: capture files into `ecat analyze`.

use crate::clock::VirtualTime;
use crate::domain::DomainState;
use crate::error::Result;
use crate::link::sim::SimLink;
use crate::link::{Link, LinkCounters};
use crate::runtime::{Activation, Runtime};
use crate::{MainDevice, SubDevice};
use ecat_sim::fuzzing::{Record, Script};
use ecat_sim::Network;
use ecat_wire::al::AlState;
use ecat_wire::frame::ETH_MAX_LEN;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Clean cycles after an input within which every SubDevice must be back in OP.
pub const RECOVERY_CYCLES: u64 = 3_000;
const MS: u64 = 1_000_000;

/// What the fuzz link does to the real answers of the next cycle.
#[derive(Debug, Clone, Default)]
struct Meddle {
    /// Frames returned before any real answer.
    before: VecDeque<Vec<u8>>,
    /// Frames returned once the real answers are exhausted.
    after: VecDeque<Vec<u8>>,
    /// Replace real answer number `.0` (0-based) by `.1`.
    substitute: Option<(usize, Vec<u8>)>,
    /// Flip bytes of real answer number `.0`: (offset, xor mask) pairs.
    flip: Option<(usize, Vec<(usize, u8)>)>,
    /// Keep every real answer of the cycle back.
    withhold: bool,
    /// Real answers seen since the last [`FuzzLink::meddle`].
    seen: usize,
}

/// A link that wraps the simulated link and meddles with what the MainDevice receives, as
/// its [`Harness`] says through a shared handle.
pub struct FuzzLink {
    inner: SimLink,
    meddle: Arc<Mutex<Meddle>>,
}

impl Link for FuzzLink {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        self.inner.send(frame)
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        let put = |buf: &mut [u8], f: &[u8]| {
            let n = f.len().min(buf.len());
            buf[..n].copy_from_slice(&f[..n]);
            Some(n)
        };
        let mut m = self.meddle.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = m.before.pop_front() {
            return Ok(put(buf, &f));
        }
        loop {
            let Some(n) = self.inner.recv(buf, deadline)? else {
                return Ok(m.after.pop_front().and_then(|f| put(buf, &f)));
            };
            let k = m.seen;
            m.seen += 1;
            if m.withhold {
                continue;
            }
            if let Some((at, f)) = &m.substitute {
                if *at == k {
                    return Ok(put(buf, f));
                }
            }
            if let Some((at, flips)) = &m.flip {
                if *at == k {
                    for &(off, mask) in flips {
                        if let Some(b) = buf[..n].get_mut(off) {
                            *b ^= mask;
                        }
                    }
                }
            }
            return Ok(Some(n));
        }
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

    fn sim_network(&mut self) -> Option<&mut Network> {
        Some(self.inner.network_mut())
    }
}

/// A runtime in OP on `io` over a [`FuzzLink`], on virtual time.
pub struct Harness {
    rt: Runtime,
    vt: VirtualTime,
    meddle: Arc<Mutex<Meddle>>,
    subdevices: usize,
}

impl Harness {
    /// Scan `io`, activate, and run until every SubDevice is in OP.
    pub fn bring_up() -> Harness {
        let vt = VirtualTime::new();
        let net = Network::preset("io").expect("preset io");
        let sim =
            SimLink::with_network(net, "sim:io".into(), "io".into()).on_virtual_time(vt.clone());
        let meddle = Arc::new(Mutex::new(Meddle::default()));
        let link = FuzzLink {
            inner: sim,
            meddle: meddle.clone(),
        };
        let mut md = MainDevice::with_link(Box::new(link));
        let subdevices = md.scan().expect("scan io").len();
        let mut rt = md.activate(Activation::default()).expect("activate io");
        rt.run_until_state(AlState::Op, MS, 5_000)
            .expect("io reaches OP");
        Harness {
            rt,
            vt,
            meddle,
            subdevices,
        }
    }

    /// One cycle perturbed as `r` says (see the module documentation).
    fn cycle(&mut self, r: &Record<'_>, frame: &[u8]) {
        let subdevices = self.subdevices;
        let mut guard = self.meddle.lock().unwrap_or_else(|e| e.into_inner());
        let m = &mut *guard;
        m.seen = 0;
        let data = r.data;
        let flips = || {
            data.chunks_exact(3)
                .map(|c| (u16::from_le_bytes([c[0], c[1]]) as usize, c[2]))
                .collect::<Vec<_>>()
        };
        let mut sdo = None;
        match r.op() {
            0..=3 => m.before.push_back(frame.to_vec()),
            4 | 5 => m.after.push_back(frame.to_vec()),
            6..=8 => m.substitute = Some(((r.op() - 6) as usize, frame.to_vec())),
            9..=11 => m.flip = Some((0, flips())),
            12 => m.flip = Some((1, flips())),
            13 => m.withhold = true,
            14 => {
                if let [p, a, b, s, ..] = *data {
                    sdo = Some((p as usize % subdevices, u16::from_le_bytes([a, b]), s));
                }
            }
            _ => m.flip = Some((data.len() % 3, flips())),
        }
        drop(guard);
        if let Some((pos, index, sub)) = sdo {
            // A refusal (no mailbox) is an answer too; the transfer itself runs in the cycle.
            let _ = self.rt.sdo_client().upload(pos, index, sub);
        }
        self.vt.advance(r.advance_ns().max(MS / 10));
        self.rt
            .tx_rx(MS)
            .expect("a cycle on the simulated link never fails");
        while self.rt.next_event().is_some() {}
    }

    /// Clean cycles until every SubDevice is in OP and the domain complete; panics with a
    /// message after [`RECOVERY_CYCLES`].
    pub fn recover(&mut self) {
        *self.meddle.lock().unwrap_or_else(|e| e.into_inner()) = Meddle::default();
        for _ in 0..RECOVERY_CYCLES {
            self.vt.advance(MS);
            self.rt.tx_rx(MS).expect("a clean cycle never fails");
            while self.rt.next_event().is_some() {}
            if self.rt.supervisor().all_running()
                && self.rt.domain(0).state() == DomainState::Complete
            {
                return;
            }
        }
        let states: Vec<String> = self
            .rt
            .supervisor()
            .states()
            .map(|s| format!("{s:?}"))
            .collect();
        panic!(
            "not back in OP with a complete domain {RECOVERY_CYCLES} cycles after the fuzzed \
             frames stopped: domain {:?}, states {states:?}",
            self.rt.domain(0).state()
        );
    }

    /// Run one input: every record one perturbed cycle, then recovery.
    pub fn run(&mut self, data: &[u8]) {
        let mut buf = [0u8; ETH_MAX_LEN];
        for r in Script::new(data).take(ecat_sim::fuzzing::MAX_RECORDS) {
            let n = r.frame_into(&mut buf);
            self.cycle(&r, &buf[..n]);
        }
        self.recover();
    }
}

static HARNESS: Mutex<Option<Harness>> = Mutex::new(None);

/// Fuzz target `receive_path` (see the module documentation).
pub fn receive_path(data: &[u8]) {
    if std::env::var_os("ECAT_FUZZ_FRESH").is_some() {
        Harness::bring_up().run(data);
        return;
    }
    let mut h = HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    h.get_or_insert_with(Harness::bring_up).run(data);
}

/// Fuzz target `sii_decode`: an SII image into [`SubDevice::apply_sii`].
pub fn sii(data: &[u8]) {
    let mut s = SubDevice::default();
    if s.apply_sii(data).is_ok() {
        let _ = format!("{s:?}");
    }
}

/// Fuzz target `analyze`: a capture file (pcap or pcapng) into `ecat analyze`.
pub fn capture(data: &[u8]) {
    if let Ok(report) = crate::analyze::analyze_bytes(data) {
        let _ = report.text();
    }
}

/// Fuzz target `esi`: an ESI file into the reader, and every device it describes into an SII
/// image that the master's decoder must read back.
pub fn esi(data: &[u8]) {
    let text = ecat_config::esi::decode(data);
    let Ok(file) = ecat_config::EsiFile::parse_str(&text, "fuzz.xml") else {
        return;
    };
    let _ = file.type_list();
    for dev in &file.devices {
        if let Ok(image) = ecat_config::build_sii(dev) {
            let mut s = SubDevice::default();
            s.apply_sii(&image)
                .expect("an SII image built from an ESI device decodes");
        }
    }
}

/// Fuzz target `eni`: an ENI file into the reader, what the MainDevice derives from each
/// slave (configuration, startup SDOs, identity, FMMUs), and the simulator's network builder.
pub fn eni(data: &[u8]) {
    use crate::eni::derive;
    let text = ecat_config::esi::decode(data);
    let Ok(eni) = ecat_config::Eni::parse_str(&text, "fuzz.xml") else {
        return;
    };
    let _ = eni.cyclic_cmds().count();
    for (p, s) in eni.slaves.iter().enumerate() {
        let _ = derive::config_of(s, p);
        let _ = derive::startup_sdos(s);
        derive::apply_to_subdevice(s, &mut SubDevice::default());
        let _ = derive::fmmus_from_init_cmds(s);
    }
    if let Ok(mut net) = ecat_sim::eni::network_from_eni(&eni) {
        let mut frame = [0u8; 60];
        let _ = net.process(&mut frame, 0);
    }
}

/// Fuzz target `netfile`: a network file (TOML) into the simulator's reader. Files that name
/// other files (`sii = "..."`, ESI) are resolved against a directory that does not exist.
pub fn netfile(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Network::from_toml_str(text, "fuzz.toml", std::path::Path::new("/nonexistent"));
}
