//! SubDevice selection as IgH's tool does it: `-p POSITION` (a number, a list `1,3`, a range
//! `2-4`, open ranges `-3` and `5-`), optionally relative to the SubDevice with alias
//! `-a ALIAS`; `-a ALIAS` alone selects that SubDevice and the ones behind it up to the next
//! alias. Numbers elsewhere follow IgH's rule too: decimal, octal with a leading 0, hex with 0x.

use ecat::SubDevice;

/// The `-p` / `-a` options.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Select {
    /// SubDevice position (0-based); a list `1,3`, a range `2-4`, `-3` (0 to 3) or `5-` (5 to
    /// the last). With -a: counted from the SubDevice with that alias. Default: all
    #[arg(short = 'p', long = "position", value_name = "POSITION")]
    pub position: Option<String>,
    /// Station alias: the SubDevice with this alias and those behind it up to the next alias;
    /// with -p, positions count from the SubDevice with this alias
    #[arg(short = 'a', long = "alias", value_parser = parse_u16, value_name = "ALIAS")]
    pub alias: Option<u16>,
}

/// Parse a 16-bit number: decimal, octal with a leading 0, or hex with 0x (IgH's rule).
pub fn parse_u16(s: &str) -> Result<u16, String> {
    parse_u64(s).and_then(|v| u16::try_from(v).map_err(|_| format!("'{s}' is larger than 65535")))
}

/// Parse a number as IgH's tool does (C's base 0): decimal, octal with a leading 0 (`010` is
/// 8), or hex with 0x (`0x10` is 16).
pub fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None if t.len() > 1 && t.starts_with('0') => (&t[1..], 8),
        None => (t, 10),
    };
    if digits.starts_with(['+', '-']) {
        return Err(format!("'{s}' is not an unsigned number"));
    }
    u64::from_str_radix(digits, radix).map_err(|_| match radix {
        8 => format!("'{s}' is not a number: a leading 0 means octal (digits 0-7); write it without the 0 for decimal or with 0x for hex"),
        _ => format!("'{s}' is not a number (use decimal, octal with a leading 0, or 0x-prefixed hex)"),
    })
}

/// Positions in IgH's list syntax: `1,3`, `2-4`, `4-2`, `-3` (0 to 3), `5-` (5 to `last`), `-`
/// (all); decimal numbers, as IgH reads them.
fn parse_positions(spec: &str, last: Option<usize>) -> Result<Vec<usize>, String> {
    let bad = || format!("'-p {spec}' is not a position, list (1,3) or range (2-4, -3, 5-)");
    let num = |t: &str| -> Result<usize, String> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        t.parse().map_err(|_| bad())
    };
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let a = if a.trim().is_empty() {
                    0
                } else {
                    num(a.trim())?
                };
                let b = match b.trim() {
                    "" => match last {
                        Some(l) => l,
                        None => continue,
                    },
                    t => num(t)?,
                };
                if a <= b {
                    out.extend(a..=b);
                } else {
                    out.extend((b..=a).rev());
                }
            }
            None => out.push(num(part)?),
        }
    }
    Ok(out)
}

impl Select {
    /// True if nothing was selected explicitly (meaning: all).
    pub fn is_all(&self) -> bool {
        self.position.is_none() && self.alias.is_none()
    }

    /// Resolve to positions on the bus (IgH's rules); errors name what does not exist.
    pub fn resolve(&self, subs: &[SubDevice]) -> Result<Vec<usize>, String> {
        let last = subs.len().checked_sub(1);
        let Some(a) = self.alias else {
            let out = match &self.position {
                Some(p) => parse_positions(p, last)?,
                None => (0..subs.len()).collect(),
            };
            if let Some(&p) = out.iter().find(|&&p| p >= subs.len()) {
                return Err(format!(
                    "there is no SubDevice at position {p}; the bus has {} (positions 0..{})",
                    subs.len(),
                    last.unwrap_or(0)
                ));
            }
            return Ok(out);
        };
        let base = subs
            .iter()
            .position(|s| s.alias == a)
            .ok_or_else(|| format!("no SubDevice has alias {a}"))?;
        // The alias group: the SubDevice with the alias and those behind it without one.
        let group = 1 + subs[base + 1..].iter().take_while(|s| s.alias == 0).count();
        let rel = match &self.position {
            Some(p) => parse_positions(p, Some(subs.len() - 1 - base))?,
            None => (0..group).collect(),
        };
        let mut out = Vec::with_capacity(rel.len());
        for r in rel {
            let p = base + r;
            if p >= subs.len() {
                return Err(format!(
                    "there is no SubDevice {r} behind alias {a} (position {p}); the bus has {} (positions 0..{})",
                    subs.len(),
                    subs.len() - 1
                ));
            }
            out.push(p);
        }
        Ok(out)
    }

    /// Resolve to exactly one position (default 0 when the bus has one SubDevice).
    pub fn resolve_one(&self, subs: &[SubDevice]) -> Result<usize, String> {
        if self.is_all() {
            return match subs.len() {
                1 => Ok(0),
                n => Err(format!(
                    "the bus has {n} SubDevices: choose one with -p POSITION"
                )),
            };
        }
        let v = self.resolve(subs)?;
        match v.as_slice() {
            [one] => Ok(*one),
            v => Err(format!(
                "the selection matches {} SubDevices and this command needs one: choose it with -p POSITION (with -a ALIAS, -p 0 is the SubDevice with the alias)",
                v.len()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subs(n: usize) -> Vec<SubDevice> {
        (0..n)
            .map(|i| SubDevice {
                position: i as u16,
                alias: if i == 2 { 7 } else { 0 },
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn positions() {
        let s = subs(5);
        let sel = |p: Option<&str>, a: Option<u16>| Select {
            position: p.map(String::from),
            alias: a,
        };
        assert_eq!(sel(None, None).resolve(&s).unwrap(), vec![0, 1, 2, 3, 4]);
        assert_eq!(sel(Some("1,3"), None).resolve(&s).unwrap(), vec![1, 3]);
        assert_eq!(sel(Some("2-4"), None).resolve(&s).unwrap(), vec![2, 3, 4]);
        assert_eq!(sel(None, Some(7)).resolve(&s).unwrap(), vec![2, 3, 4]);
        assert_eq!(sel(Some("0"), Some(7)).resolve(&s).unwrap(), vec![2]);
        assert_eq!(sel(Some("-1"), None).resolve(&s).unwrap(), vec![0, 1]);
        assert_eq!(sel(Some("3-"), None).resolve(&s).unwrap(), vec![3, 4]);
        assert_eq!(sel(Some("3-1"), None).resolve(&s).unwrap(), vec![3, 2, 1]);
        assert_eq!(
            sel(Some("-"), None).resolve(&s).unwrap(),
            vec![0, 1, 2, 3, 4]
        );
        assert!(sel(Some("0x1"), None).resolve(&s).is_err());
        assert_eq!(sel(Some("1"), Some(7)).resolve(&s).unwrap(), vec![3]);
        assert!(sel(Some("9"), None)
            .resolve(&s)
            .unwrap_err()
            .contains("position 9"));
        assert!(sel(Some("x"), None).resolve(&s).is_err());
        assert!(sel(None, Some(9))
            .resolve(&s)
            .unwrap_err()
            .contains("alias 9"));
        assert!(sel(None, None).resolve_one(&s).is_err());
        assert_eq!(parse_u16("0x130").unwrap(), 0x130);
        assert!(parse_u16("70000").is_err());
        assert_eq!(parse_u16("010").unwrap(), 8);
        assert_eq!(parse_u16("0x10").unwrap(), 16);
        assert_eq!(parse_u16("16").unwrap(), 16);
        assert_eq!(parse_u16("0").unwrap(), 0);
        assert!(parse_u16("08").unwrap_err().contains("octal"));
        assert!(parse_u16("-1").is_err());
    }
}
