//! How the MainDevice puts an application's PDO configuration into a SubDevice: IgH's rules
//! (stable-1.6 `fsm_pdo.c`), with fewer mailbox transfers.
//!
//! - Only process data sync managers are configured. Entries for the mailbox sync managers
//!   (SII type 1/2, e.g. SM0/SM1 as `ethercat cstruct` prints them) are accepted and never
//!   written ([`process_data_only`]); PDOs for a sync manager the SII does not describe are a
//!   warning and skipped.
//! - What the SubDevice has now is known from the scan (its CoE assignment and mapping, or its
//!   SII); a PDO the scan did not see assigned takes its mapping from the SII's PDO list.
//!   Only what differs from the request is written, compared per sync manager (assignment)
//!   and per PDO (mapping), never as a whole configuration.
//! - A mapping is written only when the SubDevice has CoE and its SII CoE details allow PDO
//!   configuration (bit 3); an assignment only when they allow PDO assignment (bit 2).
//!   Otherwise nothing is written and a warning says what stays different.
//! - A refused write is a warning, not a failure: a refused mapping goes on with the next PDO,
//!   a refused assignment ends the PDO configuration of that SubDevice ([`PdoStep::skip_to`]).
//!   The SubDevice itself is the judge: if its real mapping does not fit the sync manager
//!   sizes laid out from the application's configuration, it refuses SAFEOP, and the
//!   supervisor reports that with [`PdoPlan::differences`].
//!
//! The order of the writes within a sync manager follows ETG.1000.6: the assignment count to 0
//! first (when the assignment is written), each mapping (count 0, entries, count), then the
//! assignment entries and count. Startup SDOs, which fail hard, are made before these (as
//! IgH does: `fsm_slave_config` runs its SDO configuration, then the PDO configuration).

use crate::config::{PdoConfig, SubDeviceConfig, SyncConfig};
use crate::mailbox::sdo::SdoOp;
use crate::pdo_coe::{assignment_object, MAX_SUBINDEX};
use crate::subdevice::SubDevice;
use std::fmt::Write as _;

/// A PDO's mapping as (object index, subindex, bits) per entry.
type Mapping = Vec<(u16, u8, u8)>;
/// A PDO's index with its mapping (`None`: not known).
type KnownPdo = (u16, Option<Mapping>);

/// SII General category, CoE details: the SubDevice's PDO assignment may be written.
pub const COE_PDO_ASSIGN: u8 = 0x04;
/// SII General category, CoE details: the SubDevice's PDO mapping may be written.
pub const COE_PDO_CONFIG: u8 = 0x08;

/// Which PDO writes the runtime makes at activation ([`crate::runtime::Activation::pdo_writes`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PdoWrites {
    /// What [`crate::MainDevice::activate`] found at the scan: it becomes [`PdoWrites::Known`]
    /// with the configurations its last [`crate::MainDevice::discover_configs`] read (unknown
    /// for all without one). A runtime built directly makes no PDO writes for it.
    #[default]
    FromScan,
    /// What each SubDevice (by position) has now; `None`: not known, so everything the
    /// SubDevice allows is written.
    Known(Vec<Option<SubDeviceConfig>>),
    /// No PDO writes (the caller's startup SDOs do it, e.g. an ENI's init commands).
    Off,
}

/// What one write of a plan configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdoWrite {
    /// The mapping of a PDO (0x16xx / 0x1Axx).
    Mapping {
        /// The sync manager whose PDO it is.
        sm: u8,
        /// The PDO.
        pdo: u16,
    },
    /// The PDO assignment of a sync manager (0x1C10 + n).
    Assignment {
        /// The sync manager.
        sm: u8,
    },
}

/// One SDO download of a plan and where to go on when the SubDevice refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdoStep {
    /// What it configures.
    pub write: PdoWrite,
    /// Index in [`PdoPlan::ops`] to go on with after a refusal (the next PDO after a refused
    /// mapping, the end of the plan after a refused assignment).
    pub skip_to: usize,
}

/// The PDO writes one SubDevice needs, and what stays different.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PdoPlan {
    /// The SDO downloads, in order.
    pub ops: Vec<SdoOp>,
    /// One step per op: what it writes and where to go on after a refusal.
    pub steps: Vec<PdoStep>,
    /// Warnings to give once (a sync manager the SubDevice does not describe; differences
    /// the SubDevice does not allow to be written).
    pub warnings: Vec<String>,
    /// Per sync manager whose PDOs differ from the request: the description of the
    /// difference, and whether it stays after the plan's writes (they are not allowed).
    pub differences: Vec<SyncDifference>,
}

/// How one sync manager's PDOs differ from the application's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncDifference {
    /// The sync manager.
    pub sm: u8,
    /// What differs, e.g. `SM2: the application maps 0x1600 (0x7000:01/16) = 2 bytes, the
    /// SubDevice 0x1600 (0x7000:01/8) = 1 byte`.
    pub text: String,
    /// The plan does not write it (the SubDevice does not allow it, or has no CoE).
    pub stays: bool,
}

impl PdoPlan {
    /// The differences a SubDevice refusing SAFEOP is reported with: those the plan could not
    /// write, and those of the sync managers in `failed` (whose writes were refused). `None`
    /// when there are none.
    pub fn differences_text(&self, failed: &[u8]) -> Option<String> {
        let parts: Vec<String> = self
            .differences
            .iter()
            .filter(|d| d.stays || failed.contains(&d.sm))
            .map(|d| {
                if failed.contains(&d.sm) {
                    format!(
                        "{} before ecat's writes, which it refused part way (what it has now may differ again)",
                        d.text
                    )
                } else {
                    d.text.clone()
                }
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// `config` without the sync managers that are not for process data on `sub`: the mailbox
/// sync managers (SII type 1/2), and those its SII does not describe (a warning each when
/// PDOs were configured for them). The rest keep their order.
pub fn process_data_only(
    sub: &SubDevice,
    config: &SubDeviceConfig,
) -> (SubDeviceConfig, Vec<String>) {
    let mut warnings = Vec::new();
    let mut sync = Vec::with_capacity(config.sync.len());
    for s in &config.sync {
        match sub.sync_managers.get(s.index as usize).map(|m| m.kind) {
            // No SM categories at all: the configuration is all there is to go by.
            None if sub.sync_managers.is_empty() => sync.push(s.clone()),
            None => {
                if !s.pdos.is_empty() {
                    warnings.push(format!(
                        "PDOs configured for SM{}, but the SubDevice does not provide that sync manager (its SII describes SM0..SM{}); SM{} is skipped",
                        s.index,
                        sub.sync_managers.len() - 1,
                        s.index
                    ));
                }
            }
            Some(1 | 2) => {
                if !s.pdos.is_empty() {
                    warnings.push(format!(
                        "PDOs configured for SM{}, which is a mailbox sync manager on this SubDevice; they are ignored",
                        s.index
                    ));
                }
            }
            Some(_) => sync.push(s.clone()),
        }
    }
    (SubDeviceConfig { sync }, warnings)
}

/// The mapping the SubDevice has for `pdo` as far as the scan knows: from its current
/// configuration, else from the SII's PDO list.
fn known_mapping<'a>(
    sub: &'a SubDevice,
    current: Option<&'a SubDeviceConfig>,
    pdo: u16,
) -> Option<Mapping> {
    let from_current = current.and_then(|c| {
        c.sync
            .iter()
            .flat_map(|s| s.pdos.iter())
            .find(|p| p.index == pdo)
            .map(|p| {
                p.entries
                    .iter()
                    .map(|e| (e.index, e.subindex, e.bits))
                    .collect()
            })
    });
    from_current.or_else(|| {
        sub.rx_pdos
            .iter()
            .chain(sub.tx_pdos.iter())
            .find(|p| p.index == pdo)
            .map(|p| {
                p.entries
                    .iter()
                    .map(|e| (e.index, e.subindex, e.bits))
                    .collect()
            })
    })
}

fn entries_of(p: &PdoConfig) -> Mapping {
    p.entries
        .iter()
        .map(|e| (e.index, e.subindex, e.bits))
        .collect()
}

fn describe_pdos(out: &mut String, pdos: &[(u16, Mapping)]) {
    if pdos.is_empty() {
        out.push_str("no PDO");
        return;
    }
    for (n, (index, entries)) in pdos.iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "0x{index:04X} (");
        for (k, (i, s, b)) in entries.iter().enumerate() {
            if k > 0 {
                out.push(' ');
            }
            let _ = write!(out, "0x{i:04X}:{s:02X}/{b}");
        }
        out.push(')');
    }
    let bits: u32 = pdos
        .iter()
        .flat_map(|(_, e)| e.iter())
        .map(|e| e.2 as u32)
        .sum();
    let bytes = bits.div_ceil(8);
    let _ = write!(out, " = {bytes} byte{}", if bytes == 1 { "" } else { "s" });
}

/// What the SubDevice has for the PDOs in `order` (each PDO's mapping as known, or `None`).
fn describe_difference(sync: &SyncConfig, have: &[KnownPdo]) -> String {
    let mut t = format!("SM{}: the application maps ", sync.index);
    let want: Vec<(u16, Mapping)> = sync.pdos.iter().map(|p| (p.index, entries_of(p))).collect();
    describe_pdos(&mut t, &want);
    t.push_str(", the SubDevice has ");
    if have.iter().any(|(_, m)| m.is_none()) {
        let list: Vec<String> = have.iter().map(|(p, _)| format!("0x{p:04X}")).collect();
        let _ = write!(t, "{} (mapping not known)", list.join(", "));
    } else {
        let have: Vec<(u16, Mapping)> = have
            .iter()
            .map(|(p, m)| (*p, m.clone().unwrap_or_default()))
            .collect();
        describe_pdos(&mut t, &have);
    }
    t
}

/// The writes that give `sub` the process data configuration `requested`, given what it has
/// now (`current`, from the scan; `None`: not known, so everything allowed is written). See
/// the module documentation for the rules.
pub fn plan(
    sub: &SubDevice,
    current: Option<&SubDeviceConfig>,
    requested: &SubDeviceConfig,
) -> PdoPlan {
    // The warnings of `process_data_only` are the runtime's to give (it gives them whether or
    // not PDOs are written).
    let (requested, _) = process_data_only(sub, requested);
    let mut warnings = Vec::new();
    let coe = crate::runtime::coe_area(sub).is_some();
    let may_assign = coe && sub.coe_details & COE_PDO_ASSIGN != 0;
    let may_map = coe && sub.coe_details & COE_PDO_CONFIG != 0;
    let mut plan = PdoPlan::default();
    // Steps whose skip target is the end of the plan, fixed once it is known.
    let mut to_end = Vec::new();
    for sync in &requested.sync {
        let cur_sync = current.and_then(|c| c.sync.iter().find(|s| s.index == sync.index));
        // The assignment as known: from the scan's configuration, else (no CoE, or a SubDevice
        // whose scan saw no such SM) the SII's PDOs for this SM.
        let have_assign: Option<Vec<u16>> = match (current, cur_sync) {
            (_, Some(c)) => Some(c.pdos.iter().map(|p| p.index).collect()),
            (Some(_), None) => Some(Vec::new()),
            (None, None) => None,
        };
        let want_assign: Vec<u16> = sync.pdos.iter().map(|p| p.index).collect();
        let assign_differs = have_assign.as_ref() != Some(&want_assign);
        let mut maps_differ = Vec::new();
        for p in &sync.pdos {
            let known = if current.is_some() {
                known_mapping(sub, current, p.index)
            } else {
                None
            };
            if known.as_deref() != Some(&entries_of(p)[..]) {
                maps_differ.push((p, known.is_some()));
            }
        }
        if !assign_differs && maps_differ.is_empty() {
            continue;
        }
        // What stays different after the writes this plan may make.
        let assign_stays = assign_differs && !may_assign;
        let map_stays = !may_map && maps_differ.iter().any(|(_, known)| *known);
        let have: Vec<KnownPdo> = have_assign
            .clone()
            .unwrap_or_else(|| want_assign.clone())
            .into_iter()
            .map(|p| (p, known_mapping(sub, current, p)))
            .collect();
        let text = describe_difference(sync, &have);
        let known_difference = !assign_differs || have_assign.is_some();
        if (assign_stays || map_stays) && known_difference && current.is_some() {
            let why = if !coe {
                "it has no CoE, so its PDOs cannot be configured".to_string()
            } else {
                let mut no = Vec::new();
                if assign_stays {
                    no.push("PDO assignment");
                }
                if map_stays {
                    no.push("PDO configuration");
                }
                format!(
                    "its SII (CoE details 0x{:02X}) does not allow {}, so ecat does not write it and uses the application's layout",
                    sub.coe_details,
                    no.join(" or ")
                )
            };
            warnings.push(format!("{text}; {why}"));
        }
        plan.differences.push(SyncDifference {
            sm: sync.index,
            text,
            stays: (assign_stays || map_stays) && current.is_some(),
        });
        let obj = assignment_object(sync.index);
        // Subindex 0 counts in one byte: longer lists cannot be written.
        let too_many = want_assign.len() > MAX_SUBINDEX;
        if too_many && assign_differs && may_assign {
            plan.warnings.push(format!(
                "SM{} is given {} PDOs, more than an assignment object holds ({MAX_SUBINDEX}); its assignment is not written",
                sync.index,
                want_assign.len()
            ));
        }
        let write_assign = assign_differs && may_assign && !too_many;
        let dl = |index: u16, subindex: u8, data: Vec<u8>| SdoOp::Download {
            index,
            subindex,
            complete_access: false,
            data,
        };
        let assignment = PdoWrite::Assignment { sm: sync.index };
        if write_assign {
            to_end.push(plan.ops.len());
            plan.ops.push(dl(obj, 0, vec![0]));
            plan.steps.push(PdoStep {
                write: assignment,
                skip_to: 0,
            });
        }
        if may_map {
            for (p, _) in &maps_differ {
                if p.entries.len() > MAX_SUBINDEX {
                    plan.warnings.push(format!(
                        "PDO 0x{:04X} is given {} entries, more than a mapping object holds ({MAX_SUBINDEX}); its mapping is not written",
                        p.index,
                        p.entries.len()
                    ));
                    continue;
                }
                let first = plan.ops.len();
                let n = p.entries.len();
                plan.ops.push(dl(p.index, 0, vec![0]));
                for (j, e) in p.entries.iter().enumerate() {
                    let v = (e.index as u32) << 16 | (e.subindex as u32) << 8 | e.bits as u32;
                    plan.ops
                        .push(dl(p.index, j as u8 + 1, v.to_le_bytes().to_vec()));
                }
                plan.ops.push(dl(p.index, 0, vec![n as u8]));
                let next = plan.ops.len();
                for _ in first..next {
                    plan.steps.push(PdoStep {
                        write: PdoWrite::Mapping {
                            sm: sync.index,
                            pdo: p.index,
                        },
                        skip_to: next,
                    });
                }
            }
        }
        if write_assign {
            for (i, p) in want_assign.iter().enumerate() {
                to_end.push(plan.ops.len());
                plan.ops
                    .push(dl(obj, i as u8 + 1, p.to_le_bytes().to_vec()));
                plan.steps.push(PdoStep {
                    write: assignment,
                    skip_to: 0,
                });
            }
            to_end.push(plan.ops.len());
            plan.ops.push(dl(obj, 0, vec![want_assign.len() as u8]));
            plan.steps.push(PdoStep {
                write: assignment,
                skip_to: 0,
            });
        }
    }
    let end = plan.ops.len();
    for k in to_end {
        plan.steps[k].skip_to = end;
    }
    warnings.append(&mut plan.warnings);
    plan.warnings = warnings;
    plan
}

#[cfg(test)]
#[path = "pdo_setup_tests.rs"]
mod tests;
