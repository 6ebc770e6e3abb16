//! `ec_master_t`: one link, its SubDevices, and the application's domains and slave
//! configurations.
//!
//! Phases as in IgH: *idle* (after `ecrt_request_master`: the bus is scanned and every
//! SubDevice is in PREOP, so blocking SDO calls and the info calls work; the library drives
//! the [`MainDevice`] inside each blocking call instead of running a thread, and shares it
//! behind a mutex with the control server, so the `ecat` tool's requests are answered too) and *operation*
//! (after `ecrt_master_activate`: a [`Runtime`] that the application's thread drives with
//! receive / process / queue / send; everything acyclic rides in those frames).
//!
//! Objects handed to C (`ec_slave_config_t`, `ec_domain_t`, requests) are boxed and owned by
//! the master through raw pointers, freed by `ecrt_master_deactivate` (IgH clears the
//! configuration there) or `ecrt_release_master`.
//!
//! Memory layout: at 1 kHz every cycle starts with cold caches, so what the cyclic calls read
//! of the master (its thread, index, phase with the runtime pointer, register requests, startup
//! error slots) lies in its first 64-byte line: [`Master`] is 64-byte aligned and `repr(C)`
//! with those fields first, checked at compile time. A cycle reads one line of the master
//! beside the runtime's own.

use crate::abi::{MasterInfo, MasterState, ScanProgress};
use crate::domain::Domain;
use crate::ffi::{arg_mut, errno, guard};
use crate::log;
use crate::requests::RegRequest;
use crate::slave_config::SlaveConfig;
use ecat::config::SubDeviceConfig;
use ecat::control::idle::{self, IdleDevice};
use ecat::mailbox::service::SdoClient;
use ecat::runtime::Runtime;
use ecat::{MainDevice, SubDevice};
use ecat_wire::al::AlState;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

pub use crate::cyclic::{ecrt_master_receive, ecrt_master_send};

/// The master's phase.
pub enum Phase {
    /// Configuration phase: the bus is scanned and in PREOP; the MainDevice is shared with the
    /// control server, which answers the `ecat` tool's bus requests on it.
    Idle(IdleDevice),
    /// Cyclic phase.
    Active(Box<Runtime>),
    /// Between phases (only while switching; or after a failed re-scan).
    Orphaned,
}

/// Everything the master holds; accessed by one application thread at a time (IgH's rule).
/// `repr(C)`: the fields the cyclic calls read come first (see the module documentation).
#[repr(C)]
pub struct Inner {
    /// Idle or active.
    pub phase: Phase,
    /// Register requests of every configuration (not owned; served by send/receive).
    pub reg_requests: Box<[*mut RegRequest]>,
    /// The startup error last logged per SubDevice (see [`crate::startup::log_events`]).
    pub startup_errors: Box<[Option<String>]>,
    /// The SubDevices of the last scan.
    pub subdevices: Vec<SubDevice>,
    /// Each SubDevice's process data configuration as found (CoE or SII), by position.
    pub defaults: Vec<SubDeviceConfig>,
    /// Slave configurations, in creation order (owned).
    pub configs: Vec<*mut SlaveConfig>,
    /// Domains, in creation order (owned).
    pub domains: Vec<*mut Domain>,
    /// Last application time (ns since 2000).
    pub app_time: u64,
    /// Reserved for real-time use.
    pub reserved: bool,
    /// Send interval set by the application (µs).
    pub send_interval_us: usize,
    /// Distributed clocks run in the cyclic frames (set at activation).
    pub dc: bool,
    /// `/dev/cpu_dma_latency` held at 0 from activation until deactivate or release (see
    /// [`ecat::latency_hold`]; `ECAT_LATENCY_HOLD=0` or `LATENCY_HOLD=0` turns it off).
    pub latency_hold: Option<ecat::latency_hold::LatencyHold>,
}

/// `ec_master_t`. 64-byte aligned, `repr(C)`: the fields the cyclic calls read share the
/// first cache line (see the module documentation).
#[repr(C, align(64))]
pub struct Master {
    /// `pthread_self()` of the thread that called `ecrt_master_send` last (0 = none yet).
    pub cyclic_thread: AtomicU64,
    /// Master index.
    pub index: u32,
    inner: UnsafeCell<Inner>,
    /// Link specification.
    pub spec: String,
    /// The active runtime's SDO client, for blocking SDO calls from any thread.
    pub sdo_client: Mutex<Option<SdoClient>>,
    /// SubDevices of the last scan, readable from any thread.
    pub slave_count: AtomicUsize,
    /// The control socket the `ecat` tool talks to (`None` if it could not be made).
    pub control: Option<ecat::control::Server>,
}

// What a cycle reads of the master ends within its first cache line.
const _: () = assert!(
    std::mem::offset_of!(Master, inner)
        + std::mem::offset_of!(Inner, startup_errors)
        + std::mem::size_of::<Box<[Option<String>]>>()
        <= 64
);

impl Master {
    /// True if reserved; else logs that `f` needs `ecrt_master_reserve` (IgH refuses
    /// configuration and cyclic calls on a master that is only open).
    pub fn reserved_or(&self, f: &str) -> bool {
        // SAFETY: IgH's threading rule.
        if unsafe { self.inner() }.reserved {
            return true;
        }
        log!("{f}: master {} is open but not reserved; call ecrt_master_reserve (or use ecrt_request_master)", self.index);
        false
    }

    /// The inner state.
    ///
    /// # Safety
    /// IgH's threading rule: the application calls the non-blocking functions of one master
    /// from one thread at a time, so no two `&mut Inner` exist at once.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn inner(&self) -> &mut Inner {
        // SAFETY: see the function's contract.
        unsafe { &mut *self.inner.get() }
    }

    /// The runtime, if active.
    ///
    /// # Safety
    /// As [`Master::inner`].
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn runtime(&self) -> Option<&mut Runtime> {
        // SAFETY: as inner().
        match unsafe { &mut self.inner().phase } {
            Phase::Active(rt) => Some(rt),
            _ => None,
        }
    }

    /// True if `sc` is one of this master's slave configurations.
    pub fn owns_config(&self, sc: *const SlaveConfig) -> bool {
        // SAFETY: a read of the list, which only configuration calls change (IgH's threading
        // rule); no reference to the whole state is made.
        unsafe {
            (*self.inner.get())
                .configs
                .iter()
                .any(|&c| std::ptr::eq(c, sc))
        }
    }

    /// True if `d` is one of this master's domains.
    pub fn owns_domain(&self, d: *const Domain) -> bool {
        // SAFETY: as owns_config.
        unsafe {
            (*self.inner.get())
                .domains
                .iter()
                .any(|&x| std::ptr::eq(x, d))
        }
    }

    /// True after activation.
    pub fn is_active(&self) -> bool {
        // SAFETY: a read of the phase tag by the owning thread.
        matches!(unsafe { &self.inner().phase }, Phase::Active(_))
    }
}

/// The calling thread's `pthread_self()`.
pub fn current_thread() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as u64 }
}

/// Scan `md` and bring the bus to PREOP; returns the SubDevices and their configurations.
pub fn scan_idle(md: &mut MainDevice, spec: &str) -> (Vec<SubDevice>, Vec<SubDeviceConfig>) {
    match md.scan() {
        Ok([]) => {
            log!("no SubDevices answer on '{spec}'; the master is idle with an empty bus")
        }
        Ok(_) => {}
        Err(e) => log!("scanning '{spec}' failed: {e}"),
    }
    if !md.subdevices().is_empty() {
        if let Err(e) = md.request_state(&[], AlState::PreOp, Duration::from_secs(5)) {
            log!("bringing the bus on '{spec}' to PREOP: {e}");
        }
        let _ = md.refresh_states();
    }
    let defaults = match md.discover_configs() {
        Ok(c) => c,
        Err(e) => {
            log!("reading the PDO configuration on '{spec}': {e}; using the SII");
            md.subdevices()
                .iter()
                .map(SubDeviceConfig::from_sii)
                .collect()
        }
    };
    (md.subdevices().to_vec(), defaults)
}

/// Master indices open in this process (each owns its link).
static OPEN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn open(index: u32, reserve: bool) -> *mut Master {
    {
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        if open.contains(&index) {
            log!("master {index} is already open in this process; release it first (one master, one link)");
            return std::ptr::null_mut();
        }
        open.push(index);
    }
    let mut m = open_link(index, reserve);
    if !m.is_null() && !crate::check::register_master(m) {
        // SAFETY: just made by open_link and handed to nobody yet.
        drop(unsafe { Box::from_raw(m) });
        m = std::ptr::null_mut();
    }
    if m.is_null() {
        OPEN.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&i| i != index);
    }
    m
}

fn open_link(index: u32, reserve: bool) -> *mut Master {
    let spec = match crate::link_config::link_for(index) {
        Ok(s) => s,
        Err(e) => {
            log!("{e}");
            return std::ptr::null_mut();
        }
    };
    let backup = crate::link_config::backup_for(index);
    let opened = match &backup {
        Some(b) => ecat::link::open_redundant(&spec, b).map(MainDevice::with_link),
        None => MainDevice::open(&spec),
    };
    let mut md = match opened {
        Ok(md) => md,
        Err(e) => {
            let with = backup.map_or(String::new(), |b| format!(" with backup '{b}'"));
            log!("master {index}: cannot open '{spec}'{with}: {e}");
            return std::ptr::null_mut();
        }
    };
    let (subdevices, defaults) = scan_idle(&mut md, &spec);
    let slave_count = AtomicUsize::new(subdevices.len());
    let md = idle::share(md);
    let control = crate::control::start(index, &spec, &subdevices, &defaults, &md);
    let m = Master {
        index,
        spec,
        inner: UnsafeCell::new(Inner {
            phase: Phase::Idle(md),
            reg_requests: Box::default(),
            startup_errors: Box::default(),
            subdevices,
            defaults,
            configs: Vec::new(),
            domains: Vec::new(),
            app_time: 0,
            reserved: reserve,
            send_interval_us: 0,
            dc: false,
            latency_hold: None,
        }),
        sdo_client: Mutex::new(None),
        slave_count,
        cyclic_thread: AtomicU64::new(0),
        control,
    };
    Box::into_raw(Box::new(m))
}

/// Open and reserve master `master_index`; NULL (and one log line) on error.
#[no_mangle]
pub extern "C" fn ecrt_request_master(master_index: u32) -> *mut Master {
    guard("ecrt_request_master", std::ptr::null_mut(), || {
        open(master_index, true)
    })
}

/// Open master `master_index` without reserving it.
#[no_mangle]
pub extern "C" fn ecrt_open_master(master_index: u32) -> *mut Master {
    guard("ecrt_open_master", std::ptr::null_mut(), || {
        open(master_index, false)
    })
}

/// Free every configuration object (slave configs with their requests, domains).
fn clear_config(inner: &mut Inner) {
    for p in inner.configs.drain(..) {
        // SAFETY: created by Box::into_raw in ecrt_master_slave_config, freed only here.
        drop(unsafe { Box::from_raw(p) });
    }
    for p in inner.domains.drain(..) {
        // SAFETY: created by Box::into_raw in ecrt_master_create_domain, freed only here.
        drop(unsafe { Box::from_raw(p) });
    }
    inner.reg_requests = Box::default();
}

/// Release a master: deactivate if active, free every object. A NULL master, or one released
/// already (or anything else that is not a live master), is refused with a log line.
///
/// # Safety
/// `master` is NULL or a pointer from `ecrt_request_master`/`ecrt_open_master`; nothing uses
/// it (or its objects) during the call or after it.
#[no_mangle]
pub unsafe extern "C" fn ecrt_release_master(master: *mut Master) {
    const F: &str = "ecrt_release_master";
    guard(F, (), || {
        // The registry says whether it is live and lets exactly one release through.
        if master.is_null() || !crate::check::unregister_master(master) {
            // SAFETY: only the pointer is looked at (it is not live).
            let _ = unsafe { crate::check::master(master, F) };
            return;
        }
        // SAFETY: a live master we own (registered at creation); nothing else uses it now.
        let m = unsafe { Box::from_raw(master) };
        // SAFETY: we own it now.
        let inner = unsafe { m.inner() };
        if let Phase::Active(rt) = &mut inner.phase {
            // As IgH's master does when the application lets go: slaves back to PREOP (their
            // outputs stop being applied), cycling here for up to 500 ms.
            if let Err(e) = rt.run_until_state(AlState::PreOp, 1_000_000, 500) {
                log!("{F}: {e}");
            }
        }
        clear_config(inner);
        let index = m.index;
        drop(m);
        OPEN.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&i| i != index);
    })
}

/// Reserve the master for real-time use.
///
/// # Safety
/// `master` is NULL or a live master.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_reserve(master: *mut Master) -> i32 {
    guard("ecrt_master_reserve", errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, "ecrt_master_reserve") }) else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        if inner.reserved {
            log!(
                "ecrt_master_reserve: master {} is already reserved",
                m.index
            );
            return errno::EBUSY;
        }
        inner.reserved = true;
        0
    })
}

/// Create a process data domain (before activation).
///
/// # Safety
/// `master` is NULL or a live master.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_create_domain(master: *mut Master) -> *mut Domain {
    guard("ecrt_master_create_domain", std::ptr::null_mut(), || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, "ecrt_master_create_domain") }) else {
            return std::ptr::null_mut();
        };
        if !m.reserved_or("ecrt_master_create_domain") {
            return std::ptr::null_mut();
        }
        if m.is_active() {
            log!("ecrt_master_create_domain: master {} is already activated; create domains before ecrt_master_activate", m.index);
            return std::ptr::null_mut();
        }
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        let d = Box::into_raw(Box::new(Domain::new(master, inner.domains.len())));
        inner.domains.push(d);
        d
    })
}

/// Where (alias, position) is on the bus: alias 0 means position is the ring position, else
/// the position-th SubDevice after the first one with that alias.
pub fn resolve(subs: &[SubDevice], alias: u16, position: u16) -> Option<usize> {
    let base = if alias == 0 {
        0
    } else {
        subs.iter().position(|s| s.alias == alias)?
    };
    let p = base + position as usize;
    (p < subs.len()).then_some(p)
}

/// Get or create the configuration of the slave at (alias, position) expecting
/// vendor/product. NULL if a configuration for that address exists with another identity.
///
/// # Safety
/// `master` is NULL or a live master.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_slave_config(
    master: *mut Master,
    alias: u16,
    position: u16,
    vendor_id: u32,
    product_code: u32,
) -> *mut SlaveConfig {
    const F: &str = "ecrt_master_slave_config";
    guard(F, std::ptr::null_mut(), || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, F) }) else {
            return std::ptr::null_mut();
        };
        if !m.reserved_or(F) {
            return std::ptr::null_mut();
        }
        if m.is_active() {
            log!(
                "{F}: master {} is already activated; configure slaves before ecrt_master_activate",
                m.index
            );
            return std::ptr::null_mut();
        }
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        for &p in &inner.configs {
            // SAFETY: owned by the master and alive.
            let sc = unsafe { &*p };
            if sc.alias == alias && sc.position == position {
                if sc.vendor_id != vendor_id || sc.product_code != product_code {
                    log!("{F}: slave {alias}:{position} is already configured as 0x{:08x}/0x{:08x}, not 0x{vendor_id:08x}/0x{product_code:08x}", sc.vendor_id, sc.product_code);
                    return std::ptr::null_mut();
                }
                return p;
            }
        }
        let mut attached = None;
        match resolve(&inner.subdevices, alias, position) {
            None => log!("{F}: there is no slave at {alias}:{position} on '{}' ({} found); the configuration stays unattached", m.spec, inner.subdevices.len()),
            Some(p) => {
                let s = &inner.subdevices[p];
                let id = s.identity;
                if id.vendor_id != vendor_id || id.product_code != product_code {
                    log!("{F}: slave {alias}:{position} expects 0x{vendor_id:08x}/0x{product_code:08x} but {} is 0x{:08x}/0x{:08x}; the configuration stays unattached and that slave stays in PREOP", s.who(), id.vendor_id, id.product_code);
                } else if inner
                    .configs
                    .iter()
                    // SAFETY: owned by the master and alive.
                    .any(|&c| unsafe { &*c }.attached == Some(p))
                {
                    log!("{F}: {} is already configured through another address; {alias}:{position} stays unattached", s.who());
                } else {
                    attached = Some(p);
                }
            }
        }
        let defaults = attached.map(|p| inner.defaults[p].clone());
        let sc = SlaveConfig::new(
            master,
            alias,
            position,
            vendor_id,
            product_code,
            attached,
            defaults,
        );
        let p = Box::into_raw(Box::new(sc));
        inner.configs.push(p);
        p
    })
}

/// Choose the DC reference clock (ecat uses the first DC-capable SubDevice).
///
/// # Safety
/// `master` is NULL or a live master; `sc` NULL or one of its configurations.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_select_reference_clock(
    master: *mut Master,
    sc: *mut SlaveConfig,
) -> i32 {
    const F: &str = "ecrt_master_select_reference_clock";
    guard(F, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, F) }) else {
            return errno::EINVAL;
        };
        if let Err(e) = crate::check::idle(m, F, "choose the reference clock") {
            return e;
        }
        if !sc.is_null() {
            // SAFETY: IgH's threading rule; the pointer itself is checked.
            let Some(sc) = (unsafe { crate::check::config(sc, F) }) else {
                return errno::EINVAL;
            };
            if !m.owns_config(sc) {
                log!(
                    "{F}: slave config {}:{} belongs to another master",
                    sc.alias,
                    sc.position
                );
                return errno::EINVAL;
            }
            // SAFETY: IgH's threading rule.
            let inner = unsafe { m.inner() };
            let first_dc = inner.subdevices.iter().position(|s| s.dc_supported());
            if sc.attached.is_some() && sc.attached != first_dc {
                log!("{F}: ecat takes the first DC-capable slave as the reference clock; slave {}:{} is not it", sc.alias, sc.position);
            }
        }
        0
    })
}

/// AL state bits OR-ed over the SubDevices, and how many answer.
fn bus_state(inner: &mut Inner) -> (u32, u8) {
    match &inner.phase {
        Phase::Active(rt) => rt
            .supervisor()
            .states()
            .filter(|s| !s.lost)
            .fold((0, 0), |(n, or), s| {
                (n + 1, or | (s.status.state_bits() & 0xF))
            }),
        _ => inner.subdevices.iter().fold((0, 0), |(n, or), s| {
            (n + 1, or | (s.al_status.state_bits() & 0xF))
        }),
    }
}

/// The body of `ecrt_master_state` / `ecrt_master_link_state` (`f` names the caller).
///
/// # Safety
/// `master` NULL or live; `state` NULL or writable.
unsafe fn state_into(f: &str, master: *const Master, state: *mut MasterState) -> i32 {
    // SAFETY: the master pointer is checked; the out-parameter is NULL or writable (API contract).
    let Some((m, out)) = (unsafe { crate::check::master(master, f) })
        .and_then(|x| unsafe { arg_mut(state, f, "state") }.map(|y| (x, y)))
    else {
        return errno::EINVAL;
    };
    // SAFETY: IgH's threading rule.
    let (n, bits) = bus_state(unsafe { m.inner() });
    *out = MasterState::new(n, bits, n > 0);
    0
}

/// Master state.
///
/// # Safety
/// `master` NULL or live; `state` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_state(master: *const Master, state: *mut MasterState) -> i32 {
    const F: &str = "ecrt_master_state";
    // SAFETY: forwarded contract.
    guard(F, errno::EINVAL, || unsafe { state_into(F, master, state) })
}

/// State of link `dev_idx` (0 = main; ecat has no redundant link yet).
///
/// # Safety
/// `master` NULL or live; `state` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_link_state(
    master: *const Master,
    dev_idx: u32,
    state: *mut MasterState,
) -> i32 {
    const F: &str = "ecrt_master_link_state";
    guard(F, errno::EINVAL, || {
        if dev_idx != 0 {
            log!("{F}: link {dev_idx} does not exist (ecat has one link per master; no redundancy yet)");
            return errno::EINVAL;
        }
        // SAFETY: forwarded contract.
        unsafe { state_into(F, master, state) }
    })
}

/// Master information.
///
/// # Safety
/// `master` NULL or live; `info` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master(master: *mut Master, info: *mut MasterInfo) -> i32 {
    const F: &str = "ecrt_master";
    guard(F, errno::EINVAL, || {
        // SAFETY: the master pointer is checked; the out-parameter is NULL or writable (API contract).
        let Some((m, out)) = (unsafe { crate::check::master(master, F) })
            .and_then(|x| unsafe { arg_mut(info, F, "master_info") }.map(|y| (x, y)))
        else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        *out = MasterInfo {
            slave_count: inner.subdevices.len() as u32,
            link_up: 1,
            scan_busy: 0,
            _pad: [0; 2],
            app_time: inner.app_time,
        };
        0
    })
}

/// Scan progress (the scan is finished when `ecrt_request_master` returns).
///
/// # Safety
/// `master` NULL or live; `progress` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_scan_progress(
    master: *mut Master,
    progress: *mut ScanProgress,
) -> i32 {
    const F: &str = "ecrt_master_scan_progress";
    guard(F, errno::EINVAL, || {
        // SAFETY: the master pointer is checked; the out-parameter is NULL or writable (API contract).
        let Some((m, out)) = (unsafe { crate::check::master(master, F) })
            .and_then(|x| unsafe { arg_mut(progress, F, "progress") }.map(|y| (x, y)))
        else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        let n = unsafe { m.inner() }.subdevices.len() as u32;
        *out = ScanProgress {
            slave_count: n,
            scan_index: n,
        };
        0
    })
}

/// Activate: lay out the domains, hand the bus to the cyclic runtime.
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_activate(master: *mut Master) -> i32 {
    const F: &str = "ecrt_master_activate";
    guard(F, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, F) }) else {
            return errno::EINVAL;
        };
        if !m.reserved_or(F) {
            return errno::EPERM;
        }
        if m.is_active() {
            log!("{F}: master {} is already active", m.index);
            return errno::EBUSY;
        }
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        match crate::layout::activate(m, inner) {
            Ok(()) => {
                if ecat::latency_hold::wanted_by_config() {
                    inner.latency_hold = ecat::latency_hold::LatencyHold::acquire(
                        "set ECAT_LATENCY_HOLD=0 to cycle without it",
                    )
                    .map_err(|e| log!("{F}: {e}"))
                    .ok();
                }
                0
            }
            Err(e) => {
                log!("{F}: {e}");
                errno::EIO
            }
        }
    })
}

/// Deactivate: stop the cyclic phase, drop the configuration (domains, slave configs and
/// requests are freed, as in IgH), scan again and keep the bus in PREOP.
///
/// # Safety
/// `master` NULL or live; no pointer to its configs/domains is used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_deactivate(master: *mut Master) -> i32 {
    const F: &str = "ecrt_master_deactivate";
    guard(F, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, F) }) else {
            return errno::EINVAL;
        };
        if !m.is_active() {
            log!("{F}: master {} is not active", m.index);
            return errno::EINVAL;
        }
        if let Ok(mut c) = m.sdo_client.lock() {
            *c = None;
        }
        m.cyclic_thread.store(0, Ordering::Relaxed);
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        inner.latency_hold = None;
        clear_config(inner);
        let Phase::Active(rt) = std::mem::replace(&mut inner.phase, Phase::Orphaned) else {
            return errno::EINVAL;
        };
        let mut md = MainDevice::with_link(rt.into_link());
        let (subs, defaults) = scan_idle(&mut md, &m.spec);
        m.slave_count.store(subs.len(), Ordering::Relaxed);
        let md = idle::share(md);
        if let Some(c) = &m.control {
            c.set_idle(&subs, &defaults, Some(md.clone()));
            c.set_configs(Vec::new());
        }
        inner.subdevices = subs;
        inner.defaults = defaults;
        inner.phase = Phase::Idle(md);
        0
    })
}

/// Set the send interval (µs). ecat sends at most one acyclic frame per send, so this is
/// recorded only.
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_set_send_interval(
    master: *mut Master,
    send_interval: usize,
) -> i32 {
    const F: &str = "ecrt_master_set_send_interval";
    guard(F, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, F) }) else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        unsafe { m.inner() }.send_interval_us = send_interval;
        0
    })
}

/// Retry bringing every configured SubDevice to OP (the supervisor already retries; this
/// makes it check now).
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_reset(master: *mut Master) -> i32 {
    const F: &str = "ecrt_master_reset";
    guard(F, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, F) }) else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        if let Some(rt) = unsafe { m.runtime() } {
            rt.request_state(AlState::SafeOp);
            rt.request_state(AlState::Op);
        }
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subs(aliases: &[u16]) -> Vec<SubDevice> {
        aliases
            .iter()
            .enumerate()
            .map(|(i, &alias)| SubDevice {
                position: i as u16,
                alias,
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn alias_and_position_addressing() {
        let s = subs(&[0, 7, 0, 9, 0]);
        assert_eq!(resolve(&s, 0, 3), Some(3), "alias 0: ring position");
        assert_eq!(resolve(&s, 7, 0), Some(1), "the aliased slave itself");
        assert_eq!(resolve(&s, 7, 2), Some(3), "two after it");
        assert_eq!(resolve(&s, 9, 1), Some(4));
        assert_eq!(resolve(&s, 9, 2), None, "beyond the end");
        assert_eq!(resolve(&s, 5, 0), None, "unknown alias");
        assert_eq!(resolve(&s, 0, 5), None);
    }
}
