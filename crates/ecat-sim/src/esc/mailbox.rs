//! The firmware side of the standard mailbox until the protocol servers exist.
//!
//! After each frame, a device with a mailbox that is past INIT takes a message the MainDevice
//! completed in SM0 (emptying it) and answers with a mailbox error reply in SM1: detail 0x0005
//! "invalid mailbox header" for length 0, a length past the message or type 0, else 0x0002
//! "protocol not supported" (reference §6.2). Replies wait in a short queue while SM1 is still
//! full. The repeat protocol is served: when the MainDevice toggles SM1 activate bit 1, the
//! last reply is written again and PDI control bit 1 follows the request.

use super::Esc;
use ecat_wire::al::AlState;
use ecat_wire::register as reg;
use std::collections::VecDeque;

/// Replies kept while SM1 is full; older ones are dropped beyond this.
const OUTBOX_LIMIT: usize = 4;

/// Mailbox state kept by the firmware.
#[derive(Debug, Default, Clone)]
pub(crate) struct MailboxState {
    outbox: VecDeque<Vec<u8>>,
    last_reply: Option<Vec<u8>>,
}

/// Build the error reply to a received message (None if there is not even a header).
fn error_reply(msg: &[u8]) -> Option<Vec<u8>> {
    if msg.len() < 6 {
        return None;
    }
    let len = u16::from_le_bytes([msg[0], msg[1]]) as usize;
    let kind = msg[5] & 0x0F;
    let counter = (msg[5] >> 4) & 0x07;
    let detail: u16 = if len == 0 || len > msg.len() - 6 || kind == 0 {
        0x0005
    } else {
        0x0002
    };
    let mut r = vec![4, 0, 0, 0, 0, counter << 4];
    r.extend_from_slice(&1u16.to_le_bytes());
    r.extend_from_slice(&detail.to_le_bytes());
    Some(r)
}

impl Esc {
    fn sm_area(&self, n: u8) -> (u16, usize) {
        let s = self.sm(n);
        (s.start, s.length as usize)
    }

    fn put_in_sm1(&mut self, msg: &[u8]) {
        let (start, len) = self.sm_area(1);
        let mut buf = vec![0u8; len];
        let n = msg.len().min(len);
        buf[..n].copy_from_slice(&msg[..n]);
        self.pdi_write(start, &buf);
        self.set_mailbox_full(1, true);
    }

    /// Serve the mailbox after a frame.
    pub(crate) fn mailbox_service(&mut self) {
        if self.device_emulation() || self.info.std_mailbox.is_none() {
            return;
        }
        match self.al_status().state() {
            None | Some(AlState::Init) => return,
            Some(_) => {}
        }
        // Repeat request: SM1 activate bit 1 differs from PDI control bit 1.
        let s1 = self.sm(1);
        if (s1.activate ^ s1.pdi_control) & 0x02 != 0 && self.sm_active(1) {
            if let Some(r) = self.mbx.last_reply.clone() {
                self.put_in_sm1(&r);
            }
            let a = reg::sm(1) as usize + 7;
            self.mem[a] = (self.mem[a] & !0x02) | (s1.activate & 0x02);
        }
        if self.sm_active(0) && self.mailbox_full(0) {
            let (start, len) = self.sm_area(0);
            let mut msg = vec![0u8; len];
            self.read(start, &mut msg);
            self.set_mailbox_full(0, false);
            if let Some(r) = error_reply(&msg) {
                if self.mbx.outbox.len() == OUTBOX_LIMIT {
                    self.mbx.outbox.pop_front();
                }
                self.mbx.outbox.push_back(r);
            }
        }
        if self.sm_active(1) && !self.mailbox_full(1) {
            if let Some(r) = self.mbx.outbox.pop_front() {
                self.put_in_sm1(&r);
                self.mbx.last_reply = Some(r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::error_reply;

    #[test]
    fn error_reply_details() {
        // CoE message, length 10, counter 3.
        let mut m = vec![0x0A, 0, 0, 0, 0, 0x33];
        m.resize(128, 0);
        assert_eq!(
            error_reply(&m).unwrap(),
            [4, 0, 0, 0, 0, 0x30, 1, 0, 2, 0],
            "protocol not supported"
        );
        m[0] = 0;
        assert_eq!(
            error_reply(&m).unwrap()[8],
            5,
            "length 0 is an invalid header"
        );
        assert!(error_reply(&m[..5]).is_none());
    }
}
