//! The ENI's process image variables by name, over the runtime's domain.
//!
//! Each variable becomes an [`EntryLocation`] in domain 0 (inputs after the output image), so
//! reading and writing are bit-exact copies into or out of the image; values come back typed
//! after the variable's IEC 61131 data type.

use crate::error::{Error, Result};
use crate::runtime::{EntryLocation, Runtime};
use ecat_config::eni::Eni;

/// A typed value of a variable.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// BOOL / BIT.
    Bool(bool),
    /// Signed integers (SINT, INT, DINT, LINT).
    Int(i64),
    /// Unsigned integers and bit strings (USINT, UINT, UDINT, ULINT, BYTE, WORD, DWORD, ...).
    Uint(u64),
    /// REAL.
    Real(f32),
    /// LREAL.
    LReal(f64),
    /// Anything longer than 64 bits, as bytes.
    Bytes(Vec<u8>),
}

impl Value {
    /// The value as an integer (floats truncated, bytes 0).
    pub fn as_i64(&self) -> i64 {
        match *self {
            Value::Bool(b) => b as i64,
            Value::Int(v) => v,
            Value::Uint(v) => v as i64,
            Value::Real(v) => v as i64,
            Value::LReal(v) => v as i64,
            Value::Bytes(_) => 0,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{}", u8::from(*b)),
            Value::Int(v) => write!(f, "{v}"),
            Value::Uint(v) => write!(f, "{v} (0x{v:x})"),
            Value::Real(v) => write!(f, "{v}"),
            Value::LReal(v) => write!(f, "{v}"),
            Value::Bytes(b) => {
                for x in b {
                    write!(f, "{x:02x}")?;
                }
                Ok(())
            }
        }
    }
}

/// One named variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EniVar {
    /// Name as in the ENI.
    pub name: String,
    /// Data type as in the ENI.
    pub data_type: String,
    /// An input (else an output).
    pub input: bool,
    /// Size in bits.
    pub bits: u32,
    /// Where it is in the domain image.
    pub location: EntryLocation,
}

/// The ENI's variables over the runtime's process image.
#[derive(Debug, Clone, Default)]
pub struct EniImage {
    vars: Vec<EniVar>,
}

fn get_bits(image: &[u8], bit: usize, n: usize) -> u64 {
    let mut v = 0u64;
    for k in 0..n.min(64) {
        let b = bit + k;
        if image.get(b / 8).is_some_and(|x| x >> (b % 8) & 1 == 1) {
            v |= 1 << k;
        }
    }
    v
}

fn put_bits(image: &mut [u8], bit: usize, n: usize, v: u64) {
    for k in 0..n.min(64) {
        let b = bit + k;
        if let Some(x) = image.get_mut(b / 8) {
            if v >> k & 1 == 1 {
                *x |= 1 << (b % 8);
            } else {
                *x &= !(1 << (b % 8));
            }
        }
    }
}

impl EniImage {
    /// The variables of `eni` placed in a domain whose output image is `outputs_len` bytes.
    pub fn new(eni: &Eni, outputs_len: usize) -> EniImage {
        let mut vars = Vec::new();
        for (input, img) in [
            (false, &eni.process_image.outputs),
            (true, &eni.process_image.inputs),
        ] {
            for v in &img.variables {
                let base = if input { outputs_len } else { 0 };
                vars.push(EniVar {
                    name: v.name.clone(),
                    data_type: v.data_type.clone(),
                    input,
                    bits: v.bit_size,
                    location: EntryLocation {
                        domain: 0,
                        byte: base + (v.bit_offs / 8) as usize,
                        bit: (v.bit_offs % 8) as u8,
                        bits: v.bit_size.min(255) as u8,
                    },
                });
            }
        }
        EniImage { vars }
    }

    /// Every variable, outputs first, in ENI order.
    pub fn vars(&self) -> &[EniVar] {
        &self.vars
    }

    /// The variable called `name`.
    pub fn var(&self, name: &str) -> Option<&EniVar> {
        self.vars.iter().find(|v| v.name == name)
    }

    fn find(&self, name: &str) -> Result<&EniVar> {
        self.var(name).ok_or_else(|| {
            Error::NotFound(format!(
                "the ENI has no variable \"{name}\" ({} variables; `ecat data --eni` lists them)",
                self.vars.len()
            ))
        })
    }

    /// The value of variable `name` in the runtime's image now.
    pub fn read(&self, rt: &Runtime, name: &str) -> Result<Value> {
        let v = self.find(name)?;
        Ok(Self::value_of(v, rt.domain(v.location.domain).image()))
    }

    /// The value of `v` in `image`.
    pub fn value_of(v: &EniVar, image: &[u8]) -> Value {
        let l = v.location;
        let at = l.byte * 8 + l.bit as usize;
        let n = (v.bits as usize).min((image.len() * 8).saturating_sub(at));
        if n > 64 {
            let bytes = (0..n.div_ceil(8))
                .map(|k| get_bits(image, at + 8 * k, 8.min(n - 8 * k)) as u8)
                .collect();
            return Value::Bytes(bytes);
        }
        let raw = get_bits(image, at, n);
        let signed = |raw: u64| {
            if n == 0 || n == 64 {
                raw as i64
            } else if raw >> (n - 1) & 1 == 1 {
                (raw | !((1u64 << n) - 1)) as i64
            } else {
                raw as i64
            }
        };
        match v.data_type.to_ascii_uppercase().as_str() {
            "BOOL" | "BIT" => Value::Bool(raw & 1 == 1),
            "SINT" | "INT" | "DINT" | "LINT" => Value::Int(signed(raw)),
            "REAL" if n == 32 => Value::Real(f32::from_bits(raw as u32)),
            "LREAL" if n == 64 => Value::LReal(f64::from_bits(raw)),
            _ if n == 1 => Value::Bool(raw & 1 == 1),
            _ => Value::Uint(raw),
        }
    }

    /// The value of variable `name` as `T` (e.g. `image.get::<i32>(&rt, "Drive1.Inputs.Position
    /// actual value")`); an error names the variable when the value does not fit `T`.
    pub fn get<T: TryFrom<i64>>(&self, rt: &Runtime, name: &str) -> Result<T> {
        let v = self.read(rt, name)?;
        T::try_from(v.as_i64()).map_err(|_| {
            Error::Invalid(format!(
                "the value {v} of \"{name}\" does not fit the type asked for"
            ))
        })
    }

    /// Write the integer `value` into output variable `name` (sent with the next cycle).
    pub fn write(&self, rt: &mut Runtime, name: &str, value: i64) -> Result<()> {
        let v = self.find(name)?;
        if v.input {
            return Err(Error::Invalid(format!(
                "\"{name}\" is an input; only outputs can be written"
            )));
        }
        let l = v.location;
        let image = rt.domain_mut(l.domain).image_mut();
        put_bits(
            image,
            l.byte * 8 + l.bit as usize,
            v.bits as usize,
            value as u64,
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(data_type: &str, bit: usize, bits: u32) -> EniVar {
        EniVar {
            name: "v".into(),
            data_type: data_type.into(),
            input: true,
            bits,
            location: EntryLocation {
                domain: 0,
                byte: bit / 8,
                bit: (bit % 8) as u8,
                bits: bits as u8,
            },
        }
    }

    #[test]
    fn values_at_bit_offsets_and_signs() {
        let mut img = [0u8; 8];
        put_bits(&mut img, 11, 1, 1);
        assert_eq!(img[1], 0x08);
        assert_eq!(
            EniImage::value_of(&var("BIT", 11, 1), &img),
            Value::Bool(true)
        );
        put_bits(&mut img, 16, 16, 0xFFFE);
        assert_eq!(
            EniImage::value_of(&var("INT", 16, 16), &img),
            Value::Int(-2)
        );
        assert_eq!(
            EniImage::value_of(&var("UINT", 16, 16), &img),
            Value::Uint(0xFFFE)
        );
        put_bits(&mut img, 32, 32, 1.5f32.to_bits() as u64);
        assert_eq!(
            EniImage::value_of(&var("REAL", 32, 32), &img),
            Value::Real(1.5)
        );
        // Past the end of the image: what is there, never a panic.
        assert_eq!(
            EniImage::value_of(&var("UDINT", 60, 32), &img),
            Value::Uint(0x3FC0_0000 >> 28)
        );
        let long = EniImage::value_of(&var("STRING(20)", 0, 160), &img);
        assert!(matches!(long, Value::Uint(_) | Value::Bytes(_)));
    }
}
