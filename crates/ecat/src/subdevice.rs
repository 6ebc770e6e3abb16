//! What the MainDevice knows about one SubDevice after the scan: where it is (position,
//! station address, alias), what it is (identity and names from the SII), how to talk to it
//! (mailbox areas and protocols), its ESC (ports, features, FMMU/SM counts), its process data
//! description from the SII (sync managers and PDOs) and its last seen AL state.
//!
//! Everything here is plain data; filling it from the SII image is [`SubDevice::apply_sii`],
//! which decodes with `ecat_wire::sii`.

use crate::error::Who;
use ecat_wire::al::{AlStatus, AlStatusCode};
use ecat_wire::register::{features, DlStatus, PortType};

/// Vendor, product, revision and serial number (SII words 0x08–0x0F).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Identity {
    /// Vendor ID (ETG-assigned; Beckhoff is 0x00000002).
    pub vendor_id: u32,
    /// Product code.
    pub product_code: u32,
    /// Revision number.
    pub revision: u32,
    /// Serial number (0 if not programmed).
    pub serial: u32,
}

/// A mailbox area: SM start address and size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MailboxArea {
    /// Physical start address.
    pub offset: u16,
    /// Size in bytes.
    pub size: u16,
}

/// Mailbox configuration from the SII.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MailboxInfo {
    /// MainDevice → SubDevice (SM0).
    pub rx: MailboxArea,
    /// SubDevice → MainDevice (SM1).
    pub tx: MailboxArea,
    /// Bootstrap MainDevice → SubDevice.
    pub boot_rx: MailboxArea,
    /// Bootstrap SubDevice → MainDevice.
    pub boot_tx: MailboxArea,
    /// Supported protocols bitmask (0x01 AoE, 0x02 EoE, 0x04 CoE, 0x08 FoE, 0x10 SoE, 0x20 VoE).
    pub protocols: u16,
}

impl MailboxInfo {
    /// True if the SubDevice has a standard mailbox.
    pub fn present(&self) -> bool {
        self.rx.size > 0
    }

    /// Protocol names, e.g. `["CoE", "FoE"]`.
    pub fn protocol_names(&self) -> Vec<&'static str> {
        [
            (0x01, "AoE"),
            (0x02, "EoE"),
            (0x04, "CoE"),
            (0x08, "FoE"),
            (0x10, "SoE"),
            (0x20, "VoE"),
        ]
        .iter()
        .filter(|(bit, _)| self.protocols & bit != 0)
        .map(|(_, n)| *n)
        .collect()
    }
}

/// A SyncManager as the SII describes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SiiSyncManager {
    /// Physical start address.
    pub start: u16,
    /// Default length (0 for process data SMs whose size comes from the mapping).
    pub length: u16,
    /// Control byte.
    pub control: u8,
    /// Enable byte.
    pub enable: u8,
    /// Type: 1 mailbox out, 2 mailbox in, 3 outputs, 4 inputs (0 unused).
    pub kind: u8,
}

impl SiiSyncManager {
    /// Name of the SM type.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            1 => "MBoxOut",
            2 => "MBoxIn",
            3 => "Outputs",
            4 => "Inputs",
            _ => "Unused",
        }
    }
}

/// One entry of a PDO from the SII.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PdoEntry {
    /// Object index (0 = gap).
    pub index: u16,
    /// Subindex.
    pub subindex: u8,
    /// Bit length.
    pub bits: u8,
    /// CoE data type code.
    pub data_type: u8,
    /// Name.
    pub name: String,
}

/// A PDO from the SII (TXPDO = inputs, RXPDO = outputs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pdo {
    /// PDO index (0x16xx outputs, 0x1Axx inputs).
    pub index: u16,
    /// SyncManager it is assigned to by default (out of range = not assigned).
    pub sync_manager: u8,
    /// Name.
    pub name: String,
    /// Entries.
    pub entries: Vec<PdoEntry>,
}

impl Pdo {
    /// Sum of the entries' bit lengths.
    pub fn bits(&self) -> u32 {
        self.entries.iter().map(|e| e.bits as u32).sum()
    }
}

/// What the DC setup found and decided for a SubDevice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DcInfo {
    /// This SubDevice is the reference clock.
    pub reference: bool,
    /// It has a system time (some ESCs only latch port receive times).
    pub system_time: bool,
    /// Position of its DC parent (`None` for the reference).
    pub parent: Option<u16>,
    /// Port of the parent it hangs on.
    pub parent_port: u8,
    /// Its entry port.
    pub entry_port: u8,
    /// Port receive times at the latch (local time, ns, low 32 bits).
    pub port_times: [u32; 4],
    /// Propagation delay from the reference clock (ns), written to 0x0928.
    pub delay_ns: u32,
    /// Delay of the hop from its parent (ns).
    pub hop_ns: u32,
    /// System time offset written to 0x0920.
    pub offset_ns: u64,
}

/// Everything the MainDevice knows about one SubDevice.
#[derive(Debug, Clone, Default)]
pub struct SubDevice {
    /// Position in the ring, 0-based.
    pub position: u16,
    /// Configured station address.
    pub station: u16,
    /// Station alias (from SII word 4 / register 0x0012).
    pub alias: u16,
    /// Identity.
    pub identity: Identity,
    /// Device name (SII GENERAL name string, e.g. "EL2008").
    pub name: String,
    /// Order number / type string.
    pub order: String,
    /// Group name.
    pub group: String,
    /// Mailbox configuration.
    pub mailbox: MailboxInfo,
    /// ESC type (0x0000).
    pub esc_type: u8,
    /// ESC revision (0x0001).
    pub esc_revision: u8,
    /// ESC build (0x0002).
    pub esc_build: u16,
    /// FMMUs supported.
    pub fmmu_count: u8,
    /// SyncManagers supported.
    pub sm_count: u8,
    /// Process RAM in KiB.
    pub ram_kib: u8,
    /// Port types from the port descriptor.
    pub ports: [Option<PortType>; 4],
    /// DL status at scan time.
    pub dl_status: DlStatus,
    /// ESC features (0x0008).
    pub features: u16,
    /// SyncManagers from the SII.
    pub sync_managers: Vec<SiiSyncManager>,
    /// FMMU usage bytes from the SII (1 outputs, 2 inputs, 3 mailbox state).
    pub fmmu_usage: Vec<u8>,
    /// Inputs (TXPDO category).
    pub tx_pdos: Vec<Pdo>,
    /// Outputs (RXPDO category).
    pub rx_pdos: Vec<Pdo>,
    /// CoE details byte of the SII GENERAL category.
    pub coe_details: u8,
    /// GENERAL flags byte (bit 1: cannot use LRW).
    pub general_flags: u8,
    /// E-bus current in mA (negative: the device supplies current).
    pub ebus_current_ma: i16,
    /// Last AL status read.
    pub al_status: AlStatus,
    /// Last AL status code read.
    pub al_status_code: AlStatusCode,
    /// The raw SII image (up to the END category).
    pub sii: Vec<u8>,
    /// Problems found in the SII that left it usable (e.g. a checksum mismatch).
    pub sii_warnings: Vec<String>,
    /// Distributed clocks, once set up.
    pub dc: Option<DcInfo>,
    /// AssignActivate of the first DC operating mode in the SII with SYNC signals (e.g. 0x0300),
    /// 0 if the SII has none.
    pub dc_assign_activate: u16,
    /// Not on the bus when it was scanned: a member of a hot-connect group laid out from its
    /// SII image ([`crate::hotconnect::place_absent`]); its ESC details are assumed from the
    /// SII and it is probed for until it appears.
    pub absent_at_scan: bool,
}

impl SubDevice {
    /// Who this is, for error messages.
    pub fn who(&self) -> Who {
        Who {
            position: self.position,
            station: self.station,
            name: self.name.clone(),
        }
    }

    /// True if the ESC supports distributed clocks.
    pub fn dc_supported(&self) -> bool {
        self.features & features::DC != 0
    }

    /// True if the SubDevice cannot take LRW and needs LRD + LWR.
    pub fn no_lrw(&self) -> bool {
        self.general_flags & 0x02 != 0 || self.features & features::NO_LRW != 0
    }

    /// Total input bits from the SII TXPDOs assigned to a SyncManager.
    pub fn input_bits(&self) -> u32 {
        self.tx_pdos
            .iter()
            .filter(|p| (p.sync_manager as usize) < self.sync_managers.len().max(8))
            .map(Pdo::bits)
            .sum()
    }

    /// Total output bits from the SII RXPDOs assigned to a SyncManager.
    pub fn output_bits(&self) -> u32 {
        self.rx_pdos
            .iter()
            .filter(|p| (p.sync_manager as usize) < self.sync_managers.len().max(8))
            .map(Pdo::bits)
            .sum()
    }

    /// Ports that are open and in use according to the DL status.
    pub fn open_ports(&self) -> [bool; 4] {
        core::array::from_fn(|p| self.dl_status.port_open(p))
    }
}
