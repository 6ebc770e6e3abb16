//! Mailbox transfers during the configuration phase, over the blocking [`Bus`]: the same
//! [`MailboxJob`] the cyclic runtime steps once per cycle, here stepped datagram after
//! datagram (a read right after the write usually finds the answer already there).

use super::exchange::{Sm1, StepKind};
use super::job::MailboxJob;
use super::op::MailboxOp;
use crate::bus::Bus;
use crate::error::Result;
use crate::mailbox::exchange::MailboxArea;
use crate::subdevice::SubDevice;

/// Pause between polls of an empty mailbox (ns).
const POLL_PAUSE_NS: u64 = 100_000;

/// Run `op` on `sub` to completion; `counter` is its mailbox counter (updated).
pub fn run(
    bus: &mut Bus,
    sub: &SubDevice,
    area: MailboxArea,
    counter: &mut u8,
    op: impl Into<MailboxOp>,
) -> Result<Vec<u8>> {
    let mut job = MailboxJob::new(sub.who(), area, op, *counter, bus.now());
    let r = finish(bus, &mut job);
    *counter = job.counter();
    r
}

/// Step `job` to its end over `bus`.
pub fn finish(bus: &mut Bus, job: &mut MailboxJob) -> Result<Vec<u8>> {
    loop {
        let plan = job.plan(bus.now(), Sm1::Unknown);
        if plan[0].is_none() {
            if job.is_done() {
                break;
            }
            bus.pause(POLL_PAUSE_NS);
            continue;
        }
        // Only waiting (a read or status poll) and nothing there yet: pause before the next.
        let waiting = matches!(plan, [Some(StepKind::Read | StepKind::Status), None]);
        let mut empty = false;
        for kind in plan.into_iter().flatten() {
            let (cmd, adp, ado, data) = job.datagram(kind);
            let (d, wkc) = bus.transact(cmd, adp, ado, data)?;
            empty =
                wkc == 0 || kind == StepKind::Status && d.first().is_some_and(|s| s & 0x08 == 0);
            job.answer(kind, &d, wkc, bus.now());
        }
        if waiting && empty && !job.is_done() {
            bus.pause(POLL_PAUSE_NS);
        }
    }
    job.take_result().unwrap_or_else(|| Ok(Vec::new()))
}
