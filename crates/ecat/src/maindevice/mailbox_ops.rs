//! Mailbox requests of every protocol during the configuration phase (blocking): the generic
//! [`MainDevice::mailbox`] and its FoE, SoE and VoE helpers, and the firmware update through
//! the BOOT state and the bootstrap mailbox.
//!
//! All run the same [`crate::mailbox::job::MailboxJob`] the cyclic runtime uses, here stepped
//! over the blocking bus. A SubDevice still in INIT is brought to PREOP first (its mailbox
//! works from PREOP on); a request for a protocol the SubDevice lacks fails with one sentence
//! naming it, the request and the protocols it has.

use super::MainDevice;
use crate::error::{Error, Result};
use crate::esm;
use crate::mailbox::exchange::MailboxArea;
use crate::mailbox::foe::FoeOp;
use crate::mailbox::op::MailboxOp;
use crate::mailbox::soe::SoeOp;
use crate::mailbox::voe::{VoeMessage, VoeOp};
use ecat_wire::al::AlState;
use ecat_wire::soe::{Elements, Idn};

impl MainDevice {
    /// Run a mailbox request of any protocol on the SubDevice at `position` and return what
    /// it read (empty for writes).
    pub fn mailbox(&mut self, position: usize, op: impl Into<MailboxOp>) -> Result<Vec<u8>> {
        let op = op.into();
        if let MailboxOp::Sdo(op) = op {
            return self.sdo(position, op);
        }
        let s = self.subdevice(position)?;
        let Some(area) = crate::runtime::mailbox_area(s)
            .filter(|_| s.mailbox.protocols & op.protocol_bit() != 0)
        else {
            let p = s.mailbox.protocol_names();
            return Err(Error::Invalid(format!(
                "{} cannot serve the {}: its mailbox protocols are {}",
                s.who(),
                op.describe(),
                if p.is_empty() {
                    "none".into()
                } else {
                    p.join(", ")
                }
            )));
        };
        self.ensure_mailbox(position, &op.describe())?;
        self.run_on(position, area, op)
    }

    /// Bring the SubDevice at `position` from INIT to PREOP (its mailbox works from PREOP on).
    pub(super) fn ensure_mailbox(&mut self, position: usize, what: &str) -> Result<()> {
        let who = self.subdevices[position].who();
        {
            let mut one = [&mut self.subdevices[position]];
            esm::read_status(&mut self.bus, &mut one).map_err(|e| no_answer(&who, what, e))?;
        }
        if self.subdevices[position].al_status.state() == Some(AlState::Init) {
            self.request_state(&[position], AlState::PreOp, esm::DEFAULT_TIMEOUT)?;
        }
        Ok(())
    }

    /// Run `op` over the mailbox `area` of the SubDevice at `position` as it is now.
    pub(super) fn run_on(
        &mut self,
        position: usize,
        area: MailboxArea,
        op: MailboxOp,
    ) -> Result<Vec<u8>> {
        let what = op.describe();
        let sub = self.subdevices[position].clone();
        crate::mailbox::blocking::run(
            &mut self.bus,
            &sub,
            area,
            &mut self.mailbox_counters[position],
            op,
        )
        .map_err(|e| no_answer(&sub.who(), &what, e))
    }

    /// Read the file `name` over FoE.
    pub fn foe_read(&mut self, position: usize, name: &str, password: u32) -> Result<Vec<u8>> {
        let name = name.to_string();
        self.mailbox(position, FoeOp::Read { name, password })
    }

    /// Write `data` as the file `name` over FoE, in the SubDevice's current state (PREOP if it
    /// was in INIT).
    pub fn foe_write(
        &mut self,
        position: usize,
        name: &str,
        password: u32,
        data: &[u8],
    ) -> Result<()> {
        let op = FoeOp::Write {
            name: name.to_string(),
            password,
            data: data.to_vec(),
        };
        self.mailbox(position, op).map(|_| ())
    }

    /// Firmware update: take the SubDevice at `position` through INIT to BOOT (the mailbox
    /// SyncManagers then use the bootstrap areas of SII words 0x14..0x17), write `data` as the
    /// file `name` over FoE, then back to INIT and on to `back` (PREOP at most: OP needs the
    /// process data configuration of an activation).
    pub fn firmware_update(
        &mut self,
        position: usize,
        name: &str,
        password: u32,
        data: &[u8],
        back: AlState,
    ) -> Result<()> {
        let s = self.subdevice(position)?;
        let op = MailboxOp::Foe(FoeOp::Write {
            name: name.to_string(),
            password,
            data: data.to_vec(),
        });
        let m = s.mailbox;
        if m.boot_rx.size == 0 || m.protocols & 0x08 == 0 {
            return Err(Error::Invalid(format!(
                "{} cannot serve the {} through BOOT: {}",
                s.who(),
                op.describe(),
                if m.protocols & 0x08 == 0 {
                    "it has no FoE"
                } else {
                    "its SII has no bootstrap mailbox (words 0x14..0x17 are 0)"
                }
            )));
        }
        let tx = if m.boot_tx.size == 0 {
            m.boot_rx
        } else {
            m.boot_tx
        };
        let area = MailboxArea {
            station: s.station,
            out: (m.boot_rx.offset, m.boot_rx.size),
            inp: (tx.offset, tx.size),
        };
        let t = esm::DEFAULT_TIMEOUT;
        self.request_state(&[position], AlState::Init, t)?;
        self.mailbox_counters[position] = 0;
        self.request_state(&[position], AlState::Boot, t)?;
        let r = self.run_on(position, area, op);
        // Back through INIT whatever happened (BOOT only leaves to INIT).
        let init = self.request_state(&[position], AlState::Init, t);
        self.mailbox_counters[position] = 0;
        r?;
        init?;
        if back > AlState::Init {
            self.request_state(&[position], back.min(AlState::PreOp), t)?;
        }
        Ok(())
    }

    /// Read `elements` of `idn` of drive `drive` over SoE.
    pub fn soe_read(
        &mut self,
        position: usize,
        drive: u8,
        idn: Idn,
        elements: Elements,
    ) -> Result<Vec<u8>> {
        self.mailbox(
            position,
            SoeOp::Read {
                drive,
                idn,
                elements,
            },
        )
    }

    /// Write `data` to `elements` of `idn` of drive `drive` over SoE.
    pub fn soe_write(
        &mut self,
        position: usize,
        drive: u8,
        idn: Idn,
        elements: Elements,
        data: &[u8],
    ) -> Result<()> {
        let op = SoeOp::Write {
            drive,
            idn,
            elements,
            data: data.to_vec(),
        };
        self.mailbox(position, op).map(|_| ())
    }

    /// Send a VoE message and, with `answer`, wait for the SubDevice's answer.
    pub fn voe(
        &mut self,
        position: usize,
        msg: VoeMessage,
        answer: bool,
    ) -> Result<Option<VoeMessage>> {
        let op = if answer {
            VoeOp::Request(msg)
        } else {
            VoeOp::Send(msg)
        };
        let r = self.mailbox(position, op)?;
        Ok(VoeMessage::parse(&r))
    }
}

/// A bus error during a mailbox request, named as the request's failure.
pub(super) fn no_answer(who: &crate::error::Who, what: &str, e: Error) -> Error {
    match e {
        Error::Wkc { .. } | Error::Timeout { .. } => Error::Mailbox {
            who: who.clone(),
            what: what.to_string(),
            reason: format!("the SubDevice does not answer ({e})"),
        },
        other => other,
    }
}
