//! TOML network files.
//!
//! ```toml
//! [[subdevice]]
//! model = "EK1100"
//!
//! [[subdevice]]
//! sii = "dumps/el2004.bin"   # relative to this file
//! alias = 7                  # stored in the SII, loaded into 0x0012 at power-up
//! name = "left door outputs"
//! ```
//!
//! Each error names `file:line` (from the TOML spans) and says what to do; an unknown model
//! lists the valid ones.

use crate::devices::{self, Model};
use crate::error::SimError;
use crate::network::Node;
use serde::Deserialize;
use std::path::Path;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRepr {
    #[serde(default)]
    subdevice: Vec<Spanned<EntryRepr>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryRepr {
    model: Option<Spanned<String>>,
    sii: Option<Spanned<String>>,
    alias: Option<Spanned<u16>>,
    name: Option<String>,
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Build the node of a catalogue model.
pub(crate) fn node_from_model(
    model: &Model,
    serial: u32,
    alias: Option<u16>,
    name: Option<String>,
) -> Node {
    Node {
        esc: model.build(serial, alias),
        name: name.unwrap_or_else(|| model.description().to_string()),
        order: model.name.to_string(),
    }
}

/// Parse a network file into its nodes.
pub(crate) fn parse(text: &str, origin: &str, base_dir: &Path) -> Result<Vec<Node>, SimError> {
    let at = |offset: usize| format!("{origin}:{}", line_of(text, offset));
    let file: FileRepr = toml::from_str(text).map_err(|e| SimError::Invalid {
        location: at(e.span().map_or(0, |s| s.start)),
        message: e.message().trim().to_string(),
    })?;
    if file.subdevice.is_empty() {
        return Err(SimError::Invalid {
            location: at(0),
            message: "the network lists no SubDevice; add a [[subdevice]] table with model = \"EK1100\" or sii = \"image.bin\"".into(),
        });
    }
    let mut nodes = Vec::new();
    for (i, entry) in file.subdevice.iter().enumerate() {
        let here = at(entry.span().start);
        let e = entry.get_ref();
        let serial = i as u32 + 1;
        let alias = e.alias.as_ref().map(|a| *a.get_ref());
        let node = match (&e.model, &e.sii) {
            (Some(m), None) => {
                let loc = at(m.span().start);
                let Some(model) = devices::find(m.get_ref()) else {
                    return Err(SimError::UnknownModel {
                        location: loc,
                        model: m.get_ref().clone(),
                        models: devices::model_names().join(", "),
                    });
                };
                if model.is_passive() && alias.is_some() {
                    return Err(SimError::Invalid {
                        location: at(e.alias.as_ref().map_or(0, |a| a.span().start)),
                        message: format!(
                            "{} is a passive terminal without ESC and cannot have an alias; remove `alias`",
                            model.name
                        ),
                    });
                }
                node_from_model(&model, serial, alias, e.name.clone())
            }
            (None, Some(s)) => {
                let loc = at(s.span().start);
                let path = base_dir.join(s.get_ref());
                let mut image = std::fs::read(&path).map_err(|err| SimError::BadSii {
                    location: loc.clone(),
                    path: path.clone(),
                    reason: err.to_string(),
                })?;
                crate::sii_info::SiiInfo::parse(&image)
                    .map_err(|err| SimError::bad_sii(&loc, path.clone(), err))?;
                if let Some(a) = alias {
                    devices::set_alias(&mut image, a);
                }
                let esc = devices::esc_from_sii(image)
                    .map_err(|err| SimError::bad_sii(&loc, path.clone(), err))?;
                let info = esc.info();
                let order = if info.order.is_empty() {
                    s.get_ref().clone()
                } else {
                    info.order.clone()
                };
                let default_name = if info.name.is_empty() {
                    order.clone()
                } else {
                    info.name.clone()
                };
                Node {
                    name: e.name.clone().unwrap_or(default_name),
                    order,
                    esc: Some(esc),
                }
            }
            (Some(_), Some(_)) => {
                return Err(SimError::Invalid {
                    location: here,
                    message: "a [[subdevice]] takes either `model` or `sii`, not both".into(),
                })
            }
            (None, None) => {
                return Err(SimError::Invalid {
                    location: here,
                    message: "this [[subdevice]] needs `model = \"EL2008\"` (a catalogue model) or `sii = \"image.bin\"` (an SII image file)".into(),
                })
            }
        };
        nodes.push(node);
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::line_of;

    #[test]
    fn lines_count_from_one() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
    }
}
