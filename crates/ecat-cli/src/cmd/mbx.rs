//! `ecat foe_read`, `ecat foe_write`, `ecat soe_read`, `ecat soe_write`: file access and
//! SERCOS parameters over the mailbox, with IgH's names and options (`-p POSITION`, `-o` for
//! the output file or the name on the SubDevice, `-d DRIVE` (IgH: `-i`, taken here by the interface), `-t TYPE`), plus `--password`
//! for FoE and `--boot` for a firmware update through the BOOT state.

use super::{open_and_scan, CmdResult};
use crate::datatype::{hex, DataType};
use crate::select::{parse_u64, Select};
use crate::BusArgs;
use ecat::MainDevice;
use ecat_wire::al::AlState;
use ecat_wire::soe::{Elements, Idn, IdnAttribute, ListHeader};
use std::io::{Read, Write};

fn parse_u32(s: &str) -> Result<u32, String> {
    parse_u64(s).and_then(|v| u32::try_from(v).map_err(|_| format!("'{s}' is larger than 32 bits")))
}

/// Options of `ecat foe_read`.
#[derive(clap::Args, Debug)]
pub struct FoeReadArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Write the file here instead of to standard output
    #[arg(short = 'o', long = "output-file", value_name = "FILE")]
    output: Option<String>,
    /// FoE password (decimal or 0x hex; default none)
    #[arg(long, value_parser = parse_u32, default_value = "0")]
    password: u32,
    /// The file's name on the SubDevice
    name: String,
}

/// Options of `ecat foe_write`.
#[derive(clap::Args, Debug)]
pub struct FoeWriteArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// The file's name on the SubDevice (default: the base name of FILE)
    #[arg(short = 'o', long = "output-file", value_name = "NAME")]
    output: Option<String>,
    /// FoE password (decimal or 0x hex; default none)
    #[arg(long, value_parser = parse_u32, default_value = "0")]
    password: u32,
    /// Firmware update: go through INIT to BOOT (bootstrap mailbox), write, back to PREOP
    #[arg(long)]
    boot: bool,
    /// The local file to send ('-' = standard input)
    file: String,
}

/// Where an SoE request goes: bus, SubDevice, drive, and the value's type.
#[derive(clap::Args, Debug)]
pub struct SoeTarget {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Drive number (0..7) of a multi-axis SubDevice
    #[arg(short = 'd', long = "drive", default_value = "0")]
    drive: u8,
    /// Data type of the value (default: from the IDN's attribute)
    #[arg(short = 't', long = "type", value_enum)]
    dtype: Option<DataType>,
}

/// Options of `ecat soe_read`.
#[derive(clap::Args, Debug)]
pub struct SoeReadArgs {
    #[command(flatten)]
    to: SoeTarget,
    /// Element: value, name, attribute, unit, min, max, default
    #[arg(short = 'e', long = "element", default_value = "value")]
    element: String,
    /// IDN as S-0-0001, P-0-0150 or a number
    idn: String,
}

/// Options of `ecat soe_write`.
#[derive(clap::Args, Debug)]
pub struct SoeWriteArgs {
    #[command(flatten)]
    to: SoeTarget,
    /// IDN as S-0-0001, P-0-0150 or a number
    idn: String,
    /// The value (in the notation of the type)
    value: String,
}

/// Run `ecat foe_read`.
pub fn foe_read(a: FoeReadArgs) -> CmdResult {
    let mut md = open_and_scan(&a.bus)?;
    let pos = a.select.resolve_one(md.subdevices())?;
    let data = md.foe_read(pos, &a.name, a.password)?;
    match &a.output {
        Some(f) => std::fs::write(f, &data).map_err(|e| format!("cannot write {f}: {e}"))?,
        None => std::io::stdout().write_all(&data)?,
    }
    Ok(())
}

/// Run `ecat foe_write`.
pub fn foe_write(a: FoeWriteArgs) -> CmdResult {
    let data = if a.file == "-" {
        let mut b = Vec::new();
        std::io::stdin().read_to_end(&mut b)?;
        b
    } else {
        std::fs::read(&a.file).map_err(|e| {
            format!(
                "cannot read the file to send, {}: {e}; give an existing file",
                a.file
            )
        })?
    };
    let name = match &a.output {
        Some(n) => n.clone(),
        None if a.file == "-" => {
            return Err(
                "give the name on the SubDevice with -o NAME when reading standard input".into(),
            )
        }
        None => std::path::Path::new(&a.file)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| a.file.clone()),
    };
    let mut md = open_and_scan(&a.bus)?;
    let pos = a.select.resolve_one(md.subdevices())?;
    if a.boot {
        md.firmware_update(pos, &name, a.password, &data, AlState::PreOp)?;
    } else {
        md.foe_write(pos, &name, a.password, &data)?;
    }
    Ok(())
}

impl SoeTarget {
    fn open(&self) -> Result<(MainDevice, usize), Box<dyn std::error::Error>> {
        let md = open_and_scan(&self.bus)?;
        let pos = self.select.resolve_one(md.subdevices())?;
        Ok((md, pos))
    }
}

fn idn(s: &str) -> Result<Idn, String> {
    s.parse()
        .map_err(|_| format!("'{s}' is not an IDN; write it as S-0-0001, P-0-0150 or a number"))
}

/// The IDN's attribute, if the drive tells it.
fn attribute(md: &mut MainDevice, pos: usize, drive: u8, idn: Idn) -> Option<IdnAttribute> {
    let a = md.soe_read(pos, drive, idn, Elements::ATTRIBUTE).ok()?;
    Some(IdnAttribute(u32::from_le_bytes(
        a.get(..4)?.try_into().ok()?,
    )))
}

/// The data type an attribute describes (`None`: a list shown as hex or text).
fn attribute_type(a: IdnAttribute) -> Option<DataType> {
    use DataType::*;
    let signed = a.display() == 2;
    Some(match (a.fixed_len()?, signed) {
        (2, false) => Uint16,
        (2, true) => Int16,
        (4, false) => Uint32,
        (4, true) => Int32,
        (8, false) => Uint64,
        (_, _) => Int64,
    })
}

/// Run `ecat soe_read`.
pub fn soe_read(a: SoeReadArgs) -> CmdResult {
    let idn = idn(&a.idn)?;
    let el = Elements::from_name(&a.element).ok_or_else(|| {
        format!(
            "'{}' is not an element; give value, name, attribute, unit, min, max or default",
            a.element
        )
    })?;
    let (mut md, pos) = a.to.open()?;
    let data = md.soe_read(pos, a.to.drive, idn, el)?;
    if el == Elements::NAME || el == Elements::UNIT {
        let text = ListHeader::parse(&data).map(|(_, t)| t).unwrap_or(&data);
        println!("{}", String::from_utf8_lossy(text));
        return Ok(());
    }
    if el == Elements::ATTRIBUTE {
        println!("{}", hex(&data));
        return Ok(());
    }
    let attr = attribute(&mut md, pos, a.to.drive, idn);
    let t = a.to.dtype.or_else(|| attr.and_then(attribute_type));
    match (t, attr) {
        (Some(t), _) => println!("{}", t.decode(&data)),
        (None, Some(at)) if at.list_item_len().is_some() => {
            let items = ListHeader::parse(&data).map(|(_, d)| d).unwrap_or(&data);
            if at.display() == 4 {
                println!("{}", String::from_utf8_lossy(items));
            } else if at.display() == 5 && at.list_item_len() == Some(2) {
                let idns: Vec<String> = items
                    .chunks_exact(2)
                    .map(|c| Idn(u16::from_le_bytes([c[0], c[1]])).to_string())
                    .collect();
                println!("{}", idns.join(" "));
            } else {
                println!("{}", hex(items));
            }
        }
        (None, _) => println!("{}", hex(&data)),
    }
    Ok(())
}

/// Run `ecat soe_write`.
pub fn soe_write(a: SoeWriteArgs) -> CmdResult {
    let idn = idn(&a.idn)?;
    let (mut md, pos) = a.to.open()?;
    let t = match a.to.dtype {
        Some(t) => t,
        None => attribute(&mut md, pos, a.to.drive, idn)
            .and_then(attribute_type)
            .unwrap_or(DataType::Raw),
    };
    let data = t.encode(&a.value)?;
    md.soe_write(pos, a.to.drive, idn, Elements::VALUE, &data)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{Cli, Command};
    use clap::Parser;

    fn run(args: &[&str]) -> Result<(), String> {
        let cli = Cli::try_parse_from(args).map_err(|e| e.to_string())?;
        let r = match cli.command {
            Command::FoeRead(a) => super::foe_read(a),
            Command::FoeWrite(a) => super::foe_write(a),
            Command::SoeRead(a) => super::soe_read(a),
            Command::SoeWrite(a) => super::soe_write(a),
            _ => unreachable!("a mailbox command"),
        };
        r.map_err(|e| e.to_string())
    }

    #[test]
    fn commands_parse_and_bad_input_is_one_sentence() {
        let dir = std::env::temp_dir().join(format!("ecat-mbxmaster-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fw = dir.join("fw.bin");
        std::fs::write(&fw, vec![0x5A; 3000]).unwrap();
        let fw = fw.to_str().unwrap();
        let ok = run(&[
            "ecat",
            "foe_write",
            "-i",
            "sim:mbx",
            "-p",
            "2",
            "--boot",
            "-o",
            "f.efw",
            fw,
        ]);
        let missing = run(&[
            "ecat",
            "foe_write",
            "-i",
            "sim:mbx",
            "-p",
            "0",
            "/nonexistent/x.bin",
        ]);
        let no_file = run(&[
            "ecat",
            "foe_read",
            "-i",
            "sim:mbx",
            "-p",
            "0",
            "--password",
            "0x10",
            "nope",
        ]);
        let no_idn = run(&[
            "ecat", "soe_read", "-i", "sim:mbx", "-p", "2", "-d", "0", "S-0-4000",
        ]);
        let bad_idn = run(&["ecat", "soe_write", "-i", "sim:mbx", "-p", "2", "Q-9", "1"]);
        let written = run(&[
            "ecat",
            "soe_write",
            "-i",
            "sim:mbx",
            "-p",
            "2",
            "P-0-0150",
            "300",
        ]);
        std::fs::remove_dir_all(&dir).unwrap();
        ok.unwrap();
        written.unwrap();
        let e = missing.unwrap_err();
        assert!(
            e.contains("cannot read the file to send") && e.contains("x.bin"),
            "{e}"
        );
        let e = no_file.unwrap_err();
        assert!(
            e.contains("SubDevice 0") && e.contains("FoE read of 'nope'"),
            "{e}"
        );
        let e = no_idn.unwrap_err();
        assert!(
            e.contains("SubDevice 2") && e.contains("IDN not present"),
            "{e}"
        );
        let e = bad_idn.unwrap_err();
        assert!(e.contains("'Q-9' is not an IDN"), "{e}");
    }
}
