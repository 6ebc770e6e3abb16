//! The caller's mistakes the library can see, one helper per kind of check: a master pointer
//! that is not (or no longer) a master of this library, a call in the wrong phase, an index
//! out of range, a buffer of absurd size, input bytes that are NULL or too many. Each helper
//! logs its one `ecat:` line and hands back IgH's return code, so an exported function checks
//! with `if let Err` / `let ... else` and never reaches a crash. NULL pointers themselves are
//! [`crate::ffi::arg`]'s.
//!
//! Live masters are kept in a fixed table of addresses, registered by
//! `ecrt_request_master`/`ecrt_open_master` and removed by `ecrt_release_master`: a second
//! release, or any call with a released master (or with something else passed as a master),
//! is refused instead of touching freed memory. The table is lock-free, one cache line per
//! eight masters, so the cyclic calls can afford the check (the first master sits in the first
//! slot). A released master whose address a new master happens to get again cannot be told
//! apart: that much is not detectable.
//!
//! Slave configurations and domains are checked against the lists of the live masters (in the
//! configuration calls and `ecrt_slave_config_state`), so one freed by `ecrt_master_deactivate`
//! or `ecrt_release_master` is refused too. The domain's cyclic calls and the request objects
//! (whose state calls run every cycle) trust their pointer: checking would put the lists of
//! every master into each cycle's cache lines.

use crate::domain::Domain;
use crate::ffi::errno;
use crate::log;
use crate::master::Master;
use crate::slave_config::SlaveConfig;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Masters open at once in one process (IgH's kernel module allows 32 too).
pub const MAX_MASTERS: usize = 32;

/// The largest buffer a request object, startup SDO or blocking transfer may have: 4 MiB, the
/// most IgH's kernel allocates in one piece (`kmalloc`), so IgH fails larger ones with
/// `-ENOMEM` / NULL as well. A mailbox transfer that large is absurd already.
pub const MAX_BUFFER: usize = 4 << 20;

/// Sync managers a SubDevice can have (`EC_MAX_SYNC_MANAGERS`).
pub const MAX_SYNC: u8 = 16;

/// Addresses of the live masters (0 = free slot).
#[repr(C, align(64))]
struct Live([AtomicUsize; MAX_MASTERS]);

static LIVE: Live = Live([const { AtomicUsize::new(0) }; MAX_MASTERS]);

/// Record `m` as live; false (logged) when [`MAX_MASTERS`] are open already.
pub fn register_master(m: *const Master) -> bool {
    let a = m as usize;
    if LIVE.0.iter().any(|s| {
        s.compare_exchange(0, a, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }) {
        return true;
    }
    log!("{MAX_MASTERS} masters are open in this process already; release one first");
    false
}

/// Forget `m`; true if it was live (exactly one caller gets true for a live master).
pub fn unregister_master(m: *const Master) -> bool {
    let a = m as usize;
    a != 0
        && LIVE.0.iter().any(|s| {
            s.compare_exchange(a, 0, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })
}

/// True if `m` is a live master of this library.
#[inline]
pub fn is_live(m: *const Master) -> bool {
    let a = m as usize;
    a != 0 && LIVE.0.iter().any(|s| s.load(Ordering::Acquire) == a)
}

/// The master behind `p`, or None (logged) when `p` is NULL or not a live master.
///
/// # Safety
/// A live master is used under IgH's threading rule (see [`Master::inner`]).
#[inline]
pub unsafe fn master<'a>(p: *const Master, f: &str) -> Option<&'a Master> {
    if is_live(p) {
        // SAFETY: registered at creation, removed before it is freed.
        return Some(unsafe { &*p });
    }
    not_a_master(p, f)
}

/// The log line of [`master`] (out of line: the cyclic calls stay small).
#[cold]
#[inline(never)]
fn not_a_master<T>(p: *const Master, f: &str) -> Option<T> {
    if p.is_null() {
        log!("{f}: master is NULL");
    } else {
        log!("{f}: {p:p} is not a master of this library (released already?); pass what ecrt_request_master returned");
    }
    None
}

/// True if one of the live masters says so of itself.
fn any_live(owns: impl Fn(&Master) -> bool) -> bool {
    LIVE.0
        .iter()
        .map(|s| s.load(Ordering::Acquire))
        .filter(|&a| a != 0)
        // SAFETY: registered at creation, removed before it is freed.
        .any(|a| owns(unsafe { &*(a as *const Master) }))
}

/// The slave configuration behind `p`, or None (logged) when `p` is NULL or not a
/// configuration of a live master (freed by deactivation or release, or something else).
///
/// # Safety
/// Used under IgH's threading rule (configuration calls from one thread at a time).
pub unsafe fn config<'a>(p: *mut SlaveConfig, f: &str) -> Option<&'a mut SlaveConfig> {
    if !p.is_null() && any_live(|m| m.owns_config(p)) {
        // SAFETY: owned by a live master, which frees it only in deactivate/release.
        return Some(unsafe { &mut *p });
    }
    not_ours(p.is_null(), f, "sc", "slave configuration", p as usize)
}

/// The domain behind `p`, or None (logged) as [`config`].
///
/// # Safety
/// As [`config`].
pub unsafe fn domain<'a>(p: *mut Domain, f: &str) -> Option<&'a mut Domain> {
    if !p.is_null() && any_live(|m| m.owns_domain(p)) {
        // SAFETY: owned by a live master, which frees it only in deactivate/release.
        return Some(unsafe { &mut *p });
    }
    not_ours(p.is_null(), f, "domain", "domain", p as usize)
}

/// The log line of [`config`] and [`domain`].
#[cold]
#[inline(never)]
fn not_ours<T>(null: bool, f: &str, name: &str, what: &str, p: usize) -> Option<T> {
    if null {
        log!("{f}: {name} is NULL");
    } else {
        log!("{f}: {p:#x} is not a {what} of a live master (ecrt_master_deactivate and ecrt_release_master free them)");
    }
    None
}

/// Ok before activation; else logs that `f` belongs before `ecrt_master_activate` and
/// returns `-EPERM` (the configuration was handed to the bus at activation).
pub fn idle(m: &Master, f: &str, what: &str) -> Result<(), i32> {
    if !m.is_active() {
        return Ok(());
    }
    log!(
        "{f}: master {} is already activated; {what} before ecrt_master_activate",
        m.index
    );
    Err(errno::EPERM)
}

/// Ok if `index` names a sync manager (0..15); else logs and returns `code` (IgH: `-ENOENT`
/// where it looks the sync manager up, `-EINVAL` where it checks the argument).
pub fn sync_index(f: &str, index: u8, code: i32) -> Result<(), i32> {
    if index < MAX_SYNC {
        return Ok(());
    }
    log!("{f}: sync manager {index} does not exist (0..15)");
    Err(code)
}

/// The most PDOs an assignment object (0x1C1n) and entries a mapping object (0x16xx, 0x1Axx)
/// hold: their count is the byte at subindex 0, the items subindices 1 to 255.
pub const MAX_LIST: usize = 255;

/// Ok if a list of `len` items (`what`) takes one more; else logs and returns `-ENOBUFS`.
pub fn room(f: &str, len: usize, what: &str) -> Result<(), i32> {
    if len < MAX_LIST {
        return Ok(());
    }
    log!("{f}: {what} holds {MAX_LIST} items already, the most its CoE object can have");
    Err(errno::ENOBUFS)
}

/// A zeroed buffer of `size` bytes for `what`, or None (logged) when it is larger than
/// [`MAX_BUFFER`] or cannot be had (IgH returns NULL then).
pub fn buffer(f: &str, what: &str, size: usize) -> Option<Vec<u8>> {
    if size > MAX_BUFFER {
        log!("{f}: a {what} of {size} bytes is more than the {MAX_BUFFER} bytes one may have");
        return None;
    }
    let mut v = Vec::new();
    if v.try_reserve_exact(size).is_err() {
        log!("{f}: out of memory for a {what} of {size} bytes");
        return None;
    }
    v.resize(size, 0);
    Some(v)
}

/// The `size` bytes at `data` named `name`, or the errno (logged): `-EINVAL` for NULL data
/// with a size (or for no data at all unless `empty_ok`), `-ENOMEM` beyond [`MAX_BUFFER`].
///
/// # Safety
/// `data` is NULL or points to `size` readable bytes (when `size` <= [`MAX_BUFFER`]).
pub unsafe fn input<'a>(
    f: &str,
    name: &str,
    data: *const u8,
    size: usize,
    empty_ok: bool,
) -> Result<&'a [u8], i32> {
    if size == 0 {
        if empty_ok {
            return Ok(&[]);
        }
        log!("{f}: {name} is empty (size 0); pass at least one byte");
        return Err(errno::EINVAL);
    }
    if data.is_null() {
        log!("{f}: {name} is NULL but its size is {size}");
        return Err(errno::EINVAL);
    }
    if size > MAX_BUFFER {
        log!("{f}: {name} has {size} bytes, more than the {MAX_BUFFER} one transfer may carry");
        return Err(errno::ENOMEM);
    }
    // SAFETY: non-NULL, size readable bytes (the caller's contract), size <= isize::MAX.
    Ok(unsafe { std::slice::from_raw_parts(data, size) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_knows_live_masters_only_once() {
        let a = 0x1000 as *const Master;
        let b = 0x2040 as *const Master;
        assert!(!is_live(a));
        assert!(register_master(a));
        assert!(register_master(b));
        assert!(is_live(a) && is_live(b));
        assert!(unregister_master(a), "first release");
        assert!(!unregister_master(a), "second release is refused");
        assert!(!is_live(a) && is_live(b));
        assert!(unregister_master(b));
        assert!(!is_live(std::ptr::null()), "NULL is never live");
        assert!(!unregister_master(std::ptr::null()));
    }

    #[test]
    fn buffers_and_inputs_refuse_absurd_sizes() {
        assert_eq!(buffer("f", "request", 0), Some(Vec::new()));
        assert_eq!(buffer("f", "request", 3), Some(vec![0; 3]));
        assert!(buffer("f", "request", MAX_BUFFER + 1).is_none());
        assert!(buffer("f", "request", usize::MAX).is_none());
        let b = [1u8, 2];
        // SAFETY: b has 2 bytes; NULL and oversized inputs are refused before any read.
        unsafe {
            assert_eq!(input("f", "data", b.as_ptr(), 2, false), Ok(&b[..]));
            assert_eq!(input("f", "data", std::ptr::null(), 0, true), Ok(&[][..]));
            assert_eq!(input("f", "data", b.as_ptr(), 0, false), Err(errno::EINVAL));
            assert_eq!(
                input("f", "data", std::ptr::null(), 2, true),
                Err(errno::EINVAL)
            );
            assert_eq!(
                input("f", "data", b.as_ptr(), usize::MAX, true),
                Err(errno::ENOMEM)
            );
        }
        assert_eq!(sync_index("f", 15, errno::ENOENT), Ok(()));
        assert_eq!(room("f", 254, "list"), Ok(()));
        assert_eq!(room("f", 255, "list"), Err(errno::ENOBUFS));
        assert_eq!(sync_index("f", 16, errno::ENOENT), Err(errno::ENOENT));
    }
}
