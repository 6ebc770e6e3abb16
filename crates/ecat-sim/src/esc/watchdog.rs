//! The process-data (SyncManager) watchdog, reference §3.6.
//!
//! One watchdog tick is `(0x0400 + 2) × 40 ns`; the timeout is `0x0420` ticks (0 disables it).
//! Power-up values 2498 and 1000 give 100 µs ticks and 100 ms. Every ECAT write to an SM whose
//! control byte has bit 6 set re-triggers it. It runs only while such an SM is enabled and open
//! and has been written at least once since it was opened (so a device just entering SAFEOP
//! is not blamed for writes it could not have had). On expiry: 0x0440 bit 0 drops to 0, the
//! counter 0x0442 increments (saturating at 255), and the outputs go to their safe value
//! (zero); a firmware device forgets that it had valid outputs (so a SAFEOP→OP request waits
//! for new ones, as the SSC does) and, in OP, falls back to SAFEOP + ERR with code 0x001B. A device
//! with device emulation (no firmware) keeps its AL state (unverified: only its outputs are
//! reset, as the ESC's digital output unit does). Status bit 0 returns to 1 with the next
//! trigger (unverified: the reference leaves the acknowledge semantics open).
//! Expiry is evaluated when time is known, i.e. before each frame (`Esc::tick`).

use super::Esc;
use ecat_wire::al::{AlState, AlStatus, AlStatusCode};
use ecat_wire::register::{self as reg, sm_control};

/// Watchdog state not visible in registers.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Watchdog {
    /// Time of the latest trigger since the SM was opened.
    pub last: Option<u64>,
    /// Expired and not re-triggered since.
    pub expired: bool,
}

impl Esc {
    /// The process-data watchdog timeout in ns, `None` when disabled.
    pub fn watchdog_timeout_ns(&self) -> Option<u64> {
        let ticks = self.get16(reg::WATCHDOG_PD) as u64;
        let divider = self.get16(reg::WATCHDOG_DIVIDER) as u64;
        (ticks != 0).then_some((divider + 2) * 40 * ticks)
    }

    pub(crate) fn watchdog_sm_active(&self) -> bool {
        (0..self.shape.sms).any(|n| {
            let s = self.sm(n);
            s.control & sm_control::WATCHDOG != 0 && self.sm_active(n) && s.length > 0
        })
    }

    /// An ECAT write touched SM `n`.
    pub(crate) fn watchdog_written(&mut self, n: u8) {
        if self.sm(n).control & sm_control::WATCHDOG == 0 {
            return;
        }
        self.wd.last = Some(self.eeprom.now_ns);
        self.wd.expired = false;
        self.mem[reg::WATCHDOG_PD_STATUS as usize] |= 1;
    }

    /// SM `n` was opened, closed or switched: its watchdog starts afresh.
    pub(crate) fn watchdog_sm_reset(&mut self, n: u8) {
        if self.sm(n).control & sm_control::WATCHDOG != 0 {
            self.wd.last = None;
        }
    }

    /// Check for expiry at `now_ns`.
    pub(crate) fn watchdog_tick(&mut self, now_ns: u64) {
        let (Some(last), Some(timeout)) = (self.wd.last, self.watchdog_timeout_ns()) else {
            return;
        };
        if self.wd.expired || now_ns.saturating_sub(last) <= timeout || !self.watchdog_sm_active() {
            return;
        }
        self.wd.expired = true;
        self.kick_pdi();
        self.mem[reg::WATCHDOG_PD_STATUS as usize] &= !1;
        let c = &mut self.mem[reg::WATCHDOG_PD_COUNTER as usize];
        *c = c.saturating_add(1);
        self.outputs_to_safe();
        if self.device_emulation() {
            return;
        }
        self.outputs_lost();
        if self.al_status().state() == Some(AlState::Op) {
            self.set_al_status(
                AlStatus::new(AlState::SafeOp, true).0,
                Some(AlStatusCode::SM_WATCHDOG.0),
            );
        }
    }

    /// True while the watchdog is expired (outputs held safe).
    pub fn watchdog_expired(&self) -> bool {
        self.wd.expired
    }
}
