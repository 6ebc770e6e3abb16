//! Requests over a mailbox, one variant per protocol: what an application (or the
//! configuration) asks a SubDevice for. [`MailboxOp::transfer`] turns one into the protocol's
//! [`Transfer`], which the one mailbox engine ([`super::job`]) carries.

use super::exchange::MailboxArea;
use super::sdo::{SdoOp, SdoTransfer};
use super::transfer::Transfer;

/// A request to a SubDevice's mailbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailboxOp {
    /// CoE: SDO upload, download or SDO Information.
    Sdo(SdoOp),
}

impl From<SdoOp> for MailboxOp {
    fn from(op: SdoOp) -> Self {
        MailboxOp::Sdo(op)
    }
}

impl MailboxOp {
    /// Short description with the protocol, e.g. `SDO upload 0x1018:01`.
    pub fn describe(&self) -> String {
        match self {
            MailboxOp::Sdo(op) => format!("SDO {}", op.describe()),
        }
    }

    /// The mailbox protocol bit (SII word 0x1C) the SubDevice needs for this request.
    pub fn protocol_bit(&self) -> u16 {
        match self {
            MailboxOp::Sdo(_) => 0x04,
        }
    }

    /// The transfer carrying this request over the mailbox `area`, continuing the mailbox
    /// counter from `counter`.
    pub fn transfer(self, area: MailboxArea, counter: u8) -> Box<dyn Transfer> {
        match self {
            MailboxOp::Sdo(op) => Box::new(SdoTransfer::new(op, area.out.1, counter)),
        }
    }
}
