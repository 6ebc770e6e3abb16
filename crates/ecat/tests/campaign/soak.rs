//! The long soak on virtual time (issue 15): hours of 1 kHz cycles on a simulated network in
//! minutes of real time.
//!
//! Design: the MainDevice runs on the in-process simulator with a [`VirtualTime`] clock, so a
//! cycle costs only its CPU time. The wire loses `loss` of all frames (cyclic and acyclic).
//! Every `replug_every` of simulated time one SubDevice (the next position in turn) is
//! unplugged, and plugged in again `replug_after` later, every second time power-cycled.
//! Checked throughout:
//!
//! * no stop: every cycle's `tx_rx` succeeds and the cycle counter moves on;
//! * after each replug every SubDevice is back in OP, with the domain complete, within
//!   [`Soak::back_within`] cycles (the slowest is reported);
//! * flat memory: the live heap bytes (a counting global allocator, given as `live_bytes`)
//!   are sampled once everything is back after each replug; after the first period, no
//!   sample may exceed the first one by more than [`Soak::heap_slack`].

use ecat::clock::VirtualTime;
use ecat::domain::DomainState;
use ecat::link::sim::SimLink;
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_sim::{Faults, Network};
use ecat_wire::al::AlState;

const MS: u64 = 1_000_000;

/// One soak's settings.
#[derive(Debug, Clone, Copy)]
pub struct Soak {
    /// Network preset (`io`, `servo6`, ...).
    pub preset: &'static str,
    /// Simulated duration (ns).
    pub duration_ns: u64,
    /// Fraction of frames the wire loses.
    pub loss: f64,
    /// Simulated time between unplugs (ns).
    pub replug_every: u64,
    /// Simulated time a SubDevice stays unplugged (ns).
    pub replug_after: u64,
    /// Cycles after a replug within which all must be back in OP.
    pub back_within: u64,
    /// Live heap growth allowed over the first sample (bytes).
    pub heap_slack: i64,
}

impl Soak {
    /// The soak on `preset`: 1 % loss, an unplug every 10 simulated minutes, for
    /// `hours` simulated hours at 1 kHz.
    pub fn new(preset: &'static str, hours: f64) -> Soak {
        Soak {
            preset,
            duration_ns: (hours * 3600e9) as u64,
            loss: 0.01,
            replug_every: 600_000 * MS,
            replug_after: 2_000 * MS,
            back_within: 2_000,
            heap_slack: 64 * 1024,
        }
    }
}

/// What a soak measured.
#[derive(Debug, Clone, Default)]
pub struct SoakReport {
    pub cycles: u64,
    pub replugs: u64,
    /// Cycles with the domain complete (the rest: lost frames, SubDevices away).
    pub complete_cycles: u64,
    /// Slowest return to OP after a replug (cycles).
    pub slowest_back: u64,
    /// Live heap bytes at each sample (after each return to OP).
    pub heap: Vec<i64>,
    pub lost_events: u64,
    pub real_s: f64,
}

impl SoakReport {
    /// Largest growth of the live heap over the first sample (bytes).
    pub fn heap_growth(&self) -> i64 {
        let first = self.heap.first().copied().unwrap_or(0);
        self.heap.iter().map(|h| h - first).max().unwrap_or(0)
    }
}

fn net(rt: &mut Runtime) -> &mut Network {
    rt.link_mut().sim_network().expect("simulated link")
}

/// Run the soak; `Err` says which check failed, at which simulated time.
pub fn run(s: &Soak, live_bytes: fn() -> i64) -> Result<SoakReport, String> {
    let started = std::time::Instant::now();
    let vt = VirtualTime::new();
    vt.advance(1_000_000_000);
    let net0 = Network::preset(s.preset).map_err(|e| e.to_string())?;
    let link = SimLink::with_network(net0, format!("sim:{}", s.preset), String::new())
        .on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().map_err(|e| format!("scan: {e}"))?;
    let mut rt = md
        .activate(Activation::default())
        .map_err(|e| format!("activate: {e}"))?;
    rt.run_until_state(AlState::Op, MS, 5_000)
        .map_err(|e| format!("bring-up: {e}"))?;
    let n = net(&mut rt).esc_count();
    net(&mut rt).set_faults(Faults {
        seed: 15,
        drop_rate: s.loss,
        ..Default::default()
    });
    let mut r = SoakReport::default();
    let total = s.duration_ns / MS;
    let (every, after) = (s.replug_every / MS, s.replug_after / MS);
    // Cycle of the last replug, while waiting for everything to be back.
    let mut waiting: Option<u64> = None;
    let mut unplugged: Option<usize> = None;
    for c in 1..=total {
        let at = |why: String| format!("{} at {:.3} simulated s: {why}", s.preset, c as f64 / 1e3);
        if c % every == 0 {
            let p = (r.replugs as usize) % n;
            net(&mut rt).unplug(p).map_err(|e| at(e.to_string()))?;
            unplugged = Some(p);
        }
        if let Some(p) = unplugged.filter(|_| c % every == after) {
            let power = r.replugs % 2 == 1;
            net(&mut rt)
                .replug(p, power)
                .map_err(|e| at(e.to_string()))?;
            unplugged = None;
            r.replugs += 1;
            waiting = Some(c);
        }
        let before = rt.cycle_count();
        vt.advance(MS);
        rt.tx_rx(MS)
            .map_err(|e| at(format!("the cycle stopped: {e}")))?;
        if rt.cycle_count() != before + 1 {
            return Err(at("the cycle counter did not move on".into()));
        }
        while let Some(e) = rt.next_event() {
            if matches!(e, ecat::supervisor::Event::Lost { .. }) {
                r.lost_events += 1;
            }
        }
        let complete = rt.domain(0).state() == DomainState::Complete;
        r.complete_cycles += u64::from(complete);
        if let Some(w) = waiting {
            if complete && rt.supervisor().all_running() {
                r.slowest_back = r.slowest_back.max(c - w);
                waiting = None;
                r.heap.push(live_bytes());
                let growth = r.heap_growth();
                if growth > s.heap_slack {
                    return Err(at(format!(
                        "the live heap grew by {growth} bytes since the first replug (samples {:?})",
                        r.heap
                    )));
                }
            } else if c - w > s.back_within {
                let behind: Vec<String> = rt
                    .supervisor()
                    .states()
                    .filter(|st| !st.running)
                    .map(|st| st.to_string())
                    .collect();
                return Err(at(format!(
                    "not every SubDevice back in OP {} cycles after replug {}: {}",
                    s.back_within,
                    r.replugs,
                    behind.join("; ")
                )));
            }
        }
        r.cycles = c;
    }
    r.real_s = started.elapsed().as_secs_f64();
    Ok(r)
}
