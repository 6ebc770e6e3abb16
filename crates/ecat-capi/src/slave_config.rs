//! `ec_slave_config_t`: the application's configuration of one SubDevice, IgH-style.
//!
//! A configuration addresses a SubDevice by (alias, position) and expects a vendor id and
//! product code. It is *attached* when a SubDevice with that identity sits there; then it
//! starts from that SubDevice's PDO configuration as found (over CoE, or from the SII), which
//! the PDO calls change. At activation an attached configuration becomes the SubDevice's
//! [`SubDeviceConfig`] and startup SDOs; an unattached one configures nothing and reports
//! itself offline.

//!
//! This module holds the object and its state, flags and timeouts; [`crate::pdo_config`] the
//! PDO configuration and entry registration; [`crate::startup`] startup SDOs and emergencies;
//! [`crate::soe`] startup IDNs and SoE requests; [`crate::voe`] VoE handlers; [`crate::eoe`]
//! EoE parameters.

use crate::abi::SlaveConfigState;
use crate::ffi::{arg_mut, errno, guard};
use crate::log;
use crate::master::{Master, Phase};
use crate::requests::{RegRequest, SdoRequest};
use crate::soe::{SoeRequest, StartupIdn};
use crate::startup::EmergencyRing;
use crate::voe::VoeHandler;
use ecat::config::{Direction, EntryConfig, PdoConfig, SubDeviceConfig, SyncConfig};
use ecat::mailbox::sdo::SdoOp;
use ecat_wire::eoe::IpParams;

/// SYNC0/SYNC1 settings from `ecrt_slave_config_dc`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DcSettings {
    /// AssignActivate word (0x0300 = SYNC0 active).
    pub assign_activate: u16,
    /// SYNC0 cycle (ns).
    pub sync0_cycle: u32,
    /// SYNC0 shift (ns).
    pub sync0_shift: i32,
    /// SYNC1 cycle (ns).
    pub sync1_cycle: u32,
}

/// `ec_slave_config_t`.
pub struct SlaveConfig {
    /// The owning master.
    pub master: *mut Master,
    /// Alias.
    pub alias: u16,
    /// Position (after the alias).
    pub position: u16,
    /// Expected vendor id.
    pub vendor_id: u32,
    /// Expected product code.
    pub product_code: u32,
    /// Ring position of the SubDevice it is attached to.
    pub attached: Option<usize>,
    /// The process data configuration (sync managers, PDOs, entries).
    pub config: SubDeviceConfig,
    /// The SubDevice's configuration as found, if attached.
    pub defaults: Option<SubDeviceConfig>,
    /// Watchdog divider and intervals (0 = default).
    pub watchdog: (u16, u16),
    /// Startup SDOs, in order.
    pub startup: Vec<SdoOp>,
    /// Distributed clocks.
    pub dc: Option<DcSettings>,
    /// Emergency ring.
    pub emergencies: EmergencyRing,
    /// SDO requests (owned).
    pub sdo_requests: Vec<*mut SdoRequest>,
    /// Register requests (owned).
    pub reg_requests: Vec<*mut RegRequest>,
    /// Startup IDNs, in order.
    pub idns: Vec<StartupIdn>,
    /// SoE requests (owned).
    pub soe_requests: Vec<*mut SoeRequest>,
    /// VoE handlers (owned).
    pub voe_handlers: Vec<*mut VoeHandler>,
    /// EoE IP parameters set at configuration (the fields given; [`crate::eoe`]).
    pub eoe: IpParams,
    /// Flags (`AssignToPdi`, `WaitBeforeSAFEOPms`, ...), recorded.
    pub flags: Vec<(String, i32)>,
}

impl Drop for SlaveConfig {
    fn drop(&mut self) {
        for p in self.sdo_requests.drain(..) {
            // SAFETY: created by Box::into_raw in create_sdo_request, freed only here.
            drop(unsafe { Box::from_raw(p) });
        }
        for p in self.reg_requests.drain(..) {
            // SAFETY: created by Box::into_raw in create_reg_request, freed only here.
            drop(unsafe { Box::from_raw(p) });
        }
        for p in self.soe_requests.drain(..) {
            // SAFETY: created by Box::into_raw in create_soe_request, freed only here.
            drop(unsafe { Box::from_raw(p) });
        }
        for p in self.voe_handlers.drain(..) {
            // SAFETY: created by Box::into_raw in create_voe_handler, freed only here.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

impl SlaveConfig {
    /// A new configuration.
    pub fn new(
        master: *mut Master,
        alias: u16,
        position: u16,
        vendor_id: u32,
        product_code: u32,
        attached: Option<usize>,
        defaults: Option<SubDeviceConfig>,
    ) -> SlaveConfig {
        SlaveConfig {
            master,
            alias,
            position,
            vendor_id,
            product_code,
            attached,
            config: defaults.clone().unwrap_or_default(),
            defaults,
            watchdog: (0, 0),
            startup: Vec::new(),
            dc: None,
            emergencies: EmergencyRing::default(),
            sdo_requests: Vec::new(),
            reg_requests: Vec::new(),
            idns: Vec::new(),
            soe_requests: Vec::new(),
            voe_handlers: Vec::new(),
            eoe: IpParams::default(),
            flags: Vec::new(),
        }
    }

    /// `alias:position` for messages.
    pub fn name(&self) -> String {
        format!("slave config {}:{}", self.alias, self.position)
    }

    /// The master.
    pub fn master<'a>(&self) -> &'a Master {
        // SAFETY: a configuration never outlives its master (freed by it); the master is a
        // separate allocation, so this reference does not alias the configuration.
        unsafe { &*self.master }
    }

    pub(crate) fn sync_mut(&mut self, index: u8, dir_hint: Option<Direction>) -> &mut SyncConfig {
        if let Some(i) = self.config.sync.iter().position(|s| s.index == index) {
            return &mut self.config.sync[i];
        }
        let direction = dir_hint.unwrap_or_else(|| self.default_direction(index));
        self.config.sync.push(SyncConfig {
            index,
            direction,
            pdos: Vec::new(),
            domain: 0,
        });
        self.config.sync.sort_by_key(|s| s.index);
        let i = self
            .config
            .sync
            .iter()
            .position(|s| s.index == index)
            .unwrap_or(0);
        &mut self.config.sync[i]
    }

    /// The direction the SubDevice's SII gives sync manager `index` (outputs for SM2-like).
    fn default_direction(&self, index: u8) -> Direction {
        // SAFETY: IgH's threading rule (configuration calls from one thread).
        let inner = unsafe { self.master().inner() };
        let kind = self
            .attached
            .and_then(|p| inner.subdevices.get(p))
            .and_then(|s| s.sync_managers.get(index as usize))
            .map(|s| s.kind);
        match kind {
            Some(4) => Direction::Input,
            Some(3) => Direction::Output,
            _ if index % 2 == 1 => Direction::Input,
            _ => Direction::Output,
        }
    }

    /// The default mapping of PDO `index` (as found on the SubDevice, or from its SII).
    pub(crate) fn default_mapping(&self, index: u16) -> Vec<EntryConfig> {
        if let Some(d) = &self.defaults {
            for s in &d.sync {
                if let Some(p) = s.pdos.iter().find(|p| p.index == index) {
                    return p.entries.clone();
                }
            }
        }
        // SAFETY: IgH's threading rule.
        let inner = unsafe { self.master().inner() };
        self.attached
            .and_then(|p| inner.subdevices.get(p))
            .and_then(|s| {
                s.rx_pdos
                    .iter()
                    .chain(&s.tx_pdos)
                    .find(|p| p.index == index)
            })
            .map(|p| {
                p.entries
                    .iter()
                    .map(|e| EntryConfig {
                        index: e.index,
                        subindex: e.subindex,
                        bits: e.bits,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    pub(crate) fn pdo_mut(&mut self, index: u16) -> Option<&mut PdoConfig> {
        self.config
            .sync
            .iter_mut()
            .flat_map(|s| s.pdos.iter_mut())
            .find(|p| p.index == index)
    }

    /// Whether the attached SubDevice speaks CoE.
    pub fn has_coe(&self) -> bool {
        // SAFETY: IgH's threading rule.
        let inner = unsafe { self.master().inner() };
        self.attached
            .and_then(|p| inner.subdevices.get(p))
            .is_some_and(|s| ecat::runtime::coe_area(s).is_some())
    }

    /// Where entry `index:subindex` is: (sync index, direction, bit offset in the SM's data,
    /// SM bytes).
    pub fn find_entry(&self, index: u16, subindex: u8) -> Option<(u8, Direction, u32, usize)> {
        let (sm, bit, _) = self.config.entry_bit_offset(index, subindex)?;
        let s = self.config.sync.iter().find(|s| s.index == sm)?;
        Some((sm, s.direction, bit, s.bytes() as usize))
    }
}

/// The configuration behind a C pointer, or log and return `$ret`.
macro_rules! sc_or {
    ($sc:expr, $f:expr, $ret:expr) => {
        // SAFETY: IgH's threading rule; the pointer itself is checked.
        match unsafe { $crate::check::config($sc as *mut _, $f) } {
            Some(sc) => sc,
            None => return $ret,
        }
    };
}
pub(crate) use sc_or;

/// True before activation; else logs that `f` belongs before `ecrt_master_activate`.
pub(crate) fn idle_or(sc: &SlaveConfig, f: &str) -> bool {
    if sc.master().is_active() {
        log!(
            "{f}: the master is already activated; configure {} before ecrt_master_activate",
            sc.name()
        );
        false
    } else {
        true
    }
}

/// Watchdog divider (0x0400) and process data watchdog intervals (0x0420), written at
/// activation every time the SubDevice is configured; 0 keeps the SubDevice's default.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_watchdog(
    sc: *mut SlaveConfig,
    watchdog_divider: u16,
    watchdog_intervals: u16,
) -> i32 {
    const F: &str = "ecrt_slave_config_watchdog";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if !idle_or(sc, F) {
            return errno::EPERM;
        }
        sc.watchdog = (watchdog_divider, watchdog_intervals);
        0
    })
}

/// State of the configuration: online, operational, AL state of its SubDevice.
///
/// # Safety
/// `sc` NULL or live; `state` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_state(
    sc: *const SlaveConfig,
    state: *mut SlaveConfigState,
) -> i32 {
    const F: &str = "ecrt_slave_config_state";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or live / writable (API contract).
        let Some((sc, out)) = (unsafe { crate::check::config(sc as *mut SlaveConfig, F) })
            .and_then(|x| unsafe { arg_mut(state, F, "state") }.map(|y| (x, y)))
        else {
            return errno::EINVAL;
        };
        let Some(p) = sc.attached else {
            *out = SlaveConfigState::new(false, false, 0);
            return 0;
        };
        // SAFETY: IgH's threading rule.
        let inner = unsafe { sc.master().inner() };
        *out = match &inner.phase {
            Phase::Active(rt) => match rt.supervisor().states().nth(p) {
                Some(s) if !s.lost => {
                    let al = s.status.state_bits() & 0xF;
                    SlaveConfigState::new(true, al == 8 && !s.status.error(), al)
                }
                _ => SlaveConfigState::new(false, false, 0),
            },
            _ => match inner.subdevices.get(p) {
                Some(s) => SlaveConfigState::new(true, false, s.al_status.state_bits() & 0xF),
                None => SlaveConfigState::new(false, false, 0),
            },
        };
        0
    })
}

/// Record a flag (`AssignToPdi`, `WaitBeforeSAFEOPms`, ...).
///
/// # Safety
/// `sc` NULL or live; `key` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_flag(
    sc: *mut SlaveConfig,
    key: *const std::os::raw::c_char,
    value: i32,
) -> i32 {
    const F: &str = "ecrt_slave_config_flag";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if !idle_or(sc, F) {
            return errno::EPERM;
        }
        if key.is_null() {
            log!("{F}: key is NULL");
            return errno::EINVAL;
        }
        // SAFETY: a NUL-terminated string (API contract).
        let k = unsafe { std::ffi::CStr::from_ptr(key) }
            .to_string_lossy()
            .into_owned();
        if k.is_empty() {
            log!("{F}: key is empty");
            return errno::EINVAL;
        }
        sc.flags.retain(|(x, _)| *x != k);
        sc.flags.push((k, value));
        0
    })
}

/// AL transition timeout (recorded; ecat's supervisor allows 5 s per transition).
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_state_timeout(
    sc: *mut SlaveConfig,
    from_state: u32,
    to_state: u32,
    timeout_ms: u32,
) -> i32 {
    const F: &str = "ecrt_slave_config_state_timeout";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if !idle_or(sc, F) {
            return errno::EPERM;
        }
        let ok = |s: u32| matches!(s, 1 | 2 | 4 | 8);
        if !ok(from_state) || !ok(to_state) {
            log!("{F}: {from_state} -> {to_state} is not a transition between AL states (1, 2, 4, 8)");
            return errno::EINVAL;
        }
        if timeout_ms != 0 {
            log!("{F}: per-transition timeouts are not applied yet; ecat allows 5 s for every transition");
        }
        0
    })
}
