//! Startup SDOs (replayed in PREOP at every configuration of the slave, as IgH does) and the
//! CoE emergency ring of a slave configuration.
//!
//! Emergencies arrive in the runtime's SDO service (a slave sends them in its mailbox, which
//! the master reads while serving transfers); they are moved into the ring of the
//! configuration attached to that slave when the application looks at the ring.
//!
//! A startup request that fails is logged once ([`log_events`]), not at each of the
//! supervisor's retries.

use crate::check;
use crate::ffi::{errno, guard};
use crate::log;
use crate::master::Phase;
use crate::slave_config::{idle_or, sc_or, SlaveConfig};
use ecat::mailbox::sdo::SdoOp;
use ecat::runtime::Runtime;
use ecat::supervisor::Event;
use ecat_wire::al::AlState;
use std::collections::VecDeque;

/// `who: ` in front of an error that does not name its SubDevice already.
struct Named<'a>(&'a ecat::error::Who, &'a str);

impl std::fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.1.contains("SubDevice ") {
            return Ok(());
        }
        write!(f, "{}: ", self.0)
    }
}

/// Log the supervisor's startup problems, each once: a failed startup request (SDO, IDN, ...)
/// when it first fails, not at every retry from INIT (`last[p]` keeps SubDevice p's last
/// logged error until it reaches OP); a passed-over optional request (EoE IP parameters) once
/// per configuration; PDO configuration warnings as they come (IgH logs them as warnings),
/// and a SAFEOP refused over differing PDOs once per difference. Other events are not logged. Allocates nothing (the event's own text is
/// kept), so it runs in `ecrt_master_receive`. Inlined there: a cycle without events only
/// looks at the queue; taking an event apart is out of line.
#[inline(always)]
pub fn log_events(rt: &mut Runtime, last: &mut [Option<String>]) {
    while let Some(e) = rt.next_event() {
        log_event(e, last);
    }
}

/// One event of [`log_events`].
#[cold]
#[inline(never)]
fn log_event(e: Event, last: &mut [Option<String>]) {
    match e {
        Event::StartupFailed { who, error, .. } => {
            let Some(slot) = last.get_mut(who.position as usize) else {
                return;
            };
            if slot.as_ref() != Some(&error) {
                log!("{}{error}; it stays out of OP and is configured again from INIT until this succeeds (logged once)", Named(&who, &error));
                *slot = Some(error);
            }
        }
        Event::StartupSkipped { who, error, .. } => {
            log!(
                "{}{error}; it goes on to OP without it",
                Named(&who, &error)
            )
        }
        Event::PdoWarning { .. } => log!("WARNING: {e}"),
        Event::PdoMismatch {
            ref who,
            ref differences,
            ..
        } => {
            let Some(slot) = last.get_mut(who.position as usize) else {
                return;
            };
            if slot.as_ref() != Some(differences) {
                *slot = Some(differences.clone());
                log!("{e}");
            }
        }
        Event::Reached {
            who,
            state: AlState::Op,
            ..
        } => {
            if let Some(slot) = last.get_mut(who.position as usize) {
                *slot = None;
            }
        }
        _ => {}
    }
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
    // SAFETY: a live configuration (checked by the caller); read its master only.
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
        // SAFETY: data is NULL or points to size readable bytes (API contract).
        let bytes = match unsafe { check::input(F, "data", data, size, true) } {
            Ok(b) => b.to_vec(),
            Err(e) => return e,
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
        // SAFETY: data is NULL or points to size readable bytes (API contract).
        let bytes = match unsafe { check::input(F, "data", data, size, false) } {
            Ok(b) => b.to_vec(),
            Err(e) => return e,
        };
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
        if !idle_or(sc, F) {
            return errno::EPERM;
        }
        // The ring is allocated here, so receiving an emergency allocates nothing.
        let mut records = VecDeque::new();
        let fits = elements
            .checked_mul(8)
            .is_some_and(|bytes| bytes <= check::MAX_BUFFER);
        if !fits || records.try_reserve_exact(elements).is_err() {
            log!("{F}: a ring of {elements} emergency messages cannot be had (at most {} fit in {} bytes)", check::MAX_BUFFER / 8, check::MAX_BUFFER);
            return errno::ENOMEM;
        }
        sc.emergencies.capacity = elements;
        sc.emergencies.records = records;
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
        // SAFETY: IgH's threading rule; the pointer itself is checked.
        if unsafe { check::config(sc, F) }.is_none() {
            return errno::EINVAL;
        }
        drain_emergencies(sc);
        // SAFETY: checked above; drain_emergencies holds no reference any more.
        let sc = unsafe { &mut *sc };
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
        // SAFETY: IgH's threading rule; the pointer itself is checked.
        if unsafe { check::config(sc as *mut SlaveConfig, F) }.is_none() {
            return errno::EINVAL;
        }
        drain_emergencies(sc);
        // SAFETY: checked above; drain_emergencies holds no reference any more.
        unsafe { &*sc }.emergencies.overruns
    })
}
