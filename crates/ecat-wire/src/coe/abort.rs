//! SDO abort codes (the u32 in an abort message's data field and in SDO info errors), with
//! the table's text; unknown codes still print.

use core::fmt;

/// An SDO abort code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SdoAbortCode(pub u32);

macro_rules! abort_codes {
    ($( $(#[$doc:meta])* $name:ident = $code:literal, $text:literal; )*) => {
        impl SdoAbortCode {
            $( $(#[$doc])* pub const $name: SdoAbortCode = SdoAbortCode($code); )*

            /// Every code of the table.
            pub const ALL: &'static [SdoAbortCode] = &[$( SdoAbortCode::$name ),*];

            /// The text for this code (`"unknown abort code"` for codes not in the table).
            pub fn description(self) -> &'static str {
                match self.0 {
                    $( $code => $text, )*
                    _ => "unknown abort code",
                }
            }
        }
    };
}

abort_codes! {
    /// 0x05030000.
    TOGGLE = 0x0503_0000, "toggle bit not changed";
    /// 0x05040000.
    TIMEOUT = 0x0504_0000, "SDO protocol timeout";
    /// 0x05040001.
    BAD_COMMAND = 0x0504_0001, "client/server command specifier not valid or unknown";
    /// 0x05040002.
    BLOCK_SIZE = 0x0504_0002, "invalid block size (block mode)";
    /// 0x05040003.
    BLOCK_SEQUENCE = 0x0504_0003, "invalid sequence number (block mode)";
    /// 0x05040004.
    BLOCK_CRC = 0x0504_0004, "CRC error (block mode)";
    /// 0x05040005.
    OUT_OF_MEMORY = 0x0504_0005, "out of memory";
    /// 0x06010000.
    UNSUPPORTED_ACCESS = 0x0601_0000, "unsupported access to an object";
    /// 0x06010001.
    WRITE_ONLY = 0x0601_0001, "attempt to read a write-only object";
    /// 0x06010002.
    READ_ONLY = 0x0601_0002, "attempt to write a read-only object";
    /// 0x06010003.
    SUBINDEX_CANNOT_BE_WRITTEN = 0x0601_0003,
        "subindex cannot be written, SI0 must be 0 for write access";
    /// 0x06010004.
    COMPLETE_ACCESS_UNSUPPORTED = 0x0601_0004,
        "complete access not supported for variable-length objects";
    /// 0x06010005.
    OBJECT_TOO_LONG = 0x0601_0005, "object length exceeds mailbox size";
    /// 0x06010006.
    MAPPED_TO_RXPDO = 0x0601_0006, "object mapped to RxPDO, SDO download blocked";
    /// 0x06020000.
    NO_OBJECT = 0x0602_0000, "object does not exist in the object dictionary";
    /// 0x06040041.
    NOT_MAPPABLE = 0x0604_0041, "object cannot be mapped into the PDO";
    /// 0x06040042.
    PDO_TOO_LONG = 0x0604_0042, "number/length of mapped objects would exceed PDO length";
    /// 0x06040043.
    PARAMETER_INCOMPATIBLE = 0x0604_0043, "general parameter incompatibility";
    /// 0x06040047.
    INTERNAL_INCOMPATIBLE = 0x0604_0047, "general internal incompatibility in the device";
    /// 0x06060000.
    HARDWARE_ERROR = 0x0606_0000, "access failed due to a hardware error";
    /// 0x06070010.
    TYPE_MISMATCH = 0x0607_0010,
        "data type does not match, length of service parameter does not match";
    /// 0x06070012.
    TOO_LONG = 0x0607_0012, "data type does not match, length too high";
    /// 0x06070013.
    TOO_SHORT = 0x0607_0013, "data type does not match, length too low";
    /// 0x06090011.
    NO_SUBINDEX = 0x0609_0011, "subindex does not exist";
    /// 0x06090030.
    VALUE_RANGE = 0x0609_0030, "value range of parameter exceeded";
    /// 0x06090031.
    VALUE_TOO_HIGH = 0x0609_0031, "value of parameter written too high";
    /// 0x06090032.
    VALUE_TOO_LOW = 0x0609_0032, "value of parameter written too low";
    /// 0x06090033.
    MODULE_LIST_MISMATCH = 0x0609_0033,
        "detected module ident list (0xF030) does not match configured list (0xF050)";
    /// 0x06090036.
    MAX_LESS_THAN_MIN = 0x0609_0036, "maximum value is less than minimum value";
    /// 0x060A0023.
    RESOURCE_UNAVAILABLE = 0x060A_0023, "resource not available";
    /// 0x08000000.
    GENERAL = 0x0800_0000, "general error";
    /// 0x08000020.
    CANNOT_TRANSFER = 0x0800_0020, "data cannot be transferred or stored to the application";
    /// 0x08000021.
    LOCAL_CONTROL = 0x0800_0021,
        "data cannot be transferred or stored to the application because of local control";
    /// 0x08000022.
    DEVICE_STATE = 0x0800_0022,
        "data cannot be transferred or stored to the application because of the present device state";
    /// 0x08000023.
    NO_OD = 0x0800_0023, "object dictionary dynamic generation failed or no object dictionary present";
    /// 0x08000024.
    NO_DATA = 0x0800_0024, "no data available";
}

impl fmt::Display for SdoAbortCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08X} ({})", self.0, self.description())
    }
}
