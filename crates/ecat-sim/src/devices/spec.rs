//! Device descriptions as data, and the SII image built from them with
//! `ecat_wire::sii::SiiWriter`.
//!
//! A [`DeviceSpec`] holds what an ESI file says about one device revision: identity, names,
//! the ESC configuration words, mailbox, SyncManagers, FMMUs, PDOs and DC modes. [`build_sii`]
//! turns it into a 2 KiB EEPROM image (erased bytes 0xFF after the END marker) with a string
//! table collected from the names it uses.

use crate::coe::od::ObjSpec;
use ecat_wire::sii::{
    CategoryType, CoeDetails, DcRepr, FixedAreaRepr, FmmuUsage, GeneralFlags, GeneralRepr,
    MailboxProtocols, PdoEntryRepr, PdoRepr, SiiWriter, SyncManagerRepr, SyncManagerType,
};

/// CoE base data type codes used in PDO entries (reference §6.8).
pub mod dtype {
    /// BOOL.
    pub const BOOL: u8 = 0x01;
    /// INTEGER8.
    pub const INT8: u8 = 0x02;
    /// INTEGER16.
    pub const INT16: u8 = 0x03;
    /// INTEGER32.
    pub const INT32: u8 = 0x04;
    /// UNSIGNED8.
    pub const UINT8: u8 = 0x05;
    /// UNSIGNED16.
    pub const UINT16: u8 = 0x06;
}

/// One mapped object of a PDO.
#[derive(Debug, Clone, Copy)]
pub struct EntrySpec {
    /// Object index.
    pub index: u16,
    /// Subindex.
    pub subindex: u8,
    /// Entry name.
    pub name: &'static str,
    /// CoE data type code.
    pub data_type: u8,
    /// Length in bits.
    pub bits: u8,
}

/// One PDO.
#[derive(Debug, Clone, Copy)]
pub struct PdoSpec {
    /// PDO index (0x16xx RxPDO, 0x1Axx TxPDO).
    pub index: u16,
    /// SyncManager assigned by default (0xFF: none).
    pub sm: u8,
    /// PDO name.
    pub name: &'static str,
    /// PDO flags (e.g. mandatory 0x0001, fixed 0x0010).
    pub flags: u16,
    /// Entries.
    pub entries: &'static [EntrySpec],
}

/// One SyncManager default (SII SYNCM entry).
#[derive(Debug, Clone, Copy)]
pub struct SmSpec {
    /// Start address.
    pub start: u16,
    /// Length (0 for process data sized by PDOs).
    pub length: u16,
    /// Control byte.
    pub control: u8,
    /// SII enable byte: bit 0 enabled by default, bit 3 enable in OP only.
    pub enable: u8,
    /// Use.
    pub kind: SyncManagerType,
}

/// A mailbox pair: (receive start, receive size, send start, send size).
pub type MailboxSpec = (u16, u16, u16, u16);

/// Everything needed to build one device's SII.
#[derive(Debug, Clone, Copy)]
pub struct DeviceSpec {
    /// Order number / type, e.g. `EL2008`.
    pub order: &'static str,
    /// Device name from the ESI, e.g. `EL2008 8Ch. Dig. Output 24V, 0.5A`.
    pub name: &'static str,
    /// ESI group type, e.g. `DigOut`.
    pub group: &'static str,
    /// Vendor ID.
    pub vendor: u32,
    /// Product code.
    pub product: u32,
    /// Revision number.
    pub revision: u32,
    /// SII words 0–3 (ESI `Eeprom/ConfigData`): PDI control, PDI config, SYNC pulse length,
    /// extended PDI config.
    pub config: [u16; 4],
    /// Standard mailbox.
    pub mailbox: Option<MailboxSpec>,
    /// Bootstrap mailbox.
    pub bootstrap: Option<MailboxSpec>,
    /// Mailbox protocols (SII word 0x1C).
    pub protocols: MailboxProtocols,
    /// CoE details (GENERAL byte 5).
    pub coe_details: u8,
    /// FoE supported.
    pub foe: bool,
    /// GENERAL flags.
    pub flags: u8,
    /// E-bus current in mA (negative: fed into the bus).
    pub ebus_current_ma: i16,
    /// Physical ports, one nibble per port (GENERAL bytes 16–17).
    pub ports: u16,
    /// FMMU usage.
    pub fmmus: &'static [FmmuUsage],
    /// SyncManagers.
    pub sms: &'static [SmSpec],
    /// RxPDOs (outputs).
    pub rx_pdos: &'static [PdoSpec],
    /// TxPDOs (inputs).
    pub tx_pdos: &'static [PdoSpec],
    /// DC operating modes: (name, description, AssignActivate, SYNC1 shift ns).
    pub dc: &'static [(&'static str, &'static str, u16, u32)],
    /// CoE device type (object 0x1000); unused without CoE.
    pub device_type: u32,
    /// The device's own CoE objects (the standard ones are generated, see
    /// `coe::standard`); empty without CoE.
    pub objects: &'static [ObjSpec],
}

/// Size of the EEPROM images built here (ESI `ByteSize` 2048 for all catalogue devices).
pub const EEPROM_BYTES: usize = 2048;

/// A string table that hands out 1-based indices.
#[derive(Default)]
struct Strings(Vec<&'static str>);

impl Strings {
    fn index(&mut self, s: &'static str) -> u8 {
        if s.is_empty() {
            return 0;
        }
        if let Some(i) = self.0.iter().position(|&x| x == s) {
            return (i + 1) as u8;
        }
        self.0.push(s);
        self.0.len() as u8
    }
}

fn pdo_reprs(pdos: &'static [PdoSpec], strings: &mut Strings) -> Vec<(PdoRepr, Vec<PdoEntryRepr>)> {
    pdos.iter()
        .map(|p| {
            let repr = PdoRepr {
                index: p.index,
                sync_manager: p.sm,
                dc_sync: 0,
                name_index: strings.index(p.name),
                flags: p.flags,
            };
            let entries = p
                .entries
                .iter()
                .map(|e| PdoEntryRepr {
                    index: e.index,
                    subindex: e.subindex,
                    name_index: strings.index(e.name),
                    data_type: e.data_type,
                    bit_len: e.bits,
                    flags: 0,
                })
                .collect();
            (repr, entries)
        })
        .collect()
}

/// Build the SII image of `spec` with the given serial number.
pub fn build_sii(spec: &DeviceSpec, serial: u32) -> Vec<u8> {
    let mbx = spec.mailbox.unwrap_or_default();
    let boot = spec.bootstrap.unwrap_or_default();
    let fixed = FixedAreaRepr {
        pdi_control: spec.config[0],
        pdi_config: spec.config[1],
        sync_impulse_len: spec.config[2],
        ext_pdi_config: spec.config[3],
        station_alias: 0,
        vendor_id: spec.vendor,
        product_code: spec.product,
        revision: spec.revision,
        serial,
        boot_rx_mailbox_offset: boot.0,
        boot_rx_mailbox_size: boot.1,
        boot_tx_mailbox_offset: boot.2,
        boot_tx_mailbox_size: boot.3,
        std_rx_mailbox_offset: mbx.0,
        std_rx_mailbox_size: mbx.1,
        std_tx_mailbox_offset: mbx.2,
        std_tx_mailbox_size: mbx.3,
        mailbox_protocols: spec.protocols,
        eeprom_size: FixedAreaRepr::eeprom_size_for(EEPROM_BYTES as u32),
        version: 1,
    };
    let mut st = Strings::default();
    let order_index = st.index(spec.order);
    let name_index = st.index(spec.name);
    let group_index = st.index(spec.group);
    let rx = pdo_reprs(spec.rx_pdos, &mut st);
    let tx = pdo_reprs(spec.tx_pdos, &mut st);
    let dc: Vec<DcRepr> = spec
        .dc
        .iter()
        .map(|&(name, desc, assign, sync1_shift)| DcRepr {
            assign_activate: assign,
            sync1_shift,
            name_index: st.index(name),
            desc_index: st.index(desc),
            ..Default::default()
        })
        .collect();
    let general = GeneralRepr {
        group_index,
        image_index: 0,
        order_index,
        name_index,
        coe_details: CoeDetails(spec.coe_details),
        foe_details: spec.foe as u8,
        flags: GeneralFlags(spec.flags),
        ebus_current_ma: spec.ebus_current_ma,
        group_index2: group_index,
        physical_ports: spec.ports,
        ..Default::default()
    };
    let sms: Vec<SyncManagerRepr> = spec
        .sms
        .iter()
        .map(|s| SyncManagerRepr {
            start: s.start,
            length: s.length,
            control: s.control,
            status: 0,
            enable: s.enable,
            kind: s.kind,
        })
        .collect();

    let mut buf = vec![0xFFu8; EEPROM_BYTES];
    // The catalogue's descriptions are small; every step below fits in 2 KiB, which the
    // catalogue test checks for each model, so a failure here is a catalogue bug.
    let mut w = SiiWriter::new(&mut buf, &fixed).expect("fixed area fits");
    w.strings_text(&st.0).expect("strings fit");
    w.general(&general).expect("general fits");
    if !spec.fmmus.is_empty() {
        w.fmmus(spec.fmmus).expect("fmmu fits");
    }
    if !sms.is_empty() {
        w.sync_managers(&sms).expect("syncm fits");
    }
    for (kind, pdos) in [(CategoryType::TxPdo, &tx), (CategoryType::RxPdo, &rx)] {
        if !pdos.is_empty() {
            let refs: Vec<(PdoRepr, &[PdoEntryRepr])> =
                pdos.iter().map(|(p, e)| (*p, e.as_slice())).collect();
            w.pdos(kind, &refs).expect("pdos fit");
        }
    }
    if !dc.is_empty() {
        w.dc(&dc).expect("dc fits");
    }
    w.finish();
    buf
}
