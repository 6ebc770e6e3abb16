//! The firmware's SyncManager checks on state requests, made the way ETG's Slave Stack Code
//! (SSC 5.1x, its `CheckSmSettings` and the overlap test at the start of input handling) and
//! SOES make them: a device accepts every configuration that lies within what it can do,
//! whatever order the MainDevice wrote it in and whichever event and watchdog bits it set, so
//! SOEM, ethercrab, IgH and ecat all get through (facts: reference §3.10, §4.2).
//!
//! * **Mailbox** (SM0 written by the MainDevice, SM1 read by it), checked on every request
//!   for PREOP, SAFEOP or OP against the standard mailbox (refusal 0x0016) and on INIT→BOOT
//!   against the bootstrap mailbox (0x0015): both SMs enabled, in mailbox (1-buffer) mode,
//!   with the right direction; each length between the minimum and the maximum; each area
//!   inside the process RAM; the two areas apart. The minimum is the ESI's `MinSize` where
//!   the device was built from one that gives it, else the SSC's `MIN_MBX_SIZE` of 34 bytes
//!   (mailbox header, CoE header and an expedited SDO), never more than the SII's size; the
//!   maximum is the ESI's `MaxSize`, else the size the SII announces (the firmware's buffer).
//!   The start addresses need not be the SII's: like the SSC, the firmware serves the areas
//!   the MainDevice configured (SOEM's `amend_mbx` moves them).
//! * **Process data**, on PREOP→SAFEOP and on every request within SAFEOP/OP, inputs first
//!   and then outputs (0x001E and 0x001D), for each SM the SII gives process data: an enabled
//!   SM must have a length other than 0 that equals the size of its PDOs (current assignment
//!   in the dictionary for CoE devices, else the SII's PDOs), the direction of its role, and
//!   its three buffers inside the process RAM; from SAFEOP on, its start must stay where it
//!   was when SAFEOP was entered. A disabled SM must have length 0 and no PDOs. Then no
//!   enabled SM may reach into the area of another: inputs into the mailbox or other inputs
//!   (0x001E), outputs into anything (0x001D).
//!   Deviation: the SSC also accepts 1-buffer (mailbox mode) process data; the device model
//!   exchanges process data through 3 buffers, so 1-buffer mode is accepted only where the
//!   SII's control byte asks for it.

use super::Esc;
use crate::sii_info::{MailboxArea, SmKind};
use ecat_wire::al::AlStatusCode;
use ecat_wire::register::sm_control;

/// The SSC's smallest mailbox (`MIN_MBX_SIZE` 0x22): what a device accepts at least unless
/// its ESI gives a `MinSize` (and never more than its SII's size).
pub const MIN_MAILBOX_SIZE: u16 = 0x22;

/// Mailbox size limits of one device (from its ESI's `MinSize`/`MaxSize`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MailboxLimits {
    /// Smallest and largest length of SM0 (`None`: the defaults of the module note).
    pub rx: (Option<u16>, Option<u16>),
    /// Smallest and largest length of SM1.
    pub tx: (Option<u16>, Option<u16>),
}

/// First process-RAM address.
const RAM_START: u32 = 0x1000;

impl Esc {
    /// Set the mailbox size limits the firmware accepts (survives power cycles).
    pub fn set_mailbox_limits(&mut self, limits: MailboxLimits) {
        self.esm.mbx_limits = limits;
    }

    /// The mailbox size limits set with [`Esc::set_mailbox_limits`].
    pub fn mailbox_limits(&self) -> MailboxLimits {
        self.esm.mbx_limits
    }

    fn ram_end(&self) -> u32 {
        RAM_START + self.shape.ram_bytes
    }

    /// `len` bytes from `start` lie inside the process RAM.
    fn in_ram(&self, start: u16, len: u32) -> bool {
        start as u32 >= RAM_START && start as u32 + len <= self.ram_end()
    }

    /// SM0/SM1 against the mailbox `area` of the SII (nothing to check without one).
    pub(crate) fn check_mailbox(
        &self,
        area: Option<MailboxArea>,
        code: AlStatusCode,
    ) -> Result<(), AlStatusCode> {
        let Some(a) = area else {
            return Ok(());
        };
        let lim = self.esm.mbx_limits;
        let (s0, s1) = (self.sm(0), self.sm(1));
        // Where the device's own SII puts a mailbox is valid even past the RAM the ESC model
        // has (an IP-core device with a larger RAM, e.g. an ENI's mailbox at 0x4000).
        let fits = |s: ecat_wire::register::SmRepr,
                    dir: u8,
                    (sii_start, sii): (u16, u16),
                    (lo, hi): (Option<u16>, Option<u16>)| {
            let min = lo.unwrap_or(MIN_MAILBOX_SIZE).min(sii);
            let max = hi.unwrap_or(sii).max(min);
            s.enabled()
                && s.control & sm_control::MODE_MASK == sm_control::MODE_MAILBOX
                && s.control & sm_control::DIR_MASK == dir
                && (min..=max).contains(&s.length)
                && (s.start == sii_start || self.in_ram(s.start, s.length as u32))
        };
        let apart = |a: ecat_wire::register::SmRepr, b: ecat_wire::register::SmRepr| {
            a.start as u32 + a.length as u32 <= b.start as u32
                || b.start as u32 + b.length as u32 <= a.start as u32
        };
        let ok = fits(s0, sm_control::DIR_WRITE, (a.rx_start, a.rx_len), lim.rx)
            && fits(s1, sm_control::DIR_READ, (a.tx_start, a.tx_len), lim.tx)
            && apart(s0, s1);
        if ok {
            Ok(())
        } else {
            Err(code)
        }
    }

    /// The process-data SMs (see the module note); `in_safeop`: the request comes from SAFEOP
    /// or OP, where the start addresses are fixed.
    pub(crate) fn check_process_data(&self, in_safeop: bool) -> Result<(), AlStatusCode> {
        for (kind, code) in [
            (SmKind::Inputs, AlStatusCode::INVALID_INPUT_CONFIG),
            (SmKind::Outputs, AlStatusCode::INVALID_OUTPUT_CONFIG),
        ] {
            for n in self.pd_sms(kind) {
                if !self.pd_sm_settings_ok(n, kind, in_safeop) {
                    return Err(code);
                }
            }
        }
        for (kind, code) in [
            (SmKind::Inputs, AlStatusCode::INVALID_INPUT_CONFIG),
            (SmKind::Outputs, AlStatusCode::INVALID_OUTPUT_CONFIG),
        ] {
            if self.pd_sms(kind).any(|n| self.sm_overlaps_buffers(n, kind)) {
                return Err(code);
            }
        }
        Ok(())
    }

    /// The SMs the SII gives the process data of `kind`.
    fn pd_sms(&self, kind: SmKind) -> impl Iterator<Item = u8> + '_ {
        self.info
            .sms
            .iter()
            .enumerate()
            .take(self.shape.sms as usize)
            .filter(move |(_, s)| s.kind == kind)
            .map(|(i, _)| i as u8)
    }

    fn pd_sm_settings_ok(&self, n: u8, kind: SmKind, in_safeop: bool) -> bool {
        let sii = self.info.sms[n as usize];
        let bytes = self.pdo_bytes(n, sii.pdo_bits);
        let sii_mode = sii.control & sm_control::MODE_MASK;
        let r = self.sm(n);
        if !r.enabled() {
            return r.length == 0 && bytes == 0;
        }
        let dir = match kind {
            SmKind::Outputs => sm_control::DIR_WRITE,
            _ => sm_control::DIR_READ,
        };
        // Where the device's own SII puts it is always valid (e.g. 0x0F00, the digital I/O
        // registers Beckhoff's EL2xxx map their outputs to, below the process RAM).
        let placed = if in_safeop {
            r.start == self.esm.pd_start[n as usize]
        } else {
            r.start == sii.start || self.in_ram(r.start, 3 * r.length as u32)
        };
        r.length != 0
            && r.length as usize == bytes
            && r.control & sm_control::DIR_MASK == dir
            && (!r.is_mailbox() || sii_mode == sm_control::MODE_MAILBOX)
            && placed
    }

    /// Remember where the process-data SMs are as SAFEOP is entered from PREOP.
    pub(crate) fn pd_starts_fixed(&mut self) {
        for n in 0..self.shape.sms.min(16) {
            self.esm.pd_start[n as usize] = self.sm(n).start;
        }
    }

    /// Another enabled SM reaches into the area of SM `n` (3 buffers, 1 for a mailbox). As in
    /// the SSC, an input SM is blamed for overlapping the mailbox or other inputs, an output
    /// SM for overlapping anything.
    fn sm_overlaps_buffers(&self, n: u8, kind: SmKind) -> bool {
        let area = |s: ecat_wire::register::SmRepr| {
            let k = if s.is_mailbox() { 1 } else { 3 };
            (s.start as u32, s.start as u32 + k * s.length as u32)
        };
        let s = self.sm(n);
        if !s.enabled() || s.length == 0 {
            return false;
        }
        let (lo, hi) = area(s);
        let blamed_on_outputs = |m: u8| {
            kind == SmKind::Inputs
                && self.info.sms.get(m as usize).map(|s| s.kind) == Some(SmKind::Outputs)
        };
        (0..self.shape.sms)
            .filter(|&m| m != n && !blamed_on_outputs(m))
            .any(|m| {
                let o = self.sm(m);
                let (olo, ohi) = area(o);
                o.enabled() && o.length > 0 && olo < hi && lo < ohi
            })
    }
}
