//! `ecat domains` and `ecat data`: the process data layout (IgH: `ethercat domains`), and the
//! live process image after a few cycles in OP (IgH: `ethercat data`), annotated per SubDevice.

use super::{open_and_scan, CmdResult};
use crate::BusArgs;
use ecat::config::Direction;
use ecat::runtime::{Activation, Runtime};
use ecat_wire::al::AlState;

/// Options of `ecat domains`.
#[derive(clap::Args, Debug)]
pub struct DomainsArgs {
    #[command(flatten)]
    bus: BusArgs,
    /// Also list each SubDevice's regions and FMMUs
    #[arg(short, long)]
    verbose: bool,
}

/// Options of `ecat data`.
#[derive(clap::Args, Debug)]
pub struct DataArgs {
    #[command(flatten)]
    bus: BusArgs,
    /// Domain to show
    #[arg(short, long, default_value_t = 0)]
    domain: usize,
    /// Cycles to run in OP before showing the image
    #[arg(long, default_value_t = 100)]
    cycles: u64,
    /// Print the image as raw binary to stdout (IgH's `ethercat data`)
    #[arg(long)]
    binary: bool,
    /// Configure the bus from this ENI file and print every ENI variable by name
    #[arg(long, value_name = "FILE")]
    eni: Option<std::path::PathBuf>,
}

fn activate(bus: &BusArgs) -> Result<(Runtime, Vec<ecat::SubDevice>), Box<dyn std::error::Error>> {
    let md = open_and_scan(bus)?;
    let subs = md.subdevices().to_vec();
    Ok((md.activate(Activation::default())?, subs))
}

/// Run `ecat domains`.
pub fn domains(a: DomainsArgs) -> CmdResult {
    let (rt, subs) = activate(&a.bus)?;
    for d in rt.domains() {
        println!(
            "Domain{}: LogBaseAddr 0x{:08x}, Size {:>4}, WorkingCounter {}/{}",
            d.index,
            d.logical_base,
            d.size(),
            d.wkc(),
            d.expected_wkc()
        );
        for p in &d.plans {
            println!(
                "  {} 0x{:08x} {} bytes (image offset {}), expected WKC {}",
                p.command, p.logical, p.len, p.offset, p.expected_wkc
            );
        }
        if a.verbose {
            for r in &d.regions {
                let s = &subs[r.position as usize];
                println!(
                    "  SubDevice {:<3} SM{} {:<6} offset {:>4} len {:>4}  {}",
                    r.position,
                    r.sm,
                    match r.direction {
                        Direction::Output => "output",
                        Direction::Input => "input",
                    },
                    r.offset,
                    r.len,
                    s.name
                );
            }
        }
    }
    let (frames, bytes) = rt.frame_layout();
    println!("Cyclic frames: {frames} per cycle, {bytes} bytes");
    Ok(())
}

/// Run `ecat data`.
pub fn data(a: DataArgs) -> CmdResult {
    if let Some(path) = &a.eni {
        return data_eni(&a, path);
    }
    let (mut rt, subs) = activate(&a.bus)?;
    if a.domain >= rt.domains().len() {
        return Err(format!(
            "there is no domain {} (there are {})",
            a.domain,
            rt.domains().len()
        )
        .into());
    }
    rt.run_until_state(AlState::Op, 1_000_000, 10_000)?;
    for _ in 0..a.cycles {
        rt.tx_rx(1_000_000)?;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let d = rt.domain(a.domain);
    if a.binary {
        use std::io::Write;
        std::io::stdout().write_all(d.image())?;
        return Ok(());
    }
    println!(
        "Domain{} after {} cycles in OP: {} (WKC {}/{})",
        d.index,
        a.cycles,
        d.state().name(),
        d.wkc(),
        d.expected_wkc()
    );
    for r in &d.regions {
        let bytes: Vec<String> = d.image()[r.range()]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        println!(
            "  {:>4}  SubDevice {:<2} {:<6} {:<24} {}",
            r.offset,
            r.position,
            match r.direction {
                Direction::Output => "out",
                Direction::Input => "in",
            },
            subs[r.position as usize].order,
            bytes.join(" ")
        );
    }
    rt.run_until_state(AlState::Init, 1_000_000, 5_000)?;
    Ok(())
}

/// `ecat data --eni FILE`: the bus configured from the ENI, every variable by name.
fn data_eni(a: &DataArgs, path: &std::path::Path) -> CmdResult {
    let eni = super::eni_run::load(path)?;
    let md = open_and_scan(&a.bus)?;
    let (mut rt, image) = super::eni_run::activate(md, &eni, |_| Ok(None))?;
    rt.run_until_state(AlState::Op, 1_000_000, 10_000)?;
    for _ in 0..a.cycles {
        rt.tx_rx(1_000_000)?;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let d = rt.domain(0);
    if a.binary {
        use std::io::Write;
        std::io::stdout().write_all(d.image())?;
        return Ok(());
    }
    println!(
        "ENI variables after {} cycles in OP: {} (WKC {}/{})",
        a.cycles,
        d.state().name(),
        d.wkc(),
        d.expected_wkc()
    );
    super::eni_run::print_vars(&rt, &image);
    rt.run_until_state(AlState::Init, 1_000_000, 5_000)?;
    Ok(())
}
