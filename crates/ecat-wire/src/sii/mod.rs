//! SII (Slave Information Interface): the SubDevice's EEPROM image.
//!
//! The image is word addressed (16-bit little-endian words). Words 0x00–0x3F are the fixed
//! area ([`FixedAreaRepr`], protected by a CRC-8 over words 0–6, see [`crc8`]); from word 0x40
//! a list of categories follows (`u16 type`, `u16 size in words`, payload), ended by type
//! 0xFFFF. [`Categories`] walks that list without allocating and stops with an error on
//! garbage instead of panicking; the typed category parsers live in [`categories`] (re-exported
//! here) and [`SiiWriter`] builds complete images for the simulator.
//!
//! A bad CRC is never silently accepted: [`FixedAreaRepr::parse`] fails with
//! [`Error::Checksum`], while [`FixedAreaRepr::parse_any`] decodes anyway and hands back a
//! [`CrcCheck`] the caller inspects (a master may still want to show the identity of a
//! SubDevice whose EEPROM is corrupt).

use crate::{le16, le32, put16, put32, Error, Result};

pub mod categories;
mod writer;

pub use categories::*;
pub use writer::SiiWriter;

#[cfg(test)]
mod tests;

/// Bytes of the fixed area (words 0x00–0x3F).
pub const FIXED_AREA_LEN: usize = 128;
/// Byte offset of the first category header (word 0x40).
pub const CATEGORIES_OFFSET: usize = 0x80;
/// Bytes covered by the CRC (words 0–6).
pub const CRC_COVERED_LEN: usize = 14;
/// Bytes of a category header (type + size).
pub const CATEGORY_HEADER_LEN: usize = 4;

/// Word addresses of the fixed-area fields (for masters reading single words).
pub mod word {
    /// PDI control (low byte PDI type, high byte ESC configuration).
    pub const PDI_CONTROL: u16 = 0x0000;
    /// PDI configuration.
    pub const PDI_CONFIG: u16 = 0x0001;
    /// SYNC impulse length (10 ns units).
    pub const SYNC_IMPULSE_LEN: u16 = 0x0002;
    /// Extended PDI configuration.
    pub const EXT_PDI_CONFIG: u16 = 0x0003;
    /// Configured station alias.
    pub const STATION_ALIAS: u16 = 0x0004;
    /// Checksum (low byte CRC-8 of words 0–6).
    pub const CHECKSUM: u16 = 0x0007;
    /// Vendor ID (2 words).
    pub const VENDOR_ID: u16 = 0x0008;
    /// Product code (2 words).
    pub const PRODUCT_CODE: u16 = 0x000A;
    /// Revision number (2 words).
    pub const REVISION: u16 = 0x000C;
    /// Serial number (2 words).
    pub const SERIAL: u16 = 0x000E;
    /// Bootstrap receive-mailbox offset.
    pub const BOOT_RX_MAILBOX_OFFSET: u16 = 0x0014;
    /// Bootstrap receive-mailbox size.
    pub const BOOT_RX_MAILBOX_SIZE: u16 = 0x0015;
    /// Bootstrap send-mailbox offset.
    pub const BOOT_TX_MAILBOX_OFFSET: u16 = 0x0016;
    /// Bootstrap send-mailbox size.
    pub const BOOT_TX_MAILBOX_SIZE: u16 = 0x0017;
    /// Standard receive-mailbox offset (SM0).
    pub const STD_RX_MAILBOX_OFFSET: u16 = 0x0018;
    /// Standard receive-mailbox size (SM0).
    pub const STD_RX_MAILBOX_SIZE: u16 = 0x0019;
    /// Standard send-mailbox offset (SM1).
    pub const STD_TX_MAILBOX_OFFSET: u16 = 0x001A;
    /// Standard send-mailbox size (SM1).
    pub const STD_TX_MAILBOX_SIZE: u16 = 0x001B;
    /// Supported mailbox protocols.
    pub const MAILBOX_PROTOCOLS: u16 = 0x001C;
    /// EEPROM size ((Kbit) − 1).
    pub const EEPROM_SIZE: u16 = 0x003E;
    /// Version.
    pub const VERSION: u16 = 0x003F;
    /// First category header.
    pub const FIRST_CATEGORY: u16 = 0x0040;
}

/// CRC-8 of the SII fixed area: polynomial 0x07, initial value 0xFF, no reflection, no final
/// XOR. `crc8(b"123456789") == 0xFB`.
pub fn crc8(data: &[u8]) -> u8 {
    let mut crc = 0xFFu8;
    for &b in data {
        crc ^= b;
        for _ in 0..8 {
            crc = if crc & 0x80 != 0 {
                (crc << 1) ^ 0x07
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Mailbox protocols a SubDevice supports (SII word 0x1C), a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct MailboxProtocols(pub u16);

impl MailboxProtocols {
    /// ADS over EtherCAT.
    pub const AOE: MailboxProtocols = MailboxProtocols(0x01);
    /// Ethernet over EtherCAT.
    pub const EOE: MailboxProtocols = MailboxProtocols(0x02);
    /// CANopen over EtherCAT.
    pub const COE: MailboxProtocols = MailboxProtocols(0x04);
    /// File access over EtherCAT.
    pub const FOE: MailboxProtocols = MailboxProtocols(0x08);
    /// Servo drive profile over EtherCAT.
    pub const SOE: MailboxProtocols = MailboxProtocols(0x10);
    /// Vendor specific over EtherCAT.
    pub const VOE: MailboxProtocols = MailboxProtocols(0x20);
    /// No protocol.
    pub const NONE: MailboxProtocols = MailboxProtocols(0);

    /// True if every bit of `other` is set here.
    pub fn contains(self, other: MailboxProtocols) -> bool {
        self.0 & other.0 == other.0
    }
    /// Names of the set bits, in bit order (`AoE`, `EoE`, `CoE`, `FoE`, `SoE`, `VoE`).
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        const NAMES: [&str; 6] = ["AoE", "EoE", "CoE", "FoE", "SoE", "VoE"];
        (0..6)
            .filter(move |i| self.0 & (1 << i) != 0)
            .map(|i| NAMES[i])
    }
}

impl core::ops::BitOr for MailboxProtocols {
    type Output = MailboxProtocols;
    fn bitor(self, rhs: Self) -> Self {
        MailboxProtocols(self.0 | rhs.0)
    }
}

/// Result of checking the fixed-area CRC: the stored and the computed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrcCheck {
    /// Low byte of word 7 as found in the image.
    pub stored: u8,
    /// CRC-8 computed over words 0–6.
    pub computed: u8,
}

impl CrcCheck {
    /// Check the CRC of an image (needs at least the first 16 bytes).
    pub fn of(image: &[u8]) -> Result<CrcCheck> {
        if image.len() < 16 {
            return Err(Error::Truncated);
        }
        Ok(CrcCheck {
            stored: image[14],
            computed: crc8(&image[..CRC_COVERED_LEN]),
        })
    }
    /// True if the stored CRC matches.
    pub fn ok(self) -> bool {
        self.stored == self.computed
    }
}

/// The decoded fixed area (words 0x00–0x3F). Reserved words are not kept; [`emit`] writes
/// them as zeros.
///
/// [`emit`]: FixedAreaRepr::emit
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FixedAreaRepr {
    /// Word 0: PDI control (low byte PDI type, high byte ESC configuration).
    pub pdi_control: u16,
    /// Word 1: PDI configuration.
    pub pdi_config: u16,
    /// Word 2: SYNC impulse length in 10 ns units.
    pub sync_impulse_len: u16,
    /// Word 3: extended PDI configuration.
    pub ext_pdi_config: u16,
    /// Word 4: configured station alias.
    pub station_alias: u16,
    /// Words 8–9: vendor ID.
    pub vendor_id: u32,
    /// Words 0xA–0xB: product code.
    pub product_code: u32,
    /// Words 0xC–0xD: revision number.
    pub revision: u32,
    /// Words 0xE–0xF: serial number.
    pub serial: u32,
    /// Word 0x14: bootstrap receive-mailbox offset (master → SubDevice).
    pub boot_rx_mailbox_offset: u16,
    /// Word 0x15: bootstrap receive-mailbox size.
    pub boot_rx_mailbox_size: u16,
    /// Word 0x16: bootstrap send-mailbox offset (SubDevice → master).
    pub boot_tx_mailbox_offset: u16,
    /// Word 0x17: bootstrap send-mailbox size.
    pub boot_tx_mailbox_size: u16,
    /// Word 0x18: standard receive-mailbox offset (SM0).
    pub std_rx_mailbox_offset: u16,
    /// Word 0x19: standard receive-mailbox size (SM0); 0 = no mailbox.
    pub std_rx_mailbox_size: u16,
    /// Word 0x1A: standard send-mailbox offset (SM1).
    pub std_tx_mailbox_offset: u16,
    /// Word 0x1B: standard send-mailbox size (SM1).
    pub std_tx_mailbox_size: u16,
    /// Word 0x1C: supported mailbox protocols.
    pub mailbox_protocols: MailboxProtocols,
    /// Word 0x3E: EEPROM size as stored, (size in Kbit) − 1.
    pub eeprom_size: u16,
    /// Word 0x3F: version.
    pub version: u16,
}

impl FixedAreaRepr {
    /// Decode the fixed area and require a valid CRC ([`Error::Checksum`] otherwise,
    /// [`Error::Truncated`] if the image is shorter than 128 bytes).
    pub fn parse(image: &[u8]) -> Result<Self> {
        let (repr, crc) = Self::parse_any(image)?;
        if !crc.ok() {
            return Err(Error::Checksum);
        }
        Ok(repr)
    }

    /// Decode the fixed area whatever its CRC, and return the CRC check for the caller to act
    /// on.
    pub fn parse_any(image: &[u8]) -> Result<(Self, CrcCheck)> {
        if image.len() < FIXED_AREA_LEN {
            return Err(Error::Truncated);
        }
        let w = |n: u16| le16(image, 2 * n as usize);
        let d = |n: u16| le32(image, 2 * n as usize);
        let repr = FixedAreaRepr {
            pdi_control: w(word::PDI_CONTROL),
            pdi_config: w(word::PDI_CONFIG),
            sync_impulse_len: w(word::SYNC_IMPULSE_LEN),
            ext_pdi_config: w(word::EXT_PDI_CONFIG),
            station_alias: w(word::STATION_ALIAS),
            vendor_id: d(word::VENDOR_ID),
            product_code: d(word::PRODUCT_CODE),
            revision: d(word::REVISION),
            serial: d(word::SERIAL),
            boot_rx_mailbox_offset: w(word::BOOT_RX_MAILBOX_OFFSET),
            boot_rx_mailbox_size: w(word::BOOT_RX_MAILBOX_SIZE),
            boot_tx_mailbox_offset: w(word::BOOT_TX_MAILBOX_OFFSET),
            boot_tx_mailbox_size: w(word::BOOT_TX_MAILBOX_SIZE),
            std_rx_mailbox_offset: w(word::STD_RX_MAILBOX_OFFSET),
            std_rx_mailbox_size: w(word::STD_RX_MAILBOX_SIZE),
            std_tx_mailbox_offset: w(word::STD_TX_MAILBOX_OFFSET),
            std_tx_mailbox_size: w(word::STD_TX_MAILBOX_SIZE),
            mailbox_protocols: MailboxProtocols(w(word::MAILBOX_PROTOCOLS)),
            eeprom_size: w(word::EEPROM_SIZE),
            version: w(word::VERSION),
        };
        Ok((repr, CrcCheck::of(image)?))
    }

    /// Write the 128-byte fixed area (reserved words zeroed) with a correct CRC in word 7.
    pub fn emit(&self, out: &mut [u8]) -> Result<()> {
        if out.len() < FIXED_AREA_LEN {
            return Err(Error::NoSpace);
        }
        let out = &mut out[..FIXED_AREA_LEN];
        out.fill(0);
        let mut w = |n: u16, v: u16| put16(out, 2 * n as usize, v);
        w(word::PDI_CONTROL, self.pdi_control);
        w(word::PDI_CONFIG, self.pdi_config);
        w(word::SYNC_IMPULSE_LEN, self.sync_impulse_len);
        w(word::EXT_PDI_CONFIG, self.ext_pdi_config);
        w(word::STATION_ALIAS, self.station_alias);
        w(word::BOOT_RX_MAILBOX_OFFSET, self.boot_rx_mailbox_offset);
        w(word::BOOT_RX_MAILBOX_SIZE, self.boot_rx_mailbox_size);
        w(word::BOOT_TX_MAILBOX_OFFSET, self.boot_tx_mailbox_offset);
        w(word::BOOT_TX_MAILBOX_SIZE, self.boot_tx_mailbox_size);
        w(word::STD_RX_MAILBOX_OFFSET, self.std_rx_mailbox_offset);
        w(word::STD_RX_MAILBOX_SIZE, self.std_rx_mailbox_size);
        w(word::STD_TX_MAILBOX_OFFSET, self.std_tx_mailbox_offset);
        w(word::STD_TX_MAILBOX_SIZE, self.std_tx_mailbox_size);
        w(word::MAILBOX_PROTOCOLS, self.mailbox_protocols.0);
        w(word::EEPROM_SIZE, self.eeprom_size);
        w(word::VERSION, self.version);
        put32(out, 2 * word::VENDOR_ID as usize, self.vendor_id);
        put32(out, 2 * word::PRODUCT_CODE as usize, self.product_code);
        put32(out, 2 * word::REVISION as usize, self.revision);
        put32(out, 2 * word::SERIAL as usize, self.serial);
        let crc = crc8(&out[..CRC_COVERED_LEN]);
        put16(out, 2 * word::CHECKSUM as usize, crc as u16);
        Ok(())
    }

    /// True if the SubDevice has a (standard) mailbox: receive-mailbox size non-zero.
    pub fn has_mailbox(&self) -> bool {
        self.std_rx_mailbox_size != 0
    }

    /// EEPROM size in bytes, from word 0x3E ((Kbit + 1) · 128).
    pub fn eeprom_bytes(&self) -> u32 {
        (self.eeprom_size as u32 + 1) * 128
    }

    /// The word 0x3E value for an EEPROM of `bytes` bytes (rounded up to whole Kbit).
    pub fn eeprom_size_for(bytes: u32) -> u16 {
        (bytes.div_ceil(128).max(1) - 1).min(u16::MAX as u32) as u16
    }
}

/// A category type (word 0 of a category header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CategoryType {
    /// 0: no operation.
    Nop,
    /// 10: strings.
    Strings,
    /// 20: data types.
    DataTypes,
    /// 30: general information.
    General,
    /// 40: FMMU usage.
    Fmmu,
    /// 41: SyncManager configuration.
    SyncM,
    /// 42: FMMU extension.
    FmmuEx,
    /// 43: sync units.
    SyncUnit,
    /// 50: TxPDOs (SubDevice → master, inputs).
    TxPdo,
    /// 51: RxPDOs (master → SubDevice, outputs).
    RxPdo,
    /// 60: distributed clocks operating modes.
    Dc,
    /// 0xFFFF: end of the category list.
    End,
    /// Any other code (device, vendor or application specific).
    Other(u16),
}

impl CategoryType {
    /// Decode a type word.
    pub fn from_u16(v: u16) -> CategoryType {
        use CategoryType::*;
        match v {
            0 => Nop,
            10 => Strings,
            20 => DataTypes,
            30 => General,
            40 => Fmmu,
            41 => SyncM,
            42 => FmmuEx,
            43 => SyncUnit,
            50 => TxPdo,
            51 => RxPdo,
            60 => Dc,
            0xFFFF => End,
            o => Other(o),
        }
    }
    /// The type word.
    pub fn to_u16(self) -> u16 {
        use CategoryType::*;
        match self {
            Nop => 0,
            Strings => 10,
            DataTypes => 20,
            General => 30,
            Fmmu => 40,
            SyncM => 41,
            FmmuEx => 42,
            SyncUnit => 43,
            TxPdo => 50,
            RxPdo => 51,
            Dc => 60,
            End => 0xFFFF,
            Other(o) => o,
        }
    }
    /// A short upper-case name (`STRINGS`, `GENERAL`, …; `OTHER` for the rest).
    pub fn name(self) -> &'static str {
        use CategoryType::*;
        match self {
            Nop => "NOP",
            Strings => "STRINGS",
            DataTypes => "DATATYPES",
            General => "GENERAL",
            Fmmu => "FMMU",
            SyncM => "SYNCM",
            FmmuEx => "FMMU_EX",
            SyncUnit => "SYNCUNIT",
            TxPdo => "TXPDO",
            RxPdo => "RXPDO",
            Dc => "DC",
            End => "END",
            Other(_) => "OTHER",
        }
    }
}

/// One category found in an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Category<'a> {
    /// Its type.
    pub kind: CategoryType,
    /// Word address of its header in the image.
    pub word_address: usize,
    /// Its payload (`2 · size` bytes).
    pub data: &'a [u8],
}

/// Iterator over the categories of an image, from word 0x40 to the END marker.
///
/// Yields `Err` once and then stops if a header is cut off by the end of the image
/// ([`Error::Truncated`], also when the image ends without an END marker) or a payload runs
/// past it ([`Error::BadLength`]). Every step advances at least 4 bytes, so it always ends.
#[derive(Debug, Clone)]
pub struct Categories<'a> {
    image: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> Categories<'a> {
    /// Walk the categories of a whole image (starting at byte 0x80).
    pub fn new(image: &'a [u8]) -> Self {
        Self::starting_at(image, CATEGORIES_OFFSET)
    }
    /// Walk categories starting at byte `offset` (e.g. 0 for a buffer holding only the
    /// category area).
    pub fn starting_at(image: &'a [u8], offset: usize) -> Self {
        Categories {
            image,
            pos: offset,
            done: false,
        }
    }
}

impl<'a> Iterator for Categories<'a> {
    type Item = Result<Category<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let rest = self.image.get(self.pos..).unwrap_or(&[]);
        if rest.len() >= 2 && le16(rest, 0) == 0xFFFF {
            self.done = true;
            return None;
        }
        if rest.len() < CATEGORY_HEADER_LEN {
            self.done = true;
            return Some(Err(Error::Truncated));
        }
        let kind = CategoryType::from_u16(le16(rest, 0));
        let len = le16(rest, 2) as usize * 2;
        let Some(data) = rest.get(CATEGORY_HEADER_LEN..CATEGORY_HEADER_LEN + len) else {
            self.done = true;
            return Some(Err(Error::BadLength));
        };
        let word_address = self.pos / 2;
        self.pos += CATEGORY_HEADER_LEN + len;
        Some(Ok(Category {
            kind,
            word_address,
            data,
        }))
    }
}

/// Find the payload of the first category of type `kind`; `Ok(None)` if the list ends without
/// one, `Err` if the list is broken before it is found.
pub fn find_category(image: &[u8], kind: CategoryType) -> Result<Option<&[u8]>> {
    for c in Categories::new(image) {
        let c = c?;
        if c.kind == kind {
            return Ok(Some(c.data));
        }
    }
    Ok(None)
}

/// A convenience view over a whole SII image: the fixed area and typed access to the
/// categories a master needs.
#[derive(Debug, Clone, Copy)]
pub struct Sii<'a> {
    image: &'a [u8],
}

impl<'a> Sii<'a> {
    /// Wrap an image; checks that the fixed area is present (the CRC is checked by
    /// [`Sii::fixed`] / [`Sii::crc`]).
    pub fn new(image: &'a [u8]) -> Result<Self> {
        if image.len() < FIXED_AREA_LEN {
            return Err(Error::Truncated);
        }
        Ok(Sii { image })
    }
    /// The raw image.
    pub fn image(&self) -> &'a [u8] {
        self.image
    }
    /// The fixed area, requiring a valid CRC.
    pub fn fixed(&self) -> Result<FixedAreaRepr> {
        FixedAreaRepr::parse(self.image)
    }
    /// The CRC check of the fixed area.
    pub fn crc(&self) -> CrcCheck {
        // `new` guaranteed 128 bytes, so this cannot fail.
        CrcCheck::of(self.image).unwrap_or(CrcCheck {
            stored: 0,
            computed: 1,
        })
    }
    /// Iterate the categories.
    pub fn categories(&self) -> Categories<'a> {
        Categories::new(self.image)
    }
    /// Payload of the first category of `kind`.
    pub fn category(&self, kind: CategoryType) -> Result<Option<&'a [u8]>> {
        find_category(self.image, kind)
    }
    /// The STRINGS category (empty if absent).
    pub fn strings(&self) -> Result<Strings<'a>> {
        Ok(Strings::new(
            self.category(CategoryType::Strings)?.unwrap_or(&[]),
        ))
    }
    /// The GENERAL category, if present.
    pub fn general(&self) -> Result<Option<GeneralRepr>> {
        self.category(CategoryType::General)?
            .map(GeneralRepr::parse)
            .transpose()
    }
    /// The FMMU category (empty if absent).
    pub fn fmmus(&self) -> Result<Fmmus<'a>> {
        Ok(Fmmus::new(
            self.category(CategoryType::Fmmu)?.unwrap_or(&[]),
        ))
    }
    /// The SYNCM category (empty if absent).
    pub fn sync_managers(&self) -> Result<SyncManagers<'a>> {
        SyncManagers::new_checked(self.category(CategoryType::SyncM)?.unwrap_or(&[]))
    }
    /// The FMMU_EX category (empty if absent).
    pub fn fmmu_ex(&self) -> Result<FmmuExs<'a>> {
        Ok(FmmuExs::new(
            self.category(CategoryType::FmmuEx)?.unwrap_or(&[]),
        ))
    }
    /// PDOs of every TXPDO or RXPDO category (`kind`), in image order. Some SubDevices put
    /// all PDOs in one category, others one category per PDO; both read the same here.
    pub fn pdos(&self, kind: CategoryType) -> SiiPdos<'a> {
        SiiPdos {
            categories: self.categories(),
            kind,
            current: Pdos::new(&[]),
        }
    }
    /// The DC category (empty if absent).
    pub fn dc(&self) -> Result<DcModes<'a>> {
        DcModes::new_checked(self.category(CategoryType::Dc)?.unwrap_or(&[]))
    }
}

/// PDOs across all categories of one kind (see [`Sii::pdos`]). Yields `Err` and stops when the
/// category list or a PDO block is broken.
#[derive(Debug, Clone)]
pub struct SiiPdos<'a> {
    categories: Categories<'a>,
    kind: CategoryType,
    current: Pdos<'a>,
}

impl<'a> Iterator for SiiPdos<'a> {
    type Item = Result<Pdo<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(p) = self.current.next() {
                if p.is_err() {
                    self.categories = Categories::new(&[]);
                    self.categories.done = true;
                }
                return Some(p);
            }
            match self.categories.next()? {
                Err(e) => return Some(Err(e)),
                Ok(c) if c.kind == self.kind => self.current = Pdos::new(c.data),
                Ok(_) => {}
            }
        }
    }
}
