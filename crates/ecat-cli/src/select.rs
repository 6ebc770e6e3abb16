//! SubDevice selection as IgH's tool does it: `-p POSITION` (a number, a list `1,3` or a
//! range `2-4`), optionally relative to the SubDevice with alias `-a ALIAS`.

use ecat::SubDevice;

/// The `-p` / `-a` options.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Select {
    /// SubDevice position (0-based); a list `1,3` or range `2-4`. Default: all
    #[arg(short = 'p', long = "position", value_name = "POSITION")]
    pub position: Option<String>,
    /// Station alias; positions then count from the SubDevice with this alias
    #[arg(short = 'a', long = "alias", value_parser = parse_u16, value_name = "ALIAS")]
    pub alias: Option<u16>,
}

/// Parse a number in decimal or with a 0x prefix.
pub fn parse_u16(s: &str) -> Result<u16, String> {
    parse_u64(s).and_then(|v| u16::try_from(v).map_err(|_| format!("'{s}' is larger than 65535")))
}

/// Parse a number in decimal or with a 0x prefix.
pub fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a number (use decimal or 0x-prefixed hex)"))
}

fn parse_positions(spec: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in spec.split(',') {
        let part = part.trim();
        let bad = || format!("'-p {spec}' is not a position, list (1,3) or range (2-4)");
        if let Some((a, b)) = part.split_once('-') {
            let a: usize = a.trim().parse().map_err(|_| bad())?;
            let b: usize = b.trim().parse().map_err(|_| bad())?;
            if b < a {
                return Err(bad());
            }
            out.extend(a..=b);
        } else {
            out.push(part.parse().map_err(|_| bad())?);
        }
    }
    Ok(out)
}

impl Select {
    /// True if nothing was selected explicitly (meaning: all).
    pub fn is_all(&self) -> bool {
        self.position.is_none() && self.alias.is_none()
    }

    /// Resolve to positions on the bus; errors name what does not exist.
    pub fn resolve(&self, subs: &[SubDevice]) -> Result<Vec<usize>, String> {
        let base = match self.alias {
            Some(a) => subs
                .iter()
                .position(|s| s.alias == a)
                .ok_or_else(|| format!("no SubDevice has alias {a}"))?,
            None => 0,
        };
        let rel = match &self.position {
            Some(p) => parse_positions(p)?,
            None if self.alias.is_some() => vec![0],
            None => (0..subs.len()).collect(),
        };
        let mut out = Vec::with_capacity(rel.len());
        for r in rel {
            let p = base + r;
            if p >= subs.len() {
                return Err(format!(
                    "there is no SubDevice at position {p}; the bus has {} (positions 0..{})",
                    subs.len(),
                    subs.len().saturating_sub(1)
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
            _ => Err("select exactly one SubDevice with -p POSITION".into()),
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
        assert_eq!(sel(None, Some(7)).resolve(&s).unwrap(), vec![2]);
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
    }
}
