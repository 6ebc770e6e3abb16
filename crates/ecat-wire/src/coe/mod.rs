//! CANopen over EtherCAT: the 2-byte CoE header, SDO transfers ([`sdo`]), SDO Information
//! ([`info`]), emergencies and the base data type codes ([`DataType`]).
//!
//! A CoE message is a mailbox message of type CoE: `mailbox header (6) | CoE header (2) |
//! service data`. [`parse_coe`] peels the two headers off a whole message and [`emit_coe`]
//! writes them, leaving the service data to the caller; the helpers in [`sdo`] and [`info`]
//! build and read complete messages on top of them.

use crate::mailbox::{self, MailboxHeaderRepr, MailboxType};
use crate::{le16, put16, Error, Result};

mod abort;
mod datatype;
pub mod info;
pub mod sdo;

pub use datatype::DataType;
pub use sdo::{SdoAbortCode, SdoRequest, SdoResponse};

/// Bytes of the CoE header.
pub const HEADER_LEN: usize = 2;
/// Offset of the service data in a whole mailbox message (6 + 2).
pub const DATA_OFFSET: usize = mailbox::HEADER_LEN + HEADER_LEN;

/// CoE service (bits 15:12 of the CoE header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CoeService {
    /// 1: emergency.
    Emergency = 1,
    /// 2: SDO request.
    SdoRequest = 2,
    /// 3: SDO response.
    SdoResponse = 3,
    /// 4: TxPDO.
    TxPdo = 4,
    /// 5: RxPDO.
    RxPdo = 5,
    /// 6: TxPDO remote request.
    TxPdoRemoteRequest = 6,
    /// 7: RxPDO remote request.
    RxPdoRemoteRequest = 7,
    /// 8: SDO Information.
    SdoInfo = 8,
}

impl CoeService {
    /// Decode a service number; `None` for 0 and 9..15.
    pub fn from_u8(v: u8) -> Option<CoeService> {
        use CoeService::*;
        Some(match v {
            1 => Emergency,
            2 => SdoRequest,
            3 => SdoResponse,
            4 => TxPdo,
            5 => RxPdo,
            6 => TxPdoRemoteRequest,
            7 => RxPdoRemoteRequest,
            8 => SdoInfo,
            _ => return None,
        })
    }
    /// A short name.
    pub fn name(self) -> &'static str {
        use CoeService::*;
        match self {
            Emergency => "Emergency",
            SdoRequest => "SDO request",
            SdoResponse => "SDO response",
            TxPdo => "TxPDO",
            RxPdo => "RxPDO",
            TxPdoRemoteRequest => "TxPDO remote request",
            RxPdoRemoteRequest => "RxPDO remote request",
            SdoInfo => "SDO information",
        }
    }
}

/// The decoded CoE header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoeHeaderRepr {
    /// Number (PDO number for PDO services, 0 for SDO and emergency), 0..511.
    pub number: u16,
    /// Service.
    pub service: CoeService,
}

impl CoeHeaderRepr {
    /// A header for `service` with number 0.
    pub fn new(service: CoeService) -> Self {
        CoeHeaderRepr { number: 0, service }
    }
    /// Decode the 2 header bytes; [`Error::BadValue`] for an undefined service.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let w = le16(b, 0);
        Ok(CoeHeaderRepr {
            number: w & 0x01FF,
            service: CoeService::from_u8((w >> 12) as u8).ok_or(Error::BadValue)?,
        })
    }
    /// Encode the 2 header bytes; [`Error::BadValue`] if the number exceeds 511.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < HEADER_LEN {
            return Err(Error::NoSpace);
        }
        if self.number > 0x01FF {
            return Err(Error::BadValue);
        }
        put16(b, 0, self.number | ((self.service as u16) << 12));
        Ok(())
    }
}

/// Split a whole CoE mailbox message into its mailbox header, CoE header and service data
/// (the bytes after the CoE header, as many as the mailbox length announces).
/// [`Error::BadValue`] if the message is not of type CoE.
pub fn parse_coe(msg: &[u8]) -> Result<(MailboxHeaderRepr, CoeHeaderRepr, &[u8])> {
    let (mbx, payload) = mailbox::parse_message(msg)?;
    if mbx.kind != MailboxType::Coe {
        return Err(Error::BadValue);
    }
    let coe = CoeHeaderRepr::parse(payload)?;
    Ok((mbx, coe, &payload[HEADER_LEN..]))
}

/// Write the mailbox header (type CoE, `counter`, length `2 + data_len`) and the CoE header
/// for `service`, and return the `data_len` bytes of service data to fill (cleared to 0).
pub fn emit_coe(
    buf: &mut [u8],
    counter: u8,
    service: CoeService,
    data_len: usize,
) -> Result<&mut [u8]> {
    let p = mailbox::emit_message(buf, MailboxType::Coe, counter, HEADER_LEN + data_len)?;
    CoeHeaderRepr::new(service).emit(p)?;
    let data = &mut p[HEADER_LEN..];
    data.fill(0);
    Ok(data)
}

/// An emergency message (service data of CoE service 1, 8 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EmergencyRepr {
    /// CiA 301/402 error code.
    pub error_code: u16,
    /// Error register (copy of object 0x1001).
    pub error_register: u8,
    /// Manufacturer-specific data.
    pub data: [u8; 5],
}

impl EmergencyRepr {
    /// Bytes of service data.
    pub const LEN: usize = 8;
    /// Decode the 8 bytes after the CoE header.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        let mut data = [0; 5];
        data.copy_from_slice(&b[3..8]);
        Ok(EmergencyRepr {
            error_code: le16(b, 0),
            error_register: b[2],
            data,
        })
    }
    /// Encode the 8 bytes after the CoE header.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < Self::LEN {
            return Err(Error::NoSpace);
        }
        put16(b, 0, self.error_code);
        b[2] = self.error_register;
        b[3..8].copy_from_slice(&self.data);
        Ok(())
    }
}

/// Write a whole emergency message (length 10); returns its length (16).
pub fn emit_emergency(buf: &mut [u8], counter: u8, e: &EmergencyRepr) -> Result<usize> {
    e.emit(emit_coe(
        buf,
        counter,
        CoeService::Emergency,
        EmergencyRepr::LEN,
    )?)?;
    Ok(DATA_OFFSET + EmergencyRepr::LEN)
}

/// Parse a whole message as an emergency; [`Error::BadValue`] if it is another CoE service.
pub fn parse_emergency(msg: &[u8]) -> Result<EmergencyRepr> {
    let (_, coe, data) = parse_coe(msg)?;
    if coe.service != CoeService::Emergency {
        return Err(Error::BadValue);
    }
    EmergencyRepr::parse(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coe_header_bytes() {
        let mut b = [0xA5u8; 3];
        CoeHeaderRepr::new(CoeService::SdoRequest)
            .emit(&mut b)
            .unwrap();
        assert_eq!(b, [0x00, 0x20, 0xA5]);
        let r = CoeHeaderRepr::parse(&[0x05, 0x31]).unwrap();
        assert_eq!((r.number, r.service), (0x105, CoeService::SdoResponse));
        assert_eq!(CoeHeaderRepr::parse(&[0, 0x90]), Err(Error::BadValue));
        assert_eq!(CoeHeaderRepr::parse(&[0]), Err(Error::Truncated));
        let bad = CoeHeaderRepr {
            number: 512,
            service: CoeService::TxPdo,
        };
        assert_eq!(bad.emit(&mut [0; 2]), Err(Error::BadValue));
        for s in 1..=8 {
            let svc = CoeService::from_u8(s).unwrap();
            assert_eq!(svc as u8, s);
            assert!(!svc.name().is_empty());
        }
        assert_eq!(CoeService::from_u8(0), None);
    }

    #[test]
    fn emergency_round_trip() {
        let e = EmergencyRepr {
            error_code: 0x8210,
            error_register: 0x11,
            data: [1, 2, 3, 4, 5],
        };
        let mut b = [0xA5u8; 17];
        assert_eq!(emit_emergency(&mut b, 4, &e).unwrap(), 16);
        assert_eq!(
            b,
            [0x0A, 0, 0, 0, 0, 0x43, 0x00, 0x10, 0x10, 0x82, 0x11, 1, 2, 3, 4, 5, 0xA5]
        );
        assert_eq!(parse_emergency(&b).unwrap(), e);
        // An SDO response is not an emergency.
        b[7] = 0x30;
        assert_eq!(parse_emergency(&b), Err(Error::BadValue));
        // Not CoE at all.
        b[5] = 0x44;
        assert_eq!(parse_coe(&b).unwrap_err(), Error::BadValue);
        assert_eq!(EmergencyRepr::parse(&[0; 7]), Err(Error::Truncated));
    }
}
