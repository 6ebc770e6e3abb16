//! `ecat alias`: write the configured station alias (SII word 4) and the checksum (word 7)
//! into the EEPROM (IgH: `ethercat alias`). Without `-p`/`-a`, `--force` is required to
//! write every SubDevice, as IgH requires. The ESC loads the alias into register 0x0012 at
//! its next power-up or EEPROM reload.

use super::sii_write::{first_difference, read_back, write_words};
use super::{open_and_scan, CmdResult};
use crate::select::{parse_u16, Select};
use crate::BusArgs;
use ecat_wire::sii::crc8;

/// Options of `ecat alias`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Write to all SubDevices when none is selected
    #[arg(long)]
    force: bool,
    /// The alias (0-65535, decimal or 0x hex)
    #[arg(value_parser = parse_u16, value_name = "ALIAS")]
    value: u16,
}

/// Run `ecat alias`.
pub fn run(a: Args) -> CmdResult {
    let mut md = open_and_scan(&a.bus)?;
    let n = md.subdevices().len();
    if a.select.is_all() && !a.force && n != 1 {
        return Err(format!(
            "no SubDevice selected: give -p POSITION, or --force to write alias {} into all {n} SubDevices",
            a.value
        )
        .into());
    }
    let positions = if a.select.is_all() {
        (0..n).collect()
    } else {
        a.select.resolve(md.subdevices())?
    };
    for pos in positions {
        let sub = md.subdevice(pos)?;
        let label = format!("SubDevice {pos} ({})", sub.name);
        let current = sub.sii.clone();
        if current.len() < 16 {
            return Err(format!(
                "{label}: its SII could not be read, so the checksum cannot be recomputed"
            )
            .into());
        }
        let mut head = current[..16].to_vec();
        head[8..10].copy_from_slice(&a.value.to_le_bytes());
        head[14] = crc8(&head[..14]);
        head[15] = 0;
        let (written, _) = write_words(&mut md, pos, &head, &current)?;
        let back = read_back(&mut md, pos)?;
        if let Some(i) = first_difference(&head, &back) {
            return Err(format!(
                "{label}: read back differs at byte 0x{i:04x} after writing the alias"
            )
            .into());
        }
        println!(
            "{label}: alias {} written ({written} words changed), checksum 0x{:02x}; active after the next power cycle",
            a.value, head[14]
        );
    }
    Ok(())
}
