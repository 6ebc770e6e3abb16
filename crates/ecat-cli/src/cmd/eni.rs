//! `ecat eni -o FILE`: the scanned bus with its current configuration (each SubDevice's PDOs
//! as CoE or the SII give them, or a PDO configuration file's, written as CoE init commands)
//! as an ENI file: what `ecat run --eni FILE` reads back to the same layout and working
//! counters.

use super::{open_and_scan, CmdResult};
use crate::units::parse_ns;
use crate::BusArgs;

/// Options of `ecat eni`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bus: BusArgs,
    /// Write the ENI to this file (`-` for standard output)
    #[arg(short, long, value_name = "FILE")]
    output: std::path::PathBuf,
    /// Cycle time to write (e.g. 1ms, 500us; a bare number is microseconds)
    #[arg(long, default_value = "1ms", value_parser = |s: &str| parse_ns(s, 1_000))]
    cycle: u64,
    /// PDO configuration file (TOML); SubDevices not in it keep their current PDOs
    #[arg(long, value_name = "FILE")]
    pdo_config: Option<std::path::PathBuf>,
}

/// Run `ecat eni`.
pub fn run(a: Args) -> CmdResult {
    let mut md = open_and_scan(&a.bus)?;
    let mut configs = md.discover_configs()?;
    let mut startup = vec![Vec::new(); configs.len()];
    if let Some(path) = &a.pdo_config {
        for (p, c) in crate::pdofile::load(path, md.subdevices())?
            .into_iter()
            .enumerate()
        {
            if let Some(c) = c {
                if md.coe_mailbox(p).is_ok() {
                    startup[p] = ecat::pdo_coe::write_ops(&c);
                }
                configs[p] = c;
            }
        }
    }
    let lay = ecat::domain::layout(md.subdevices(), &configs, 1, 0)?;
    let eni =
        ecat::eni::export::eni_from_layout(md.subdevices(), &configs, &startup, &lay, a.cycle);
    let xml = eni.to_xml();
    if a.output.as_os_str() == "-" {
        print!("{xml}");
        return Ok(());
    }
    std::fs::write(&a.output, &xml)
        .map_err(|e| format!("cannot write {}: {e}", a.output.display()))?;
    let vars = eni.process_image.inputs.variables.len() + eni.process_image.outputs.variables.len();
    let wkc: u32 = lay.domains.iter().map(|d| d.expected_wkc()).sum();
    println!(
        "wrote {}: {} slaves, {} cyclic commands (expected WKC {wkc}), {vars} variables",
        a.output.display(),
        eni.slaves.len(),
        eni.cyclic_cmds().count()
    );
    Ok(())
}
