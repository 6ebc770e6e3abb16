//! Requests over a mailbox, one variant per protocol: what an application (or the
//! configuration) asks a SubDevice for. [`MailboxOp::transfer`] turns one into the protocol's
//! [`Transfer`], which the one mailbox engine ([`super::job`]) carries.

use super::eoe::{EoeOp, EoeTransfer};
use super::exchange::MailboxArea;
use super::foe::{FoeOp, FoeTransfer};
use super::sdo::{SdoOp, SdoTransfer};
use super::soe::{SoeOp, SoeTransfer};
use super::transfer::Transfer;
use super::voe::{VoeOp, VoeTransfer};

/// A request to a SubDevice's mailbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailboxOp {
    /// CoE: SDO upload, download or SDO Information.
    Sdo(SdoOp),
    /// FoE: file read or write.
    Foe(FoeOp),
    /// SoE: IDN read or write.
    Soe(SoeOp),
    /// VoE: vendor-specific messages.
    Voe(VoeOp),
    /// EoE: an Ethernet frame, or the set-IP-parameter request.
    Eoe(EoeOp),
}

macro_rules! from_op {
    ($($t:ident => $v:ident),*) => {$(
        impl From<$t> for MailboxOp {
            fn from(op: $t) -> Self {
                MailboxOp::$v(op)
            }
        }
    )*};
}
from_op!(SdoOp => Sdo, FoeOp => Foe, SoeOp => Soe, VoeOp => Voe, EoeOp => Eoe);

impl MailboxOp {
    /// Short description with the protocol, e.g. `SDO upload 0x1018:01`.
    pub fn describe(&self) -> String {
        match self {
            MailboxOp::Sdo(op) => format!("SDO {}", op.describe()),
            MailboxOp::Foe(op) => op.describe(),
            MailboxOp::Soe(op) => op.describe(),
            MailboxOp::Voe(op) => op.describe(),
            MailboxOp::Eoe(op) => op.describe(),
        }
    }

    /// The mailbox protocol bit (SII word 0x1C) the SubDevice needs for this request.
    pub fn protocol_bit(&self) -> u16 {
        match self {
            MailboxOp::Sdo(_) => 0x04,
            MailboxOp::Foe(_) => 0x08,
            MailboxOp::Soe(_) => 0x10,
            MailboxOp::Voe(_) => 0x20,
            MailboxOp::Eoe(_) => 0x02,
        }
    }

    /// The transfer carrying this request over the mailbox `area`, continuing the mailbox
    /// counter from `counter`.
    pub fn transfer(self, area: MailboxArea, counter: u8) -> Box<dyn Transfer> {
        match self {
            MailboxOp::Sdo(op) => Box::new(SdoTransfer::new(op, area.out.1, counter)),
            MailboxOp::Foe(op) => Box::new(FoeTransfer::new(op, area, counter)),
            MailboxOp::Soe(op) => Box::new(SoeTransfer::new(op, area, counter)),
            MailboxOp::Voe(op) => Box::new(VoeTransfer::new(op, area, counter)),
            MailboxOp::Eoe(op) => Box::new(EoeTransfer::new(op, area, counter)),
        }
    }
}
