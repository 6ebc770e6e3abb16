//! Randomized fault campaigns on virtual time (issue 16): one seed, one schedule.
//!
//! A seed picks a network (`io`, `servo6`, `dc8` with distributed clocks), a fault phase of
//! 400–1200 cycles with wire faults in the simulator (frames lost or corrupted at a random
//! hop, corrupted frames sometimes delivered, duplicates), receive faults on the link
//! ([`FaultLink`]: dropped, corrupted, duplicated, delayed by 1–3 cycles) and up to four
//! events (unplug, replug, power-cycle of random SubDevices), then a quiet phase: no faults,
//! everything plugged in. Invariants, checked every cycle or at the end:
//!
//! 1. no panic, and every cycle runs (`tx_rx` never fails, the cycle counter moves on);
//! 2. every fault is counted: each cyclic frame the wire dropped shows in the MainDevice's
//!    lost frames; each dropped acyclic frame in the engine's timeouts; duplicates and
//!    delayed frames in duplicated, late or unmatched frames — and no loss goes unexplained
//!    (lost cyclic frames ≤ the faults that can cause one);
//! 3. outputs written in a cycle whose frame came back complete (and uncorrupted) are the
//!    outputs every SubDevice in OP applies;
//! 4. within [`RECOVERY_BOUND`] quiet cycles every SubDevice is in OP and the domain complete;
//! 5. with distributed clocks, the sync monitor stays under [`DC_BOUND_NS`] once recovered,
//!    also after SubDevices lost power (their clocks are set up again when they come back;
//!    [`Campaign::lenient_dc`] skips the check for such schedules).
//!
//! [`Campaign::planted_bug`] never probes lost SubDevices (`Supervisor::disable_recovery`, a
//! test-only switch): recovery from an unplug is disabled, and the campaign must notice.

use ecat::clock::VirtualTime;
use ecat::config::Direction;
use ecat::cyclic::CyclicFrames;
use ecat::dc::setup::DcOptions;
use ecat::dc::{DcMode, DcRuntime};
use ecat::domain::DomainState;
use ecat::link::faults::{FaultLink, FaultSpec, FaultStats, Rng};
use ecat::link::sim::SimLink;
use ecat::link::{Link, LinkCounters};
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_sim::{Faults, Network, SimCounters};
use ecat_wire::al::AlState;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

const MS: u64 = 1_000_000;
/// Quiet cycles within which every SubDevice must be back in OP.
pub const RECOVERY_BOUND: u64 = 4_000;
/// Largest sync monitor value (ns) allowed once recovered.
pub const DC_BOUND_NS: u32 = 1_000;
/// Cycles the sync monitor is watched after recovery.
const DC_WATCH: u64 = 300;

/// What happened to the frames that reached the simulated wire, by kind.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    pub cyclic_sent: u64,
    /// Cyclic frames the wire did not return (lost, corrupted, no SubDevice).
    pub cyclic_dropped: u64,
    pub cyclic_corrupt_delivered: u64,
    pub acyclic_dropped: u64,
    pub duplicated: u64,
}

/// Sits on the simulated link and tallies each frame's fate from the network's counters.
struct Tallying {
    inner: SimLink,
    tally: Arc<Mutex<Tally>>,
}

fn dropped(c: &SimCounters) -> u64 {
    c.dropped_lost + c.dropped_corrupted + c.dropped_no_subdevice
}

impl Link for Tallying {
    fn send(&mut self, frame: &[u8]) -> ecat::Result<()> {
        let before = self.inner.network().counters().clone();
        self.inner.send(frame)?;
        let after = self.inner.network().counters();
        let mut t = self.tally.lock().unwrap();
        let lost = dropped(after) - dropped(&before);
        t.duplicated += after.duplicated - before.duplicated;
        if CyclicFrames::is_cyclic(frame) {
            t.cyclic_sent += 1;
            t.cyclic_dropped += lost;
            t.cyclic_corrupt_delivered += after.corrupted_delivered - before.corrupted_delivered;
        } else {
            t.acyclic_dropped += lost;
        }
        Ok(())
    }
    fn recv(&mut self, buf: &mut [u8], d: Option<Instant>) -> ecat::Result<Option<usize>> {
        self.inner.recv(buf, d)
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

/// A scheduled event of the fault phase.
#[derive(Debug, Clone, Copy)]
enum Act {
    Unplug(usize),
    Replug(usize, bool),
    PowerCycle(usize),
}

/// One seed's schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    pub preset: &'static str,
    pub fault_cycles: u64,
    pub wire: Faults,
    pub link: FaultSpec,
    events: Vec<(u64, Act)>,
}

impl Schedule {
    /// The schedule of `seed` (on `preset` if given).
    pub fn of(seed: u64, preset: Option<&'static str>) -> Schedule {
        let mut r = Rng::new(seed);
        let preset = preset.unwrap_or(["io", "servo6", "dc8"][r.below(3)]);
        let esc_count = match preset {
            "io" => 5,
            "servo6" => 6,
            _ => 8,
        };
        let fault_cycles = 400 + r.below(800) as u64;
        let mut rate = |max: f64| {
            if r.chance(0.3) {
                0.0
            } else {
                max * (r.below(1000) as f64 / 1000.0)
            }
        };
        let wire = Faults {
            seed,
            drop_rate: rate(0.05),
            corrupt_rate: rate(0.03),
            deliver_corrupted: false,
            delay_ns: 0,
            jitter_ns: 0,
            duplicate_rate: rate(0.02),
            ..Default::default()
        };
        let (rx_drop, rx_corrupt, rx_dup, rx_delay) =
            (rate(0.02), rate(0.01), rate(0.02), rate(0.02));
        let wire = Faults {
            deliver_corrupted: r.chance(0.3),
            ..wire
        };
        let mut link = FaultSpec {
            seed: seed ^ 0x5EED,
            delay_ns: (1 + r.below(3) as u64) * MS,
            ..FaultSpec::default()
        };
        link.rx.drop = rx_drop;
        link.rx.corrupt = rx_corrupt;
        link.rx.duplicate = rx_dup;
        link.rx.delay = rx_delay;
        let mut events = Vec::new();
        for _ in 0..r.below(5) {
            let at = r.below(fault_cycles as usize * 2 / 3) as u64;
            let pos = r.below(esc_count);
            match r.below(3) {
                0 => {
                    events.push((at, Act::Unplug(pos)));
                    let back = at + 1 + r.below(300) as u64;
                    if back < fault_cycles {
                        events.push((back, Act::Replug(pos, r.chance(0.5))));
                    }
                }
                1 => events.push((at, Act::PowerCycle(pos))),
                _ => events.push((at, Act::Replug(pos, r.chance(0.5)))),
            }
        }
        events.sort_by_key(|e| e.0);
        Schedule {
            preset,
            fault_cycles,
            wire,
            link,
            events,
        }
    }
}

/// Figures of one seed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outcome {
    pub cycles: u64,
    pub recovery_cycles: u64,
    pub faults_injected: u64,
    pub lost_counted: u64,
    pub output_checks: u64,
    pub dc_worst_ns: u32,
}

impl Schedule {
    /// True if some SubDevice loses power (power-cycled, replugged power-cycled, or unplugged
    /// and so replugged power-cycled when the faults stop).
    pub fn power_loss(&self) -> bool {
        self.events.iter().any(|e| {
            matches!(
                e.1,
                Act::PowerCycle(_) | Act::Replug(_, true) | Act::Unplug(_)
            )
        })
    }
}

/// Campaign settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Campaign {
    /// Run every seed on this network instead of one the seed picks.
    pub preset: Option<&'static str>,
    /// Disable recovery of lost SubDevices (the planted bug the campaign must catch).
    pub planted_bug: bool,
    /// Skip the DC bound for schedules in which a SubDevice lost power (checked by default).
    pub lenient_dc: bool,
}

struct Rig {
    rt: Runtime,
    vt: VirtualTime,
    tally: Arc<Mutex<Tally>>,
    stats: Arc<FaultStats>,
    dc: bool,
}

impl Campaign {
    /// The command that reruns one seed.
    pub fn repro(&self, seed: u64) -> String {
        let mut s =
            format!("cargo run --release -p ecat --example fault_campaign -- --seed {seed}");
        if let Some(p) = self.preset {
            s += &format!(" --net {p}");
        }
        if self.planted_bug {
            s += " --planted-bug";
        }
        if self.lenient_dc {
            s += " --lenient-dc";
        }
        s
    }

    fn bring_up(&self, s: &Schedule) -> Rig {
        let vt = VirtualTime::new();
        vt.advance(1_000_000_000);
        let net = Network::preset(s.preset).expect("preset builds");
        let sim = SimLink::with_network(net, format!("sim:{}", s.preset), String::new())
            .on_virtual_time(vt.clone());
        let tally = Arc::new(Mutex::new(Tally::default()));
        let tallying = Tallying {
            inner: sim,
            tally: tally.clone(),
        };
        let faults = FaultLink::new(Box::new(tallying), s.link);
        let stats = faults.stats();
        stats.paused.store(true, Ordering::Relaxed);
        let mut md = MainDevice::with_link(Box::new(faults));
        md.scan().expect("scan");
        let mut act = Activation::default();
        let dc = s.preset == "dc8";
        if dc {
            let setup = md
                .configure_dc(DcOptions {
                    static_datagrams: 15_000,
                    per_frame: 1,
                    ..Default::default()
                })
                .expect("configure DC")
                .expect("dc8 has DC");
            act.dc = Some(DcRuntime {
                setup,
                mode: DcMode::ReferenceFollowsMaster,
                cycle_ns: MS,
                shift_ns: 0,
            });
        }
        let mut rt = md.activate(act).expect("activate");
        if self.planted_bug {
            rt.disable_recovery();
        }
        rt.run_until_state(AlState::Op, MS, 5_000)
            .expect("reaches OP");
        while rt.next_event().is_some() {}
        Rig {
            rt,
            vt,
            tally,
            stats,
            dc,
        }
    }

    /// Run `seed`; `Err` names the broken invariant and the reproduction command.
    pub fn run(&self, seed: u64) -> Result<Outcome, String> {
        let s = Schedule::of(seed, self.preset);
        if std::env::var_os("ECAT_CAMPAIGN_VERBOSE").is_some() {
            println!("seed {seed}: {s:?}");
        }
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run_schedule(&s)));
        let fail = |why: String| {
            Err(format!(
                "seed {seed} ({}, {} fault cycles): {why}\n  reproduce: {}",
                s.preset,
                s.fault_cycles,
                self.repro(seed)
            ))
        };
        match run {
            Ok(Ok(o)) => Ok(o),
            Ok(Err(why)) => fail(why),
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                fail(format!("panic: {msg}"))
            }
        }
    }

    fn run_schedule(&self, s: &Schedule) -> Result<Outcome, String> {
        let Rig {
            mut rt,
            vt,
            tally,
            stats,
            dc,
        } = self.bring_up(s);
        let rt = &mut rt;
        let mut o = Outcome::default();
        let (cyc0, eng0, _) = rt.counters();
        let tally0 = *tally.lock().unwrap();
        net(rt).set_faults(s.wire);
        stats.paused.store(false, Ordering::Relaxed);
        let mut events = s.events.iter().peekable();
        let outputs: Vec<(usize, std::ops::Range<usize>)> = (0..net(rt).esc_count())
            .filter_map(|p| Some((p, rt.domain(0).region(p as u16, Direction::Output)?)))
            .filter(|(_, r)| !r.is_empty())
            .collect();
        let mut quiet_since = None;
        let total = s.fault_cycles + RECOVERY_BOUND + DC_WATCH;
        for c in 0..total {
            if c == s.fault_cycles {
                net(rt).set_faults(Faults::default());
                stats.paused.store(true, Ordering::Relaxed);
                let n = net(rt);
                for p in 0..n.esc_count() {
                    if !n.is_plugged(p) {
                        n.replug(p, true).map_err(|e| e.to_string())?;
                    }
                }
            }
            while let Some(&&(at, act)) = events.peek() {
                if at > c {
                    break;
                }
                events.next();
                let n = net(rt);
                let _ = match act {
                    Act::Unplug(p) => n.unplug(p),
                    Act::Replug(p, pc) if !n.is_plugged(p) => n.replug(p, pc),
                    Act::Replug(..) => Ok(()),
                    Act::PowerCycle(p) => n.power_cycle(p),
                };
            }
            // Application: fresh outputs every cycle.
            let img = rt.domain_mut(0).image_mut();
            for (p, r) in &outputs {
                for (k, b) in img[r.clone()].iter_mut().enumerate() {
                    *b = (c as u8).wrapping_add(*p as u8 * 31).wrapping_add(k as u8);
                }
            }
            let before = (
                *tally.lock().unwrap(),
                stats.corrupted[1].load(Ordering::Relaxed),
            );
            let cycle_before = rt.cycle_count();
            vt.advance(MS);
            rt.tx_rx(MS)
                .map_err(|e| format!("cycle {c}: tx_rx failed: {e}"))?;
            if rt.cycle_count() != cycle_before + 1 {
                return Err(format!("cycle {c}: the cycle counter did not move on"));
            }
            while rt.next_event().is_some() {}
            let t = *tally.lock().unwrap();
            let corrupted = t.cyclic_corrupt_delivered != before.0.cyclic_corrupt_delivered
                || stats.corrupted[1].load(Ordering::Relaxed) != before.1;
            // 3: outputs of a complete, uncorrupted cycle are applied.
            if rt.domain(0).state() == DomainState::Complete && !corrupted {
                let img = rt.domain(0).image().to_vec();
                let n = net(rt);
                for (p, r) in &outputs {
                    let in_op = n
                        .subdevice(*p)
                        .is_some_and(|e| e.al_status().state_bits() == 8);
                    if !in_op || !n.is_plugged(*p) {
                        continue;
                    }
                    let applied = n.outputs(*p).unwrap_or(&[]);
                    let written = &img[r.clone()];
                    if applied.get(..written.len()) != Some(written) {
                        return Err(format!(
                            "cycle {c}: SubDevice {p} applies {applied:02X?}, the complete frame carried {written:02X?}"
                        ));
                    }
                    o.output_checks += 1;
                }
            }
            // 4: back in OP within the bound once quiet.
            if c >= s.fault_cycles && quiet_since.is_none() {
                let all =
                    rt.supervisor().all_running() && rt.domain(0).state() == DomainState::Complete;
                if all {
                    quiet_since = Some(c);
                    o.recovery_cycles = c - s.fault_cycles;
                } else if c - s.fault_cycles >= RECOVERY_BOUND {
                    let states: Vec<String> = rt
                        .supervisor()
                        .states()
                        .filter(|st| !st.running)
                        .map(|st| st.to_string())
                        .collect();
                    return Err(format!(
                        "not back in OP {RECOVERY_BOUND} cycles after the faults stopped: {}",
                        states.join("; ")
                    ));
                }
            }
            // 5: DC within bounds once recovered.
            if let Some(q) = quiet_since {
                if dc && c > q + 50 && (!self.lenient_dc || !s.power_loss()) {
                    let m = rt.dc_sync_monitor_ns().unwrap_or(u32::MAX);
                    o.dc_worst_ns = o.dc_worst_ns.max(m);
                    if m > DC_BOUND_NS {
                        return Err(format!(
                            "cycle {c}: DC sync monitor {m} ns > {DC_BOUND_NS} ns, {} cycles after recovery",
                            c - q
                        ));
                    }
                }
                if c >= q + DC_WATCH {
                    o.cycles = c + 1;
                    break;
                }
            }
        }
        // 2: every fault counted, no loss unexplained.
        rt.send().map_err(|e| e.to_string())?;
        let (cyc, eng, _) = rt.counters();
        let t = *tally.lock().unwrap();
        let g = |a: &[std::sync::atomic::AtomicU64; 2]| a[1].load(Ordering::Relaxed);
        let st = &stats;
        let (rx_drop, rx_corrupt, rx_dup, rx_delay) = (
            g(&st.dropped),
            g(&st.corrupted),
            g(&st.duplicated),
            g(&st.delayed),
        );
        let lost = cyc.frames_lost - cyc0.frames_lost;
        let wire_cyclic = t.cyclic_dropped - tally0.cyclic_dropped;
        let wire_acyclic = t.acyclic_dropped - tally0.acyclic_dropped;
        let timeouts = eng.timeouts - eng0.timeouts;
        let late = cyc.frames_late - cyc0.frames_late;
        let dups = cyc.frames_duplicated - cyc0.frames_duplicated;
        let unmatched = eng.unmatched - eng0.unmatched;
        let corrupt_seen =
            cyc.frames_corrupted - cyc0.frames_corrupted + eng.malformed - eng0.malformed;
        o.faults_injected = wire_cyclic
            + wire_acyclic
            + (t.duplicated - tally0.duplicated)
            + (t.cyclic_corrupt_delivered - tally0.cyclic_corrupt_delivered)
            + rx_drop
            + rx_corrupt
            + rx_dup
            + rx_delay;
        o.lost_counted = lost;
        let figures = format!(
            "lost {lost} (wire dropped cyclic {wire_cyclic}, acyclic {wire_acyclic}; link rx dropped {rx_drop}, corrupted {rx_corrupt}, delayed {rx_delay}, duplicated {rx_dup}); timeouts {timeouts}, late {late}, duplicated {dups}, unmatched {unmatched}, corrupted {corrupt_seen}"
        );
        if lost < wire_cyclic {
            return Err(format!(
                "a cyclic frame the wire dropped was not counted lost: {figures}"
            ));
        }
        if timeouts < wire_acyclic.min(1) {
            return Err(format!(
                "acyclic frames were dropped and no timeout counted: {figures}"
            ));
        }
        let wire_dup = t.duplicated - tally0.duplicated;
        if dups + unmatched + late < (wire_dup + rx_dup).min(1) {
            return Err(format!(
                "duplicates arrived and none was counted: {figures}"
            ));
        }
        let causes = wire_cyclic
            + (t.cyclic_corrupt_delivered - tally0.cyclic_corrupt_delivered)
            + rx_drop
            + rx_corrupt
            + rx_delay;
        if lost > causes {
            return Err(format!(
                "{} cyclic frames lost without a cause: {figures}",
                lost - causes
            ));
        }
        Ok(o)
    }
}

fn net(rt: &mut Runtime) -> &mut Network {
    rt.link_mut().sim_network().expect("simulated link")
}
