//! CoE base data types by their ESI names (ETG.1020 / ETG.2000 names such as `UINT`,
//! `BIT3`, `STRING(8)`), mapped to the 16-bit codes used in SDO information and in the SII
//! PDO entries (one byte there).

/// The CoE data type code of an ESI base type name, `None` for a name that is not a base
/// type (e.g. a `DT1018` record defined in the dictionary).
pub fn base_type_code(name: &str) -> Option<u16> {
    let name = name.trim();
    // STRING(n), ARRAY [0..n] OF BYTE and friends carry a size; the code is the base's.
    if name.starts_with("STRING(") || name == "STRING" || name == "VISIBLE_STRING" {
        return Some(0x0009);
    }
    if name.starts_with("OCTET_STRING") || name.starts_with("ARRAY [") {
        return Some(0x000A);
    }
    if name.starts_with("UNICODE_STRING") {
        return Some(0x000B);
    }
    if let Some(n) = name.strip_prefix("BIT") {
        if let Ok(n) = n.parse::<u16>() {
            if (1..=8).contains(&n) {
                return Some(0x0030 + n - 1);
            }
        }
    }
    Some(match name {
        "BOOL" | "BOOLEAN" => 0x0001,
        "SINT" | "INTEGER8" => 0x0002,
        "INT" | "INTEGER16" => 0x0003,
        "DINT" | "INTEGER32" => 0x0004,
        "USINT" | "UNSIGNED8" => 0x0005,
        "UINT" | "UNSIGNED16" => 0x0006,
        "UDINT" | "UNSIGNED32" => 0x0007,
        "REAL" | "REAL32" => 0x0008,
        "TIME_OF_DAY" => 0x000C,
        "TIME_DIFFERENCE" => 0x000D,
        "DOMAIN" => 0x000F,
        "INT24" | "INTEGER24" => 0x0010,
        "LREAL" | "REAL64" => 0x0011,
        "INT40" | "INTEGER40" => 0x0012,
        "INT48" | "INTEGER48" => 0x0013,
        "INT56" | "INTEGER56" => 0x0014,
        "LINT" | "INTEGER64" => 0x0015,
        "UINT24" | "UNSIGNED24" => 0x0016,
        "UINT40" | "UNSIGNED40" => 0x0018,
        "UINT48" | "UNSIGNED48" => 0x0019,
        "UINT56" | "UNSIGNED56" => 0x001A,
        "ULINT" | "UNSIGNED64" => 0x001B,
        "BYTE" => 0x001E,
        "WORD" => 0x001F,
        "DWORD" => 0x0020,
        "BITARR8" => 0x002D,
        "BITARR16" => 0x002E,
        "BITARR32" => 0x002F,
        _ => return None,
    })
}

/// The size in bits of an ESI base type name (`BOOL` 1, `BIT3` 3, `UINT` 16, `STRING(8)`
/// 64, ...), `None` for a name without a fixed size.
pub fn base_type_bits(name: &str) -> Option<u16> {
    let name = name.trim();
    if let Some(n) = name
        .strip_prefix("STRING(")
        .and_then(|r| r.strip_suffix(')'))
    {
        return n.trim().parse::<u16>().ok()?.checked_mul(8);
    }
    if let Some(n) = name.strip_prefix("BIT").and_then(|n| n.parse::<u16>().ok()) {
        return (1..=8).contains(&n).then_some(n);
    }
    Some(match name {
        "BOOL" | "BOOLEAN" => 1,
        "SINT" | "USINT" | "BYTE" | "INTEGER8" | "UNSIGNED8" | "BITARR8" => 8,
        "INT" | "UINT" | "WORD" | "INTEGER16" | "UNSIGNED16" | "BITARR16" => 16,
        "INT24" | "UINT24" | "INTEGER24" | "UNSIGNED24" => 24,
        "DINT" | "UDINT" | "DWORD" | "REAL" | "REAL32" | "INTEGER32" | "UNSIGNED32"
        | "BITARR32" => 32,
        "INT40" | "UINT40" | "INTEGER40" | "UNSIGNED40" => 40,
        "INT48" | "UINT48" | "INTEGER48" | "UNSIGNED48" | "TIME_OF_DAY" | "TIME_DIFFERENCE" => 48,
        "INT56" | "UINT56" | "INTEGER56" | "UNSIGNED56" => 56,
        "LINT" | "ULINT" | "LREAL" | "REAL64" | "INTEGER64" | "UNSIGNED64" => 64,
        _ => return None,
    })
}

/// True if the type name is a signed integer type (for turning `DefaultValue` into bytes).
pub fn is_signed(name: &str) -> bool {
    matches!(
        name.trim(),
        "SINT" | "INT" | "DINT" | "LINT" | "INT24" | "INT40" | "INT48" | "INT56"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes() {
        assert_eq!(base_type_code("BOOL"), Some(1));
        assert_eq!(base_type_code("UDINT"), Some(7));
        assert_eq!(base_type_code("BIT2"), Some(0x31));
        assert_eq!(base_type_code("STRING(6)"), Some(9));
        assert_eq!(base_type_code("DT1018"), None);
        assert_eq!(base_type_bits("BIT2"), Some(2));
        assert_eq!(base_type_bits("STRING(10)"), Some(80));
        assert_eq!(base_type_bits("UDINT"), Some(32));
        assert_eq!(base_type_bits("DT1018"), None);
    }
}
