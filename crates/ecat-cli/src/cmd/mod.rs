//! One module per subcommand. Each exposes its clap `Args` (or subcommand enum) and a `run`.

pub mod alias;
pub mod analyze;
pub mod bench;
pub mod coe;
pub mod doctor;
pub mod domains;
pub mod eni;
pub mod eni_run;
pub mod eoe;
pub mod graph;
pub mod mbx;
pub mod pdos;
pub mod reg;
pub mod replay;
pub mod run;
pub mod sii;
pub mod sii_build;
pub mod sii_write;
pub mod sim;
pub mod slaves;
pub mod states;
pub mod tap;
pub mod xml;

use crate::BusArgs;
use ecat::MainDevice;

/// The error type of every command: printed as `ecat: <sentence>`.
pub type CmdResult = Result<(), Box<dyn std::error::Error>>;

/// Open the link and scan the bus.
pub fn open_and_scan(bus: &BusArgs) -> Result<MainDevice, Box<dyn std::error::Error>> {
    let mut md = MainDevice::open(&bus.link())?;
    md.scan()?;
    Ok(md)
}
