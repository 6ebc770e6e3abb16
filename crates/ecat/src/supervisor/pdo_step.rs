//! The supervisor's PDO writes (see [`crate::pdo_setup`]): a plan's SDO downloads sit in a
//! SubDevice's startup list between its own startup requests (which fail hard) and the
//! optional ones, so they ride the same mailbox steps. What differs is a refusal: it is a
//! warning ([`Event::PdoWarning`]) and the SubDevice goes on from the plan's
//! [`PdoStep::skip_to`](crate::pdo_setup::PdoStep::skip_to). The first configuration uses the
//! plan made against what the scan found; every later one (the device may have lost power
//! and with it what was written) uses the plan that writes everything the SubDevice allows.
//! A SubDevice that refuses SAFEOP is reported with the PDOs that still differ
//! ([`Event::PdoMismatch`]).

use super::{Event, Phase, Supervisor};
use crate::error::Error;
use crate::mailbox::op::MailboxOp;
use crate::pdo_setup::{PdoPlan, PdoWrite};
use ecat_wire::al::AlStatusCode;

/// One SubDevice's PDO writes.
#[derive(Debug)]
pub(super) struct PdoState {
    /// The plan against what the scan found.
    first: PdoPlan,
    /// The plan for every later configuration.
    again: PdoPlan,
    /// Where the plan's ops start in the startup list.
    from: usize,
    /// `again` is in the startup list.
    using_again: bool,
    /// The startup list was started at least once.
    started: bool,
    /// Sync managers whose writes were refused in this configuration.
    failed: Vec<u8>,
}

impl PdoState {
    fn plan(&self) -> &PdoPlan {
        if self.using_again {
            &self.again
        } else {
            &self.first
        }
    }
}

impl Supervisor {
    /// Put each SubDevice's PDO plans (by position; the first configuration's and every later
    /// one's) into its startup list, and queue the configuration warnings (`warnings`, by
    /// position) and the plans' own as events.
    pub fn set_pdo_plans(
        &mut self,
        plans: Vec<Option<(PdoPlan, PdoPlan)>>,
        warnings: Vec<Vec<String>>,
    ) {
        for (i, w) in warnings.into_iter().enumerate() {
            let Some(s) = self.subs.get(i) else { break };
            let who = s.info.who();
            for warning in w {
                self.emit(Event::PdoWarning {
                    who: who.clone(),
                    warning,
                    cycle: 0,
                });
            }
        }
        for (i, plan) in plans.into_iter().enumerate() {
            let Some((first, again)) = plan else { continue };
            let Some(s) = self.subs.get_mut(i) else { break };
            let who = s.info.who();
            let from = s.optional_from;
            let ops: Vec<MailboxOp> = first.ops.iter().cloned().map(MailboxOp::Sdo).collect();
            let n = ops.len();
            s.startup.splice(from..from, ops);
            s.optional_from += n;
            let warnings = first.warnings.clone();
            self.subs[i].pdo = Some(Box::new(PdoState {
                first,
                again,
                from,
                using_again: false,
                started: false,
                failed: Vec::new(),
            }));
            for warning in warnings {
                self.emit(Event::PdoWarning {
                    who: who.clone(),
                    warning,
                    cycle: 0,
                });
            }
        }
        self.quiet = false;
    }

    /// Called when SubDevice `i`'s startup list begins: from the second time on, the plan
    /// that writes everything allowed replaces the first one.
    pub(super) fn begin_startup(&mut self, i: usize) {
        let s = &mut self.subs[i];
        let Some(p) = s.pdo.as_mut() else { return };
        p.failed.clear();
        if !p.started {
            p.started = true;
            return;
        }
        if p.using_again {
            return;
        }
        let old = p.first.ops.len();
        let ops: Vec<MailboxOp> = p.again.ops.iter().cloned().map(MailboxOp::Sdo).collect();
        let new = ops.len();
        s.startup.splice(p.from..p.from + old, ops);
        s.optional_from = s.optional_from + new - old;
        p.using_again = true;
    }

    /// If startup request `k` of SubDevice `i` is one of its PDO writes: report `error` as a
    /// warning and return where to go on (the startup index). `None`: not a PDO write.
    pub(super) fn pdo_refused(
        &mut self,
        i: usize,
        k: usize,
        error: &Error,
        cycle: u64,
    ) -> Option<usize> {
        let s = &mut self.subs[i];
        let p = s.pdo.as_mut()?;
        let rel = k.checked_sub(p.from)?;
        let step = *p.plan().steps.get(rel)?;
        let sm = match step.write {
            PdoWrite::Mapping { sm, .. } | PdoWrite::Assignment { sm } => sm,
        };
        if !p.failed.contains(&sm) {
            p.failed.push(sm);
        }
        let next = p.from + step.skip_to;
        // The event names the SubDevice; the error without it.
        let error = match error {
            Error::SdoAbort { what, code, .. } => format!("SDO {what} aborted: {code}"),
            Error::Mailbox { what, reason, .. } => format!("{what} failed: {reason}"),
            e => e.to_string(),
        };
        let warning = match step.write {
            PdoWrite::Mapping { sm, pdo } => format!(
                "could not configure the mapping of PDO 0x{pdo:04X} (SM{sm}): {error}; going on with the next PDO"
            ),
            PdoWrite::Assignment { sm } => format!(
                "could not assign the PDOs of SM{sm} (0x{:04X}): {error}; its PDO configuration ends here",
                crate::pdo_coe::assignment_object(sm)
            ),
        };
        let who = s.info.who();
        self.emit(Event::PdoWarning {
            who,
            warning,
            cycle,
        });
        Some(next)
    }

    /// After SubDevice `i` refused SAFEOP with `code`: report the PDOs that differ from the
    /// application's, if any are known to.
    pub(super) fn report_pdo_mismatch(&mut self, i: usize, code: AlStatusCode, cycle: u64) {
        let s = &self.subs[i];
        let Some(p) = s.pdo.as_ref() else { return };
        let Some(differences) = p.plan().differences_text(&p.failed) else {
            return;
        };
        let who = s.info.who();
        self.emit(Event::PdoMismatch {
            who,
            code,
            differences,
            cycle,
        });
    }

    /// The phase after a refused PDO write: startup request `next`, or what follows the
    /// startup list.
    pub(super) fn startup_from(&self, i: usize, next: usize) -> Phase {
        if next < self.subs[i].startup.len() {
            Phase::Startup(next)
        } else {
            self.after_startup(i)
        }
    }
}
