//! The MainDevice façade: open a link, scan, change states, access registers and the SII.
//! This is what the `ecat` command and applications call; it holds the [`Bus`] and the list
//! of [`SubDevice`]s found by the last scan.

use crate::bus::{check_wkc, Bus, Pdu};
use crate::config::SubDeviceConfig;
use crate::eeprom;
use crate::error::{Error, Result};
use crate::esm;
use crate::link::{self, Link};
use crate::mailbox::{exchange::MailboxArea, sdo::SdoOp};
use crate::pdo_coe;
use crate::pdo_setup::PdoWrites;
use crate::runtime::{Activation, Runtime};
use crate::scan;
use crate::subdevice::SubDevice;
use ecat_wire::al::AlState;
use ecat_wire::Command;
use std::time::Duration;

mod mailbox_ops;

/// An EtherCAT MainDevice on one link.
#[derive(Debug)]
pub struct MainDevice {
    bus: Bus,
    subdevices: Vec<SubDevice>,
    /// Last mailbox counter used per SubDevice (1..7, 0 = none yet).
    mailbox_counters: Vec<u8>,
    notes: Vec<String>,
    /// The PDO configurations the last [`MainDevice::discover_configs`] found (what each
    /// SubDevice has now), for IgH-style PDO writes at activation.
    discovered: Option<Vec<SubDeviceConfig>>,
}

impl MainDevice {
    /// Open the link named by `spec` (`eth0`, `raw:eth0`, `sim:io`, `sim:net.toml`).
    pub fn open(spec: &str) -> Result<MainDevice> {
        Ok(Self::with_link(link::open(spec)?))
    }

    /// Use an already opened link.
    pub fn with_link(link: Box<dyn Link>) -> MainDevice {
        MainDevice {
            bus: Bus::new(link),
            subdevices: Vec::new(),
            mailbox_counters: Vec::new(),
            notes: Vec::new(),
            discovered: None,
        }
    }

    /// The bus (link + frame engine).
    pub fn bus(&mut self) -> &mut Bus {
        &mut self.bus
    }

    /// Scan the bus (see [`scan::scan`]); replaces the SubDevice list.
    pub fn scan(&mut self) -> Result<&[SubDevice]> {
        self.subdevices = scan::scan(&mut self.bus)?;
        self.discovered = None;
        self.mailbox_counters = vec![0; self.subdevices.len()];
        Ok(&self.subdevices)
    }

    /// Lay out the hot-connect groups of `groups` that are not on the scanned bus but have
    /// their members' SII images (see [`crate::hotconnect::place_absent`]): call it after
    /// [`MainDevice::scan`] and before anything that uses positions (configurations, DC),
    /// then activate with the same groups. Returns the positions of the laid-out members.
    pub fn place_absent_groups(
        &mut self,
        groups: &[crate::hotconnect::HotConnectGroup],
    ) -> Result<Vec<usize>> {
        let placed = crate::hotconnect::place_absent(groups, &mut self.subdevices)?;
        for &p in &placed {
            self.mailbox_counters
                .insert(p.min(self.mailbox_counters.len()), 0);
        }
        Ok(placed)
    }

    /// SubDevices found by the last scan.
    pub fn subdevices(&self) -> &[SubDevice] {
        &self.subdevices
    }

    /// The SubDevice at `position`, or an error saying how many there are.
    pub fn subdevice(&self, position: usize) -> Result<&SubDevice> {
        self.subdevices.get(position).ok_or_else(|| {
            Error::NotFound(format!(
                "there is no SubDevice at position {position}; the bus has {} (positions 0..{})",
                self.subdevices.len(),
                self.subdevices.len().saturating_sub(1)
            ))
        })
    }

    /// Request `state` from the SubDevices at `positions` (all if empty) and wait.
    pub fn request_state(
        &mut self,
        positions: &[usize],
        state: AlState,
        timeout: Duration,
    ) -> Result<()> {
        for &p in positions {
            self.subdevice(p)?;
        }
        let mut refs: Vec<&mut SubDevice> = self
            .subdevices
            .iter_mut()
            .enumerate()
            .filter(|(i, s)| {
                if positions.is_empty() {
                    !s.absent_at_scan
                } else {
                    positions.contains(i)
                }
            })
            .map(|(_, s)| s)
            .collect();
        esm::request_state(&mut self.bus, &mut refs, state, timeout)
    }

    /// Refresh AL status and code of every SubDevice.
    pub fn refresh_states(&mut self) -> Result<()> {
        let mut refs: Vec<&mut SubDevice> = self
            .subdevices
            .iter_mut()
            .filter(|s| !s.absent_at_scan)
            .collect();
        esm::read_status(&mut self.bus, &mut refs)
    }

    /// Read `len` bytes of ESC memory at `address` of the SubDevice at `position`.
    pub fn read_memory(&mut self, position: usize, address: u16, len: usize) -> Result<Vec<u8>> {
        let station = self.subdevice(position)?.station;
        let (data, wkc) = self.bus.read(Command::Fprd, station, address, len)?;
        check_wkc(
            &Pdu::physical(Command::Fprd, station, address, data.clone()),
            wkc,
            1,
        )?;
        Ok(data)
    }

    /// Write `data` to ESC memory at `address` of the SubDevice at `position`.
    pub fn write_memory(&mut self, position: usize, address: u16, data: &[u8]) -> Result<()> {
        let station = self.subdevice(position)?.station;
        self.bus
            .write_expect(Command::Fpwr, station, address, data, 1)
    }

    /// Activate: lay out the process data and hand the bus to the cyclic [`Runtime`], whose
    /// supervisor walks every SubDevice up to `act.target` while the application cycles.
    ///
    /// Without explicit configurations, each SubDevice's is discovered first (see
    /// [`MainDevice::discover_configs`]). PDO assignment and mapping that differ from what
    /// the discovery found are written by IgH's rules (see [`crate::pdo_setup`]) unless
    /// `act.pdo_writes` says otherwise.
    pub fn activate(self, act: Activation) -> Result<Runtime> {
        self.activate_inner(act, None)
    }

    /// [`MainDevice::activate`] with a process data layout decided by the caller (e.g. from
    /// an ENI file; see [`Runtime::with_layout`]).
    pub fn activate_with_layout(
        self,
        act: Activation,
        layout: crate::domain::Layout,
    ) -> Result<Runtime> {
        self.activate_inner(act, Some(layout))
    }

    /// The SubDevices, writable (the ENI configuration adjusts SM and mailbox settings).
    pub(crate) fn subdevices_mut(&mut self) -> &mut [SubDevice] {
        &mut self.subdevices
    }

    fn activate_inner(
        mut self,
        mut act: Activation,
        layout: Option<crate::domain::Layout>,
    ) -> Result<Runtime> {
        if act.configs.is_none() {
            act.configs = Some(self.discover_configs()?);
        }
        if act.pdo_writes == PdoWrites::FromScan {
            let n = self.subdevices.len();
            act.pdo_writes = PdoWrites::Known(match &self.discovered {
                Some(d) if d.len() == n => d.iter().cloned().map(Some).collect(),
                _ => vec![None; n],
            });
        }
        act.mailbox_counters = self.mailbox_counters.clone();
        if let Some(dc) = act
            .dc
            .as_ref()
            .filter(|d| d.cycle_ns < crate::cycle::MIN_PERIOD_NS)
        {
            return Err(Error::Invalid(format!(
                "a DC SYNC0 cycle of {} ns is too short: give the cycle time (at least {} us)",
                dc.cycle_ns,
                crate::cycle::MIN_PERIOD_NS / 1_000
            )));
        }
        if let Some(dc) = act.dc.as_mut() {
            // Align the master's DC time with the reference clock now: the reference drifted
            // since the latch (static compensation takes a while), and in
            // reference-follows-master mode a stale base would yank it by that much.
            let t0 = self.bus.now();
            let (d, wkc) = self.bus.read(
                Command::Fprd,
                dc.setup.reference_station,
                ecat_wire::register::DC_SYSTEM_TIME,
                8,
            )?;
            if wkc == 1 {
                let t_ref = u64::from_le_bytes(d[..8].try_into().unwrap_or([0; 8]));
                dc.setup.master_base_ns = t_ref as i64 - t0 as i64;
            }
        }
        let (link, engine, clock) = self.bus.into_parts();
        match layout {
            Some(l) => Runtime::with_layout(link, engine, clock, self.subdevices, act, l),
            None => Runtime::new(link, engine, clock, self.subdevices, act),
        }
    }

    /// The CoE mailbox of the SubDevice at `position`, or why it has none.
    pub fn coe_mailbox(&self, position: usize) -> Result<MailboxArea> {
        let s = self.subdevice(position)?;
        crate::runtime::coe_area(s).ok_or_else(|| {
            let p = s.mailbox.protocol_names();
            Error::NoCoe {
                who: s.who(),
                protocols: if p.is_empty() {
                    "none".into()
                } else {
                    p.join(", ")
                },
            }
        })
    }

    /// The process data configuration of every SubDevice as it is now: over CoE for those
    /// with CoE (their current PDO assignment), from the SII for the others. Fallbacks to the
    /// SII are recorded in [`MainDevice::notes`]. Members of hot-connect groups laid out
    /// while absent take theirs from their SII image.
    pub fn discover_configs(&mut self) -> Result<Vec<SubDeviceConfig>> {
        let mut out = Vec::with_capacity(self.subdevices.len());
        for p in 0..self.subdevices.len() {
            if self.subdevices[p].absent_at_scan {
                out.push(SubDeviceConfig::from_sii(&self.subdevices[p]));
                continue;
            }
            let (c, src) = pdo_coe::discover(self, p)?;
            if let pdo_coe::Source::SiiAfterCoeFailed(why) = src {
                self.notes.push(format!(
                    "{why}; using the PDO description of its SII instead"
                ));
            }
            out.push(c);
        }
        self.discovered = Some(out.clone());
        Ok(out)
    }

    /// Set up distributed clocks (measure delays, set offsets, static drift compensation).
    /// Returns `None` if no SubDevice supports DC.
    pub fn configure_dc(
        &mut self,
        opts: crate::dc::setup::DcOptions,
    ) -> Result<Option<crate::dc::setup::DcSetup>> {
        crate::dc::setup::configure(&mut self.bus, &mut self.subdevices, opts)
    }

    /// The largest |system time difference| (0x092C) over the DC SubDevices, ns.
    pub fn dc_max_difference(&mut self) -> Result<u32> {
        crate::dc::setup::max_time_difference(&mut self.bus, &self.subdevices)
    }

    /// Things worth telling the user that were not errors (e.g. fallbacks).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Run an SDO transfer (upload, download, SDO Information) on the SubDevice at
    /// `position`. A SubDevice still in INIT is brought to PREOP first (its mailbox works from
    /// PREOP on).
    pub fn sdo(&mut self, position: usize, op: SdoOp) -> Result<Vec<u8>> {
        let area = self.coe_mailbox(position)?;
        let what = format!("SDO {}", op.describe());
        self.ensure_mailbox(position, &what)?;
        self.run_on(position, area, op.into())
    }

    /// Read object `index:subindex` (the whole object with `complete_access`).
    pub fn sdo_upload(
        &mut self,
        position: usize,
        index: u16,
        subindex: u8,
        complete_access: bool,
    ) -> Result<Vec<u8>> {
        self.sdo(
            position,
            SdoOp::Upload {
                index,
                subindex,
                complete_access,
            },
        )
    }

    /// Write object `index:subindex` (the whole object with `complete_access`).
    pub fn sdo_download(
        &mut self,
        position: usize,
        index: u16,
        subindex: u8,
        complete_access: bool,
        data: &[u8],
    ) -> Result<()> {
        self.sdo(
            position,
            SdoOp::Download {
                index,
                subindex,
                complete_access,
                data: data.to_vec(),
            },
        )
        .map(|_| ())
    }

    /// Write one SII word of the SubDevice at `position`.
    pub fn write_sii_word(&mut self, position: usize, word: u16, value: u16) -> Result<()> {
        let who = self.subdevice(position)?.who();
        eeprom::write_word(&mut self.bus, &who, word, value)
    }
}
