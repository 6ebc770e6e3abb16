//! CANopen over EtherCAT, device side: an object dictionary per device and the servers that
//! answer SDO and SDO Information requests from it.
//!
//! Design: the dictionary ([`od::Od`]) is the hub of a CoE device. The SDO server
//! ([`access`] for the rules, `server` for the transfer forms) and the SDO Information server
//! (`info`) read and write it from the mailbox; the process data is packed from / unpacked into
//! it with the layout of the current PDO assignment and mapping ([`pdo`]); device behaviours
//! (e.g. the CiA 402 drive) read their commands from it and write their actual values into
//! it. The dictionary is generated from the device's description ([`standard::build`]).
//!
//! The codecs are `ecat_wire::coe`; this module only decides what to answer.

pub mod access;
pub(crate) mod info;
pub mod od;
pub mod pdo;
mod server;
pub mod standard;

use ecat_wire::al::AlState;
use ecat_wire::coe::{parse_coe, CoeService};
use ecat_wire::mailbox::MailboxErrorCode;
pub use od::Od;

/// The CoE state of one device: its dictionary (with the power-on copy) and the SDO
/// transfer in progress.
#[derive(Debug, Clone)]
pub(crate) struct Coe {
    /// The live dictionary.
    pub od: Od,
    initial: Od,
    transfer: server::Transfer,
    /// The device supports complete access (SII CoE details bit 5).
    pub complete_access: bool,
}

impl Coe {
    /// A device with dictionary `od`.
    pub fn new(od: Od, complete_access: bool) -> Coe {
        Coe {
            initial: od.clone(),
            od,
            transfer: Default::default(),
            complete_access,
        }
    }

    /// Power-on: the dictionary returns to its initial values.
    pub fn reset(&mut self) {
        self.od = self.initial.clone();
        self.transfer = Default::default();
    }

    /// The mailbox was closed (INIT): forget the transfer in progress.
    pub fn close(&mut self) {
        self.transfer = Default::default();
    }

    /// Answer one whole CoE message (already checked to be of mailbox type CoE with a
    /// sane length). `mbx` is the send mailbox (SM1) size. Replies carry counter 0.
    /// A message the CoE layer cannot take gives a mailbox error code: mailbox length below
    /// the service's minimum (10 for SDO, 6 for SDO Information) → 0x0008 (our choice), an
    /// undefined or unserved CoE service → 0x0004.
    pub fn handle(
        &mut self,
        state: AlState,
        msg: &[u8],
        mbx: usize,
    ) -> Result<Vec<Vec<u8>>, MailboxErrorCode> {
        let len = u16::from_le_bytes([msg[0], msg[1]]) as usize;
        let Ok((_, coe, _)) = parse_coe(msg) else {
            return Err(if len < 2 {
                MailboxErrorCode::INVALID_SIZE
            } else {
                MailboxErrorCode::SERVICE_NOT_SUPPORTED
            });
        };
        let ctx = access::Ctx {
            state,
            complete_access: self.complete_access,
        };
        match coe.service {
            CoeService::SdoRequest if len < 10 => Err(MailboxErrorCode::INVALID_SIZE),
            CoeService::SdoRequest => {
                let r = server::handle(&mut self.transfer, &mut self.od, &ctx, msg, mbx);
                Ok(if r.is_empty() { vec![] } else { vec![r] })
            }
            CoeService::SdoInfo if len < 6 => Err(MailboxErrorCode::INVALID_SIZE),
            CoeService::SdoInfo => Ok(info::handle(&self.od, msg, mbx)),
            _ => Err(MailboxErrorCode::SERVICE_NOT_SUPPORTED),
        }
    }
}
