//! `ecat domains` and `ecat data`: the process data layout (IgH: `ethercat domains`), and the
//! live process image after a few cycles in OP (IgH: `ethercat data`), annotated per SubDevice.

use super::{open_and_scan, CmdResult};
use crate::BusArgs;
use ecat::config::Direction;
use ecat::control::protocol::DomainRecord;
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
    /// Show only this domain (IgH: `ethercat domains -d N`)
    #[arg(short, long)]
    domain: Option<usize>,
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
    if let Some(mut c) = a.bus.remote()? {
        let subs = c.subdevices()?;
        let doms = c.domains()?;
        print_domains(&doms, &subs, &a)?;
        let m = c.master()?;
        let (frames, bytes) = m.cyclic_layout;
        println!("Cyclic frames: {frames} per cycle, {bytes} bytes");
        return Ok(());
    }
    let (rt, subs) = activate(&a.bus)?;
    let doms: Vec<DomainRecord> = rt.domains().iter().map(DomainRecord::from).collect();
    print_domains(&doms, &subs, &a)?;
    let (frames, bytes) = rt.frame_layout();
    println!("Cyclic frames: {frames} per cycle, {bytes} bytes");
    Ok(())
}

fn direction(d: Direction, output: &'static str, input: &'static str) -> &'static str {
    match d {
        Direction::Output => output,
        Direction::Input => input,
    }
}

fn print_domains(doms: &[DomainRecord], subs: &[ecat::SubDevice], a: &DomainsArgs) -> CmdResult {
    if let Some(n) = a.domain.filter(|n| doms.iter().all(|d| d.index != *n)) {
        return Err(format!("there is no domain {n}; the master has {}", doms.len()).into());
    }
    let verbose = a.verbose;
    for d in doms
        .iter()
        .filter(|d| a.domain.is_none_or(|n| d.index == n))
    {
        println!(
            "Domain{}: LogBaseAddr 0x{:08x}, Size {:>4}, WorkingCounter {}/{}",
            d.index,
            d.logical_base,
            d.image.len(),
            d.wkc.0,
            d.wkc.1
        );
        for p in d.plans() {
            println!(
                "  {} 0x{:08x} {} bytes (image offset {}), expected WKC {}",
                p.command, p.logical, p.len, p.offset, p.expected_wkc
            );
        }
        if verbose {
            for r in d.regions() {
                let name = subs.get(r.position as usize).map_or("", |s| &s.name);
                println!(
                    "  SubDevice {:<3} SM{} {:<6} offset {:>4} len {:>4}  {}",
                    r.position,
                    r.sm,
                    direction(r.direction, "output", "input"),
                    r.offset,
                    r.len,
                    name
                );
            }
        }
    }
    Ok(())
}

/// `ecat data` for one domain: raw binary, or annotated per SubDevice under `title`.
fn print_data(d: &DomainRecord, subs: &[ecat::SubDevice], binary: bool, title: &str) -> CmdResult {
    if binary {
        use std::io::Write;
        std::io::stdout().write_all(&d.image)?;
        return Ok(());
    }
    println!(
        "Domain{} {title}: {} (WKC {}/{})",
        d.index, d.state, d.wkc.0, d.wkc.1
    );
    for r in d.regions() {
        let bytes: Vec<String> = d
            .image
            .get(r.range())
            .unwrap_or_default()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        println!(
            "  {:>4}  SubDevice {:<2} {:<6} {:<24} {}",
            r.offset,
            r.position,
            direction(r.direction, "out", "in"),
            subs.get(r.position as usize).map_or("", |s| &s.order),
            bytes.join(" ")
        );
    }
    Ok(())
}

/// Run `ecat data`.
pub fn data(a: DataArgs) -> CmdResult {
    if let Some(path) = &a.eni {
        return data_eni(&a, path);
    }
    if let Some(mut c) = a.bus.remote()? {
        let subs = c.subdevices()?;
        let doms = c.domains()?;
        let m = c.master()?;
        if doms.is_empty() && m.phase != "Operation" {
            return Err(format!(
                "master {} is in its configuration phase: its domains and their data exist once the application activates it",
                m.index
            )
            .into());
        }
        let cycles = m.cycles;
        let d = doms
            .get(a.domain)
            .ok_or_else(|| no_domain(a.domain, doms.len()))?;
        return print_data(
            d,
            &subs,
            a.binary,
            &format!("of master {} at cycle {cycles}", c.hello().master),
        );
    }
    let (mut rt, subs) = activate(&a.bus)?;
    if a.domain >= rt.domains().len() {
        return Err(no_domain(a.domain, rt.domains().len()).into());
    }
    rt.run_until_state(AlState::Op, 1_000_000, 10_000)?;
    for _ in 0..a.cycles {
        rt.tx_rx(1_000_000)?;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let d = DomainRecord::from(rt.domain(a.domain));
    print_data(
        &d,
        &subs,
        a.binary,
        &format!("after {} cycles in OP", a.cycles),
    )?;
    rt.run_until_state(AlState::Init, 1_000_000, 5_000)?;
    Ok(())
}

fn no_domain(n: usize, count: usize) -> String {
    format!("there is no domain {n} (there are {count})")
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
