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
//! requests of any protocol (SDO downloads, SoE IDN writes ...; `sdo_step`), made on every
//! (re)configuration.
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
mod sdo_step;
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

    /// After PREOP work (startup SDOs done): process data SMs, FMMUs, or SAFEOP.
    fn after_startup(&self, i: usize) -> Phase {
        if self.subs[i].sync0.is_some() && self.sync0.is_some() {
            Phase::Sync0(0)
        } else {
            self.after_sync0(i)
        }
    }

    /// After SYNC0 programming: process data SMs, FMMUs, or SAFEOP.
    fn after_sync0(&self, i: usize) -> Phase {
        if !self.subs[i].config.sync.is_empty() {
            Phase::PdSm(0)
        } else {
            self.fmmus_or_safeop(i)
        }
    }

    fn step(&mut self, i: usize, engine: &mut FrameEngine, now: u64, cycle: u64) {
        // 1. Judge the answer to the datagram in flight, if it has come.
        if let Some(h) = self.subs[i].pending {
            match engine.status(h) {
                Status::Pending => return,
                Status::Done if matches!(self.subs[i].phase, Phase::Cmd { .. }) => {
                    let (d, w) = engine.response(h).unwrap_or((&[], 0));
                    self.judge_cmd(i, d, w, now, cycle);
                    engine.release(h);
                    self.subs[i].pending = None;
                }
                Status::Done => {
                    let mut buf = [0u8; 24];
                    self.subs[i].sent_at = engine.sent_at(h).unwrap_or(now);
                    let (n, wkc) = match engine.response(h) {
                        Some((d, w)) => {
                            let n = d.len().min(24);
                            buf[..n].copy_from_slice(&d[..n]);
                            (n, w)
                        }
                        None => (0, 0),
                    };
                    engine.release(h);
                    self.subs[i].pending = None;
                    self.judge(i, &buf[..n], wkc, now, cycle);
                }
                Status::Failed | Status::Stale => {
                    engine.release(h);
                    self.subs[i].pending = None;
                    self.lose(i, now, cycle);
                }
            }
        }
        // 2. Submit the datagram of the current phase.
        if matches!(self.subs[i].phase, Phase::Cmd { .. }) {
            if self.subs[i].pending.is_none() {
                self.send_cmd(i, engine, now, cycle);
            }
            return;
        }
        if let Some((cmd, adp, ado, data, len)) = self.request(i, now) {
            let payload = &data[..len];
            if let Ok(h) = engine.submit_with(cmd, adp as u32 | (ado as u32) << 16, payload, 2) {
                self.subs[i].pending = Some(h);
            }
        }
    }

    fn lose(&mut self, i: usize, now: u64, cycle: u64) {
        let s = &mut self.subs[i];
        if matches!(s.phase, Phase::Lost { .. } | Phase::Probe) {
            s.phase = Phase::Lost {
                next_probe: now + self.timing.probe_interval,
            };
            return;
        }
        s.phase = Phase::Lost {
            next_probe: now + self.timing.probe_interval,
        };
        s.lost_at_cycle = cycle;
        if !self.group_member_lost(i, cycle) {
            let who = self.subs[i].info.who();
            self.emit(Event::Lost { who, cycle });
        }
        self.update_expected_probe();
    }

    /// The datagram for the current phase: (command, ADP, ADO, data buffer, length).
    fn request(&mut self, i: usize, now: u64) -> Option<(Command, u16, u16, [u8; 256], usize)> {
        // The common case first, before the 256-byte buffer is zeroed: on a large healthy bus
        // this runs for every SubDevice every cycle.
        if matches!(
            self.subs[i].phase,
            Phase::Running | Phase::Probe | Phase::Startup(_) | Phase::Cmd { .. }
        ) {
            return None;
        }
        if !self.recovery && matches!(self.subs[i].phase, Phase::Lost { .. }) {
            return None;
        }
        let bus_position = self.bus_position(i);
        let s = &mut self.subs[i];
        let st = s.info.station;
        let mut d = [0u8; 256];
        let mut put = |bytes: &[u8]| {
            d[..bytes.len()].copy_from_slice(bytes);
            bytes.len()
        };
        let (cmd, adp, ado, len) = match s.phase {
            Phase::Running => return None,
            Phase::Lost { next_probe } => {
                if now < next_probe {
                    return None;
                }
                s.phase = Phase::Probe;
                (
                    Command::Aprd,
                    0u16.wrapping_sub(bus_position),
                    reg::STATION_ADDRESS,
                    put(&[0, 0]),
                )
            }
            Phase::Probe | Phase::Startup(_) | Phase::Cmd { .. } => return None,
            Phase::Backoff { until } => {
                if now < until {
                    return None;
                }
                self.subs[i].phase = self.reset_phase(i);
                return None;
            }
            Phase::Check | Phase::WaitInit | Phase::Wait(_) => {
                (Command::Fprd, st, reg::AL_STATUS, put(&[0; 6]))
            }
            Phase::Readdress => (
                Command::Apwr,
                0u16.wrapping_sub(bus_position),
                reg::STATION_ADDRESS,
                put(&st.to_le_bytes()),
            ),
            Phase::IdentCmd => {
                let mut c = [0u8; 6];
                c[0..2].copy_from_slice(&ee::CMD_READ.to_le_bytes());
                c[2..4].copy_from_slice(&ecat_wire::sii::word::VENDOR_ID.to_le_bytes());
                (Command::Fpwr, st, reg::EEPROM_CONTROL, put(&c))
            }
            Phase::IdentSerialCmd => {
                let mut c = [0u8; 6];
                c[0..2].copy_from_slice(&ee::CMD_READ.to_le_bytes());
                c[2..4].copy_from_slice(&ecat_wire::sii::word::SERIAL.to_le_bytes());
                (Command::Fpwr, st, reg::EEPROM_CONTROL, put(&c))
            }
            Phase::IdentPoll | Phase::IdentSerialPoll => {
                (Command::Fprd, st, reg::EEPROM_CONTROL, put(&[0; 14]))
            }
            Phase::Unclaim => (Command::Fpwr, st, reg::STATION_ADDRESS, put(&[0, 0])),
            Phase::DcJoin(step) => {
                let (cmd, ado, bytes, n) = dc_join::request(&s.info, step, s.dc_offset);
                (cmd, st, ado, put(&bytes[..n]))
            }
            Phase::Reset => {
                s.from = s.status.state();
                let c = AlControl::request(AlState::Init, true).0.to_le_bytes();
                (Command::Fpwr, st, reg::AL_CONTROL, put(&c))
            }
            Phase::ClearFmmus => {
                let n = (s.info.fmmu_count.clamp(1, 16) as usize) * FmmuRepr::LEN;
                (Command::Fpwr, st, reg::FMMU0, put(&[0u8; 256][..n]))
            }
            Phase::ClearSms => {
                let n = (s.info.sm_count.clamp(1, 16) as usize) * SmRepr::LEN;
                (Command::Fpwr, st, reg::SM0, put(&[0u8; 128][..n]))
            }
            Phase::Mailbox => {
                let m = s.info.mailbox;
                let ctrl = |n: usize, def: u8| {
                    s.info
                        .sync_managers
                        .get(n)
                        .map(|x| x.control)
                        .filter(|&c| c != 0)
                        .unwrap_or(def)
                };
                let mut b = [0u8; 16];
                let sm0 = SmRepr {
                    start: m.rx.offset,
                    length: m.rx.size,
                    control: ctrl(0, 0x26),
                    activate: 1,
                    ..Default::default()
                };
                let tx_len = if m.tx.size == 0 { m.rx.size } else { m.tx.size };
                let sm1 = SmRepr {
                    start: m.tx.offset,
                    length: tx_len,
                    control: ctrl(1, 0x22),
                    activate: 1,
                    ..Default::default()
                };
                let _ = sm0.emit(&mut b[..8]);
                let _ = sm1.emit(&mut b[8..]);
                (Command::Fpwr, st, reg::SM0, put(&b))
            }
            Phase::Request(state) => {
                let ack = crate::esm::refused(s.status, s.code);
                s.from = s.status.state();
                let c = AlControl::request(state, ack).0.to_le_bytes();
                s.wait_deadline = now + self.timing.transition_timeout;
                (Command::Fpwr, st, reg::AL_CONTROL, put(&c))
            }
            Phase::Sync0(step) => {
                let (cycle, shift) = self.sync0.unwrap_or((1_000_000, 0));
                let act = s.sync0.unwrap_or(0x03);
                match step {
                    0 => (Command::Fpwr, st, reg::DC_ACTIVATION, put(&[0])),
                    1 => {
                        // Start 50 ms (or 10 cycles) ahead, aligned to the cycle.
                        let now = self.reference_time_at(now)?;
                        let lead = (cycle * 10).max(50_000_000);
                        let start = crate::dc::setup::sync0_start(now, cycle, shift, lead);
                        (
                            Command::Fpwr,
                            st,
                            reg::DC_START_TIME,
                            put(&start.to_le_bytes()),
                        )
                    }
                    2 => {
                        let mut b = [0u8; 8];
                        b[..4].copy_from_slice(&(cycle as u32).to_le_bytes());
                        let n = match s.sync1 {
                            Some(c1) => {
                                b[4..].copy_from_slice(&c1.to_le_bytes());
                                8
                            }
                            None => 4,
                        };
                        (Command::Fpwr, st, reg::DC_SYNC0_CYCLE, put(&b[..n]))
                    }
                    _ => (Command::Fpwr, st, reg::DC_ACTIVATION, put(&[act])),
                }
            }
            Phase::PdSm(k) => {
                let sync = &s.config.sync[k];
                let mut b = [0u8; 8];
                let _ = SubDeviceConfig::sm_register(&s.info, sync).emit(&mut b);
                (Command::Fpwr, st, reg::sm(sync.index), put(&b))
            }
            Phase::Fmmus => {
                let mut b = [0u8; 256];
                for (n, f) in s.fmmus.iter().enumerate().take(16) {
                    let _ = f.emit(&mut b[n * 16..n * 16 + 16]);
                }
                (
                    Command::Fpwr,
                    st,
                    reg::FMMU0,
                    put(&b[..s.fmmus.len().min(16) * 16]),
                )
            }
        };
        Some((cmd, adp, ado, d, len))
    }

    /// The phase after `Mailbox`/`PREOP` work, depending on the target.
    fn after(&self, i: usize, reached: AlState) -> Phase {
        let s = &self.subs[i];
        let target = self.target_of(i);
        match reached {
            AlState::Init if target == AlState::Init => Phase::Running,
            AlState::Init => Phase::ClearFmmus,
            AlState::PreOp | AlState::Boot if target <= AlState::PreOp => Phase::Running,
            AlState::PreOp | AlState::Boot if !s.startup.is_empty() => Phase::Startup(0),
            AlState::PreOp | AlState::Boot => self.after_startup(i),
            AlState::SafeOp if target == AlState::Op => self.request_to(i, AlState::Op),
            _ => Phase::Running,
        }
    }

    /// FMMUs next, or straight to SAFEOP when the SubDevice has none (a coupler).
    fn fmmus_or_safeop(&self, i: usize) -> Phase {
        if self.subs[i].fmmus.is_empty() {
            self.with_cmds(i, Some(AlState::PreOp), AlState::SafeOp, false)
        } else {
            Phase::Fmmus
        }
    }

    fn judge(&mut self, i: usize, d: &[u8], wkc: u16, now: u64, cycle: u64) {
        let phase = self.subs[i].phase;
        if wkc == 0 && phase != Phase::Probe {
            self.lose(i, now, cycle);
            return;
        }
        let next = match phase {
            Phase::Probe => {
                if wkc == 0 {
                    self.lose(i, now, cycle);
                    return;
                }
                let found = u16::from_le_bytes([d[0], d[1]]);
                let s = &mut self.subs[i];
                if found != 0 && found != s.info.station {
                    // Someone else sits at this position now (the ring is shorter).
                    self.lose(i, now, cycle);
                    return;
                }
                let who = s.info.who();
                let gone = cycle.saturating_sub(s.lost_at_cycle);
                if !self.group_member_found(i, cycle) {
                    self.emit(Event::Found {
                        who,
                        cycle,
                        gone_cycles: gone,
                    });
                }
                // At address 0 it lost power: new address, and its clock set up again.
                let s = &mut self.subs[i];
                if found == 0 {
                    s.dc_join = s.info.dc.is_some_and(|d| d.system_time);
                    s.phase = Phase::Readdress;
                } else {
                    s.phase = Phase::IdentCmd;
                }
                self.update_expected_probe();
                return;
            }
            Phase::Readdress => Phase::IdentCmd,
            Phase::IdentCmd => Phase::IdentPoll,
            Phase::IdentSerialCmd => Phase::IdentSerialPoll,
            Phase::IdentPoll | Phase::IdentSerialPoll => {
                let status = u16::from_le_bytes([d[0], d[1]]);
                let serial_step = phase == Phase::IdentSerialPoll;
                if status & ee::BUSY != 0 {
                    phase
                } else if status & ee::ERR_MASK != 0 {
                    match serial_step {
                        true => Phase::IdentSerialCmd,
                        false => Phase::IdentCmd,
                    }
                } else {
                    let first = u32::from_le_bytes([d[6], d[7], d[8], d[9]]);
                    let eight = status & ee::READ_8_BYTES != 0;
                    let second = u32::from_le_bytes([d[10], d[11], d[12], d[13]]);
                    let id = self.subs[i].info.identity;
                    // Its state is not known (power-cycled, or kept): no `X → INIT`
                    // commands before the reset.
                    self.subs[i].status = AlStatus(0);
                    let found = match serial_step {
                        false => (
                            first,
                            if eight { second } else { id.product_code },
                            id.serial,
                        ),
                        true => (id.vendor_id, id.product_code, first),
                    };
                    if found.0 != id.vendor_id || found.1 != id.product_code || found.2 != id.serial
                    {
                        // Another device sits at this position (e.g. one from behind, moved up
                        // and power-cycled while this one is away): hand its address back and
                        // go on waiting for ours.
                        let who = self.subs[i].info.who();
                        if self.subs[i].wrong_seen != Some(found) {
                            self.subs[i].wrong_seen = Some(found);
                            self.emit(Event::WrongDevice {
                                who,
                                found: (found.0, if eight || serial_step { found.1 } else { 0 }),
                                cycle,
                            });
                        }
                        Phase::Unclaim
                    } else if !serial_step && id.serial != 0 {
                        Phase::IdentSerialCmd
                    } else {
                        self.subs[i].wrong_seen = None;
                        self.after_identity(i)
                    }
                }
            }
            Phase::Unclaim => {
                self.subs[i].phase = Phase::Lost {
                    next_probe: now + self.timing.probe_interval,
                };
                self.update_expected_probe();
                return;
            }
            Phase::DcJoin(step) => self.dc_join_judge(i, step, d),
            Phase::Reset => Phase::WaitInit,
            Phase::ClearFmmus => Phase::ClearSms,
            Phase::ClearSms if self.target_of(i) >= AlState::PreOp => {
                self.with_cmds(i, Some(AlState::Init), AlState::PreOp, false)
            }
            Phase::ClearSms => Phase::Running,
            Phase::Mailbox => Phase::Request(AlState::PreOp),
            Phase::Sync0(step) if step < 3 => Phase::Sync0(step + 1),
            Phase::Sync0(_) => self.after_sync0(i),
            Phase::Request(s) => Phase::Wait(s),
            Phase::PdSm(k) => {
                if k + 1 < self.subs[i].config.sync.len() {
                    Phase::PdSm(k + 1)
                } else {
                    self.fmmus_or_safeop(i)
                }
            }
            Phase::Fmmus => self.with_cmds(i, Some(AlState::PreOp), AlState::SafeOp, false),
            Phase::Check | Phase::WaitInit | Phase::Wait(_) => {
                let status = AlStatus(u16::from_le_bytes([d[0], d[1]]));
                let code = AlStatusCode(u16::from_le_bytes([d[4], d[5]]));
                let s = &mut self.subs[i];
                let changed = s.status != status;
                s.status = status;
                s.code = code;
                if changed {
                    self.update_expected_probe();
                }
                let target = self.target_of(i);
                let s = &mut self.subs[i];
                let want = match phase {
                    Phase::WaitInit => AlState::Init,
                    Phase::Wait(w) => w,
                    _ => target,
                };
                if crate::esm::settled(status, code, want) {
                    if phase == Phase::Check {
                        Phase::Running
                    } else {
                        if want == target && phase != Phase::WaitInit {
                            let who = s.info.who();
                            self.emit(Event::Reached {
                                who,
                                state: want,
                                cycle,
                            });
                        }
                        let from = self.subs[i].from;
                        self.with_cmds(i, from, want, true)
                    }
                } else if phase == Phase::Check {
                    match status.state() {
                        // Above the target without an error: step down directly.
                        Some(now_in)
                            if !status.error()
                                && now_in > target
                                && target > AlState::Init
                                && now_in != AlState::Boot =>
                        {
                            self.request_to(i, target)
                        }
                        // Below it without an error, mailbox up: go on from there.
                        Some(now_in)
                            if !status.error()
                                && now_in < target
                                && now_in >= AlState::PreOp
                                && now_in != AlState::Boot =>
                        {
                            self.after(i, now_in)
                        }
                        // Else walk it up again from INIT.
                        _ => self.reset_phase(i),
                    }
                } else if (crate::esm::refused(status, code) || now > s.wait_deadline)
                    && phase != Phase::WaitInit
                {
                    let who = s.info.who();
                    self.emit(Event::Refused {
                        who,
                        requested: want,
                        status,
                        code,
                        cycle,
                    });
                    Phase::Backoff {
                        until: now + self.timing.backoff,
                    }
                } else {
                    phase
                }
            }
            Phase::Running
            | Phase::Lost { .. }
            | Phase::Backoff { .. }
            | Phase::Startup(_)
            | Phase::Cmd { .. } => phase,
        };
        self.subs[i].phase = next;
    }
}
