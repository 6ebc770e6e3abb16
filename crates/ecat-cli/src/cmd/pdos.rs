//! `ecat pdos` and `ecat cstruct`: the PDO assignment and mapping of SubDevices, read over CoE
//! when they have it (their current configuration) and from the SII otherwise, printed with
//! names (IgH: `ethercat pdos`), or as the C arrays IgH's `ethercat cstruct` prints for
//! `ecrt_slave_config_pdos()`. The C arrays have IgH's exact shape (an entry for every sync
//! manager the SII describes, mailbox ones included, PDOs in sync manager order, comments
//! only where a name is known); as `ethercat`, `pdos` also uses IgH's header line.

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

/// Options of `ecat pdos`.
#[derive(clap::Args, Debug)]
pub struct PdosArgs {
    #[command(flatten)]
    common: Args,
    /// PDOs only, without their entries (IgH: -q)
    #[arg(short, long)]
    quiet: bool,
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
pub(crate) type Chosen = (Vec<SubDevice>, Vec<usize>, Vec<(usize, SubDeviceConfig)>);

pub(crate) fn chosen(a: &Args) -> Result<Chosen, Box<dyn std::error::Error>> {
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
pub fn pdos(a: PdosArgs) -> CmdResult {
    let (subs, positions, cs) = chosen(&a.common)?;
    let igh = crate::igh::active();
    for (p, c) in cs {
        let s = &subs[p];
        if positions.len() > 1 {
            match igh {
                Some(d) if !s.sync_managers.is_empty() => {
                    println!("=== Master {}, Slave {p} ===", d.master)
                }
                Some(_) => {}
                None => println!("=== SubDevice {p} ({}) ===", s.name),
            }
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
                    if a.quiet {
                        continue;
                    }
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
    let master = crate::igh::active().map_or(0, |d| d.master);
    for (p, c) in cs {
        print!("{}", c_arrays(&subs[p], &c, master));
    }
    Ok(())
}

/// ` /* name */` after an array element, nothing for an empty name (as IgH).
fn comment(name: &str) -> String {
    if name.is_empty() {
        String::new()
    } else {
        format!(" /* {name} */")
    }
}

/// The C arrays for one SubDevice of master `master`, in IgH's layout: one sync entry per
/// SII sync manager (direction from control bit 2, watchdog from bit 6), the PDOs and
/// entries in sync manager order; nothing for a SubDevice without sync managers.
pub fn c_arrays(s: &SubDevice, c: &SubDeviceConfig, master: u32) -> String {
    let p = s.position;
    let mut o = String::new();
    if s.sync_managers.is_empty() {
        return o;
    }
    let (mut syncs, mut pdos, mut entries) = (String::new(), String::new(), String::new());
    let (mut pdo_pos, mut entry_pos) = (0, 0);
    for (n, sm) in s.sync_managers.iter().enumerate() {
        let dir = if sm.control & 0x04 != 0 {
            "EC_DIR_OUTPUT"
        } else {
            "EC_DIR_INPUT"
        };
        let wd = if sm.control & 0x40 != 0 {
            "EC_WD_ENABLE"
        } else {
            "EC_WD_DISABLE"
        };
        let list: Vec<_> = c
            .sync
            .iter()
            .filter(|x| x.index as usize == n)
            .flat_map(|x| &x.pdos)
            .collect();
        let at = if list.is_empty() {
            "NULL".to_string()
        } else {
            format!("slave_{p}_pdos + {pdo_pos}")
        };
        let _ = writeln!(syncs, "    {{{n}, {dir}, {}, {at}, {wd}}},", list.len());
        pdo_pos += list.len();
        for pdo in list {
            let at = if pdo.entries.is_empty() {
                "NULL".to_string()
            } else {
                format!("slave_{p}_pdo_entries + {entry_pos}")
            };
            let _ = writeln!(
                pdos,
                "    {{0x{:04x}, {}, {at}}},{}",
                pdo.index,
                pdo.entries.len(),
                comment(&pdo_name(s, pdo.index))
            );
            entry_pos += pdo.entries.len();
            for e in &pdo.entries {
                let _ = writeln!(
                    entries,
                    "    {{0x{:04x}, 0x{:02x}, {}}},{}",
                    e.index,
                    e.subindex,
                    e.bits,
                    comment(&entry_name(s, pdo.index, e.index, e.subindex))
                );
            }
        }
    }
    let _ = write!(o, "/* Master {master}, Slave {p}");
    if !s.order.is_empty() {
        let _ = write!(o, ", \"{}\"", s.order);
    }
    let _ = writeln!(o);
    let _ = writeln!(o, " * Vendor ID:       0x{:08x}", s.identity.vendor_id);
    let _ = writeln!(o, " * Product code:    0x{:08x}", s.identity.product_code);
    let _ = writeln!(o, " * Revision number: 0x{:08x}", s.identity.revision);
    let _ = writeln!(o, " */\n");
    if entry_pos > 0 {
        let _ = writeln!(
            o,
            "ec_pdo_entry_info_t slave_{p}_pdo_entries[] = {{\n{entries}}};\n"
        );
    }
    if pdo_pos > 0 {
        let _ = writeln!(o, "ec_pdo_info_t slave_{p}_pdos[] = {{\n{pdos}}};\n");
    }
    let _ = writeln!(
        o,
        "ec_sync_info_t slave_{p}_syncs[] = {{\n{syncs}    {{0xff}}\n}};\n"
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat::config::{EntryConfig, PdoConfig, SyncConfig};
    use ecat::subdevice::SiiSyncManager;

    fn sm(start: u16, control: u8, kind: u8) -> SiiSyncManager {
        SiiSyncManager {
            start,
            length: 0,
            control,
            enable: 1,
            kind,
        }
    }

    fn sync(index: u8, direction: Direction, pdo: u16, entry: u16) -> SyncConfig {
        SyncConfig {
            index,
            direction,
            pdos: vec![PdoConfig {
                index: pdo,
                entries: vec![
                    EntryConfig {
                        index: entry,
                        subindex: 1,
                        bits: 16,
                    },
                    EntryConfig {
                        index: 0,
                        subindex: 0,
                        bits: 16,
                    },
                ],
            }],
            domain: 0,
        }
    }

    #[test]
    fn c_arrays_have_igh_shape() {
        let mut s = SubDevice {
            position: 3,
            order: "EL3102".into(),
            sync_managers: vec![
                sm(0x1000, 0x26, 1),
                sm(0x1080, 0x22, 2),
                sm(0x1100, 0x24, 3),
                sm(0x1180, 0x20, 4),
            ],
            ..Default::default()
        };
        s.identity.vendor_id = 2;
        s.identity.product_code = 0x0c1e_3052;
        // Listed SM3 first: the arrays still follow the sync manager order.
        let c = SubDeviceConfig {
            sync: vec![
                sync(3, Direction::Input, 0x1a00, 0x6000),
                sync(2, Direction::Output, 0x1600, 0x7000),
            ],
        };
        let want = "/* Master 1, Slave 3, \"EL3102\"
 * Vendor ID:       0x00000002
 * Product code:    0x0c1e3052
 * Revision number: 0x00000000
 */

ec_pdo_entry_info_t slave_3_pdo_entries[] = {
    {0x7000, 0x01, 16},
    {0x0000, 0x00, 16},
    {0x6000, 0x01, 16},
    {0x0000, 0x00, 16},
};

ec_pdo_info_t slave_3_pdos[] = {
    {0x1600, 2, slave_3_pdo_entries + 0},
    {0x1a00, 2, slave_3_pdo_entries + 2},
};

ec_sync_info_t slave_3_syncs[] = {
    {0, EC_DIR_OUTPUT, 0, NULL, EC_WD_DISABLE},
    {1, EC_DIR_INPUT, 0, NULL, EC_WD_DISABLE},
    {2, EC_DIR_OUTPUT, 1, slave_3_pdos + 0, EC_WD_DISABLE},
    {3, EC_DIR_INPUT, 1, slave_3_pdos + 1, EC_WD_DISABLE},
    {0xff}
};

";
        assert_eq!(c_arrays(&s, &c, 1), want);
        s.sync_managers.clear();
        assert_eq!(c_arrays(&s, &c, 1), "");
    }

    #[test]
    fn names_become_comments_and_watchdogs_show() {
        let mut s = SubDevice {
            sync_managers: vec![sm(0x0F00, 0x44, 3)],
            ..Default::default()
        };
        s.rx_pdos.push(ecat::subdevice::Pdo {
            index: 0x1600,
            name: "Channel 1".into(),
            sync_manager: 0,
            entries: vec![ecat::subdevice::PdoEntry {
                index: 0x7000,
                subindex: 1,
                bits: 16,
                name: "Output".into(),
                ..Default::default()
            }],
        });
        let c = SubDeviceConfig {
            sync: vec![sync(0, Direction::Output, 0x1600, 0x7000)],
        };
        let t = c_arrays(&s, &c, 0);
        assert!(t.starts_with("/* Master 0, Slave 0\n"), "{t}");
        assert!(t.contains("    {0x7000, 0x01, 16}, /* Output */\n"), "{t}");
        assert!(
            t.contains("    {0x1600, 2, slave_0_pdo_entries + 0}, /* Channel 1 */\n"),
            "{t}"
        );
        assert!(
            t.contains("    {0, EC_DIR_OUTPUT, 1, slave_0_pdos + 0, EC_WD_ENABLE},\n"),
            "{t}"
        );
    }
}
