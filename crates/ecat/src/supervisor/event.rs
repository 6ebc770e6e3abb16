//! What the supervisor tells the application: events (a SubDevice lost, back, in a state,
//! refusing one) and the per-SubDevice view of its state.

use crate::error::Who;
use crate::subdevice::SubDevice;
use ecat_wire::al::{AlState, AlStatus, AlStatusCode};
use std::fmt;
use std::ops::Range;

/// Something the supervisor wants the application to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A SubDevice stopped answering.
    Lost {
        /// Which.
        who: Who,
        /// Cycle when it was noticed.
        cycle: u64,
    },
    /// A lost SubDevice answers again (configuration follows).
    Found {
        /// Which.
        who: Who,
        /// Cycle when it answered.
        cycle: u64,
        /// Cycles it was gone.
        gone_cycles: u64,
    },
    /// A SubDevice reached the target state.
    Reached {
        /// Which.
        who: Who,
        /// State.
        state: AlState,
        /// Cycle.
        cycle: u64,
    },
    /// A SubDevice refused a state.
    Refused {
        /// Which.
        who: Who,
        /// State requested.
        requested: AlState,
        /// What it reported.
        status: AlStatus,
        /// Why.
        code: AlStatusCode,
        /// Cycle.
        cycle: u64,
    },
    /// A startup request (SDO download, SoE IDN write ...) or a transition command failed
    /// (the SubDevice is tried again later from INIT); the error names the transfer or
    /// command and why.
    StartupFailed {
        /// Which.
        who: Who,
        /// The error, with the transfer and the decoded abort code.
        error: String,
        /// Cycle.
        cycle: u64,
    },
    /// An optional startup request (e.g. an EoE set-IP-parameter request) failed; the
    /// SubDevice goes on to its target without it (reported once per configuration).
    StartupSkipped {
        /// Which.
        who: Who,
        /// The error, with the request and why.
        error: String,
        /// Cycle.
        cycle: u64,
    },
    /// A PDO configuration warning (IgH's rules, see [`crate::pdo_setup`]): a write the
    /// SubDevice refused (it goes on), PDOs configured for a sync manager it does not have, or
    /// a difference it does not allow to be written. Not an error: the SubDevice is the judge
    /// when it is asked for SAFEOP.
    PdoWarning {
        /// Which.
        who: Who,
        /// What, with the object and the decoded abort code where a write was refused.
        warning: String,
        /// Cycle (0: given at activation).
        cycle: u64,
    },
    /// A SubDevice refused SAFEOP while its PDOs are known to differ from the application's
    /// configuration (follows its [`Event::Refused`]).
    PdoMismatch {
        /// Which.
        who: Who,
        /// The AL status code it refused with.
        code: AlStatusCode,
        /// The sync managers whose PDOs differ, application's against the SubDevice's.
        differences: String,
        /// Cycle.
        cycle: u64,
    },
    /// The device now at a lost SubDevice's place is a different one.
    WrongDevice {
        /// Which place.
        who: Who,
        /// Vendor and product found.
        found: (u32, u32),
        /// Cycle.
        cycle: u64,
    },
    /// A hot-connect group appeared (its members are identified and configured next). Not an
    /// error.
    GroupConnected {
        /// Group number (declaration order).
        group: usize,
        /// Its name.
        name: String,
        /// Positions of its members.
        members: Range<usize>,
        /// Cycle when its first member answered.
        cycle: u64,
    },
    /// A hot-connect group left the bus. Not an error: the rest runs on.
    GroupDisconnected {
        /// Group number (declaration order).
        group: usize,
        /// Its name.
        name: String,
        /// Positions of its members.
        members: Range<usize>,
        /// Cycle when it was noticed.
        cycle: u64,
    },
    /// Every member of a hot-connect group reached the target state.
    GroupReady {
        /// Group number (declaration order).
        group: usize,
        /// Its name.
        name: String,
        /// Positions of its members.
        members: Range<usize>,
        /// The state reached.
        state: AlState,
        /// Cycle.
        cycle: u64,
        /// Cycles since it appeared (since the start for a group present from the start).
        after_cycles: u64,
    },
    /// The propagation delays were measured again after a hot-connect group joined or left
    /// (see `dc::remeasure`). Not an error.
    DcDelaysMeasured {
        /// DC SubDevices measured.
        measured: usize,
        /// Delays that changed and were written.
        corrected: usize,
        /// The largest change, ns.
        largest_change_ns: u32,
        /// Cycle.
        cycle: u64,
    },
}

/// "positions 4-6" / "position 4".
fn positions(r: &Range<usize>) -> String {
    match r.len() {
        1 => format!("position {}", r.start),
        _ => format!("positions {}-{}", r.start, r.end.saturating_sub(1)),
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Lost { who, cycle } => write!(f, "cycle {cycle}: {who} lost (no answer)"),
            Event::Found { who, cycle, gone_cycles } => {
                write!(f, "cycle {cycle}: {who} is back after {gone_cycles} cycles; configuring it again")
            }
            Event::Reached { who, state, cycle } => write!(f, "cycle {cycle}: {who} is in {state}"),
            Event::Refused { who, requested, status, code, cycle } => write!(
                f,
                "cycle {cycle}: {who} refused {requested}: AL status {status}, code {code}"
            ),
            Event::StartupFailed { who, error, cycle } => {
                write!(f, "cycle {cycle}: {who}: {error}")
            }
            Event::StartupSkipped { who, error, cycle } => {
                write!(f, "cycle {cycle}: {who}: {error}; going on without it")
            }
            Event::PdoWarning { who, warning, cycle: 0 } => {
                write!(f, "{who}: PDO configuration: {warning}")
            }
            Event::PdoWarning { who, warning, cycle } => {
                write!(f, "cycle {cycle}: {who}: PDO configuration: {warning}")
            }
            Event::PdoMismatch { who, code, differences, cycle } => write!(
                f,
                "cycle {cycle}: {who} refused SAFEOP (code {code}) and its PDOs differ from the application's configuration: {differences}"
            ),
            Event::WrongDevice { who, found, cycle } => write!(
                f,
                "cycle {cycle}: a different device (vendor 0x{:08X}, product 0x{:08X}) is now at the place of {who}; not configuring it",
                found.0, found.1
            ),
            Event::GroupConnected { name, members, cycle, .. } => write!(
                f,
                "cycle {cycle}: hot-connect group \"{name}\" ({}) connected; configuring it",
                positions(members)
            ),
            Event::GroupDisconnected { name, members, cycle, .. } => write!(
                f,
                "cycle {cycle}: hot-connect group \"{name}\" ({}) disconnected; the rest runs on",
                positions(members)
            ),
            Event::GroupReady { name, members, state, cycle, after_cycles, .. } => write!(
                f,
                "cycle {cycle}: hot-connect group \"{name}\" ({}) is in {state}, {after_cycles} cycles after it appeared",
                positions(members)
            ),
            Event::DcDelaysMeasured { measured, corrected, largest_change_ns, cycle } => write!(
                f,
                "cycle {cycle}: DC delays measured again after the bus changed: {measured} clocks, {corrected} delay(s) corrected (largest change {largest_change_ns} ns)"
            ),
        }
    }
}

/// One SubDevice as the supervisor sees it.
#[derive(Debug, Clone, Copy)]
pub struct SubState<'a> {
    /// What the scan found.
    pub info: &'a SubDevice,
    /// Last AL status read.
    pub status: AlStatus,
    /// Last AL status code read.
    pub code: AlStatusCode,
    /// Not answering.
    pub lost: bool,
    /// In the target state and watched by the cyclic probe only.
    pub running: bool,
}

impl fmt::Display for SubState<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lost {
            return write!(f, "{} (lost)", self.info.who());
        }
        let state = self
            .status
            .state()
            .map(|s| s.name().to_string())
            .unwrap_or_else(|| format!("0x{:02X}", self.status.state_bits()));
        let err = if crate::esm::refused(self.status, self.code) {
            "+ERR"
        } else {
            ""
        };
        write!(f, "{} ({state}{err}", self.info.who())?;
        if self.code.0 != 0 {
            write!(f, ", code {}", self.code)?;
        }
        f.write_str(")")
    }
}
