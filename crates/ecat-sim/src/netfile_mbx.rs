//! Network-file keys of the mailbox protocol servers (`crate::mbx`), per `[[subdevice]]`:
//!
//! ```toml
//! [[subdevice]]
//! model = "ECAT-SERVO-402"
//! foe_files = { "firmware.bin" = "files/fw.bin", "config.txt" = "files/cfg.txt" }
//! foe_password = 0x12345678   # FoE requests must carry it (default: any password)
//! foe_busy = 2                # BUSY replies before the first data packet of each write
//!
//! [[subdevice]]
//! model = "ECAT-SOE-DRIVE"
//! eoe_ip = "192.168.9.3/24"   # the EoE endpoint's address before any set-IP request
//! ```
//!
//! File paths are relative to the network file. A key on a SubDevice whose SII does not
//! announce the protocol is an error naming the entry.

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

/// Apply `eoe_ip = "a.b.c.d[/prefix]"` to `node`'s EoE endpoint.
pub(crate) fn apply_eoe_ip(
    node: &mut Node,
    ip: Option<&Spanned<String>>,
    at: &dyn Fn(usize) -> String,
) -> Result<(), SimError> {
    let Some(ip) = ip else {
        return Ok(());
    };
    let here = at(ip.span().start);
    let text = ip.get_ref();
    let (addr, prefix) = match text.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (text.as_str(), None),
    };
    let addr: std::net::Ipv4Addr = addr.trim().parse().map_err(|_| SimError::Invalid {
        location: here.clone(),
        message: format!(
            "`eoe_ip = \"{text}\"` is not an IPv4 address; write it like \"192.168.9.3/24\""
        ),
    })?;
    let prefix = match prefix.map(|p| p.trim().parse::<u8>()) {
        None => None,
        Some(Ok(p)) if p <= 32 => Some(p),
        Some(_) => {
            return Err(SimError::Invalid {
                location: here,
                message: format!("the prefix length in `eoe_ip = \"{text}\"` must be 0..32"),
            })
        }
    };
    let Some(eoe) = node.esc.as_mut().and_then(|e| e.eoe_mut()) else {
        return Err(SimError::Invalid {
            location: here,
            message: "this SubDevice does not serve EoE (its SII mailbox protocols word 0x1C has no EoE bit); remove `eoe_ip` or pick a device with EoE, e.g. ECAT-SOE-DRIVE".into(),
        });
    };
    eoe.params.ip = Some(addr);
    if let Some(p) = prefix {
        let mask = u32::MAX.checked_shl(32 - p as u32).unwrap_or(0);
        eoe.params.subnet = Some(std::net::Ipv4Addr::from(mask));
    }
    Ok(())
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
