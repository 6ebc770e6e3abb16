//! Activation as the Python API asks for it: each SubDevice's process data as it is now
//! (over CoE, or from its SII), replaced where the application chose other PDOs
//! ([`PdoChoice`]; written to CoE SubDevices as startup SDOs, replayed on every
//! reconfiguration), distributed clocks when asked for or when a SubDevice's SII wants SYNC
//! signals, then ecat's `MainDevice::activate` with the walk to the target state.

use crate::errors::to_py;
use ecat::clock::VirtualTime;
use ecat::config::{Direction, EntryConfig, PdoConfig, SubDeviceConfig, SyncConfig};
use ecat::dc::{DcMode, DcRuntime};
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_wire::al::AlState;
use pyo3::prelude::*;

/// How `MainDevice.activate` was called.
pub struct ActivateArgs {
    /// Cycle time.
    pub cycle_ns: u64,
    /// State to walk every SubDevice to.
    pub target: AlState,
    /// DC: None = when a SubDevice's SII asks for SYNC signals.
    pub dc: Option<bool>,
    /// The simulated network's clock, if on virtual time.
    pub vt: Option<VirtualTime>,
    /// PDO choices: (position, output?, PDO index, entries or None = as mapped now).
    pub pdo: Vec<PdoChoice>,
}

/// One PDO the application assigns: (position, outputs?, PDO index, entries as (index,
/// subindex, bits), or None to take the PDO's mapping as the SubDevice has it now).
pub type PdoChoice = (usize, bool, u16, Option<Vec<(u16, u8, u8)>>);

/// Replace the discovered configurations with the application's PDO choices (the runtime
/// writes what differs from the discovered ones by IgH's rules, see `ecat::pdo_setup`).
fn apply_pdo_choices(
    md: &mut MainDevice,
    configs: &mut [SubDeviceConfig],
    choices: Vec<PdoChoice>,
) -> ecat::Result<()> {
    let mut touched = Vec::new();
    for (pos, output, index, entries) in choices {
        let sub = md.subdevice(pos)?.clone();
        let entries = match entries {
            Some(e) => e,
            None => {
                let n = md
                    .sdo_upload(pos, index, 0, false)?
                    .first()
                    .copied()
                    .unwrap_or(0);
                let mut v = Vec::new();
                for i in 1..=n {
                    let d = md.sdo_upload(pos, index, i, false)?;
                    let mut b = [0u8; 4];
                    let n = d.len().min(4);
                    b[..n].copy_from_slice(&d[..n]);
                    let x = u32::from_le_bytes(b);
                    v.push(((x >> 16) as u16, (x >> 8) as u8, x as u8));
                }
                v
            }
        };
        let (dir, kind) = if output {
            (Direction::Output, 3)
        } else {
            (Direction::Input, 4)
        };
        let sm = sub
            .sync_managers
            .iter()
            .position(|s| s.kind == kind)
            .ok_or_else(|| {
                ecat::Error::Invalid(format!(
                    "{} has no {} SyncManager for PDO 0x{index:04X}",
                    sub.who(),
                    if output { "output" } else { "input" }
                ))
            })? as u8;
        let c = &mut configs[pos];
        if !touched.contains(&(pos, output)) {
            touched.push((pos, output));
            c.sync.retain(|s| s.direction != dir);
            c.sync.push(SyncConfig {
                index: sm,
                direction: dir,
                pdos: Vec::new(),
                domain: 0,
            });
        }
        if let Some(s) = c.sync.iter_mut().find(|s| s.direction == dir) {
            s.pdos.push(PdoConfig {
                index,
                entries: entries
                    .into_iter()
                    .map(|(index, subindex, bits)| EntryConfig {
                        index,
                        subindex,
                        bits,
                    })
                    .collect(),
            });
        }
    }
    for (pos, _) in touched {
        configs[pos].sync.sort_by_key(|s| s.index);
    }
    Ok(())
}

/// Build the ecat Runtime (GIL released).
pub fn activate(py: Python<'_>, mut md: MainDevice, a: ActivateArgs) -> PyResult<Runtime> {
    py.allow_threads(move || -> ecat::Result<Runtime> {
        let mut configs = md.discover_configs()?;
        apply_pdo_choices(&mut md, &mut configs, a.pdo)?;
        let wants = md
            .subdevices()
            .iter()
            .any(|s| s.dc_assign_activate & 0x0300 != 0);
        let mut dc = None;
        if a.dc.unwrap_or(wants) {
            if let Some(setup) = md.configure_dc(ecat::dc::setup::DcOptions::default())? {
                dc = Some(DcRuntime {
                    setup,
                    mode: if a.vt.is_some() {
                        DcMode::ReferenceFollowsMaster
                    } else {
                        DcMode::MasterFollowsReference
                    },
                    cycle_ns: a.cycle_ns,
                    shift_ns: 0,
                });
            }
        }
        let mut rt = md.activate(Activation {
            configs: Some(configs),
            dc,
            target: a.target,
            ..Default::default()
        })?;
        rt.request_state(a.target);
        Ok(rt)
    })
    .map_err(to_py)
}
