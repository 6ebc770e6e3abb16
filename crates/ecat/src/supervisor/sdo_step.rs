//! The supervisor's SDO steps: a startup SDO or an SDO transition command of one SubDevice,
//! driven through the mailbox engine's [`MailboxJob`], judged when its answer arrives.

use super::{CmdOp, Event, Phase, Supervisor};
use crate::frame::FrameEngine;
use crate::mailbox::exchange::Sm1;
use crate::mailbox::job::MailboxJob;
use crate::mailbox::sdo::SdoOp;

impl Supervisor {
    /// The SDO transfer of SubDevice `i`'s current phase, if it is one.
    pub(super) fn sdo_op(&self, i: usize) -> Option<&SdoOp> {
        let s = &self.subs[i];
        match s.phase {
            Phase::Startup(k) => s.startup.get(k),
            Phase::Cmd { k, .. } => match s.cmds.get(k).map(|c| &c.op) {
                Some(CmdOp::Sdo(op)) => Some(op),
                _ => None,
            },
            _ => None,
        }
    }

    /// True if SubDevice `i` is in an SDO phase (startup SDO or SDO transition command).
    pub(super) fn sdo_phase(&self, i: usize) -> bool {
        self.sdo_op(i).is_some()
    }

    /// One step of the SDO transfer of SubDevice `i`'s current phase (a startup SDO or an SDO
    /// transition command).
    pub(super) fn step_sdo(
        &mut self,
        i: usize,
        engine: &mut FrameEngine,
        now: u64,
        cycle: u64,
        counter: &mut u8,
    ) {
        let op = if self.subs[i].job.is_none() {
            self.sdo_op(i).cloned()
        } else {
            None
        };
        let s = &mut self.subs[i];
        let Some(area) = s.mailbox else {
            s.phase = Phase::Backoff {
                until: now + self.timing.backoff,
            };
            return;
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
        let who = s.info.who();
        let next = match (s.phase, result) {
            (_, Some(Err(e))) => {
                let error = match s.phase {
                    Phase::Cmd { k, .. } => format!("{} failed: {e}", s.cmds[k].label),
                    _ => format!("startup SDO failed: {e}"),
                };
                self.emit(Event::StartupFailed { who, error, cycle });
                Phase::Backoff {
                    until: now + self.timing.backoff,
                }
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
}
