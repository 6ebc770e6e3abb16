//! The supervisor: brings every SubDevice to the requested state and keeps it there, while the
//! cyclic frames keep flowing.
//!
//! One small state machine per SubDevice, advanced once per cycle ([`Supervisor::poll`]); each
//! step is one datagram submitted to the acyclic [`FrameEngine`] (so it rides in the budgeted
//! acyclic frame of the cycle) and judged when its answer arrives. The same steps serve the
//! first bring-up and every recovery:
//!
//! `Reset (INIT+ack) → WaitInit → clear FMMUs/SMs → mailbox SMs → PREOP → startup requests →
//! process data SMs → FMMUs → SAFEOP → OP → Running`. The startup requests are mailbox
//! requests of any protocol (SDO downloads, SoE IDN writes ...; `sdo_step`), then the PDO
//! writes (`pdo_step`, warnings when refused), made on every (re)configuration.
//!
//! While everything is fine the supervisor sends nothing: the cyclic BRD of AL status (see
//! [`crate::cyclic`]) is the watchdog. When it shows a change, every running SubDevice reads
//! its AL status once; one that is not at the target is reset and walked up again, one that
//! does not answer is *lost* (reported with the cycle). A lost SubDevice's position is probed
//! every few milliseconds; when a device answers there with our station address or none
//! (power-cycled), it gets its address back and its identity is checked against the SII
//! (vendor, product, and the serial number when ours is not 0); if it matches it is configured
//! and returned to the target state, without disturbing the others. A device that does not
//! match (one from behind that moved up into the position and was power-cycled) gets station
//! address 0 back and is left alone; the lost SubDevice keeps waiting for its own device.
//!
//! A new target takes a running SubDevice there directly (OP → SAFEOP, OP → PREOP,
//! SAFEOP → PREOP, and up from PREOP or SAFEOP through the usual steps; INIT through the
//! reset). Commands given per transition ([`cmds`], e.g. an
//! ENI's init commands) run around these steps: those of `X → INIT` before and after the
//! reset, INIT → PREOP's after the FMMUs and SMs are cleared, PREOP → SAFEOP's after the
//! FMMUs, and every other transition's before its request; the `after` ones once the state is
//! reached.

use crate::config::SubDeviceConfig;
use crate::frame::{FrameEngine, Handle, Status};
use crate::mailbox::exchange::MailboxArea;
use crate::mailbox::job::MailboxJob;
use crate::mailbox::op::MailboxOp;
use crate::subdevice::SubDevice;
use ecat_wire::al::{AlControl, AlState, AlStatus, AlStatusCode};
use ecat_wire::register::{self as reg, eeprom as ee, FmmuRepr, SmRepr};
use ecat_wire::Command;
use std::collections::VecDeque;

mod cmds;
mod dc_join;
mod event;
mod groups;
mod pdo_step;
mod sdo_step;
mod steps;
pub use cmds::{CmdOp, RegisterCmd, TransitionCmd, Validate};
pub use event::{Event, SubState};

/// `since` of a transition command not sent yet.
const UNSENT: u64 = u64::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Check,
    Lost {
        next_probe: u64,
    },
    Probe,
    Readdress,
    IdentCmd,
    IdentPoll,
    /// Read the serial number (SII word 0x0E) of a found SubDevice whose known serial is not 0.
    IdentSerialCmd,
    IdentSerialPoll,
    /// A found device is not this SubDevice: give its station address back (0) and stay lost.
    Unclaim,
    /// Step `n` of setting the clock of a SubDevice that lost power (see [`dc_join`]).
    DcJoin(u8),
    Reset,
    WaitInit,
    ClearFmmus,
    ClearSms,
    /// Transition command `k` (see [`cmds`]) of `from → to`, sent `tries` times, first at
    /// `since`.
    Cmd {
        k: usize,
        tries: u32,
        since: u64,
        from: Option<AlState>,
        to: AlState,
        after: bool,
    },
    Mailbox,
    Request(AlState),
    Wait(AlState),
    Startup(usize),
    Sync0(u8),
    PdSm(usize),
    Fmmus,
    Backoff {
        until: u64,
    },
}

#[derive(Debug)]
struct Sub {
    info: SubDevice,
    config: SubDeviceConfig,
    fmmus: Vec<FmmuRepr>,
    phase: Phase,
    pending: Option<Handle>,
    /// Standard mailbox, if any (for startup SDOs and the other startup requests).
    mailbox: Option<MailboxArea>,
    /// Mailbox requests to make in PREOP before SAFEOP (SDO downloads, SoE IDN writes ...;
    /// replayed on every reconfiguration).
    startup: Vec<MailboxOp>,
    /// `startup[optional_from..]` are optional: one that fails is reported and passed over.
    optional_from: usize,
    /// The PDO writes among the startup requests, if any (see [`pdo_step`]).
    pdo: Option<Box<pdo_step::PdoState>>,
    /// The startup request (or mailbox transition command) in progress.
    job: Option<MailboxJob>,
    /// SYNC0 to program in PREOP (activation byte for 0x0981).
    sync0: Option<u8>,
    /// Commands made at state transitions, on every (re)configuration.
    cmds: Vec<TransitionCmd>,
    /// The state left by the transition in progress (`None`: unknown).
    from: Option<AlState>,
    /// SYNC1 cycle register value (0x09A4, ns) written with the SYNC0 cycle, if set.
    sync1: Option<u32>,
    /// The identity (vendor, product, serial) of the other device last found at this
    /// SubDevice's position while it was lost (reported once, not at every probe).
    wrong_seen: Option<(u32, u32, u32)>,
    lost_at_cycle: u64,
    /// Found again after losing power: its distributed clock is set up again (see
    /// [`dc_join`]) before it is configured.
    dc_join: bool,
    /// The system time offset (0x0920) computed for it.
    dc_offset: u64,
    /// When the datagram last judged was sent (see [`FrameEngine::sent_at`]).
    sent_at: u64,
    wait_deadline: u64,
    status: AlStatus,
    code: AlStatusCode,
    /// Highest state this SubDevice is taken to (e.g. PREOP for one the application does
    /// not configure).
    limit: AlState,
    /// The hot-connect group it belongs to, if any (see [`groups`]).
    group: Option<u16>,
}

/// Timing of the supervisor (nanoseconds).
#[derive(Debug, Clone, Copy)]
pub struct SupervisorTiming {
    /// How long a SubDevice may take for one state change.
    pub transition_timeout: u64,
    /// How often a lost SubDevice's position is probed.
    pub probe_interval: u64,
    /// Pause after a refused transition before trying again.
    pub backoff: u64,
}

impl Default for SupervisorTiming {
    fn default() -> Self {
        SupervisorTiming {
            transition_timeout: 5_000_000_000,
            probe_interval: 10_000_000,
            backoff: 1_000_000_000,
        }
    }
}

/// The per-SubDevice state machines. See the module documentation.
#[derive(Debug)]
pub struct Supervisor {
    subs: Vec<Sub>,
    target: AlState,
    events: VecDeque<Event>,
    timing: SupervisorTiming,
    /// Probe result that counts as "all well" (WKC, state bits).
    expected_probe: (u16, u16),
    /// SYNC0 cycle and shift (ns) when distributed clocks are on.
    sync0: Option<(u64, u64)>,
    /// The reference clock's time expected at the last cycle's send, and that instant (local
    /// ns).
    dc_now: Option<(u64, u64)>,
    /// Lost SubDevices are probed (false only for the fault campaigns' planted bug).
    recovery: bool,
    /// Every SubDevice was running with nothing in flight after the last poll: until the
    /// AL probe or a setting changes that, a poll has nothing to do (O(1) per cycle on a
    /// healthy bus instead of a walk over every SubDevice).
    quiet: bool,
    /// Hot-connect groups (see [`groups`]).
    groups: Vec<groups::Group>,
    /// Hot-connect groups that became ready or left (see [`Supervisor::topology_changes`]).
    topology_changes: u64,
}

const MAX_EVENTS: usize = 1024;

impl Supervisor {
    /// Supervise `subs` with their process data `configs` and FMMU programming, starting every
    /// one from a reset towards `target`.
    pub fn new(
        subs: Vec<SubDevice>,
        configs: Vec<SubDeviceConfig>,
        fmmus: Vec<Vec<FmmuRepr>>,
        startup: Vec<(Option<MailboxArea>, Vec<MailboxOp>)>,
        target: AlState,
        timing: SupervisorTiming,
    ) -> Supervisor {
        let subs = subs
            .into_iter()
            .zip(configs)
            .zip(fmmus)
            .zip(startup)
            .map(|(((info, config), fmmus), (mailbox, startup))| Sub {
                status: info.al_status,
                code: info.al_status_code,
                info,
                config,
                fmmus,
                phase: Phase::Reset,
                pending: None,
                mailbox,
                optional_from: startup.len(),
                startup,
                pdo: None,
                job: None,
                sync0: None,
                cmds: Vec::new(),
                from: None,
                sync1: None,
                wrong_seen: None,
                lost_at_cycle: 0,
                dc_join: false,
                dc_offset: 0,
                sent_at: 0,
                wait_deadline: 0,
                limit: AlState::Op,
                group: None,
            })
            .collect();
        let mut s = Supervisor {
            subs,
            target,
            events: VecDeque::with_capacity(MAX_EVENTS),
            timing,
            expected_probe: (0, 0),
            sync0: None,
            dc_now: None,
            recovery: true,
            quiet: false,
            groups: Vec::new(),
            topology_changes: 0,
        };
        s.update_expected_probe();
        s
    }

    /// The state every SubDevice is driven to.
    pub fn target(&self) -> AlState {
        self.target
    }

    /// Drive every SubDevice to `state` (walking up from INIT where needed).
    pub fn set_target(&mut self, state: AlState) {
        self.quiet = false;
        if state != self.target {
            self.target = state;
            for s in &mut self.subs {
                if matches!(s.phase, Phase::Running) {
                    s.phase = Phase::Check;
                }
            }
            self.update_expected_probe();
        }
    }

    /// Take the SubDevice at `position` no higher than `limit` (the target still applies when
    /// it is lower). IgH keeps SubDevices without an application configuration in PREOP.
    pub fn set_limit(&mut self, position: usize, limit: AlState) {
        self.quiet = false;
        if let Some(s) = self.subs.get_mut(position) {
            s.limit = limit;
            if matches!(s.phase, Phase::Running) {
                s.phase = Phase::Check;
            }
        }
    }

    /// The state SubDevice `i` is driven to: the target, capped by its limit.
    fn target_of(&self, i: usize) -> AlState {
        self.target.min(self.subs[i].limit)
    }

    /// True if every SubDevice is running in the target state (members of absent hot-connect
    /// groups aside).
    pub fn all_running(&self) -> bool {
        (0..self.subs.len())
            .all(|i| self.subs[i].phase == Phase::Running || self.in_absent_group(i))
    }

    /// Test-only switch (the fault campaigns' planted bug): never probe a lost SubDevice
    /// again, so one that leaves the ring stays lost. Not for applications.
    #[doc(hidden)]
    pub fn disable_recovery(&mut self) {
        self.recovery = false;
    }

    /// Number of SubDevices currently lost.
    pub fn lost_count(&self) -> usize {
        self.subs
            .iter()
            .filter(|s| matches!(s.phase, Phase::Lost { .. } | Phase::Probe))
            .count()
    }

    /// What the supervisor knows of each SubDevice, by position.
    pub fn states(&self) -> impl Iterator<Item = SubState<'_>> {
        self.subs.iter().map(|s| SubState {
            info: &s.info,
            status: s.status,
            code: s.code,
            lost: matches!(s.phase, Phase::Lost { .. } | Phase::Probe),
            running: s.phase == Phase::Running,
        })
    }

    /// Take the next event, if any.
    #[inline]
    pub fn next_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    fn emit(&mut self, e: Event) {
        if self.events.len() == MAX_EVENTS {
            self.events.pop_front();
        }
        self.events.push_back(e);
    }

    /// The probe answer that means "nothing changed": WKC = SubDevices present, data = OR of
    /// their last known AL status words.
    fn update_expected_probe(&mut self) {
        let present = self
            .subs
            .iter()
            .filter(|s| !matches!(s.phase, Phase::Lost { .. } | Phase::Probe));
        let (n, or) = present.fold((0u16, 0u16), |(n, or), s| (n + 1, or | s.status.0));
        self.expected_probe = (n, or);
    }

    /// Advance every state machine by at most one step. `probe` is the cyclic AL-status probe
    /// of the cycle that just ended (OR of states, WKC), if the cyclic frames carry one.
    pub fn poll(
        &mut self,
        engine: &mut FrameEngine,
        now: u64,
        cycle: u64,
        probe: Option<(u16, u16)>,
        mailbox_counters: &mut [u8],
        dc_now: Option<(u64, u64)>,
    ) {
        if dc_now.is_some() {
            self.dc_now = dc_now;
        }
        if let Some((status, wkc)) = probe {
            let (want_wkc, want_state) = self.expected_probe;
            if wkc != want_wkc || status != want_state {
                self.quiet = false;
                for s in &mut self.subs {
                    if s.phase == Phase::Running {
                        s.phase = Phase::Check;
                    }
                }
                // A lost SubDevice may be back: probe now rather than at the next interval.
                if wkc > want_wkc {
                    for s in &mut self.subs {
                        if let Phase::Lost { .. } = s.phase {
                            s.phase = Phase::Lost { next_probe: now };
                        }
                    }
                }
            }
        }
        if self.quiet {
            return;
        }
        for i in 0..self.subs.len() {
            if self.sdo_phase(i) {
                let c = mailbox_counters.get_mut(i);
                let mut spare = 0;
                self.step_sdo(i, engine, now, cycle, c.unwrap_or(&mut spare));
            } else {
                self.step(i, engine, now, cycle);
            }
        }
        if !self.groups.is_empty() {
            self.check_groups_ready(cycle);
        }
        self.quiet = self
            .subs
            .iter()
            .all(|s| s.phase == Phase::Running && s.pending.is_none());
    }

    /// Program SYNC0 (cycle and shift in ns) on the SubDevices whose SII asks for it
    /// (`assign_activate` per position; 0 = none), every time they are configured.
    pub fn set_sync0(&mut self, cycle_ns: u64, shift_ns: u64, assign_activate: &[u16]) {
        self.quiet = false;
        self.sync0 = Some((cycle_ns, shift_ns));
        for (s, &aa) in self.subs.iter_mut().zip(assign_activate) {
            s.sync0 = (aa & 0x0300 != 0).then_some((aa >> 8) as u8);
        }
    }

    /// Write `cycle_ns` into the SYNC1 cycle register (0x09A4) of the SubDevice at `position`
    /// together with the SYNC0 cycle, whenever its SYNC0 is programmed (its AssignActivate
    /// decides whether SYNC1 is activated in 0x0981).
    pub fn set_sync1(&mut self, position: usize, cycle_ns: u32) {
        self.quiet = false;
        if let Some(s) = self.subs.get_mut(position) {
            s.sync1 = Some(cycle_ns);
        }
    }

    /// Register writes (address, data) to make on the SubDevice at `position` in INIT, before
    /// its mailbox is set up, every time it is configured (e.g. the C API's watchdog
    /// settings): INIT → PREOP transition commands (FPWR, working counter 1) placed before
    /// the commands already set.
    pub fn set_register_writes(&mut self, position: usize, writes: Vec<(u16, Vec<u8>)>) {
        self.quiet = false;
        let Some(s) = self.subs.get_mut(position) else {
            return;
        };
        let mut cmds: Vec<TransitionCmd> = writes
            .into_iter()
            .map(|(ado, data)| TransitionCmd {
                from: AlState::Init,
                to: AlState::PreOp,
                after: false,
                label: format!("register write (FPWR 0x{ado:04x}, {} bytes)", data.len()),
                op: CmdOp::Register(RegisterCmd {
                    command: ecat_wire::Command::Fpwr,
                    ado,
                    logical: 0,
                    data,
                    expected_wkc: Some(1),
                    retries: 3,
                    validate: None,
                }),
            })
            .collect();
        cmds.append(&mut s.cmds);
        s.cmds = cmds;
        if s.phase == Phase::Reset {
            self.subs[position].phase = self.reset_phase(position);
        }
    }

    /// Commands to make on the SubDevice at `position` at its state transitions, every time
    /// it is configured (see [`cmds`]; e.g. an ENI's init commands), in the order given per
    /// transition.
    pub fn set_transition_cmds(&mut self, position: usize, cmds: Vec<TransitionCmd>) {
        self.quiet = false;
        if position >= self.subs.len() {
            return;
        }
        self.subs[position].cmds = cmds;
        if self.subs[position].phase == Phase::Reset {
            self.subs[position].phase = self.reset_phase(position);
        }
    }

    /// The process data configuration of the SubDevice at `position`.
    pub fn config(&self, position: usize) -> Option<&SubDeviceConfig> {
        self.subs.get(position).map(|s| &s.config)
    }

    /// True while the SubDevice at `position` runs with its FMMUs programmed (SAFEOP or OP
    /// reached and kept), so what they map into the cyclic frames is its own.
    pub fn fmmus_mapped(&self, position: usize) -> bool {
        self.subs.get(position).is_some_and(|s| {
            s.phase == Phase::Running && s.status.state().is_some_and(|st| st >= AlState::SafeOp)
        })
    }

    /// True while the supervisor uses the SubDevice's mailbox (startup requests, mailbox
    /// transition commands), or while its mailbox is not set up: from a reset (or loss) until
    /// PREOP is reached, a message written would be lost when the SyncManagers are cleared and
    /// configured again.
    pub fn mailbox_busy(&self, position: usize) -> bool {
        let Some(s) = self.subs.get(position) else {
            return false;
        };
        self.sdo_phase(position)
            || matches!(
                s.phase,
                Phase::Lost { .. }
                    | Phase::Probe
                    | Phase::Readdress
                    | Phase::IdentCmd
                    | Phase::IdentPoll
                    | Phase::DcJoin(_)
                    | Phase::Reset
                    | Phase::WaitInit
                    | Phase::ClearFmmus
                    | Phase::ClearSms
                    | Phase::Cmd {
                        to: AlState::Init | AlState::PreOp,
                        ..
                    }
                    | Phase::Mailbox
                    | Phase::Request(AlState::Init | AlState::PreOp)
                    | Phase::Wait(AlState::Init | AlState::PreOp)
                    | Phase::Backoff { .. }
            )
    }
}
