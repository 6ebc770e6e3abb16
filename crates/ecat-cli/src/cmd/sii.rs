//! `ecat sii read`: the SII EEPROM image of one SubDevice, as binary on stdout (IgH:
//! `ethercat sii_read`) or, with `-v`, as text category by category. `ecat sii build` makes
//! an image from an ESI file (see `sii_build`), `ecat sii write` writes one into a
//! SubDevice's EEPROM (IgH: `ethercat sii_write`, see `sii_write`).

use super::{CmdResult, Target};
use crate::select::Select;
use crate::BusArgs;
use ecat_wire::sii::{
    Categories, CategoryType, DcModes, FixedAreaRepr, FmmuUsage, GeneralRepr, Pdos, Strings,
    SyncManagers,
};
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};

/// `ecat sii ...` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Read the SII image of one SubDevice
    Read(ReadArgs),
    /// Build an SII image from an ESI file: ecat sii build --esi FILE --type EL2032 -o el2032.bin
    Build(super::sii_build::BuildArgs),
    /// Write an SII image into a SubDevice's EEPROM: ecat sii write -p 1 el2032.bin
    Write(super::sii_write::WriteArgs),
}

/// Options of `ecat sii read`.
#[derive(clap::Args, Debug)]
pub struct ReadArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Print the image as text, category by category, instead of binary
    #[arg(short, long)]
    verbose: bool,
}

/// Run `ecat sii ...`.
pub fn run(c: Command) -> CmdResult {
    match c {
        Command::Read(a) => read(a),
        Command::Build(a) => super::sii_build::run(a),
        Command::Write(a) => super::sii_write::run(a),
    }
}

fn read(a: ReadArgs) -> CmdResult {
    let md = Target::open(&a.bus)?;
    let pos = a.select.resolve_one(md.subdevices())?;
    let image = &md.subdevices()[pos].sii;
    if a.verbose {
        print!("{}", describe(image));
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    if out.is_terminal() {
        return Err(
            "the SII image is binary: redirect it to a file (> sii.bin) or use -v for text".into(),
        );
    }
    out.write_all(image)?;
    out.flush()?;
    Ok(())
}

fn hex_lines(o: &mut String, data: &[u8]) {
    for (n, chunk) in data.chunks(16).enumerate() {
        let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(o, "    {:04x}: {}", n * 16, hex.join(" "));
    }
}

/// The image as text: fixed area fields, then every category decoded where we know it.
pub fn describe(image: &[u8]) -> String {
    let mut o = String::new();
    let (fixed, crc) = match FixedAreaRepr::parse_any(image) {
        Ok(x) => x,
        Err(e) => {
            return format!(
                "SII image of {} bytes cannot be decoded: {e}\n",
                image.len()
            )
        }
    };
    let _ = writeln!(o, "Fixed area (words 0x00-0x3F):");
    let _ = writeln!(o, "  PDI control:        0x{:04x}", fixed.pdi_control);
    let _ = writeln!(o, "  PDI configuration:  0x{:04x}", fixed.pdi_config);
    let _ = writeln!(
        o,
        "  Sync impulse:       {} x 10 ns",
        fixed.sync_impulse_len
    );
    let _ = writeln!(o, "  Station alias:      {}", fixed.station_alias);
    let _ = writeln!(
        o,
        "  Checksum:           0x{:02x} ({})",
        crc.stored,
        if crc.ok() {
            "ok".to_string()
        } else {
            format!("WRONG, computed 0x{:02x}", crc.computed)
        }
    );
    let _ = writeln!(o, "  Vendor id:          0x{:08x}", fixed.vendor_id);
    let _ = writeln!(o, "  Product code:       0x{:08x}", fixed.product_code);
    let _ = writeln!(o, "  Revision:           0x{:08x}", fixed.revision);
    let _ = writeln!(o, "  Serial:             0x{:08x}", fixed.serial);
    let _ = writeln!(
        o,
        "  Bootstrap mailbox:  RX 0x{:04x}/{}, TX 0x{:04x}/{}",
        fixed.boot_rx_mailbox_offset,
        fixed.boot_rx_mailbox_size,
        fixed.boot_tx_mailbox_offset,
        fixed.boot_tx_mailbox_size
    );
    let _ = writeln!(
        o,
        "  Standard mailbox:   RX 0x{:04x}/{}, TX 0x{:04x}/{}",
        fixed.std_rx_mailbox_offset,
        fixed.std_rx_mailbox_size,
        fixed.std_tx_mailbox_offset,
        fixed.std_tx_mailbox_size
    );
    let protos: Vec<&str> = fixed.mailbox_protocols.names().collect();
    let _ = writeln!(o, "  Mailbox protocols:  {}", protos.join(", "));
    let _ = writeln!(o, "  EEPROM size:        {} bytes", fixed.eeprom_bytes());
    let _ = writeln!(o, "  Version:            {}", fixed.version);
    let mut strings = Strings::new(&[]);
    for c in Categories::new(image) {
        let c = match c {
            Ok(c) => c,
            Err(e) => {
                let _ = writeln!(o, "Category list broken: {e}");
                break;
            }
        };
        let _ = writeln!(
            o,
            "Category {} (0x{:04x}) at word 0x{:04x}, {} words",
            c.kind.name(),
            c.kind.to_u16(),
            c.word_address,
            c.data.len() / 2
        );
        let s = |i: u8| strings.text(i).unwrap_or_default().to_string();
        match c.kind {
            CategoryType::Strings => {
                strings = Strings::new(c.data);
                for (n, t) in strings.iter().enumerate() {
                    let _ = writeln!(o, "  {:>3}: \"{}\"", n + 1, ecat_wire::Latin1(t));
                }
            }
            CategoryType::General => match GeneralRepr::parse(c.data) {
                Ok(g) => {
                    let _ = writeln!(o, "  Group: {}", s(g.group_index));
                    let _ = writeln!(o, "  Image: {}", s(g.image_index));
                    let _ = writeln!(o, "  Order: {}", s(g.order_index));
                    let _ = writeln!(o, "  Name: {}", s(g.name_index));
                    let _ = writeln!(o, "  CoE details: 0x{:02x}", g.coe_details.0);
                    let _ = writeln!(o, "  Flags: 0x{:02x}", g.flags.0);
                    let _ = writeln!(o, "  E-bus current: {} mA", g.ebus_current_ma);
                    let _ = writeln!(o, "  Physical ports: 0x{:04x}", g.physical_ports);
                }
                Err(e) => {
                    let _ = writeln!(o, "  cannot decode: {e}");
                }
            },
            CategoryType::Fmmu => {
                for (n, b) in c.data.iter().enumerate() {
                    let u = match FmmuUsage::from_u8(*b) {
                        FmmuUsage::Unused => "unused".to_string(),
                        FmmuUsage::Outputs => "outputs".into(),
                        FmmuUsage::Inputs => "inputs".into(),
                        FmmuUsage::SyncMStatus => "mailbox state".into(),
                        FmmuUsage::Other(v) => format!("0x{v:02x}"),
                    };
                    let _ = writeln!(o, "  FMMU{n}: {u}");
                }
            }
            CategoryType::SyncM => match SyncManagers::new_checked(c.data) {
                Ok(sms) => {
                    for (n, sm) in sms.enumerate() {
                        let _ = writeln!(
                            o,
                            "  SM{n}: start 0x{:04x}, length {}, control 0x{:02x}, enable 0x{:02x}, type {:?}",
                            sm.start, sm.length, sm.control, sm.enable, sm.kind
                        );
                    }
                }
                Err(e) => {
                    let _ = writeln!(o, "  cannot decode: {e}");
                }
            },
            CategoryType::TxPdo | CategoryType::RxPdo => {
                for p in Pdos::new(c.data) {
                    match p {
                        Ok(p) => {
                            let _ = writeln!(
                                o,
                                "  PDO 0x{:04x} \"{}\" SM {} flags 0x{:04x}, {} bits",
                                p.repr.index,
                                s(p.repr.name_index),
                                p.repr.sync_manager,
                                p.repr.flags,
                                p.bit_len()
                            );
                            for e in p.entries() {
                                let _ = writeln!(
                                    o,
                                    "    0x{:04x}:{:02x} {} bits, type 0x{:02x} \"{}\"",
                                    e.index,
                                    e.subindex,
                                    e.bit_len,
                                    e.data_type,
                                    s(e.name_index)
                                );
                            }
                        }
                        Err(e) => {
                            let _ = writeln!(o, "  cannot decode: {e}");
                            break;
                        }
                    }
                }
            }
            CategoryType::Dc => match DcModes::new_checked(c.data) {
                Ok(modes) => {
                    for m in modes {
                        let _ = writeln!(
                            o,
                            "  \"{}\": AssignActivate 0x{:04x}, SYNC0 cycle {} ns (factor {}), shift {} ns",
                            s(m.name_index),
                            m.assign_activate,
                            m.sync0_cycle,
                            m.sync0_cycle_factor,
                            m.sync0_shift
                        );
                    }
                }
                Err(e) => {
                    let _ = writeln!(o, "  cannot decode: {e}");
                }
            },
            _ => hex_lines(&mut o, c.data),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_a_real_dump() {
        let img = include_bytes!("../../../../testdata/sii/el2889.bin");
        let t = describe(img);
        assert!(t.contains("Vendor id:          0x00000002"), "{t}");
        assert!(t.contains("Category STRINGS"), "{t}");
        assert!(t.contains("EL2889"), "{t}");
        assert!(t.contains("Checksum:           0x"), "{t}");
    }

    #[test]
    fn garbage_does_not_panic() {
        assert!(describe(&[1, 2, 3]).contains("cannot be decoded"));
        let mut junk = vec![0xA5u8; 300];
        junk[0x80] = 10;
        let _ = describe(&junk);
    }
}
