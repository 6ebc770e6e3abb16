//! Distributed clock calls.
//!
//! ecat's cyclic frames carry the DC datagrams themselves once DC is set up at activation
//! (any configuration with SYNC0 in `ecrt_slave_config_dc`): the FRMW that spreads the
//! reference clock's time to every DC slave, and the sync monitor's BRD of 0x092C. So
//! `sync_slave_clocks` and `sync_monitor_queue` confirm that those datagrams are in the frames
//! (or say there is no reference clock: -ENXIO).
//!
//! The reference clock is the time master (ecat's `MasterFollowsReference`): without hardware
//! transmit timestamps, writing the application's time into the reference clock every cycle
//! (IgH's `sync_reference_clock`) would write the host's send jitter into every clock of the
//! bus. `sync_reference_clock(_to)` therefore succeed without writing; the application time is
//! recorded (`ecrt_master` reports it), and an application that wants its cycle locked to the
//! bus uses `ecrt_master_reference_clock_time`, as IgH documents. Nothing here allocates.

use crate::ffi::{arg_mut, errno, guard};
use crate::master::Master;
use crate::slave_config::{DcSettings, SlaveConfig};

fn with_dc(
    f: &str,
    master: *const Master,
    act: impl FnOnce(&mut ecat::runtime::Runtime) -> i32,
) -> i32 {
    // SAFETY: IgH's threading rule; the master pointer itself is checked.
    let Some(m) = (unsafe { crate::check::master(master, f) }) else {
        return errno::EINVAL;
    };
    // SAFETY: IgH's threading rule (the cyclic thread).
    let dc = unsafe { m.inner() }.dc;
    // SAFETY: as above.
    match unsafe { m.runtime() } {
        Some(rt) if dc => act(rt),
        Some(_) => errno::ENXIO,
        None => crate::cyclic::not_active(f, m.index),
    }
}

/// Record the application time (ns since 2000-01-01).
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_application_time(master: *mut Master, app_time: u64) -> i32 {
    const F: &str = "ecrt_master_application_time";
    guard(F, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, F) }) else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        unsafe { m.inner() }.app_time = app_time;
        if let Some(c) = &m.control {
            c.set_app_time(app_time);
        }
        0
    })
}

/// IgH: drive the reference clock to the application time. ecat keeps the reference clock as
/// the time master (see the module documentation); succeeds when DC runs.
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_sync_reference_clock(master: *mut Master) -> i32 {
    guard("ecrt_master_sync_reference_clock", errno::EINVAL, || {
        with_dc("ecrt_master_sync_reference_clock", master, |_| 0)
    })
}

/// IgH: drive the reference clock to `sync_time`. As `ecrt_master_sync_reference_clock`.
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_sync_reference_clock_to(
    master: *mut Master,
    sync_time: u64,
) -> i32 {
    guard("ecrt_master_sync_reference_clock_to", errno::EINVAL, || {
        let _ = sync_time;
        with_dc("ecrt_master_sync_reference_clock_to", master, |_| 0)
    })
}

/// Spread the reference time to every DC slave (the cyclic FRMW).
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_sync_slave_clocks(master: *mut Master) -> i32 {
    guard("ecrt_master_sync_slave_clocks", errno::EINVAL, || {
        with_dc("ecrt_master_sync_slave_clocks", master, |_| 0)
    })
}

/// Lower 32 bits of the reference clock's time seen by the last cycle.
///
/// # Safety
/// `master` NULL or live; `time` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_reference_clock_time(
    master: *const Master,
    time: *mut u32,
) -> i32 {
    const F: &str = "ecrt_master_reference_clock_time";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or writable (API contract).
        let Some(out) = (unsafe { arg_mut(time, F, "time") }) else {
            return errno::EINVAL;
        };
        with_dc(F, master, |rt| match rt.dc_time() {
            Some(t) => {
                *out = t as u32;
                0
            }
            None => errno::EIO,
        })
    })
}

/// Queue the sync monitor (it is in every cycle's frames).
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_sync_monitor_queue(master: *mut Master) -> i32 {
    guard("ecrt_master_sync_monitor_queue", errno::EINVAL, || {
        with_dc("ecrt_master_sync_monitor_queue", master, |_| 0)
    })
}

/// Upper bound of the DC deviation of the last cycle (ns); `0xffffffff` if unknown.
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_sync_monitor_process(master: *const Master) -> u32 {
    guard("ecrt_master_sync_monitor_process", u32::MAX, || {
        let mut v = u32::MAX;
        with_dc("ecrt_master_sync_monitor_process", master, |rt| {
            v = rt.dc_sync_monitor_ns().unwrap_or(u32::MAX);
            0
        });
        v
    })
}

/// AssignActivate and SYNC0/SYNC1 times of a slave configuration.
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_dc(
    sc: *mut SlaveConfig,
    assign_activate: u16,
    sync0_cycle: u32,
    sync0_shift: i32,
    sync1_cycle: u32,
    sync1_shift: i32,
) -> i32 {
    const F: &str = "ecrt_slave_config_dc";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or live (API contract).
        let Some(s) = (unsafe { crate::check::config(sc, F) }) else {
            return errno::EINVAL;
        };
        if !crate::slave_config::idle_or(s, F) {
            return errno::EPERM;
        }
        // IgH ignores sync1_shift too: 0x09A4 carries the SYNC1 cycle only.
        let _ = sync1_shift;
        s.dc = Some(DcSettings {
            assign_activate,
            sync0_cycle,
            sync0_shift,
            sync1_cycle,
        });
        0
    })
}
