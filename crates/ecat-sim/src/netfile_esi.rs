//! Network-file entries built from ESI device descriptions (see `devices::esi`).
//!
//! ```toml
//! esi_dirs = ["../esi"]      # ESI directories, relative to this file; searched after
//!                            # ECAT_ESI_PATH
//! sii_lcid = 1031            # language of the names in the SII images (default 1033
//!                            # English; Beckhoff's EEPROMs hold German, 1031)
//!
//! [[subdevice]]
//! esi = "Beckhoff_EL2xxx.xml"  # this file (relative to the network file, else by name in
//! type = "EL2032"              # the ESI directories), device by type ...
//!
//! [[subdevice]]
//! esi = "Beckhoff_EL2xxx.xml"
//! product = 0x07f03052         # ... or by product code
//! revision = 0x00100000        # optional: default the highest revision
//!
//! [[subdevice]]
//! type = "EL1004"              # no file (or esi = true): search the ESI directories
//! chip = "ET1100"              # optional: another ESC than the one chosen for the device
//! ```
//!
//! A file describing a single device needs neither `type` nor `product`. The entry's
//! errors name `file:line` of the key at fault: a type the file lacks lists the types it
//! has; a device no ESI describes lists the directories searched.

use crate::devices::esi::{EsiDevices, Template, Wanted};
use crate::error::SimError;
use crate::network::Node;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toml::Spanned;

/// The ESI keys of one `[[subdevice]]` entry.
pub(crate) struct EsiKeys<'a> {
    /// `esi = "file"` or `esi = true`.
    pub esi: Option<&'a Spanned<toml::Value>>,
    /// `type = "EL2032"`.
    pub type_name: Option<&'a Spanned<String>>,
    /// `product = 0x...`.
    pub product: Option<&'a Spanned<i64>>,
    /// `revision = 0x...`.
    pub revision: Option<&'a Spanned<i64>>,
}

impl EsiKeys<'_> {
    /// True if the entry asks for an ESI-built device.
    pub fn any(&self) -> bool {
        self.esi.is_some() || self.type_name.is_some() || self.product.is_some()
    }

    /// Refuse ESI keys beside `model`/`sii` (`other`), and `revision` without them.
    pub fn check(
        &self,
        other: bool,
        here: &str,
        at: &dyn Fn(usize) -> String,
    ) -> Result<(), SimError> {
        if self.any() && other {
            return Err(invalid(
                here.to_string(),
                "a [[subdevice]] takes one of `model`, `sii` or `esi`/`type`/`product`; remove the others".into(),
            ));
        }
        match self.revision {
            Some(r) if !self.any() => Err(invalid(
                at(r.span().start),
                "`revision` selects an ESI device; add `type` or `product` (and `esi` for a file)"
                    .into(),
            )),
            _ => Ok(()),
        }
    }

    /// Where the entry's device is named (for errors).
    fn span(&self) -> usize {
        self.type_name
            .map(|t| t.span().start)
            .or(self.product.map(|p| p.span().start))
            .or(self.esi.map(|e| e.span().start))
            .unwrap_or(0)
    }
}

fn invalid(location: String, message: String) -> SimError {
    SimError::Invalid { location, message }
}

fn u32_key(v: &Spanned<i64>, key: &str, at: &dyn Fn(usize) -> String) -> Result<u32, SimError> {
    u32::try_from(*v.get_ref()).map_err(|_| {
        invalid(
            at(v.span().start),
            format!(
                "`{key}` is a 32-bit unsigned number such as 0x07f03052, not {}",
                v.get_ref()
            ),
        )
    })
}

/// The chip a `chip = "..."` key names, if the entry has one.
pub(crate) fn chip(
    key: Option<&Spanned<String>>,
    at: &dyn Fn(usize) -> String,
) -> Result<Option<crate::esc::EscChip>, SimError> {
    let Some(c) = key else { return Ok(None) };
    crate::esc::chips::by_name(c.get_ref())
        .map(Some)
        .ok_or_else(|| {
            invalid(
                at(c.span().start),
                format!(
                    "unknown chip \"{}\"; use one of {}",
                    c.get_ref(),
                    crate::esc::chips::CHIP_NAMES.join(", ")
                ),
            )
        })
}

/// The ESI directories of the network file (`esi_dirs`, relative to it).
pub(crate) fn dirs(esi_dirs: &[String], base_dir: &Path) -> Vec<PathBuf> {
    esi_dirs.iter().map(|d| base_dir.join(d)).collect()
}

/// The template an entry names.
pub(crate) fn template(
    keys: &EsiKeys<'_>,
    devices: &mut EsiDevices,
    base_dir: &Path,
    at: &dyn Fn(usize) -> String,
) -> Result<Arc<Template>, SimError> {
    let revision = keys
        .revision
        .map(|r| u32_key(r, "revision", at))
        .transpose()?;
    let wanted = match (keys.type_name, keys.product) {
        (Some(_), Some(p)) => {
            return Err(invalid(
                at(p.span().start),
                "give either `type` or `product`, not both".into(),
            ))
        }
        (Some(t), None) => Wanted::Type(t.get_ref().clone()),
        (None, Some(p)) => Wanted::Product(u32_key(p, "product", at)?),
        (None, None) => Wanted::Only,
    };
    let here = at(keys.span());
    let file = match keys.esi.map(|e| (e, e.get_ref())) {
        None | Some((_, toml::Value::Boolean(true))) => None,
        Some((_, toml::Value::String(s))) => Some(base_dir.join(s)),
        Some((e, _)) => {
            return Err(invalid(
                at(e.span().start),
                "`esi` is the name of an ESI file (\"Beckhoff_EL2xxx.xml\") or true (search the ESI directories)".into(),
            ))
        }
    };
    let found = match &file {
        Some(f) => devices.from_file(f, &wanted, revision),
        None => devices.from_library(&wanted, revision),
    };
    found.map_err(|m| invalid(here, m))
}

/// Build the node of an ESI entry.
pub(crate) fn node(
    t: &Template,
    serial: u32,
    alias: Option<u16>,
    chip: Option<crate::esc::EscChip>,
    name: Option<String>,
    location: &str,
) -> Result<Node, SimError> {
    if t.passive {
        if alias.is_some() || chip.is_some() {
            return Err(invalid(
                location.to_string(),
                format!(
                    "{} is a passive terminal without ESC and has no `alias` or `chip`; remove them",
                    t.order
                ),
            ));
        }
        return Ok(Node::new(
            None,
            name.unwrap_or_else(|| t.name.clone()),
            t.order.clone(),
        ));
    }
    let esc = t
        .build(serial, alias, chip)
        .map_err(|e| invalid(location.to_string(), format!("{}: {e}", t.order)))?;
    Ok(Node::new(
        Some(esc),
        name.unwrap_or_else(|| t.name.clone()),
        t.order.clone(),
    ))
}
