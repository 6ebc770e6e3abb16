//! Names from ESI files where a SubDevice does not give them itself.
//!
//! Many SubDevices carry a thin SII (no strings, no PDO category) or no SDO Information, so
//! the tool would show `0x00000002:0x0bb83052` and nameless PDO entries. When ESI
//! directories are known (`--esi-dir`, `ECAT_ESI_PATH`), each SubDevice is looked up by
//! vendor, product and revision (falling back to the highest revision of that product) and
//! what its SII lacks is filled in: device name, order number and group, the default PDOs
//! with their entries, and the names of PDOs and entries that the SII lists without one.
//! Nothing the SubDevice reports itself is overwritten. Without ESI directories nothing is
//! looked up, so commands cost nothing extra.

use ecat::subdevice::{Pdo, PdoEntry};
use ecat::SubDevice;
use ecat_config::esi::PdoDir;
use ecat_config::{DeviceLibrary, DeviceRef};
use std::path::PathBuf;

/// The ESI library of a command: `--esi-dir` directories after those of `ECAT_ESI_PATH`;
/// `None` when there are none.
pub fn library(dirs: &[PathBuf]) -> Option<DeviceLibrary> {
    let lib = DeviceLibrary::from_env_and(dirs.iter().cloned());
    (!lib.dirs().is_empty()).then_some(lib)
}

/// The ESI description of `s`: its exact revision, else the highest revision of its product.
pub fn lookup(lib: &DeviceLibrary, s: &SubDevice) -> Option<DeviceRef> {
    let id = &s.identity;
    lib.find_product(Some(id.vendor_id), id.product_code, Some(id.revision))
        .or_else(|_| lib.find_product(Some(id.vendor_id), id.product_code, None))
        .ok()
}

/// True if `name` is the fallback the scan uses when the SII has no name.
fn is_fallback_name(s: &SubDevice) -> bool {
    s.name.is_empty()
        || s.name
            == format!(
                "0x{:08X}:0x{:08X}",
                s.identity.vendor_id, s.identity.product_code
            )
}

fn esi_pdo(p: &ecat_config::esi::Pdo) -> Pdo {
    Pdo {
        index: p.index,
        sync_manager: p.sm.unwrap_or(0xFF),
        name: p.name.clone(),
        entries: p
            .entries
            .iter()
            .map(|e| PdoEntry {
                index: e.index,
                subindex: e.subindex,
                bits: e.bit_len.min(255) as u8,
                data_type: e.data_type_code().min(255) as u8,
                name: e.name.clone(),
            })
            .collect(),
    }
}

/// Fill what `s` lacks from its ESI description `d`; returns true if anything was added.
pub fn fill(s: &mut SubDevice, d: &DeviceRef) -> bool {
    let mut changed = false;
    if is_fallback_name(s) {
        s.name = d.name(1033).to_string();
        changed = true;
    }
    if s.order.is_empty() {
        s.order = d.type_name.clone();
        changed = true;
    }
    if s.group.is_empty() && !d.group_type.is_empty() {
        s.group = d.group_type.clone();
        changed = true;
    }
    for (dir, list) in [(PdoDir::Rx, &mut s.rx_pdos), (PdoDir::Tx, &mut s.tx_pdos)] {
        let of_dir = || d.pdos.iter().filter(move |p| p.dir == dir);
        if list.is_empty() {
            list.extend(of_dir().filter(|p| p.assigned_by_default()).map(esi_pdo));
            changed |= !list.is_empty();
            continue;
        }
        for pdo in list.iter_mut() {
            let Some(ep) = of_dir().find(|p| p.index == pdo.index) else {
                continue;
            };
            if pdo.name.is_empty() && !ep.name.is_empty() {
                pdo.name = ep.name.clone();
                changed = true;
            }
            for e in pdo.entries.iter_mut().filter(|e| e.name.is_empty()) {
                if let Some(n) = ep
                    .entries
                    .iter()
                    .find(|x| x.index == e.index && x.subindex == e.subindex)
                    .filter(|x| !x.name.is_empty())
                {
                    e.name = n.name.clone();
                    changed = true;
                }
            }
        }
    }
    changed
}

/// Fill every SubDevice of `subs` that the library describes; returns the positions filled.
pub fn fill_all(subs: &mut [SubDevice], lib: &DeviceLibrary) -> Vec<usize> {
    let mut filled = Vec::new();
    for (i, s) in subs.iter_mut().enumerate() {
        if let Some(d) = lookup(lib, s) {
            if fill(s, &d) {
                filled.push(i);
            }
        }
    }
    filled
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat_config::EsiFile;
    use std::sync::Arc;

    const ESI: &str = r##"<EtherCATInfo><Vendor><Id>2</Id><Name>Beckhoff</Name></Vendor>
<Descriptions><Groups><Group><Type>DigOut</Type><Name>Digital outputs</Name></Group></Groups>
<Devices><Device Physics="YY"><Type ProductCode="#x07d43052" RevisionNo="#x00100000">EL2004</Type>
<Name LcId="1033">EL2004 4Ch. Dig. Output 24V, 0.5A</Name><GroupType>DigOut</GroupType>
<Sm StartAddress="#x0f00" ControlByte="#x44" Enable="1">Outputs</Sm>
<RxPdo Sm="0" Fixed="1" Mandatory="1"><Index>#x1600</Index><Name>Channel 1</Name>
<Entry><Index>#x7000</Index><SubIndex>1</SubIndex><BitLen>1</BitLen><Name>Output</Name><DataType>BOOL</DataType></Entry>
</RxPdo></Device></Devices></Descriptions></EtherCATInfo>"##;

    fn device() -> DeviceRef {
        DeviceRef {
            file: Arc::new(EsiFile::parse_str(ESI, "t.xml").unwrap()),
            index: 0,
        }
    }

    #[test]
    fn a_bare_sii_gets_names_and_pdos_from_the_esi() {
        let mut s = SubDevice::default();
        s.identity.vendor_id = 2;
        s.identity.product_code = 0x07d4_3052;
        s.name = "0x00000002:0x07D43052".into();
        assert!(fill(&mut s, &device()));
        assert_eq!(s.name, "EL2004 4Ch. Dig. Output 24V, 0.5A");
        assert_eq!((s.order.as_str(), s.group.as_str()), ("EL2004", "DigOut"));
        assert_eq!(s.rx_pdos.len(), 1);
        assert_eq!(s.rx_pdos[0].entries[0].name, "Output");
        assert_eq!(s.rx_pdos[0].entries[0].data_type, 1);
        assert!(!fill(&mut s, &device()), "nothing left to fill");
    }

    #[test]
    fn what_the_subdevice_says_is_kept() {
        let mut s = SubDevice {
            name: "My own name".into(),
            order: "X".into(),
            rx_pdos: vec![Pdo {
                index: 0x1600,
                sync_manager: 0,
                name: String::new(),
                entries: vec![PdoEntry {
                    index: 0x7000,
                    subindex: 1,
                    bits: 1,
                    data_type: 1,
                    name: String::new(),
                }],
            }],
            ..Default::default()
        };
        assert!(fill(&mut s, &device()));
        assert_eq!((s.name.as_str(), s.order.as_str()), ("My own name", "X"));
        assert_eq!(s.rx_pdos[0].name, "Channel 1");
        assert_eq!(s.rx_pdos[0].entries[0].name, "Output");
    }
}
