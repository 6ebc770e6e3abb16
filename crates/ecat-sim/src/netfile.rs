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
//! Optional faults and scripted events:
//!
//! ```toml
//! [faults]
//! seed = 7
//! drop_rate = 0.01          # probabilities 0..=1
//! corrupt_rate = 0.001
//! deliver_corrupted = false # true: return corrupted frames with a flipped bit
//! delay_ns = 2000
//! jitter_ns = 500
//! duplicate_rate = 0.0
//!
//! [[event]]
//! at_ms = 500
//! action = "unplug"         # "unplug" | "replug" | "power_cycle"
//! position = 2              # ESC index in wiring order (passive terminals not counted)
//!
//! [[event]]
//! at_ms = 800
//! action = "replug"
//! position = 2
//! power_cycled = true       # replug only; default false
//! ```
//!
//! Each error names `file:line` (from the TOML spans) and says what to do; an unknown model
//! lists the valid ones.

use crate::devices::{self, Model};
use crate::error::SimError;
use crate::faults::{EventAction, FaultEvent, Faults};
use crate::network::Node;
use serde::Deserialize;
use std::path::Path;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRepr {
    #[serde(default)]
    subdevice: Vec<Spanned<EntryRepr>>,
    faults: Option<FaultsRepr>,
    #[serde(default)]
    event: Vec<Spanned<EventRepr>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultsRepr {
    seed: Option<u64>,
    drop_rate: Option<Spanned<f64>>,
    corrupt_rate: Option<Spanned<f64>>,
    deliver_corrupted: Option<bool>,
    delay_ns: Option<u64>,
    jitter_ns: Option<u64>,
    duplicate_rate: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EventRepr {
    at_ms: Spanned<f64>,
    action: Spanned<String>,
    position: Spanned<u64>,
    power_cycled: Option<Spanned<bool>>,
}

/// What a network file describes.
pub(crate) struct NetFile {
    pub nodes: Vec<Node>,
    pub faults: Option<Faults>,
    pub events: Vec<FaultEvent>,
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

/// Parse a network file.
pub(crate) fn parse(text: &str, origin: &str, base_dir: &Path) -> Result<NetFile, SimError> {
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
    let escs = nodes.iter().filter(|n| n.esc.is_some()).count();
    let faults = match &file.faults {
        Some(f) => Some(faults(f, &at)?),
        None => None,
    };
    let events = file
        .event
        .iter()
        .map(|e| event(e.get_ref(), escs, &at))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(NetFile {
        nodes,
        faults,
        events,
    })
}

fn invalid(location: String, message: String) -> SimError {
    SimError::Invalid { location, message }
}

fn rate(
    r: &Option<Spanned<f64>>,
    name: &str,
    at: &dyn Fn(usize) -> String,
) -> Result<f64, SimError> {
    let Some(r) = r else { return Ok(0.0) };
    let v = *r.get_ref();
    if !(0.0..=1.0).contains(&v) {
        return Err(invalid(
            at(r.span().start),
            format!("`{name}` is a probability and must be between 0 and 1, not {v}"),
        ));
    }
    Ok(v)
}

fn faults(f: &FaultsRepr, at: &dyn Fn(usize) -> String) -> Result<Faults, SimError> {
    Ok(Faults {
        seed: f.seed.unwrap_or(0),
        drop_rate: rate(&f.drop_rate, "drop_rate", at)?,
        corrupt_rate: rate(&f.corrupt_rate, "corrupt_rate", at)?,
        deliver_corrupted: f.deliver_corrupted.unwrap_or(false),
        delay_ns: f.delay_ns.unwrap_or(0),
        jitter_ns: f.jitter_ns.unwrap_or(0),
        duplicate_rate: rate(&f.duplicate_rate, "duplicate_rate", at)?,
    })
}

fn event(e: &EventRepr, escs: usize, at: &dyn Fn(usize) -> String) -> Result<FaultEvent, SimError> {
    let ms = *e.at_ms.get_ref();
    if !ms.is_finite() || ms < 0.0 {
        return Err(invalid(
            at(e.at_ms.span().start),
            format!("`at_ms` must be a time in milliseconds from 0 on, not {ms}"),
        ));
    }
    let position = *e.position.get_ref();
    if position >= escs as u64 {
        return Err(invalid(
            at(e.position.span().start),
            format!("no SubDevice at position {position}: the network has {escs} with an ESC (positions 0..{escs}, passive terminals not counted)"),
        ));
    }
    let action = match e.action.get_ref().as_str() {
        "unplug" => EventAction::Unplug,
        "replug" => EventAction::Replug {
            power_cycled: e.power_cycled.as_ref().is_some_and(|p| *p.get_ref()),
        },
        "power_cycle" => EventAction::PowerCycle,
        other => {
            return Err(invalid(
                at(e.action.span().start),
                format!(
                    "unknown action \"{other}\"; use \"unplug\", \"replug\" or \"power_cycle\""
                ),
            ))
        }
    };
    if let (Some(p), false) = (
        &e.power_cycled,
        matches!(action, EventAction::Replug { .. }),
    ) {
        return Err(invalid(
            at(p.span().start),
            "`power_cycled` only applies to action = \"replug\"; remove it".into(),
        ));
    }
    Ok(FaultEvent {
        at_ns: (ms * 1e6) as u64,
        action,
        position: position as usize,
    })
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
