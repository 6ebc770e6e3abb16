//! EtherCAT state machine requests.
//!
//! A request writes AL control of every chosen SubDevice in one batch (with the error
//! acknowledge bit where the SubDevice shows an error), then polls AL status + AL status code
//! (6 bytes from 0x0130 in one FPRD) of all of them in one batch per round until each has
//! reached the state, refused it, or timed out. A refusal is acknowledged (so the SubDevice is
//! not left with its error flag set) and reported with the decoded AL status code.
//!
//! Leaving INIT for PREOP or BOOT needs the mailbox SyncManagers; they are written here from
//! the SII (standard or bootstrap areas) just before the request, as a SubDevice checks them on
//! that transition — disabled first, so a configuration left from BOOT is replaced.

use crate::bus::{check_wkc, Bus, Pdu};
use crate::error::{Error, Result};
use crate::subdevice::{MailboxArea, SubDevice};
use ecat_wire::al::{AlControl, AlState, AlStatus, AlStatusCode};
use ecat_wire::register::{sm, SmRepr, AL_CONTROL, AL_STATUS};
use ecat_wire::Command;
use std::time::Duration;

/// True if a SubDevice reporting `status` and `code` is settled in `want`.
///
/// The error flag with AL status code 0 counts as no error: a SubDevice with device emulation
/// (e.g. an EK1100) copies AL control, acknowledge bit included, into AL status, so it answers
/// INIT+ack with 0x0011. A real EK1100 does exactly that (see the replay capture in
/// testdata/captures), and the test `device_emulation_echo_is_not_an_error` pins the rule.
pub fn settled(status: AlStatus, code: AlStatusCode, want: AlState) -> bool {
    status.state() == Some(want) && !refused(status, code)
}

/// True if the SubDevice reports a real error (error flag with a non-zero AL status code).
pub fn refused(status: AlStatus, code: AlStatusCode) -> bool {
    status.error() && code.0 != 0
}

/// Default time a SubDevice gets for one transition.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Read AL status and AL status code of the given SubDevices (one batch).
pub fn read_status(bus: &mut Bus, subs: &mut [&mut SubDevice]) -> Result<()> {
    let mut batch: Vec<Pdu> = subs
        .iter()
        .map(|s| Pdu::physical(Command::Fprd, s.station, AL_STATUS, vec![0; 6]))
        .collect();
    bus.exchange(&mut batch)?;
    for (p, s) in batch.iter().zip(subs.iter_mut()) {
        check_wkc(p, p.wkc, 1)?;
        s.al_status = AlStatus(u16::from_le_bytes([p.data[0], p.data[1]]));
        s.al_status_code = AlStatusCode(u16::from_le_bytes([p.data[4], p.data[5]]));
    }
    Ok(())
}

/// The mailbox SyncManager pair (SM0 out, SM1 in) for `rx`/`tx` areas, as 16 bytes.
fn mailbox_sms(sub: &SubDevice, rx: MailboxArea, tx: MailboxArea) -> [u8; 16] {
    let ctrl = |n: usize, default: u8| {
        sub.sync_managers
            .get(n)
            .map(|s| s.control)
            .filter(|&c| c != 0)
            .unwrap_or(default)
    };
    let mut b = [0u8; 16];
    let sm0 = SmRepr {
        start: rx.offset,
        length: rx.size,
        control: ctrl(0, 0x26),
        activate: 1,
        ..Default::default()
    };
    let sm1 = SmRepr {
        start: tx.offset,
        length: if tx.size == 0 { rx.size } else { tx.size },
        control: ctrl(1, 0x22),
        activate: 1,
        ..Default::default()
    };
    // Both emits fit: the buffer is exactly two SM blocks.
    let _ = sm0.emit(&mut b[0..8]);
    let _ = sm1.emit(&mut b[8..16]);
    b
}

/// Write the mailbox SMs needed to enter `target` from INIT.
fn prepare(bus: &mut Bus, subs: &[&mut SubDevice], target: AlState) -> Result<()> {
    let mut batch = Vec::new();
    for s in subs.iter() {
        let from_init = s.al_status.state() == Some(AlState::Init);
        if !from_init || !s.mailbox.present() {
            continue;
        }
        let sms = match target {
            AlState::Boot if s.mailbox.boot_rx.size > 0 => {
                mailbox_sms(s, s.mailbox.boot_rx, s.mailbox.boot_tx)
            }
            AlState::Init => continue,
            _ => mailbox_sms(s, s.mailbox.rx, s.mailbox.tx),
        };
        // Disable first: an ESC takes a SyncManager's start and length only while it is
        // disabled (after BOOT the bootstrap configuration is still there).
        batch.push(Pdu::physical(Command::Fpwr, s.station, sm(0), vec![0; 16]));
        batch.push(Pdu::physical(Command::Fpwr, s.station, sm(0), sms.to_vec()));
    }
    bus.exchange(&mut batch)?;
    for p in &batch {
        check_wkc(p, p.wkc, 1)?;
    }
    Ok(())
}

/// Request `target` from every SubDevice in `subs` and wait until all are there.
///
/// Returns the first refusal or timeout as an error naming the SubDevice (after trying all of
/// them); the AL status of every SubDevice is updated either way.
pub fn request_state(
    bus: &mut Bus,
    subs: &mut [&mut SubDevice],
    target: AlState,
    timeout: Duration,
) -> Result<()> {
    if subs.is_empty() {
        return Ok(());
    }
    read_status(bus, subs)?;
    prepare(bus, subs, target)?;
    let mut batch: Vec<Pdu> = subs
        .iter()
        .map(|s| {
            let ack = refused(s.al_status, s.al_status_code);
            let ctl = AlControl::request(target, ack);
            Pdu::physical(
                Command::Fpwr,
                s.station,
                AL_CONTROL,
                ctl.0.to_le_bytes().to_vec(),
            )
        })
        .collect();
    bus.exchange(&mut batch)?;
    for p in &batch {
        check_wkc(p, p.wkc, 1)?;
    }
    let start = bus.now();
    let timeout_ns = timeout.as_nanos() as u64;
    let mut first_error: Option<Error> = None;
    let mut waiting: Vec<usize> = (0..subs.len()).collect();
    while !waiting.is_empty() {
        {
            let mut refs: Vec<&mut SubDevice> = subs
                .iter_mut()
                .enumerate()
                .filter(|(i, _)| waiting.contains(i))
                .map(|(_, s)| &mut **s)
                .collect();
            read_status(bus, &mut refs)?;
        }
        let mut still = Vec::new();
        for &i in &waiting {
            let s = &mut *subs[i];
            let st = s.al_status;
            if settled(st, s.al_status_code, target) {
                continue;
            }
            if refused(st, s.al_status_code) {
                // Acknowledge so the SubDevice accepts the next request, then report.
                let cur = st.state().unwrap_or(AlState::Init);
                let ack = AlControl::request(cur, true).0.to_le_bytes();
                bus.write(Command::Fpwr, s.station, AL_CONTROL, &ack)?;
                first_error.get_or_insert(Error::StateRefused {
                    who: s.who(),
                    requested: target,
                    status: st,
                    code: s.al_status_code,
                });
                continue;
            }
            if bus.now() - start > timeout_ns {
                first_error.get_or_insert(Error::StateTimeout {
                    who: s.who(),
                    requested: target,
                    status: st,
                    timeout_ms: timeout.as_millis() as u64,
                });
                continue;
            }
            still.push(i);
        }
        waiting = still;
        if !waiting.is_empty() {
            bus.pause(500_000);
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_emulation_echo_is_not_an_error() {
        // A real EK1100 answers 0x0011 after AL control INIT|ACK, with code 0.
        assert!(settled(AlStatus(0x0011), AlStatusCode(0), AlState::Init));
        assert!(!refused(AlStatus(0x0011), AlStatusCode(0)));
        // A refusal carries a code.
        assert!(refused(AlStatus(0x0012), AlStatusCode(0x001D)));
        assert!(!settled(
            AlStatus(0x0014),
            AlStatusCode(0x001B),
            AlState::SafeOp
        ));
        assert!(!settled(AlStatus(0x0002), AlStatusCode(0), AlState::SafeOp));
    }
}
