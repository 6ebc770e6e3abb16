//! The bus against the ENI: slave by slave, by position, the identity fields the ENI checks.
//! Every difference is collected and reported in one error, so a user sees the whole picture
//! (a swapped pair, a missing drive) at once.

use crate::error::{Error, Result};
use crate::subdevice::SubDevice;
use ecat_config::eni::{Eni, Slave};

fn ident(s: &Slave) -> String {
    let i = s.identity;
    format!(
        "\"{}\" vendor 0x{:08x} product 0x{:08x} revision 0x{:08x}",
        s.name, i.vendor, i.product, i.revision
    )
}

fn found(s: &SubDevice) -> String {
    let i = s.identity;
    format!(
        "\"{}\" vendor 0x{:08x} product 0x{:08x} revision 0x{:08x}",
        s.name, i.vendor_id, i.product_code, i.revision
    )
}

/// The differences between the scanned bus and the ENI, one line per position.
pub fn mismatches(eni: &Eni, subs: &[SubDevice]) -> Vec<String> {
    let mut out = Vec::new();
    let n = eni.slaves.len().max(subs.len());
    for p in 0..n {
        match (eni.slaves.get(p), subs.get(p)) {
            (Some(e), Some(s)) => {
                let (want, got, c) = (e.identity, s.identity, e.checks);
                let mut diff = Vec::new();
                if c.vendor && want.vendor != got.vendor_id {
                    diff.push("vendor");
                }
                if c.product && want.product != got.product_code {
                    diff.push("product");
                }
                if c.revision && want.revision != got.revision {
                    diff.push("revision");
                }
                if c.serial && want.serial != got.serial {
                    diff.push("serial");
                }
                if !diff.is_empty() {
                    out.push(format!(
                        "position {p}: the ENI expects {} but found {} ({} differ)",
                        ident(e),
                        found(s),
                        diff.join(", ")
                    ));
                }
            }
            (Some(e), None) => out.push(format!(
                "position {p}: the ENI expects {} but the bus ends after {} SubDevices",
                ident(e),
                subs.len()
            )),
            (None, Some(s)) => out.push(format!(
                "position {p}: found {} which the ENI does not list (it has {} slaves)",
                found(s),
                eni.slaves.len()
            )),
            (None, None) => {}
        }
    }
    out
}

/// Check the scanned bus against the ENI; the error lists every differing position.
pub fn check_bus(eni: &Eni, subs: &[SubDevice]) -> Result<()> {
    let m = mismatches(eni, subs);
    if m.is_empty() {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "the bus does not match the ENI {}: {}",
        eni.file_name(),
        m.join("; ")
    )))
}
