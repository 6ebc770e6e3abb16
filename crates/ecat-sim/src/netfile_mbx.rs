//! Network-file keys of the mailbox protocol servers (`crate::mbx`), per `[[subdevice]]`:
//!
//! ```toml
//! [[subdevice]]
//! model = "ECAT-SERVO-402"
//! foe_files = { "firmware.bin" = "files/fw.bin", "config.txt" = "files/cfg.txt" }
//! foe_password = 0x12345678   # FoE requests must carry it (default: any password)
//! foe_busy = 2                # BUSY replies before the first data packet of each write
//! ```
//!
//! File paths are relative to the network file. A key on a SubDevice whose SII does not
//! announce FoE is an error naming the entry.

use crate::error::SimError;
use crate::network::Node;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// The FoE keys of one entry.
pub(crate) struct FoeKeys<'a> {
    pub files: Option<&'a Spanned<BTreeMap<String, String>>>,
    pub password: Option<&'a Spanned<u32>>,
    pub busy: Option<&'a Spanned<u32>>,
}

impl FoeKeys<'_> {
    fn first_span(&self) -> Option<usize> {
        [
            self.files.map(|v| v.span().start),
            self.password.map(|v| v.span().start),
            self.busy.map(|v| v.span().start),
        ]
        .into_iter()
        .flatten()
        .next()
    }
}

/// Apply the FoE keys to `node`'s FoE server.
pub(crate) fn apply(
    node: &mut Node,
    keys: &FoeKeys<'_>,
    base_dir: &Path,
    at: &dyn Fn(usize) -> String,
) -> Result<(), SimError> {
    let Some(first) = keys.first_span() else {
        return Ok(());
    };
    let Some(foe) = node.esc.as_mut().and_then(|e| e.foe_mut()) else {
        return Err(SimError::Invalid {
            location: at(first),
            message: "this SubDevice does not serve FoE (its SII mailbox protocols word 0x1C has no FoE bit); remove the foe_* keys or pick a device with FoE, e.g. ECAT-SERVO-402".into(),
        });
    };
    if let Some(p) = keys.password {
        foe.password = Some(*p.get_ref());
    }
    if let Some(b) = keys.busy {
        foe.busy_replies = *b.get_ref();
    }
    if let Some(files) = keys.files {
        for (name, path) in files.get_ref() {
            let full = base_dir.join(path);
            let data = std::fs::read(&full).map_err(|e| SimError::Invalid {
                location: at(files.span().start),
                message: format!(
                    "cannot read FoE file \"{name}\" from {}: {e}; fix the path (relative to the network file)",
                    full.display()
                ),
            })?;
            foe.files.insert(name.clone(), data);
        }
    }
    Ok(())
}
