//! Ethernet II framing and the 2-byte EtherCAT frame header.
//!
//! [`EthernetFrame`] is a view over a whole Ethernet frame (an optional 802.1Q tag is skipped);
//! [`EcatFrame`] is a view over the EtherCAT payload (header + datagrams, then padding);
//! [`FrameBuilder`] lays datagrams into a caller's buffer in place, chaining the M bits and
//! writing the header length and minimum-size padding on [`FrameBuilder::finish`].

use crate::datagram::{Datagram, DatagramRepr, Datagrams, DatagramsMut, OVERHEAD};
use crate::{le16, put16, Command, Error, Result};

/// EtherType of EtherCAT (sent big-endian: `88 A4`).
pub const ETHERTYPE_ETHERCAT: u16 = 0x88A4;
/// EtherType of an 802.1Q VLAN tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// Bytes of an Ethernet II header without VLAN tag.
pub const ETH_HEADER_LEN: usize = 14;
/// Bytes of the EtherCAT frame header.
pub const ECAT_HEADER_LEN: usize = 2;
/// Minimum Ethernet frame length without FCS; shorter frames are zero-padded.
pub const ETH_MIN_LEN: usize = 60;
/// Maximum Ethernet frame length without FCS for a 1500-byte MTU.
pub const ETH_MAX_LEN: usize = 1514;
/// Maximum bytes of datagrams in one frame (1500 − 2).
pub const MAX_DATAGRAMS_LEN: usize = 1498;
/// EtherCAT header type for datagrams (DLPDU).
pub const TYPE_DATAGRAMS: u8 = 1;
/// Broadcast MAC, the usual destination of EtherCAT frames.
pub const BROADCAST_MAC: [u8; 6] = [0xFF; 6];

/// A checked view over an Ethernet II frame.
#[derive(Debug, Clone, Copy)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wrap a buffer holding an Ethernet frame (checks the header fits).
    pub fn new_checked(buf: T) -> Result<Self> {
        let b = buf.as_ref();
        if b.len() < ETH_HEADER_LEN {
            return Err(Error::Truncated);
        }
        if u16::from_be_bytes([b[12], b[13]]) == ETHERTYPE_VLAN && b.len() < ETH_HEADER_LEN + 4 {
            return Err(Error::Truncated);
        }
        Ok(EthernetFrame { buf })
    }
    /// Destination MAC.
    pub fn dst(&self) -> [u8; 6] {
        let mut m = [0; 6];
        m.copy_from_slice(&self.buf.as_ref()[0..6]);
        m
    }
    /// Source MAC.
    pub fn src(&self) -> [u8; 6] {
        let mut m = [0; 6];
        m.copy_from_slice(&self.buf.as_ref()[6..12]);
        m
    }
    fn type_offset(&self) -> usize {
        let b = self.buf.as_ref();
        if u16::from_be_bytes([b[12], b[13]]) == ETHERTYPE_VLAN {
            16
        } else {
            12
        }
    }
    /// EtherType after any VLAN tag.
    pub fn ethertype(&self) -> u16 {
        let o = self.type_offset();
        let b = self.buf.as_ref();
        u16::from_be_bytes([b[o], b[o + 1]])
    }
    /// Offset of the payload (14, or 18 with a VLAN tag).
    pub fn payload_offset(&self) -> usize {
        self.type_offset() + 2
    }
    /// The payload after the Ethernet header.
    pub fn payload(&self) -> &[u8] {
        &self.buf.as_ref()[self.payload_offset()..]
    }
    /// True if the source MAC has the locally-administered bit, which the first SubDevice sets
    /// on frames it returns; tells a returned frame from the MainDevice's own transmitted copy.
    pub fn src_locally_administered(&self) -> bool {
        self.buf.as_ref()[6] & 0x02 != 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    /// Set the source MAC.
    pub fn set_src(&mut self, mac: [u8; 6]) {
        self.buf.as_mut()[6..12].copy_from_slice(&mac);
    }
    /// Set the locally-administered bit in the source MAC (as a returning SubDevice does).
    pub fn mark_returned(&mut self) {
        self.buf.as_mut()[6] |= 0x02;
    }
    /// The payload after the Ethernet header, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let o = self.payload_offset();
        &mut self.buf.as_mut()[o..]
    }
}

/// A checked view over an EtherCAT payload: 2-byte header, datagrams, padding.
#[derive(Debug, Clone, Copy)]
pub struct EcatFrame<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> EcatFrame<T> {
    /// Wrap a payload; checks the header, its type, and that its length fits the buffer.
    pub fn new_checked(buf: T) -> Result<Self> {
        let b = buf.as_ref();
        if b.len() < ECAT_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let w = le16(b, 0);
        if (w >> 12) as u8 != TYPE_DATAGRAMS {
            return Err(Error::UnsupportedType);
        }
        let len = (w & 0x07FF) as usize;
        if len + ECAT_HEADER_LEN > b.len() {
            return Err(Error::Truncated);
        }
        if len < OVERHEAD {
            return Err(Error::BadLength);
        }
        Ok(EcatFrame { buf })
    }
    /// Declared length of the datagrams.
    pub fn datagrams_len(&self) -> usize {
        (le16(self.buf.as_ref(), 0) & 0x07FF) as usize
    }
    /// Header type field (1 = datagrams).
    pub fn frame_type(&self) -> u8 {
        (le16(self.buf.as_ref(), 0) >> 12) as u8
    }
    /// The datagram bytes (declared length, without padding).
    pub fn body(&self) -> &[u8] {
        &self.buf.as_ref()[ECAT_HEADER_LEN..ECAT_HEADER_LEN + self.datagrams_len()]
    }
    /// Iterate the datagrams.
    pub fn datagrams(&self) -> Datagrams<'_> {
        Datagrams::new(self.body())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EcatFrame<T> {
    /// Iterate the datagrams writably.
    pub fn datagrams_mut(&mut self) -> DatagramsMut<'_> {
        let len = self.datagrams_len();
        DatagramsMut::new(&mut self.buf.as_mut()[ECAT_HEADER_LEN..ECAT_HEADER_LEN + len])
    }
}

/// Parse a whole Ethernet frame down to its EtherCAT payload.
pub fn parse_ethernet(frame: &[u8]) -> Result<EcatFrame<&[u8]>> {
    let eth = EthernetFrame::new_checked(frame)?;
    if eth.ethertype() != ETHERTYPE_ETHERCAT {
        return Err(Error::NotEtherCat);
    }
    let off = eth.payload_offset();
    EcatFrame::new_checked(&frame[off..])
}

/// Builds one Ethernet frame of datagrams in place in a caller's buffer.
///
/// ```
/// use ecat_wire::{FrameBuilder, Command};
/// let mut buf = [0u8; 1514];
/// let mut fb = FrameBuilder::new(&mut buf, [2, 0, 0, 0, 0, 1]).unwrap();
/// fb.push_physical(Command::Brd, 0, 0, 0x0000, 2).unwrap();
/// let len = fb.finish();
/// assert_eq!(len, 60); // padded to the Ethernet minimum
/// ```
#[derive(Debug)]
pub struct FrameBuilder<'a> {
    buf: &'a mut [u8],
    /// Offset of the next datagram.
    pos: usize,
    /// Offset of the last datagram pushed, to set its M bit when another follows.
    last: Option<usize>,
}

impl<'a> FrameBuilder<'a> {
    /// Offset of the first datagram in the buffer.
    pub const FIRST: usize = ETH_HEADER_LEN + ECAT_HEADER_LEN;

    /// Start a frame: broadcast destination, `src` MAC, EtherType 0x88A4.
    pub fn new(buf: &'a mut [u8], src: [u8; 6]) -> Result<Self> {
        if buf.len() < ETH_MIN_LEN {
            return Err(Error::NoSpace);
        }
        buf[0..6].copy_from_slice(&BROADCAST_MAC);
        buf[6..12].copy_from_slice(&src);
        buf[12..14].copy_from_slice(&ETHERTYPE_ETHERCAT.to_be_bytes());
        Ok(FrameBuilder {
            buf,
            pos: Self::FIRST,
            last: None,
        })
    }

    /// Bytes of datagram room left in this frame (1498-byte limit and buffer size).
    pub fn remaining(&self) -> usize {
        let limit = (Self::FIRST + MAX_DATAGRAMS_LEN).min(self.buf.len());
        limit.saturating_sub(self.pos)
    }

    /// True if a datagram with `data_len` bytes of data still fits.
    pub fn fits(&self, data_len: usize) -> bool {
        OVERHEAD + data_len <= self.remaining()
    }

    /// Number of datagram bytes so far.
    pub fn datagrams_len(&self) -> usize {
        self.pos - Self::FIRST
    }

    /// True if no datagram has been pushed.
    pub fn is_empty(&self) -> bool {
        self.last.is_none()
    }

    /// Append a datagram described by `repr` (its M bit is managed here); returns its offset
    /// in the buffer and a view to fill the data. The data is zeroed.
    pub fn push(&mut self, repr: DatagramRepr) -> Result<(usize, Datagram<&mut [u8]>)> {
        let total = repr.total_len();
        if total > self.remaining() {
            return Err(Error::NoSpace);
        }
        if let Some(last) = self.last {
            let w = le16(self.buf, last + 6);
            put16(self.buf, last + 6, w | 0x8000);
        }
        let off = self.pos;
        self.last = Some(off);
        self.pos += total;
        let repr = DatagramRepr {
            more: false,
            ..repr
        };
        let mut d = repr.emit(&mut self.buf[off..off + total])?;
        d.data_mut().fill(0);
        Ok((off, d))
    }

    /// Append a physical-address datagram (`adp`, `ado`) with zeroed data.
    pub fn push_physical(
        &mut self,
        cmd: Command,
        index: u8,
        adp: u16,
        ado: u16,
        data_len: u16,
    ) -> Result<(usize, Datagram<&mut [u8]>)> {
        self.push(DatagramRepr::physical(cmd, index, adp, ado, data_len))
    }

    /// Write the EtherCAT header and pad to the Ethernet minimum; returns the frame length.
    pub fn finish(self) -> usize {
        let len = self.datagrams_len() as u16;
        put16(
            self.buf,
            ETH_HEADER_LEN,
            len | ((TYPE_DATAGRAMS as u16) << 12),
        );
        let end = self.pos.max(ETH_MIN_LEN);
        self.buf[self.pos..end].fill(0);
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_word_matches_reference_example() {
        // One BRD with 2 data bytes: datagram 14 bytes, header 0x100E -> `0E 10`.
        let mut buf = [0xA5u8; 100];
        let mut fb = FrameBuilder::new(&mut buf, [0x02, 0, 0, 0, 0, 0]).unwrap();
        fb.push_physical(Command::Brd, 0, 0, 0, 2).unwrap();
        let n = fb.finish();
        assert_eq!(n, 60);
        assert_eq!(&buf[12..16], &[0x88, 0xA4, 0x0E, 0x10]);
        assert!(buf[30..60].iter().all(|&b| b == 0), "padding is zeros");
        assert_eq!(buf[60], 0xA5, "nothing written past the frame");
        let f = parse_ethernet(&buf[..n]).unwrap();
        assert_eq!(f.datagrams_len(), 14);
        assert_eq!(f.datagrams().count(), 1);
    }

    #[test]
    fn builder_chains_more_bits() {
        let mut buf = [0u8; 1514];
        let mut fb = FrameBuilder::new(&mut buf, [0; 6]).unwrap();
        for i in 0..3 {
            fb.push_physical(Command::Fprd, i, 0x1001, 0x130, 2)
                .unwrap();
        }
        let n = fb.finish();
        let f = parse_ethernet(&buf[..n]).unwrap();
        let flags: std::vec::Vec<_> = f.datagrams().map(|d| d.unwrap().more()).collect();
        assert_eq!(flags, [true, true, false]);
    }

    #[test]
    fn builder_refuses_overflow() {
        let mut buf = [0u8; 1514];
        let mut fb = FrameBuilder::new(&mut buf, [0; 6]).unwrap();
        assert!(fb.fits(1486));
        assert!(!fb.fits(1487));
        fb.push_physical(Command::Lrw, 0, 0, 0, 1486).unwrap();
        assert_eq!(fb.remaining(), 0);
        assert_eq!(
            fb.push_physical(Command::Nop, 0, 0, 0, 0).unwrap_err(),
            Error::NoSpace
        );
    }

    #[test]
    fn bad_frames_are_refused() {
        assert_eq!(parse_ethernet(&[0; 10]).unwrap_err(), Error::Truncated);
        let mut f = [0u8; 60];
        f[12] = 0x08;
        assert_eq!(parse_ethernet(&f).unwrap_err(), Error::NotEtherCat);
        f[12..14].copy_from_slice(&[0x88, 0xA4]);
        f[14..16].copy_from_slice(&[0x0E, 0x20]); // type 2
        assert_eq!(parse_ethernet(&f).unwrap_err(), Error::UnsupportedType);
        f[14..16].copy_from_slice(&[0xFF, 0x17]); // length 2047 > buffer
        assert_eq!(parse_ethernet(&f).unwrap_err(), Error::Truncated);
    }

    #[test]
    fn vlan_tag_is_skipped() {
        let mut f = [0u8; 64];
        f[12..14].copy_from_slice(&[0x81, 0x00]);
        f[16..18].copy_from_slice(&[0x88, 0xA4]);
        f[18..20].copy_from_slice(&[0x0C, 0x10]);
        let eth = EthernetFrame::new_checked(&f[..]).unwrap();
        assert_eq!(eth.ethertype(), ETHERTYPE_ETHERCAT);
        assert_eq!(eth.payload_offset(), 18);
        assert!(parse_ethernet(&f).is_ok());
    }

    #[test]
    fn returned_bit() {
        let mut f = [0u8; 60];
        let mut eth = EthernetFrame::new_checked(&mut f[..]).unwrap();
        assert!(!eth.src_locally_administered());
        eth.mark_returned();
        assert!(eth.src_locally_administered());
    }
}
