//! Running a bus from an ENI file (ETG.2100, read by [`ecat_config::eni`]).
//!
//! [`MainDevice::configure_from_eni`] after a scan:
//! 1. checks the bus against the ENI slave by slave (identity by position; every mismatch in
//!    one error, [`check`]);
//! 2. makes the ENI authoritative for each SubDevice's SMs, mailbox and SYNC0 activation, and
//!    derives its process data configuration (SMs → PDOs → entries), its startup SDOs (the
//!    CoE init commands of IP and PS) and its FMMUs ([`derive`]);
//! 3. lays the process image out at the ENI's offsets: one domain whose datagrams are the
//!    ENI's logical cyclic commands with their addresses, lengths and expected working
//!    counters ([`derive::layout`]);
//! 4. hands the ENI's init commands that our own bring-up does not perform (register and
//!    CoE, of every transition) to the supervisor as transition commands, with the ENI's
//!    validate / timeout / retry semantics ([`init_cmds`]).
//!
//! Our bring-up stays in charge of the state machine: the ENI's commands for station
//! addresses, SII identity, AL control/status, SMs, FMMUs and DC registers are not replayed
//! literally but through the supervisor from the same ENI data, so a SubDevice that is lost
//! and comes back gets its ENI SMs, FMMUs and CoE init commands again (the supervisor replays
//! configs, FMMUs and startup SDOs on every reconfiguration). The remaining init commands
//! (e.g. watchdog settings, vendor registers, CoE writes of SO) run in the supervisor at the
//! transitions the ENI lists them for (IP, PS, SO, OS, SP, OP, xI, BI, II), at the first
//! bring-up and at every reconfiguration; a failing one is reported (naming the SubDevice,
//! transition, command and the value read vs expected) and the SubDevice is tried again.
//!
//! Cyclic frames: the ENI's own, frame by frame and datagram by datagram ([`derive`]): its
//! LRD/LWR/LRW commands with their addresses, lengths and expected WKCs carry the process
//! image, its BRD of AL status is our AL-status probe, its ARMW/FRMW of 0x0910 is replaced by
//! our DC datagrams when DC is on, and its NOP, mailbox-state LRD and any other datagram are
//! sent as given with their expected WKCs checked
//! ([`crate::cyclic::CyclicCounters::fixed_wkc_mismatches`]).

pub mod check;
pub mod derive;
pub mod export;
pub mod image;
pub mod init_cmds;

pub use check::check_bus;
pub use image::{EniImage, EniVar, Value};

use crate::config::SubDeviceConfig;
use crate::dc::DcRuntime;
use crate::domain::Layout;
use crate::error::Result;
use crate::mailbox::sdo::SdoOp;
use crate::maindevice::MainDevice;
use crate::runtime::{Activation, Runtime};
use crate::supervisor::TransitionCmd;
use ecat_config::eni::{Eni, Transition};

/// Everything derived from an ENI for one bus, ready to activate.
#[derive(Debug, Clone)]
pub struct EniSetup {
    /// Process data configuration per SubDevice.
    pub configs: Vec<SubDeviceConfig>,
    /// Startup SDOs per SubDevice (the ENI's CoE init commands of IP and PS; those of other
    /// transitions are in `transition_cmds`).
    pub startup_sdos: Vec<Vec<SdoOp>>,
    /// Domain, datagrams and FMMUs.
    pub layout: Layout,
    /// The variables by name.
    pub image: EniImage,
    /// Cycle time of the ENI's first cyclic task (ns), if given.
    pub cycle_ns: Option<u64>,
    /// SYNC0 cycle (ns) of the first DC slave with one, if any.
    pub sync0_ns: Option<u64>,
    /// What was left out or differs (one sentence each).
    pub notes: Vec<String>,
    /// Per SubDevice: the init commands the supervisor runs at its transitions (one per
    /// command and transition), every time it configures the SubDevice.
    pub transition_cmds: Vec<Vec<TransitionCmd>>,
}

impl EniSetup {
    /// How many transition commands there are per transition code (`SO` → 3), in the
    /// order of [`Transition::ALL`].
    pub fn cmd_counts(&self) -> Vec<(&'static str, usize)> {
        let mut out: Vec<(&'static str, usize)> = Vec::new();
        for t in Transition::ALL {
            let (a, b) = t.states();
            let n = self
                .transition_cmds
                .iter()
                .flatten()
                .filter(|c| c.from as u8 == a && c.to as u8 == b)
                .count();
            if n > 0 {
                out.push((t.code(), n));
            }
        }
        out
    }
}

impl MainDevice {
    /// Configure the scanned bus from `eni` (see the module documentation). The bus must
    /// match the ENI; a failing init command names the SubDevice, transition, command and
    /// the value read vs expected.
    pub fn configure_from_eni(&mut self, eni: &Eni) -> Result<EniSetup> {
        check_bus(eni, self.subdevices())?;
        let mut notes: Vec<String> = eni.notes().iter().map(|n| format!("ENI: {n}")).collect();
        let mut configs = Vec::new();
        let mut startup_sdos = Vec::new();
        let mut transition_cmds = Vec::new();
        for (p, s) in eni.slaves.iter().enumerate() {
            derive::apply_to_subdevice(s, &mut self.subdevices_mut()[p]);
            configs.push(derive::config_of(s, p)?);
            startup_sdos.push(derive::startup_sdos(s));
            let (cmds, note) = init_cmds::transition_cmds(s);
            transition_cmds.push(cmds);
            notes.extend(note);
        }
        if !eni.master.init_cmds.is_empty() {
            notes.push(format!(
                "the ENI's {} master init commands (resets of FMMUs, SMs, DC, addresses) are covered by ecat's scan and not sent",
                eni.master.init_cmds.len()
            ));
        }
        let eni_ref = eni
            .slaves
            .iter()
            .position(|s| s.dc.is_some_and(|d| d.reference_clock));
        let our_ref = self.subdevices().iter().position(|s| s.dc_supported());
        if let (Some(e), Some(o)) = (eni_ref, our_ref) {
            if e != o {
                notes.push(format!(
                    "the ENI's reference clock is slave {e}; ecat's DC setup takes the first SubDevice with a clock (position {o})"
                ));
            }
        }
        let layout = derive::layout(eni, self.subdevices(), &configs, &mut notes)?;
        let image = EniImage::new(eni, layout.domains[0].outputs_len);
        Ok(EniSetup {
            configs,
            startup_sdos,
            layout,
            image,
            cycle_ns: eni
                .cyclic
                .first()
                .and_then(|c| c.cycle_time_us)
                .map(|us| us as u64 * 1000),
            sync0_ns: eni
                .slaves
                .iter()
                .filter_map(|s| s.dc.and_then(|d| d.cycle_time0))
                .find(|&c| c > 0)
                .map(u64::from),
            notes,
            transition_cmds,
        })
    }

    /// Activate with an [`EniSetup`] (and DC, if set up); returns the runtime and the
    /// variables by name.
    pub fn activate_eni(
        self,
        setup: EniSetup,
        dc: Option<DcRuntime>,
    ) -> Result<(Runtime, EniImage)> {
        let cmds = setup.transition_cmds;
        let mut rt = self.activate_with_layout(
            Activation {
                configs: Some(setup.configs),
                startup_sdos: setup.startup_sdos,
                // The ENI's init commands carry the PDO assignment its tool decided.
                pdo_writes: crate::pdo_setup::PdoWrites::Off,
                dc,
                ..Default::default()
            },
            setup.layout,
        )?;
        for (p, c) in cmds.into_iter().enumerate() {
            rt.supervisor_mut().set_transition_cmds(p, c);
        }
        Ok((rt, setup.image))
    }
}
