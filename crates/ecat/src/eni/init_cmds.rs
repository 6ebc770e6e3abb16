//! The ENI's EtherCAT and CoE init commands: which of them our own bring-up already performs,
//! and the others as the supervisor's transition commands ([`TransitionCmd`]), run at every
//! transition the ENI lists them for, with its validate / timeout / retry semantics, at the
//! first bring-up and every time a lost SubDevice is configured again.
//!
//! Classification by register (ADO): station address (0x0010) and the SII identity reads
//! (0x0500..0x050F) are the scan's job; AL control/status (0x0120, 0x0130) the state
//! machine's; SyncManagers (0x0800..) and FMMUs (0x0600..) are derived from the same ENI data
//! and written by the supervisor on every (re)configuration; DC registers (0x0900..) belong to
//! our DC setup, which takes the ENI's SYNC0 activation and cycle time. Everything else (e.g.
//! watchdog settings, a vendor register) is executed.
//!
//! Placement: a command listed after its transition's AL-control write (0x0120) in the
//! slave's list runs once the state is reached, any other before the state is requested.
//! Auto-increment and broadcast addressing become the SubDevice's station address (the
//! command is the SubDevice's own); logical commands keep their logical address. CoE init
//! commands of IP and PS are the startup SDOs ([`super::derive::startup_sdos`]); those of
//! the other transitions run before the transition is requested. Commands of IB, PP and SS
//! are not run (ecat takes no SubDevice to BOOT and never re-requests the state it is in);
//! [`transition_cmds`] names them.

use crate::mailbox::sdo::SdoOp;
use crate::supervisor::{CmdOp, RegisterCmd, TransitionCmd, Validate};
use ecat_config::eni::{CoeInitCmd, InitCmd, Slave, Transition};
use ecat_wire::al::AlState;
use ecat_wire::Command;

/// Most retries taken from a file.
const MAX_RETRIES: u32 = 100;
/// Longest validate timeout taken from a file (ms).
const MAX_WAIT_MS: u32 = 60_000;

/// Who performs an init command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// The scan (station address, SII identity via the EEPROM registers).
    Scan,
    /// Our state machine (AL control and status).
    StateMachine,
    /// The supervisor, from the derived SM and FMMU layout.
    Layout,
    /// Our DC setup.
    Dc,
    /// Executed as the ENI gives it (a [`TransitionCmd`]).
    Execute,
}

/// Who performs `c`.
pub fn handling(c: &InitCmd) -> Handling {
    match c.ado {
        _ if c.cmd == 0 => Handling::Execute,
        0x0010..=0x0013 => Handling::Scan,
        0x0500..=0x050F => Handling::Scan,
        0x0120..=0x0121 | 0x0130..=0x0135 => Handling::StateMachine,
        0x0600..=0x06FF | 0x0800..=0x087F => Handling::Layout,
        0x0900..=0x09FF => Handling::Dc,
        _ => Handling::Execute,
    }
}

/// The command as we send it: the SubDevice's own register by station address, or logical.
fn as_sent(cmd: Command) -> Command {
    match cmd {
        Command::Aprd | Command::Brd => Command::Fprd,
        Command::Apwr | Command::Bwr => Command::Fpwr,
        Command::Aprw | Command::Brw => Command::Fprw,
        Command::Armw => Command::Frmw,
        other => other,
    }
}

fn cmd_name(c: &InitCmd, sent: Command) -> String {
    format!(
        "'{}' ({} 0x{:04x}, {} bytes)",
        c.comment,
        format!("{sent:?}").to_uppercase(),
        c.ado,
        c.data.len()
    )
}

/// The (from, to) states of `t`; `None` for transitions ecat never makes (IB, PP, SS).
fn states(t: Transition) -> Option<(AlState, AlState)> {
    if matches!(t, Transition::IB | Transition::PP | Transition::SS) {
        return None;
    }
    let (a, b) = t.states();
    Some((AlState::from_bits(a)?, AlState::from_bits(b)?))
}

/// True if `c` comes after `t`'s AL-control write in `list`.
fn after_request(list: &[InitCmd], at: usize, t: Transition) -> bool {
    list[..at]
        .iter()
        .any(|x| x.has(t) && x.ado == 0x0120 && matches!(x.cmd, 2 | 5 | 8))
}

fn register_cmd(c: &InitCmd) -> Option<RegisterCmd> {
    let command = Command::from_u8(c.cmd)?;
    let sent = as_sent(command);
    let broadcast = matches!(command, Command::Brd | Command::Bwr | Command::Brw);
    Some(RegisterCmd {
        command: sent,
        ado: c.ado,
        logical: c.logical(),
        data: c.data.clone(),
        expected_wkc: if broadcast { None } else { c.cnt },
        retries: c.retries.min(MAX_RETRIES),
        validate: c.validate.as_ref().map(|v| Validate {
            data: v.data.clone(),
            mask: v.mask.clone(),
            timeout_ns: u64::from(v.timeout_ms.min(MAX_WAIT_MS)) * 1_000_000,
        }),
    })
}

fn sdo_op(c: &CoeInitCmd) -> SdoOp {
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
}

/// The transition commands of ENI slave `s` for the supervisor, and a sentence naming those
/// not run (empty when all are).
pub fn transition_cmds(s: &Slave) -> (Vec<TransitionCmd>, Option<String>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for (at, c) in s.init_cmds.iter().enumerate() {
        if handling(c) != Handling::Execute {
            continue;
        }
        let Some(reg) = register_cmd(c) else { continue };
        for &t in &c.transitions {
            let Some((from, to)) = states(t) else {
                skipped.push(format!("{} '{}'", t.code(), c.comment));
                continue;
            };
            if reg.command == Command::Nop {
                continue;
            }
            out.push(TransitionCmd {
                from,
                to,
                after: after_request(&s.init_cmds, at, t),
                label: format!(
                    "ENI init command of transition {t}, {}",
                    cmd_name(c, reg.command)
                ),
                op: CmdOp::Register(reg.clone()),
            });
        }
    }
    for c in s.coe_init_cmds().iter().filter(|c| !c.disabled) {
        for &t in &c.transitions {
            if matches!(t, Transition::IP | Transition::PS) {
                continue;
            }
            let Some((from, to)) = states(t).filter(|_| t != Transition::BI) else {
                skipped.push(format!("CoE {} 0x{:04x}:{}", t.code(), c.index, c.subindex));
                continue;
            };
            out.push(TransitionCmd {
                from,
                to,
                after: false,
                label: format!(
                    "ENI CoE init command of transition {t}, '{}' ({} 0x{:04x}:{})",
                    c.comment,
                    if c.is_download() {
                        "download"
                    } else {
                        "upload"
                    },
                    c.index,
                    c.subindex
                ),
                op: CmdOp::Sdo(sdo_op(c)),
            });
        }
    }
    let note = (!skipped.is_empty()).then(|| {
        format!(
            "slave \"{}\": init commands of transitions ecat does not make (IB: ecat takes no SubDevice to BOOT; PP, SS: never re-requested; CoE in BOOT) are not run: {}",
            s.name,
            skipped.join(", ")
        )
    });
    (out, note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(ts: &[Transition], cmd: u8, ado: u16, comment: &str) -> InitCmd {
        InitCmd {
            transitions: ts.to_vec(),
            before_slave: false,
            comment: comment.into(),
            requires: None,
            cmd,
            adp: 0,
            ado,
            data: vec![1, 0],
            cnt: Some(1),
            retries: 3,
            validate: None,
            timeout_ms: None,
        }
    }

    #[test]
    fn placement_and_addressing() {
        let s = Slave {
            name: "X".into(),
            init_cmds: vec![
                cmd(&[Transition::SO], 2, 0x0400, "pre"),
                cmd(&[Transition::SO], 5, 0x0120, "set OP"),
                cmd(&[Transition::SO, Transition::IB], 8, 0x0410, "post"),
                cmd(&[Transition::PS], 5, 0x0810, "sm"),
            ],
            ..Default::default()
        };
        let (cmds, note) = transition_cmds(&s);
        assert_eq!(cmds.len(), 2);
        assert!(cmds[0].is(AlState::SafeOp, AlState::Op, false));
        assert!(cmds[1].is(AlState::SafeOp, AlState::Op, true));
        let CmdOp::Register(r) = &cmds[0].op else {
            panic!()
        };
        assert_eq!((r.command, r.expected_wkc), (Command::Fpwr, Some(1)));
        let CmdOp::Register(r) = &cmds[1].op else {
            panic!()
        };
        assert_eq!((r.command, r.expected_wkc), (Command::Fpwr, None));
        assert!(cmds[0].label.contains("SO (SAFEOP→OP), 'pre' (FPWR 0x0400"));
        assert!(note.unwrap().contains("IB 'post'"));
    }
}
