//! `ecat replay CAPTURE -n NETWORK`: send every request of a real capture to a simulated
//! network (on virtual time following the capture's timestamps), compare each answer with the
//! real one and print the fidelity figure and the differences grouped by command and
//! register (`-v`: every differing datagram too; `--json`: the whole report, every difference
//! included). The work is done by
//! `ecat_sim::replay`; this only reads the files and prints.

use super::CmdResult;
use ecat::capture_read::{read_file, Capture};
use ecat_sim::replay::{replay, CapturedFrame};
use ecat_sim::Network;

/// Options of `ecat replay`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Capture of a MainDevice and real SubDevices (pcap or pcapng) with requests and answers
    #[arg(value_name = "CAPTURE")]
    file: std::path::PathBuf,
    /// The simulated network to replay against: a TOML file or a preset name
    #[arg(short = 'n', long = "network", value_name = "NETWORK")]
    network: String,
    /// Print JSON for scripts
    #[arg(long)]
    json: bool,
    /// Also list every differing datagram, in capture order
    #[arg(short = 'v', long)]
    verbose: bool,
}

/// Run `ecat replay`.
pub fn run(a: Args) -> CmdResult {
    let bytes = read_file(&a.file)?;
    let cap =
        Capture::parse(&bytes).map_err(|e| format!("cannot replay {}: {e}", a.file.display()))?;
    let mut net = Network::open(&a.network)?;
    let frames: Vec<CapturedFrame> = cap
        .packets
        .iter()
        .map(|p| CapturedFrame {
            ts_ns: p.ts_ns,
            data: p.data,
        })
        .collect();
    let report = replay(&mut net, &frames);
    if report.answered == 0 {
        return Err(format!(
            "{} holds no EtherCAT request with its answer ({} frames); replay needs a capture of both directions",
            a.file.display(),
            report.packets
        )
        .into());
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        if let Some(p) = &cap.problem {
            eprintln!("ecat: {}: read stopped early: {p}", a.file.display());
        }
        print!("{report}");
        if a.verbose && !report.differences.is_empty() {
            println!("every difference:");
            print!("{}", report.differences_text());
        }
    }
    Ok(())
}
