//! Which ESC an ESI-built device sits on.
//!
//! Beckhoff's ESI files name no ESC (`Info/EscType` is absent from all of them), so the chip
//! is chosen from what the device needs, in this order:
//! 1. `chip = "..."` in the network file (the caller applies it);
//! 2. the real device, when `esc::chips::for_device` knows it from a capture (EK1100,
//!    EL2828, EL2889 and the 2007 terminals), so an ESI-built device answers like the real
//!    one;
//! 3. the ESI's `EscType`, when it names a chip profile we have;
//! 4. an ET1100 for devices with an MII (Ethernet) port or more than two ports, more than 3
//!    FMMUs or 4 SyncManagers, or SyncManagers that do not fit the ET1200's 1 KiB of process
//!    RAM (mailboxes once, process data three times); otherwise an ET1200 (E-Bus terminals),
//!    with the DC system-time unit always present when the ESI lists DC operating modes
//!    (`EscChip::et1200_dc`), as on the EL2889.
//!
//! The port descriptor always follows the ports the SII names (`esc_from_sii_on`).

use crate::esc::chips;
use crate::esc::EscChip;
use ecat_config::esi::{PortKind, SmKind};
use ecat_config::Device;

/// End of the ET1200's process RAM (0x1000 + 1 KiB).
const ET1200_RAM_END: u32 = 0x1000 + 1024;

/// Highest address (exclusive) the device's SyncManagers use by default.
fn ram_end(dev: &Device) -> u32 {
    dev.sms
        .iter()
        .enumerate()
        .map(|(n, s)| {
            let len = match s.kind {
                SmKind::MBoxOut | SmKind::MBoxIn => s.default_size.unwrap_or(0) as u32,
                _ => {
                    let bytes = dev
                        .default_sm_bytes(n as u8)
                        .unwrap_or(0)
                        .max(s.default_size.unwrap_or(0));
                    3 * bytes as u32
                }
            };
            s.start as u32 + len
        })
        .max()
        .unwrap_or(0)
}

/// True if the device needs more than an ET1200 offers.
fn needs_et1100(dev: &Device) -> bool {
    let ports = dev
        .esc
        .ports
        .iter()
        .filter(|p| !matches!(p, PortKind::Unused))
        .count();
    let mii = dev.esc.ports.iter().any(|p| matches!(p, PortKind::Mii));
    mii || ports > 2 || dev.fmmus.len() > 3 || dev.sms.len() > 4 || ram_end(dev) > ET1200_RAM_END
}

/// The chip profile for `dev` (steps 2–4 of the module note).
pub fn choose(dev: &Device) -> EscChip {
    if let Some(c) = dev
        .product_code
        .and_then(|p| chips::for_device(dev.vendor_id, p, dev.revision))
    {
        return c;
    }
    if let Some(c) = dev.esc.esc_type.as_deref().and_then(by_esc_type) {
        return c;
    }
    if needs_et1100(dev) {
        EscChip::et1100(0)
    } else if dev.dc.is_empty() {
        EscChip::et1200()
    } else {
        EscChip::et1200_dc()
    }
}

/// A chip profile from an ESI `EscType` such as "ET1100" or "LAN9252" (spaces and case
/// ignored).
fn by_esc_type(t: &str) -> Option<EscChip> {
    let t: String = t
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_uppercase();
    chips::by_name(&t).or_else(|| {
        ["ET1100", "ET1200", "ET1810", "ET1815", "LAN9252", "AX58100"]
            .into_iter()
            .find(|n| t.contains(n))
            .and_then(chips::by_name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esc_type_names() {
        assert_eq!(by_esc_type("et1100").unwrap().esc_type, 0x11);
        assert_eq!(by_esc_type("LAN 9252").unwrap().esc_type, 0xC0);
        assert_eq!(by_esc_type("Beckhoff ET1200-0000").unwrap().esc_type, 0x12);
        assert!(by_esc_type("XYZ").is_none());
    }
}
