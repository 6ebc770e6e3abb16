//! `ecat slaves`: list the SubDevices (IgH: `ethercat slaves [-p] [-a] [-v]`); as `ethercat`,
//! in IgH's table and verbose layout (see `crate::igh::print`).

use super::CmdResult;
use crate::output::{list_line, verbose, SubDeviceJson};
use crate::select::Select;
use crate::BusArgs;

/// Options of `ecat slaves`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    tap: super::tap::TapArgs,
    #[command(flatten)]
    select: Select,
    /// Show identity, ESC, ports, mailbox and SII PDOs
    #[arg(short, long)]
    verbose: bool,
    /// Print JSON (an array of SubDevices) for scripts
    #[arg(long)]
    json: bool,
}

/// Run `ecat slaves`.
pub fn run(mut a: Args) -> CmdResult {
    let mut owned = match a.bus.remote()? {
        // The application's view (DC delays as its setup measured them).
        Some(mut c) => c.subdevices()?,
        None => {
            super::refuse_held_link(&a.bus)?;
            let mut md = a.tap.open(&a.bus.link())?;
            md.scan()?;
            crate::igh::idle_preop(&mut md);
            if a.verbose {
                // Measure the DC topology and delays (no drift compensation) to show them.
                md.configure_dc(ecat::dc::setup::DcOptions {
                    static_datagrams: 0,
                    per_frame: 1,
                    ..Default::default()
                })?;
            }
            md.subdevices().to_vec()
        }
    };
    if let Some(lib) = crate::esi_fill::library(&a.bus.esi_dir) {
        crate::esi_fill::fill_all(&mut owned, &lib);
    }
    let subs = &owned[..];
    let chosen = a.select.resolve(subs)?;
    if let Some(d) = crate::igh::active() {
        if a.verbose {
            for &i in &chosen {
                print!("{}", crate::igh::print::slave_verbose(subs, i, d.master));
            }
        } else {
            print!("{}", crate::igh::print::slaves_table(subs, &chosen));
        }
    } else if a.json {
        let v: Vec<SubDeviceJson> = chosen.iter().map(|&i| (&subs[i]).into()).collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if a.verbose {
        for &i in &chosen {
            print!("{}", verbose(subs, i));
        }
    } else {
        for &i in &chosen {
            println!("{}", list_line(subs, i));
        }
    }
    Ok(())
}
