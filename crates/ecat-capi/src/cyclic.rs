//! The cyclic calls, in one module so their code lies together (one or two pages, not one
//! per module): `ecrt_master_receive` → `ecrt_domain_process` → `ecrt_domain_state` /
//! `ecrt_domain_data` → `ecrt_domain_queue` → `ecrt_master_send`.
//!
//! At 1 kHz each cycle starts with cold caches and TLB, so they are kept short: the master's
//! and the domain's fields they read lie in one cache line each (see [`crate::master`] and
//! [`crate::domain`]), the error paths (a NULL argument, a call before activation, a caught
//! panic, a startup event to log, the copies of a copying domain) are out of line, and the
//! control socket costs the runtime two atomic loads per cycle while nobody asks. None of them
//! allocates.

use crate::abi::{self, DomainState};
use crate::domain::Domain;
use crate::ffi::{arg, arg_mut, errno, guard};
use crate::log;
use crate::master::{current_thread, Master, Phase};
use std::sync::atomic::Ordering;

/// The domain's image (valid after activation; NULL before).
///
/// # Safety
/// `domain` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_domain_data(domain: *const Domain) -> *mut u8 {
    const F: &str = "ecrt_domain_data";
    guard(F, std::ptr::null_mut(), || {
        // SAFETY: NULL or live (API contract).
        let Some(d) = (unsafe { arg(domain, F, "domain") }) else {
            return std::ptr::null_mut();
        };
        // SAFETY: IgH's threading rule (the application's thread).
        let Some(rt) = (unsafe { d.master().runtime() }) else {
            log!("{F}: the process data exists after ecrt_master_activate");
            return std::ptr::null_mut();
        };
        if d.shared {
            return rt.domain_mut(d.index).image_mut().as_mut_ptr();
        }
        if d.image.is_empty() {
            return std::ptr::null_mut();
        }
        d.image.as_ptr() as *mut u8
    })
}

fn warn_idle(d: &mut Domain, f: &str) {
    if !d.warned {
        d.warned = true;
        log!("{f}: the master is not activated yet; the domain exchanges nothing until ecrt_master_activate");
    }
}

/// Evaluate the working counters of the last receive and copy the inputs into the image.
/// Allocates nothing.
///
/// # Safety
/// `domain` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_domain_process(domain: *mut Domain) -> i32 {
    const F: &str = "ecrt_domain_process";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or live (API contract).
        let Some(d) = (unsafe { arg_mut(domain, F, "domain") }) else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule (the cyclic thread).
        let Some(rt) = (unsafe { d.master().runtime() }) else {
            warn_idle(d, F);
            return 0;
        };
        let ed = rt.domain_mut(d.index);
        ed.process();
        if !d.shared {
            copy_inputs(d, ed.image());
        }
        let wkc = ed.wkc();
        let expected = ed.expected_wkc() + d.missing_wkc;
        d.state = DomainState {
            working_counter: wkc,
            wc_state: if wkc == 0 {
                abi::wc::ZERO
            } else if wkc == expected {
                abi::wc::COMPLETE
            } else {
                abi::wc::INCOMPLETE
            },
            redundancy_active: 0,
        };
        0
    })
}

/// Queue the domain for the next send: copy the outputs into the frames' image (nothing to
/// do when the image is shared). Allocates nothing.
///
/// # Safety
/// `domain` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_domain_queue(domain: *mut Domain) -> i32 {
    const F: &str = "ecrt_domain_queue";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or live (API contract).
        let Some(d) = (unsafe { arg_mut(domain, F, "domain") }) else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule (the cyclic thread).
        let Some(rt) = (unsafe { d.master().runtime() }) else {
            warn_idle(d, F);
            return 0;
        };
        if !d.shared {
            copy_outputs(d, rt.domain_mut(d.index).image_mut());
        }
        0
    })
}

/// The input copies of a copying domain (out of line: a shared domain's cyclic calls stay
/// straight code).
#[inline(never)]
fn copy_inputs(d: &mut Domain, img: &[u8]) {
    for c in &d.inputs {
        d.image[c.here..c.here + c.len].copy_from_slice(&img[c.there..c.there + c.len]);
    }
}

/// The output copies of a copying domain (out of line, as [`copy_inputs`]).
#[inline(never)]
fn copy_outputs(d: &Domain, img: &mut [u8]) {
    for c in &d.outputs {
        img[c.there..c.there + c.len].copy_from_slice(&d.image[c.here..c.here + c.len]);
    }
}

/// Working counter and its evaluation from the last `ecrt_domain_process`.
///
/// # Safety
/// `domain` NULL or live; `state` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_domain_state(domain: *const Domain, state: *mut DomainState) -> i32 {
    const F: &str = "ecrt_domain_state";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or live / writable (API contract).
        let Some((d, out)) = (unsafe { arg(domain, F, "domain") })
            .and_then(|x| unsafe { arg_mut(state, F, "state") }.map(|y| (x, y)))
        else {
            return errno::EINVAL;
        };
        *out = d.state;
        0
    })
}

/// The log line of a cyclic call before activation (out of line: the cyclic calls stay small).
#[cold]
#[inline(never)]
pub(crate) fn not_active(f: &str, index: u32) -> i32 {
    log!("{f}: master {index} is not active; call ecrt_master_activate first");
    errno::EPERM
}

/// Send the cyclic frames and at most one acyclic frame. Allocates nothing.
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_send(master: *mut Master) -> i32 {
    const F: &str = "ecrt_master_send";
    guard(F, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, F) }) else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        let Phase::Active(rt) = &mut inner.phase else {
            return not_active(F, m.index);
        };
        if !inner.reg_requests.is_empty() {
            crate::requests::submit_reg_requests(rt, &inner.reg_requests);
        }
        let me = current_thread();
        if m.cyclic_thread.load(Ordering::Relaxed) != me {
            m.cyclic_thread.store(me, Ordering::Relaxed);
        }
        match rt.send() {
            Ok(()) => 0,
            Err(_) => errno::EIO,
        }
    })
}

/// Collect the returned frames. Allocates nothing.
///
/// # Safety
/// `master` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_receive(master: *mut Master) -> i32 {
    const F: &str = "ecrt_master_receive";
    guard(F, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, F) }) else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        let Phase::Active(rt) = &mut inner.phase else {
            return not_active(F, m.index);
        };
        let r = rt.receive();
        if !inner.reg_requests.is_empty() {
            crate::requests::collect_reg_requests(rt, &inner.reg_requests);
        }
        crate::startup::log_events(rt, &mut inner.startup_errors);
        match r {
            Ok(()) => 0,
            Err(_) => errno::EIO,
        }
    })
}
