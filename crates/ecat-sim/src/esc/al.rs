//! The application-layer state machine (ESM) behind AL control 0x0120.
//!
//! Devices with device emulation (0x0141 bit 0, e.g. EK1100 and the simple EL1xxx/EL2xxx
//! terminals) copy AL control bits 0–4 into AL status without any check: the EK1100 in the
//! reference capture answers a BWR of `INIT|ACK` (0x11) with AL status 0x11.
//! Other devices run the firmware rules of reference §4.2: INIT→PREOP checks SM0/SM1 against
//! the SII mailbox (0x0016), INIT→BOOT the bootstrap mailbox (0x0015, 0x0013 without one),
//! PREOP→SAFEOP the process-data SMs against the PDO sizes (0x001D outputs, 0x001E inputs:
//! start, length = the size of the current PDO assignment in the object dictionary for CoE
//! devices, else of the SII PDOs, mode/direction of the control byte, enabled, and no other
//! enabled SM inside its 3-buffer area); SAFEOP→OP needs valid outputs (a completed output
//! buffer since SAFEOP was entered) on devices with outputs, else 0x0019 (the reference marks
//! the code choice unverified). FMMUs are not checked: a device with process data but no FMMU
//! covering it is accepted, as no solid source names a refusal code (0x002D/0x002E are
//! legacy names the sources disagree on). Forbidden transitions give 0x0011, unknown states
//! 0x0012. A refusal sets the error flag
//! and the code; while the flag is set, requests without the acknowledge bit are ignored
//! except INIT, which is always carried out (the flag then stays until acknowledged — our
//! reading of "INIT is always processed").
//! The firmware opens the mailbox SMs in PREOP and the process-data SMs from SAFEOP (PDI
//! control bit 0), and closes them again on the way down. The output SM is open in SAFEOP so
//! the MainDevice's writes count and make the outputs valid, but the device applies outputs
//! only in OP (see the `io` module).

use super::Esc;
use crate::sii_info::{MailboxArea, SmKind};
use ecat_wire::al::{AlState, AlStatus, AlStatusCode};
use ecat_wire::register::{self as reg, sm_control};

/// Which SyncManagers a state group uses.
#[derive(Debug, Clone, Copy)]
enum SmGroup {
    Mailbox,
    Inputs,
    Outputs,
}

impl Esc {
    fn sm_mask(&self, group: SmGroup) -> u16 {
        let mut m = 0u16;
        for (i, s) in self.info.sms.iter().enumerate().take(16) {
            let hit = match group {
                SmGroup::Mailbox => matches!(s.kind, SmKind::MailboxOut | SmKind::MailboxIn),
                SmGroup::Inputs => s.kind == SmKind::Inputs,
                SmGroup::Outputs => s.kind == SmKind::Outputs,
            };
            if hit {
                m |= 1 << i;
            }
        }
        if matches!(group, SmGroup::Mailbox) && self.info.std_mailbox.is_some() {
            m |= 0b11;
        }
        m
    }

    /// AL control was written by the MainDevice.
    pub(crate) fn al_control_written(&mut self) {
        let ctrl = self.get16(reg::AL_CONTROL);
        if self.device_emulation() {
            self.set_al_status(ctrl & 0x001F, None);
            return;
        }
        let status = AlStatus(self.get16(reg::AL_STATUS));
        let cur = status.state().unwrap_or(AlState::Init);
        let ack = ctrl & 0x10 != 0;
        let req = AlState::from_bits(ctrl as u8);
        if status.error() && !ack && req != Some(AlState::Init) {
            return;
        }
        let Some(req) = req else {
            return self.al_refuse(cur, AlStatusCode::UNKNOWN_STATE);
        };
        if req == AlState::Init {
            self.sm_pdi_enable(0xFFFF, false);
            if status.error() && !ack {
                let code = self.get16(reg::AL_STATUS_CODE);
                return self.set_al_status(AlStatus::new(AlState::Init, true).0, Some(code));
            }
            return self.al_enter(AlState::Init);
        }
        if req == cur {
            return self.al_enter(cur);
        }
        use AlState::*;
        let result = match (cur, req) {
            (Init, PreOp) => {
                self.check_mailbox(self.info.std_mailbox, AlStatusCode::INVALID_MAILBOX)
            }
            (Init, Boot) => match self.info.boot_mailbox {
                None => Err(AlStatusCode::BOOTSTRAP_NOT_SUPPORTED),
                b => self.check_mailbox(b, AlStatusCode::INVALID_BOOT_MAILBOX),
            },
            (PreOp, SafeOp) => self.check_process_data(),
            (SafeOp, Op) if self.outputs_missing() => Err(AlStatusCode::NO_VALID_OUTPUTS),
            (SafeOp, Op) | (Op, SafeOp) | (SafeOp, PreOp) | (Op, PreOp) => Ok(()),
            _ => Err(AlStatusCode::INVALID_STATE_CHANGE),
        };
        match result {
            Ok(()) => self.al_enter(req),
            Err(code) => self.al_refuse(cur, code),
        }
    }

    /// Enter `state` without error: open/close SMs and clear the code.
    fn al_enter(&mut self, state: AlState) {
        let mbx = self.sm_mask(SmGroup::Mailbox);
        let inputs = self.sm_mask(SmGroup::Inputs);
        let outputs = self.sm_mask(SmGroup::Outputs);
        let (open, closed) = match state {
            AlState::Init => (0, 0xFFFF),
            AlState::PreOp | AlState::Boot => (mbx, inputs | outputs),
            AlState::SafeOp | AlState::Op => (mbx | inputs | outputs, 0),
        };
        let from = self.al_status().state();
        if state == AlState::SafeOp && from == Some(AlState::PreOp) {
            self.io_relayout();
        }
        if state == AlState::SafeOp && from != Some(AlState::SafeOp) {
            self.outputs_lost();
        }
        self.sm_pdi_enable(closed & !open, false);
        self.sm_pdi_enable(open, true);
        self.set_al_status(state as u16, Some(0));
    }

    fn al_refuse(&mut self, state: AlState, code: AlStatusCode) {
        self.set_al_status(AlStatus::new(state, true).0, Some(code.0));
    }

    /// SM0/SM1 must be enabled with the SII's start, length and mailbox-mode direction.
    /// (The event/watchdog bits 4–6 of the control byte are not compared.)
    fn check_mailbox(
        &self,
        area: Option<MailboxArea>,
        code: AlStatusCode,
    ) -> Result<(), AlStatusCode> {
        let Some(a) = area else {
            return Ok(());
        };
        let (s0, s1) = (self.sm(0), self.sm(1));
        let mode_out = sm_control::MODE_MAILBOX | sm_control::DIR_WRITE;
        let mode_in = sm_control::MODE_MAILBOX | sm_control::DIR_READ;
        let ok = s0.enabled()
            && s0.start == a.rx_start
            && s0.length == a.rx_len
            && s0.control & 0x0F == mode_out
            && s1.enabled()
            && s1.start == a.tx_start
            && s1.length == a.tx_len
            && s1.control & 0x0F == mode_in;
        if ok {
            Ok(())
        } else {
            Err(code)
        }
    }

    /// Every process-data SM the SII assigns PDOs to must be enabled with the SII start, the
    /// mode/direction of the SII control byte and the length of its PDOs.
    fn check_process_data(&self) -> Result<(), AlStatusCode> {
        for (i, s) in self
            .info
            .sms
            .iter()
            .enumerate()
            .take(self.shape.sms as usize)
        {
            let code = match s.kind {
                SmKind::Outputs => AlStatusCode::INVALID_OUTPUT_CONFIG,
                SmKind::Inputs => AlStatusCode::INVALID_INPUT_CONFIG,
                _ => continue,
            };
            let bytes = self.pdo_bytes(i as u8, s.pdo_bits) as u32;
            if bytes == 0 {
                continue;
            }
            let r = self.sm(i as u8);
            let ok = r.enabled()
                && r.start == s.start
                && r.length as u32 == bytes
                && r.control & 0x0F == s.control & 0x0F
                && !self.sm_overlaps_buffers(i as u8);
            if !ok {
                return Err(code);
            }
        }
        Ok(())
    }

    /// Another enabled SM reaches into the 3-buffer area of SM `n`.
    fn sm_overlaps_buffers(&self, n: u8) -> bool {
        let s = self.sm(n);
        let (lo, hi) = (s.start as u32, s.start as u32 + 3 * s.length as u32);
        (0..self.shape.sms).filter(|&m| m != n).any(|m| {
            let o = self.sm(m);
            let k = if o.is_mailbox() { 1 } else { 3 };
            let (olo, ohi) = (o.start as u32, o.start as u32 + k * o.length as u32);
            o.enabled() && o.length > 0 && olo < hi && lo < ohi
        })
    }
}
