//! `ecat sii build`: an SII image from an ESI file (what siitool or TwinCAT's EEPROM writer
//! do), through `ecat-config`. The device is chosen by type name or product code in one file
//! (`--esi`) or in the ESI directories (`--esi-dir`, `ECAT_ESI_PATH`).

use super::CmdResult;
use crate::select::parse_u64;
use ecat_config::{build_sii_detailed, DeviceLibrary, DeviceRef, EsiFile, PdoContent, SiiOptions};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// Options of `ecat sii build`.
#[derive(clap::Args, Debug)]
pub struct BuildArgs {
    /// ESI file describing the device
    #[arg(long, value_name = "FILE")]
    esi: Option<PathBuf>,
    /// Directory of ESI files to search (repeatable; added to ECAT_ESI_PATH)
    #[arg(long = "esi-dir", value_name = "DIR")]
    esi_dir: Vec<PathBuf>,
    /// Device type (order number), e.g. EL2032
    #[arg(
        short = 't',
        long = "type",
        value_name = "TYPE",
        required_unless_present = "product"
    )]
    type_name: Option<String>,
    /// Product code instead of the type name (decimal or 0x hex)
    #[arg(long, value_parser = parse_u32, conflicts_with = "type_name")]
    product: Option<u32>,
    /// Revision number (default: the highest the ESI has)
    #[arg(short = 'r', long, value_parser = parse_u32)]
    revision: Option<u32>,
    /// Language of the names in the image (1033 English, 1031 German)
    #[arg(long, default_value_t = 1033)]
    lcid: u32,
    /// Serial number to put into the image
    #[arg(long, value_parser = parse_u32, default_value = "0")]
    serial: u32,
    /// Write the whole EEPROM: the image, then erased bytes (0xFF) up to the ESI's
    /// ByteSize, as a dump of a real EEPROM reads
    #[arg(long)]
    full: bool,
    /// Output file ("-" for stdout)
    #[arg(short = 'o', long, value_name = "FILE")]
    output: PathBuf,
}

fn parse_u32(s: &str) -> Result<u32, String> {
    parse_u64(s).and_then(|v| u32::try_from(v).map_err(|_| format!("'{s}' is larger than 32 bits")))
}

fn find(a: &BuildArgs) -> Result<DeviceRef, ecat_config::Error> {
    if let Some(path) = &a.esi {
        let file = Arc::new(EsiFile::from_path(path)?);
        let index = match (&a.type_name, a.product) {
            (Some(t), _) => {
                let d = file.device(t, a.revision)?;
                file.devices.iter().position(|x| std::ptr::eq(x, d))
            }
            (None, Some(p)) => file
                .devices
                .iter()
                .enumerate()
                .filter(|(_, d)| d.product_code == Some(p))
                .filter(|(_, d)| a.revision.is_none_or(|r| r == d.revision))
                .max_by_key(|(_, d)| d.revision)
                .map(|(i, _)| i),
            (None, None) => None,
        };
        return match index {
            Some(index) => Ok(DeviceRef { file, index }),
            None => Err(ecat_config::Error::NoSuchType {
                file: path.display().to_string(),
                wanted: format!("with product code 0x{:08x}", a.product.unwrap_or(0)),
                available: file.type_list(),
            }),
        };
    }
    let lib = DeviceLibrary::from_env_and(a.esi_dir.iter().cloned());
    match (&a.type_name, a.product) {
        (Some(t), _) => lib.find_type(t, a.revision),
        (None, Some(p)) => lib.find_product(None, p, a.revision),
        (None, None) => unreachable!("clap requires --type or --product"),
    }
}

/// Run `ecat sii build`.
pub fn run(a: BuildArgs) -> CmdResult {
    let dev = find(&a)?;
    let built = build_sii_detailed(
        &dev,
        &SiiOptions {
            lcid: a.lcid,
            serial: a.serial,
        },
    )?;
    let bytes = if a.full {
        built.padded()
    } else {
        built.image.clone()
    };
    let to_stdout = a.output.as_os_str() == "-";
    if to_stdout {
        let mut out = std::io::stdout().lock();
        if out.is_terminal() {
            return Err("the SII image is binary: give -o FILE or redirect stdout".into());
        }
        out.write_all(&bytes)?;
        out.flush()?;
    } else {
        std::fs::write(&a.output, &bytes)
            .map_err(|e| format!("{}: cannot write the image: {e}", a.output.display()))?;
    }
    let pdos = match built.pdos {
        PdoContent::All => "all PDOs".to_string(),
        PdoContent::DefaultOnly => "only the default PDOs (all do not fit)".to_string(),
        PdoContent::None => "no PDOs (they do not fit; read them over CoE)".to_string(),
    };
    let report = format!(
        "{} \"{}\": vendor 0x{:08x}, product 0x{:08x}, revision 0x{:08x}; {} bytes for a {}-byte EEPROM{}, {}{}; from {}{}",
        dev.type_name,
        dev.name(a.lcid),
        dev.vendor_id,
        dev.product_code.unwrap_or(0),
        dev.revision,
        built.image.len(),
        built.eeprom_bytes,
        if a.full { " (written whole)" } else { "" },
        pdos,
        if built.dc_names { "" } else { ", DC modes without names" },
        dev.file.file_name(),
        if to_stdout {
            String::new()
        } else {
            format!(" -> {}", a.output.display())
        }
    );
    // With the image on stdout, the report goes to stderr.
    if to_stdout {
        eprintln!("{report}");
    } else {
        println!("{report}");
    }
    Ok(())
}
