//! Beckhoff devices, transcribed from the ESI files in `testdata/esi/` (newest revision of
//! each type): identities, names, `Eeprom/ConfigData` (SII words 0–3), mailbox and bootstrap
//! areas, SyncManager starts and control bytes, FMMU usage, PDO layouts and DC modes.
//! Where a datum is not in the ESI (SII SYNCM lengths of process-data SMs) the value a real
//! SII holds is used (the EL2828 in the reference capture: SM0 0x0F00, length 1, 0x44).
//! EL3102 lists only its two default TxPDOs (0x1A00/0x1A01) and the alternative 0x1A10; its
//! "AI Standard/Compact" PDOs are left out to keep the image small.

use super::spec::{dtype, DeviceSpec, EntrySpec, PdoSpec, SmSpec};
use crate::coe::od::{access, ObjSpec, SubSpec};
use ecat_wire::coe::info::ObjectCode;
use ecat_wire::coe::DataType;
use ecat_wire::sii::{CoeDetails, FmmuUsage, GeneralFlags, MailboxProtocols, SyncManagerType};

/// Beckhoff Automation's vendor ID.
pub const BECKHOFF: u32 = 0x0000_0002;

const NO_PDOS: &[PdoSpec] = &[];
const EBUS_EBUS: u16 = 0x0033;

/// EK1100 EtherCAT coupler: device emulation, DC units, no mailbox, no process data.
pub const EK1100: DeviceSpec = DeviceSpec {
    order: "EK1100",
    name: "EK1100 EtherCAT Coupler (2A E-Bus)",
    group: "SystemBk",
    vendor: BECKHOFF,
    product: 0x044C_2C52,
    revision: 0x0012_0000,
    config: [0x0D00, 0, 0, 0],
    mailbox: None,
    bootstrap: None,
    protocols: MailboxProtocols::NONE,
    coe_details: 0,
    foe: false,
    flags: 0,
    ebus_current_ma: -2000,
    ports: 0x0131,
    fmmus: &[],
    sms: &[],
    rx_pdos: NO_PDOS,
    tx_pdos: NO_PDOS,
    dc: &[],
    device_type: 0,
    objects: &[],
};

/// EK1122 2-port EtherCAT junction: E-Bus in (port 0) and out (port 1), two Ethernet ports
/// X1/X2 (ports 2 and 3, MII); device emulation and DC units like the EK1100. Identity:
/// vendor 2, product 0x04622C52 (revision and the port assignment X1 = 2, X2 = 3 are our
/// choice, unverified). With four ports the frame goes 0 → 3 → 1 → 2, so what hangs on port 3
/// comes right after the junction in auto-increment order.
pub const EK1122: DeviceSpec = DeviceSpec {
    order: "EK1122",
    name: "EK1122 2 port EtherCAT junction",
    product: 0x0462_2C52,
    revision: 0x0011_0000,
    ebus_current_ma: 220,
    ports: 0x1133,
    ..EK1100
};

/// One fixed, mandatory 1-bit PDO on SM0 (digital terminals without mailbox).
macro_rules! bit_pdo {
    ($idx:expr, $obj:expr, $name:expr, $entry:expr) => {
        PdoSpec {
            index: $idx,
            sm: 0,
            name: $name,
            flags: 0x0011,
            entries: &[EntrySpec {
                index: $obj,
                subindex: 1,
                name: $entry,
                data_type: dtype::BOOL,
                bits: 1,
            }],
        }
    };
}

/// Eight 1-bit channel PDOs from `base`, objects `obj`, `obj + 0x10`, …
macro_rules! bit_channels {
    ($base:expr, $obj:expr, $entry:expr) => {
        &[
            bit_pdo!($base, $obj, "Channel 1", $entry),
            bit_pdo!($base + 1, $obj + 0x10, "Channel 2", $entry),
            bit_pdo!($base + 2, $obj + 0x20, "Channel 3", $entry),
            bit_pdo!($base + 3, $obj + 0x30, "Channel 4", $entry),
            bit_pdo!($base + 4, $obj + 0x40, "Channel 5", $entry),
            bit_pdo!($base + 5, $obj + 0x50, "Channel 6", $entry),
            bit_pdo!($base + 6, $obj + 0x60, "Channel 7", $entry),
            bit_pdo!($base + 7, $obj + 0x70, "Channel 8", $entry),
        ]
    };
}

const DIG_IN_SMS: &[SmSpec] = &[SmSpec {
    start: 0x1000,
    length: 1,
    control: 0x00,
    enable: 1,
    kind: SyncManagerType::Inputs,
}];

const DIG_IN_PDOS: &[PdoSpec] = bit_channels!(0x1A00, 0x6000, "Input");

/// A digital input terminal without mailbox (EL1008 family).
const fn digital_in(order: &'static str, name: &'static str, product: u32) -> DeviceSpec {
    DeviceSpec {
        order,
        name,
        group: "DigIn",
        vendor: BECKHOFF,
        product,
        revision: 0x0012_0000,
        config: [0x0104, 0, 0, 0],
        mailbox: None,
        bootstrap: None,
        protocols: MailboxProtocols::NONE,
        coe_details: 0,
        foe: false,
        flags: 0,
        ebus_current_ma: 90,
        ports: EBUS_EBUS,
        fmmus: &[FmmuUsage::Inputs],
        sms: DIG_IN_SMS,
        rx_pdos: NO_PDOS,
        tx_pdos: DIG_IN_PDOS,
        dc: &[],
        device_type: 0,
        objects: &[],
    }
}

/// EL1008 8-channel digital input, 3 ms filter.
pub const EL1008: DeviceSpec = digital_in("EL1008", "EL1008 8Ch. Dig. Input 24V, 3ms", 0x03F0_3052);
/// EL1018 8-channel digital input, 10 µs filter.
pub const EL1018: DeviceSpec =
    digital_in("EL1018", "EL1018 8Ch. Dig. Input 24V, 10µs", 0x03FA_3052);

/// EL2008 8-channel digital output; its SM0 sits on the digital output register 0x0F00.
pub const EL2008: DeviceSpec = DeviceSpec {
    order: "EL2008",
    name: "EL2008 8Ch. Dig. Output 24V, 0.5A",
    group: "DigOut",
    vendor: BECKHOFF,
    product: 0x07D8_3052,
    revision: 0x0012_0000,
    config: [0x0104, 0, 0, 0x000F],
    mailbox: None,
    bootstrap: None,
    protocols: MailboxProtocols::NONE,
    coe_details: 0,
    foe: false,
    flags: 0,
    ebus_current_ma: 110,
    ports: EBUS_EBUS,
    fmmus: &[FmmuUsage::Outputs],
    sms: &[SmSpec {
        start: 0x0F00,
        length: 1,
        control: 0x44,
        // Enable + "enable in OP only" (ESI OpOnly), as the EL2828/EL2889 SIIs hold.
        enable: 0x09,
        kind: SyncManagerType::Outputs,
    }],
    rx_pdos: bit_channels!(0x1600, 0x7000, "Output"),
    tx_pdos: NO_PDOS,
    dc: &[],
    device_type: 0,
    objects: &[],
};

const fn mbx_sms(out: u16, inp: u16, len: u16) -> [SmSpec; 2] {
    [
        SmSpec {
            start: out,
            length: len,
            control: 0x26,
            enable: 1,
            kind: SyncManagerType::MailboxOut,
        },
        SmSpec {
            start: inp,
            length: len,
            control: 0x22,
            enable: 1,
            kind: SyncManagerType::MailboxIn,
        },
    ]
}

const EL3102_MBX: [SmSpec; 2] = mbx_sms(0x1000, 0x1080, 128);

/// EL3102 2-channel analog input ±10 V (revision 0x00110000): CoE + FoE, DC.
pub const EL3102: DeviceSpec = DeviceSpec {
    order: "EL3102",
    name: "EL3102 2Ch. Ana. Input +/-10V, Diff.",
    group: "AnaIn",
    vendor: BECKHOFF,
    product: 0x0C1E_3052,
    revision: 0x0011_0000,
    config: [0x0405, 0xCC03, 0x07D0, 0],
    mailbox: Some((0x1000, 128, 0x1080, 128)),
    bootstrap: Some((0x1000, 0xF4, 0x10F4, 0xF4)),
    protocols: MailboxProtocols(MailboxProtocols::COE.0 | MailboxProtocols::FOE.0),
    coe_details: CoeDetails::SDO | CoeDetails::SDO_INFO | CoeDetails::PDO_ASSIGN,
    foe: true,
    flags: GeneralFlags::MBOX_DLL,
    ebus_current_ma: 170,
    ports: EBUS_EBUS,
    fmmus: &[FmmuUsage::Inputs, FmmuUsage::SyncMStatus],
    sms: &[
        EL3102_MBX[0],
        EL3102_MBX[1],
        SmSpec {
            start: 0x1100,
            length: 0,
            control: 0x04,
            enable: 0,
            kind: SyncManagerType::Outputs,
        },
        SmSpec {
            start: 0x1180,
            length: 6,
            control: 0x20,
            enable: 1,
            kind: SyncManagerType::Inputs,
        },
    ],
    rx_pdos: NO_PDOS,
    tx_pdos: &[
        PdoSpec {
            index: 0x1A00,
            sm: 3,
            name: "Channel 1",
            flags: 0x0010,
            entries: &[
                EntrySpec {
                    index: 0x3101,
                    subindex: 1,
                    name: "Status",
                    data_type: dtype::UINT8,
                    bits: 8,
                },
                EntrySpec {
                    index: 0x3101,
                    subindex: 2,
                    name: "Value",
                    data_type: dtype::INT16,
                    bits: 16,
                },
            ],
        },
        PdoSpec {
            index: 0x1A01,
            sm: 3,
            name: "Channel 2",
            flags: 0x0010,
            entries: &[
                EntrySpec {
                    index: 0x3102,
                    subindex: 1,
                    name: "Status",
                    data_type: dtype::UINT8,
                    bits: 8,
                },
                EntrySpec {
                    index: 0x3102,
                    subindex: 2,
                    name: "Value",
                    data_type: dtype::INT16,
                    bits: 16,
                },
            ],
        },
        PdoSpec {
            index: 0x1A10,
            sm: 0xFF,
            name: "Channels",
            flags: 0x0010,
            entries: &[
                EntrySpec {
                    index: 0x6401,
                    subindex: 1,
                    name: "Channel 1",
                    data_type: dtype::INT16,
                    bits: 16,
                },
                EntrySpec {
                    index: 0x6401,
                    subindex: 2,
                    name: "Channel 2",
                    data_type: dtype::INT16,
                    bits: 16,
                },
            ],
        },
    ],
    dc: &[
        ("Synchron", "FreeRun/SM-Synchron", 0x0000, 0),
        ("DCSYNC", "DC-Synchron", 0x0700, 5000),
        ("DCIN", "DC-Synchron (input based)", 0x0700, 5000),
    ],
    device_type: MDP_DEVICE_TYPE,
    objects: EL3102_OBJECTS,
};

const EL4132_MBX: [SmSpec; 2] = mbx_sms(0x1800, 0x18F6, 246);

/// EL4132 2-channel analog output ±10 V (revision 0x03FA0000): CoE + FoE, DC.
pub const EL4132: DeviceSpec = DeviceSpec {
    order: "EL4132",
    name: "EL4132 2Ch. Ana. Output +/-10V, 16bit",
    group: "AnaOut",
    vendor: BECKHOFF,
    product: 0x1024_3052,
    revision: 0x03FA_0000,
    config: [0x0C05, 0x8803, 0, 0],
    mailbox: Some((0x1800, 246, 0x18F6, 246)),
    bootstrap: Some((0x1000, 0xF4, 0x10F4, 0xF4)),
    protocols: MailboxProtocols(MailboxProtocols::COE.0 | MailboxProtocols::FOE.0),
    coe_details: CoeDetails::SDO | CoeDetails::SDO_INFO | CoeDetails::PDO_ASSIGN,
    foe: true,
    flags: GeneralFlags::MBOX_DLL,
    ebus_current_ma: 210,
    ports: EBUS_EBUS,
    fmmus: &[FmmuUsage::Outputs, FmmuUsage::SyncMStatus],
    sms: &[
        EL4132_MBX[0],
        EL4132_MBX[1],
        SmSpec {
            start: 0x1000,
            length: 4,
            control: 0x24,
            enable: 1,
            kind: SyncManagerType::Outputs,
        },
        SmSpec {
            start: 0x1100,
            length: 0,
            control: 0x20,
            enable: 0,
            kind: SyncManagerType::Inputs,
        },
    ],
    rx_pdos: &[
        PdoSpec {
            index: 0x1600,
            sm: 2,
            name: "Channel 1",
            flags: 0x0010,
            entries: &[EntrySpec {
                index: 0x6411,
                subindex: 1,
                name: "Output",
                data_type: dtype::INT16,
                bits: 16,
            }],
        },
        PdoSpec {
            index: 0x1601,
            sm: 2,
            name: "Channel 2",
            flags: 0x0010,
            entries: &[EntrySpec {
                index: 0x6411,
                subindex: 2,
                name: "Output",
                data_type: dtype::INT16,
                bits: 16,
            }],
        },
    ],
    tx_pdos: NO_PDOS,
    dc: &[
        ("Synchron", "FreeRun/SM-Synchron", 0x0000, 0),
        ("DC", "DC-Synchron", 0x0700, 100_000),
    ],
    device_type: MDP_DEVICE_TYPE,
    objects: EL4132_OBJECTS,
};

/// Device type 0x1000 of the analog terminals: profile 5001 (modular device profile) in the
/// low word (our reading of Beckhoff practice; the high word is unverified, left 0).
const MDP_DEVICE_TYPE: u32 = 0x0000_1389;

const RO_TX: u16 = access::RO | access::TX;
const RW_RX: u16 = access::RW | access::RX;
const I16: DataType = DataType::INTEGER16;
const U8: DataType = DataType::UNSIGNED8;

/// One EL3102 channel record: status (UINT8) and value (INT16), as its PDOs map them.
macro_rules! ai_channel {
    ($index:expr, $name:expr) => {
        ObjSpec {
            index: $index,
            name: $name,
            code: ObjectCode::RECORD,
            dtype: DataType(0),
            subs: &[
                SubSpec::int(0, "SubIndex 000", U8, access::RO, 2),
                SubSpec::int(1, "Status", U8, RO_TX, 0),
                SubSpec::int(2, "Value", I16, RO_TX, 0),
            ],
        }
    };
}

/// EL3102 objects behind its PDOs: 0x3101/0x3102 (status + value per channel, TxPDOs
/// 0x1A00/0x1A01) and 0x6401 (both values, TxPDO 0x1A10). The device behaviour writes them.
pub static EL3102_OBJECTS: &[ObjSpec] = &[
    ai_channel!(0x3101, "Inputs Ch.1"),
    ai_channel!(0x3102, "Inputs Ch.2"),
    ObjSpec {
        index: 0x6401,
        name: "Analog input 16 bit",
        code: ObjectCode::ARRAY,
        dtype: I16,
        subs: &[
            SubSpec::int(0, "SubIndex 000", U8, access::RO, 2),
            SubSpec::int(1, "Channel 1", I16, RO_TX, 0),
            SubSpec::int(2, "Channel 2", I16, RO_TX, 0),
        ],
    },
];

/// EL4132 objects behind its PDOs: 0x6411 (the two output values, RxPDOs 0x1600/0x1601).
/// Outputs applied in OP land here; they can also be written by SDO.
pub static EL4132_OBJECTS: &[ObjSpec] = &[ObjSpec {
    index: 0x6411,
    name: "Analog output 16 bit",
    code: ObjectCode::ARRAY,
    dtype: I16,
    subs: &[
        SubSpec::int(0, "SubIndex 000", U8, access::RO, 2),
        SubSpec::int(1, "Channel 1", I16, RW_RX, 0),
        SubSpec::int(2, "Channel 2", I16, RW_RX, 0),
    ],
}];

/// Passive EL9xxx terminals (no ESC; not part of the frame path): the types of
/// `Beckhoff_EL9xxx.xml` without SyncManagers, with their ESI names.
pub const PASSIVE: &[(&str, &str)] = &[
    ("EL9010", "EL9010 End Terminal"),
    ("EL9011", "EL9011 End Terminal"),
    ("EL9070", "EL9070 Shield terminal"),
    ("EL9080", "EL9080 Separation terminal"),
    ("EL9100", "EL9100 Power Supplier with LED (24V)"),
    ("EL9150", "EL9150 Power Supplier with LED(230V)"),
    ("EL9180", "EL9180 Potential Connection, 2 x 24-230V, 2 x PE"),
    ("EL9181", "EL9181 Potential Connection, 2 x 8 contacts"),
    ("EL9182", "EL9182 Potential Connection, 8 x 2 contacts"),
    ("EL9183", "EL9183 Potential Connection, 1 x 16 contacts"),
    ("EL9184", "EL9184 Potential Connection, 8 x 24V, 8 x Ground"),
    ("EL9185", "EL9185 Potential Connection, 4 x 24-230V"),
    ("EL9186", "EL9186 Potential Connection, 8 x 24V"),
    ("EL9187", "EL9187 Potential Connection, 8 x Ground"),
    ("EL9188", "EL9188 Potential Connection, 16 x 24V"),
    ("EL9189", "EL9189 Potential Connection, 16 x Ground"),
    ("EL9190", "EL9190 Power Supplier"),
    ("EL9195", "EL9195 Potential Connection, 2 x Shield"),
    ("EL9200", "EL9200 Power Supplier with LED (24V, Fuse)"),
    ("EL9250", "EL9150 Power Supplier with LED(230V, Fuse)"),
    ("EL9290", "EL9290 Power Supplier (Fuse)"),
    ("EL9400", "EL9400 E-Bus Power Supplier"),
    ("EL9540", "EL9540 Surge/Overvoltagefilter (Power supply)"),
    (
        "EL9550",
        "EL9550 Surge/Overvoltagefilter (Power and system supply)",
    ),
    ("EL9570", "EL9570 Buffer capacitor terminal"),
];
