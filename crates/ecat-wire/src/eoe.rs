//! Ethernet over EtherCAT (mailbox type 2): the 4-byte EoE header, fragmentation and
//! reassembly of Ethernet frames, and the IP parameter messages.
//!
//! Header after the mailbox header: word 1 = `frame type:4 | port:4 | last fragment:1 | time
//! appended:1 | time requested:1 | reserved:5`; word 2 = `fragment number:6 | offset:6 | frame
//! number:4` for fragment data, or a result code ([`EoeResult`]) for responses. The 6-bit
//! offset counts 32-byte blocks: fragment 0 carries the whole frame's size rounded up to
//! blocks, later fragments their offset in the frame. Every fragment but the last carries a
//! multiple of 32 bytes; a last fragment with "time appended" ends with a 4-byte timestamp.
//!
//! [`fragments`] cuts a frame into the fragments a mailbox of a given size carries (as SOEM's
//! `ecx_EOEsend` does); [`Reassembler`] collects them back into a caller-supplied buffer
//! without allocating. [`IpParams`] is the body of the set/get IP parameter messages: a
//! `u32` flag word then MAC, IP, subnet, gateway, DNS server and DNS name at fixed offsets
//! (58 bytes, IP addresses in network byte order), each present when its flag is set.

use crate::mailbox::{self, MailboxHeaderRepr, MailboxType};
use crate::{le16, le32, put16, put32, Error, Result};
use core::fmt;
use core::net::Ipv4Addr;

/// Bytes of the EoE header.
pub const HEADER_LEN: usize = 4;
/// Offset of the EoE data in a whole mailbox message (6 + 4).
pub const DATA_OFFSET: usize = mailbox::HEADER_LEN + HEADER_LEN;
/// Fragment offsets and sizes count blocks of this many bytes.
pub const BLOCK: usize = 32;
/// Bytes of the timestamp a last fragment carries when "time appended" is set.
pub const TIMESTAMP_LEN: usize = 4;
/// The largest frame the 6-bit size field can announce (63 blocks).
pub const MAX_FRAME: usize = 63 * BLOCK;

/// EoE frame type (word 1, bits 3..0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EoeFrameType {
    /// 0: a fragment of an Ethernet frame.
    FragmentData = 0,
    /// 1: timestamp response.
    TimestampResponse = 1,
    /// 2: set IP parameter request.
    SetIpRequest = 2,
    /// 3: set IP parameter response.
    SetIpResponse = 3,
    /// 4: set address filter request.
    SetMacFilterRequest = 4,
    /// 5: set address filter response.
    SetMacFilterResponse = 5,
    /// 6: get IP parameter request.
    GetIpRequest = 6,
    /// 7: get IP parameter response.
    GetIpResponse = 7,
    /// 8: get address filter request.
    GetMacFilterRequest = 8,
    /// 9: get address filter response.
    GetMacFilterResponse = 9,
}

impl EoeFrameType {
    /// Decode the 4-bit frame type; `None` for 10..15.
    pub fn from_u8(v: u8) -> Option<EoeFrameType> {
        use EoeFrameType::*;
        Some(match v & 0x0F {
            0 => FragmentData,
            1 => TimestampResponse,
            2 => SetIpRequest,
            3 => SetIpResponse,
            4 => SetMacFilterRequest,
            5 => SetMacFilterResponse,
            6 => GetIpRequest,
            7 => GetIpResponse,
            8 => GetMacFilterRequest,
            9 => GetMacFilterResponse,
            _ => return None,
        })
    }
    /// Whether word 2 is a result code (the response types 3, 5, 7, 9).
    pub fn is_response(self) -> bool {
        matches!(
            self,
            EoeFrameType::SetIpResponse
                | EoeFrameType::SetMacFilterResponse
                | EoeFrameType::GetIpResponse
                | EoeFrameType::GetMacFilterResponse
        )
    }
}

/// The result code of an EoE response (word 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EoeResult(pub u16);

impl EoeResult {
    /// 0x0000: success.
    pub const SUCCESS: Self = Self(0x0000);
    /// 0x0001: unspecified error.
    pub const UNSPECIFIED: Self = Self(0x0001);
    /// 0x0002: unsupported frame type.
    pub const UNSUPPORTED_FRAME_TYPE: Self = Self(0x0002);
    /// 0x0201: no IP support.
    pub const NO_IP_SUPPORT: Self = Self(0x0201);
    /// 0x0202: no DHCP support.
    pub const NO_DHCP_SUPPORT: Self = Self(0x0202);
    /// 0x0401: no address filter support.
    pub const NO_FILTER_SUPPORT: Self = Self(0x0401);

    /// The text for this code.
    pub fn description(self) -> &'static str {
        match self.0 {
            0x0000 => "success",
            0x0001 => "unspecified error",
            0x0002 => "unsupported frame type",
            0x0201 => "no IP support",
            0x0202 => "no DHCP support",
            0x0401 => "no address filter support",
            _ => "unknown EoE result",
        }
    }
}

impl fmt::Display for EoeResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04X} ({})", self.0, self.description())
    }
}

/// A checked view over the EoE part of a message (the mailbox payload).
#[derive(Debug, Clone, Copy)]
pub struct EoePacket<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> EoePacket<T> {
    /// Wrap a mailbox payload; [`Error::Truncated`] if shorter than the EoE header.
    pub fn new_checked(buf: T) -> Result<Self> {
        if buf.as_ref().len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(EoePacket { buf })
    }
    fn word1(&self) -> u16 {
        le16(self.buf.as_ref(), 0)
    }
    /// Word 2: fragment fields, or the result code of a response.
    pub fn word2(&self) -> u16 {
        le16(self.buf.as_ref(), 2)
    }
    /// Raw frame type (0..15).
    pub fn frame_type_raw(&self) -> u8 {
        (self.word1() & 0x0F) as u8
    }
    /// Port (0..15).
    pub fn port(&self) -> u8 {
        ((self.word1() >> 4) & 0x0F) as u8
    }
    /// Last fragment of a frame.
    pub fn last_fragment(&self) -> bool {
        self.word1() & (1 << 8) != 0
    }
    /// A timestamp follows the data of this (last) fragment.
    pub fn time_appended(&self) -> bool {
        self.word1() & (1 << 9) != 0
    }
    /// The sender asks for a timestamp response.
    pub fn time_requested(&self) -> bool {
        self.word1() & (1 << 10) != 0
    }
    /// Fragment number (0..63).
    pub fn fragment_no(&self) -> u8 {
        (self.word2() & 0x3F) as u8
    }
    /// Offset (or, in fragment 0, the frame size) in 32-byte blocks (0..63).
    pub fn offset_blocks(&self) -> u8 {
        ((self.word2() >> 6) & 0x3F) as u8
    }
    /// Frame number (0..15).
    pub fn frame_no(&self) -> u8 {
        (self.word2() >> 12) as u8
    }
    /// The bytes after the header.
    pub fn data(&self) -> &[u8] {
        &self.buf.as_ref()[HEADER_LEN..]
    }
}

/// The decoded EoE header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EoeHeaderRepr {
    /// Frame type.
    pub frame_type: EoeFrameType,
    /// Port 0..15.
    pub port: u8,
    /// Last fragment (also set on the single-message IP parameter exchanges).
    pub last_fragment: bool,
    /// A 4-byte timestamp follows the data.
    pub time_appended: bool,
    /// A timestamp response is requested.
    pub time_requested: bool,
    /// Fragment number 0..63.
    pub fragment_no: u8,
    /// Offset or (fragment 0) frame size, in 32-byte blocks, 0..63.
    pub offset_blocks: u8,
    /// Frame number 0..15.
    pub frame_no: u8,
}

impl EoeHeaderRepr {
    /// A single-message header of `frame_type` (last fragment set, word 2 = 0).
    pub fn single(frame_type: EoeFrameType, port: u8) -> Self {
        EoeHeaderRepr {
            frame_type,
            port,
            last_fragment: true,
            time_appended: false,
            time_requested: false,
            fragment_no: 0,
            offset_blocks: 0,
            frame_no: 0,
        }
    }
    /// A response header of `frame_type` carrying `result` in word 2.
    pub fn response(frame_type: EoeFrameType, port: u8, result: EoeResult) -> Self {
        let mut h = Self::single(frame_type, port);
        h.set_word2(result.0);
        h
    }
    /// Word 2 as sent.
    pub fn word2(&self) -> u16 {
        (self.fragment_no as u16 & 0x3F)
            | (self.offset_blocks as u16 & 0x3F) << 6
            | (self.frame_no as u16 & 0x0F) << 12
    }
    fn set_word2(&mut self, w: u16) {
        self.fragment_no = (w & 0x3F) as u8;
        self.offset_blocks = ((w >> 6) & 0x3F) as u8;
        self.frame_no = (w >> 12) as u8;
    }
    /// The result code of a response (word 2).
    pub fn result(&self) -> EoeResult {
        EoeResult(self.word2())
    }
    /// Decode a checked packet's header; [`Error::BadValue`] for frame types 10..15.
    pub fn parse<T: AsRef<[u8]>>(p: &EoePacket<T>) -> Result<Self> {
        Ok(EoeHeaderRepr {
            frame_type: EoeFrameType::from_u8(p.frame_type_raw()).ok_or(Error::BadValue)?,
            port: p.port(),
            last_fragment: p.last_fragment(),
            time_appended: p.time_appended(),
            time_requested: p.time_requested(),
            fragment_no: p.fragment_no(),
            offset_blocks: p.offset_blocks(),
            frame_no: p.frame_no(),
        })
    }
    /// Write the 4 header bytes; [`Error::BadValue`] if a field exceeds its bits.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < HEADER_LEN {
            return Err(Error::NoSpace);
        }
        if self.port > 15 || self.fragment_no > 63 || self.offset_blocks > 63 || self.frame_no > 15
        {
            return Err(Error::BadValue);
        }
        let w1 = self.frame_type as u16
            | (self.port as u16) << 4
            | (self.last_fragment as u16) << 8
            | (self.time_appended as u16) << 9
            | (self.time_requested as u16) << 10;
        put16(b, 0, w1);
        put16(b, 2, self.word2());
        Ok(())
    }
}

/// A decoded EoE message: header and the data after it (borrowed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EoeRepr<'a> {
    /// The header.
    pub header: EoeHeaderRepr,
    /// The bytes after the header (including an appended timestamp).
    pub data: &'a [u8],
}

impl<'a> EoeRepr<'a> {
    /// The timestamp of a last fragment with "time appended" (the last 4 data bytes).
    pub fn timestamp(&self) -> Option<u32> {
        let n = self.data.len();
        (self.header.time_appended && self.header.last_fragment && n >= TIMESTAMP_LEN)
            .then(|| le32(self.data, n - TIMESTAMP_LEN))
    }
    /// The frame bytes of a fragment (the data without an appended timestamp).
    pub fn frame_data(&self) -> &'a [u8] {
        match self.timestamp() {
            Some(_) => &self.data[..self.data.len() - TIMESTAMP_LEN],
            None => self.data,
        }
    }
    /// Bytes after the mailbox header.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.data.len()
    }
}

/// Split a whole EoE mailbox message into its mailbox header and EoE message;
/// [`Error::BadValue`] if it is not of type EoE or the frame type is undefined.
pub fn parse_eoe(msg: &[u8]) -> Result<(MailboxHeaderRepr, EoeRepr<'_>)> {
    let (mbx, payload) = mailbox::parse_typed(msg, MailboxType::Eoe)?;
    let header = EoeHeaderRepr::parse(&EoePacket::new_checked(payload)?)?;
    let data = &payload[HEADER_LEN..];
    Ok((mbx, EoeRepr { header, data }))
}

/// Write a whole EoE message (mailbox header with `counter`, EoE header, data); returns its
/// length.
pub fn emit_eoe(buf: &mut [u8], counter: u8, repr: &EoeRepr<'_>) -> Result<usize> {
    let len = repr.buffer_len();
    mailbox::emit_typed(buf, MailboxType::Eoe, counter, len, |p| {
        repr.header.emit(p)?;
        p[HEADER_LEN..].copy_from_slice(repr.data);
        Ok(len)
    })
}

/// The most frame bytes one fragment may carry in a mailbox of `mailbox_size` bytes when
/// more fragments follow (a multiple of 32).
pub fn max_fragment(mailbox_size: usize) -> usize {
    (mailbox_size.saturating_sub(DATA_OFFSET) / BLOCK) * BLOCK
}

/// Iterator over the fragments of one frame: `(header, bytes)` pairs, see [`fragments`].
#[derive(Debug, Clone)]
pub struct Fragments<'a> {
    frame: &'a [u8],
    room: usize,
    offset: usize,
    fragment_no: u8,
    port: u8,
    frame_no: u8,
    done: bool,
}

/// Cut `frame` into the fragments a mailbox of `mailbox_size` bytes carries, for `port` and
/// `frame_no` (0..15): every fragment but the last holds a multiple of 32 bytes, the last one
/// as much as the mailbox holds. [`Error::BadLength`] if the frame exceeds [`MAX_FRAME`] or
/// the mailbox cannot carry a 32-byte block, [`Error::BadValue`] if port or frame number are
/// out of range.
pub fn fragments(
    frame: &[u8],
    mailbox_size: usize,
    port: u8,
    frame_no: u8,
) -> Result<Fragments<'_>> {
    if frame.len() > MAX_FRAME || max_fragment(mailbox_size) == 0 {
        return Err(Error::BadLength);
    }
    if port > 15 || frame_no > 15 {
        return Err(Error::BadValue);
    }
    Ok(Fragments {
        frame,
        room: mailbox_size - DATA_OFFSET,
        offset: 0,
        fragment_no: 0,
        port,
        frame_no,
        done: false,
    })
}

impl<'a> Iterator for Fragments<'a> {
    type Item = (EoeHeaderRepr, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = self.frame.len() - self.offset;
        let (n, last) = if rest <= self.room {
            (rest, true)
        } else {
            ((self.room / BLOCK) * BLOCK, false)
        };
        let blocks = if self.fragment_no == 0 {
            self.frame.len().div_ceil(BLOCK)
        } else {
            self.offset / BLOCK
        };
        let h = EoeHeaderRepr {
            frame_type: EoeFrameType::FragmentData,
            port: self.port,
            last_fragment: last,
            time_appended: false,
            time_requested: false,
            fragment_no: self.fragment_no,
            offset_blocks: blocks as u8,
            frame_no: self.frame_no,
        };
        let chunk = &self.frame[self.offset..self.offset + n];
        self.offset += n;
        self.fragment_no += 1;
        self.done = last;
        Some((h, chunk))
    }
}

/// Collects fragments of one frame into a caller-supplied buffer (no allocation).
#[derive(Debug, Clone)]
pub struct Reassembler<B: AsMut<[u8]> + AsRef<[u8]>> {
    buf: B,
    len: usize,
    size: usize,
    next_fragment: u8,
    frame_no: u8,
    active: bool,
}

impl<B: AsMut<[u8]> + AsRef<[u8]>> Reassembler<B> {
    /// A reassembler writing into `buf` (1536 bytes hold any Ethernet frame).
    pub fn new(buf: B) -> Self {
        Reassembler {
            buf,
            len: 0,
            size: 0,
            next_fragment: 0,
            frame_no: 0,
            active: false,
        }
    }

    /// Forget a partly received frame.
    pub fn reset(&mut self) {
        self.active = false;
        self.len = 0;
    }

    /// Whether a frame is partly received.
    pub fn in_progress(&self) -> bool {
        self.active
    }

    /// Take one fragment (`repr` of type fragment data). Returns the frame's length once its
    /// last fragment arrived (the frame is then [`frame`](Self::frame)), `None` while more
    /// are expected. A fragment 0 always starts a new frame. A fragment out of sequence (wrong
    /// number, frame number or offset) drops the partial frame with [`Error::BadValue`]; one
    /// that overruns the announced size or the buffer, with [`Error::BadLength`].
    pub fn push(&mut self, repr: &EoeRepr<'_>) -> Result<Option<usize>> {
        let h = &repr.header;
        if h.frame_type != EoeFrameType::FragmentData {
            return Err(Error::BadValue);
        }
        let data = repr.frame_data();
        if h.fragment_no == 0 {
            self.active = true;
            self.len = 0;
            self.size = h.offset_blocks as usize * BLOCK;
            self.frame_no = h.frame_no;
            self.next_fragment = 0;
        } else if !self.active
            || h.fragment_no != self.next_fragment
            || h.frame_no != self.frame_no
            || h.offset_blocks as usize * BLOCK != self.len
        {
            self.reset();
            return Err(Error::BadValue);
        }
        let end = self.len + data.len();
        let buf = self.buf.as_mut();
        if end > self.size || end > buf.len() {
            self.reset();
            return Err(Error::BadLength);
        }
        buf[self.len..end].copy_from_slice(data);
        self.len = end;
        self.next_fragment = self.next_fragment.wrapping_add(1);
        if h.last_fragment {
            self.active = false;
            return Ok(Some(end));
        }
        Ok(None)
    }

    /// The frame completed by the last [`push`](Self::push) that returned its length (or the
    /// part received so far).
    pub fn frame(&self) -> &[u8] {
        &self.buf.as_ref()[..self.len]
    }
}

/// A DNS name of up to 32 bytes (NUL-padded on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DnsName(pub [u8; 32]);

impl DnsName {
    /// From text; [`Error::BadLength`] if longer than 32 bytes.
    pub fn new(s: &str) -> Result<DnsName> {
        let mut b = [0u8; 32];
        b.get_mut(..s.len())
            .ok_or(Error::BadLength)?
            .copy_from_slice(s.as_bytes());
        Ok(DnsName(b))
    }
    /// The bytes before the first NUL.
    pub fn as_bytes(&self) -> &[u8] {
        let end = self.0.iter().position(|&c| c == 0).unwrap_or(32);
        &self.0[..end]
    }
    /// As text (`None` if not UTF-8).
    pub fn as_str(&self) -> Option<&str> {
        core::str::from_utf8(self.as_bytes()).ok()
    }
}

/// IP parameters of the set/get IP parameter messages; `None` fields are not included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IpParams {
    /// MAC address (flag bit 0).
    pub mac: Option<[u8; 6]>,
    /// IP address (bit 1).
    pub ip: Option<Ipv4Addr>,
    /// Subnet mask (bit 2).
    pub subnet: Option<Ipv4Addr>,
    /// Default gateway (bit 3).
    pub gateway: Option<Ipv4Addr>,
    /// DNS server (bit 4).
    pub dns: Option<Ipv4Addr>,
    /// DNS name (bit 5).
    pub dns_name: Option<DnsName>,
}

impl IpParams {
    /// Bytes of the full structure (flags, MAC, 4 addresses, DNS name).
    pub const LEN: usize = 4 + 6 + 4 * 4 + 32;
    const MAC: usize = 4;
    const ADDR: [usize; 4] = [10, 14, 18, 22];
    const NAME: usize = 26;

    /// The flag word for the present fields.
    pub fn flags(&self) -> u32 {
        let addrs = [self.ip, self.subnet, self.gateway, self.dns];
        let mut f = self.mac.is_some() as u32 | (self.dns_name.is_some() as u32) << 5;
        for (i, a) in addrs.iter().enumerate() {
            f |= (a.is_some() as u32) << (i + 1);
        }
        f
    }

    /// Decode the body of a set/get IP message. Fields whose flag is clear are `None` and
    /// need not be present; [`Error::Truncated`] if a flagged field is cut off.
    pub fn parse(b: &[u8]) -> Result<IpParams> {
        if b.len() < 4 {
            return Err(Error::Truncated);
        }
        let flags = le32(b, 0);
        let field = |bit: u32, off: usize, len: usize| -> Result<Option<&[u8]>> {
            if flags & (1 << bit) == 0 {
                return Ok(None);
            }
            b.get(off..off + len).map(Some).ok_or(Error::Truncated)
        };
        let addr = |i: usize| -> Result<Option<Ipv4Addr>> {
            Ok(field(i as u32 + 1, Self::ADDR[i], 4)?
                .map(|a| Ipv4Addr::new(a[0], a[1], a[2], a[3])))
        };
        Ok(IpParams {
            mac: field(0, Self::MAC, 6)?.map(|m| {
                let mut a = [0; 6];
                a.copy_from_slice(m);
                a
            }),
            ip: addr(0)?,
            subnet: addr(1)?,
            gateway: addr(2)?,
            dns: addr(3)?,
            dns_name: field(5, Self::NAME, 32)?.map(|n| {
                let mut a = [0; 32];
                a.copy_from_slice(n);
                DnsName(a)
            }),
        })
    }

    /// Write the full 58-byte structure (absent fields as zeros); returns [`Self::LEN`].
    pub fn emit(&self, b: &mut [u8]) -> Result<usize> {
        let b = b.get_mut(..Self::LEN).ok_or(Error::NoSpace)?;
        b.fill(0);
        put32(b, 0, self.flags());
        if let Some(m) = self.mac {
            b[Self::MAC..Self::MAC + 6].copy_from_slice(&m);
        }
        for (i, a) in [self.ip, self.subnet, self.gateway, self.dns]
            .iter()
            .enumerate()
        {
            if let Some(a) = a {
                b[Self::ADDR[i]..Self::ADDR[i] + 4].copy_from_slice(&a.octets());
            }
        }
        if let Some(n) = self.dns_name {
            b[Self::NAME..Self::NAME + 32].copy_from_slice(&n.0);
        }
        Ok(Self::LEN)
    }
}

/// Write a whole set-IP-parameter request for `port`; returns the message length.
pub fn emit_set_ip_request(
    buf: &mut [u8],
    counter: u8,
    port: u8,
    params: &IpParams,
) -> Result<usize> {
    let mut body = [0u8; IpParams::LEN];
    params.emit(&mut body)?;
    emit_eoe(
        buf,
        counter,
        &EoeRepr {
            header: EoeHeaderRepr::single(EoeFrameType::SetIpRequest, port),
            data: &body,
        },
    )
}

/// Write a whole response of `frame_type` (e.g. set IP response) with `result`; returns the
/// message length.
pub fn emit_response(
    buf: &mut [u8],
    counter: u8,
    frame_type: EoeFrameType,
    port: u8,
    result: EoeResult,
) -> Result<usize> {
    emit_eoe(
        buf,
        counter,
        &EoeRepr {
            header: EoeHeaderRepr::response(frame_type, port, result),
            data: &[],
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    #[test]
    fn header_bits() {
        let h = EoeHeaderRepr {
            frame_type: EoeFrameType::FragmentData,
            port: 1,
            last_fragment: true,
            time_appended: true,
            time_requested: false,
            fragment_no: 2,
            offset_blocks: 3,
            frame_no: 5,
        };
        let mut b = [0u8; 4];
        h.emit(&mut b).unwrap();
        // word1 = 0x0310 (port 1, last, time appended); word2 = 2 | 3<<6 | 5<<12 = 0x50C2.
        assert_eq!(b, [0x10, 0x03, 0xC2, 0x50]);
        let p = EoePacket::new_checked(&b[..]).unwrap();
        assert_eq!(EoeHeaderRepr::parse(&p), Ok(h));
        assert_eq!(
            EoeHeaderRepr { port: 16, ..h }.emit(&mut b),
            Err(Error::BadValue)
        );
        assert_eq!(
            EoeHeaderRepr::parse(&EoePacket::new_checked([0x0Au8, 0, 0, 0]).unwrap()),
            Err(Error::BadValue)
        );
        let r = EoeHeaderRepr::response(EoeFrameType::SetIpResponse, 0, EoeResult::NO_IP_SUPPORT);
        assert_eq!(r.result(), EoeResult::NO_IP_SUPPORT);
        assert!(r.frame_type.is_response());
        assert_eq!(
            std::format!("{}", EoeResult(0x0202)),
            "0x0202 (no DHCP support)"
        );
    }

    #[test]
    fn fragment_and_reassemble_1514() {
        let frame: Vec<u8> = (0..1514u32).map(|i| (i * 7) as u8).collect();
        let frags: Vec<_> = fragments(&frame, 128, 0, 9).unwrap().collect();
        // 118 bytes of room: 96 per fragment, 16 fragments of 96 = 1536 > 1514.
        assert_eq!(frags.len(), 16);
        assert_eq!(frags[0].0.offset_blocks as usize, 1514usize.div_ceil(32));
        assert_eq!(frags[1].0.offset_blocks, 3);
        assert!(frags[..15]
            .iter()
            .all(|(h, d)| !h.last_fragment && d.len() == 96));
        assert!(frags[15].0.last_fragment);
        let mut r = Reassembler::new([0u8; 1536]);
        let mut msg = [0u8; 128];
        let mut got = None;
        for (h, d) in &frags {
            let n = emit_eoe(
                &mut msg,
                1,
                &EoeRepr {
                    header: *h,
                    data: d,
                },
            )
            .unwrap();
            assert!(n <= 128);
            let (_, e) = parse_eoe(&msg[..n]).unwrap();
            got = r.push(&e).unwrap();
        }
        assert_eq!(got, Some(1514));
        assert_eq!(r.frame(), &frame[..]);
    }

    #[test]
    fn reassembly_errors_and_timestamp() {
        let frame = [0x11u8; 100];
        let frags: Vec<_> = fragments(&frame, 74, 0, 1).unwrap().collect();
        assert_eq!(frags.len(), 2);
        let mut r = Reassembler::new([0u8; 256]);
        // Second fragment without the first.
        let e = EoeRepr {
            header: frags[1].0,
            data: frags[1].1,
        };
        assert_eq!(r.push(&e), Err(Error::BadValue));
        // Wrong frame number.
        r.push(&EoeRepr {
            header: frags[0].0,
            data: frags[0].1,
        })
        .unwrap();
        let mut h = frags[1].0;
        h.frame_no = 2;
        assert_eq!(
            r.push(&EoeRepr {
                header: h,
                data: frags[1].1
            }),
            Err(Error::BadValue)
        );
        assert!(!r.in_progress());
        // Overrun of the announced size.
        let mut h0 = frags[0].0;
        h0.offset_blocks = 1;
        h0.last_fragment = true;
        assert_eq!(
            r.push(&EoeRepr {
                header: h0,
                data: &frame[..64]
            }),
            Err(Error::BadLength)
        );
        // A single fragment with a timestamp appended.
        let mut d = [0u8; 24];
        d[20..].copy_from_slice(&0xDEADBEEFu32.to_le_bytes());
        let mut h = EoeHeaderRepr::single(EoeFrameType::FragmentData, 0);
        h.time_appended = true;
        h.offset_blocks = 1;
        let e = EoeRepr {
            header: h,
            data: &d,
        };
        assert_eq!(e.timestamp(), Some(0xDEADBEEF));
        assert_eq!(r.push(&e), Ok(Some(20)));
        // Limits.
        assert_eq!(
            fragments(&[0; 2017], 128, 0, 0).unwrap_err(),
            Error::BadLength
        );
        assert_eq!(fragments(&[0; 10], 41, 0, 0).unwrap_err(), Error::BadLength);
        assert_eq!(
            fragments(&[0; 10], 128, 16, 0).unwrap_err(),
            Error::BadValue
        );
        // An empty frame is one empty last fragment.
        let f: Vec<_> = fragments(&[], 128, 0, 0).unwrap().collect();
        assert_eq!(f.len(), 1);
        assert!(f[0].0.last_fragment && f[0].1.is_empty());
    }

    #[test]
    fn set_ip_request_layout() {
        let p = IpParams {
            mac: Some([2, 0, 0, 0, 0, 1]),
            ip: Some(Ipv4Addr::new(192, 168, 9, 2)),
            subnet: Some(Ipv4Addr::new(255, 255, 255, 0)),
            gateway: None,
            dns: None,
            dns_name: Some(DnsName::new("drive1").unwrap()),
        };
        let mut b = [0u8; 80];
        let n = emit_set_ip_request(&mut b, 1, 0, &p).unwrap();
        assert_eq!(n, 6 + 4 + 58);
        assert_eq!(&b[6..10], &[0x02, 0x01, 0, 0]);
        assert_eq!(&b[10..14], &[0x27, 0, 0, 0]);
        assert_eq!(&b[14..20], &[2, 0, 0, 0, 0, 1]);
        assert_eq!(&b[20..24], &[192, 168, 9, 2]);
        let (_, e) = parse_eoe(&b[..n]).unwrap();
        assert_eq!(e.header.frame_type, EoeFrameType::SetIpRequest);
        let back = IpParams::parse(e.data).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.dns_name.unwrap().as_str(), Some("drive1"));
        // Only the IP flagged: a short body is enough.
        let short = [0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1];
        assert_eq!(
            IpParams::parse(&short).unwrap().ip,
            Some(Ipv4Addr::new(10, 0, 0, 1))
        );
        assert_eq!(IpParams::parse(&short[..13]), Err(Error::Truncated));
        assert_eq!(DnsName::new(&"x".repeat(33)), Err(Error::BadLength));
        let n = emit_response(
            &mut b,
            2,
            EoeFrameType::SetIpResponse,
            0,
            EoeResult::SUCCESS,
        )
        .unwrap();
        assert_eq!(&b[..n], &[4, 0, 0, 0, 0, 0x22, 0x03, 0x01, 0, 0]);
    }

    proptest! {
        #[test]
        fn header_round_trip(ft in 0u8..10, port in 0u8..16, last: bool, ta: bool, tr: bool,
                             frag in 0u8..64, off in 0u8..64, fno in 0u8..16,
                             data in proptest::collection::vec(any::<u8>(), 0..40)) {
            let header = EoeHeaderRepr {
                frame_type: EoeFrameType::from_u8(ft).unwrap(), port, last_fragment: last,
                time_appended: ta, time_requested: tr, fragment_no: frag, offset_blocks: off,
                frame_no: fno,
            };
            let r = EoeRepr { header, data: &data };
            let mut b = [0u8; 64];
            let n = emit_eoe(&mut b, 3, &r).unwrap();
            prop_assert_eq!(parse_eoe(&b[..n]).unwrap().1, r);
        }

        #[test]
        fn fragments_reassemble(frame in proptest::collection::vec(any::<u8>(), 0..1600),
                                mbx in 42usize..600, fno in 0u8..16) {
            let mut r = Reassembler::new([0u8; 2048]);
            let mut out = None;
            let mut count = 0;
            for (h, d) in fragments(&frame, mbx, 0, fno).unwrap() {
                prop_assert!(d.len() <= mbx - DATA_OFFSET);
                out = r.push(&EoeRepr { header: h, data: d }).unwrap();
                count += 1;
            }
            prop_assert!(count <= 64);
            prop_assert_eq!(out, Some(frame.len()));
            prop_assert_eq!(r.frame(), &frame[..]);
        }

        #[test]
        fn ip_params_round_trip(mac: Option<[u8; 6]>, ip: Option<u32>, sub: Option<u32>,
                                gw: Option<u32>, dns: Option<u32>, name in "[a-z0-9.]{0,32}",
                                has_name: bool) {
            let p = IpParams {
                mac, ip: ip.map(Ipv4Addr::from), subnet: sub.map(Ipv4Addr::from),
                gateway: gw.map(Ipv4Addr::from), dns: dns.map(Ipv4Addr::from),
                dns_name: has_name.then(|| DnsName::new(&name).unwrap()),
            };
            let mut b = [0u8; IpParams::LEN];
            p.emit(&mut b).unwrap();
            prop_assert_eq!(IpParams::parse(&b), Ok(p));
        }
    }
}
