//! The supervisor's mailbox steps: a startup request (SDO download, SoE IDN write ...) or a
//! mailbox transition command of one SubDevice, driven through the mailbox engine's
//! [`MailboxJob`], judged when its answer arrives. A request for a protocol the SubDevice
//! does not have fails at once with one sentence naming it and the protocols it has. A failed
//! request holds the SubDevice back (reported, retried from INIT after a pause), unless it is
//! one of the optional requests at the end of the list ([`Supervisor::set_optional_startup`]):
//! that one is reported as [`Event::StartupSkipped`] and the SubDevice goes on without it.

use super::{CmdOp, Event, Phase, Supervisor};
use crate::frame::FrameEngine;
use crate::mailbox::exchange::Sm1;
use crate::mailbox::job::MailboxJob;
use crate::mailbox::op::MailboxOp;

impl Supervisor {
    /// Optional startup requests of the SubDevice at `position`, made in PREOP after its other
    /// startup requests (replacing optional ones given before): one that fails or that the
    /// SubDevice cannot serve is reported once per configuration ([`Event::StartupSkipped`])
    /// and passed over. IgH treats EoE IP parameters so.
    pub fn set_optional_startup(&mut self, position: usize, ops: Vec<MailboxOp>) {
        let Some(s) = self.subs.get_mut(position) else {
            return;
        };
        s.startup.truncate(s.optional_from);
        s.startup.extend(ops);
        self.quiet = false;
    }

    /// The mailbox request of SubDevice `i`'s current phase, if it is one (a copy: called
    /// once per request, when it starts).
    fn mailbox_op(&self, i: usize) -> Option<MailboxOp> {
        let s = &self.subs[i];
        match s.phase {
            Phase::Startup(k) => s.startup.get(k).cloned(),
            Phase::Cmd { k, .. } => match s.cmds.get(k).map(|c| &c.op) {
                Some(CmdOp::Sdo(op)) => Some(MailboxOp::Sdo(op.clone())),
                Some(CmdOp::Mailbox(op)) => Some(op.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// True if SubDevice `i` is in a mailbox phase (startup request or mailbox transition
    /// command). Allocates nothing (asked every cycle).
    pub(super) fn sdo_phase(&self, i: usize) -> bool {
        let s = &self.subs[i];
        match s.phase {
            Phase::Startup(k) => k < s.startup.len(),
            Phase::Cmd { k, .. } => matches!(
                s.cmds.get(k).map(|c| &c.op),
                Some(CmdOp::Sdo(_) | CmdOp::Mailbox(_))
            ),
            _ => false,
        }
    }

    /// One step of the mailbox transfer of SubDevice `i`'s current phase (a startup request or
    /// a mailbox transition command).
    pub(super) fn step_sdo(
        &mut self,
        i: usize,
        engine: &mut FrameEngine,
        now: u64,
        cycle: u64,
        counter: &mut u8,
    ) {
        let op = if self.subs[i].job.is_none() {
            if self.subs[i].phase == Phase::Startup(0) {
                self.begin_startup(i);
            }
            self.mailbox_op(i)
        } else {
            None
        };
        let s = &mut self.subs[i];
        let protocols = s.info.mailbox.protocols;
        let (area, op) = match (s.mailbox, op) {
            (area, Some(op)) if area.is_none() || protocols & op.protocol_bit() == 0 => {
                let error = format!(
                    "{} cannot serve the startup {}: its mailbox protocols are {}",
                    s.info.who(),
                    op.describe(),
                    crate::mailbox::service::protocol_names(protocols)
                );
                return self.fail(i, error, now, cycle);
            }
            (Some(area), op) => (area, op),
            (None, _) => {
                s.phase = Phase::Backoff {
                    until: now + self.timing.backoff,
                };
                return;
            }
        };
        let job = match (&mut s.job, op) {
            (Some(j), _) => j,
            (j, Some(op)) => j.insert(MailboxJob::new(s.info.who(), area, op, *counter, now)),
            (None, None) => return,
        };
        job.drive(engine, now, Sm1::Unknown);
        if !job.is_done() {
            return;
        }
        *counter = job.counter();
        let result = job.take_result();
        s.job = None;
        let next = match (s.phase, result) {
            (_, Some(Err(e))) => {
                if let Phase::Startup(k) = s.phase {
                    if let Some(next) = self.pdo_refused(i, k, &e, cycle) {
                        self.subs[i].phase = self.startup_from(i, next);
                        return;
                    }
                }
                let s = &self.subs[i];
                let error = match s.phase {
                    Phase::Cmd { k, .. } => format!("{} failed: {e}", s.cmds[k].label),
                    Phase::Startup(k) => match s.startup.get(k) {
                        Some(MailboxOp::Sdo(_)) => format!("startup SDO failed: {e}"),
                        _ => format!("startup request failed: {e}"),
                    },
                    _ => format!("startup request failed: {e}"),
                };
                return self.fail(i, error, now, cycle);
            }
            (Phase::Startup(k), _) if k + 1 < s.startup.len() => Phase::Startup(k + 1),
            (
                Phase::Cmd {
                    k, from, to, after, ..
                },
                _,
            ) => self.next_cmd(i, k + 1, from, to, after),
            _ => self.after_startup(i),
        };
        self.subs[i].phase = next;
    }

    /// Report `error` for SubDevice `i` and back off before trying it again from INIT; an
    /// optional startup request is reported and passed over instead.
    fn fail(&mut self, i: usize, error: String, now: u64, cycle: u64) {
        let who = self.subs[i].info.who();
        let s = &self.subs[i];
        if let Phase::Startup(k) = s.phase {
            if k >= s.optional_from {
                let next = if k + 1 < s.startup.len() {
                    Phase::Startup(k + 1)
                } else {
                    self.after_startup(i)
                };
                self.subs[i].phase = next;
                return self.emit(Event::StartupSkipped { who, error, cycle });
            }
        }
        self.emit(Event::StartupFailed { who, error, cycle });
        self.subs[i].phase = Phase::Backoff {
            until: now + self.timing.backoff,
        };
    }
}
