//! Ctrl-C and SIGTERM: set a flag that the long-running commands poll, so they can stop
//! cleanly (bring SubDevices to INIT, print totals) instead of dying mid-cycle.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT or SIGTERM.
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Make SIGINT and SIGTERM set [`STOP`] instead of killing the process.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// True once a stop was requested.
pub fn stopped() -> bool {
    STOP.load(Ordering::SeqCst)
}
