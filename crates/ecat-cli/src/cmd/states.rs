//! `ecat states STATE`: request an EtherCAT state (IgH: `ethercat states [-p] [-a] STATE`).
//! Waits until every chosen SubDevice is there; a refusal prints the SubDevice and the decoded
//! AL status code.

use super::{open_and_scan, CmdResult};
use crate::output::list_line;
use crate::select::Select;
use crate::BusArgs;
use ecat::runtime::Activation;
use ecat::MainDevice;
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
    let timeout = Duration::from_secs_f64(a.timeout.max(0.0));
    if let Some(c) = a.bus.remote()? {
        return remote(c, &a, timeout);
    }
    let mut md = open_and_scan(&a.bus)?;
    let chosen = a.select.resolve(md.subdevices())?;
    if matches!(a.state, AlState::SafeOp | AlState::Op) {
        return process_data_state(md, &chosen, a.state, timeout);
    }
    let result = md.request_state(&chosen, a.state, timeout);
    md.refresh_states()?;
    report(md.subdevices(), &chosen);
    result?;
    Ok(())
}

/// The chosen SubDevices after the request, one line each (IgH's `states` prints nothing).
fn report(subs: &[ecat::SubDevice], chosen: &[usize]) {
    if crate::igh::active().is_some() {
        return;
    }
    for &i in chosen {
        println!("{}", list_line(subs, i));
    }
}

/// SAFEOP and OP need the process data configured and (for OP) flowing: activate, let the
/// supervisor walk every SubDevice up while cycling at 1 ms, report, then leave them there.
fn process_data_state(
    md: MainDevice,
    chosen: &[usize],
    state: AlState,
    timeout: Duration,
) -> CmdResult {
    let all = chosen.len() == md.subdevices().len();
    if !all {
        return Err(format!(
            "{state} is requested for the whole bus (its process data is configured together); leave out -p/-a"
        )
        .into());
    }
    let mut rt = md.activate(Activation {
        target: state,
        ..Default::default()
    })?;
    let cycles = (timeout.as_millis() as u64).max(100);
    let result = rt.run_until_state(state, 1_000_000, cycles);
    while let Some(e) = rt.next_event() {
        println!("{e}");
    }
    let states = crate::output::runtime_subdevices(&rt);
    report(&states, &(0..states.len()).collect::<Vec<_>>());
    result?;
    if state == AlState::Op {
        eprintln!("note: nothing cycles after this command ends, so SubDevices with a SyncManager watchdog fall back to SAFEOP+ERR (0x001B); use `ecat run` to stay in OP");
    }
    Ok(())
}

/// Through a running application: its supervisor takes the chosen SubDevices to the state
/// (and keeps them there); wait until they are there.
fn remote(mut c: ecat::control::Client, a: &Args, timeout: Duration) -> CmdResult {
    let subs = c.subdevices()?;
    let chosen = a.select.resolve(&subs)?;
    let all = chosen.len() == subs.len();
    c.request_state(if all { &[] } else { &chosen }, a.state)?;
    let until = std::time::Instant::now() + timeout;
    let subs = loop {
        let subs = c.subdevices()?;
        let there = chosen
            .iter()
            .all(|&i| subs[i].al_status.state() == Some(a.state));
        if there || std::time::Instant::now() >= until {
            break subs;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    report(&subs, &chosen);
    let behind: Vec<String> = chosen
        .iter()
        .filter(|&&i| subs[i].al_status.state() != Some(a.state))
        .map(|&i| format!("SubDevice {i}"))
        .collect();
    if !behind.is_empty() {
        return Err(format!(
            "{} did not reach {} within {:.1} s",
            behind.join(", "),
            a.state,
            timeout.as_secs_f64()
        )
        .into());
    }
    Ok(())
}
