//! The simulator's deferred PDI mode (`Network::set_deferred_pdi`, which `ecat sim` runs)
//! answers every frame as the plain mode does. A MainDevice scans, talks CoE, sets up DC and
//! cycles in OP on virtual time through a link that hands every frame to two copies of the
//! same network, one in each mode, and settles the deferred one whenever the MainDevice
//! waits for its frames (as `ecat sim` settles when no frame is waiting). Every returned
//! frame must be equal byte for byte apart from the datagrams' IRQ fields (a frame that only
//! passes an ESC before its firmware reacted carries its older event request), both must
//! return or drop the same frames, and at the end the devices' outputs and inputs must be the
//! same. The test also checks that reactions really were deferred, so that it compares
//! something.
//!
//! A third copy runs on two threads (`ecat_sim::pipeline`, `ecat sim --threads 2`): the
//! second half of the line on a worker that sends the frames back through a channel, while
//! the first half already processes the next frame. Its frames must equal the plain copy's
//! in the same way, and when it stops (the worker's ESCs back in the network) its devices
//! must be where the plain copy's are.

use ecat::clock::VirtualTime;
use ecat::dc::setup::DcOptions;
use ecat::dc::{DcMode, DcRuntime};
use ecat::error::Result;
use ecat::link::{Link, LinkCounters};
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::pipeline::Pipeline;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const MS: u64 = 1_000_000;

/// What the twin link saw.
#[derive(Debug, Default)]
struct Tally {
    compared: u64,
    mismatches: u64,
    first_mismatch: Option<String>,
    /// Reactions the deferred copy ran when settling (deferred past the frame's return).
    settled: u64,
    /// Times the devices' outputs, inputs or AL status differed after settling.
    state_mismatches: u64,
    first_state_mismatch: Option<String>,
    /// Frames the pipelined copy answered and that were compared.
    pipe_compared: u64,
    pipe_mismatches: u64,
    first_pipe_mismatch: Option<String>,
}

/// The copy on two threads: the pipeline, the frames its worker sent back, and the plain
/// copy's answers (IRQ masked) still to be compared with them, in order.
struct Piped {
    pipe: Pipeline,
    back: Receiver<Vec<u8>>,
    expect: VecDeque<(u64, Vec<u8>)>,
}

/// Both copies of the network behind one link.
struct Twin {
    plain: Network,
    deferred: Network,
    piped: Arc<Mutex<Option<Piped>>>,
    vt: VirtualTime,
    queue: VecDeque<Vec<u8>>,
    counters: LinkCounters,
    tally: Arc<Mutex<Tally>>,
}

/// Zero the IRQ field of every datagram (Ethernet header 14 bytes, EtherCAT header 2, then
/// datagrams: 10-byte header with the IRQ in bytes 8–9, data, 2-byte WKC).
fn mask_irq(frame: &mut [u8]) {
    let mut at = 16;
    while at + 12 <= frame.len() {
        let lf = u16::from_le_bytes([frame[at + 6], frame[at + 7]]);
        frame[at + 8] = 0;
        frame[at + 9] = 0;
        if lf & 0x8000 == 0 {
            return;
        }
        at += 12 + (lf & 0x07FF) as usize;
    }
}

impl Link for Twin {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        self.counters.tx_frames += 1;
        let now = self.vt.now();
        let (mut a, mut b) = (frame.to_vec(), frame.to_vec());
        let fa = self.plain.process(&mut a, now);
        let fb = self.deferred.process(&mut b, now);
        let mut t = self.tally.lock().unwrap();
        t.compared += 1;
        let back = a.clone();
        mask_irq(&mut a);
        mask_irq(&mut b);
        if fa != fb || (fa.returned() && a != b) {
            t.mismatches += 1;
            if t.first_mismatch.is_none() {
                let at = a.iter().zip(&b).position(|(x, y)| x != y);
                t.first_mismatch = Some(format!(
                    "frame {} at {now} ns: plain {fa:?}, deferred {fb:?}; first differing byte {at:?}",
                    t.compared
                ));
            }
        }
        if let Some(p) = self.piped.lock().unwrap().as_mut() {
            let fc = p.pipe.process(frame, now);
            if fc.returned() != fa.returned() {
                t.pipe_mismatches += 1;
                let no = t.compared;
                t.first_pipe_mismatch.get_or_insert_with(|| {
                    format!("frame {no} at {now} ns: plain {fa:?}, pipelined {fc:?}")
                });
            } else if fa.returned() {
                p.expect.push_back((t.compared, a.clone()));
            }
        }
        if fa.returned() {
            self.queue.push_back(back);
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8], _: Option<Instant>) -> Result<Option<usize>> {
        // The MainDevice waits for its frames: the simulator is idle.
        let n = self.deferred.settle() as u64;
        let mut t = self.tally.lock().unwrap();
        t.settled += n;
        if let Some(p) = self.piped.lock().unwrap().as_mut() {
            // The worker's frames, in order, against the plain copy's.
            while let Some((no, want)) = p.expect.pop_front() {
                let got = p.back.recv_timeout(Duration::from_secs(10));
                let Ok(mut got) = got else {
                    t.pipe_mismatches += 1;
                    t.first_pipe_mismatch
                        .get_or_insert_with(|| format!("frame {no}: the worker sent nothing"));
                    break;
                };
                mask_irq(&mut got);
                t.pipe_compared += 1;
                if got != want {
                    t.pipe_mismatches += 1;
                    let at = got.iter().zip(&want).position(|(x, y)| x != y);
                    t.first_pipe_mismatch.get_or_insert_with(|| {
                        format!("frame {no}: first byte differing from the plain copy's: {at:?}")
                    });
                }
            }
            p.pipe.settle();
        }
        // Settled, the devices are where the plain copy's are.
        for k in 0..self.plain.esc_count() {
            let (Some(a), Some(b)) = (self.plain.subdevice(k), self.deferred.subdevice(k)) else {
                continue;
            };
            let same = a.outputs() == b.outputs()
                && a.inputs() == b.inputs()
                && a.al_status() == b.al_status();
            if !same {
                t.state_mismatches += 1;
                if t.first_state_mismatch.is_none() {
                    t.first_state_mismatch = Some(format!(
                        "SubDevice {k} at {} ns: outputs {:02x?} / {:02x?}, inputs {:02x?} / {:02x?}, AL status {:?} / {:?}",
                        self.vt.now(),
                        a.outputs(),
                        b.outputs(),
                        a.inputs(),
                        b.inputs(),
                        a.al_status(),
                        b.al_status()
                    ));
                }
            }
        }
        drop(t);
        let Some(f) = self.queue.pop_front() else {
            return Ok(None);
        };
        self.counters.rx_frames += 1;
        let n = f.len().min(buf.len());
        buf[..n].copy_from_slice(&f[..n]);
        Ok(Some(n))
    }

    fn mac(&self) -> [u8; 6] {
        [0x00, 0x0E, 0xCA, 0x00, 0x00, 0x01]
    }

    fn name(&self) -> &str {
        "twin"
    }

    fn counters(&self) -> LinkCounters {
        self.counters
    }

    fn virtual_time(&self) -> Option<VirtualTime> {
        Some(self.vt.clone())
    }

    fn sim_network(&mut self) -> Option<&mut Network> {
        Some(&mut self.plain)
    }
}

/// Run `net` through scan, `mailbox` work in PREOP, DC setup when it has DC, OP and
/// `cycles` cycles with counting outputs; returns what the twin link saw.
fn run(net: &str, cycles: u64, mailbox: impl FnOnce(&mut MainDevice)) -> Tally {
    run_split(net, None, cycles, mailbox)
}

/// [`run`] with the pipelined copy split at bus position `split` (`None`: half-way).
fn run_split(
    net: &str,
    split: Option<usize>,
    cycles: u64,
    mailbox: impl FnOnce(&mut MainDevice),
) -> Tally {
    let vt = VirtualTime::new();
    vt.advance(1_000_000_000);
    let mut deferred = Network::open(net).unwrap();
    deferred.set_deferred_pdi(true);
    let tally = Arc::new(Mutex::new(Tally::default()));
    let (tx, back) = channel();
    let send: ecat_sim::pipeline::SendFn = Box::new(move |f: &[u8]| {
        tx.send(f.to_vec())
            .map_err(|_| std::io::Error::other("test ended"))
    });
    let pipe = match Pipeline::start(Network::open(net).unwrap(), split, send) {
        Ok(p) => p,
        Err(e) => panic!("{net} cannot run pipelined: {}", e.reason),
    };
    let piped = Arc::new(Mutex::new(Some(Piped {
        pipe,
        back,
        expect: VecDeque::new(),
    })));
    let twin = Twin {
        plain: Network::open(net).unwrap(),
        deferred,
        piped: piped.clone(),
        vt: vt.clone(),
        queue: VecDeque::new(),
        counters: LinkCounters::default(),
        tally: tally.clone(),
    };
    let mut md = MainDevice::with_link(Box::new(twin));
    md.scan().unwrap();
    mailbox(&mut md);
    let configs = md.discover_configs().unwrap();
    let dc = md
        .configure_dc(DcOptions {
            static_datagrams: 1000,
            per_frame: 1,
            ..Default::default()
        })
        .unwrap()
        .map(|setup| DcRuntime {
            setup,
            mode: DcMode::MasterFollowsReference,
            cycle_ns: MS,
            shift_ns: 0,
        });
    let mut rt = md
        .activate(Activation {
            configs: Some(configs),
            dc,
            ..Default::default()
        })
        .unwrap();
    rt.run_until_state(AlState::Op, MS, 5_000).unwrap();
    for k in 0..cycles {
        if !rt.domains().is_empty() {
            for (i, b) in rt.domain_mut(0).outputs_mut().iter_mut().enumerate() {
                *b = (k as u8).wrapping_add(i as u8);
            }
        }
        let corr = rt.dc_correction_ns();
        vt.advance((MS as i64 + corr) as u64);
        rt.tx_rx(MS).unwrap();
    }
    assert!(
        rt.domains()
            .iter()
            .all(|d| d.state() == ecat::domain::DomainState::Complete),
        "{net}: the process data is complete in OP"
    );
    // Stop the pipelined copy: the worker's ESCs go back; its devices must be where the
    // plain copy's are.
    let stopped = piped.lock().unwrap().take().unwrap();
    let (whole, report) = stopped.pipe.stop().unwrap();
    assert_eq!(report.send_errors, 0, "{net}: the worker could not send");
    let mut t = std::mem::take(&mut *tally.lock().unwrap());
    let plain = rt.link_mut().sim_network().unwrap();
    for k in 0..plain.esc_count() {
        let (a, b) = (plain.subdevice(k).unwrap(), whole.subdevice(k).unwrap());
        if a.outputs() != b.outputs() || a.inputs() != b.inputs() || a.al_status() != b.al_status()
        {
            t.pipe_mismatches += 1;
            t.first_pipe_mismatch
                .get_or_insert_with(|| format!("SubDevice {k} differs after stopping"));
        }
    }
    t
}

fn check(net: &str, t: &Tally) {
    println!(
        "{net}: {} frames compared, {} reactions ran after their frame was back, {} frame and {} device-state mismatches",
        t.compared, t.settled, t.mismatches, t.state_mismatches
    );
    assert_eq!(
        t.mismatches,
        0,
        "{net}: the deferred mode answered differently: {}",
        t.first_mismatch.as_deref().unwrap_or("")
    );
    assert_eq!(
        t.state_mismatches,
        0,
        "{net}: the devices differ after settling: {}",
        t.first_state_mismatch.as_deref().unwrap_or("")
    );
    assert!(t.compared > 1000, "{net}: too few frames to compare");
    assert!(
        t.settled > 100,
        "{net}: hardly any PDI reaction was deferred, so nothing was compared"
    );
    println!(
        "{net}: pipelined: {} frames compared, {} mismatches",
        t.pipe_compared, t.pipe_mismatches
    );
    assert_eq!(
        t.pipe_mismatches,
        0,
        "{net}: the pipelined copy answered differently: {}",
        t.first_pipe_mismatch.as_deref().unwrap_or("")
    );
    assert!(
        t.pipe_compared > 1000,
        "{net}: too few pipelined frames compared"
    );
}

#[test]
fn a_generated_line_with_dc_answers_the_same_deferred() {
    let t = run("io20", 2_000, |_| {});
    check("io20", &t);
}

#[test]
fn servo_drives_answer_the_same_deferred() {
    let t = run("servo6", 1_000, |md| {
        assert_eq!(md.sdo_upload(0, 0x6060, 0, false).unwrap().len(), 1);
        md.sdo_download(1, 0x6060, 0, false, &[9]).unwrap();
    });
    check("servo6", &t);
}

#[test]
fn mailbox_protocols_answer_the_same_deferred() {
    let t = run("mbx", 1_000, |md| {
        let name = md.sdo_upload(0, 0x1008, 0, false).unwrap();
        assert!(!name.is_empty());
    });
    check("mbx", &t);
}

#[test]
fn the_dc_network_answers_the_same_deferred() {
    let t = run("dc8", 2_000, |_| {});
    check("dc8", &t);
}

#[test]
fn a_pipeline_split_after_the_first_subdevice_answers_the_same() {
    let t = run_split("io20", Some(1), 1_000, |_| {});
    check("io20 split at 1", &t);
}
