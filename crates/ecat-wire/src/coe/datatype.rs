//! CoE base data type codes (used in SII PDO entries and SDO Information), with names and
//! bit sizes.

use core::fmt;

/// A CoE data type code. Unknown codes are kept and print as `UNKNOWN`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataType(pub u16);

macro_rules! data_types {
    ($( $(#[$doc:meta])* $name:ident = $code:literal, $text:literal, $bits:expr; )*) => {
        impl DataType {
            $( $(#[$doc])* pub const $name: DataType = DataType($code); )*

            /// Every code of the table, in code order.
            pub const ALL: &'static [DataType] = &[$( DataType::$name ),*];

            /// The type's name as in the CoE spec (`UNSIGNED16`, `BIT3`, …).
            pub fn name(self) -> &'static str {
                match self.0 {
                    $( $code => $text, )*
                    _ => "UNKNOWN",
                }
            }

            /// Size in bits; `None` for variable-length and structured types and unknown codes.
            pub fn bit_size(self) -> Option<u16> {
                match self.0 {
                    $( $code => $bits, )*
                    _ => None,
                }
            }
        }
    };
}

data_types! {
    /// Boolean (1 bit).
    BOOLEAN = 0x0001, "BOOLEAN", Some(1);
    /// Signed 8-bit.
    INTEGER8 = 0x0002, "INTEGER8", Some(8);
    /// Signed 16-bit.
    INTEGER16 = 0x0003, "INTEGER16", Some(16);
    /// Signed 32-bit.
    INTEGER32 = 0x0004, "INTEGER32", Some(32);
    /// Unsigned 8-bit.
    UNSIGNED8 = 0x0005, "UNSIGNED8", Some(8);
    /// Unsigned 16-bit.
    UNSIGNED16 = 0x0006, "UNSIGNED16", Some(16);
    /// Unsigned 32-bit.
    UNSIGNED32 = 0x0007, "UNSIGNED32", Some(32);
    /// IEEE 754 single.
    REAL32 = 0x0008, "REAL32", Some(32);
    /// Visible (ASCII) string, variable length.
    VISIBLE_STRING = 0x0009, "VISIBLE_STRING", None;
    /// Octet string, variable length.
    OCTET_STRING = 0x000A, "OCTET_STRING", None;
    /// Unicode string, variable length.
    UNICODE_STRING = 0x000B, "UNICODE_STRING", None;
    /// Time of day (48 bits).
    TIME_OF_DAY = 0x000C, "TIME_OF_DAY", Some(48);
    /// Time difference (48 bits).
    TIME_DIFFERENCE = 0x000D, "TIME_DIFFERENCE", Some(48);
    /// Domain (arbitrary bytes).
    DOMAIN = 0x000F, "DOMAIN", None;
    /// Signed 24-bit.
    INTEGER24 = 0x0010, "INTEGER24", Some(24);
    /// IEEE 754 double.
    REAL64 = 0x0011, "REAL64", Some(64);
    /// Signed 64-bit.
    INTEGER64 = 0x0015, "INTEGER64", Some(64);
    /// Unsigned 24-bit.
    UNSIGNED24 = 0x0016, "UNSIGNED24", Some(24);
    /// Unsigned 64-bit.
    UNSIGNED64 = 0x001B, "UNSIGNED64", Some(64);
    /// PDO mapping record.
    PDO_MAPPING = 0x0021, "PDO_MAPPING", None;
    /// Identity record.
    IDENTITY = 0x0023, "IDENTITY", None;
    /// Bit array of 8.
    BITARR8 = 0x002D, "BITARR8", Some(8);
    /// Bit array of 16.
    BITARR16 = 0x002E, "BITARR16", Some(16);
    /// Bit array of 32.
    BITARR32 = 0x002F, "BITARR32", Some(32);
    /// 1 bit.
    BIT1 = 0x0030, "BIT1", Some(1);
    /// 2 bits.
    BIT2 = 0x0031, "BIT2", Some(2);
    /// 3 bits.
    BIT3 = 0x0032, "BIT3", Some(3);
    /// 4 bits.
    BIT4 = 0x0033, "BIT4", Some(4);
    /// 5 bits.
    BIT5 = 0x0034, "BIT5", Some(5);
    /// 6 bits.
    BIT6 = 0x0035, "BIT6", Some(6);
    /// 7 bits.
    BIT7 = 0x0036, "BIT7", Some(7);
    /// 8 bits.
    BIT8 = 0x0037, "BIT8", Some(8);
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (0x{:04X})", self.name(), self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn table() {
        assert_eq!(DataType::ALL.len(), 32);
        assert_eq!(DataType(0x0007).name(), "UNSIGNED32");
        assert_eq!(DataType::UNSIGNED32.bit_size(), Some(32));
        assert_eq!(DataType::BOOLEAN.bit_size(), Some(1));
        assert_eq!(DataType::BIT5.bit_size(), Some(5));
        assert_eq!(DataType::VISIBLE_STRING.bit_size(), None);
        assert_eq!(DataType(0x0099).name(), "UNKNOWN");
        assert_eq!(DataType(0x0099).bit_size(), None);
        assert_eq!(format!("{}", DataType::INTEGER16), "INTEGER16 (0x0003)");
        let mut prev = 0;
        for t in DataType::ALL {
            assert!(t.0 > prev, "codes sorted and unique");
            prev = t.0;
            assert_ne!(t.name(), "UNKNOWN");
        }
    }
}
