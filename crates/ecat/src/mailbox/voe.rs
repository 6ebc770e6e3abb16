//! VoE (vendor specific over EtherCAT): raw messages with a vendor id and a vendor type, which
//! the protocol does not interpret. Send one (posted: no answer awaited), wait for one, or send
//! one and wait for the answer. A received message is handed back as its VoE payload: `u32
//! vendor id | u16 vendor type | data` (split it with [`VoeMessage::parse`]).

use super::exchange::MailboxArea;
use super::transfer::{message, post, Failure, Next, Transfer};
use ecat_wire::mailbox::MailboxType;
use ecat_wire::voe::{emit_voe, parse_voe, VoeRepr};

/// A VoE request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VoeOp {
    /// Send a message; done once the SubDevice took it.
    Send(VoeMessage),
    /// Wait for the next VoE message the SubDevice sends.
    Receive,
    /// Send a message and wait for the answer.
    Request(VoeMessage),
}

/// One VoE message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoeMessage {
    /// Vendor id.
    pub vendor_id: u32,
    /// Vendor-defined type.
    pub vendor_type: u16,
    /// Vendor data.
    pub data: Vec<u8>,
}

impl VoeMessage {
    /// Split a VoE payload as a transfer hands it back (`None` if shorter than 6 bytes).
    pub fn parse(payload: &[u8]) -> Option<VoeMessage> {
        Some(VoeMessage {
            vendor_id: u32::from_le_bytes(payload.get(0..4)?.try_into().ok()?),
            vendor_type: u16::from_le_bytes(payload.get(4..6)?.try_into().ok()?),
            data: payload[6..].to_vec(),
        })
    }
}

impl VoeOp {
    /// Short description, e.g. `VoE send of 12 bytes (vendor 0x00000002, type 0x0001)`.
    pub fn describe(&self) -> String {
        let m = |what: &str, m: &VoeMessage| {
            format!(
                "VoE {what} of {} bytes (vendor 0x{:08X}, type 0x{:04X})",
                m.data.len(),
                m.vendor_id,
                m.vendor_type
            )
        };
        match self {
            VoeOp::Send(x) => m("send", x),
            VoeOp::Request(x) => m("request", x),
            VoeOp::Receive => "VoE receive".into(),
        }
    }
}

/// One VoE transfer.
#[derive(Debug)]
pub struct VoeTransfer {
    op: VoeOp,
    out_size: usize,
    counter: u8,
}

impl VoeTransfer {
    /// A transfer over the mailbox `area`, continuing the mailbox counter from `counter`.
    pub fn new(op: VoeOp, area: MailboxArea, counter: u8) -> VoeTransfer {
        VoeTransfer {
            op,
            out_size: area.out.1 as usize,
            counter,
        }
    }
}

impl Transfer for VoeTransfer {
    fn start(&mut self) -> Next {
        let (m, answer) = match &self.op {
            VoeOp::Receive => return Next::Receive,
            VoeOp::Send(m) => (m, false),
            VoeOp::Request(m) => (m, true),
        };
        let repr = VoeRepr {
            vendor_id: m.vendor_id,
            vendor_type: m.vendor_type,
            data: &m.data,
        };
        let emit = |b: &mut [u8], c| emit_voe(b, c, &repr);
        if answer {
            message(self.out_size, &mut self.counter, emit)
        } else {
            post(self.out_size, &mut self.counter, emit)
        }
    }

    fn on_posted(&mut self) -> Next {
        Next::Done(Vec::new())
    }

    fn on_response(&mut self, msg: &[u8]) -> Next {
        match parse_voe(msg) {
            Ok((h, _)) => Next::Done(msg[6..6 + h.length as usize].to_vec()),
            Err(e) => Next::Failed(Failure::Protocol(format!(
                "VoE message cannot be decoded ({e})"
            ))),
        }
    }

    fn counter(&self) -> u8 {
        self.counter
    }

    fn describe(&self) -> String {
        self.op.describe()
    }

    fn accepts(&self, kind: u8) -> bool {
        kind == MailboxType::Voe as u8
    }
}
