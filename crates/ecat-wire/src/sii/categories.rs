//! Typed parsers for the SII category payloads: STRINGS, GENERAL, FMMU, SYNCM, FMMU_EX,
//! TXPDO/RXPDO and DC.
//!
//! Fixed-size records have a `…Repr` with `parse`/`emit` and a `LEN`; lists are iterators over
//! a category payload that never read past it. Fixed-record lists whose payload is not a whole
//! number of records are refused up front by `new_checked` ([`Error::BadLength`]), except
//! where the spec pads to an even length (FMMU, FMMU_EX), where a short tail is ignored.

use crate::{le16, le32, put16, put32, Error, Latin1, Result};

/// The STRINGS category: `u8 count`, then `count` × (`u8 len`, bytes). Index 1 is the first
/// string; index 0 means "no string" and reads as empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strings<'a> {
    data: &'a [u8],
}

impl<'a> Strings<'a> {
    /// Wrap a STRINGS payload (nothing is checked until a string is looked up).
    pub fn new(data: &'a [u8]) -> Self {
        Strings { data }
    }
    /// The declared number of strings (0 for an empty payload).
    pub fn count(&self) -> u8 {
        self.data.first().copied().unwrap_or(0)
    }
    /// The bytes of string `index` (1-based); `Some(b"")` for index 0; `None` if the index is
    /// past the count or the payload ends inside the list.
    pub fn get(&self, index: u8) -> Option<&'a [u8]> {
        if index == 0 {
            return Some(&[]);
        }
        self.iter().nth(index as usize - 1)
    }
    /// String `index` as UTF-8 text; `None` if absent or not valid UTF-8. SII strings are
    /// ISO 8859-1, so names with 'µ' (byte 0xB5) are not UTF-8: prefer [`text`].
    ///
    /// [`text`]: Strings::text
    pub fn get_str(&self, index: u8) -> Option<&'a str> {
        core::str::from_utf8(self.get(index)?).ok()
    }
    /// String `index` decoded as ISO 8859-1, the encoding of SII strings (never fails);
    /// `None` if the index is past the list.
    pub fn text(&self, index: u8) -> Option<Latin1<'a>> {
        self.get(index).map(Latin1)
    }
    /// Iterate the strings in order (stops early if the payload is cut short).
    pub fn iter(&self) -> StringsIter<'a> {
        StringsIter {
            data: self.data.get(1..).unwrap_or(&[]),
            left: self.count(),
        }
    }
}

/// Iterator over the strings of a STRINGS payload.
#[derive(Debug, Clone)]
pub struct StringsIter<'a> {
    data: &'a [u8],
    left: u8,
}

impl<'a> Iterator for StringsIter<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        let (&len, rest) = self.data.split_first()?;
        let Some(s) = rest.get(..len as usize) else {
            self.left = 0;
            return None;
        };
        self.data = &rest[len as usize..];
        self.left -= 1;
        Some(s)
    }
}

/// CoE details byte of GENERAL (byte 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct CoeDetails(pub u8);

impl CoeDetails {
    /// SDO supported.
    pub const SDO: u8 = 0x01;
    /// SDO Information supported.
    pub const SDO_INFO: u8 = 0x02;
    /// PDO assignment (0x1C1x) writable.
    pub const PDO_ASSIGN: u8 = 0x04;
    /// PDO configuration (0x16xx/0x1Axx) writable.
    pub const PDO_CONFIG: u8 = 0x08;
    /// Upload PDO configuration at startup.
    pub const PDO_UPLOAD: u8 = 0x10;
    /// SDO complete access supported.
    pub const COMPLETE_ACCESS: u8 = 0x20;

    /// True if all bits of `mask` are set.
    pub fn has(self, mask: u8) -> bool {
        self.0 & mask == mask
    }
}

/// Flags byte of GENERAL (byte 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct GeneralFlags(pub u8);

impl GeneralFlags {
    /// Enable SAFEOP.
    pub const ENABLE_SAFEOP: u8 = 0x01;
    /// Enable not-LRW: the SubDevice cannot use LRW, the master must use LRD + LWR.
    pub const NOT_LRW: u8 = 0x02;
    /// Mailbox data-link layer.
    pub const MBOX_DLL: u8 = 0x04;
    /// Identification via the AL status code.
    pub const IDENT_AL_STATUS: u8 = 0x08;
    /// Identification via physical memory.
    pub const IDENT_PHYS_MEM: u8 = 0x10;

    /// True if all bits of `mask` are set.
    pub fn has(self, mask: u8) -> bool {
        self.0 & mask == mask
    }
}

/// The kind of a physical port as described in GENERAL bytes 16–17 (one nibble per port).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SiiPort {
    /// 0: not used.
    Unused,
    /// 1: MII.
    Mii,
    /// 2: reserved.
    Reserved,
    /// 3: EBUS.
    Ebus,
    /// 4: fast hot connect.
    FastHotConnect,
    /// Any other nibble value.
    Other(u8),
}

impl SiiPort {
    /// Decode a nibble.
    pub fn from_nibble(n: u8) -> SiiPort {
        match n & 0x0F {
            0 => SiiPort::Unused,
            1 => SiiPort::Mii,
            2 => SiiPort::Reserved,
            3 => SiiPort::Ebus,
            4 => SiiPort::FastHotConnect,
            o => SiiPort::Other(o),
        }
    }
}

/// The GENERAL category (32 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GeneralRepr {
    /// Byte 0: group name string index.
    pub group_index: u8,
    /// Byte 1: image name string index.
    pub image_index: u8,
    /// Byte 2: order number string index.
    pub order_index: u8,
    /// Byte 3: device name string index.
    pub name_index: u8,
    /// Byte 4: reserved, kept as found.
    pub reserved4: u8,
    /// Byte 5: CoE details.
    pub coe_details: CoeDetails,
    /// Byte 6: FoE details (bit 0 = supported).
    pub foe_details: u8,
    /// Byte 7: EoE details (bit 0 = supported).
    pub eoe_details: u8,
    /// Byte 8: SoE channels.
    pub soe_channels: u8,
    /// Byte 9: DS402 channels.
    pub ds402_channels: u8,
    /// Byte 10: SysmanClass.
    pub sysman_class: u8,
    /// Byte 11: flags.
    pub flags: GeneralFlags,
    /// Bytes 12–13: current consumed from the E-bus in mA (negative = fed into it).
    pub ebus_current_ma: i16,
    /// Byte 14: group-related string index.
    pub group_index2: u8,
    /// Byte 15: reserved, kept as found.
    pub reserved15: u8,
    /// Bytes 16–17: physical ports, 4 bits per port (port 0 in bits 3:0).
    pub physical_ports: u16,
    /// Bytes 18–19: physical memory address of the identification value.
    pub ident_phys_addr: u16,
    /// Bytes 20–31: reserved, kept as found.
    pub reserved_tail: [u8; 12],
}

impl GeneralRepr {
    /// Size of the payload.
    pub const LEN: usize = 32;

    /// Decode a GENERAL payload. A payload shorter than 32 bytes (older SIIs) is read as if
    /// zero-padded; only an empty one is refused ([`Error::Truncated`]).
    pub fn parse(data: &[u8]) -> Result<Self> {
        if data.is_empty() {
            return Err(Error::Truncated);
        }
        let mut b = [0u8; Self::LEN];
        let n = data.len().min(Self::LEN);
        b[..n].copy_from_slice(&data[..n]);
        let mut reserved_tail = [0; 12];
        reserved_tail.copy_from_slice(&b[20..32]);
        Ok(GeneralRepr {
            group_index: b[0],
            image_index: b[1],
            order_index: b[2],
            name_index: b[3],
            reserved4: b[4],
            coe_details: CoeDetails(b[5]),
            foe_details: b[6],
            eoe_details: b[7],
            soe_channels: b[8],
            ds402_channels: b[9],
            sysman_class: b[10],
            flags: GeneralFlags(b[11]),
            ebus_current_ma: le16(&b, 12) as i16,
            group_index2: b[14],
            reserved15: b[15],
            physical_ports: le16(&b, 16),
            ident_phys_addr: le16(&b, 18),
            reserved_tail,
        })
    }

    /// Encode into 32 bytes.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < Self::LEN {
            return Err(Error::NoSpace);
        }
        b[0] = self.group_index;
        b[1] = self.image_index;
        b[2] = self.order_index;
        b[3] = self.name_index;
        b[4] = self.reserved4;
        b[5] = self.coe_details.0;
        b[6] = self.foe_details;
        b[7] = self.eoe_details;
        b[8] = self.soe_channels;
        b[9] = self.ds402_channels;
        b[10] = self.sysman_class;
        b[11] = self.flags.0;
        put16(b, 12, self.ebus_current_ma as u16);
        b[14] = self.group_index2;
        b[15] = self.reserved15;
        put16(b, 16, self.physical_ports);
        put16(b, 18, self.ident_phys_addr);
        b[20..32].copy_from_slice(&self.reserved_tail);
        Ok(())
    }

    /// The kind of port `n` (0..=3).
    pub fn port(&self, n: usize) -> SiiPort {
        SiiPort::from_nibble((self.physical_ports >> (4 * (n & 3))) as u8)
    }
    /// FoE supported.
    pub fn foe(&self) -> bool {
        self.foe_details & 1 != 0
    }
    /// EoE supported.
    pub fn eoe(&self) -> bool {
        self.eoe_details & 1 != 0
    }
    /// The SubDevice cannot take LRW (master must use LRD + LWR).
    pub fn not_lrw(&self) -> bool {
        self.flags.has(GeneralFlags::NOT_LRW)
    }
}

/// What an FMMU is meant for (FMMU category, one byte each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FmmuUsage {
    /// 0x00 or 0xFF: not used.
    Unused,
    /// 0x01: process data outputs.
    Outputs,
    /// 0x02: process data inputs.
    Inputs,
    /// 0x03: SyncManager status (mailbox state).
    SyncMStatus,
    /// Any other value (0x04/0x05 "dynamic" in some tools, unverified).
    Other(u8),
}

impl FmmuUsage {
    /// Decode one byte.
    pub fn from_u8(v: u8) -> FmmuUsage {
        match v {
            0x00 | 0xFF => FmmuUsage::Unused,
            0x01 => FmmuUsage::Outputs,
            0x02 => FmmuUsage::Inputs,
            0x03 => FmmuUsage::SyncMStatus,
            o => FmmuUsage::Other(o),
        }
    }
    /// Encode (unused as 0x00).
    pub fn to_u8(self) -> u8 {
        match self {
            FmmuUsage::Unused => 0x00,
            FmmuUsage::Outputs => 0x01,
            FmmuUsage::Inputs => 0x02,
            FmmuUsage::SyncMStatus => 0x03,
            FmmuUsage::Other(o) => o,
        }
    }
}

/// Iterator over the FMMU category (one [`FmmuUsage`] per byte, padding bytes included; a
/// padding 0xFF reads as [`FmmuUsage::Unused`]).
#[derive(Debug, Clone)]
pub struct Fmmus<'a> {
    data: core::slice::Iter<'a, u8>,
}

impl<'a> Fmmus<'a> {
    /// Wrap an FMMU payload.
    pub fn new(data: &'a [u8]) -> Self {
        Fmmus { data: data.iter() }
    }
}

impl Iterator for Fmmus<'_> {
    type Item = FmmuUsage;
    fn next(&mut self) -> Option<FmmuUsage> {
        self.data.next().map(|&b| FmmuUsage::from_u8(b))
    }
}

/// What a SyncManager is used for (SYNCM byte 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyncManagerType {
    /// 0: unused / unknown.
    Unused,
    /// 1: mailbox out (master → SubDevice).
    MailboxOut,
    /// 2: mailbox in (SubDevice → master).
    MailboxIn,
    /// 3: process data outputs.
    Outputs,
    /// 4: process data inputs.
    Inputs,
    /// Any other value.
    Other(u8),
}

impl SyncManagerType {
    /// Decode one byte.
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::Unused,
            1 => Self::MailboxOut,
            2 => Self::MailboxIn,
            3 => Self::Outputs,
            4 => Self::Inputs,
            o => Self::Other(o),
        }
    }
    /// Encode.
    pub fn to_u8(self) -> u8 {
        match self {
            Self::Unused => 0,
            Self::MailboxOut => 1,
            Self::MailboxIn => 2,
            Self::Outputs => 3,
            Self::Inputs => 4,
            Self::Other(o) => o,
        }
    }
}

/// One SYNCM entry (8 bytes): the default configuration of one SyncManager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncManagerRepr {
    /// Physical start address.
    pub start: u16,
    /// Length in bytes (0 for process-data SMs whose size is computed from the PDOs).
    pub length: u16,
    /// Control register value (for 0x0804 + 8·n).
    pub control: u8,
    /// Status (unused, 0).
    pub status: u8,
    /// Enable: bit 0 enable, bit 1 fixed content, bit 2 virtual, bit 3 enable in OP only.
    pub enable: u8,
    /// Use.
    pub kind: SyncManagerType,
}

impl SyncManagerRepr {
    /// Size of one entry.
    pub const LEN: usize = 8;
    /// Enable bit: enabled.
    pub const ENABLE: u8 = 0x01;

    /// Decode 8 bytes.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        Ok(SyncManagerRepr {
            start: le16(b, 0),
            length: le16(b, 2),
            control: b[4],
            status: b[5],
            enable: b[6],
            kind: SyncManagerType::from_u8(b[7]),
        })
    }
    /// Encode into 8 bytes.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < Self::LEN {
            return Err(Error::NoSpace);
        }
        put16(b, 0, self.start);
        put16(b, 2, self.length);
        b[4] = self.control;
        b[5] = self.status;
        b[6] = self.enable;
        b[7] = self.kind.to_u8();
        Ok(())
    }
    /// Enabled by default.
    pub fn enabled(&self) -> bool {
        self.enable & Self::ENABLE != 0
    }
}

/// Iterator over the SYNCM category.
#[derive(Debug, Clone)]
pub struct SyncManagers<'a> {
    chunks: core::slice::ChunksExact<'a, u8>,
}

impl<'a> SyncManagers<'a> {
    /// Wrap a SYNCM payload; [`Error::BadLength`] unless it is a whole number of entries.
    pub fn new_checked(data: &'a [u8]) -> Result<Self> {
        let chunks = data.chunks_exact(SyncManagerRepr::LEN);
        if !chunks.remainder().is_empty() {
            return Err(Error::BadLength);
        }
        Ok(SyncManagers { chunks })
    }
}

impl Iterator for SyncManagers<'_> {
    type Item = SyncManagerRepr;
    fn next(&mut self) -> Option<SyncManagerRepr> {
        self.chunks
            .next()
            .and_then(|c| SyncManagerRepr::parse(c).ok())
    }
}

/// One FMMU_EX entry (3 bytes): which SyncManager an FMMU serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FmmuExRepr {
    /// Byte 0: reserved, kept as found.
    pub reserved0: u8,
    /// Byte 1: index of the SyncManager the FMMU serves.
    pub sync_manager: u8,
    /// Byte 2: reserved, kept as found.
    pub reserved2: u8,
}

impl FmmuExRepr {
    /// Size of one entry.
    pub const LEN: usize = 3;
    /// Decode 3 bytes.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        Ok(FmmuExRepr {
            reserved0: b[0],
            sync_manager: b[1],
            reserved2: b[2],
        })
    }
    /// Encode into 3 bytes.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < Self::LEN {
            return Err(Error::NoSpace);
        }
        b[..3].copy_from_slice(&[self.reserved0, self.sync_manager, self.reserved2]);
        Ok(())
    }
}

/// Iterator over the FMMU_EX category (a padding tail shorter than an entry is ignored).
#[derive(Debug, Clone)]
pub struct FmmuExs<'a> {
    chunks: core::slice::ChunksExact<'a, u8>,
}

impl<'a> FmmuExs<'a> {
    /// Wrap an FMMU_EX payload.
    pub fn new(data: &'a [u8]) -> Self {
        FmmuExs {
            chunks: data.chunks_exact(FmmuExRepr::LEN),
        }
    }
}

impl Iterator for FmmuExs<'_> {
    type Item = FmmuExRepr;
    fn next(&mut self) -> Option<FmmuExRepr> {
        self.chunks.next().and_then(|c| FmmuExRepr::parse(c).ok())
    }
}

/// The 8-byte header of one PDO in a TXPDO/RXPDO category (the entry count is implied by the
/// entries that follow; see [`Pdo::entry_count`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PdoRepr {
    /// PDO index (0x1600.. for RxPDOs, 0x1A00.. for TxPDOs).
    pub index: u16,
    /// SyncManager the PDO is assigned to by default (out of range, e.g. 0xFF = none).
    pub sync_manager: u8,
    /// DC synchronization.
    pub dc_sync: u8,
    /// Name string index.
    pub name_index: u8,
    /// Flags (0x0001 mandatory, 0x0002 default, 0x0010 fixed content, …).
    pub flags: u16,
}

impl PdoRepr {
    /// Size of the header.
    pub const LEN: usize = 8;
    /// Flag: mandatory.
    pub const FLAG_MANDATORY: u16 = 0x0001;
    /// Flag: default.
    pub const FLAG_DEFAULT: u16 = 0x0002;
    /// Flag: oversample.
    pub const FLAG_OVERSAMPLE: u16 = 0x0004;
    /// Flag: fixed content.
    pub const FLAG_FIXED: u16 = 0x0010;
    /// Flag: virtual content.
    pub const FLAG_VIRTUAL: u16 = 0x0020;
    /// Flag: configurable.
    pub const FLAG_CONFIGURABLE: u16 = 0x1000;
    /// Flag: writable.
    pub const FLAG_WRITABLE: u16 = 0x8000;

    /// Encode the header with `entries` as the entry count.
    pub fn emit(&self, entries: u8, b: &mut [u8]) -> Result<()> {
        if b.len() < Self::LEN {
            return Err(Error::NoSpace);
        }
        put16(b, 0, self.index);
        b[2] = entries;
        b[3] = self.sync_manager;
        b[4] = self.dc_sync;
        b[5] = self.name_index;
        put16(b, 6, self.flags);
        Ok(())
    }
}

/// One 8-byte PDO entry (a mapped object, or a gap when `index` is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PdoEntryRepr {
    /// Object index (0 = padding gap).
    pub index: u16,
    /// Subindex.
    pub subindex: u8,
    /// Name string index.
    pub name_index: u8,
    /// CoE base data type code (see `coe::DataType`).
    pub data_type: u8,
    /// Length in bits.
    pub bit_len: u8,
    /// Flags.
    pub flags: u16,
}

impl PdoEntryRepr {
    /// Size of one entry.
    pub const LEN: usize = 8;
    /// Decode 8 bytes.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        Ok(PdoEntryRepr {
            index: le16(b, 0),
            subindex: b[2],
            name_index: b[3],
            data_type: b[4],
            bit_len: b[5],
            flags: le16(b, 6),
        })
    }
    /// Encode into 8 bytes.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < Self::LEN {
            return Err(Error::NoSpace);
        }
        put16(b, 0, self.index);
        b[2] = self.subindex;
        b[3] = self.name_index;
        b[4] = self.data_type;
        b[5] = self.bit_len;
        put16(b, 6, self.flags);
        Ok(())
    }
    /// True for a padding gap (index 0).
    pub fn is_gap(&self) -> bool {
        self.index == 0
    }
}

/// One PDO parsed from a TXPDO/RXPDO payload: its header and its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pdo<'a> {
    /// The header.
    pub repr: PdoRepr,
    entries: &'a [u8],
}

impl<'a> Pdo<'a> {
    /// Number of entries.
    pub fn entry_count(&self) -> usize {
        self.entries.len() / PdoEntryRepr::LEN
    }
    /// Iterate the entries.
    pub fn entries(&self) -> PdoEntries<'a> {
        PdoEntries {
            chunks: self.entries.chunks_exact(PdoEntryRepr::LEN),
        }
    }
    /// Sum of the entries' bit lengths.
    pub fn bit_len(&self) -> u32 {
        self.entries().map(|e| e.bit_len as u32).sum()
    }
}

/// Iterator over the entries of one [`Pdo`].
#[derive(Debug, Clone)]
pub struct PdoEntries<'a> {
    chunks: core::slice::ChunksExact<'a, u8>,
}

impl Iterator for PdoEntries<'_> {
    type Item = PdoEntryRepr;
    fn next(&mut self) -> Option<PdoEntryRepr> {
        self.chunks.next().and_then(|c| PdoEntryRepr::parse(c).ok())
    }
}

/// Iterator over the PDO blocks of one TXPDO/RXPDO payload. Yields [`Error::Truncated`] once
/// and stops if a header or its entries run past the payload.
#[derive(Debug, Clone)]
pub struct Pdos<'a> {
    data: &'a [u8],
}

impl<'a> Pdos<'a> {
    /// Wrap a TXPDO/RXPDO payload.
    pub fn new(data: &'a [u8]) -> Self {
        Pdos { data }
    }
}

impl<'a> Iterator for Pdos<'a> {
    type Item = Result<Pdo<'a>>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.data.is_empty() {
            return None;
        }
        let d = core::mem::take(&mut self.data);
        if d.len() < PdoRepr::LEN {
            return Some(Err(Error::Truncated));
        }
        let n = d[2] as usize;
        let end = PdoRepr::LEN + n * PdoEntryRepr::LEN;
        let Some(entries) = d.get(PdoRepr::LEN..end) else {
            return Some(Err(Error::Truncated));
        };
        self.data = &d[end..];
        Some(Ok(Pdo {
            repr: PdoRepr {
                index: le16(d, 0),
                sync_manager: d[3],
                dc_sync: d[4],
                name_index: d[5],
                flags: le16(d, 6),
            },
            entries,
        }))
    }
}

/// One DC operating mode (24 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DcRepr {
    /// SYNC0 cycle time in ns.
    pub sync0_cycle: u32,
    /// SYNC0 shift time in ns.
    pub sync0_shift: u32,
    /// SYNC1 shift time in ns.
    pub sync1_shift: u32,
    /// SYNC1 cycle factor.
    pub sync1_cycle_factor: i16,
    /// AssignActivate: value for 0x0980/0x0981 as one word (e.g. 0x0300).
    pub assign_activate: u16,
    /// SYNC0 cycle factor.
    pub sync0_cycle_factor: i16,
    /// Name string index.
    pub name_index: u8,
    /// Description string index.
    pub desc_index: u8,
    /// Bytes 20–23: reserved, kept as found.
    pub reserved: [u8; 4],
}

impl DcRepr {
    /// Size of one mode.
    pub const LEN: usize = 24;
    /// Decode 24 bytes.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        Ok(DcRepr {
            sync0_cycle: le32(b, 0),
            sync0_shift: le32(b, 4),
            sync1_shift: le32(b, 8),
            sync1_cycle_factor: le16(b, 12) as i16,
            assign_activate: le16(b, 14),
            sync0_cycle_factor: le16(b, 16) as i16,
            name_index: b[18],
            desc_index: b[19],
            reserved: [b[20], b[21], b[22], b[23]],
        })
    }
    /// Encode into 24 bytes.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < Self::LEN {
            return Err(Error::NoSpace);
        }
        put32(b, 0, self.sync0_cycle);
        put32(b, 4, self.sync0_shift);
        put32(b, 8, self.sync1_shift);
        put16(b, 12, self.sync1_cycle_factor as u16);
        put16(b, 14, self.assign_activate);
        put16(b, 16, self.sync0_cycle_factor as u16);
        b[18] = self.name_index;
        b[19] = self.desc_index;
        b[20..24].copy_from_slice(&self.reserved);
        Ok(())
    }
}

/// Iterator over the DC category's operating modes.
#[derive(Debug, Clone)]
pub struct DcModes<'a> {
    chunks: core::slice::ChunksExact<'a, u8>,
}

impl<'a> DcModes<'a> {
    /// Wrap a DC payload; [`Error::BadLength`] unless it is a whole number of modes.
    pub fn new_checked(data: &'a [u8]) -> Result<Self> {
        let chunks = data.chunks_exact(DcRepr::LEN);
        if !chunks.remainder().is_empty() {
            return Err(Error::BadLength);
        }
        Ok(DcModes { chunks })
    }
}

impl Iterator for DcModes<'_> {
    type Item = DcRepr;
    fn next(&mut self) -> Option<DcRepr> {
        self.chunks.next().and_then(|c| DcRepr::parse(c).ok())
    }
}
