//! Vendor specific over EtherCAT (mailbox type 0xF): the 6-byte VoE header (`u32 vendor id |
//! u16 vendor type`) followed by vendor data the protocol does not interpret.
//!
//! [`VoePacket`] is a checked view over the VoE part of a message; [`VoeRepr`] the decoded
//! header with the data borrowed from the buffer; [`parse_voe`] / [`emit_voe`] handle whole
//! mailbox messages.

use crate::mailbox::{self, MailboxHeaderRepr, MailboxType};
use crate::{le16, le32, put16, put32, Error, Result};

/// Bytes of the VoE header.
pub const HEADER_LEN: usize = 6;
/// Offset of the vendor data in a whole mailbox message (6 + 6).
pub const DATA_OFFSET: usize = mailbox::HEADER_LEN + HEADER_LEN;

/// The most vendor data bytes one message carries in a mailbox of `mailbox_size` bytes.
pub fn max_data(mailbox_size: usize) -> usize {
    mailbox_size.saturating_sub(DATA_OFFSET)
}

/// A checked view over the VoE part of a message (the mailbox payload).
#[derive(Debug, Clone, Copy)]
pub struct VoePacket<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> VoePacket<T> {
    /// Wrap a mailbox payload; [`Error::Truncated`] if shorter than the VoE header.
    pub fn new_checked(buf: T) -> Result<Self> {
        if buf.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(VoePacket { buf })
    }
    /// Vendor id.
    pub fn vendor_id(&self) -> u32 {
        le32(self.buf.as_ref(), 0)
    }
    /// Vendor type.
    pub fn vendor_type(&self) -> u16 {
        le16(self.buf.as_ref(), 4)
    }
    /// The vendor data after the header.
    pub fn data(&self) -> &[u8] {
        &self.buf.as_ref()[HEADER_LEN..]
    }
}

/// A decoded VoE message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VoeRepr<'a> {
    /// Vendor id (as in the SubDevice's identity).
    pub vendor_id: u32,
    /// Vendor-defined message type.
    pub vendor_type: u16,
    /// Vendor data.
    pub data: &'a [u8],
}

impl<'a> VoeRepr<'a> {
    /// Decode a checked packet.
    pub fn parse<T: AsRef<[u8]>>(p: &'a VoePacket<T>) -> Self {
        VoeRepr {
            vendor_id: p.vendor_id(),
            vendor_type: p.vendor_type(),
            data: p.data(),
        }
    }
    /// Decode a mailbox payload (VoE header and data).
    pub fn parse_bytes(b: &'a [u8]) -> Result<Self> {
        let p = VoePacket::new_checked(b)?;
        Ok(VoeRepr {
            vendor_id: p.vendor_id(),
            vendor_type: p.vendor_type(),
            data: &b[HEADER_LEN..],
        })
    }
    /// Bytes this message takes after the mailbox header.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.data.len()
    }
    /// Write header and data at the start of `b`; returns the length.
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        if b.len() < len {
            return Err(Error::NoSpace);
        }
        put32(b, 0, self.vendor_id);
        put16(b, 4, self.vendor_type);
        b[HEADER_LEN..len].copy_from_slice(self.data);
        Ok(len)
    }
}

/// Split a whole VoE mailbox message into its mailbox header and VoE message;
/// [`Error::BadValue`] if it is not of type VoE.
pub fn parse_voe(msg: &[u8]) -> Result<(MailboxHeaderRepr, VoeRepr<'_>)> {
    let (mbx, payload) = mailbox::parse_typed(msg, MailboxType::Voe)?;
    Ok((mbx, VoeRepr::parse_bytes(payload)?))
}

/// Write a whole VoE message (mailbox header with `counter`); returns its length.
pub fn emit_voe(buf: &mut [u8], counter: u8, repr: &VoeRepr<'_>) -> Result<usize> {
    let len = repr.buffer_len();
    mailbox::emit_typed(buf, MailboxType::Voe, counter, len, |p| repr.emit(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bytes() {
        let r = VoeRepr {
            vendor_id: 0x0000_0002,
            vendor_type: 0x1234,
            data: b"hi",
        };
        let mut b = [0xA5u8; 16];
        let n = emit_voe(&mut b, 5, &r).unwrap();
        assert_eq!(
            &b[..n + 1],
            &[8, 0, 0, 0, 0, 0x5F, 2, 0, 0, 0, 0x34, 0x12, b'h', b'i', 0xA5]
        );
        assert_eq!(parse_voe(&b[..n]).unwrap().1, r);
        assert_eq!(r.emit(&mut [0; 7]), Err(Error::NoSpace));
        assert_eq!(
            VoePacket::new_checked([0u8; 5]).unwrap_err(),
            Error::Truncated
        );
        b[5] = 0x53;
        assert_eq!(parse_voe(&b[..n]).unwrap_err(), Error::BadValue);
        assert_eq!(max_data(128), 116);
    }

    proptest! {
        #[test]
        fn round_trip(vid: u32, vt: u16, data in proptest::collection::vec(any::<u8>(), 0..64),
                      cnt in 0u8..8) {
            let r = VoeRepr { vendor_id: vid, vendor_type: vt, data: &data };
            let mut b = [0u8; 80];
            let n = emit_voe(&mut b, cnt, &r).unwrap();
            let (h, back) = parse_voe(&b[..n]).unwrap();
            prop_assert_eq!(h.counter, cnt);
            prop_assert_eq!(back, r);
        }
    }
}
