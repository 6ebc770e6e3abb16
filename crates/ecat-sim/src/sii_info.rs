//! What the simulator needs to know from an SII image, decoded once with `ecat_wire::sii`.
//!
//! [`SiiInfo::parse`] is strict: an image the simulator will serve must have a fixed area with
//! a good CRC, a category list that ends with the END marker, and well-formed STRINGS,
//! GENERAL, SYNCM and PDO categories. Each refusal names the problem in one sentence, so a
//! user who points a network file at a bad dump learns why.

use ecat_wire::sii::{
    CategoryType, DcModes, FixedAreaRepr, Sii, SyncManagerType, CATEGORIES_OFFSET, FIXED_AREA_LEN,
};

/// Why an SII image cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SiiError {
    /// Shorter than the fixed area.
    #[error("the image has {0} bytes, fewer than the 128-byte fixed area")]
    TooShort(usize),
    /// CRC of words 0–6 does not match word 7.
    #[error("bad CRC in the fixed area: word 7 holds 0x{stored:02X} but words 0-6 give 0x{computed:02X}")]
    BadCrc {
        /// CRC stored in word 7.
        stored: u8,
        /// CRC computed over words 0–6.
        computed: u8,
    },
    /// The category list is cut off or has no END marker.
    #[error("the category list is broken or has no END marker (0xFFFF) before the image ends")]
    NoCategoryEnd,
    /// A category's content is malformed.
    #[error("the {0} category is malformed")]
    BadCategory(&'static str),
}

/// A mailbox area from the fixed area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MailboxArea {
    /// Receive mailbox (SM0, MainDevice → SubDevice) start.
    pub rx_start: u16,
    /// Receive mailbox length.
    pub rx_len: u16,
    /// Send mailbox (SM1, SubDevice → MainDevice) start.
    pub tx_start: u16,
    /// Send mailbox length.
    pub tx_len: u16,
}

/// Use of one SyncManager according to the SII.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmKind {
    /// Unused or unknown.
    Unused,
    /// Mailbox out (MainDevice → SubDevice).
    MailboxOut,
    /// Mailbox in (SubDevice → MainDevice).
    MailboxIn,
    /// Process data outputs.
    Outputs,
    /// Process data inputs.
    Inputs,
}

/// One SyncManager as the SII describes it, with the size of its default PDOs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmInfo {
    /// Physical start address.
    pub start: u16,
    /// Length from the SII (0 for process-data SMs sized by their PDOs).
    pub length: u16,
    /// Control byte.
    pub control: u8,
    /// Enable byte.
    pub enable: u8,
    /// Use.
    pub kind: SmKind,
    /// Bits of the PDOs the SII assigns to this SM.
    pub pdo_bits: u32,
}

/// The decoded facts of an SII image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiiInfo {
    /// The fixed area (identity, mailbox words).
    pub fixed: FixedAreaRepr,
    /// Order number / type string, e.g. `EL2008` (empty if the SII has none).
    pub order: String,
    /// Device name string, e.g. `EL2008 8Ch. Dig. Output 24V, 0.5A`.
    pub name: String,
    /// Group string, e.g. `DigOut`.
    pub group: String,
    /// Standard mailbox, if the device has one.
    pub std_mailbox: Option<MailboxArea>,
    /// Bootstrap mailbox, if the device supports BOOT.
    pub boot_mailbox: Option<MailboxArea>,
    /// SyncManagers in SII order.
    pub sms: Vec<SmInfo>,
    /// The SII has a DC category.
    pub has_dc: bool,
    /// The SYNC activation each DC operating mode asks for, in SII order: bits 0–2 of DC
    /// activation 0x0981 (cyclic unit, SYNC0, SYNC1) from the high byte of its AssignActivate;
    /// 0 for a free-run / SM-synchronous mode. Empty without a DC category.
    pub dc_activations: Vec<u8>,
}

/// The bits of DC activation 0x0981 that select the SYNC signals (cyclic unit, SYNC0, SYNC1);
/// bits 3+ only tune how the start time is taken.
pub const DC_SYNC_BITS: u8 = 0x07;

fn area(rx_start: u16, rx_len: u16, tx_start: u16, tx_len: u16) -> Option<MailboxArea> {
    (rx_len != 0).then_some(MailboxArea {
        rx_start,
        rx_len,
        tx_start,
        // Reference §5.1: without a send size masters fall back to the receive size.
        tx_len: if tx_len == 0 { rx_len } else { tx_len },
    })
}

impl SiiInfo {
    /// Decode and validate an image.
    pub fn parse(image: &[u8]) -> Result<SiiInfo, SiiError> {
        if image.len() < FIXED_AREA_LEN {
            return Err(SiiError::TooShort(image.len()));
        }
        let (fixed, crc) =
            FixedAreaRepr::parse_any(image).map_err(|_| SiiError::TooShort(image.len()))?;
        if !crc.ok() {
            return Err(SiiError::BadCrc {
                stored: crc.stored,
                computed: crc.computed,
            });
        }
        if image.len() < CATEGORIES_OFFSET + 2 {
            return Err(SiiError::NoCategoryEnd);
        }
        let sii = Sii::new(image).map_err(|_| SiiError::TooShort(image.len()))?;
        for c in sii.categories() {
            c.map_err(|_| SiiError::NoCategoryEnd)?;
        }
        let strings = sii
            .strings()
            .map_err(|_| SiiError::BadCategory("STRINGS"))?;
        let text = |i: u8| strings.text(i).map(|t| t.to_string()).unwrap_or_default();
        let general = sii
            .general()
            .map_err(|_| SiiError::BadCategory("GENERAL"))?
            .unwrap_or_default();
        let mut sms: Vec<SmInfo> = sii
            .sync_managers()
            .map_err(|_| SiiError::BadCategory("SYNCM"))?
            .map(|s| SmInfo {
                start: s.start,
                length: s.length,
                control: s.control,
                enable: s.enable,
                kind: match s.kind {
                    SyncManagerType::MailboxOut => SmKind::MailboxOut,
                    SyncManagerType::MailboxIn => SmKind::MailboxIn,
                    SyncManagerType::Outputs => SmKind::Outputs,
                    SyncManagerType::Inputs => SmKind::Inputs,
                    _ => SmKind::Unused,
                },
                pdo_bits: 0,
            })
            .collect();
        for (kind, name) in [
            (CategoryType::TxPdo, "TXPDO"),
            (CategoryType::RxPdo, "RXPDO"),
        ] {
            for p in sii.pdos(kind) {
                let p = p.map_err(|_| SiiError::BadCategory(name))?;
                if let Some(sm) = sms.get_mut(p.repr.sync_manager as usize) {
                    sm.pdo_bits += p.bit_len();
                }
            }
        }
        let dc = sii
            .category(CategoryType::Dc)
            .map_err(|_| SiiError::NoCategoryEnd)?;
        // A DC category that is not a whole number of modes is served as it is, unchecked.
        let dc_activations = dc
            .and_then(|d| DcModes::new_checked(d).ok())
            .map(|m| {
                m.map(|m| (m.assign_activate >> 8) as u8 & DC_SYNC_BITS)
                    .collect()
            })
            .unwrap_or_default();
        let f = &fixed;
        Ok(SiiInfo {
            order: text(general.order_index),
            name: text(general.name_index),
            group: text(general.group_index),
            std_mailbox: area(
                f.std_rx_mailbox_offset,
                f.std_rx_mailbox_size,
                f.std_tx_mailbox_offset,
                f.std_tx_mailbox_size,
            ),
            boot_mailbox: area(
                f.boot_rx_mailbox_offset,
                f.boot_rx_mailbox_size,
                f.boot_tx_mailbox_offset,
                f.boot_tx_mailbox_size,
            ),
            sms: {
                sms.truncate(16);
                sms
            },
            has_dc: dc.is_some(),
            dc_activations,
            fixed,
        })
    }
}
