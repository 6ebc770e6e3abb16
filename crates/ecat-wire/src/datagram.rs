//! EtherCAT datagrams (PDUs): the 10-byte header, the data, and the 2-byte working counter.
//!
//! Layout (offsets from the datagram start): `cmd u8 | idx u8 | adp u16 | ado u16 |
//! len:11 r:3 C:1 M:1 | irq u16 | data[len] | wkc u16`. For logical commands ADP and ADO
//! together are one 32-bit logical address.
//!
//! [`Datagram`] is a checked view over one datagram; [`Datagrams`] and [`DatagramsMut`] walk the
//! chain inside a frame (following the M bit) without allocating; [`DatagramRepr`] is the decoded
//! header. The simulator mutates datagrams in place through [`DatagramsMut`].

use crate::{le16, le32, put16, put32, Error, Result};

/// Bytes in a datagram header (before the data).
pub const HEADER_LEN: usize = 10;
/// Bytes of the working counter after the data.
pub const WKC_LEN: usize = 2;
/// Header plus working counter: the overhead of one datagram.
pub const OVERHEAD: usize = HEADER_LEN + WKC_LEN;
/// Largest data field that fits in one standard frame (1500 − 2 − 10 − 2).
pub const MAX_DATA: usize = 1486;

const LEN_MASK: u16 = 0x07FF;
const CIRCULATING: u16 = 0x4000;
const MORE: u16 = 0x8000;

/// The 15 datagram commands of ETG.1000.4 (code in the first byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Command {
    /// No operation: no SubDevice acts.
    Nop = 0,
    /// Auto-increment physical read.
    Aprd = 1,
    /// Auto-increment physical write.
    Apwr = 2,
    /// Auto-increment physical read-write.
    Aprw = 3,
    /// Configured-address physical read.
    Fprd = 4,
    /// Configured-address physical write.
    Fpwr = 5,
    /// Configured-address physical read-write.
    Fprw = 6,
    /// Broadcast read (data ORed from every SubDevice).
    Brd = 7,
    /// Broadcast write.
    Bwr = 8,
    /// Broadcast read-write.
    Brw = 9,
    /// Logical read.
    Lrd = 10,
    /// Logical write.
    Lwr = 11,
    /// Logical read-write.
    Lrw = 12,
    /// Auto-increment read, multiple write (addressed SubDevice reads, all others write).
    Armw = 13,
    /// Configured-address read, multiple write (addressed SubDevice reads, all others write).
    Frmw = 14,
}

/// How a command selects the SubDevices that act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addressing {
    /// Nobody acts.
    None,
    /// ADP is a negative position, incremented by every SubDevice; acts where it is 0.
    AutoIncrement,
    /// ADP is a configured station address (or alias).
    Configured,
    /// Every SubDevice acts; ADP is incremented.
    Broadcast,
    /// A 32-bit logical address, mapped through FMMUs.
    Logical,
}

impl Command {
    /// Decode a command code; `None` for codes ETG.1000 does not define.
    pub fn from_u8(code: u8) -> Option<Command> {
        use Command::*;
        Some(match code {
            0 => Nop,
            1 => Aprd,
            2 => Apwr,
            3 => Aprw,
            4 => Fprd,
            5 => Fpwr,
            6 => Fprw,
            7 => Brd,
            8 => Bwr,
            9 => Brw,
            10 => Lrd,
            11 => Lwr,
            12 => Lrw,
            13 => Armw,
            14 => Frmw,
            _ => return None,
        })
    }

    /// Every command, in code order.
    pub const ALL: [Command; 15] = [
        Command::Nop,
        Command::Aprd,
        Command::Apwr,
        Command::Aprw,
        Command::Fprd,
        Command::Fpwr,
        Command::Fprw,
        Command::Brd,
        Command::Bwr,
        Command::Brw,
        Command::Lrd,
        Command::Lwr,
        Command::Lrw,
        Command::Armw,
        Command::Frmw,
    ];

    /// The ETG mnemonic, e.g. `"FPRD"`.
    pub fn name(self) -> &'static str {
        use Command::*;
        match self {
            Nop => "NOP",
            Aprd => "APRD",
            Apwr => "APWR",
            Aprw => "APRW",
            Fprd => "FPRD",
            Fpwr => "FPWR",
            Fprw => "FPRW",
            Brd => "BRD",
            Bwr => "BWR",
            Brw => "BRW",
            Lrd => "LRD",
            Lwr => "LWR",
            Lrw => "LRW",
            Armw => "ARMW",
            Frmw => "FRMW",
        }
    }

    /// How this command addresses SubDevices.
    pub fn addressing(self) -> Addressing {
        use Command::*;
        match self {
            Nop => Addressing::None,
            Aprd | Apwr | Aprw | Armw => Addressing::AutoIncrement,
            Fprd | Fpwr | Fprw | Frmw => Addressing::Configured,
            Brd | Bwr | Brw => Addressing::Broadcast,
            Lrd | Lwr | Lrw => Addressing::Logical,
        }
    }

    /// True if the command reads memory into the frame (for the addressed SubDevice).
    pub fn reads(self) -> bool {
        use Command::*;
        matches!(
            self,
            Aprd | Aprw | Fprd | Fprw | Brd | Brw | Lrd | Lrw | Armw | Frmw
        )
    }

    /// True if the command writes frame data into memory (for the addressed SubDevice).
    pub fn writes(self) -> bool {
        use Command::*;
        matches!(self, Apwr | Aprw | Fpwr | Fprw | Bwr | Brw | Lwr | Lrw)
    }
}

impl core::fmt::Display for Command {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A checked view over one datagram (header, data and working counter).
#[derive(Debug, Clone, Copy)]
pub struct Datagram<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> Datagram<T> {
    /// Wrap a buffer that starts with a datagram; checks that header, data and WKC fit.
    /// The buffer may be longer than the datagram (the rest of the frame).
    pub fn new_checked(buf: T) -> Result<Self> {
        let b = buf.as_ref();
        if b.len() < OVERHEAD {
            return Err(Error::Truncated);
        }
        let len = (le16(b, 6) & LEN_MASK) as usize;
        if b.len() < OVERHEAD + len {
            return Err(Error::Truncated);
        }
        Ok(Datagram { buf })
    }

    /// Give the buffer back.
    pub fn into_inner(self) -> T {
        self.buf
    }

    fn b(&self) -> &[u8] {
        self.buf.as_ref()
    }

    /// Raw command code.
    pub fn command_code(&self) -> u8 {
        self.b()[0]
    }
    /// Decoded command, `None` for an undefined code.
    pub fn command(&self) -> Option<Command> {
        Command::from_u8(self.command_code())
    }
    /// Index chosen by the MainDevice and echoed by SubDevices.
    pub fn index(&self) -> u8 {
        self.b()[1]
    }
    /// Address position (auto-increment position or station address).
    pub fn adp(&self) -> u16 {
        le16(self.b(), 2)
    }
    /// Address offset (register or memory offset).
    pub fn ado(&self) -> u16 {
        le16(self.b(), 4)
    }
    /// The 32-bit logical address (ADP low word, ADO high word).
    pub fn logical_address(&self) -> u32 {
        le32(self.b(), 2)
    }
    /// Data length in bytes.
    pub fn data_len(&self) -> usize {
        (le16(self.b(), 6) & LEN_MASK) as usize
    }
    /// The circulating-frame bit (C).
    pub fn circulating(&self) -> bool {
        le16(self.b(), 6) & CIRCULATING != 0
    }
    /// The "more datagrams follow" bit (M).
    pub fn more(&self) -> bool {
        le16(self.b(), 6) & MORE != 0
    }
    /// The IRQ field (ORed event requests of the SubDevices).
    pub fn irq(&self) -> u16 {
        le16(self.b(), 8)
    }
    /// The data field.
    pub fn data(&self) -> &[u8] {
        let len = self.data_len();
        &self.b()[HEADER_LEN..HEADER_LEN + len]
    }
    /// The working counter.
    pub fn wkc(&self) -> u16 {
        le16(self.b(), HEADER_LEN + self.data_len())
    }
    /// Total bytes of this datagram (header + data + WKC).
    pub fn total_len(&self) -> usize {
        OVERHEAD + self.data_len()
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Datagram<T> {
    fn bm(&mut self) -> &mut [u8] {
        self.buf.as_mut()
    }
    /// Set the command code.
    pub fn set_command(&mut self, c: Command) {
        self.bm()[0] = c as u8;
    }
    /// Set the index.
    pub fn set_index(&mut self, i: u8) {
        self.bm()[1] = i;
    }
    /// Set the address position.
    pub fn set_adp(&mut self, v: u16) {
        put16(self.bm(), 2, v)
    }
    /// Set the address offset.
    pub fn set_ado(&mut self, v: u16) {
        put16(self.bm(), 4, v)
    }
    /// Set the 32-bit logical address.
    pub fn set_logical_address(&mut self, v: u32) {
        put32(self.bm(), 2, v)
    }
    /// Set or clear the circulating bit.
    pub fn set_circulating(&mut self, on: bool) {
        let w = le16(self.b(), 6);
        put16(
            self.bm(),
            6,
            if on {
                w | CIRCULATING
            } else {
                w & !CIRCULATING
            },
        );
    }
    /// Set or clear the "more follow" bit.
    pub fn set_more(&mut self, on: bool) {
        let w = le16(self.b(), 6);
        put16(self.bm(), 6, if on { w | MORE } else { w & !MORE });
    }
    /// Set the IRQ field.
    pub fn set_irq(&mut self, v: u16) {
        put16(self.bm(), 8, v)
    }
    /// The data field, writable.
    pub fn data_mut(&mut self) -> &mut [u8] {
        let len = self.data_len();
        &mut self.bm()[HEADER_LEN..HEADER_LEN + len]
    }
    /// Set the working counter.
    pub fn set_wkc(&mut self, v: u16) {
        let off = HEADER_LEN + self.data_len();
        put16(self.bm(), off, v)
    }
}

/// The decoded header fields of a datagram (the data stays in the buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatagramRepr {
    /// Command.
    pub command: Command,
    /// Index.
    pub index: u8,
    /// ADP (low 16 bits) and ADO (high 16 bits); for logical commands the logical address.
    pub address: u32,
    /// Data length in bytes.
    pub data_len: u16,
    /// Circulating bit.
    pub circulating: bool,
    /// More-follow bit.
    pub more: bool,
    /// IRQ field.
    pub irq: u16,
    /// Working counter.
    pub wkc: u16,
}

impl DatagramRepr {
    /// A request header for a physical command: `adp`, `ado`.
    pub fn physical(command: Command, index: u8, adp: u16, ado: u16, data_len: u16) -> Self {
        DatagramRepr {
            command,
            index,
            address: adp as u32 | (ado as u32) << 16,
            data_len,
            circulating: false,
            more: false,
            irq: 0,
            wkc: 0,
        }
    }

    /// A request header for a logical command at `address`.
    pub fn logical(command: Command, index: u8, address: u32, data_len: u16) -> Self {
        DatagramRepr {
            address,
            ..Self::physical(command, index, 0, 0, data_len)
        }
    }

    /// ADP part of the address.
    pub fn adp(&self) -> u16 {
        self.address as u16
    }

    /// ADO part of the address.
    pub fn ado(&self) -> u16 {
        (self.address >> 16) as u16
    }

    /// Decode a checked view; fails on an undefined command code.
    pub fn parse<T: AsRef<[u8]>>(d: &Datagram<T>) -> Result<Self> {
        Ok(DatagramRepr {
            command: d.command().ok_or(Error::BadValue)?,
            index: d.index(),
            address: d.logical_address(),
            data_len: d.data_len() as u16,
            circulating: d.circulating(),
            more: d.more(),
            irq: d.irq(),
            wkc: d.wkc(),
        })
    }

    /// Bytes this datagram occupies on the wire.
    pub fn total_len(&self) -> usize {
        OVERHEAD + self.data_len as usize
    }

    /// Write the header and WKC into `buf` (which must hold [`Self::total_len`] bytes); the data
    /// bytes are left as they are. Returns a view over the written datagram.
    pub fn emit<'a>(&self, buf: &'a mut [u8]) -> Result<Datagram<&'a mut [u8]>> {
        if self.data_len as usize > LEN_MASK as usize {
            return Err(Error::BadLength);
        }
        let total = self.total_len();
        if buf.len() < total {
            return Err(Error::NoSpace);
        }
        let buf = &mut buf[..total];
        buf[0] = self.command as u8;
        buf[1] = self.index;
        put32(buf, 2, self.address);
        let mut lenw = self.data_len;
        if self.circulating {
            lenw |= CIRCULATING;
        }
        if self.more {
            lenw |= MORE;
        }
        put16(buf, 6, lenw);
        put16(buf, 8, self.irq);
        put16(buf, HEADER_LEN + self.data_len as usize, self.wkc);
        Ok(Datagram { buf })
    }
}

/// Iterator over the datagrams of a frame body (after the 2-byte EtherCAT header).
///
/// Yields `Err` once and stops when a datagram does not fit; stops after the datagram whose
/// M bit is clear.
#[derive(Debug, Clone)]
pub struct Datagrams<'a> {
    rest: &'a [u8],
    done: bool,
}

impl<'a> Datagrams<'a> {
    /// Walk the datagrams in `body`.
    pub fn new(body: &'a [u8]) -> Self {
        Datagrams {
            rest: body,
            done: body.is_empty(),
        }
    }
}

impl<'a> Iterator for Datagrams<'a> {
    type Item = Result<Datagram<&'a [u8]>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match Datagram::new_checked(self.rest) {
            Ok(d) => {
                let total = d.total_len();
                let more = d.more();
                let (this, rest) = self.rest.split_at(total);
                self.rest = rest;
                self.done = !more;
                Some(Ok(Datagram { buf: this }))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Mutable iterator over the datagrams of a frame body, for in-place processing.
#[derive(Debug)]
pub struct DatagramsMut<'a> {
    rest: &'a mut [u8],
    done: bool,
}

impl<'a> DatagramsMut<'a> {
    /// Walk the datagrams in `body`, yielding writable views.
    pub fn new(body: &'a mut [u8]) -> Self {
        let done = body.is_empty();
        DatagramsMut { rest: body, done }
    }
}

impl<'a> Iterator for DatagramsMut<'a> {
    type Item = Result<Datagram<&'a mut [u8]>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = core::mem::take(&mut self.rest);
        match Datagram::new_checked(&rest[..]) {
            Ok(d) => {
                let total = d.total_len();
                let more = d.more();
                let (this, rest) = rest.split_at_mut(total);
                self.rest = rest;
                self.done = !more;
                Some(Ok(Datagram { buf: this }))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The FPRD of AL status from the reference (§2.3).
    const FPRD_AL: [u8; 14] = [
        0x04, 0x05, 0x01, 0x10, 0x30, 0x01, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00,
    ];

    #[test]
    fn parse_reference_fprd() {
        let d = Datagram::new_checked(&FPRD_AL[..]).unwrap();
        let r = DatagramRepr::parse(&d).unwrap();
        assert_eq!(r.command, Command::Fprd);
        assert_eq!(r.index, 5);
        assert_eq!(r.adp(), 0x1001);
        assert_eq!(r.ado(), 0x0130);
        assert_eq!(r.data_len, 2);
        assert!(!r.more && !r.circulating);
        assert_eq!(d.data(), &[0x02, 0x00]);
        assert_eq!(d.wkc(), 1);
        assert_eq!(d.total_len(), 14);
    }

    #[test]
    fn emit_matches_reference_and_leaves_data() {
        let mut buf = [0xA5u8; 20];
        let mut r = DatagramRepr::physical(Command::Fprd, 5, 0x1001, 0x0130, 2);
        r.wkc = 1;
        let mut d = r.emit(&mut buf).unwrap();
        assert_eq!(d.data(), &[0xA5, 0xA5], "emit must not touch the data");
        d.data_mut().copy_from_slice(&[2, 0]);
        assert_eq!(&buf[..14], &FPRD_AL);
        assert_eq!(buf[14], 0xA5, "emit must not write past the datagram");
    }

    #[test]
    fn flags_round_trip() {
        let mut buf = [0u8; 12];
        let mut d = DatagramRepr::physical(Command::Brd, 0, 0, 0, 0)
            .emit(&mut buf)
            .unwrap();
        d.set_more(true);
        d.set_circulating(true);
        assert!(d.more() && d.circulating());
        assert_eq!(buf[7], 0xC0);
        let mut d = Datagram::new_checked(&mut buf[..]).unwrap();
        d.set_more(false);
        assert!(!d.more() && d.circulating());
    }

    #[test]
    fn truncated_is_refused() {
        assert_eq!(
            Datagram::new_checked(&FPRD_AL[..13]).unwrap_err(),
            Error::Truncated
        );
        assert_eq!(
            Datagram::new_checked(&FPRD_AL[..5]).unwrap_err(),
            Error::Truncated
        );
    }

    #[test]
    fn every_command_code_round_trips() {
        for c in Command::ALL {
            assert_eq!(Command::from_u8(c as u8), Some(c));
        }
        assert_eq!(Command::from_u8(15), None);
        assert_eq!(Command::from_u8(0xFF), None);
        assert!(Command::Lrw.reads() && Command::Lrw.writes());
        assert!(Command::Frmw.reads() && !Command::Frmw.writes());
        assert_eq!(Command::Armw.addressing(), Addressing::AutoIncrement);
    }

    #[test]
    fn iterate_chain_stops_at_m_clear() {
        let mut body = [0u8; 40];
        let mut r = DatagramRepr::physical(Command::Brd, 1, 0, 0x130, 2);
        r.more = true;
        r.emit(&mut body[..]).unwrap();
        let r2 = DatagramRepr::logical(Command::Lrw, 2, 0x10000, 4);
        r2.emit(&mut body[14..]).unwrap();
        let v: std::vec::Vec<_> = Datagrams::new(&body).map(|d| d.unwrap().index()).collect();
        assert_eq!(v, [1, 2]);
        for d in DatagramsMut::new(&mut body) {
            d.unwrap().set_wkc(7);
        }
        assert_eq!(le16(&body, 12), 7);
        assert_eq!(le16(&body, 14 + 14), 7);
    }

    #[test]
    fn iterate_reports_truncation_once() {
        let mut body = [0u8; 20];
        let mut r = DatagramRepr::physical(Command::Brd, 1, 0, 0, 2);
        r.more = true;
        r.emit(&mut body[..]).unwrap();
        let items: std::vec::Vec<_> = Datagrams::new(&body).collect();
        assert_eq!(items.len(), 2);
        assert!(items[0].is_ok());
        assert_eq!(items[1].as_ref().unwrap_err(), &Error::Truncated);
    }
}
