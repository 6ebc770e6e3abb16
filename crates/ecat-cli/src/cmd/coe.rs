//! `ecat upload`, `ecat download`, `ecat sdos`: SDO access as IgH's tool offers it
//! (`-p POSITION`, `-t TYPE`). Without `-t`, upload asks the SubDevice for the entry's data
//! type over SDO Information and falls back to hex bytes.

use super::{CmdResult, Target};
use crate::datatype::{hex, DataType};
use crate::select::{parse_u16, Select};
use crate::BusArgs;
use ecat::mailbox::sdo::SdoOp;
use ecat_wire::coe::info::{
    value_info, EntryDescriptionRepr, ObjectAccess, ObjectDescriptionRepr, OdListType,
};

/// Options of `ecat upload`.
#[derive(clap::Args, Debug)]
pub struct UploadArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Data type (default: from the SubDevice's object dictionary, else raw hex)
    #[arg(short = 't', long = "type", value_enum)]
    dtype: Option<DataType>,
    /// Complete access: the whole object at once (SUBINDEX 0 includes subindex 0, 1 skips it)
    #[arg(short = 'c', long)]
    complete_access: bool,
    /// Object index (e.g. 0x1018)
    #[arg(value_parser = parse_u16)]
    index: u16,
    /// Subindex
    #[arg(value_parser = parse_u16)]
    subindex: u16,
}

/// Options of `ecat download`.
#[derive(clap::Args, Debug)]
pub struct DownloadArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Data type of VALUE (default: from the object dictionary, else raw hex)
    #[arg(short = 't', long = "type", value_enum)]
    dtype: Option<DataType>,
    /// Complete access: write the whole object at once
    #[arg(short = 'c', long)]
    complete_access: bool,
    /// Take the bytes to write from this file ('-' = standard input) instead of VALUE
    #[arg(long, value_name = "FILE")]
    file: Option<String>,
    /// Object index (e.g. 0x6060)
    #[arg(value_parser = parse_u16)]
    index: u16,
    /// Subindex
    #[arg(value_parser = parse_u16)]
    subindex: u16,
    /// The value (in the notation of the type)
    value: Option<String>,
}

/// Options of `ecat sdos`.
#[derive(clap::Args, Debug)]
pub struct SdosArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Objects only, without their entries
    #[arg(short, long)]
    quiet: bool,
}

fn subindex(v: u16) -> Result<u8, String> {
    u8::try_from(v).map_err(|_| format!("subindex {v} is larger than 255"))
}

/// The entry's data type from the object dictionary, if the SubDevice tells it.
fn dictionary_type(md: &mut Target, pos: usize, index: u16, sub: u8) -> Option<DataType> {
    let op = SdoOp::EntryDescription {
        index,
        subindex: sub,
        value_info: value_info::ACCESS,
    };
    let body = md.sdo(pos, op).ok()?;
    let e = EntryDescriptionRepr::parse(&body).ok()?;
    DataType::from_coe(e.data_type.0, e.bit_len)
}

/// Run `ecat upload`.
pub fn upload(a: UploadArgs) -> CmdResult {
    let mut md = Target::open(&a.bus)?;
    let pos = a.select.resolve_one(md.subdevices())?;
    let sub = subindex(a.subindex)?;
    let data = md.sdo(
        pos,
        SdoOp::Upload {
            index: a.index,
            subindex: sub,
            complete_access: a.complete_access,
        },
    )?;
    let dtype = match a.dtype {
        Some(t) => Some(t),
        None if !a.complete_access => dictionary_type(&mut md, pos, a.index, sub),
        None => None,
    };
    let igh = crate::igh::active().is_some();
    match dtype {
        Some(t) if igh => println!("{}", t.decode_igh(&data)),
        Some(t) => println!("{}", t.decode(&data)),
        None if igh => println!("{}", crate::datatype::hex_line(&data)),
        None => println!("{}", hex(&data)),
    }
    Ok(())
}

/// Run `ecat download`.
pub fn download(a: DownloadArgs) -> CmdResult {
    let sub = subindex(a.subindex)?;
    let mut md = Target::open(&a.bus)?;
    let pos = a.select.resolve_one(md.subdevices())?;
    let data = match (&a.file, &a.value) {
        (Some(f), None) => super::read_input(f)?,
        (None, Some(v)) => {
            let t = match a.dtype {
                Some(t) => t,
                None => dictionary_type(&mut md, pos, a.index, sub).unwrap_or(DataType::Raw),
            };
            t.encode(v)?
        }
        (Some(_), Some(_)) => return Err("give either VALUE or --file, not both".into()),
        (None, None) => return Err("nothing to write: give VALUE or --file FILE".into()),
    };
    if data.is_empty() {
        return Err("nothing to write: the value is empty".into());
    }
    md.sdo(
        pos,
        SdoOp::Download {
            index: a.index,
            subindex: sub,
            complete_access: a.complete_access,
            data,
        },
    )?;
    Ok(())
}

/// IgH's access column: read/write in PREOP, SAFEOP, OP, e.g. `rwr-r-`.
fn access_text(a: ObjectAccess) -> String {
    let mut s = String::new();
    for st in 0..3 {
        s.push(if a.0 & (1 << st) != 0 { 'r' } else { '-' });
        s.push(if a.0 & (1 << (st + 3)) != 0 { 'w' } else { '-' });
    }
    s
}

/// IgH's access column from an ESI access description.
fn esi_access_text(a: &ecat_config::esi::Access) -> String {
    let mut s = String::new();
    for st in [1u8, 2, 4] {
        s.push(if a.read.0 & st != 0 { 'r' } else { '-' });
        s.push(if a.write.0 & st != 0 { 'w' } else { '-' });
    }
    s
}

/// `ecat sdos` output for an ESI dictionary (objects, then their entries).
fn esi_sdos(dict: &ecat_config::esi::Dictionary, quiet: bool) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    for obj in &dict.objects {
        let _ = writeln!(o, "SDO 0x{:04x}, \"{}\"", obj.index, obj.name);
        if quiet {
            continue;
        }
        if obj.sub_items.is_empty() {
            let _ = writeln!(
                o,
                "  0x{:04x}:00, {}, {}, {} bit, \"{}\"",
                obj.index,
                esi_access_text(&obj.flags.access),
                obj.type_name,
                obj.bit_size,
                obj.name
            );
        }
        for sub in &obj.sub_items {
            let _ = writeln!(
                o,
                "  0x{:04x}:{:02x}, {}, {}, {} bit, \"{}\"",
                obj.index,
                sub.subindex,
                esi_access_text(&sub.flags.access),
                sub.type_name,
                sub.bit_size,
                sub.name
            );
        }
    }
    o
}

/// Run `ecat sdos`.
pub fn sdos(a: SdosArgs) -> CmdResult {
    let mut md = Target::open(&a.bus)?;
    let pos = a.select.resolve_one(md.subdevices())?;
    let list = match md.sdo(
        pos,
        SdoOp::OdList {
            list_type: OdListType(1),
        },
    ) {
        Ok(list) => list,
        Err(e) => {
            // No SDO Information: the ESI's dictionary, if the library describes the device.
            let lib = crate::esi_fill::library(&a.bus.esi_dir);
            let s = &md.subdevices()[pos];
            let Some(d) = lib.as_ref().and_then(|l| crate::esi_fill::lookup(l, s)) else {
                return Err(e.into());
            };
            let Some(dict) = d.dictionary.as_ref() else {
                return Err(e.into());
            };
            eprintln!(
                "note: {e}; listing the object dictionary of its ESI ({}) instead",
                d.file.file_name()
            );
            print!("{}", esi_sdos(dict, a.quiet));
            return Ok(());
        }
    };
    let indices: Vec<u16> = list
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    for index in indices {
        let body = md.sdo(pos, SdoOp::ObjectDescription { index })?;
        let Ok(obj) = ObjectDescriptionRepr::parse(&body) else {
            println!("SDO 0x{index:04x}, (description cannot be decoded)");
            continue;
        };
        println!(
            "SDO 0x{index:04x}, \"{}\"",
            ecat_wire::Latin1(obj.name).trim()
        );
        if a.quiet {
            continue;
        }
        for sub in 0..=obj.max_subindex {
            let op = SdoOp::EntryDescription {
                index,
                subindex: sub,
                value_info: value_info::ACCESS | value_info::CATEGORY | value_info::MAPPABLE,
            };
            let Ok(body) = md.sdo(pos, op) else { continue };
            let Ok(e) = EntryDescriptionRepr::parse(&body) else {
                continue;
            };
            let name = e
                .fields()
                .map(|f| ecat_wire::Latin1(f.name).trim().to_string())
                .unwrap_or_default();
            println!(
                "  0x{index:04x}:{sub:02x}, {}, {}, {} bit, \"{name}\"",
                access_text(e.access),
                e.data_type.name(),
                e.bit_len
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esi_dictionary_lists_like_sdo_information() {
        let esi = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/esi/Beckhoff_EL4xxx.xml"
        ))
        .unwrap();
        let f = ecat_config::EsiFile::parse_str(&esi, "EL4xxx.xml").unwrap();
        let d = f.device("EL4132", None).unwrap();
        let text = esi_sdos(d.dictionary.as_ref().unwrap(), false);
        assert!(text.contains("SDO 0x1018, \"Identity\""), "{text}");
        assert!(
            text.contains("  0x1018:02, r-r-r-, UDINT, 32 bit, \"Product code\""),
            "{text}"
        );
        let quiet = esi_sdos(d.dictionary.as_ref().unwrap(), true);
        assert!(!quiet.contains("  0x"), "{quiet}");
    }

    #[test]
    fn access_column() {
        assert_eq!(access_text(ObjectAccess(0b000_111)), "r-r-r-");
        assert_eq!(access_text(ObjectAccess(0b111_111)), "rwrwrw");
        assert_eq!(access_text(ObjectAccess(0b001_111)), "rwr-r-");
    }
}
