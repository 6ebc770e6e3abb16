//! The ENI's EtherCAT init commands: which of them our own bring-up already performs, and
//! running the others with the ENI's validate / timeout / retry semantics.
//!
//! Classification by register (ADO): station address (0x0010) and the SII identity reads
//! (0x0500..0x050F) are the scan's job; AL control/status (0x0120, 0x0130) the state
//! machine's; SyncManagers (0x0800..) and FMMUs (0x0600..) are derived from the same ENI data
//! and written by the supervisor on every (re)configuration; DC registers (0x0900..) belong to
//! our DC setup, which takes the ENI's SYNC0 activation and cycle time. Everything else (e.g.
//! watchdog settings) is executed here, addressed to our station address whatever addressing
//! the ENI used.

use crate::bus::Bus;
use crate::error::{Error, Result};
use crate::subdevice::SubDevice;
use ecat_config::eni::{InitCmd, Transition};
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
    /// Executed as the ENI gives it ([`run_init_cmds`]).
    Execute,
}

/// Who performs `c`.
pub fn handling(c: &InitCmd) -> Handling {
    match c.ado {
        0x0010..=0x0013 => Handling::Scan,
        0x0500..=0x050F => Handling::Scan,
        0x0120..=0x0121 | 0x0130..=0x0135 => Handling::StateMachine,
        0x0600..=0x06FF | 0x0800..=0x087F => Handling::Layout,
        0x0900..=0x09FF => Handling::Dc,
        _ => Handling::Execute,
    }
}

fn cmd_name(c: &InitCmd) -> String {
    let name = Command::from_u8(c.cmd).map_or("?".to_string(), |k| format!("{k:?}").to_uppercase());
    format!(
        "'{}' ({name} 0x{:04x}, {} bytes)",
        c.comment,
        c.ado,
        c.data.len()
    )
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Run `c` on `sub` (addressed by its station address): retries on a wrong working counter,
/// then the `Validate` loop (read until the masked data matches or its timeout passes).
pub fn run_one(bus: &mut Bus, sub: &SubDevice, t: Transition, c: &InitCmd) -> Result<()> {
    let cmd = Command::from_u8(c.cmd)
        .ok_or_else(|| Error::Invalid(format!("unknown command code {}", c.cmd)))?;
    // Same operation, addressed by station address.
    let cmd = match cmd {
        Command::Aprd | Command::Brd => Command::Fprd,
        Command::Apwr | Command::Bwr => Command::Fpwr,
        Command::Aprw | Command::Brw => Command::Fprw,
        Command::Armw => Command::Frmw,
        other => other,
    };
    let expected = c.cnt.unwrap_or(1);
    let who = sub.who();
    let start = bus.now();
    let timeout_ns = c
        .validate
        .as_ref()
        .map(|v| v.timeout_ms)
        .or(c.timeout_ms)
        .unwrap_or(0)
        .min(MAX_WAIT_MS) as u64
        * 1_000_000;
    let mut tries = 0u32;
    loop {
        tries += 1;
        let (data, wkc) = bus.transact(cmd, sub.station, c.ado, c.data.clone())?;
        let wkc_ok = wkc == expected;
        let valid = match &c.validate {
            Some(v) if wkc_ok => v.matches(&data),
            _ => wkc_ok,
        };
        if valid {
            return Ok(());
        }
        let waited = bus.now().saturating_sub(start);
        let more = if c.validate.is_some() && wkc_ok {
            waited < timeout_ns
        } else {
            tries <= c.retries.min(MAX_RETRIES)
        };
        if !more {
            let why = match &c.validate {
                Some(v) if wkc_ok => format!(
                    "read {} but expected {}{} (after {} ms)",
                    hex(&data),
                    hex(&v.data),
                    v.mask
                        .as_ref()
                        .map_or(String::new(), |m| format!(" under mask {}", hex(m))),
                    waited / 1_000_000
                ),
                _ => format!("working counter {wkc}, expected {expected} (after {tries} tries)"),
            };
            return Err(Error::Invalid(format!(
                "{who}: ENI init command of transition {t}, {}, failed: {why}",
                cmd_name(c)
            )));
        }
        bus.pause(1_000_000);
    }
}

/// Run every init command of `cmds` that belongs to `t` and that we [`Handling::Execute`];
/// returns how many ran.
pub fn run_init_cmds(
    bus: &mut Bus,
    sub: &SubDevice,
    t: Transition,
    cmds: &[InitCmd],
) -> Result<usize> {
    let mut n = 0;
    for c in cmds
        .iter()
        .filter(|c| c.has(t) && handling(c) == Handling::Execute)
    {
        run_one(bus, sub, t, c)?;
        n += 1;
    }
    Ok(n)
}

/// The writes (FPWR/APWR/BWR) among the IP and PS commands we execute: (address, data), for
/// the supervisor to repeat on every reconfiguration.
pub fn replayed_writes(cmds: &[InitCmd]) -> Vec<(u16, Vec<u8>)> {
    cmds.iter()
        .filter(|c| {
            (c.has(Transition::IP) || c.has(Transition::PS))
                && handling(c) == Handling::Execute
                && matches!(c.cmd, 2 | 5 | 8)
                && !c.data.is_empty()
        })
        .map(|c| (c.ado, c.data.clone()))
        .collect()
}
