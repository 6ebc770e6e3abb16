//! The activated MainDevice: process data every cycle, IgH-style.
//!
//! [`Runtime`] owns the link, the acyclic frame engine, the domains, the cyclic frame templates
//! and the supervisor. The application's cycle is IgH's:
//! [`receive`](Runtime::receive) → [`process`](Runtime::process) → read inputs / write outputs →
//! [`send`](Runtime::send); or [`cycle`](Runtime::cycle) for all of it, or
//! [`tx_rx`](Runtime::tx_rx) to send and wait for the frames to come back (the round trip).
//!
//! `send` transmits the cyclic frames first, then the acyclic frames (the supervisor's work and
//! any queued requests, which [`Runtime::prepare_acyclic`] can do ahead, in the slack after the
//! frames return), so acyclic work never delays process data. The acyclic frames of one
//! cycle are held to a byte budget (as IgH sizes its datagram queue to what the link carries in
//! a send interval): [`DEFAULT_CYCLE_BYTES`] less the cyclic bytes, and at least one frame. A
//! thousand SubDevices thus come up in a few dozen cycles instead of hundreds, and a quiet bus
//! still sends at most one small frame.
//!
//! Mailbox status in the process image (as TwinCAT does): every mailbox SubDevice with an FMMU
//! to spare gets one more FMMU mapping its SM1 status bit 3 ("mailbox full", register 0x080D)
//! to one bit of a small logical area after the domains, which one LRD in the cyclic frames
//! reads. The mailbox service ([`crate::mailbox::service`]) then reads an answer in the first
//! cycle it is there, sends nothing while a mailbox is empty, and picks up emergencies at any
//! time. Received frames
//! are told apart by their first datagram index (cyclic ones have bit 7). Nothing here
//! allocates per cycle.

mod acyclic;

use crate::clock::Clock;
use crate::config::SubDeviceConfig;
use crate::cyclic::{CyclicCounters, CyclicDc, CyclicFrames, Extras};
use crate::dc::{DcMode, DcRuntime, PhaseLock};
use crate::domain::{layout, Domain};
use crate::error::{Error, Result};
use crate::frame::{EngineConfig, EngineCounters, FrameEngine};
use crate::hotconnect::{resolve, GroupWkc, HotConnectGroup};
use crate::link::redundant_dc::RingDc;
use crate::link::{Link, LinkCounters};
use crate::mailbox::exchange::MailboxArea;
use crate::mailbox::op::MailboxOp;
use crate::mailbox::sdo::SdoOp;
use crate::mailbox::service::{MailboxClient, MailboxService, Target};
use crate::pdo_setup::{PdoPlan, PdoWrites};
use crate::subdevice::SubDevice;
use crate::supervisor::{Event, Supervisor, SupervisorTiming, TransitionCmd};
use ecat_wire::al::AlState;
use ecat_wire::register::FmmuRepr;

/// Bytes per cycle, cyclic and acyclic frames together, that [`Runtime::send`] keeps to by
/// default: 0.8 ms of a 100 Mbit/s link, so a 1 ms cycle keeps room for the round trip.
pub const DEFAULT_CYCLE_BYTES: usize = 10_000;

/// SM1 status register byte (0x080D) and its "mailbox full" bit.
const SM1_STATUS: u16 = 0x080D;
const MAILBOX_FULL_BIT: u8 = 3;

/// Give every mailbox SubDevice with an FMMU to spare one more, mapping its SM1 "mailbox full"
/// bit to bit n of a logical area starting at the first byte at or after `end`. Returns the
/// bit per SubDevice and the area (logical address, bytes), if any SubDevice got one.
fn map_mailbox_status(
    subs: &[SubDevice],
    fmmus: &mut [Vec<FmmuRepr>],
    end: u64,
) -> (Vec<Option<u32>>, Option<(u32, u16)>) {
    let base = end.min(u32::MAX as u64 - 0x1_0000) as u32;
    let mut n = 0u32;
    let bits = subs
        .iter()
        .zip(fmmus.iter_mut())
        .map(|(s, f)| {
            let spare = f.len() < (s.fmmu_count as usize).min(16);
            if !s.mailbox.present() || !spare || n >= 8 * 0x0800 {
                return None;
            }
            f.push(FmmuRepr {
                logical_start: base + n / 8,
                length: 1,
                logical_start_bit: (n % 8) as u8,
                logical_stop_bit: (n % 8) as u8,
                physical_start: SM1_STATUS,
                physical_start_bit: MAILBOX_FULL_BIT,
                kind: FmmuRepr::READ,
                enable: 1,
            });
            n += 1;
            Some(n - 1)
        })
        .collect();
    (bits, (n > 0).then(|| (base, n.div_ceil(8) as u16)))
}

/// The CoE mailbox area of a SubDevice, if it has CoE.
pub fn coe_area(s: &SubDevice) -> Option<MailboxArea> {
    mailbox_area(s).filter(|_| s.mailbox.protocols & 0x04 != 0)
}

/// The PDO plans per SubDevice (see [`crate::pdo_setup`]): the one for the first
/// configuration (against what the scan found) and the one for every later one (the device
/// may have lost power: everything it allows), or `None` where nothing needs writing.
fn pdo_plans(
    subs: &[SubDevice],
    requested: &[SubDeviceConfig],
    writes: PdoWrites,
) -> Vec<Option<(PdoPlan, PdoPlan)>> {
    let PdoWrites::Known(current) = writes else {
        return vec![None; subs.len()];
    };
    subs.iter()
        .zip(requested)
        .enumerate()
        .map(|(p, (s, want))| {
            let have = current.get(p).and_then(Option::as_ref);
            let first = crate::pdo_setup::plan(s, have, want);
            if first.ops.is_empty() && have.is_some() {
                // The request is what the device has by itself, or what it does not let us
                // change: nothing to write now or later (the differences are kept for a
                // refused SAFEOP).
                return (!first.differences.is_empty()).then(|| (first.clone(), first));
            }
            let mut again = crate::pdo_setup::plan(s, None, want);
            again.differences = first.differences.clone();
            Some((first, again))
        })
        .collect()
}

/// The standard mailbox area of a SubDevice, if it has a mailbox (any protocol).
pub fn mailbox_area(s: &SubDevice) -> Option<MailboxArea> {
    if !s.mailbox.present() {
        return None;
    }
    let tx = if s.mailbox.tx.size == 0 {
        s.mailbox.rx.size
    } else {
        s.mailbox.tx.size
    };
    Some(MailboxArea {
        station: s.station,
        out: (s.mailbox.rx.offset, s.mailbox.rx.size),
        inp: (s.mailbox.tx.offset, tx),
    })
}

/// Where a PDO entry lives in the process data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryLocation {
    /// Domain.
    pub domain: usize,
    /// Byte offset in the domain image.
    pub byte: usize,
    /// Bit offset within that byte (0 for byte-aligned entries).
    pub bit: u8,
    /// Length in bits.
    pub bits: u8,
}

impl EntryLocation {
    /// Read a byte-aligned little-endian value of up to 8 bytes from `image`.
    pub fn read(&self, image: &[u8]) -> u64 {
        let n = (self.bits as usize).div_ceil(8).min(8);
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&image[self.byte..self.byte + n]);
        u64::from_le_bytes(b)
    }

    /// Write a byte-aligned little-endian value of up to 8 bytes into `image`.
    pub fn write(&self, image: &mut [u8], value: u64) {
        let n = (self.bits as usize).div_ceil(8).min(8);
        image[self.byte..self.byte + n].copy_from_slice(&value.to_le_bytes()[..n]);
    }
}

/// How to activate.
#[derive(Debug, Clone)]
pub struct Activation {
    /// Process data configuration per SubDevice (by position); `None` = from the SII.
    pub configs: Option<Vec<SubDeviceConfig>>,
    /// SDO downloads per SubDevice (by position) made in PREOP before SAFEOP, replayed every
    /// time the SubDevice is configured again (e.g. PDO assignment and mapping).
    pub startup_sdos: Vec<Vec<SdoOp>>,
    /// Requests of the other mailbox protocols per SubDevice (by position; e.g. SoE IDN
    /// writes) made in PREOP after its startup SDOs, replayed the same way.
    pub startup_ops: Vec<Vec<MailboxOp>>,
    /// PDO assignment and mapping writes, made after the startup requests by IgH's rules
    /// (see [`crate::pdo_setup`]): only what differs from `configs`, only where the SII
    /// allows it, a refusal a warning.
    pub pdo_writes: PdoWrites,
    /// Last mailbox counter per SubDevice (continued from the configuration phase).
    pub mailbox_counters: Vec<u8>,
    /// Number of domains.
    pub domains: usize,
    /// State to bring every SubDevice to.
    pub target: AlState,
    /// Logical address of the first domain.
    pub logical_base: u32,
    /// Supervisor timing.
    pub timing: SupervisorTiming,
    /// Distributed clocks (after [`crate::MainDevice::configure_dc`]).
    pub dc: Option<DcRuntime>,
    /// AssignActivate word per SubDevice (by position) for SYNC0, replacing the SII's
    /// (the C API takes it from `ecrt_slave_config_dc`; 0 = no SYNC0). `None`: from the SII.
    pub sync0_assign: Option<Vec<u16>>,
    /// Hot-connect groups (see [`crate::hotconnect`]); positions the configuration names
    /// explicitly go in `fixed_positions`.
    pub hot_connect: Vec<HotConnectGroup>,
    /// Positions the configuration sets up explicitly (a hot-connect group may not include
    /// one).
    pub fixed_positions: Vec<usize>,
}

impl Default for Activation {
    fn default() -> Self {
        Activation {
            configs: None,
            startup_sdos: Vec::new(),
            startup_ops: Vec::new(),
            pdo_writes: PdoWrites::FromScan,
            mailbox_counters: Vec::new(),
            domains: 1,
            target: AlState::Op,
            logical_base: 0,
            timing: SupervisorTiming::default(),
            dc: None,
            sync0_assign: None,
            hot_connect: Vec::new(),
            fixed_positions: Vec::new(),
        }
    }
}

/// The MainDevice in its cyclic phase.
pub struct Runtime {
    link: Box<dyn Link>,
    engine: FrameEngine,
    clock: Clock,
    domains: Vec<Domain>,
    frames: CyclicFrames,
    supervisor: Supervisor,
    sdo: MailboxService,
    mailbox_counters: Vec<u8>,
    /// Bit in the mailbox status area per SubDevice (by position), if mapped.
    status_bit: Vec<Option<u32>>,
    /// The mailbox status bits as of cycle `status_cycle` (0: none yet).
    status: Vec<u8>,
    status_cycle: u64,
    rx: Vec<u8>,
    tx: Vec<u8>,
    cycle: u64,
    /// AL status probe of the cycle before the current send.
    probe: Option<(u16, u16)>,
    dc: Option<DcRuntime>,
    phase_lock: PhaseLock,
    correction_ns: i64,
    /// The reference clock's time last seen by a cyclic FRMW, and the send instant of its frame.
    dc_seen: Option<(u64, u64)>,
    /// The reference clock's time expected at the last send, and that send instant (see
    /// [`Runtime::send_cyclic`]).
    dc_expected: Option<(u64, u64)>,
    last_send: u64,
    /// The control socket's endpoint (see [`crate::control`]), served once per send.
    control: Option<crate::control::shared::Endpoint>,
    /// Bytes per cycle for cyclic and acyclic frames together (see [`DEFAULT_CYCLE_BYTES`]).
    cycle_bytes: usize,
    /// DC across a broken ring (redundant links with DC only).
    ring_dc: Option<RingDc>,
    /// The next acyclic step was done ahead ([`Runtime::prepare_acyclic`]).
    prepared: bool,
    /// Acyclic frames out that have not come back.
    acyclic_out: u32,
    /// The hot-connect groups' shares of the domains' working counters.
    groups: GroupWkc,
    /// With DC and hot-connect groups: the delays measured again when a group joins or leaves.
    dc_remeasure: Option<crate::dc::remeasure::DcRemeasure>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("cycle", &self.cycle)
            .finish()
    }
}

impl Runtime {
    /// Build the runtime from a scanned bus. The SubDevices are walked up to the target by the
    /// supervisor while the application cycles.
    pub fn new(
        link: Box<dyn Link>,
        engine: FrameEngine,
        clock: Clock,
        subs: Vec<SubDevice>,
        act: Activation,
    ) -> Result<Runtime> {
        let configs = match act.configs {
            Some(c) if c.len() == subs.len() => c,
            Some(c) => {
                return Err(Error::Invalid(format!(
                    "the process data configuration describes {} SubDevices but the bus has {}",
                    c.len(),
                    subs.len()
                )))
            }
            None => subs.iter().map(SubDeviceConfig::from_sii).collect(),
        };
        let configs: Vec<SubDeviceConfig> = subs
            .iter()
            .zip(&configs)
            .map(|(s, c)| crate::pdo_setup::process_data_only(s, c).0)
            .collect();
        let lay = layout(&subs, &configs, act.domains.max(1), act.logical_base)?;
        let act = Activation {
            configs: Some(configs),
            ..act
        };
        Self::with_layout(link, engine, clock, subs, act, lay)
    }

    /// Build the runtime with a process data layout decided by the caller (domains, plans and
    /// FMMUs; e.g. from an ENI file) instead of [`layout`]. `act.configs` gives the SM
    /// programming (from the SII when `None`); `act.domains` and `act.logical_base` are not
    /// used.
    pub fn with_layout(
        link: Box<dyn Link>,
        mut engine: FrameEngine,
        clock: Clock,
        mut subs: Vec<SubDevice>,
        act: Activation,
        mut lay: crate::domain::Layout,
    ) -> Result<Runtime> {
        if act.dc.is_some() {
            crate::hotconnect::assume_dc(&mut subs);
        }
        let requested = act
            .configs
            .unwrap_or_else(|| subs.iter().map(SubDeviceConfig::from_sii).collect());
        // The supervisor programs process data SMs only (never the mailbox SMs an IgH-style
        // configuration names); the PDO writes are planned from the application's request.
        let mut pdo_warnings = Vec::new();
        let configs: Vec<SubDeviceConfig> = subs
            .iter()
            .zip(&requested)
            .map(|(s, c)| {
                let (c, w) = crate::pdo_setup::process_data_only(s, c);
                pdo_warnings.push(w);
                c
            })
            .collect();
        let pdo_plans = pdo_plans(&subs, &requested, act.pdo_writes);
        if configs.len() != subs.len() || lay.mappings.len() != subs.len() {
            return Err(Error::Invalid(format!(
                "the process data layout describes {} SubDevices but the bus has {}",
                configs.len().min(lay.mappings.len()),
                subs.len()
            )));
        }
        let mut fmmus: Vec<Vec<FmmuRepr>> = lay.mappings.into_iter().map(|m| m.fmmus).collect();
        let end = lay
            .domains
            .iter()
            .flat_map(|d| d.plans.iter().map(|p| p.logical as u64 + p.len as u64))
            .max()
            .unwrap_or(act.logical_base as u64);
        let (status_bit, status_area) = map_mailbox_status(&subs, &mut fmmus, end);
        let extras = Extras {
            al_probe: true,
            dc: act.dc.map(|d| CyclicDc {
                reference: d.setup.reference_station,
                write_master_time: d.mode == DcMode::ReferenceFollowsMaster,
                monitor: true,
            }),
            mailbox_status: status_area,
        };
        let frames = match &lay.frames {
            Some(plan) => CyclicFrames::with_plan(&lay.domains, link.mac(), extras, plan)?,
            None => {
                crate::cyclic_pack::pack(&mut lay.domains, crate::cyclic_pack::extras_len(&extras));
                CyclicFrames::new(&lay.domains, link.mac(), extras)?
            }
        };
        engine.set_config(EngineConfig {
            timeout_ns: 10_000_000,
            retries: 2,
        });
        let areas: Vec<Option<MailboxArea>> = subs.iter().map(mailbox_area).collect();
        let mut sdos = act.startup_sdos.into_iter();
        let mut others = act.startup_ops.into_iter();
        let startup: Vec<Vec<MailboxOp>> = (0..subs.len())
            .map(|_| {
                let first = sdos
                    .next()
                    .unwrap_or_default()
                    .into_iter()
                    .map(MailboxOp::Sdo);
                first.chain(others.next().unwrap_or_default()).collect()
            })
            .collect();
        let sdo = MailboxService::new(
            subs.iter()
                .map(|s| Target {
                    who: s.who(),
                    area: mailbox_area(s),
                    protocols: s.mailbox.protocols,
                })
                .collect(),
        );
        let mut mailbox_counters = act.mailbox_counters;
        mailbox_counters.resize(subs.len(), 0);
        let mut assign: Vec<u16> = subs.iter().map(|s| s.dc_assign_activate).collect();
        if let Some(a) = act.sync0_assign {
            assign = a;
            assign.resize(subs.len(), 0);
        }
        let ring_dc = RingDc::for_link(&*link, &subs, act.dc.map(|d| d.setup.reference_station));
        let groups = resolve(&act.hot_connect, &subs, &act.fixed_positions)?;
        let group_wkc = GroupWkc::new(&groups, &lay.domains);
        let dc_remeasure = (act.dc.is_some() && !groups.is_empty())
            .then(|| crate::dc::remeasure::DcRemeasure::new(subs.len()));
        let mut supervisor = Supervisor::new(
            subs,
            configs,
            fmmus,
            areas.into_iter().zip(startup).collect(),
            act.target,
            act.timing,
        );
        supervisor.set_pdo_plans(pdo_plans, pdo_warnings);
        if let Some(d) = act.dc {
            supervisor.set_sync0(d.cycle_ns, d.shift_ns, &assign);
        }
        if !groups.is_empty() {
            supervisor.set_groups(
                groups
                    .into_iter()
                    .map(|g| (g.name, g.members, g.present))
                    .collect(),
            );
        }
        Ok(Runtime {
            link,
            engine,
            clock,
            domains: lay.domains,
            frames,
            supervisor,
            sdo,
            mailbox_counters,
            status: vec![0; status_area.map_or(0, |(_, n)| n as usize)],
            status_bit,
            status_cycle: 0,
            rx: vec![0; 2048],
            tx: vec![0; 1518],
            cycle: 0,
            probe: None,
            dc: act.dc,
            phase_lock: PhaseLock::default(),
            correction_ns: 0,
            dc_seen: None,
            dc_expected: None,
            last_send: 0,
            control: None,
            cycle_bytes: DEFAULT_CYCLE_BYTES,
            ring_dc,
            prepared: false,
            acyclic_out: 0,
            groups: group_wkc,
            dc_remeasure,
        })
    }

    /// Now on the runtime's clock (ns).
    pub fn now(&self) -> u64 {
        self.clock.now_ns()
    }

    /// The clock.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Cycles sent so far.
    pub fn cycle_count(&self) -> u64 {
        self.cycle
    }

    /// Domain `i`.
    pub fn domain(&self, i: usize) -> &Domain {
        &self.domains[i]
    }

    /// Domain `i`, writable (write outputs between `process` and `send`).
    pub fn domain_mut(&mut self, i: usize) -> &mut Domain {
        &mut self.domains[i]
    }

    /// All domains.
    pub fn domains(&self) -> &[Domain] {
        &self.domains
    }

    /// The link.
    pub fn link(&self) -> &dyn Link {
        &*self.link
    }

    /// The link, writable (tests reach the simulated network through it).
    pub fn link_mut(&mut self) -> &mut dyn Link {
        &mut *self.link
    }

    /// The supervisor (states, lost SubDevices).
    pub fn supervisor(&self) -> &Supervisor {
        &self.supervisor
    }

    /// Test-only switch (the fault campaigns' planted bug): the supervisor never probes a
    /// lost SubDevice again. Not for applications.
    #[doc(hidden)]
    pub fn disable_recovery(&mut self) {
        self.supervisor.disable_recovery();
    }

    /// The supervisor, writable (the ENI configuration adds register writes).
    pub(crate) fn supervisor_mut(&mut self) -> &mut Supervisor {
        &mut self.supervisor
    }

    /// Where PDO entry `index:subindex` of the SubDevice at `position` is in the process data.
    pub fn locate(&self, position: usize, index: u16, subindex: u8) -> Option<EntryLocation> {
        let (sm, bit, bits) = self
            .supervisor
            .config(position)?
            .entry_bit_offset(index, subindex)?;
        self.domains.iter().find_map(|d| {
            d.region_of(position as u16, sm).map(|r| EntryLocation {
                domain: d.index,
                byte: r.offset + (bit / 8) as usize,
                bit: (bit % 8) as u8,
                bits,
            })
        })
    }

    /// Take the SubDevice at `position` no higher than `limit` (see
    /// [`Supervisor::set_limit`]).
    pub fn limit_state(&mut self, position: usize, limit: AlState) {
        self.supervisor.set_limit(position, limit);
    }

    /// Register writes (address, data) made on the SubDevice at `position` in INIT every time
    /// it is configured, e.g. watchdog settings (see [`Supervisor::set_register_writes`]).
    /// Call before the first send.
    pub fn set_register_writes(&mut self, position: usize, writes: Vec<(u16, Vec<u8>)>) {
        self.supervisor.set_register_writes(position, writes);
    }

    /// The SYNC1 cycle register value for the SubDevice at `position` (see
    /// [`Supervisor::set_sync1`]). Call before the first send.
    pub fn set_sync1(&mut self, position: usize, cycle_ns: u32) {
        self.supervisor.set_sync1(position, cycle_ns);
    }

    /// Install (or remove) the control socket's endpoint; [`crate::control::Server::attach`]
    /// does this.
    pub fn set_control(&mut self, endpoint: Option<crate::control::shared::Endpoint>) {
        self.control = endpoint;
    }

    /// Serve the control socket `ecat` talks to (`ecat slaves -m INDEX`, ...) while this
    /// runtime cycles; keep the returned server alive as long as it should be served.
    pub fn serve_control(&mut self, index: u32) -> Result<crate::control::Server> {
        let server = crate::control::Server::start(index, self.link.name())?;
        server.attach(self);
        Ok(server)
    }

    /// The acyclic frame engine: datagrams submitted here ride in the next
    /// [`send`](Runtime::send)'s acyclic frame (the C API's register requests use it).
    pub fn engine_mut(&mut self) -> &mut FrameEngine {
        &mut self.engine
    }

    /// End the cyclic phase and give the link back (to scan again with a new
    /// [`crate::MainDevice`]).
    pub fn into_link(self) -> Box<dyn Link> {
        self.link
    }

    /// The oldest CoE emergency any SubDevice sent (during a transfer, or on its own while its
    /// mailbox status is mapped): (position, message).
    pub fn take_emergency(&mut self) -> Option<(usize, ecat_wire::coe::EmergencyRepr)> {
        self.sdo.take_emergency()
    }

    /// The oldest CoE emergency of the SubDevice at `position`.
    pub fn take_emergency_of(&mut self, position: usize) -> Option<ecat_wire::coe::EmergencyRepr> {
        self.sdo.take_emergency_of(position)
    }

    /// The oldest message of mailbox type `kind` (e.g. VoE) the SubDevice at `position` sent
    /// on its own (picked up through the cyclic SM1 status, or during a transfer of another
    /// protocol): the whole mailbox message, header included.
    pub fn take_mailbox_message(
        &mut self,
        position: usize,
        kind: ecat_wire::mailbox::MailboxType,
    ) -> Option<Vec<u8>> {
        self.sdo.take_message(position, kind)
    }

    /// A handle for mailbox requests (SDO and the other protocols) while cycling, usable from
    /// any thread.
    pub fn sdo_client(&self) -> MailboxClient {
        self.sdo.client()
    }

    /// The same handle as [`Runtime::sdo_client`], by its general name.
    pub fn mailbox_client(&self) -> MailboxClient {
        self.sdo.client()
    }

    /// The mailbox service: its SubDevices ([`MailboxService::targets`]) and the sink for
    /// messages they send on their own ([`MailboxService::set_unsolicited_sink`], used by EoE).
    pub fn mailbox_service_mut(&mut self) -> &mut MailboxService {
        &mut self.sdo
    }

    /// True if the SM1 status bit of the SubDevice at `position` rides in the cyclic frames.
    pub fn mailbox_status_mapped(&self, position: usize) -> bool {
        self.status_bit.get(position).is_some_and(|b| b.is_some())
    }

    /// Commands to make on the SubDevice at `position` at its state transitions, every time
    /// it is configured (see [`Supervisor::set_transition_cmds`]).
    pub fn set_transition_cmds(&mut self, position: usize, cmds: Vec<TransitionCmd>) {
        self.supervisor.set_transition_cmds(position, cmds);
    }

    /// Optional startup requests of the SubDevice at `position` (see
    /// [`Supervisor::set_optional_startup`]): a failure is reported, not held against it.
    pub fn set_optional_startup(&mut self, position: usize, ops: Vec<MailboxOp>) {
        self.supervisor.set_optional_startup(position, ops);
    }

    /// Drive every SubDevice to `state`.
    pub fn request_state(&mut self, state: AlState) {
        self.supervisor.set_target(state);
    }

    /// Next event (SubDevice lost, back, state reached, refusal).
    #[inline]
    pub fn next_event(&mut self) -> Option<Event> {
        self.supervisor.next_event()
    }

    /// Counters of the cyclic path, the acyclic engine and the link.
    pub fn counters(&self) -> (CyclicCounters, EngineCounters, LinkCounters) {
        (
            self.frames.counters(),
            self.engine.counters(),
            self.link.counters(),
        )
    }

    /// Frames per cycle and bytes per cycle of the cyclic path.
    pub fn frame_layout(&self) -> (usize, usize) {
        (self.frames.frame_count(), self.frames.bytes_per_cycle())
    }

    /// Longest round trip of the last cycle's frames (ns, 0 if none returned).
    pub fn round_trip_ns(&self) -> u64 {
        self.frames.round_trip_ns()
    }

    fn dispatch(&mut self, n: usize, now: u64) {
        let frame = &self.rx[..n];
        if CyclicFrames::is_cyclic(frame) {
            self.frames.handle_frame(frame, &mut self.domains, now);
        } else {
            self.acyclic_out = self.acyclic_out.saturating_sub(1);
            self.engine.handle_frame(frame, now);
        }
    }

    /// Collect every frame that has arrived (never waits).
    pub fn receive(&mut self) -> Result<()> {
        while let Some(n) = self.link.recv(&mut self.rx, None)? {
            let now = self.clock.now_ns();
            self.dispatch(n, now);
        }
        let now = self.clock.now_ns();
        self.engine.poll_timeouts(now);
        self.sdo.collect(
            &mut self.engine,
            now,
            self.cycle,
            &mut self.mailbox_counters,
        );
        if let Some(c) = &self.control {
            c.publish(self);
        }
        Ok(())
    }

    /// Evaluate the working counters of every domain (IgH: `ecrt_domain_process`), and in
    /// master-follows-reference mode the phase of this cycle to SYNC0.
    pub fn process(&mut self) {
        self.groups.apply(&self.supervisor, &mut self.domains);
        for d in &mut self.domains {
            d.process();
        }
        self.correction_ns = 0;
        if let (Some(d), Some(t)) = (&self.dc, self.frames.dc_time()) {
            if d.mode == DcMode::MasterFollowsReference {
                self.correction_ns = self.phase_lock.update(t, d.cycle_ns, d.shift_ns);
            }
        }
    }

    /// In master-follows-reference mode: add this to the next wake-up (ns) to keep the send
    /// instant at a constant phase to SYNC0. 0 otherwise.
    pub fn dc_correction_ns(&self) -> i64 {
        self.correction_ns
    }

    /// Phase error of the last cycle to its locked phase (master-follows-reference), ns.
    pub fn dc_phase_error_ns(&self) -> i64 {
        self.phase_lock.error_ns
    }

    /// The reference clock's time seen by the last cycle (ns since 2000).
    pub fn dc_time(&self) -> Option<u64> {
        self.frames.dc_time()
    }

    /// With DC and hot-connect groups: the rounds of measuring the delays again after a group
    /// joined or left, and the delays they corrected (see [`crate::dc::remeasure`]).
    pub fn dc_remeasure_figures(&self) -> Option<(u64, u64)> {
        self.dc_remeasure.as_ref().map(|r| r.figures())
    }

    /// Sync monitor of the last cycle: upper bound of the largest |system time difference|.
    pub fn dc_sync_monitor_ns(&self) -> Option<u32> {
        self.frames.sync_monitor()
    }

    /// Bytes per cycle the cyclic and acyclic frames may take together (default
    /// [`DEFAULT_CYCLE_BYTES`], for a 1 ms cycle on 100 Mbit/s): acyclic frames are sent while
    /// the total stays within it, and at least one is sent when any is queued.
    pub fn set_cycle_bytes(&mut self, bytes: usize) {
        self.cycle_bytes = bytes;
    }

    /// Send the cyclic frames (outputs as they are in the domain images now), then advance the
    /// supervisor and send the acyclic frames within the byte budget.
    pub fn send(&mut self) -> Result<()> {
        self.send_cyclic()?;
        self.send_acyclic()
    }

    /// Send this cycle's cyclic frames (first part of [`Runtime::send`]).
    pub fn send_cyclic(&mut self) -> Result<()> {
        let now = self.clock.now_ns();
        self.probe = self.frames.al_probe();
        if let Some(b) = self.frames.mailbox_status() {
            self.status.copy_from_slice(b);
            self.status_cycle = self.cycle;
        }
        if let Some(t) = self.frames.dc_time() {
            self.dc_seen = Some((t, self.last_send));
        }
        self.last_send = now;
        self.cycle += 1;
        let master_time = match &self.dc {
            Some(d) => (now as i64).wrapping_add(d.setup.master_base_ns) as u64,
            None => 0,
        };
        // The reference clock's time now: the MainDevice's when the reference follows it,
        // else the last one seen moved on by the time since (the FRMW carries it out, and
        // the supervisor sets the clocks of SubDevices that come back by it).
        self.dc_expected = match &self.dc {
            Some(d) if d.mode == DcMode::ReferenceFollowsMaster => Some((master_time, now)),
            Some(_) => self
                .dc_seen
                .map(|(t, at)| (t.wrapping_add(now.wrapping_sub(at)), now)),
            None => None,
        };
        if let Some((t, _)) = self.dc_expected {
            self.frames.set_expected_reference_time(t);
        }
        self.frames.prepare(&mut self.domains, master_time);
        for n in 0..self.frames.frame_count() {
            let f = self.frames.frame(n, now);
            self.link.send(f)?;
        }
        Ok(())
    }

    /// After a send: receive until every cyclic frame of this cycle (and the acyclic frames
    /// sent with them) is back or `deadline_ns` (on the runtime clock) passes. Returns true if
    /// all cyclic frames came back. Never waits on virtual time (the simulated ring has
    /// answered already).
    pub fn wait_return(&mut self, deadline_ns: u64) -> Result<bool> {
        while !self.frames.all_returned() || self.acyclic_out > 0 {
            let mut until = self.clock.instant_at(deadline_ns);
            if until.is_some_and(|u| u <= std::time::Instant::now()) {
                // Past the deadline (e.g. after a scheduling hiccup): still take a frame that
                // is already waiting, without waiting for more.
                until = None;
            }
            match self.link.recv(&mut self.rx, until)? {
                Some(n) => {
                    let now = self.clock.now_ns();
                    self.dispatch(n, now);
                }
                None => break,
            }
        }
        Ok(self.frames.all_returned())
    }

    /// IgH's cycle: receive what came back from the last send, process, send again.
    pub fn cycle(&mut self) -> Result<()> {
        self.receive()?;
        self.process();
        self.send()
    }

    /// Send and wait up to `timeout_ns` for every cyclic frame to return, then process.
    /// Returns true if all came back. On virtual time it never waits.
    pub fn tx_rx(&mut self, timeout_ns: u64) -> Result<bool> {
        self.send()?;
        let deadline = self.clock.now_ns() + timeout_ns;
        let all = self.wait_return(deadline)?;
        self.receive()?;
        self.process();
        Ok(all)
    }

    /// Ask every SubDevice for `state` and cycle (with `tx_rx`, advancing virtual time by
    /// `period_ns` per cycle if the clock is virtual, sleeping otherwise) until all are there
    /// or `max_cycles` have passed.
    pub fn run_until_state(
        &mut self,
        state: AlState,
        period_ns: u64,
        max_cycles: u64,
    ) -> Result<()> {
        self.request_state(state);
        for _ in 0..max_cycles {
            let start = self.clock.now_ns();
            self.tx_rx(period_ns)?;
            if self.supervisor.all_running() {
                return Ok(());
            }
            let end = start + period_ns;
            match self.clock.instant_at(end) {
                Some(t) => {
                    let now = std::time::Instant::now();
                    if t > now {
                        std::thread::sleep(t - now);
                    }
                }
                None => self.clock.wait_until(end),
            }
        }
        // Name the first few; on a large bus the rest are counted, not listed.
        const NAMED: usize = 8;
        let behind: Vec<String> = self
            .supervisor
            .states()
            .filter(|s| !s.running)
            .map(|s| s.to_string())
            .collect();
        let more = match behind.len().saturating_sub(NAMED) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        Err(Error::Invalid(format!(
            "not every SubDevice reached {state} within {max_cycles} cycles: {}{more}",
            behind[..behind.len().min(NAMED)].join(", ")
        )))
    }
}
