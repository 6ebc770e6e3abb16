//! The servo drive's own objects (CiA 402, reference §10.1, plus the motor data), as data.
//!
//! Units (our convention, see `cia402`): position in increments, 2^20 = 1 048 576 per
//! motor revolution (0x608F); velocity in increments/s (2 rad/s = 333 772 inc/s; 3000 rpm =
//! 52 428 800 inc/s); acceleration in increments/s²; torque in per-mille of the rated torque
//! (0x2000:01, mNm). Time-outs in ms.
//!
//! Command objects are RxPDO-mappable and writable in every state; limits and profile
//! parameters are writable in every state and stored for backup; the motor data are
//! writable in PREOP only. 0x6060 accepts 0 and the modes 0x6502 lists (1 PP, 3 PV, 8 CSP,
//! 9 CSV, 10 CST); it starts in CSV (9) to match the default velocity mapping.
//! Two simulator objects: 0x2001 a writable text (segmented transfers), 0x2002 write-only
//! "simulated fault": writing a non-zero error code makes the drive fault with it.

use crate::coe::od::{access, ObjSpec, SubSpec};
use crate::od_var;
use ecat_wire::coe::info::ObjectCode;
use ecat_wire::coe::DataType;

const RO_TX: u16 = access::RO | access::TX;
const CMD: u16 = access::RW | access::RX;
const PARAM: u16 = access::RW | access::BACKUP;
const PARAM_RX: u16 = access::RW | access::RX | access::BACKUP;
const MOTOR: u16 = access::RW_PREOP | access::BACKUP;
const U8: DataType = DataType::UNSIGNED8;
const I32: DataType = DataType::INTEGER32;
const U32: DataType = DataType::UNSIGNED32;

/// Increments per motor revolution (2^20).
pub const INC_PER_REV: i64 = 1 << 20;

/// Supported drive modes (0x6502): PP (bit 0), PV (bit 2), CSP (7), CSV (8), CST (9).
pub const SUPPORTED_MODES: i64 = 0x0385;

/// Initial value of 0x2001, a writable VISIBLE_STRING longer than one mailbox (so SDO
/// uploads and downloads of it are segmented with 128-byte mailboxes).
pub const APP_TEXT: &str = "ecat simulated servo. Units: position 2^20 increments per revolution; \
velocity increments/s; acceleration increments/s^2; torque per mille of rated torque. \
Modes: PP 1, PV 3, CSP 8, CSV 9, CST 10.";

/// The drive's objects (sorted by index is not required; the dictionary sorts).
pub static OBJECTS: &[ObjSpec] = &[
    ObjSpec {
        index: 0x2000,
        name: "Motor data",
        code: ObjectCode::RECORD,
        dtype: DataType(0),
        subs: &[
            SubSpec::int(0, "SubIndex 000", U8, access::RO, 4),
            SubSpec::int(1, "Rated torque (mNm)", U32, MOTOR, 1270).range(1, 100_000),
            SubSpec::int(2, "Inertia motor + load (g cm^2)", U32, MOTOR, 1500)
                .range(1, 100_000_000),
            SubSpec::int(3, "Viscous friction (uNm s/rad)", U32, MOTOR, 200),
            SubSpec::int(4, "Position loop gain (1/s)", U32, MOTOR, 500).range(1, 10_000),
        ],
    },
    ObjSpec {
        index: 0x2001,
        name: "Application text",
        code: ObjectCode::VAR,
        dtype: DataType::VISIBLE_STRING,
        subs: &[SubSpec::text(0, "Application text", APP_TEXT).with_access(access::RW)],
    },
    od_var!(0x2002, "Simulated fault", UNSIGNED16, access::WO, 0),
    od_var!(0x603F, "Error code", UNSIGNED16, RO_TX, 0),
    od_var!(0x6040, "Controlword", UNSIGNED16, CMD, 0),
    od_var!(0x6041, "Statusword", UNSIGNED16, RO_TX, 0),
    od_var!(0x605A, "Quick stop option code", INTEGER16, PARAM, 2),
    od_var!(0x605B, "Shutdown option code", INTEGER16, PARAM, 0),
    od_var!(0x605C, "Disable operation option code", INTEGER16, PARAM, 1),
    od_var!(0x605D, "Halt option code", INTEGER16, PARAM, 1),
    od_var!(0x605E, "Fault reaction option code", INTEGER16, PARAM, 2),
    od_var!(0x6060, "Modes of operation", INTEGER8, CMD, 9),
    od_var!(0x6061, "Modes of operation display", INTEGER8, RO_TX, 9),
    od_var!(0x6062, "Position demand value", INTEGER32, RO_TX, 0),
    od_var!(
        0x6063,
        "Position actual internal value",
        INTEGER32,
        RO_TX,
        0
    ),
    od_var!(0x6064, "Position actual value", INTEGER32, RO_TX, 0),
    od_var!(
        0x6065,
        "Following error window",
        UNSIGNED32,
        PARAM,
        INC_PER_REV / 8
    ),
    od_var!(0x6066, "Following error time out", UNSIGNED16, PARAM, 10),
    od_var!(0x6067, "Position window", UNSIGNED32, PARAM, 1000),
    od_var!(0x606B, "Velocity demand value", INTEGER32, RO_TX, 0),
    od_var!(0x606C, "Velocity actual value", INTEGER32, RO_TX, 0),
    od_var!(0x606D, "Velocity window", UNSIGNED16, PARAM, 1000),
    od_var!(0x6071, "Target torque", INTEGER16, CMD, 0),
    od_var!(0x6072, "Max torque", UNSIGNED16, PARAM_RX, 3000),
    od_var!(0x6074, "Torque demand", INTEGER16, RO_TX, 0),
    od_var!(0x6077, "Torque actual value", INTEGER16, RO_TX, 0),
    od_var!(0x607A, "Target position", INTEGER32, CMD, 0),
    od_var!(0x607C, "Home offset", INTEGER32, PARAM, 0),
    ObjSpec {
        index: 0x607D,
        name: "Software position limit",
        code: ObjectCode::ARRAY,
        dtype: I32,
        subs: &[
            SubSpec::int(0, "SubIndex 000", U8, access::RO, 2),
            SubSpec::int(1, "Min position limit", I32, PARAM, i32::MIN as i64),
            SubSpec::int(2, "Max position limit", I32, PARAM, i32::MAX as i64),
        ],
    },
    od_var!(
        0x607F,
        "Max profile velocity",
        UNSIGNED32,
        PARAM_RX,
        50 * INC_PER_REV
    ),
    od_var!(0x6080, "Max motor speed (rpm)", UNSIGNED32, PARAM, 3000),
    od_var!(
        0x6081,
        "Profile velocity",
        UNSIGNED32,
        PARAM_RX,
        10 * INC_PER_REV
    ),
    od_var!(
        0x6083,
        "Profile acceleration",
        UNSIGNED32,
        PARAM_RX,
        100 * INC_PER_REV
    ),
    od_var!(
        0x6084,
        "Profile deceleration",
        UNSIGNED32,
        PARAM_RX,
        100 * INC_PER_REV
    ),
    od_var!(
        0x6085,
        "Quick stop deceleration",
        UNSIGNED32,
        PARAM,
        1000 * INC_PER_REV
    ),
    ObjSpec {
        index: 0x608F,
        name: "Position encoder resolution",
        code: ObjectCode::ARRAY,
        dtype: U32,
        subs: &[
            SubSpec::int(0, "SubIndex 000", U8, access::RO, 2),
            SubSpec::int(1, "Encoder increments", U32, access::RO, INC_PER_REV),
            SubSpec::int(2, "Motor revolutions", U32, access::RO, 1),
        ],
    },
    od_var!(0x60B1, "Velocity offset", INTEGER32, CMD, 0),
    od_var!(0x60B2, "Torque offset", INTEGER16, CMD, 0),
    ObjSpec {
        index: 0x60C2,
        name: "Interpolation time period",
        code: ObjectCode::RECORD,
        dtype: DataType(0),
        subs: &[
            SubSpec::int(0, "SubIndex 000", U8, access::RO, 2),
            SubSpec::int(1, "Interpolation time period value", U8, PARAM, 1),
            SubSpec::int(2, "Interpolation time index", DataType::INTEGER8, PARAM, -3).range(-6, 0),
        ],
    },
    od_var!(
        0x60C5,
        "Max acceleration",
        UNSIGNED32,
        PARAM,
        2000 * INC_PER_REV
    ),
    od_var!(
        0x60C6,
        "Max deceleration",
        UNSIGNED32,
        PARAM,
        2000 * INC_PER_REV
    ),
    od_var!(0x60F4, "Following error actual value", INTEGER32, RO_TX, 0),
    od_var!(0x60FD, "Digital inputs", UNSIGNED32, RO_TX, 0),
    od_var!(0x60FF, "Target velocity", INTEGER32, CMD, 0),
    od_var!(
        0x6502,
        "Supported drive modes",
        UNSIGNED32,
        access::RO,
        SUPPORTED_MODES
    ),
];
