//! Typed values for `-t TYPE` (as in IgH's tool): how user text becomes bytes and bytes
//! become text. Little-endian, as everything on EtherCAT.

use std::fmt::Write;

/// A data type the user can name with `-t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DataType {
    /// 8-bit signed.
    Int8,
    /// 16-bit signed.
    Int16,
    /// 32-bit signed.
    Int32,
    /// 64-bit signed.
    Int64,
    /// 8-bit unsigned.
    Uint8,
    /// 16-bit unsigned.
    Uint16,
    /// 32-bit unsigned.
    Uint32,
    /// 64-bit unsigned.
    Uint64,
    /// 32-bit IEEE float.
    Float,
    /// 64-bit IEEE float.
    Double,
    /// Text bytes.
    String,
    /// Raw bytes (hex).
    Raw,
}

impl DataType {
    /// The type for a CoE data type code (ETG.1000.6), if it has a text form here.
    pub fn from_coe(code: u16, bits: u16) -> Option<DataType> {
        use DataType::*;
        Some(match code {
            0x0001 | 0x0005 => Uint8,
            0x0002 => Int8,
            0x0003 => Int16,
            0x0004 => Int32,
            0x0006 => Uint16,
            0x0007 => Uint32,
            0x0008 => Float,
            0x0009 => String,
            0x000A => Raw,
            0x0011 => Double,
            0x0015 => Int64,
            0x001B => Uint64,
            _ if bits > 0 && bits <= 8 => Uint8,
            _ => return None,
        })
    }

    /// Fixed size in bytes, if the type has one.
    pub fn size(self) -> Option<usize> {
        use DataType::*;
        Some(match self {
            Int8 | Uint8 => 1,
            Int16 | Uint16 => 2,
            Int32 | Uint32 | Float => 4,
            Int64 | Uint64 | Double => 8,
            String | Raw => return None,
        })
    }

    /// Encode user text as bytes of this type.
    pub fn encode(self, text: &str) -> Result<Vec<u8>, std::string::String> {
        use DataType::*;
        let t = text.trim();
        let int = |t: &str| -> Result<i128, std::string::String> {
            let (neg, body) = match t.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, t),
            };
            let v = crate::select::parse_u64(body)? as i128;
            Ok(if neg { -v } else { v })
        };
        let range = |v: i128, lo: i128, hi: i128| {
            if v < lo || v > hi {
                Err(format!("{text} is out of range for {self:?} ({lo}..={hi})"))
            } else {
                Ok(v)
            }
        };
        Ok(match self {
            Int8 => (range(int(t)?, i8::MIN as i128, i8::MAX as i128)? as i8)
                .to_le_bytes()
                .to_vec(),
            Int16 => (range(int(t)?, i16::MIN as i128, i16::MAX as i128)? as i16)
                .to_le_bytes()
                .to_vec(),
            Int32 => (range(int(t)?, i32::MIN as i128, i32::MAX as i128)? as i32)
                .to_le_bytes()
                .to_vec(),
            Int64 => (range(int(t)?, i64::MIN as i128, i64::MAX as i128)? as i64)
                .to_le_bytes()
                .to_vec(),
            Uint8 => (range(int(t)?, 0, u8::MAX as i128)? as u8)
                .to_le_bytes()
                .to_vec(),
            Uint16 => (range(int(t)?, 0, u16::MAX as i128)? as u16)
                .to_le_bytes()
                .to_vec(),
            Uint32 => (range(int(t)?, 0, u32::MAX as i128)? as u32)
                .to_le_bytes()
                .to_vec(),
            Uint64 => (range(int(t)?, 0, u64::MAX as i128)? as u64)
                .to_le_bytes()
                .to_vec(),
            Float => t
                .parse::<f32>()
                .map_err(|_| format!("'{text}' is not a number"))?
                .to_le_bytes()
                .to_vec(),
            Double => t
                .parse::<f64>()
                .map_err(|_| format!("'{text}' is not a number"))?
                .to_le_bytes()
                .to_vec(),
            String => text.as_bytes().to_vec(),
            Raw => {
                let h: std::string::String = t
                    .trim_start_matches("0x")
                    .chars()
                    .filter(|c| !c.is_whitespace() && *c != ':')
                    .collect();
                if !h.len().is_multiple_of(2) {
                    return Err(format!("'{text}' has an odd number of hex digits"));
                }
                (0..h.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&h[i..i + 2], 16))
                    .collect::<Result<Vec<u8>, _>>()
                    .map_err(|_| format!("'{text}' is not hex bytes"))?
            }
        })
    }

    /// Decode bytes as IgH's tool prints them: as [`DataType::decode`], except that IgH
    /// shows negative 8, 16 and 32-bit values in hex as 32-bit words (`0xffffffff -1`) and
    /// raw bytes on one line.
    pub fn decode_igh(self, b: &[u8]) -> String {
        let mut a = [0u8; 4];
        let n = b.len().min(4);
        a[..n].copy_from_slice(&b[..n]);
        let widened = match self {
            DataType::Int8 => a[0] as i8 as i32,
            DataType::Int16 => i16::from_le_bytes([a[0], a[1]]) as i32,
            DataType::Int32 => i32::from_le_bytes(a),
            DataType::Raw => return hex_line(b),
            _ => return self.decode(b),
        };
        if widened >= 0 {
            return self.decode(b);
        }
        format!("0x{:08x} {widened}", widened as u32)
    }

    /// Decode bytes of this type as text (IgH prints integers as `0x.. decimal`).
    pub fn decode(self, b: &[u8]) -> String {
        use DataType::*;
        let arr = |n: usize| -> [u8; 8] {
            let mut a = [0u8; 8];
            a[..n.min(b.len())].copy_from_slice(&b[..n.min(b.len())]);
            a
        };
        let u = |n: usize| u64::from_le_bytes(arr(n));
        match self {
            Uint8 => format!("0x{:02x} {}", u(1), u(1)),
            Uint16 => format!("0x{:04x} {}", u(2), u(2)),
            Uint32 => format!("0x{:08x} {}", u(4), u(4)),
            Uint64 => format!("0x{:016x} {}", u(8), u(8)),
            Int8 => format!("0x{:02x} {}", u(1), u(1) as u8 as i8),
            Int16 => format!("0x{:04x} {}", u(2), u(2) as u16 as i16),
            Int32 => format!("0x{:08x} {}", u(4), u(4) as u32 as i32),
            Int64 => format!("0x{:016x} {}", u(8), u(8) as i64),
            Float => format!("{}", f32::from_bits(u(4) as u32)),
            Double => format!("{}", f64::from_bits(u(8))),
            String => ecat_wire::Latin1(b).to_string(),
            Raw => hex(b),
        }
    }
}

/// Bytes as space-separated hex on one line (IgH's raw output: `0x04 0x00`).
pub fn hex_line(b: &[u8]) -> String {
    let mut s = std::string::String::new();
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "0x{x:02x}");
    }
    s
}

/// Bytes as space-separated hex, 16 per line.
pub fn hex(b: &[u8]) -> String {
    let mut s = std::string::String::new();
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s.push(if i % 16 == 0 { '\n' } else { ' ' });
        }
        let _ = write!(s, "0x{x:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode() {
        assert_eq!(DataType::Uint16.encode("0x0102").unwrap(), vec![2, 1]);
        assert_eq!(DataType::Int8.encode("-1").unwrap(), vec![0xFF]);
        assert!(DataType::Uint8
            .encode("256")
            .unwrap_err()
            .contains("out of range"));
        assert!(DataType::Uint8.encode("abc").is_err());
        assert_eq!(DataType::Uint8.encode("010").unwrap(), vec![8]);
        assert_eq!(DataType::Int16.encode("-0x10").unwrap(), vec![0xF0, 0xFF]);
        assert_eq!(DataType::Raw.encode("01 02:ff").unwrap(), vec![1, 2, 0xFF]);
        assert!(DataType::Raw.encode("123").is_err());
        assert_eq!(DataType::Uint16.decode(&[0x30, 0x01]), "0x0130 304");
        assert_eq!(DataType::Int16.decode(&[0xFF, 0xFF]), "0xffff -1");
        assert_eq!(DataType::Raw.decode(&[1, 2]), "0x01 0x02");
        assert_eq!(DataType::Int16.decode_igh(&[0xFF, 0xFF]), "0xffffffff -1");
        assert_eq!(DataType::Int8.decode_igh(&[0x05]), "0x05 5");
        assert_eq!(DataType::Uint16.decode_igh(&[0x04, 0x00]), "0x0004 4");
        assert_eq!(hex_line(&[0u8; 17]).len(), 17 * 5 - 1);
    }
}
