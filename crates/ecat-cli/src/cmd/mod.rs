//! One module per subcommand. Each exposes its clap `Args` (or subcommand enum) and a `run`.

pub mod alias;
pub mod analyze;
pub mod bench;
pub mod coe;
pub mod crc;
pub mod doctor;
pub mod domains;
pub mod eni;
pub mod eni_run;
pub mod eoe;
pub mod graph;
pub mod master;
pub mod mbx;
pub mod pdos;
pub mod reg;
pub mod replay;
pub mod run;
mod run_json;
mod run_seconds;
pub mod sii;
pub mod sii_build;
pub mod sii_write;
pub mod sim;
mod sim_pipeline;
pub mod slaves;
pub mod states;
pub mod tap;
pub mod xml;

use crate::BusArgs;
use ecat::control::Client;
use ecat::mailbox::sdo::SdoOp;
use ecat::{MainDevice, SubDevice};
use ecat_wire::eoe::IpParams;

/// The error type of every command: printed as `ecat: <sentence>`.
pub type CmdResult = Result<(), Box<dyn std::error::Error>>;

/// The bytes of file `f`, or of standard input for `-`.
pub fn read_input(f: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut buf = Vec::new();
    if f == "-" {
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
    } else {
        buf = std::fs::read(f).map_err(|e| format!("cannot read {f}: {e}"))?;
    }
    Ok(buf)
}

/// Open the link and scan the bus.
pub fn open_and_scan(bus: &BusArgs) -> Result<MainDevice, Box<dyn std::error::Error>> {
    refuse_held_link(bus)?;
    let mut md = MainDevice::open(&bus.link())?;
    md.scan()?;
    crate::igh::idle_preop(&mut md);
    Ok(md)
}

/// Commands that open the link themselves must not run beside an application on it: a second
/// MainDevice would disturb its cycle.
pub fn refuse_held_link(bus: &BusArgs) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(n) = bus.master {
        return Err(format!(
            "this command opens the link itself and cannot go through master {n}'s application; \
             through -m work: slaves, upload, download, sdos, reg, sii read, states, domains, data, pdos, master, config, ip"
        )
        .into());
    }
    if let Some(c) = bus.remote()? {
        let h = c.hello();
        return Err(format!(
            "process {} holds master {} on {}; a second MainDevice would disturb its cycle: use -m {} with a command that supports it",
            h.pid, h.master, h.link, h.master
        )
        .into());
    }
    Ok(())
}

/// What a command talks to: its own MainDevice on the link, or a running application's
/// master through its control socket (`-m N`, or the `-i` link an application holds).
pub enum Target {
    /// This process opened the link and scanned.
    Local(MainDevice),
    /// A running application's master.
    Remote(Client, Vec<SubDevice>),
}

impl Target {
    /// The application's master if there is one for these options, else open and scan.
    pub fn open(bus: &BusArgs) -> Result<Target, Box<dyn std::error::Error>> {
        match bus.remote()? {
            Some(mut c) => {
                let subs = c.subdevices()?;
                Ok(Target::Remote(c, subs))
            }
            None => Ok(Target::Local(open_and_scan(bus)?)),
        }
    }

    /// The SubDevices.
    pub fn subdevices(&self) -> &[SubDevice] {
        match self {
            Target::Local(md) => md.subdevices(),
            Target::Remote(_, s) => s,
        }
    }

    /// An SDO transfer.
    pub fn sdo(&mut self, position: usize, op: SdoOp) -> ecat::Result<Vec<u8>> {
        match self {
            Target::Local(md) => md.sdo(position, op),
            Target::Remote(c, _) => c.sdo(position, &op),
        }
    }

    /// Read ESC memory.
    pub fn read_memory(
        &mut self,
        position: usize,
        address: u16,
        len: usize,
    ) -> ecat::Result<Vec<u8>> {
        match self {
            Target::Local(md) => md.read_memory(position, address, len),
            Target::Remote(c, _) => c.read_memory(position, address, len),
        }
    }

    /// Set a SubDevice's EoE IP parameters (`Some`), or read them (`None`: the answer).
    pub fn eoe_ip(
        &mut self,
        position: usize,
        set: Option<IpParams>,
    ) -> ecat::Result<Option<IpParams>> {
        use ecat::mailbox::eoe::EoeOp;
        match self {
            Target::Local(md) => match set {
                Some(params) => md
                    .mailbox(position, EoeOp::SetIp { port: 0, params })
                    .map(|_| None),
                None => {
                    let d = md.mailbox(position, EoeOp::GetIp { port: 0 })?;
                    // The transfer checked that the body decodes.
                    Ok(IpParams::parse(&d).ok())
                }
            },
            Target::Remote(c, _) => c.eoe_ip(position, set.as_ref()),
        }
    }

    /// Write ESC memory.
    pub fn write_memory(&mut self, position: usize, address: u16, data: &[u8]) -> ecat::Result<()> {
        match self {
            Target::Local(md) => md.write_memory(position, address, data),
            Target::Remote(c, _) => c.write_memory(position, address, data),
        }
    }
}
