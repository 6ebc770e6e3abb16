//! Durations typed by users: `1ms`, `500us`, `250µs`, `10s`, `2m`, or a bare number in the
//! unit the option documents.

/// Parse a duration into nanoseconds; `bare` is the unit of a number without suffix
/// (e.g. 1_000 for microseconds).
pub fn parse_ns(s: &str, bare: u64) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("'{s}' is negative: a duration is 0 or more"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (examples: 1ms, 500us, 10s)"))?;
    let mult = match unit.trim() {
        "" => bare as f64,
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        u => {
            return Err(format!(
                "'{u}' in '{s}' is not a time unit; use ns, us, ms, s, m or h"
            ))
        }
    };
    let ns = v * mult;
    if !ns.is_finite() || !(0.0..=1e18).contains(&ns) {
        return Err(format!("'{s}' is out of range"));
    }
    Ok(ns.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_ns("1ms", 1000).unwrap(), 1_000_000);
        assert_eq!(parse_ns("250us", 1).unwrap(), 250_000);
        assert_eq!(parse_ns("1000", 1000).unwrap(), 1_000_000);
        assert_eq!(parse_ns("10", 1_000_000_000).unwrap(), 10_000_000_000);
        assert_eq!(parse_ns("1.5s", 1).unwrap(), 1_500_000_000);
        assert!(parse_ns("fast", 1).is_err());
        assert!(parse_ns("-5s", 1).unwrap_err().contains("negative"));
        assert!(parse_ns("99999999999999h", 1)
            .unwrap_err()
            .contains("out of range"));
        assert!(parse_ns("3 parsecs", 1)
            .unwrap_err()
            .contains("not a time unit"));
    }
}
