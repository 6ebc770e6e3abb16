//! SII images from ESI (what siitool or TwinCAT's EEPROM writer do).
//!
//! Layout, following what Beckhoff writes into its terminals: fixed area (ConfigData →
//! words 0–6, CRC in word 7, identity, bootstrap and standard mailbox from the `BootStrap` and
//! mailbox SyncManagers, protocol word, EEPROM size from `ByteSize`, version 1), then STRINGS,
//! GENERAL, FMMU, SYNCM, SYNCUNIT, TXPDO, RXPDO and DC categories, then END. The string table
//! starts with order number, group type, group name and device name (the order Beckhoff
//! uses), then PDO, entry and DC mode names, each stored once. GENERAL carries the
//! CoE/FoE/EoE details, the mailbox data-link-layer and not-LRW flags, the E-bus current, the
//! port types and the identification (`IdentificationAdo` → IdentPhyM and its address,
//! `IdentificationReg134` → IdentALSts). Odd-length categories are padded with 0xFF and the
//! EEPROM past END is erased (0xFF, [`BuiltSii::padded`]), as in Beckhoff's EEPROMs. SII
//! strings are ISO 8859-1: characters outside Latin-1 become `?`. The bytes are laid out by
//! `ecat-wire`'s [`SiiWriter`].
//!
//! SYNCUNIT (category 43) has no documented encoding in our sources. Real Beckhoff EEPROMs
//! whose ESI has one `<Su FrameRepeatSupport="1"/>` (EL2004, EL2828, EL2889 dumps in
//! `testdata/sii`) carry it as one byte 0xF0 per unit (then the 0xFF pad), and devices without
//! `<Su>` (the EK1100) carry none; the builder writes exactly that, and nothing for the other
//! `<Su>` forms (bare `<Su/>` lists of oversampling terminals), whose bytes we have never seen.
//! Not written either: GENERAL byte 4 (Beckhoff writes 0x02 on couplers, 0x0C on terminals;
//! no source says what it means) and the per-unit production data (words 0x20–0x22, device
//! specific categories 1–9).

use crate::error::{Error, Result};
use crate::esi::{Device, FmmuKind, Pdo, SmKind};
use ecat_wire::sii::{
    crc8, CategoryType, CoeDetails, DcRepr, FixedAreaRepr, GeneralFlags, GeneralRepr,
    MailboxProtocols, PdoEntryRepr, PdoRepr, SiiWriter, SyncManagerRepr, SyncManagerType,
    CRC_COVERED_LEN,
};

/// Choices for [`build_sii_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiiOptions {
    /// Language of the group and device names (1033 English, 1031 German as in Beckhoff's
    /// own EEPROMs); falls back to English, then to the first name.
    pub lcid: u32,
    /// Serial number for words 0x0E–0x0F.
    pub serial: u32,
}

/// The SYNCUNIT byte of a unit with `FrameRepeatSupport` (see the module note).
pub const SYNC_UNIT_FRAME_REPEAT: u8 = 0xF0;

impl Default for SiiOptions {
    fn default() -> Self {
        SiiOptions {
            lcid: 1033,
            serial: 0,
        }
    }
}

/// EEPROM size assumed when the ESI gives no `ByteSize`.
pub const DEFAULT_EEPROM_BYTES: u32 = 2048;

/// Which PDOs an image describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdoContent {
    /// Every RxPDO and TxPDO of the ESI.
    All,
    /// Only the PDOs assigned by default (those with an `Sm`): all PDOs did not fit the
    /// EEPROM; the others are still described by the CoE dictionary.
    DefaultOnly,
    /// No PDO categories: even the default PDOs did not fit; the device has CoE, so a
    /// MainDevice reads the assignment and mapping from it.
    None,
}

/// An image and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltSii {
    /// The image, up to and including the END marker.
    pub image: Vec<u8>,
    /// Which PDOs it describes.
    pub pdos: PdoContent,
    /// False when the DC modes' names and descriptions were left out to fit the EEPROM.
    pub dc_names: bool,
    /// The EEPROM size it was fitted to (`ByteSize`, else [`DEFAULT_EEPROM_BYTES`]).
    pub eeprom_bytes: u32,
}

impl BuiltSii {
    /// The whole EEPROM content: the image followed by erased bytes (0xFF) up to
    /// [`BuiltSii::eeprom_bytes`], as a real EEPROM reads.
    pub fn padded(&self) -> Vec<u8> {
        let mut out = self.image.clone();
        if out.len() < self.eeprom_bytes as usize {
            out.resize(self.eeprom_bytes as usize, 0xFF);
        }
        out
    }
}

/// The SYNCUNIT payload of `device`, when the builder writes one (see the module note).
pub fn sync_unit_bytes(device: &Device) -> Option<Vec<u8>> {
    let units = &device.sync_units;
    (!units.is_empty() && units.iter().all(|u| u.frame_repeat_support))
        .then(|| vec![SYNC_UNIT_FRAME_REPEAT; units.len()])
}

/// Build the SII image of `device` with default options (English names, serial 0).
pub fn build_sii(device: &Device) -> Result<Vec<u8>> {
    build_sii_with(device, &SiiOptions::default())
}

/// Build the SII image of `device`. The image ends after the END category marker (the rest
/// of a real EEPROM is erased, 0xFF) and fits the ESI's `ByteSize`: when all PDOs do not
/// fit, only the default ones are written, then the DC modes lose their names, and a CoE
/// device finally gets no PDO categories (see [`BuiltSii`]).
pub fn build_sii_with(device: &Device, opts: &SiiOptions) -> Result<Vec<u8>> {
    build_sii_detailed(device, opts).map(|b| b.image)
}

/// [`build_sii_with`], also telling which PDOs the image holds.
pub fn build_sii_detailed(device: &Device, opts: &SiiOptions) -> Result<BuiltSii> {
    let byte_size = device
        .eeprom
        .as_ref()
        .and_then(|e| e.byte_size)
        .unwrap_or(DEFAULT_EEPROM_BYTES);
    let has_coe = device.mailbox.as_ref().is_some_and(|m| m.coe.is_some());
    // Ever smaller until it fits.
    let mut tries = vec![
        (PdoContent::All, true),
        (PdoContent::DefaultOnly, true),
        (PdoContent::DefaultOnly, false),
    ];
    if has_coe {
        tries.push((PdoContent::None, true));
        tries.push((PdoContent::None, false));
    }
    let mut last_len = 0;
    for (pdos, dc_names) in tries {
        let image = layout(device, opts, pdos, dc_names)?;
        if image.len() <= byte_size as usize {
            return Ok(BuiltSii {
                image,
                pdos,
                dc_names,
                eeprom_bytes: byte_size,
            });
        }
        last_len = image.len();
    }
    Err(Error::Sii {
        device: device.label(),
        message: format!(
            "the image needs {last_len} bytes but the ESI's EEPROM ByteSize is {byte_size}"
        ),
    })
}

fn layout(
    device: &Device,
    opts: &SiiOptions,
    content: PdoContent,
    dc_names: bool,
) -> Result<Vec<u8>> {
    let fail = |message: String| Error::Sii {
        device: device.label(),
        message,
    };
    let eeprom = device.eeprom.clone().unwrap_or_default();
    let byte_size = eeprom.byte_size.unwrap_or(DEFAULT_EEPROM_BYTES);

    let mut fixed = FixedAreaRepr {
        vendor_id: device.vendor_id,
        product_code: device.product_code.unwrap_or(0),
        revision: device.revision,
        serial: opts.serial,
        eeprom_size: FixedAreaRepr::eeprom_size_for(byte_size),
        version: 1,
        ..Default::default()
    };
    let cfg = |w: usize| -> u16 {
        let b = |i: usize| eeprom.config_data.get(i).copied().unwrap_or(0) as u16;
        b(2 * w) | (b(2 * w + 1) << 8)
    };
    fixed.pdi_control = cfg(0);
    fixed.pdi_config = cfg(1);
    fixed.sync_impulse_len = cfg(2);
    fixed.ext_pdi_config = cfg(3);
    fixed.station_alias = cfg(4);
    if let Some(b) = &eeprom.bootstrap {
        let w = |i: usize| -> u16 {
            let g = |j: usize| b.get(j).copied().unwrap_or(0) as u16;
            g(2 * i) | (g(2 * i + 1) << 8)
        };
        fixed.boot_rx_mailbox_offset = w(0);
        fixed.boot_rx_mailbox_size = w(1);
        fixed.boot_tx_mailbox_offset = w(2);
        fixed.boot_tx_mailbox_size = w(3);
    }
    if let Some((ro, rs, so, ss)) = device.mailbox_layout() {
        fixed.std_rx_mailbox_offset = ro;
        fixed.std_rx_mailbox_size = rs;
        fixed.std_tx_mailbox_offset = so;
        fixed.std_tx_mailbox_size = ss;
    }
    if let Some(m) = &device.mailbox {
        fixed.mailbox_protocols = MailboxProtocols(m.protocol_word());
    }

    // Strings first: every category refers to them by index.
    let mut st = Strings::default();
    let order_index = st.add(&device.type_name);
    let group_index = st.add(&device.group_type);
    let group_name = device
        .group
        .as_ref()
        .and_then(|g| crate::esi::pick_text(&g.names, opts.lcid))
        .unwrap_or("");
    let group_name_index = st.add(group_name);
    let name_index = st.add(device.name(opts.lcid));
    let keep = |p: &&Pdo| match content {
        PdoContent::All => true,
        PdoContent::DefaultOnly => p.assigned_by_default(),
        PdoContent::None => false,
    };
    let tx: Vec<&Pdo> = device.tx_pdos().filter(keep).collect();
    let rx: Vec<&Pdo> = device.rx_pdos().filter(keep).collect();
    let tx_cat = pdo_reprs(&tx, &mut st, &fail)?;
    let rx_cat = pdo_reprs(&rx, &mut st, &fail)?;
    let dc: Vec<DcRepr> = device
        .dc
        .iter()
        .map(|m| DcRepr {
            sync0_cycle: m.sync0_cycle,
            sync0_shift: m.sync0_shift as u32,
            sync1_shift: m.sync1_shift as u32,
            sync1_cycle_factor: m.sync1_factor as i16,
            assign_activate: m.assign_activate,
            sync0_cycle_factor: m.sync0_factor as i16,
            name_index: if dc_names { st.add(&m.name) } else { 0 },
            desc_index: if dc_names { st.add(&m.desc) } else { 0 },
            reserved: [0; 4],
        })
        .collect();

    let mut general = GeneralRepr {
        group_index,
        order_index,
        name_index,
        group_index2: group_name_index,
        ebus_current_ma: device
            .ebus_current_ma
            .unwrap_or(0)
            .clamp(i16::MIN as i32, i16::MAX as i32) as i16,
        ..Default::default()
    };
    if let Some(m) = &device.mailbox {
        if let Some(c) = &m.coe {
            let mut d = CoeDetails::SDO;
            for (on, bit) in [
                (c.sdo_info, CoeDetails::SDO_INFO),
                (c.pdo_assign, CoeDetails::PDO_ASSIGN),
                (c.pdo_config, CoeDetails::PDO_CONFIG),
                (c.pdo_upload, CoeDetails::PDO_UPLOAD),
                (c.complete_access, CoeDetails::COMPLETE_ACCESS),
            ] {
                if on {
                    d |= bit;
                }
            }
            general.coe_details = CoeDetails(d);
        }
        general.foe_details = m.foe as u8;
        general.eoe_details = m.eoe as u8;
        if m.data_link_layer {
            general.flags = GeneralFlags(GeneralFlags::MBOX_DLL);
        }
    }
    if device.use_lrd_lwr {
        general.flags = GeneralFlags(general.flags.0 | GeneralFlags::NOT_LRW);
    }
    if let Some(ado) = device.ident_ado {
        general.flags = GeneralFlags(general.flags.0 | GeneralFlags::IDENT_PHYS_MEM);
        general.ident_phys_addr = ado;
    }
    if device.ident_reg134 {
        general.flags = GeneralFlags(general.flags.0 | GeneralFlags::IDENT_AL_STATUS);
    }
    for (n, p) in device.esc.ports.iter().take(4).enumerate() {
        general.physical_ports |= (p.sii_nibble() as u16) << (4 * n);
    }

    let mut fmmus: Vec<u8> = device
        .fmmus
        .iter()
        .map(|f| match f.kind {
            FmmuKind::Outputs => 1,
            FmmuKind::Inputs => 2,
            FmmuKind::MBoxState => 3,
            FmmuKind::Other(_) => 0,
        })
        .collect();
    if fmmus.len() % 2 == 1 {
        fmmus.push(0xFF); // Beckhoff pads with an unused (0xFF) FMMU.
    }
    let sms: Vec<SyncManagerRepr> = device
        .sms
        .iter()
        .map(|s| SyncManagerRepr {
            start: s.start,
            length: s.default_size.unwrap_or(0),
            control: s.control,
            status: 0,
            enable: s.sii_enable(),
            kind: match s.kind {
                SmKind::MBoxOut => SyncManagerType::MailboxOut,
                SmKind::MBoxIn => SyncManagerType::MailboxIn,
                SmKind::Outputs => SyncManagerType::Outputs,
                SmKind::Inputs => SyncManagerType::Inputs,
                SmKind::Other(_) => SyncManagerType::Unused,
            },
        })
        .collect();

    // Lay it out in a buffer large enough for anything, then check it fits the EEPROM.
    let mut buf = vec![0xFFu8; (byte_size as usize).max(64 * 1024)];
    let too_big = |_| fail("the categories do not fit 64 KiB".into());
    let mut w = SiiWriter::new(&mut buf, &fixed)
        .map_err(too_big)?
        .with_padding(0xFF);
    w.strings(&st.items).map_err(too_big)?;
    w.general(&general).map_err(too_big)?;
    if !fmmus.is_empty() {
        w.raw(CategoryType::Fmmu, &fmmus).map_err(too_big)?;
    }
    if !sms.is_empty() {
        w.sync_managers(&sms).map_err(too_big)?;
    }
    if let Some(units) = sync_unit_bytes(device) {
        w.raw(CategoryType::SyncUnit, &units).map_err(too_big)?;
    }
    for (kind, cat) in [
        (CategoryType::TxPdo, &tx_cat),
        (CategoryType::RxPdo, &rx_cat),
    ] {
        if !cat.is_empty() {
            let refs: Vec<(PdoRepr, &[PdoEntryRepr])> =
                cat.iter().map(|(p, e)| (*p, e.as_slice())).collect();
            w.pdos(kind, &refs).map_err(too_big)?;
        }
    }
    if !dc.is_empty() {
        w.dc(&dc).map_err(too_big)?;
    }
    let len = w.finish();
    buf.truncate(len);
    // Words 5 and 6 of ConfigData are reserved but covered by the CRC: keep them as given.
    for (i, b) in buf.iter_mut().enumerate().take(CRC_COVERED_LEN).skip(10) {
        *b = eeprom.config_data.get(i).copied().unwrap_or(0);
    }
    buf[14] = crc8(&buf[..CRC_COVERED_LEN]);
    buf[15] = 0;
    Ok(buf)
}

type PdoCategory = Vec<(PdoRepr, Vec<PdoEntryRepr>)>;

fn pdo_reprs(
    pdos: &[&Pdo],
    st: &mut Strings,
    fail: &dyn Fn(String) -> Error,
) -> Result<PdoCategory> {
    let mut out = Vec::new();
    for p in pdos {
        let mut flags = 0;
        if p.mandatory {
            flags |= PdoRepr::FLAG_MANDATORY;
        }
        if p.fixed {
            flags |= PdoRepr::FLAG_FIXED;
        }
        if p.virtual_pdo {
            flags |= PdoRepr::FLAG_VIRTUAL;
        }
        let repr = PdoRepr {
            index: p.index,
            sync_manager: p.sm.unwrap_or(0xFF),
            dc_sync: 0,
            name_index: st.add(&p.name),
            flags,
        };
        if p.entries.len() > 255 {
            return Err(fail(format!(
                "PDO 0x{:04x} has {} entries, SII allows 255",
                p.index,
                p.entries.len()
            )));
        }
        let mut entries = Vec::new();
        for e in &p.entries {
            let bit_len = u8::try_from(e.bit_len).map_err(|_| {
                fail(format!(
                    "PDO 0x{:04x} entry 0x{:04x}:{} is {} bits long, SII allows 255",
                    p.index, e.index, e.subindex, e.bit_len
                ))
            })?;
            entries.push(PdoEntryRepr {
                index: e.index,
                subindex: e.subindex,
                name_index: st.add(&e.name),
                data_type: e.data_type_code().min(255) as u8,
                bit_len,
                flags: 0,
            });
        }
        out.push((repr, entries));
    }
    Ok(out)
}

/// The STRINGS table being built: each distinct string once, 1-based, Latin-1.
#[derive(Default)]
struct Strings {
    items: Vec<Vec<u8>>,
}

impl Strings {
    /// Index of `s` (added if new); 0 for the empty string or when the table is full.
    fn add(&mut self, s: &str) -> u8 {
        if s.is_empty() {
            return 0;
        }
        let bytes = latin1(s);
        if let Some(i) = self.items.iter().position(|x| *x == bytes) {
            return (i + 1) as u8;
        }
        if self.items.len() >= 255 {
            return 0;
        }
        self.items.push(bytes);
        self.items.len() as u8
    }
}

/// `s` as ISO 8859-1 bytes (characters beyond U+00FF become `?`), at most 255 bytes.
pub fn latin1(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .take(255)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_strings() {
        assert_eq!(latin1("µs"), vec![0xB5, b's']);
        assert_eq!(latin1("€"), vec![b'?']);
        let mut st = Strings::default();
        assert_eq!(st.add("a"), 1);
        assert_eq!(st.add("b"), 2);
        assert_eq!(st.add("a"), 1);
        assert_eq!(st.add(""), 0);
    }
}
