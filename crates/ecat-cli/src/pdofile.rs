//! PDO configuration files for `ecat run --pdo-config FILE` (TOML), in IgH's shape:
//!
//! ```toml
//! [[subdevice]]
//! position = 3                 # or: alias = 7
//! [[subdevice.sm]]
//! index = 2                    # SyncManager
//! direction = "output"         # or "input"
//! domain = 0                   # optional, default 0
//! pdos = [ { index = 0x1600, entries = [ [0x7000, 1, 16], [0x7010, 1, 16] ] } ]
//! ```
//!
//! Entries are `[index, subindex, bits]` (index 0 = gap). SubDevices not listed keep the
//! configuration from their SII. Errors name the file and line.

use ecat::config::{Direction, EntryConfig, PdoConfig, SubDeviceConfig, SyncConfig};
use ecat::SubDevice;

use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    subdevice: Vec<Sub>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Sub {
    position: Option<u16>,
    alias: Option<u16>,
    #[serde(default)]
    sm: Vec<Sm>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Sm {
    index: u8,
    direction: String,
    #[serde(default)]
    domain: usize,
    #[serde(default)]
    pdos: Vec<Pdo>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pdo {
    index: u16,
    #[serde(default)]
    entries: Vec<(u16, u8, u8)>,
}

/// Load `path`: the configuration of each SubDevice the file lists (by position; `None` for
/// the others).
pub fn load(path: &Path, subs: &[SubDevice]) -> Result<Vec<Option<SubDeviceConfig>>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read PDO configuration {}: {e}", path.display()))?;
    parse(&text, &path.display().to_string(), subs)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parse configuration text (`origin` names it in errors).
pub fn parse(
    text: &str,
    origin: &str,
    subs: &[SubDevice],
) -> Result<Vec<Option<SubDeviceConfig>>, String> {
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        format!("{origin}:{line}: {}", e.message())
    })?;
    let mut configs: Vec<Option<SubDeviceConfig>> = vec![None; subs.len()];
    for (n, s) in file.subdevice.iter().enumerate() {
        let what = format!("{origin}: [[subdevice]] number {}", n + 1);
        let pos = match (s.position, s.alias) {
            (Some(p), None) => p as usize,
            (None, Some(a)) => subs
                .iter()
                .position(|x| x.alias == a)
                .ok_or_else(|| format!("{what}: no SubDevice has alias {a}"))?,
            _ => return Err(format!("{what}: give exactly one of position or alias")),
        };
        let sub = subs.get(pos).ok_or_else(|| {
            format!(
                "{what}: there is no SubDevice at position {pos} (the bus has {})",
                subs.len()
            )
        })?;
        let mut sync = Vec::new();
        for sm in &s.sm {
            let direction = match sm.direction.as_str() {
                "output" | "outputs" | "out" => Direction::Output,
                "input" | "inputs" | "in" => Direction::Input,
                d => {
                    return Err(format!(
                        "{what}: direction '{d}' is neither \"output\" nor \"input\""
                    ))
                }
            };
            if sm.index as usize >= sub.sm_count.max(1) as usize {
                return Err(format!(
                    "{what}: {} has no SyncManager {} (it has {})",
                    sub.who(),
                    sm.index,
                    sub.sm_count
                ));
            }
            let pdos = sm
                .pdos
                .iter()
                .map(|p| PdoConfig {
                    index: p.index,
                    entries: p
                        .entries
                        .iter()
                        .map(|&(index, subindex, bits)| EntryConfig {
                            index,
                            subindex,
                            bits,
                        })
                        .collect(),
                })
                .collect();
            sync.push(SyncConfig {
                index: sm.index,
                direction,
                pdos,
                domain: sm.domain,
            });
        }
        configs[pos] = Some(SubDeviceConfig { sync });
    }
    Ok(configs)
}

/// A bus of three SubDevices with four SyncManagers each, alias 9 at position 2 (tests, fuzz).
#[cfg_attr(not(test), allow(dead_code))]
fn three_subs() -> Vec<SubDevice> {
    (0..3)
        .map(|p| SubDevice {
            position: p,
            sm_count: 4,
            alias: if p == 2 { 9 } else { 0 },
            ..Default::default()
        })
        .collect()
}

/// Fuzz entry (target `pdofile` in `fuzz/`, and the corpus replay below): any bytes as a PDO
/// file for [`three_subs`]; nothing may panic.
#[cfg_attr(not(test), allow(dead_code))]
pub fn fuzz(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = parse(text, "fuzz.toml", &three_subs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzz_corpus_replays() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/pdofile");
        ecat_sim::fuzzing::replay_corpus(&dir, &fuzz, true);
    }

    fn subs() -> Vec<SubDevice> {
        three_subs()
    }

    #[test]
    fn parses_and_merges() {
        let t = "[[subdevice]]\nalias = 9\n[[subdevice.sm]]\nindex = 2\ndirection = \"output\"\npdos = [ { index = 0x1600, entries = [[0x7000, 1, 16], [0, 0, 8]] } ]\n";
        let c = parse(t, "x.toml", &subs()).unwrap();
        let c2 = c[2].as_ref().unwrap();
        assert_eq!(c2.sync.len(), 1);
        assert_eq!(c2.sync[0].bytes(), 3);
        assert!(c[0].is_none());
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = parse(
            "[[subdevice]]\nposition = 1\nbogus = 3\n",
            "p.toml",
            &subs(),
        )
        .unwrap_err();
        assert!(e.starts_with("p.toml:3:"), "{e}");
        let e = parse("[[subdevice]]\nposition = 7\n", "p.toml", &subs()).unwrap_err();
        assert!(e.contains("no SubDevice at position 7"), "{e}");
        let t =
            "[[subdevice]]\nposition = 0\n[[subdevice.sm]]\nindex = 2\ndirection = \"sideways\"\n";
        assert!(parse(t, "p.toml", &subs())
            .unwrap_err()
            .contains("sideways"));
    }
}
