//! The application-layer state machine (ESM) behind AL control 0x0120.
//!
//! Devices with device emulation (0x0141 bit 0, e.g. EK1100 and the simple EL1xxx/EL2xxx
//! terminals) copy AL control bits 0–4 into AL status without any check: the EK1100 in the
//! reference capture answers a BWR of `INIT|ACK` (0x11) with AL status 0x11.
//!
//! Other devices run the firmware rules of reference §4.2 the way the widespread slave stack
//! (ETG's SSC, 5.1x) does; every rule below is pinned in `tests/esm_table.rs`:
//! * **Error flag.** A refusal sets AL status to the resulting state with the error flag and
//!   writes the code. While the flag is set, requests without the acknowledge bit are ignored,
//!   except INIT, which is carried out and, like every successful request, clears flag and
//!   code. A request with the acknowledge bit is carried out as a normal request; one for the
//!   current state clears flag and code.
//! * **SyncManager checks** (module `smcheck`, the SSC's rules): INIT→PREOP and every request
//!   for PREOP check SM0/SM1 against the SII mailbox (0x0016); INIT→BOOT the bootstrap
//!   mailbox (0x0015, 0x0013 without one); every request for SAFEOP or OP (PREOP→SAFEOP,
//!   SAFEOP→OP, OP→SAFEOP, SAFEOP→SAFEOP, OP→OP) checks the mailbox and then the
//!   process-data SMs against the PDO sizes (0x001E inputs, 0x001D outputs). A failed check
//!   drops the device to PREOP+ERR (to INIT+ERR for 0x0016, or when it was in INIT). FMMUs
//!   are not checked: no solid source names a refusal code (0x002D/0x002E are legacy names
//!   the sources disagree on).
//! * **DC SYNC check.** PREOP→SAFEOP on a device whose SII DC operating modes all need SYNC
//!   signals (AssignActivate high byte, e.g. 0x0300 = cyclic unit + SYNC0; no free-run or
//!   SM-synchronous mode) also checks DC activation 0x0981: it must switch on at least the
//!   signals of one of those modes, else PREOP+ERR 0x0030 (invalid DC SYNC configuration).
//!   Devices with a free-run mode accept any activation, none included. SYNC0/SYNC1 cycle
//!   times are not checked (0x0035–0x0037 are not modelled).
//! * **SAFEOP→OP waits for outputs.** A device with outputs goes to OP at once if the
//!   MainDevice has completed an output buffer since SAFEOP was entered; otherwise the request
//!   stays pending, AL status unchanged (SAFEOP), until the first complete output buffer
//!   arrives (OP at the end of that frame) or the SAFEOP→OP timeout runs out (SAFEOP+ERR
//!   0x001B "sync manager watchdog: no process data received yet"). The SSC does this so that
//!   MainDevices which start process data only after requesting OP work. Devices without
//!   outputs go to OP at once. Any request the device processes ends a pending one (a new OP
//!   request restarts the wait). As in the SSC, AL status is written only when the
//!   transition completes, so after an acknowledged OP request (0x18) from SAFEOP+ERR the old
//!   error shows until then. Not modelled: with DC SYNC active the SSC also waits for SYNC0
//!   and its PLL (refusing with 0x002D/0x001A); here DC devices behave like free-run ones.
//! * **Forbidden and unknown requests** give 0x0011 and 0x0012; the device keeps its state
//!   with the error flag, except in OP, which it leaves for SAFEOP+ERR (outputs stop).
//!   Not modelled: the SSC also closes the output SM on such a refusal from OP (and on a
//!   watchdog expiry) until the error is acknowledged.
//!
//! The timeout is per device ([`Esc::set_safeop_op_timeout_ms`]); the default,
//! [`DEFAULT_SAFEOP_OP_TIMEOUT_MS`], is the SSC's: its `SAFEOP2OPTIMEOUT` of 9000 ms less the
//! 10 % the stack takes off to answer before the MainDevice's own timeout.
//! The firmware opens the mailbox SMs in PREOP and the process-data SMs from SAFEOP (PDI
//! control bit 0), and closes them again on the way down. The output SM is open in SAFEOP so
//! the MainDevice's writes count and make the outputs valid, but the device applies outputs
//! only in OP (see the `io` module).

use super::smcheck::MailboxLimits;
use super::Esc;
use crate::sii_info::{SmKind, DC_SYNC_BITS};
use ecat_wire::al::{AlState, AlStatus, AlStatusCode};
use ecat_wire::register as reg;

/// How long a device with firmware waits by default in SAFEOP for its first outputs after an
/// OP request before it refuses with 0x001B: the SSC's 9000 ms less 10 %.
pub const DEFAULT_SAFEOP_OP_TIMEOUT_MS: u64 = 8_100;

/// Firmware ESM state not visible in registers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Esm {
    /// A SAFEOP→OP request is waiting for the first outputs until this time (ns).
    pub op_deadline: Option<u64>,
    /// How long a SAFEOP→OP request waits for the first outputs (ns).
    pub op_timeout_ns: u64,
    /// Where the SMs started when SAFEOP was entered (the SSC's stored process-data
    /// addresses, checked on every request within SAFEOP/OP).
    pub pd_start: [u16; 16],
    /// Mailbox sizes the firmware accepts (see `smcheck`).
    pub mbx_limits: MailboxLimits,
}

impl Default for Esm {
    fn default() -> Self {
        Esm {
            op_deadline: None,
            op_timeout_ns: DEFAULT_SAFEOP_OP_TIMEOUT_MS * 1_000_000,
            pd_start: [0; 16],
            mbx_limits: MailboxLimits::default(),
        }
    }
}

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

    /// How long a SAFEOP→OP request waits for the first outputs before it is refused with
    /// 0x001B, in milliseconds.
    pub fn safeop_op_timeout_ms(&self) -> u64 {
        self.esm.op_timeout_ns / 1_000_000
    }

    /// Set how long a SAFEOP→OP request waits for the first outputs before it is refused with
    /// 0x001B (milliseconds; survives power cycles, as firmware does).
    pub fn set_safeop_op_timeout_ms(&mut self, ms: u64) {
        self.esm.op_timeout_ns = ms.saturating_mul(1_000_000);
    }

    /// True while a SAFEOP→OP request waits for the first outputs.
    pub fn op_request_pending(&self) -> bool {
        self.esm.op_deadline.is_some()
    }

    /// Power-up: no request pending (the timeout setting stays).
    pub(crate) fn esm_power_up(&mut self) {
        self.esm.op_deadline = None;
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
        // A pending request was accepted with the flag acknowledged; the register only shows
        // that when the transition completes.
        let error = status.error() && self.esm.op_deadline.is_none();
        if error && !ack && req != Some(AlState::Init) {
            return;
        }
        self.esm.op_deadline = None;
        let Some(req) = req else {
            return self.al_refuse(cur, AlStatusCode::UNKNOWN_STATE);
        };
        use AlState::*;
        let std_mbx = self.info.std_mailbox;
        let checked = match (cur, req) {
            (_, Init) | (Boot, Boot) => Ok(()),
            (Init, Boot) => match self.info.boot_mailbox {
                None => Err(AlStatusCode::BOOTSTRAP_NOT_SUPPORTED),
                b => self.check_mailbox(b, AlStatusCode::INVALID_BOOT_MAILBOX),
            },
            (Init | PreOp | SafeOp | Op, PreOp) => {
                self.check_mailbox(std_mbx, AlStatusCode::INVALID_MAILBOX)
            }
            (PreOp, SafeOp) => self
                .check_mailbox(std_mbx, AlStatusCode::INVALID_MAILBOX)
                .and_then(|()| self.check_process_data(false))
                .and_then(|()| self.check_dc_sync()),
            (SafeOp | Op, SafeOp | Op) => self
                .check_mailbox(std_mbx, AlStatusCode::INVALID_MAILBOX)
                .and_then(|()| self.check_process_data(true)),
            _ => return self.al_refuse(cur, AlStatusCode::INVALID_STATE_CHANGE),
        };
        if let Err(code) = checked {
            let fall = match cur {
                Init | Boot => cur,
                _ if code == AlStatusCode::INVALID_MAILBOX => Init,
                _ => PreOp,
            };
            return self.al_settle(fall, code.0);
        }
        if (cur, req) == (SafeOp, Op) && self.outputs_missing() {
            let now = self.eeprom.now_ns;
            self.esm.op_deadline = Some(now.saturating_add(self.esm.op_timeout_ns));
            return;
        }
        self.al_settle(req, 0);
    }

    /// The first complete output buffer arrived: a pending OP request completes.
    pub(crate) fn esm_outputs_arrived(&mut self) {
        if self.esm.op_deadline.take().is_some() {
            self.al_settle(AlState::Op, 0);
        }
    }

    /// A pending OP request whose time ran out at `now_ns` is refused with 0x001B.
    pub(crate) fn esm_tick(&mut self, now_ns: u64) {
        if self.esm.op_deadline.is_some_and(|d| now_ns >= d) {
            self.esm.op_deadline = None;
            self.kick_pdi();
            self.al_settle(AlState::SafeOp, AlStatusCode::SM_WATCHDOG.0);
        }
    }

    /// Refuse a request: the state stays, with the error flag, except that OP falls back to
    /// SAFEOP.
    fn al_refuse(&mut self, state: AlState, code: AlStatusCode) {
        let state = if state == AlState::Op {
            AlState::SafeOp
        } else {
            state
        };
        self.al_settle(state, code.0);
    }

    /// Be in `state` with AL status code `code` (the error flag set when it is not 0): open
    /// and close the SMs the state uses, recompute the layout on PREOP→SAFEOP, and forget
    /// the outputs whenever SAFEOP is entered from another state.
    fn al_settle(&mut self, state: AlState, code: u16) {
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
            self.pd_starts_fixed();
        }
        if state == AlState::SafeOp && from != Some(AlState::SafeOp) {
            self.outputs_lost();
        }
        self.sm_pdi_enable(closed & !open, false);
        self.sm_pdi_enable(open, true);
        self.set_al_status(AlStatus::new(state, code != 0).0, Some(code));
    }

    /// PREOP→SAFEOP on a device that needs DC sync (its SII lists DC operating modes and
    /// none of them runs without SYNC signals): DC activation 0x0981 must switch on at least
    /// the SYNC signals of one of its modes (0x0030 otherwise). Devices with a free-run or
    /// SM-synchronous mode, or without a DC category, accept any activation, none included.
    fn check_dc_sync(&self) -> Result<(), AlStatusCode> {
        let modes = &self.info.dc_activations;
        if modes.is_empty() || modes.contains(&0) {
            return Ok(());
        }
        let act = self.mem[reg::DC_ACTIVATION as usize] & DC_SYNC_BITS;
        // Every signal the mode needs is switched on (more do no harm).
        let covers = |m: u8| act & m == m;
        if modes.iter().any(|&m| covers(m)) {
            Ok(())
        } else {
            Err(AlStatusCode::INVALID_DC_SYNC_CONFIG)
        }
    }
}
