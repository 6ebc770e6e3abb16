//! The firmware side of the standard mailbox (reference §6.1–6.2): it takes what the
//! MainDevice completed in SM0, hands it to the protocol server, and queues the answers for
//! SM1.
//!
//! After each frame, on a device with a mailbox that is past INIT:
//! 1. Repeat request: when the MainDevice toggled SM1 activate bit 1, the last message put
//!    into SM1 is written again (same bytes, same counter) and PDI control bit 1 follows the
//!    request.
//! 2. A message the MainDevice completed in SM0 is taken (SM0 becomes empty) and checked:
//!    length 0, a length past SM0 size − 6 or type 0 → mailbox error reply 0x0005 "invalid
//!    mailbox header". Then the counter: a message whose counter is not 0 and equals the
//!    previous message's counter is a duplicate (the MainDevice repeated it) and is dropped
//!    without an answer. CoE goes to the device's CoE server when it has an object
//!    dictionary, FoE/SoE/EoE/VoE to the servers of `crate::mbx` the SII announces (in BOOT
//!    only FoE is served); every other type → 0x0002 "protocol not supported".
//! 3. Answers (SDO responses, SDO Information fragments, error replies, emergencies) wait in
//!    a queue; one is put into SM1 whenever it is empty, with the device's own counter
//!    (1..7, then 1 again). Beyond [`OUTBOX_LIMIT`] queued messages the oldest is dropped.
//!
//! Entering INIT closes the mailbox: queue, counters and the SDO transfer in progress are
//! forgotten (the MainDevice starts its counter afresh after INIT, as SOEM does).

use super::Esc;
use crate::coe::Coe;
use ecat_wire::al::AlState;
use ecat_wire::coe::{emit_emergency, EmergencyRepr};
use ecat_wire::mailbox::{emit_error_reply, next_counter, MailboxErrorCode, MailboxType};
use ecat_wire::register as reg;
use std::collections::VecDeque;

/// Messages kept while SM1 is full; the oldest are dropped beyond this.
pub const OUTBOX_LIMIT: usize = 64;

/// Mailbox state kept by the firmware.
#[derive(Debug, Default, Clone)]
pub(crate) struct MailboxState {
    outbox: VecDeque<Vec<u8>>,
    last_reply: Option<Vec<u8>>,
    /// Counter of the last message taken from SM0 (0: none yet).
    last_in: u8,
    /// Counter of the last message put into SM1.
    last_out: u8,
    /// Closed (INIT) since the last reset.
    closed: bool,
}

fn error_reply(detail: MailboxErrorCode) -> Vec<u8> {
    let mut b = [0u8; 10];
    let n = emit_error_reply(&mut b, 0, detail).unwrap_or(0);
    b[..n].to_vec()
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

    fn queue(&mut self, msg: Vec<u8>) {
        if self.mbx.outbox.len() >= OUTBOX_LIMIT {
            self.mbx.outbox.pop_front();
        }
        self.mbx.outbox.push_back(msg);
    }

    /// Send an emergency (CoE service 1) through the mailbox, as a device does on a fault.
    /// Dropped if the device has no CoE or its mailbox is closed (INIT).
    pub fn send_emergency(&mut self, e: &EmergencyRepr) {
        if self.coe.is_none() || !self.mailbox_open() {
            return;
        }
        let mut b = [0u8; 16];
        if let Ok(n) = emit_emergency(&mut b, 0, e) {
            self.queue(b[..n].to_vec());
        }
    }

    /// Send an Ethernet frame from the device's EoE endpoint to the MainDevice, cut into
    /// fragments for SM1 (the device's own traffic, e.g. a frame from its web server). False
    /// if the device has no EoE, its mailbox is closed or the frame is too long for EoE.
    pub fn eoe_send(&mut self, frame: &[u8]) -> bool {
        let tx = self.sm(1).length as usize;
        if !self.mailbox_open() || self.al_status().state() == Some(AlState::Boot) {
            return false;
        }
        let Some(e) = self.eoe_mut() else {
            return false;
        };
        let msgs = e.send_frame(frame, tx);
        let ok = !msgs.is_empty();
        msgs.into_iter().for_each(|m| self.queue(m));
        ok
    }

    /// Messages waiting for SM1 to become free.
    pub fn mailbox_queue_len(&self) -> usize {
        self.mbx.outbox.len()
    }

    fn mailbox_open(&self) -> bool {
        self.info.std_mailbox.is_some()
            && !self.device_emulation()
            && !matches!(self.al_status().state(), None | Some(AlState::Init))
    }

    /// Take one message from SM0 and queue the answers.
    fn mailbox_receive(&mut self, msg: &[u8]) {
        if msg.len() < 6 {
            return;
        }
        let len = u16::from_le_bytes([msg[0], msg[1]]) as usize;
        let kind = msg[5] & 0x0F;
        let counter = (msg[5] >> 4) & 0x07;
        if len == 0 || len > msg.len() - 6 || kind == 0 {
            return self.queue(error_reply(MailboxErrorCode::INVALID_HEADER));
        }
        if counter != 0 && counter == self.mbx.last_in {
            return;
        }
        self.mbx.last_in = counter;
        let state = self.al_status().state().unwrap_or(AlState::PreOp);
        let sm1 = self.sm(1).length as usize;
        let ctx = crate::mbx::MbxCtx {
            state,
            rx_size: self.sm(0).length as usize,
            tx_size: sm1,
        };
        let kind = MailboxType::from_u8(kind);
        if let (Some(coe), Some(soe), Some(MailboxType::Soe)) = (
            self.coe.as_ref(),
            self.proto.as_mut().and_then(|p| p.soe.as_mut()),
            kind,
        ) {
            soe.sync_from_od(&coe.od);
        }
        let answers = match (self.coe.as_mut(), self.proto.as_mut(), kind) {
            (Some(coe), _, Some(MailboxType::Coe)) if state != AlState::Boot => {
                coe.handle(state, msg, sm1)
            }
            (_, Some(p), Some(k)) if p.serves(k) => p.handle(k, msg, &ctx),
            _ => Err(MailboxErrorCode::UNSUPPORTED_PROTOCOL),
        };
        match answers {
            Ok(list) => list.into_iter().for_each(|m| self.queue(m)),
            Err(code) => self.queue(error_reply(code)),
        }
    }

    /// Serve the mailbox after a frame.
    pub(crate) fn mailbox_service(&mut self) {
        if self.device_emulation() || self.info.std_mailbox.is_none() {
            return;
        }
        if !self.mailbox_open() {
            if !self.mbx.closed {
                self.mbx = MailboxState {
                    closed: true,
                    ..Default::default()
                };
                if let Some(c) = self.coe.as_mut() {
                    c.close();
                }
                if let Some(p) = self.proto.as_mut() {
                    p.close();
                }
            }
            return;
        }
        self.mbx.closed = false;
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
            self.mailbox_receive(&msg);
        }
        if self.sm_active(1) && !self.mailbox_full(1) {
            if let Some(mut r) = self.mbx.outbox.pop_front() {
                let c = next_counter(self.mbx.last_out);
                self.mbx.last_out = c;
                if let Some(b) = r.get_mut(5) {
                    *b = (*b & 0x8F) | c << 4;
                }
                self.put_in_sm1(&r);
                self.mbx.last_reply = Some(r);
            }
        }
    }

    /// Give the device an object dictionary and a CoE server (catalogue models with CoE).
    /// `complete_access` as the SII CoE details advertise it.
    pub fn set_object_dictionary(&mut self, od: crate::coe::Od, complete_access: bool) {
        self.coe = Some(Box::new(Coe::new(od, complete_access)));
        self.io = super::io::IoState::for_esc(self);
    }

    /// The device's object dictionary, if it has CoE.
    pub fn od(&self) -> Option<&crate::coe::Od> {
        self.coe.as_ref().map(|c| &c.od)
    }

    /// The device's object dictionary, writable (device models and tests; no checks).
    pub fn od_mut(&mut self) -> Option<&mut crate::coe::Od> {
        self.coe.as_mut().map(|c| &mut c.od)
    }
}

#[cfg(test)]
mod tests {
    use super::error_reply;
    use ecat_wire::mailbox::MailboxErrorCode;

    #[test]
    fn error_reply_bytes() {
        assert_eq!(
            error_reply(MailboxErrorCode::UNSUPPORTED_PROTOCOL),
            [4, 0, 0, 0, 0, 0, 1, 0, 2, 0]
        );
    }
}
