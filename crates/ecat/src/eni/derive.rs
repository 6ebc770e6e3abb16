//! What the ENI says about process data, turned into our configuration types: each
//! SubDevice's [`SubDeviceConfig`] (SMs → PDOs → entries), its startup SDOs (the CoE init
//! commands), its FMMUs (from the ENI's FMMU init commands, else from its place in the image),
//! and one [`Domain`] whose datagrams are the ENI's logical cyclic commands.
//!
//! The domain image is the ENI's output image followed by its input image, in the ENI's frame
//! coordinates (a command's data sits at `InputOffs`/`OutputOffs` + 10), so every variable's
//! `BitOffs` is directly an offset in it. An LRW whose outputs and inputs share logical
//! addresses (TwinCAT's layout) sends from the output image and returns into the input image.
//!
//! The cyclic frames are the ENI's: same frame boundaries and datagram order; its BRD of AL
//! status is our AL probe, its ARMW/FRMW of 0x0910 our DC datagrams when DC is on (else sent as
//! given), and everything else (NOP, the mailbox-state LRD, other reads) is sent as given with
//! its expected working counter checked.

use crate::config::{Direction, EntryConfig, PdoConfig, SubDeviceConfig, SyncConfig};
use crate::cyclic::{FixedDatagram, FrameItem};
use crate::domain::{DatagramPlan, Domain, Region};
use crate::error::{Error, Result};
use crate::mailbox::sdo::SdoOp;
use crate::subdevice::{SiiSyncManager, SubDevice};
use ecat_config::eni::{Eni, Slave, Transition};
use ecat_wire::datagram::MAX_DATA;
use ecat_wire::register::FmmuRepr;
use ecat_wire::Command;

/// Largest output or input image accepted from an ENI (bytes).
const MAX_IMAGE: usize = 1 << 20;

fn invalid(s: &Slave, p: usize, what: String) -> Error {
    Error::Invalid(format!("ENI slave {p} \"{}\": {what}", s.name))
}

fn sm_dir(kind: &str) -> Option<Direction> {
    match kind {
        "Outputs" => Some(Direction::Output),
        "Inputs" => Some(Direction::Input),
        _ => None,
    }
}

/// The process data configuration of ENI slave `p`: its Outputs/Inputs SMs with the PDOs the
/// ENI assigns to them (`SmN/Pdo`) and those PDOs' entries.
pub fn config_of(s: &Slave, p: usize) -> Result<SubDeviceConfig> {
    let mut sync = Vec::new();
    for sm in &s.process_data.sms {
        let Some(direction) = sm_dir(&sm.kind) else {
            continue;
        };
        let mut pdos = Vec::new();
        for &i in &sm.pdos {
            let pdo = s.process_data.pdo(i).ok_or_else(|| {
                invalid(
                    s,
                    p,
                    format!(
                        "Sm{} assigns PDO 0x{i:04x}, which the ENI does not describe",
                        sm.index
                    ),
                )
            })?;
            let mut entries = Vec::new();
            for e in &pdo.entries {
                let bits = u8::try_from(e.bit_len).map_err(|_| {
                    invalid(s, p, format!("PDO 0x{i:04x} entry 0x{:04x}:{} has {} bits; at most 255 are supported", e.index, e.subindex, e.bit_len))
                })?;
                entries.push(EntryConfig {
                    index: e.index,
                    subindex: e.subindex,
                    bits,
                });
            }
            pdos.push(PdoConfig { index: i, entries });
        }
        sync.push(SyncConfig {
            index: sm.index,
            direction,
            pdos,
            domain: 0,
        });
    }
    Ok(SubDeviceConfig { sync })
}

/// The CoE init commands of the IP and PS transitions as startup SDOs (made in PREOP before
/// SAFEOP, replayed on every reconfiguration). Disabled ones are left out.
pub fn startup_sdos(s: &Slave) -> Vec<SdoOp> {
    s.coe_init_cmds()
        .iter()
        .filter(|c| {
            !c.disabled
                && (c.transitions.contains(&Transition::IP)
                    || c.transitions.contains(&Transition::PS))
        })
        .map(|c| {
            if c.is_download() {
                SdoOp::Download {
                    index: c.index,
                    subindex: c.subindex,
                    complete_access: c.complete_access,
                    data: c.data.clone(),
                }
            } else {
                SdoOp::Upload {
                    index: c.index,
                    subindex: c.subindex,
                    complete_access: c.complete_access,
                }
            }
        })
        .collect()
}

/// Make the SubDevice's SM and mailbox settings the ENI's (the supervisor programs SMs from
/// them), and its SYNC0 activation the one the ENI writes to 0x0980 (0 when it writes none).
pub fn apply_to_subdevice(s: &Slave, sub: &mut SubDevice) {
    for sm in &s.process_data.sms {
        let n = sm.index as usize;
        if sub.sync_managers.len() <= n {
            sub.sync_managers.resize(n + 1, SiiSyncManager::default());
        }
        let kind = match sm.kind.as_str() {
            "MBoxOut" => 1,
            "MBoxIn" => 2,
            "Outputs" => 3,
            "Inputs" => 4,
            _ => 0,
        };
        let t = &mut sub.sync_managers[n];
        t.start = sm.start;
        t.control = sm.control;
        t.enable = u8::from(sm.enable);
        t.kind = kind;
    }
    if let Some(m) = &s.mailbox {
        sub.mailbox.rx.offset = m.send.start;
        sub.mailbox.rx.size = m.send.len;
        sub.mailbox.tx.offset = m.recv.start;
        sub.mailbox.tx.size = m.recv.len;
        for sm in [0usize, 1] {
            if sub.sync_managers.len() <= sm {
                sub.sync_managers.resize(sm + 1, SiiSyncManager::default());
            }
        }
    }
    sub.dc_assign_activate = s
        .init_cmds
        .iter()
        .filter(|c| c.ado == 0x0980 && c.data.len() >= 2 && c.has(Transition::PS))
        .map(|c| u16::from_le_bytes([c.data[0], c.data[1]]))
        .next_back()
        .unwrap_or(0);
}

/// The FMMUs the ENI's init commands program for the IP and PS transitions (FMMU n at
/// 0x0600 + 16 n), in FMMU order with disabled gaps; empty when it writes none.
pub fn fmmus_from_init_cmds(s: &Slave) -> Vec<FmmuRepr> {
    let mut out: Vec<FmmuRepr> = Vec::new();
    for c in s.init_cmds.iter().filter(|c| {
        (0x0600..0x0700).contains(&c.ado)
            && (c.has(Transition::IP) || c.has(Transition::PS))
            && matches!(c.cmd, 2 | 5 | 8)
            && c.ado % 16 == 0
    }) {
        for (k, chunk) in c.data.chunks_exact(16).enumerate() {
            let n = (c.ado as usize - 0x0600) / 16 + k;
            if let Ok(f) = FmmuRepr::parse(chunk) {
                if out.len() <= n {
                    out.resize(n + 1, FmmuRepr::default());
                }
                out[n] = f;
            }
        }
    }
    out
}

/// The SM bytes of `cfg` in direction `d` (first SM of that direction and its bytes).
fn sm_of(cfg: &SubDeviceConfig, d: Direction) -> Vec<(u8, usize)> {
    cfg.sync
        .iter()
        .filter(|x| x.direction == d && x.bytes() > 0)
        .map(|x| (x.index, x.bytes() as usize))
        .collect()
}

/// The layout the ENI describes: one domain (see the module documentation) and each
/// SubDevice's FMMUs; notes name what is not sent or differs.
pub fn layout(
    eni: &Eni,
    subs: &[SubDevice],
    configs: &[SubDeviceConfig],
    notes: &mut Vec<String>,
) -> Result<crate::domain::Layout> {
    let logical: Vec<_> = eni.cyclic_cmds().filter(|c| c.is_logical()).collect();
    let end = |input: bool| {
        logical
            .iter()
            .filter_map(|c| c.image_range(input))
            .map(|r| r.end)
            .max()
            .unwrap_or(0)
    };
    let pi = &eni.process_image;
    let out_len = (pi.outputs.byte_size as usize).max(end(false));
    let in_len = (pi.inputs.byte_size as usize).max(end(true));
    if out_len.max(in_len) > MAX_IMAGE {
        return Err(Error::Invalid(format!(
            "the ENI's process image would be {} bytes (ByteSize or InputOffs/OutputOffs); at most {MAX_IMAGE} are supported",
            out_len.max(in_len)
        )));
    }
    if let Some(c) = logical.iter().find(|c| c.data_len > MAX_DATA) {
        return Err(Error::Invalid(format!(
            "the ENI's cyclic command at 0x{:08x} carries {} bytes; one datagram holds at most {MAX_DATA}",
            c.logical(),
            c.data_len
        )));
    }
    // FMMUs: the ENI's own, else from each slave's place in the image.
    let mut mappings = Vec::with_capacity(subs.len());
    let mut regions = Vec::new();
    for (p, (s, cfg)) in eni.slaves.iter().zip(configs).enumerate() {
        let mut fmmus = fmmus_from_init_cmds(s);
        let derive = fmmus.is_empty();
        for (dir, range, input) in [
            (Direction::Output, s.process_data.send, false),
            (Direction::Input, s.process_data.recv, true),
        ] {
            let Some(r) = range else { continue };
            let mut byte = (r.bit_start / 8) as usize;
            for (sm, len) in sm_of(cfg, dir) {
                let offset = if input { out_len + byte } else { byte };
                regions.push(Region {
                    position: p as u16,
                    sm,
                    direction: dir,
                    offset,
                    len,
                });
                if derive {
                    let cmd = logical.iter().find(|c| {
                        c.image_range(input).is_some_and(|x| x.contains(&byte))
                            && matches!((c.cmd, input), (10 | 12, true) | (11 | 12, false))
                    });
                    let Some(cmd) = cmd else {
                        return Err(invalid(
                            s,
                            p,
                            format!(
                                "its {} at image byte {byte} are carried by no cyclic command",
                                if input { "inputs" } else { "outputs" }
                            ),
                        ));
                    };
                    let at = cmd.image_range(input).map_or(0, |x| x.start);
                    let phys = subs
                        .get(p)
                        .and_then(|x| x.sync_managers.get(sm as usize))
                        .map_or(0, |x| x.start);
                    fmmus.push(FmmuRepr {
                        logical_start: cmd.logical().wrapping_add((byte - at) as u32),
                        length: len as u16,
                        logical_start_bit: 0,
                        logical_stop_bit: 7,
                        physical_start: phys,
                        physical_start_bit: 0,
                        kind: if input {
                            FmmuRepr::READ
                        } else {
                            FmmuRepr::WRITE
                        },
                        enable: 1,
                    });
                }
                byte += len;
            }
        }
        mappings.push(crate::domain::SubDeviceMapping { fmmus });
    }
    mappings.resize(subs.len(), Default::default());
    // Datagrams: the ENI's logical commands as domain plans; its frames as given.
    let mbx = eni.master.mailbox_states;
    let mut plans = Vec::new();
    let mut rx_at = Vec::new();
    let mut frames = Vec::new();
    let mut probe_placed = false;
    if eni.cyclic.len() > 1 {
        notes.push(format!(
            "the ENI has {} cyclic tasks; ecat sends the frames of all of them every cycle, at the first task's cycle time",
            eni.cyclic.len()
        ));
    }
    for c in eni
        .cyclic
        .iter()
        .flat_map(|t| &t.frames)
        .flat_map(|f| std::iter::once(None).chain(f.cmds.iter().map(Some)))
    {
        let Some(c) = c else {
            frames.push(FrameItem::NewFrame);
            continue;
        };
        let command = Command::from_u8(c.cmd).unwrap_or(Command::Nop);
        let fixed = FixedDatagram {
            command,
            address: if c.is_logical() {
                c.logical()
            } else {
                c.adp as u32 | (c.ado as u32) << 16
            },
            len: c.data_len.min(MAX_DATA) as u16,
            expected_wkc: c.cnt,
        };
        if c.data.as_ref().is_some_and(|d| d.iter().any(|&b| b != 0)) {
            notes.push(format!(
                "cyclic {command:?} ADO 0x{:04x}: its <Data> is not sent (zeros are)",
                c.ado
            ));
        }
        if !c.is_logical() {
            let item = match (c.cmd, c.ado) {
                (7, 0x0130) if !probe_placed => {
                    probe_placed = true;
                    FrameItem::AlProbe
                }
                (13 | 14, 0x0910) => {
                    notes.push(format!(
                        "cyclic {command:?} of 0x0910 ({} bytes): sent as given without DC; with DC ecat sends its FRMW of the reference clock's 64-bit time in its place",
                        c.data_len
                    ));
                    FrameItem::Dc(Some(fixed))
                }
                _ => FrameItem::Fixed(fixed),
            };
            frames.push(item);
            continue;
        }
        let l = c.logical();
        if let Some((start, count)) = mbx {
            if l >= start && l < start + count.div_ceil(8).max(1) {
                frames.push(FrameItem::Fixed(fixed));
                continue;
            }
        }
        if !c.states.is_empty() && !c.in_state("OP") {
            notes.push(format!(
                "the cyclic command at 0x{l:08x} is not sent in OP and is left out"
            ));
            continue;
        }
        let (outr, inr) = (c.image_range(false), c.image_range(true));
        let (offset, rx) = match (command, outr, inr) {
            (Command::Lrd, _, Some(i)) => (out_len + i.start, None),
            (Command::Lwr, Some(o), _) => (o.start, None),
            (Command::Lrw, Some(o), Some(i)) => (o.start, Some(out_len + i.start)),
            _ => {
                return Err(Error::Invalid(format!(
                    "the ENI's cyclic {command:?} at 0x{l:08x} has no InputOffs/OutputOffs; cannot place it in the process image"
                )))
            }
        };
        let computed = expected_wkc(&mappings, command, l, c.data_len);
        let expected = c.cnt.unwrap_or(computed);
        if c.cnt.is_some_and(|n| n != computed) {
            notes.push(format!(
                "the ENI expects WKC {expected} for {command:?} 0x{l:08x}; its FMMUs give {computed}; using the ENI's"
            ));
        }
        frames.push(FrameItem::Domain {
            domain: 0,
            plan: plans.len(),
        });
        plans.push(DatagramPlan {
            command,
            logical: l,
            offset,
            len: c.data_len,
            expected_wkc: expected,
        });
        rx_at.push(rx);
    }
    let all_states = ["PREOP", "SAFEOP", "OP"];
    if eni
        .cyclic_cmds()
        .any(|c| !c.states.is_empty() && !all_states.iter().all(|s| c.in_state(s)))
    {
        notes.push(
            "the cyclic commands' <State> lists are not applied: ecat sends its cyclic frames in every state (a command not sent in OP is left out)"
                .into(),
        );
    }
    if !probe_placed {
        notes.push(
            "the ENI's frames have no BRD of AL status; ecat adds its own at the end of the last frame"
                .into(),
        );
    }
    let base = plans.iter().map(|p| p.logical).min().unwrap_or(0);
    let d = Domain::from_parts(0, base, out_len, in_len, regions, plans, rx_at)?;
    Ok(crate::domain::Layout {
        domains: vec![d],
        mappings,
        frames: Some(frames),
    })
}

/// The working counter a logical datagram earns from these FMMUs (LRW: +2 write, +1 read).
fn expected_wkc(
    mappings: &[crate::domain::SubDeviceMapping],
    cmd: Command,
    l: u32,
    len: usize,
) -> u16 {
    let span = l as u64..l as u64 + len as u64;
    mappings
        .iter()
        .map(|m| {
            let hit = |kind: u8| {
                m.fmmus.iter().any(|f| {
                    f.enable & 1 == 1
                        && f.kind & kind != 0
                        && f.length > 0
                        && (f.logical_start as u64) < span.end
                        && span.start < f.logical_start as u64 + f.length as u64
                })
            };
            let (w, r) = (hit(FmmuRepr::WRITE), hit(FmmuRepr::READ));
            match cmd {
                Command::Lrw => 2 * u16::from(w) + u16::from(r),
                Command::Lwr => u16::from(w),
                _ => u16::from(r),
            }
        })
        .sum()
}
