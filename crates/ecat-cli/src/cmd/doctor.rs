//! `ecat doctor` (in progress).
use super::CmdResult;
/// Options of `ecat doctor`.
#[derive(clap::Args, Debug)]
pub struct Args {}
/// Run `ecat doctor`.
pub fn run(_a: Args) -> CmdResult { Ok(()) }
