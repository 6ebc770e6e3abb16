//! `ecat reg read|write`: ESC register and memory access (IgH: `ethercat reg_read` /
//! `reg_write`, with `-p POSITION` and `-t TYPE`). As `ethercat`, one SubDevice is read or
//! written, and values print as IgH's tool prints them (raw bytes on one line).

use super::{CmdResult, Target};
use crate::datatype::{hex, hex_line, DataType};
use crate::select::{parse_u16, Select};
use crate::BusArgs;

/// `ecat reg ...` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Read registers: ecat reg read -p 0 0x0130 2
    Read(ReadArgs),
    /// Write registers: ecat reg write -p 0 -t uint16 0x0120 2
    Write(WriteArgs),
}

/// Options of `ecat reg read`.
#[derive(clap::Args, Debug)]
pub struct ReadArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Data type of the value (sets the size when SIZE is not given)
    #[arg(short = 't', long = "type", value_enum)]
    dtype: Option<DataType>,
    /// Register address (decimal, octal with a leading 0, or 0x hex)
    #[arg(value_parser = parse_u16)]
    address: u16,
    /// Number of bytes (default: the type's size, else 1)
    #[arg(value_parser = parse_u16)]
    size: Option<u16>,
}

/// Options of `ecat reg write`.
#[derive(clap::Args, Debug)]
pub struct WriteArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Data type of the value (default: raw hex bytes)
    #[arg(short = 't', long = "type", value_enum, default_value = "raw")]
    dtype: DataType,
    /// Write the bytes of this file ('-' = standard input) instead of VALUE (IgH's
    /// `reg_write ADDRESS FILE` without -t)
    #[arg(long, value_name = "FILE", conflicts_with = "value")]
    file: Option<String>,
    /// Register address (decimal, octal with a leading 0, or 0x hex)
    #[arg(value_parser = parse_u16)]
    address: u16,
    /// The value, in the notation of the type
    #[arg(required_unless_present = "file")]
    value: Option<String>,
}

/// Run `ecat reg ...`.
pub fn run(c: Command) -> CmdResult {
    match c {
        Command::Read(a) => read(a),
        Command::Write(a) => write(a),
    }
}

fn read(a: ReadArgs) -> CmdResult {
    let size = match (a.size, a.dtype.and_then(DataType::size)) {
        (Some(s), Some(t)) if s as usize != t => {
            return Err(format!("size {s} does not match the type's size {t}").into())
        }
        (Some(0), _) => return Err("size must be at least 1 byte".into()),
        (Some(s), _) => s as usize,
        (None, Some(t)) => t,
        (None, None) => 1,
    };
    if a.address as usize + size > 0x1_0000 {
        return Err(format!(
            "0x{:04x} + {size} bytes runs past the 64 KiB ESC address space",
            a.address
        )
        .into());
    }
    let mut md = Target::open(&a.bus)?;
    let igh = crate::igh::active().is_some();
    let positions = if igh {
        vec![a.select.resolve_one(md.subdevices())?]
    } else {
        a.select.resolve(md.subdevices())?
    };
    let many = positions.len() > 1;
    for p in positions {
        let data = md.read_memory(p, a.address, size)?;
        let text = match a.dtype {
            Some(t) if igh => t.decode_igh(&data),
            Some(t) => t.decode(&data),
            None if igh => hex_line(&data),
            None => hex(&data),
        };
        if many {
            println!("{p}: {text}");
        } else {
            println!("{text}");
        }
    }
    Ok(())
}

fn write(a: WriteArgs) -> CmdResult {
    let data = match (&a.file, &a.value) {
        (Some(f), _) => super::read_input(f)?,
        (None, Some(v)) => a.dtype.encode(v)?,
        (None, None) => return Err("give the VALUE to write, or --file FILE".into()),
    };
    if data.is_empty() {
        return Err("nothing to write: the value is empty".into());
    }
    if a.address as usize + data.len() > 0x1_0000 {
        return Err(format!(
            "0x{:04x} + {} bytes runs past the 64 KiB ESC address space",
            a.address,
            data.len()
        )
        .into());
    }
    let mut md = Target::open(&a.bus)?;
    let positions = if crate::igh::active().is_some() {
        vec![a.select.resolve_one(md.subdevices())?]
    } else {
        a.select.resolve(md.subdevices())?
    };
    for p in positions {
        md.write_memory(p, a.address, &data)?;
    }
    Ok(())
}
