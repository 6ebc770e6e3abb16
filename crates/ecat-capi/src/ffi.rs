//! The FFI boundary: no panic may unwind into C, and bad input gets IgH's return code plus
//! one line on stderr prefixed `ecat:`.
//!
//! Every exported function runs its body inside [`guard`], which catches a panic (a bug on
//! our side), logs it and returns the function's error value instead.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Print one line to stderr, prefixed `ecat:` (IgH's library prints to stderr too).
#[macro_export]
macro_rules! log {
    ($($arg:tt)*) => {{
        eprintln!("ecat: {}", format_args!($($arg)*));
    }};
}

/// Run `f`; if it panics, log where and return `on_panic`. Inlined, so an exported function
/// and its body stay one piece of code (the cyclic calls run cold after every sleep); the
/// report of a panic is out of line, so it takes no room in the function's hot code.
#[inline(always)]
pub fn guard<T>(what: &str, on_panic: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(e) => {
            report_panic(what, e);
            on_panic
        }
    }
}

/// The log line of a panic caught by [`guard`].
#[cold]
#[inline(never)]
fn report_panic(what: &str, e: Box<dyn std::any::Any + Send>) {
    let msg = e
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| e.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    log!("{what}: internal error ({msg}); please report it");
}

/// Turn a C pointer into a reference, logging `what: NULL ...` when it is NULL.
///
/// # Safety
/// `p` must be NULL or point to a live `T` that nothing else mutates for `'a`.
pub unsafe fn arg<'a, T>(p: *const T, func: &str, name: &str) -> Option<&'a T> {
    if p.is_null() {
        return null_arg(func, name);
    }
    // SAFETY: non-NULL, and the caller guarantees it points to a live T.
    Some(unsafe { &*p })
}

/// The log line of a NULL argument (out of line: the cyclic calls stay small).
#[cold]
#[inline(never)]
fn null_arg<T>(func: &str, name: &str) -> Option<T> {
    log!("{func}: {name} is NULL");
    None
}

/// Like [`arg`], writable.
///
/// # Safety
/// `p` must be NULL or point to a live `T` not otherwise referenced for `'a`.
pub unsafe fn arg_mut<'a, T>(p: *mut T, func: &str, name: &str) -> Option<&'a mut T> {
    if p.is_null() {
        return null_arg(func, name);
    }
    // SAFETY: non-NULL, and the caller guarantees exclusive access to a live T.
    Some(unsafe { &mut *p })
}

/// The body of an exported function taking object `p` (named `name` in the log line):
/// `body` on it inside [`guard`], or `err` when it is NULL.
///
/// # Safety
/// `p` must be NULL or point to a live `A` not otherwise referenced during the call.
pub unsafe fn with_mut<A, T: Copy>(
    func: &str,
    p: *mut A,
    name: &str,
    err: T,
    body: impl FnOnce(&mut A) -> T,
) -> T {
    guard(func, err, || {
        // SAFETY: NULL or live and exclusive (the caller's contract).
        match unsafe { arg_mut(p, func, name) } {
            Some(a) => body(a),
            None => err,
        }
    })
}

/// Negative errno values IgH returns.
pub mod errno {
    /// Invalid argument.
    pub const EINVAL: i32 = -libc::EINVAL;
    /// No such entry.
    pub const ENOENT: i32 = -libc::ENOENT;
    /// Out of memory / resources.
    pub const ENOMEM: i32 = -libc::ENOMEM;
    /// I/O error (transfer failed).
    pub const EIO: i32 = -libc::EIO;
    /// Busy.
    pub const EBUSY: i32 = -libc::EBUSY;
    /// Operation not supported.
    pub const EOPNOTSUPP: i32 = -libc::EOPNOTSUPP;
    /// No such device or address.
    pub const ENXIO: i32 = -libc::ENXIO;
    /// Operation not permitted (wrong phase).
    pub const EPERM: i32 = -libc::EPERM;
    /// Buffer too small.
    pub const EOVERFLOW: i32 = -libc::EOVERFLOW;
    /// No buffer space.
    pub const ENOBUFS: i32 = -libc::ENOBUFS;
    /// Timed out.
    pub const ETIMEDOUT: i32 = -libc::ETIMEDOUT;
    /// No data.
    pub const ENODATA: i32 = -libc::ENODATA;
    /// Protocol not supported (e.g. no CoE mailbox).
    pub const EPROTONOSUPPORT: i32 = -libc::EPROTONOSUPPORT;
}
