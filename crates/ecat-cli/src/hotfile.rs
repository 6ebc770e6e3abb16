//! Hot-connect group files for `ecat run --hot-connect FILE` (TOML): which parts of the bus
//! may be absent, and leave and join while the rest cycles (see `ecat::hotconnect`).
//!
//! ```toml
//! [[group]]
//! name = "tool changer"      # used in reports
//! alias = 0x2000             # the head: the SubDevice with this station alias ...
//! subdevices = 3             # ... and the SubDevices behind it (the head included)
//!
//! [[group]]
//! name = "option station"
//! position = 7               # or the head by its identity at a position
//! vendor = 0x2
//! product = 0x044c2c52
//! subdevices = 2
//! ```
//!
//! Errors name the file and line, or the group, in one sentence.

use ecat::hotconnect::{GroupHead, HotConnectGroup};
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    group: Vec<Group>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Group {
    name: Option<String>,
    alias: Option<u16>,
    position: Option<u16>,
    vendor: Option<u32>,
    product: Option<u32>,
    subdevices: u16,
}

/// Load `path`: the groups it declares.
pub fn load(path: &Path) -> Result<Vec<HotConnectGroup>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read hot-connect file {}: {e}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Parse hot-connect group text (`origin` names it in errors).
pub fn parse(text: &str, origin: &str) -> Result<Vec<HotConnectGroup>, String> {
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
            .unwrap_or(1);
        format!("{origin}:{line}: {}", e.message())
    })?;
    if file.group.is_empty() {
        return Err(format!(
            "{origin} declares no hot-connect group; add a [[group]] with its head (alias, or position with vendor and product) and subdevices"
        ));
    }
    file.group
        .into_iter()
        .enumerate()
        .map(|(n, g)| {
            let what = format!("{origin}: [[group]] number {}", n + 1);
            let head = match (g.alias, g.position, g.vendor, g.product) {
                (Some(a), None, None, None) => GroupHead::Alias(a),
                (None, Some(position), Some(vendor_id), Some(product_code)) => {
                    GroupHead::Identity {
                        position,
                        vendor_id,
                        product_code,
                    }
                }
                _ => {
                    return Err(format!(
                        "{what}: name its head by `alias`, or by `position` with `vendor` and `product`"
                    ))
                }
            };
            if g.subdevices == 0 {
                return Err(format!(
                    "{what}: `subdevices` counts the head and the SubDevices behind it, so it is at least 1"
                ));
            }
            Ok(HotConnectGroup {
                name: g.name.unwrap_or_else(|| format!("group {}", n + 1)),
                head,
                subdevices: g.subdevices,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_head_forms() {
        let g = parse(
            "[[group]]\nname = \"tool\"\nalias = 0x2000\nsubdevices = 3\n\
             [[group]]\nposition = 7\nvendor = 2\nproduct = 0x10\nsubdevices = 1\n",
            "hc.toml",
        )
        .unwrap();
        assert_eq!(g[0].head, GroupHead::Alias(0x2000));
        assert_eq!(g[0].subdevices, 3);
        assert_eq!(g[1].name, "group 2");
        assert_eq!(
            g[1].head,
            GroupHead::Identity {
                position: 7,
                vendor_id: 2,
                product_code: 0x10
            }
        );
    }

    #[test]
    fn bad_input_is_one_sentence() {
        let e = parse(
            "[[group]]\nalias = 1\nposition = 2\nsubdevices = 1\n",
            "hc.toml",
        )
        .unwrap_err();
        assert!(e.contains("name its head by `alias`"), "{e}");
        let e = parse("[[group]]\nalias = 1\nsubdevices = 0\n", "hc.toml").unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
        let e = parse("[[group]]\nalias = 1\n", "hc.toml").unwrap_err();
        assert!(e.starts_with("hc.toml:1:"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
