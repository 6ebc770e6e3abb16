//! A CiA 402 servo drive of our own making (vendor 0x00000ECA): CoE mailbox, DC, the CSV
//! default mapping of reference §10.6 — RxPDO 0x1600 controlword + target velocity (6 bytes,
//! SM2) and TxPDO 0x1A00 statusword + position actual + velocity actual (10 bytes, SM3).
//! The object dictionary and motor model come with the CoE server.

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
    protocols: MailboxProtocols::COE,
    coe_details: CoeDetails::SDO
        | CoeDetails::SDO_INFO
        | CoeDetails::PDO_ASSIGN
        | CoeDetails::PDO_CONFIG
        | CoeDetails::COMPLETE_ACCESS,
    foe: false,
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
    rx_pdos: &[PdoSpec {
        index: 0x1600,
        sm: 2,
        name: "RxPDO 1",
        flags: 0,
        entries: &[
            EntrySpec {
                index: 0x6040,
                subindex: 0,
                name: "Controlword",
                data_type: dtype::UINT16,
                bits: 16,
            },
            EntrySpec {
                index: 0x60FF,
                subindex: 0,
                name: "Target velocity",
                data_type: dtype::INT32,
                bits: 32,
            },
        ],
    }],
    tx_pdos: &[PdoSpec {
        index: 0x1A00,
        sm: 3,
        name: "TxPDO 1",
        flags: 0,
        entries: &[
            EntrySpec {
                index: 0x6041,
                subindex: 0,
                name: "Statusword",
                data_type: dtype::UINT16,
                bits: 16,
            },
            EntrySpec {
                index: 0x6064,
                subindex: 0,
                name: "Position actual value",
                data_type: dtype::INT32,
                bits: 32,
            },
            EntrySpec {
                index: 0x606C,
                subindex: 0,
                name: "Velocity actual value",
                data_type: dtype::INT32,
                bits: 32,
            },
        ],
    }],
    dc: &[
        ("DC", "DC-Synchron", 0x0300, 0),
        ("FreeRun", "FreeRun/SM-Synchron", 0x0000, 0),
    ],
};
