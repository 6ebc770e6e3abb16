//! `ec_slave_config_t`: the application's configuration of one SubDevice, IgH-style.
//!
//! A configuration addresses a SubDevice by (alias, position) and expects a vendor id and
//! product code. It is *attached* when a SubDevice with that identity sits there; then it
//! starts from that SubDevice's PDO configuration as found (over CoE, or from the SII), which
//! the PDO calls change. At activation an attached configuration becomes the SubDevice's
//! [`SubDeviceConfig`] and startup SDOs; an unattached one configures nothing and reports
//! itself offline.

use crate::abi::{self, PdoInfo, SlaveConfigState, SyncInfo};
use crate::domain::Domain;
use crate::ffi::{arg, arg_mut, errno, guard};
use crate::log;
use crate::master::{Master, Phase};
use crate::requests::{RegRequest, SdoRequest};
use ecat::config::{Direction, EntryConfig, PdoConfig, SubDeviceConfig, SyncConfig};
use ecat::mailbox::sdo::SdoOp;
use std::collections::VecDeque;

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

/// The CoE emergency ring.
#[derive(Debug, Default)]
pub struct EmergencyRing {
    /// Capacity (0 drops every message).
    pub capacity: usize,
    /// Records, oldest first.
    pub records: VecDeque<[u8; 8]>,
    /// Messages dropped because the ring was full.
    pub overruns: i32,
}

impl EmergencyRing {
    /// Keep `record`; when full, drop it and count an overrun (IgH keeps the oldest).
    pub fn push(&mut self, record: [u8; 8]) {
        if self.records.len() >= self.capacity {
            self.overruns = self.overruns.saturating_add(1);
        } else {
            self.records.push_back(record);
        }
    }
}

/// Move the CoE emergencies the runtime collected into the rings of the configurations
/// attached to their SubDevices. Works through raw pointers: the caller holds no reference
/// to any configuration meanwhile.
fn drain_emergencies(sc: *const SlaveConfig) {
    // SAFETY: a live configuration (checked non-NULL by the caller); read its master only.
    let master = unsafe { (*sc).master };
    // SAFETY: the master outlives its configurations; IgH's threading rule.
    let inner = unsafe { (*master).inner() };
    let Phase::Active(rt) = &mut inner.phase else {
        return;
    };
    while let Some((pos, e)) = rt.take_emergency() {
        let mut rec = [0u8; 8];
        let _ = e.emit(&mut rec);
        for &p in &inner.configs {
            // SAFETY: configurations are owned by the master and alive; no other reference
            // to them exists during this call.
            let c = unsafe { &mut *p };
            if c.attached == Some(pos) {
                c.emergencies.push(rec);
            }
        }
    }
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

    fn sync_mut(&mut self, index: u8, dir_hint: Option<Direction>) -> &mut SyncConfig {
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
    fn default_mapping(&self, index: u16) -> Vec<EntryConfig> {
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

    fn pdo_mut(&mut self, index: u16) -> Option<&mut PdoConfig> {
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

macro_rules! sc_or {
    ($sc:expr, $f:expr, $ret:expr) => {
        // SAFETY: the C caller passes NULL or a live configuration (API contract).
        match unsafe { arg_mut($sc, $f, "sc") } {
            Some(sc) => sc,
            None => return $ret,
        }
    };
}

fn idle_or(sc: &SlaveConfig, f: &str) -> bool {
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

fn direction(dir: u32) -> Option<Direction> {
    match dir {
        abi::dir::OUTPUT => Some(Direction::Output),
        abi::dir::INPUT => Some(Direction::Input),
        _ => None,
    }
}

/// Configure a sync manager's direction and watchdog mode.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_sync_manager(
    sc: *mut SlaveConfig,
    sync_index: u8,
    dir: u32,
    watchdog_mode: u32,
) -> i32 {
    const F: &str = "ecrt_slave_config_sync_manager";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if sync_index as usize >= 16 {
            log!("{F}: sync manager {sync_index} does not exist (0..15)");
            return errno::ENOENT;
        }
        let Some(d) = direction(dir) else {
            log!("{F}: direction {dir} is neither EC_DIR_OUTPUT nor EC_DIR_INPUT");
            return errno::EINVAL;
        };
        let _ = watchdog_mode;
        sc.sync_mut(sync_index, Some(d)).direction = d;
        0
    })
}

/// Watchdog divider and intervals (recorded; ecat keeps the SubDevice's watchdog defaults).
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
        if watchdog_divider != 0 || watchdog_intervals != 0 {
            log!(
                "{F}: ecat does not write watchdog registers yet; {} keeps its default watchdog",
                sc.name()
            );
        }
        sc.watchdog = (watchdog_divider, watchdog_intervals);
        0
    })
}

/// Add PDO `index` to the assignment of sync manager `sync_index`.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_pdo_assign_add(
    sc: *mut SlaveConfig,
    sync_index: u8,
    index: u16,
) -> i32 {
    const F: &str = "ecrt_slave_config_pdo_assign_add";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if sync_index as usize >= 16 {
            log!("{F}: sync manager {sync_index} does not exist (0..15)");
            return errno::EINVAL;
        }
        let entries = sc.default_mapping(index);
        let hint = match index & 0xFF00 {
            0x1600 | 0x1700 => Some(Direction::Output),
            0x1A00 | 0x1B00 => Some(Direction::Input),
            _ => None,
        };
        sc.sync_mut(sync_index, hint)
            .pdos
            .push(PdoConfig { index, entries });
        0
    })
}

/// Clear the PDO assignment of sync manager `sync_index`.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_pdo_assign_clear(
    sc: *mut SlaveConfig,
    sync_index: u8,
) -> i32 {
    const F: &str = "ecrt_slave_config_pdo_assign_clear";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if sync_index as usize >= 16 {
            log!("{F}: sync manager {sync_index} does not exist (0..15)");
            return errno::EINVAL;
        }
        sc.sync_mut(sync_index, None).pdos.clear();
        0
    })
}

/// Add an entry to the mapping of PDO `pdo_index`.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_pdo_mapping_add(
    sc: *mut SlaveConfig,
    pdo_index: u16,
    entry_index: u16,
    entry_subindex: u8,
    entry_bit_length: u8,
) -> i32 {
    const F: &str = "ecrt_slave_config_pdo_mapping_add";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        let name = sc.name();
        match sc.pdo_mut(pdo_index) {
            Some(p) => {
                p.entries.push(EntryConfig {
                    index: entry_index,
                    subindex: entry_subindex,
                    bits: entry_bit_length,
                });
                0
            }
            None => {
                log!("{F}: PDO 0x{pdo_index:04X} is not assigned in {name}; assign it first");
                errno::ENOENT
            }
        }
    })
}

/// Clear the mapping of PDO `pdo_index`.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_pdo_mapping_clear(
    sc: *mut SlaveConfig,
    pdo_index: u16,
) -> i32 {
    const F: &str = "ecrt_slave_config_pdo_mapping_clear";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        let name = sc.name();
        match sc.pdo_mut(pdo_index) {
            Some(p) => {
                p.entries.clear();
                0
            }
            None => {
                log!("{F}: PDO 0x{pdo_index:04X} is not assigned in {name}");
                errno::ENOENT
            }
        }
    })
}

/// The whole PDO configuration from `ec_sync_info_t` lists (`n_syncs = EC_END` reads up to
/// `index == 0xff`).
///
/// # Safety
/// `sc` NULL or a live configuration; `syncs` points to `n_syncs` records (or an 0xff-ended
/// list), each with valid `pdos`/`entries` arrays of the given lengths.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_pdos(
    sc: *mut SlaveConfig,
    n_syncs: u32,
    syncs: *const SyncInfo,
) -> i32 {
    const F: &str = "ecrt_slave_config_pdos";
    guard(F, errno::EINVAL, || {
        if sc.is_null() {
            log!("{F}: sc is NULL");
            return errno::EINVAL;
        }
        if syncs.is_null() {
            return 0;
        }
        let mut i = 0usize;
        loop {
            if n_syncs != u32::MAX && i >= n_syncs as usize {
                break;
            }
            // SAFETY: within the caller's array (n_syncs records or up to the 0xff record).
            let s: SyncInfo = unsafe { *syncs.add(i) };
            i += 1;
            if n_syncs == u32::MAX && s.index == 0xFF {
                break;
            }
            if s.index as usize >= 16 {
                log!("{F}: sync manager {} does not exist (0..15)", s.index);
                return errno::ENOENT;
            }
            // SAFETY: forwarded contract.
            let r = unsafe { ecrt_slave_config_sync_manager(sc, s.index, s.dir, s.watchdog_mode) };
            if r != 0 {
                return r;
            }
            if s.n_pdos == 0 || s.pdos.is_null() {
                continue;
            }
            // SAFETY: forwarded contract.
            let r = unsafe { ecrt_slave_config_pdo_assign_clear(sc, s.index) };
            if r != 0 {
                return r;
            }
            for j in 0..s.n_pdos as usize {
                // SAFETY: s.pdos has n_pdos records (caller's contract).
                let p: PdoInfo = unsafe { *s.pdos.add(j) };
                // SAFETY: forwarded contract.
                let r = unsafe { ecrt_slave_config_pdo_assign_add(sc, s.index, p.index) };
                if r != 0 {
                    return r;
                }
                if p.n_entries == 0 || p.entries.is_null() {
                    continue;
                }
                // SAFETY: forwarded contract.
                let r = unsafe { ecrt_slave_config_pdo_mapping_clear(sc, p.index) };
                if r != 0 {
                    return r;
                }
                for k in 0..p.n_entries as usize {
                    // SAFETY: p.entries has n_entries records (caller's contract).
                    let e = unsafe { *p.entries.add(k) };
                    // SAFETY: forwarded contract.
                    let r = unsafe {
                        ecrt_slave_config_pdo_mapping_add(
                            sc,
                            p.index,
                            e.index,
                            e.subindex,
                            e.bit_length,
                        )
                    };
                    if r != 0 {
                        return r;
                    }
                }
            }
        }
        0
    })
}

/// Register an entry found by sync manager / PDO / entry positions, or by index.
fn register(
    f: &str,
    sc: *mut SlaveConfig,
    domain: *mut Domain,
    bit_position: *mut u32,
    find: impl FnOnce(&SlaveConfig) -> Result<(u8, Direction, u32, usize), String>,
) -> i32 {
    // SAFETY: the C caller passes NULL or live objects (API contract).
    let Some((s, d)) = (unsafe { arg_mut(sc, f, "sc") })
        .and_then(|x| unsafe { arg_mut(domain, f, "domain") }.map(|y| (x, y)))
    else {
        return errno::EINVAL;
    };
    if !idle_or(s, f) {
        return errno::EPERM;
    }
    if d.master != s.master {
        log!("{f}: the domain belongs to another master");
        return errno::EINVAL;
    }
    let (sm, dir, bit, bytes) = match find(s) {
        Ok(x) => x,
        Err(e) => {
            log!("{f}: {e}");
            return errno::ENOENT;
        }
    };
    let base = d.register(sc, s.attached, sm, dir, bytes);
    let byte = base + (bit / 8) as usize;
    let bitpos = bit % 8;
    if bit_position.is_null() {
        if bitpos != 0 {
            log!("{f}: the entry is not byte-aligned (bit {bitpos} of byte {byte}); pass bit_position to get it");
            return errno::EINVAL;
        }
    } else {
        // SAFETY: non-NULL, writable per the API contract.
        unsafe { *bit_position = bitpos };
    }
    byte as i32
}

/// Register PDO entry `index:subindex` in `domain`; returns its byte offset or < 0.
///
/// # Safety
/// `sc`, `domain` NULL or live; `bit_position` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_reg_pdo_entry(
    sc: *mut SlaveConfig,
    entry_index: u16,
    entry_subindex: u8,
    domain: *mut Domain,
    bit_position: *mut u32,
) -> i32 {
    const F: &str = "ecrt_slave_config_reg_pdo_entry";
    guard(F, errno::EINVAL, || {
        register(F, sc, domain, bit_position, |s| {
            s.find_entry(entry_index, entry_subindex).ok_or_else(|| {
                format!(
                    "PDO entry 0x{entry_index:04X}:{entry_subindex:02X} is not mapped in any PDO of {}{}",
                    s.name(),
                    if s.attached.is_none() { " (unattached: give its PDOs with ecrt_slave_config_pdos)" } else { "" }
                )
            })
        })
    })
}

/// Register the entry at (sync manager, PDO position, entry position) in `domain`.
///
/// # Safety
/// `sc`, `domain` NULL or live; `bit_position` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_reg_pdo_entry_pos(
    sc: *mut SlaveConfig,
    sync_index: u8,
    pdo_pos: u32,
    entry_pos: u32,
    domain: *mut Domain,
    bit_position: *mut u32,
) -> i32 {
    const F: &str = "ecrt_slave_config_reg_pdo_entry_pos";
    guard(F, errno::EINVAL, || {
        if sync_index as usize >= 16 {
            log!("{F}: sync manager {sync_index} does not exist (0..15)");
            return errno::EINVAL;
        }
        register(F, sc, domain, bit_position, |s| {
            let sync = s.config.sync.iter().find(|x| x.index == sync_index);
            let missing = || {
                format!(
                    "{} has no entry {entry_pos} in PDO {pdo_pos} of sync manager {sync_index}",
                    s.name()
                )
            };
            let sync = sync.ok_or_else(missing)?;
            let pdo = sync.pdos.get(pdo_pos as usize).ok_or_else(missing)?;
            if entry_pos as usize >= pdo.entries.len() {
                return Err(missing());
            }
            let before: u32 = sync.pdos[..pdo_pos as usize]
                .iter()
                .map(PdoConfig::bits)
                .sum::<u32>()
                + pdo.entries[..entry_pos as usize]
                    .iter()
                    .map(|e| e.bits as u32)
                    .sum::<u32>();
            Ok((sync_index, sync.direction, before, sync.bytes() as usize))
        })
    })
}

fn add_sdo(f: &str, sc: *mut SlaveConfig, op: SdoOp) -> i32 {
    let sc = sc_or!(sc, f, errno::EINVAL);
    if !idle_or(sc, f) {
        return errno::EPERM;
    }
    if sc.attached.is_some() && !sc.has_coe() {
        log!("{f}: the slave of {} has no CoE mailbox", sc.name());
        return errno::EPROTONOSUPPORT;
    }
    sc.startup.push(op);
    0
}

/// Add a startup SDO (written in PREOP at every configuration).
///
/// # Safety
/// `sc` NULL or live; `data` points to `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_sdo(
    sc: *mut SlaveConfig,
    index: u16,
    subindex: u8,
    data: *const u8,
    size: usize,
) -> i32 {
    const F: &str = "ecrt_slave_config_sdo";
    guard(F, errno::EINVAL, || {
        if data.is_null() && size > 0 {
            log!("{F}: data is NULL");
            return errno::EINVAL;
        }
        let bytes = if size == 0 {
            Vec::new()
        } else {
            // SAFETY: data points to size readable bytes (API contract).
            unsafe { std::slice::from_raw_parts(data, size) }.to_vec()
        };
        add_sdo(
            F,
            sc,
            SdoOp::Download {
                index,
                subindex,
                complete_access: false,
                data: bytes,
            },
        )
    })
}

/// Startup SDO of one byte.
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_sdo8(
    sc: *mut SlaveConfig,
    sdo_index: u16,
    sdo_subindex: u8,
    value: u8,
) -> i32 {
    guard("ecrt_slave_config_sdo8", errno::EINVAL, || {
        add_sdo(
            "ecrt_slave_config_sdo8",
            sc,
            SdoOp::Download {
                index: sdo_index,
                subindex: sdo_subindex,
                complete_access: false,
                data: vec![value],
            },
        )
    })
}

/// Startup SDO of two bytes (little-endian).
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_sdo16(
    sc: *mut SlaveConfig,
    sdo_index: u16,
    sdo_subindex: u8,
    value: u16,
) -> i32 {
    guard("ecrt_slave_config_sdo16", errno::EINVAL, || {
        add_sdo(
            "ecrt_slave_config_sdo16",
            sc,
            SdoOp::Download {
                index: sdo_index,
                subindex: sdo_subindex,
                complete_access: false,
                data: value.to_le_bytes().to_vec(),
            },
        )
    })
}

/// Startup SDO of four bytes (little-endian).
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_sdo32(
    sc: *mut SlaveConfig,
    sdo_index: u16,
    sdo_subindex: u8,
    value: u32,
) -> i32 {
    guard("ecrt_slave_config_sdo32", errno::EINVAL, || {
        add_sdo(
            "ecrt_slave_config_sdo32",
            sc,
            SdoOp::Download {
                index: sdo_index,
                subindex: sdo_subindex,
                complete_access: false,
                data: value.to_le_bytes().to_vec(),
            },
        )
    })
}

/// Startup SDO with complete access (the data starts with subindex 0).
///
/// # Safety
/// `sc` NULL or live; `data` points to `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_complete_sdo(
    sc: *mut SlaveConfig,
    index: u16,
    data: *const u8,
    size: usize,
) -> i32 {
    const F: &str = "ecrt_slave_config_complete_sdo";
    guard(F, errno::EINVAL, || {
        if data.is_null() {
            log!("{F}: data is NULL");
            return errno::EINVAL;
        }
        // SAFETY: data points to size readable bytes (API contract).
        let bytes = unsafe { std::slice::from_raw_parts(data, size) }.to_vec();
        add_sdo(
            F,
            sc,
            SdoOp::Download {
                index,
                subindex: 0,
                complete_access: true,
                data: bytes,
            },
        )
    })
}

/// Set the emergency ring size.
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_emerg_size(
    sc: *mut SlaveConfig,
    elements: usize,
) -> i32 {
    const F: &str = "ecrt_slave_config_emerg_size";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        sc.emergencies.capacity = elements;
        sc.emergencies.records = VecDeque::with_capacity(elements);
        0
    })
}

/// Pop one emergency record (8 bytes) into `target`; -ENOENT if there is none.
///
/// # Safety
/// `sc` NULL or live; `target` NULL or 8 writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_emerg_pop(sc: *mut SlaveConfig, target: *mut u8) -> i32 {
    const F: &str = "ecrt_slave_config_emerg_pop";
    guard(F, errno::EINVAL, || {
        if !sc.is_null() {
            drain_emergencies(sc);
        }
        let sc = sc_or!(sc, F, errno::EINVAL);
        if target.is_null() {
            log!("{F}: target is NULL");
            return errno::EINVAL;
        }
        match sc.emergencies.records.pop_front() {
            Some(r) => {
                // SAFETY: target has 8 writable bytes (API contract).
                unsafe { std::ptr::copy_nonoverlapping(r.as_ptr(), target, 8) };
                0
            }
            None => errno::ENOENT,
        }
    })
}

/// Clear the emergency ring and its overrun counter.
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_emerg_clear(sc: *mut SlaveConfig) -> i32 {
    const F: &str = "ecrt_slave_config_emerg_clear";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        sc.emergencies.records.clear();
        sc.emergencies.overruns = 0;
        0
    })
}

/// Emergency messages lost because the ring was full.
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_emerg_overruns(sc: *const SlaveConfig) -> i32 {
    const F: &str = "ecrt_slave_config_emerg_overruns";
    guard(F, errno::EINVAL, || {
        if !sc.is_null() {
            drain_emergencies(sc);
        }
        // SAFETY: NULL or live (API contract).
        match unsafe { arg(sc, F, "sc") } {
            Some(sc) => sc.emergencies.overruns,
            None => errno::EINVAL,
        }
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
        let Some((sc, out)) = (unsafe { arg(sc, F, "sc") })
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
        let _sc = sc_or!(sc, F, errno::EINVAL);
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
