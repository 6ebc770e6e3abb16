//! SDO transfers during the configuration phase, over the blocking [`Bus`]: the same
//! [`SdoJob`] the cyclic runtime steps once per cycle, here stepped datagram after datagram.

use super::job::SdoJob;
use super::sdo::SdoOp;
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
    op: SdoOp,
) -> Result<Vec<u8>> {
    let mut job = SdoJob::new(sub.who(), area, op, *counter, bus.now());
    loop {
        let now = bus.now();
        match job.next_datagram(now) {
            Some((cmd, adp, ado, data)) => {
                let polling = cmd == ecat_wire::Command::Fprd && data.len() == 1;
                let (d, wkc) = bus.transact(cmd, adp, ado, data)?;
                job.answer(&d, wkc, bus.now());
                if polling && !job.is_done() {
                    bus.pause(POLL_PAUSE_NS);
                }
            }
            None if job.is_done() => break,
            None => bus.pause(POLL_PAUSE_NS),
        }
    }
    *counter = job.counter();
    job.take_result().unwrap_or_else(|| Ok(Vec::new()))
}
