//! `ecat pdos` and `ecat cstruct`: the PDO assignment and mapping of SubDevices, read over CoE
//! when they have it (their current configuration) and from the SII otherwise, printed with
//! names (IgH: `ethercat pdos`), or as the C arrays IgH's `ethercat cstruct` prints for
//! `ecrt_slave_config_pdos()`.

use super::{open_and_scan, CmdResult};
use crate::select::Select;
use crate::BusArgs;
use ecat::config::{Direction, SubDeviceConfig};
use ecat::{pdo_coe, MainDevice, SubDevice};
use std::fmt::Write;

/// Options of `ecat pdos` and `ecat cstruct`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
}

/// Name of a PDO or entry from the SII, if the SII describes it.
pub(crate) fn pdo_name(s: &SubDevice, pdo: u16) -> String {
    s.rx_pdos
        .iter()
        .chain(&s.tx_pdos)
        .find(|p| p.index == pdo)
        .map(|p| p.name.clone())
        .unwrap_or_default()
}

/// The SII's description of entry `index:sub` of PDO `pdo`, if the SII has one.
pub(crate) fn sii_entry(
    s: &SubDevice,
    pdo: u16,
    index: u16,
    sub: u8,
) -> Option<&ecat::subdevice::PdoEntry> {
    s.rx_pdos
        .iter()
        .chain(&s.tx_pdos)
        .filter(|p| p.index == pdo)
        .flat_map(|p| &p.entries)
        .find(|e| e.index == index && e.subindex == sub)
}

/// Name of a PDO entry from the SII, if the SII describes it.
pub(crate) fn entry_name(s: &SubDevice, pdo: u16, index: u16, sub: u8) -> String {
    sii_entry(s, pdo, index, sub)
        .map(|e| e.name.clone())
        .unwrap_or_default()
}

/// The current PDO configuration of each selected SubDevice (CoE, or the SII).
pub(crate) fn configs(
    md: &mut MainDevice,
    positions: &[usize],
) -> Result<Vec<(usize, SubDeviceConfig)>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for &p in positions {
        let (c, src) = pdo_coe::discover(md, p)?;
        if let pdo_coe::Source::SiiAfterCoeFailed(why) = src {
            eprintln!("note: {why}; showing the PDO description of its SII instead");
        }
        out.push((p, c));
    }
    Ok(out)
}

/// The SubDevices (named from the ESI library where it knows them), the chosen positions and
/// their PDO configurations: a running application's (`-m N`: what it configured), else read
/// from the bus.
type Chosen = (Vec<SubDevice>, Vec<usize>, Vec<(usize, SubDeviceConfig)>);

fn chosen(a: &Args) -> Result<Chosen, Box<dyn std::error::Error>> {
    let (mut subs, positions, cs) = match a.bus.remote()? {
        Some(mut c) => {
            let subs = c.subdevices()?;
            let positions = a.select.resolve(&subs)?;
            let all = c.pdos()?;
            let cs = positions
                .iter()
                .map(|&p| (p, all.get(p).cloned().unwrap_or_default()))
                .collect();
            (subs, positions, cs)
        }
        None => {
            let mut md = open_and_scan(&a.bus)?;
            let positions = a.select.resolve(md.subdevices())?;
            let cs = configs(&mut md, &positions)?;
            (md.subdevices().to_vec(), positions, cs)
        }
    };
    if let Some(lib) = crate::esi_fill::library(&a.bus.esi_dir) {
        for &p in &positions {
            if let Some(d) = crate::esi_fill::lookup(&lib, &subs[p]) {
                crate::esi_fill::fill(&mut subs[p], &d);
            }
        }
    }
    Ok((subs, positions, cs))
}

/// Run `ecat pdos`.
pub fn pdos(a: Args) -> CmdResult {
    let (subs, positions, cs) = chosen(&a)?;
    for (p, c) in cs {
        let s = &subs[p];
        if positions.len() > 1 {
            println!("=== SubDevice {p} ({}) ===", s.name);
        }
        for (n, sm) in s.sync_managers.iter().enumerate() {
            println!(
                "SM{n}: PhysAddr 0x{:04x}, DefaultSize {:4}, ControlRegister 0x{:02x}, Enable {}",
                sm.start, sm.length, sm.control, sm.enable
            );
            for sync in c.sync.iter().filter(|x| x.index as usize == n) {
                let kind = match sync.direction {
                    Direction::Output => "RxPDO",
                    Direction::Input => "TxPDO",
                };
                for pdo in &sync.pdos {
                    println!(
                        "  {kind} 0x{:04x} \"{}\"",
                        pdo.index,
                        pdo_name(s, pdo.index)
                    );
                    for e in &pdo.entries {
                        println!(
                            "    PDO entry 0x{:04x}:{:02x}, {:2} bit, \"{}\"",
                            e.index,
                            e.subindex,
                            e.bits,
                            entry_name(s, pdo.index, e.index, e.subindex)
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// Run `ecat cstruct`.
pub fn cstruct(a: Args) -> CmdResult {
    let (subs, _, cs) = chosen(&a)?;
    for (p, c) in cs {
        print!("{}", c_arrays(&subs[p], &c));
    }
    Ok(())
}

/// The C arrays for one SubDevice, in IgH's layout.
pub fn c_arrays(s: &SubDevice, c: &SubDeviceConfig) -> String {
    let p = s.position;
    let mut o = String::new();
    let _ = writeln!(o, "/* Master 0, Slave {p}, \"{}\"", s.order);
    let _ = writeln!(o, " * Vendor ID:       0x{:08x}", s.identity.vendor_id);
    let _ = writeln!(o, " * Product code:    0x{:08x}", s.identity.product_code);
    let _ = writeln!(o, " * Revision number: 0x{:08x}", s.identity.revision);
    let _ = writeln!(o, " */\n");
    let pdos: Vec<_> = c.sync.iter().flat_map(|x| &x.pdos).collect();
    let mut entry_offsets = Vec::new();
    if pdos.iter().any(|x| !x.entries.is_empty()) {
        let _ = writeln!(o, "ec_pdo_entry_info_t slave_{p}_pdo_entries[] = {{");
        let mut n = 0;
        for pdo in &pdos {
            entry_offsets.push(n);
            for e in &pdo.entries {
                let _ = writeln!(
                    o,
                    "    {{0x{:04x}, 0x{:02x}, {}}}, /* {} */",
                    e.index,
                    e.subindex,
                    e.bits,
                    entry_name(s, pdo.index, e.index, e.subindex)
                );
                n += 1;
            }
        }
        let _ = writeln!(o, "}};\n");
    } else {
        entry_offsets = vec![0; pdos.len()];
    }
    if !pdos.is_empty() {
        let _ = writeln!(o, "ec_pdo_info_t slave_{p}_pdos[] = {{");
        for (pdo, off) in pdos.iter().zip(&entry_offsets) {
            let entries = if pdo.entries.is_empty() {
                "NULL".to_string()
            } else {
                format!("slave_{p}_pdo_entries + {off}")
            };
            let _ = writeln!(
                o,
                "    {{0x{:04x}, {}, {entries}}}, /* {} */",
                pdo.index,
                pdo.entries.len(),
                pdo_name(s, pdo.index)
            );
        }
        let _ = writeln!(o, "}};\n");
    }
    let _ = writeln!(o, "ec_sync_info_t slave_{p}_syncs[] = {{");
    let mut pdo_off = 0;
    for (n, sm) in s.sync_managers.iter().enumerate() {
        let dir = if sm.control & 0x0C == 0x04 {
            "EC_DIR_OUTPUT"
        } else {
            "EC_DIR_INPUT"
        };
        let wd = if sm.control & 0x40 != 0 {
            "EC_WD_ENABLE"
        } else {
            "EC_WD_DISABLE"
        };
        let sync = c.sync.iter().find(|x| x.index as usize == n);
        let count = sync.map(|x| x.pdos.len()).unwrap_or(0);
        let list = if count == 0 {
            "NULL".to_string()
        } else {
            format!("slave_{p}_pdos + {pdo_off}")
        };
        pdo_off += count;
        let _ = writeln!(o, "    {{{n}, {dir}, {count}, {list}, {wd}}},");
    }
    let _ = writeln!(o, "    {{0xff}}\n}};\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat::config::{EntryConfig, PdoConfig, SyncConfig};
    use ecat::subdevice::SiiSyncManager;

    #[test]
    fn c_arrays_shape() {
        let s = SubDevice {
            order: "EL2008".into(),
            sync_managers: vec![SiiSyncManager {
                start: 0x0F00,
                length: 1,
                control: 0x44,
                enable: 1,
                kind: 3,
            }],
            ..Default::default()
        };
        let c = SubDeviceConfig {
            sync: vec![SyncConfig {
                index: 0,
                direction: Direction::Output,
                pdos: vec![PdoConfig {
                    index: 0x1600,
                    entries: vec![EntryConfig {
                        index: 0x7000,
                        subindex: 1,
                        bits: 1,
                    }],
                }],
                domain: 0,
            }],
        };
        let t = c_arrays(&s, &c);
        assert!(t.contains("{0x7000, 0x01, 1}, /*"), "{t}");
        assert!(t.contains("{0x1600, 1, slave_0_pdo_entries + 0},"), "{t}");
        assert!(
            t.contains("{0, EC_DIR_OUTPUT, 1, slave_0_pdos + 0, EC_WD_ENABLE},"),
            "{t}"
        );
        assert!(t.trim_end().ends_with("{0xff}\n};"), "{t}");
    }
}
