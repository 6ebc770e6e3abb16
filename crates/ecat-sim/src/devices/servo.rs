//! A CiA 402 servo drive of our own making (vendor 0x00000ECA): CoE mailbox, DC, the CSV
//! default mapping of reference §10.6 — RxPDO 0x1600 controlword + target velocity (6 bytes,
//! SM2) and TxPDO 0x1A00 statusword + position actual + velocity actual (10 bytes, SM3).
//! Further PDOs for CSP, CST and all modes (0x1601..0x1603, 0x1A01..0x1A03) are listed in the
//! SII but not assigned; the mapping and assignment can be changed over CoE in PREOP. The
//! object dictionary is `servo_od`, the behaviour `cia402`. It serves FoE too (files, no
//! BOOT); [`SOE_DRIVE`] is the same drive with every mailbox protocol and a bootstrap mailbox
//! for firmware updates over FoE in BOOT.

use super::spec::{dtype, DeviceSpec, EntrySpec, PdoSpec, SmSpec};
use ecat_wire::sii::{CoeDetails, FmmuUsage, MailboxProtocols, SyncManagerType};

/// Our vendor ID (not an ETG-assigned one; chosen for the simulator).
pub const VENDOR_ECAT: u32 = 0x0000_0ECA;

/// The simulated servo drive.
pub const SERVO402: DeviceSpec = DeviceSpec {
    order: "ECAT-SERVO-402",
    name: "ecat simulated CiA 402 servo drive",
    group: "Drive",
    vendor: VENDOR_ECAT,
    product: 0x0000_0402,
    revision: 0x0001_0000,
    // PDI: 16-bit asynchronous µC (8); ESC configuration 0x0C: DC SYNC and latch units;
    // SYNC pulse 1 µs.
    config: [0x0C08, 0, 100, 0],
    mailbox: Some((0x1000, 128, 0x1080, 128)),
    bootstrap: None,
    protocols: MailboxProtocols(MailboxProtocols::COE.0 | MailboxProtocols::FOE.0),
    coe_details: CoeDetails::SDO
        | CoeDetails::SDO_INFO
        | CoeDetails::PDO_ASSIGN
        | CoeDetails::PDO_CONFIG
        | CoeDetails::COMPLETE_ACCESS,
    foe: true,
    flags: 0,
    ebus_current_ma: 0,
    ports: 0x0011,
    fmmus: &[
        FmmuUsage::Outputs,
        FmmuUsage::Inputs,
        FmmuUsage::SyncMStatus,
    ],
    sms: &[
        SmSpec {
            start: 0x1000,
            length: 128,
            control: 0x26,
            enable: 1,
            kind: SyncManagerType::MailboxOut,
        },
        SmSpec {
            start: 0x1080,
            length: 128,
            control: 0x22,
            enable: 1,
            kind: SyncManagerType::MailboxIn,
        },
        SmSpec {
            start: 0x1100,
            length: 6,
            control: 0x64,
            enable: 1,
            kind: SyncManagerType::Outputs,
        },
        SmSpec {
            start: 0x1180,
            length: 10,
            control: 0x20,
            enable: 1,
            kind: SyncManagerType::Inputs,
        },
    ],
    rx_pdos: &[
        PdoSpec {
            index: 0x1600,
            sm: 2,
            name: "RxPDO 1 (CSV)",
            flags: 0,
            entries: &[CONTROLWORD, TARGET_VELOCITY],
        },
        PdoSpec {
            index: 0x1601,
            sm: 0xFF,
            name: "RxPDO 2 (CSP)",
            flags: 0,
            entries: &[CONTROLWORD, TARGET_POSITION],
        },
        PdoSpec {
            index: 0x1602,
            sm: 0xFF,
            name: "RxPDO 3 (CST)",
            flags: 0,
            entries: &[CONTROLWORD, TARGET_TORQUE],
        },
        PdoSpec {
            index: 0x1603,
            sm: 0xFF,
            name: "RxPDO 4 (all modes)",
            flags: 0,
            entries: &[
                CONTROLWORD,
                TARGET_POSITION,
                TARGET_VELOCITY,
                TARGET_TORQUE,
                MODES,
            ],
        },
    ],
    tx_pdos: &[
        PdoSpec {
            index: 0x1A00,
            sm: 3,
            name: "TxPDO 1 (CSV)",
            flags: 0,
            entries: &[STATUSWORD, POSITION_ACTUAL, VELOCITY_ACTUAL],
        },
        PdoSpec {
            index: 0x1A01,
            sm: 0xFF,
            name: "TxPDO 2 (CSP)",
            flags: 0,
            entries: &[STATUSWORD, POSITION_ACTUAL, FOLLOWING_ERROR],
        },
        PdoSpec {
            index: 0x1A02,
            sm: 0xFF,
            name: "TxPDO 3 (CST)",
            flags: 0,
            entries: &[STATUSWORD, TORQUE_ACTUAL],
        },
        PdoSpec {
            index: 0x1A03,
            sm: 0xFF,
            name: "TxPDO 4 (all modes)",
            flags: 0,
            entries: &[
                STATUSWORD,
                POSITION_ACTUAL,
                VELOCITY_ACTUAL,
                TORQUE_ACTUAL,
                MODES_DISPLAY,
                ERROR_CODE,
            ],
        },
    ],
    dc: &[
        ("DC", "DC-Synchron", 0x0300, 0),
        ("FreeRun", "FreeRun/SM-Synchron", 0x0000, 0),
    ],
    // CiA 402 (0x0192) servo drive (additional information 0x0002).
    device_type: 0x0002_0192,
    objects: super::servo_od::OBJECTS,
};

/// The simulated servo drive with every mailbox protocol: the CiA 402 drive of [`SERVO402`]
/// (same PDOs, dictionary and behaviour) that also serves SoE IDNs (`crate::mbx::soe`), an EoE
/// endpoint with a small IP stack, VoE echo, and FoE with BOOT (bootstrap mailbox 0x1000 and
/// 0x1200, 512 bytes each).
pub const SOE_DRIVE: DeviceSpec = DeviceSpec {
    order: "ECAT-SOE-DRIVE",
    name: "ecat simulated servo drive (CoE, SoE, EoE, FoE, VoE)",
    product: 0x0000_0403,
    // BOOT: a larger bootstrap mailbox for firmware downloads over FoE (the process-data SMs
    // are closed in BOOT, so it may cover their area).
    bootstrap: Some((0x1000, 0x200, 0x1200, 0x200)),
    protocols: MailboxProtocols(
        MailboxProtocols::COE.0
            | MailboxProtocols::FOE.0
            | MailboxProtocols::SOE.0
            | MailboxProtocols::EOE.0
            | MailboxProtocols::VOE.0,
    ),
    ..SERVO402
};

const fn pdo_entry(index: u16, name: &'static str, data_type: u8, bits: u8) -> EntrySpec {
    EntrySpec {
        index,
        subindex: 0,
        name,
        data_type,
        bits,
    }
}

const CONTROLWORD: EntrySpec = pdo_entry(0x6040, "Controlword", dtype::UINT16, 16);
const TARGET_VELOCITY: EntrySpec = pdo_entry(0x60FF, "Target velocity", dtype::INT32, 32);
const TARGET_POSITION: EntrySpec = pdo_entry(0x607A, "Target position", dtype::INT32, 32);
const TARGET_TORQUE: EntrySpec = pdo_entry(0x6071, "Target torque", dtype::INT16, 16);
const MODES: EntrySpec = pdo_entry(0x6060, "Modes of operation", dtype::INT8, 8);
const STATUSWORD: EntrySpec = pdo_entry(0x6041, "Statusword", dtype::UINT16, 16);
const POSITION_ACTUAL: EntrySpec = pdo_entry(0x6064, "Position actual value", dtype::INT32, 32);
const VELOCITY_ACTUAL: EntrySpec = pdo_entry(0x606C, "Velocity actual value", dtype::INT32, 32);
const TORQUE_ACTUAL: EntrySpec = pdo_entry(0x6077, "Torque actual value", dtype::INT16, 16);
const FOLLOWING_ERROR: EntrySpec =
    pdo_entry(0x60F4, "Following error actual value", dtype::INT32, 32);
const MODES_DISPLAY: EntrySpec = pdo_entry(0x6061, "Modes of operation display", dtype::INT8, 8);
const ERROR_CODE: EntrySpec = pdo_entry(0x603F, "Error code", dtype::UINT16, 16);
