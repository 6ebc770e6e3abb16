//! Commands made at state transitions (an ENI's init commands, for instance): register
//! datagrams with a working-counter check, retries and a read-back validation, SDO transfers
//! and requests of the other mailbox protocols (e.g. the SoE IDN writes of a state).
//!
//! Each command belongs to one transition (`from` → `to`) and runs either before the
//! supervisor requests `to` or once `to` is reached ([`TransitionCmd::after`]). The supervisor
//! runs them one datagram per cycle like its other steps, at the first bring-up and on every
//! reconfiguration after a SubDevice was lost: the commands of `X → INIT` around the reset
//! (X the state the SubDevice was found in), those of INIT → PREOP in INIT after the ESC was
//! cleared, those of PREOP → SAFEOP after the FMMUs, and so on (see [`super`]). A command that
//! fails (wrong working counter after its retries, or a validation that does not match within
//! its timeout) is reported as an [`super::Event::StartupFailed`] naming the command and the
//! value read vs expected, and the SubDevice is tried again from INIT after the back-off.

use super::{Event, Phase, Supervisor, UNSENT};
use crate::frame::FrameEngine;
use crate::mailbox::op::MailboxOp;
use crate::mailbox::sdo::SdoOp;
use ecat_wire::al::AlState;
use ecat_wire::Command;

/// A read-back check: the datagram's returned data must match `data` under `mask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validate {
    /// Expected data.
    pub data: Vec<u8>,
    /// Bits that matter (`None` = all).
    pub mask: Option<Vec<u8>>,
    /// How long to keep sending the command until it matches (ns).
    pub timeout_ns: u64,
}

impl Validate {
    /// True if `read` matches under the mask.
    pub fn matches(&self, read: &[u8]) -> bool {
        ecat_config::eni::masked_match(&self.data, self.mask.as_deref(), read)
    }
}

/// One register datagram of a transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisterCmd {
    /// The command: a configured-address one (FPRD, FPWR, FPRW, FRMW: sent to the
    /// SubDevice's station address at `ado`) or a logical one (LRD, LWR, LRW at `logical`).
    pub command: Command,
    /// Register address (configured-address commands).
    pub ado: u16,
    /// Logical address (logical commands).
    pub logical: u32,
    /// Data sent (its length is the datagram's).
    pub data: Vec<u8>,
    /// Working counter to expect; `None`: any non-zero one (zero means the SubDevice is gone,
    /// except for logical commands, which are not checked then).
    pub expected_wkc: Option<u16>,
    /// Sends after a wrong working counter before giving up.
    pub retries: u32,
    /// Read-back check, repeated until it matches or its timeout passes.
    pub validate: Option<Validate>,
}

/// What a transition command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CmdOp {
    /// A register datagram.
    Register(RegisterCmd),
    /// An SDO transfer over the SubDevice's CoE mailbox.
    Sdo(SdoOp),
    /// A request of another mailbox protocol (e.g. an SoE IDN write).
    Mailbox(MailboxOp),
}

/// A command made when a SubDevice goes from `from` to `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitionCmd {
    /// State left.
    pub from: AlState,
    /// State entered.
    pub to: AlState,
    /// Run once `to` is reached (else before it is requested).
    pub after: bool,
    /// What it is, for messages (e.g. `ENI init command of transition SO (SAFEOP→OP),
    /// 'set watchdog' (FPWR 0x0400, 2 bytes)`).
    pub label: String,
    /// The datagram or transfer.
    pub op: CmdOp,
}

impl TransitionCmd {
    /// True if it belongs to `from → to`, before or `after` the request.
    pub fn is(&self, from: AlState, to: AlState, after: bool) -> bool {
        self.from == from && self.to == to && self.after == after
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// How one answer to a register command is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Done: go on with the next command.
    Done,
    /// Send it again.
    Again,
    /// No answer from a SubDevice that should have answered.
    Gone,
    /// Failed for good.
    Failed,
}

/// Judge answer (`data`, `wkc`) to `c` on try `tries` (1 = first), `waited_ns` after the
/// first send.
pub(super) fn judge(c: &RegisterCmd, data: &[u8], wkc: u16, tries: u32, waited_ns: u64) -> Verdict {
    let logical = matches!(c.command, Command::Lrd | Command::Lwr | Command::Lrw);
    if wkc == 0 && !logical && c.expected_wkc != Some(0) && c.command != Command::Nop {
        return Verdict::Gone;
    }
    let wkc_ok = match c.expected_wkc {
        Some(e) => wkc == e,
        None => true,
    };
    let valid = wkc_ok && c.validate.as_ref().is_none_or(|v| v.matches(data));
    if valid {
        return Verdict::Done;
    }
    let more = match &c.validate {
        Some(v) if wkc_ok => waited_ns < v.timeout_ns,
        _ => tries <= c.retries,
    };
    if more {
        Verdict::Again
    } else {
        Verdict::Failed
    }
}

/// Why `c` failed with answer (`data`, `wkc`): the value read vs expected, or the working
/// counter.
pub(super) fn failure(
    label: &str,
    c: &RegisterCmd,
    data: &[u8],
    wkc: u16,
    tries: u32,
    waited_ns: u64,
) -> String {
    let why = match (&c.validate, c.expected_wkc) {
        (Some(v), e) if e.is_none_or(|e| e == wkc) => format!(
            "read {} but expected {}{} (after {} ms)",
            hex(&data[..data.len().min(v.data.len())]),
            hex(&v.data),
            v.mask
                .as_ref()
                .map_or(String::new(), |m| format!(" under mask {}", hex(m))),
            waited_ns / 1_000_000
        ),
        (_, e) => format!(
            "working counter {wkc}, expected {} (after {tries} tries)",
            e.unwrap_or(1)
        ),
    };
    format!("{label} failed: {why}")
}

impl Supervisor {
    /// The phase for the first command at or after `k` of `from → to` (before the request, or
    /// `after` it), or what follows those commands when there are none left.
    pub(super) fn next_cmd(
        &self,
        i: usize,
        k: usize,
        from: Option<AlState>,
        to: AlState,
        after: bool,
    ) -> Phase {
        let s = &self.subs[i];
        let found = from.and_then(|f| {
            s.cmds
                .iter()
                .enumerate()
                .skip(k)
                .find(|(_, c)| c.is(f, to, after))
        });
        match found {
            Some((k, _)) => Phase::Cmd {
                k,
                tries: 0,
                since: UNSENT,
                from,
                to,
                after,
            },
            None if after => self.after(i, to),
            None if to == AlState::Init => Phase::Reset,
            None if from == Some(AlState::Init) && to == AlState::PreOp => self.mailbox_or_preop(i),
            None => Phase::Request(to),
        }
    }

    /// The commands of `from → to` (before the request, or `after` it), then what follows.
    pub(super) fn with_cmds(
        &self,
        i: usize,
        from: Option<AlState>,
        to: AlState,
        after: bool,
    ) -> Phase {
        self.next_cmd(i, 0, from, to, after)
    }

    /// Reset to INIT: first the commands of `X → INIT` (X the state last seen).
    pub(super) fn reset_phase(&self, i: usize) -> Phase {
        self.with_cmds(i, self.subs[i].status.state(), AlState::Init, false)
    }

    /// Request `to` from the state last seen, after that transition's commands.
    pub(super) fn request_to(&self, i: usize, to: AlState) -> Phase {
        self.with_cmds(i, self.subs[i].status.state(), to, false)
    }

    /// In INIT with the ESC cleared: mailbox SMs and PREOP, or done if INIT is the target.
    pub(super) fn mailbox_or_preop(&self, i: usize) -> Phase {
        if self.target_of(i) < AlState::PreOp {
            Phase::Running
        } else if self.subs[i].info.mailbox.present() {
            Phase::Mailbox
        } else {
            Phase::Request(AlState::PreOp)
        }
    }

    /// Judge the answer to register transition command `k` of SubDevice `i`.
    pub(super) fn judge_cmd(&mut self, i: usize, data: &[u8], wkc: u16, now: u64, cycle: u64) {
        let Phase::Cmd {
            k,
            tries,
            since,
            from,
            to,
            after,
        } = self.subs[i].phase
        else {
            return;
        };
        let Some(TransitionCmd {
            op: CmdOp::Register(r),
            label,
            ..
        }) = self.subs[i].cmds.get(k)
        else {
            return;
        };
        let tries = tries + 1;
        let waited = now.saturating_sub(since);
        let next = match judge(r, data, wkc, tries, waited) {
            Verdict::Done => self.next_cmd(i, k + 1, from, to, after),
            Verdict::Again => Phase::Cmd {
                k,
                tries,
                since,
                from,
                to,
                after,
            },
            Verdict::Gone => {
                self.lose(i, now, cycle);
                return;
            }
            Verdict::Failed => {
                let error = failure(label, r, data, wkc, tries, waited);
                let who = self.subs[i].info.who();
                self.emit(Event::StartupFailed { who, error, cycle });
                Phase::Backoff {
                    until: now + self.timing.backoff,
                }
            }
        };
        self.subs[i].phase = next;
    }

    /// Send register transition command `k` of SubDevice `i` (its data as given, to its
    /// station address or logical address).
    pub(super) fn send_cmd(&mut self, i: usize, engine: &mut FrameEngine, now: u64, cycle: u64) {
        let s = &mut self.subs[i];
        let Phase::Cmd { k, since, .. } = &mut s.phase else {
            return;
        };
        let Some(TransitionCmd {
            op: CmdOp::Register(r),
            label,
            ..
        }) = s.cmds.get(*k)
        else {
            return;
        };
        if *since == UNSENT {
            *since = now;
        }
        let address = match r.command {
            Command::Lrd | Command::Lwr | Command::Lrw => r.logical,
            _ => s.info.station as u32 | (r.ado as u32) << 16,
        };
        match engine.submit_with(r.command, address, &r.data, 2) {
            Ok(h) => s.pending = Some(h),
            Err(e) => {
                let error = format!("{label} could not be sent: {e}");
                let who = s.info.who();
                s.phase = Phase::Backoff {
                    until: now + self.timing.backoff,
                };
                self.emit(Event::StartupFailed { who, error, cycle });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(validate: Option<Validate>, retries: u32) -> RegisterCmd {
        RegisterCmd {
            command: Command::Fprd,
            ado: 0x0400,
            logical: 0,
            data: vec![0, 0],
            expected_wkc: Some(1),
            retries,
            validate,
        }
    }

    #[test]
    fn retries_then_validate_timeout() {
        let c = cmd(None, 2);
        assert_eq!(judge(&c, &[], 1, 1, 0), Verdict::Done);
        assert_eq!(judge(&c, &[], 0, 1, 0), Verdict::Gone);
        assert_eq!(judge(&c, &[], 2, 2, 0), Verdict::Again);
        assert_eq!(judge(&c, &[], 2, 3, 0), Verdict::Failed);
        let v = Validate {
            data: vec![0x34, 0x12],
            mask: Some(vec![0xFF, 0x0F]),
            timeout_ns: 5_000_000,
        };
        let c = cmd(Some(v), 0);
        assert_eq!(judge(&c, &[0x34, 0xF2], 1, 1, 0), Verdict::Done);
        assert_eq!(judge(&c, &[0x35, 0x12], 1, 3, 1_000_000), Verdict::Again);
        assert_eq!(judge(&c, &[0x35, 0x12], 1, 9, 5_000_000), Verdict::Failed);
        let m = failure("X", &c, &[0x35, 0x12], 1, 9, 5_000_000);
        assert_eq!(
            m,
            "X failed: read 3512 but expected 3412 under mask ff0f (after 5 ms)"
        );
        let m = failure("X", &c, &[0x35, 0x12], 2, 1, 0);
        assert_eq!(m, "X failed: working counter 2, expected 1 (after 1 tries)");
    }
}
