//! `ecat`: the command-line front door of the ecat EtherCAT MainDevice.
//!
//! Thin by design: parse arguments (clap), call the `ecat` / `ecat-sim` libraries, format
//! output. Where IgH's `ethercat` tool has the same command, options and output follow it
//! (`-p POSITION`, `-a ALIAS`, `-t TYPE`, `-v`). Every error is printed as one sentence
//! (`ecat: ...`) with exit status 1; nothing panics on bad input.

mod cmd;
mod datatype;
mod esi_fill;
mod hotfile;
mod igh;
mod output;
mod pdofile;
mod plot;
mod select;
mod signals;
mod units;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// The interface used when none is given (and the reason, printed once).
const DEFAULT_INTERFACE: &str = "sim:io";

#[derive(Parser, Debug)]
#[command(
    name = "ecat",
    version,
    about = "EtherCAT MainDevice (master) in Linux user space, with a built-in simulated network",
    long_about = "EtherCAT MainDevice (master) in Linux user space.\n\n\
        Interfaces (-i, or the ECAT_INTERFACE environment variable): a network interface \
        such as eth0 (raw socket, needs root or cap_net_raw), raw:eth0, or a simulated \
        network: sim:io (built-in preset) or sim:path/to/network.toml. Without one, \
        commands use the built-in simulated network sim:io, and `ecat run` (the main job) \
        runs sim:servo6, seed 000's six CiA 402 drives."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Options shared by every command that talks to a bus.
#[derive(clap::Args, Debug, Clone)]
pub struct BusArgs {
    /// Link to use: eth0, raw:eth0, sim:io, sim:network.toml
    #[arg(
        short = 'i',
        long = "interface",
        env = "ECAT_INTERFACE",
        value_name = "LINK"
    )]
    pub interface: Option<String>,
    /// Talk to the application holding master N (its control socket) instead of opening the
    /// link: the request rides in the application's frames (IgH: `ethercat -m N`); with
    /// `ecat run`: serve the control socket as master N
    #[arg(short = 'm', long = "master", value_name = "N")]
    pub master: Option<u32>,
    /// ESI directory to name SubDevices, PDOs and objects from where the SubDevice itself
    /// does not (repeatable; added to ECAT_ESI_PATH)
    #[arg(long = "esi-dir", value_name = "DIR")]
    pub esi_dir: Vec<std::path::PathBuf>,
}

impl BusArgs {
    /// The running application to talk to: the one holding master `-m N` (an error if none
    /// does), else the one whose master uses the `-i` link, if any serves a control socket.
    pub fn remote(&self) -> Result<Option<ecat::control::Client>, ecat::Error> {
        if let Some(n) = self.master {
            return ecat::control::Client::connect(n).map(Some);
        }
        match &self.interface {
            Some(i) if !i.starts_with("sim:") => Ok(ecat::control::Client::find_link(i)),
            _ => Ok(None),
        }
    }

    /// The link to open; says so on stderr when falling back to the simulated network.
    pub fn link(&self) -> String {
        match &self.interface {
            Some(i) => i.clone(),
            None => {
                match igh::active() {
                    Some(d) => eprintln!(
                        "ethercat: master {m} has no link configured (ECAT_MASTER{m}, ECAT_INTERFACE or MASTER{m}_DEVICE in /etc/ecat.conf); using the built-in simulated network {DEFAULT_INTERFACE}",
                        m = d.master
                    ),
                    None => eprintln!(
                        "ecat: no interface given (-i or ECAT_INTERFACE); using the built-in simulated network {DEFAULT_INTERFACE}"
                    ),
                }
                DEFAULT_INTERFACE.to_string()
            }
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the SubDevices on the bus (IgH: `ethercat slaves`).
    Slaves(cmd::slaves::Args),
    /// Read, build or write SII EEPROM images (IgH: `ethercat sii_read` / `sii_write`).
    Sii {
        #[command(subcommand)]
        command: cmd::sii::Command,
    },
    /// Show the ESC error counters per port to locate a bad cable, or `reset` them (IgH:
    /// `ethercat crc`).
    Crc(cmd::crc::Args),
    /// Read or write ESC registers (IgH: `ethercat reg_read` / `reg_write`).
    Reg {
        #[command(subcommand)]
        command: cmd::reg::Command,
    },
    /// Write the configured station alias into the SII (IgH: `ethercat alias`).
    Alias(cmd::alias::Args),
    /// Request an EtherCAT state (IgH: `ethercat states`).
    States(cmd::states::Args),
    /// Read an SDO (IgH: `ethercat upload`).
    Upload(cmd::coe::UploadArgs),
    /// Write an SDO (IgH: `ethercat download`).
    Download(cmd::coe::DownloadArgs),
    /// Read a file from a SubDevice over FoE (IgH: `ethercat foe_read`).
    #[command(name = "foe_read")]
    FoeRead(cmd::mbx::FoeReadArgs),
    /// Write a file to a SubDevice over FoE, with `--boot` through BOOT (IgH: `ethercat
    /// foe_write`).
    #[command(name = "foe_write")]
    FoeWrite(cmd::mbx::FoeWriteArgs),
    /// Read an IDN element over SoE (IgH: `ethercat soe_read`).
    #[command(name = "soe_read")]
    SoeRead(cmd::mbx::SoeReadArgs),
    /// Write an IDN value over SoE (IgH: `ethercat soe_write`).
    #[command(name = "soe_write")]
    SoeWrite(cmd::mbx::SoeWriteArgs),
    /// Set a SubDevice's EoE IP parameters (IgH: `ethercat ip`).
    Ip(cmd::eoe::IpArgs),
    /// EoE statistics of a running `ecat run --eoe` (IgH: `ethercat eoe`).
    Eoe(cmd::eoe::EoeArgs),
    /// List the object dictionary over SDO Information (IgH: `ethercat sdos`).
    Sdos(cmd::coe::SdosArgs),
    /// Show PDO assignment and mapping (IgH: `ethercat pdos`).
    Pdos(cmd::pdos::PdosArgs),
    /// Print the PDO configuration as C arrays (IgH: `ethercat cstruct`).
    Cstruct(cmd::pdos::Args),
    /// Describe SubDevices as ESI-like XML (EtherCATInfo) from SII and CoE (IgH: `ethercat xml`).
    Xml(cmd::pdos::Args),
    /// Print the topology as Graphviz DOT with DC delays (IgH: `ethercat graph`).
    Graph(cmd::graph::Args),
    /// Show the process data layout (IgH: `ethercat domains`).
    Domains(cmd::domains::DomainsArgs),
    /// Show the live process image after a few cycles in OP (IgH: `ethercat data`).
    Data(cmd::domains::DataArgs),
    /// Write the scanned bus and its configuration as an ENI file (ETG.2100).
    Eni(cmd::eni::Args),
    /// Run a simulated EtherCAT network on a network interface until Ctrl-C.
    Sim(cmd::sim::Args),
    /// The main job: scan, bring the bus up and report (on the built-in simulated network
    /// when no interface is given).
    Run(cmd::run::Args),
    /// Measure on the wire from a capture file (pcap/pcapng): cycles, intervals, loss, WKC.
    Analyze(cmd::analyze::Args),
    /// Replay a real capture against a simulated network and compare every answer.
    Replay(cmd::replay::Args),
    /// Measure ecat against the veth floor, a bare timer and ethercrab, in one table (root).
    Bench(cmd::bench::Args),
    /// Show the master: phase, link, frame counters and rates, DC times (IgH: `ethercat
    /// master`); with -m N the running application's.
    Master(cmd::master::Args),
    /// Show the running application's slave configurations (IgH: `ethercat config`).
    Config(cmd::master::ConfigArgs),
    /// Print the version (IgH: `ethercat version`).
    Version,
    /// Check this host for real-time EtherCAT: kernel, CPU power management, IRQs, limits.
    Doctor(cmd::doctor::Args),
}

fn main() -> ExitCode {
    // Like other Unix tools, end quietly when the reader of our output goes away
    // (`ecat sdos | head`) instead of failing to print.
    // SAFETY: setting a signal disposition to its default at startup, before any threads.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let mut argv = std::env::args_os();
    if argv.next().is_some_and(|a| igh::invoked_as_ethercat(&a)) {
        let words = argv.map(|a| a.to_string_lossy().into_owned()).collect();
        return igh::main(words);
    }
    let cli = Cli::parse();
    finish("ecat", dispatch(cli.command))
}

/// Run one command.
pub fn dispatch(command: Command) -> cmd::CmdResult {
    match command {
        Command::Slaves(a) => cmd::slaves::run(a),
        Command::Sii { command } => cmd::sii::run(command),
        Command::Reg { command } => cmd::reg::run(command),
        Command::Crc(a) => cmd::crc::run(a),
        Command::Alias(a) => cmd::alias::run(a),
        Command::States(a) => cmd::states::run(a),
        Command::Sim(a) => cmd::sim::run(a),
        Command::Eni(a) => cmd::eni::run(a),
        Command::Domains(a) => cmd::domains::domains(a),
        Command::Graph(a) => cmd::graph::run(a),
        Command::Upload(a) => cmd::coe::upload(a),
        Command::Pdos(a) => cmd::pdos::pdos(a),
        Command::Cstruct(a) => cmd::pdos::cstruct(a),
        Command::Xml(a) => cmd::xml::run(a),
        Command::Download(a) => cmd::coe::download(a),
        Command::Sdos(a) => cmd::coe::sdos(a),
        Command::FoeRead(a) => cmd::mbx::foe_read(a),
        Command::FoeWrite(a) => cmd::mbx::foe_write(a),
        Command::SoeRead(a) => cmd::mbx::soe_read(a),
        Command::SoeWrite(a) => cmd::mbx::soe_write(a),
        Command::Ip(a) => cmd::eoe::ip(a),
        Command::Eoe(a) => cmd::eoe::eoe(a),
        Command::Data(a) => cmd::domains::data(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Analyze(a) => cmd::analyze::run(a),
        Command::Doctor(a) => cmd::doctor::run(a),
        Command::Replay(a) => cmd::replay::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Master(a) => cmd::master::master(a),
        Command::Config(a) => cmd::master::config(a),
        Command::Version => cmd::master::version(),
    }
}

/// The exit status of a command, its error printed as `PROGRAM: sentence`.
pub fn finish(program: &str, result: cmd::CmdResult) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{program}: {e}");
            ExitCode::FAILURE
        }
    }
}
