//! Options that tap the link of a command: `--capture FILE` records every frame to a pcap
//! (pcapng if the name ends in `.pcapng`) file Wireshark reads, and `--faults SPEC` injects
//! seeded faults. The capture sits above the faults, so it records what the MainDevice sees:
//! `ecat analyze` on it counts the same losses as the MainDevice does. `--backup IFACE` makes
//! the link redundant (cable redundancy: the ring's far end on a second port, see
//! `ecat::link::redundant`); [`RingWatch`] reports where the ring opens and when it closes.

use ecat::link::capture::CaptureLink;
use ecat::link::faults::{FaultLink, FaultStats};
use ecat::link::{self, FaultSpec, Link};
use ecat::runtime::Runtime;
use ecat::MainDevice;
use std::sync::Arc;

/// `--capture` and `--faults`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TapArgs {
    /// Record every frame sent and received to FILE (pcap with ns timestamps; pcapng with
    /// direction flags if FILE ends in .pcapng); analyse it with `ecat analyze FILE`
    #[arg(long, value_name = "FILE")]
    pub capture: Option<std::path::PathBuf>,
    /// Inject faults, e.g. rx-drop=0.01,seed=7 (keys: [tx-|rx-]drop, corrupt, dup, delay as
    /// probabilities; delay-time=2ms; seed=N)
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// Cable redundancy: the interface cabled to the far end of the ring (`sim` for a
    /// simulated ring's backup port, e.g. -i sim:ring8 --backup sim)
    #[arg(long, value_name = "IFACE")]
    pub backup: Option<String>,
    #[arg(skip)]
    stats: Option<Arc<FaultStats>>,
}

impl TapArgs {
    /// Open the link named `spec` with the faults and the capture asked for.
    pub fn open_link(&mut self, spec: &str) -> Result<Box<dyn Link>, Box<dyn std::error::Error>> {
        let mut l = match &self.backup {
            Some(b) => link::open_redundant(spec, b)?,
            None => link::open(spec)?,
        };
        if let Some(f) = &self.faults {
            let fl = FaultLink::new(l, FaultSpec::parse(f)?);
            self.stats = Some(fl.stats());
            l = Box::new(fl);
        }
        if let Some(path) = &self.capture {
            l = Box::new(CaptureLink::new(l, path)?);
        }
        Ok(l)
    }

    /// Open the link and make a MainDevice on it.
    pub fn open(&mut self, spec: &str) -> Result<MainDevice, Box<dyn std::error::Error>> {
        Ok(MainDevice::with_link(self.open_link(spec)?))
    }

    /// Print what the wire carried over the whole run (bring-up, measurement and stop), the
    /// faults injected and where the capture went; nothing when neither option was given.
    pub fn report(&self, rt: &Runtime) {
        if self.capture.is_none() && self.faults.is_none() {
            return;
        }
        let (cy, _, _) = rt.counters();
        println!(
            "whole run incl. bring-up and stop: {} cycles; frames sent {} received {} lost {} late {} duplicated {} corrupted {}",
            rt.cycle_count(),
            cy.frames_sent,
            cy.frames_received,
            cy.frames_lost,
            cy.frames_late,
            cy.frames_duplicated,
            cy.frames_corrupted
        );
        if let Some(s) = &self.stats {
            println!("{}", s.summary());
        }
        if let Some(p) = &self.capture {
            println!(
                "capture: {} (written when the link closes; `ecat analyze {}`)",
                p.display(),
                p.display()
            );
        }
    }
}

/// Reports changes of the ring state of a redundant link.
#[derive(Debug, Default)]
pub struct RingWatch {
    changes: u64,
}

impl RingWatch {
    /// A line if the ring opened or closed since the last call (`None` without change or
    /// on a single port).
    pub fn line(&mut self, rt: &Runtime) -> Option<String> {
        let st = rt.link().redundancy()?;
        if st.changes == self.changes {
            return None;
        }
        self.changes = st.changes;
        let count = rt.supervisor().states().count();
        Some(match (st.open, st.break_between(count)) {
            (true, Some((a, b))) => {
                format!("ring: open between SubDevices {a} and {b}; both halves answer, process data stays complete")
            }
            (true, None) => "ring: open (where not yet known)".to_string(),
            (false, _) => "ring: closed again; frames pass in one direction".to_string(),
        })
    }
}
