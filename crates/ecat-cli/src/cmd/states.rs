//! `ecat states STATE`: request an EtherCAT state (IgH: `ethercat states [-p] [-a] STATE`).
//! Waits until every chosen SubDevice is there; a refusal prints the SubDevice and the decoded
//! AL status code.

use super::{open_and_scan, CmdResult};
use crate::output::list_line;
use crate::select::Select;
use crate::BusArgs;
use ecat_wire::al::AlState;
use std::time::Duration;

/// Options of `ecat states`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Seconds each SubDevice gets for the transition
    #[arg(long, default_value_t = 5.0)]
    timeout: f64,
    /// INIT, PREOP, BOOT, SAFEOP or OP
    #[arg(value_parser = parse_state)]
    state: AlState,
}

fn parse_state(s: &str) -> Result<AlState, String> {
    AlState::parse_name(s)
        .ok_or_else(|| format!("'{s}' is not a state; use INIT, PREOP, BOOT, SAFEOP or OP"))
}

/// Run `ecat states`.
pub fn run(a: Args) -> CmdResult {
    let mut md = open_and_scan(&a.bus)?;
    let chosen = a.select.resolve(md.subdevices())?;
    let timeout = Duration::from_secs_f64(a.timeout.max(0.0));
    let result = md.request_state(&chosen, a.state, timeout);
    md.refresh_states()?;
    for &i in &chosen {
        println!("{}", list_line(md.subdevices(), i));
    }
    result?;
    Ok(())
}
