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
//! members = ["EK1100", "EL1018"]  # what they are, so the group may be absent at the start
//! ```
//!
//! A group whose `members` are listed may be absent when the bus is scanned: it is laid out
//! from its members' SII images where it sits with everything plugged in (`position`, which
//! with `alias` means just that; without it an absent alias group goes behind the last
//! SubDevice) and joins when it appears (see `ecat::hotconnect`). A member is an ESI device
//! type (e.g. "EL2008"; its SII is built from the ESI file, found in `esi_dir` entries of
//! the file, `--esi-dir` or `ECAT_ESI_PATH`) or the path of an SII image file (`.bin`);
//! relative paths are relative to the hot-connect file.
//!
//! Errors name the file and line, or the group, in one sentence.

use ecat::hotconnect::{GroupHead, HotConnectGroup};
use ecat_config::DeviceLibrary;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    group: Vec<Group>,
    /// ESI directories or files for the members' types (relative to the file).
    #[serde(default)]
    esi_dir: Vec<PathBuf>,
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
    #[serde(default)]
    members: Vec<String>,
}

/// Load `path`: the groups it declares, with the SII images of listed members (ESI types
/// looked up in the file's `esi_dir`, then `esi_dirs` and `ECAT_ESI_PATH`).
pub fn load(path: &Path, esi_dirs: &[PathBuf]) -> Result<Vec<HotConnectGroup>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read hot-connect file {}: {e}", path.display()))?;
    let origin = path.display().to_string();
    let base = path.parent().unwrap_or(Path::new("."));
    let (mut groups, members, file_dirs) = parse_with_members(&text, &origin)?;
    let mut dirs: Vec<PathBuf> = file_dirs.iter().map(|d| base.join(d)).collect();
    dirs.extend(esi_dirs.iter().cloned());
    let mut lib: Option<DeviceLibrary> = None;
    for (g, names) in groups.iter_mut().zip(members) {
        for name in names {
            let image = if name.ends_with(".bin") || name.contains('/') {
                let p = base.join(&name);
                std::fs::read(&p).map_err(|e| {
                    format!(
                        "{origin}: group \"{}\": cannot read the SII image {}: {e}",
                        g.name,
                        p.display()
                    )
                })?
            } else {
                let lib = lib.get_or_insert_with(|| DeviceLibrary::from_env_and(dirs.clone()));
                let dev = lib.find_type(&name, None).map_err(|e| {
                    format!("{origin}: group \"{}\", member \"{name}\": {e}", g.name)
                })?;
                ecat_config::build_sii(&dev).map_err(|e| {
                    format!(
                        "{origin}: group \"{}\", member \"{name}\": cannot build its SII from the ESI file: {e}",
                        g.name
                    )
                })?
            };
            g.images.push(image);
        }
    }
    Ok(groups)
}

/// Parse hot-connect group text (`origin` names it in errors); listed members are not
/// looked up (see [`load`]).
#[cfg(test)]
pub fn parse(text: &str, origin: &str) -> Result<Vec<HotConnectGroup>, String> {
    parse_with_members(text, origin).map(|(g, _, _)| g)
}

/// The groups, each group's member names, and the file's ESI directories.
type Parsed = (Vec<HotConnectGroup>, Vec<Vec<String>>, Vec<PathBuf>);

fn parse_with_members(text: &str, origin: &str) -> Result<Parsed, String> {
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
            let mut absent_position = None;
            let head = match (g.alias, g.position, g.vendor, g.product) {
                (Some(a), p, None, None) => {
                    absent_position = p;
                    GroupHead::Alias(a)
                }
                (None, Some(position), Some(vendor_id), Some(product_code)) => {
                    GroupHead::Identity {
                        position,
                        vendor_id,
                        product_code,
                    }
                }
                _ => {
                    return Err(format!(
                        "{what}: name its head by `alias` (with `position` for where it sits), or by `position` with `vendor` and `product`"
                    ))
                }
            };
            if g.subdevices == 0 {
                return Err(format!(
                    "{what}: `subdevices` counts the head and the SubDevices behind it, so it is at least 1"
                ));
            }
            if !g.members.is_empty() && g.members.len() != g.subdevices as usize {
                return Err(format!(
                    "{what}: `members` lists {} device(s) but `subdevices` is {}; list every member, the head first",
                    g.members.len(),
                    g.subdevices
                ));
            }
            let mut group = HotConnectGroup::new(
                g.name.unwrap_or_else(|| format!("group {}", n + 1)),
                head,
                g.subdevices,
            );
            group.absent_position = absent_position;
            Ok((group, g.members))
        })
        .collect::<Result<Vec<_>, String>>()
        .map(|v| {
            let (groups, members) = v.into_iter().unzip();
            (groups, members, file.esi_dir)
        })
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
            "[[group]]\nalias = 1\nvendor = 2\nsubdevices = 1\n",
            "hc.toml",
        )
        .unwrap_err();
        assert!(e.contains("name its head by `alias`"), "{e}");
        let e = parse(
            "[[group]]\nalias = 1\nsubdevices = 2\nmembers = [\"EK1100\"]\n",
            "hc.toml",
        )
        .unwrap_err();
        assert!(e.contains("lists 1 device(s) but `subdevices` is 2"), "{e}");
        let e = parse("[[group]]\nalias = 1\nsubdevices = 0\n", "hc.toml").unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
        let e = parse("[[group]]\nalias = 1\n", "hc.toml").unwrap_err();
        assert!(e.starts_with("hc.toml:1:"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn members_by_esi_type_get_images() {
        let dir = std::env::temp_dir().join(format!("ecat-hotfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let esi = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/esi");
        let file = dir.join("hc.toml");
        std::fs::write(
            &file,
            format!(
                "esi_dir = [{:?}]\n[[group]]\nname = \"tool\"\nalias = 0x2000\nposition = 4\nsubdevices = 3\nmembers = [\"EK1100\", \"EL2008\", \"EL1018\"]\n",
                esi.display().to_string()
            ),
        )
        .unwrap();
        let g = load(&file, &[]).unwrap();
        assert_eq!(g[0].absent_position, Some(4));
        assert_eq!(g[0].images.len(), 3);
        let mut s = ecat::SubDevice::default();
        s.apply_sii(&g[0].images[1]).unwrap();
        assert_eq!(s.identity.product_code, 0x07D83052, "EL2008");
        std::fs::write(
            &file,
            "[[group]]\nalias = 1\nsubdevices = 1\nmembers = [\"NoSuchTerminal\"]\n",
        )
        .unwrap();
        let e = load(&file, &[]).unwrap_err();
        assert!(
            e.contains("member \"NoSuchTerminal\"") && !e.contains('\n'),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
