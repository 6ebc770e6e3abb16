//! Blocking SDO access through a master (`ecrt_master_sdo_*`), and the blocking transfer of
//! any mailbox protocol it rests on (also used by [`crate::soe`]).
//!
//! Before activation the call drives the [`ecat::MainDevice`] itself (the bus is idle in
//! PREOP); after activation it submits to the runtime's SDO service and waits while the
//! application's thread keeps cycling. Called from the cycling thread itself (between two
//! cycles), it carries the transfer with receive/send of its own, outputs unchanged.

use crate::ffi::{errno, guard};
use crate::log;
use crate::master::{Master, Phase};
use crate::requests::abort_code;
use ecat::mailbox::op::MailboxOp;
use ecat::mailbox::sdo::SdoOp;
use ecat::mailbox::service::Pending;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long a blocking transfer may take after activation.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Wait for a submitted transfer. Called from the thread that cycles (it sent last), nobody
/// else would carry the transfer: drive the runtime here, one receive + send per millisecond,
/// with the outputs as they are.
fn wait(m: &Master, p: &Pending) -> Option<ecat::Result<Vec<u8>>> {
    if m.cyclic_thread.load(Ordering::Relaxed) != crate::master::current_thread() {
        return p.wait(TIMEOUT);
    }
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(r) = p.poll() {
            return Some(r);
        }
        if Instant::now() > deadline {
            return None;
        }
        // SAFETY: this thread is the cyclic one (it called ecrt_master_send last) and is in
        // this call, so nothing else uses the runtime now.
        let rt = unsafe { m.runtime() }?;
        let _ = rt.receive();
        let _ = rt.send();
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Run `op` on the SubDevice at `position`; Ok(data) or Err(errno), with `abort` set.
fn transfer(
    f: &str,
    m: &Master,
    position: u16,
    op: SdoOp,
    abort: *mut u32,
) -> Result<Vec<u8>, i32> {
    mailbox_transfer(f, m, position, op.into(), |e| {
        if !abort.is_null() {
            // SAFETY: non-NULL, writable (API contract).
            unsafe { *abort = abort_code(e) };
        }
    })
}

/// Run the mailbox request `op` (any protocol) on the SubDevice at `position`, blocking;
/// Ok(data) or Err(errno). A failed transfer is logged, shown to `failed` (to set the
/// caller's error code out-parameter) and returned as `-EIO`.
pub(crate) fn mailbox_transfer(
    f: &str,
    m: &Master,
    position: u16,
    op: MailboxOp,
    failed: impl FnOnce(&ecat::Error),
) -> Result<Vec<u8>, i32> {
    let what = op.describe();
    let n = m.slave_count.load(Ordering::Relaxed);
    if position as usize >= n {
        log!("{f}: there is no slave at position {position} (the bus has {n})");
        return Err(errno::EINVAL);
    }
    // Active: only the SDO client is touched (this may be another thread than the cyclic
    // one). Idle: the configuring thread drives the MainDevice itself.
    let client = m.sdo_client.lock().ok().and_then(|c| c.clone());
    let result = match client {
        Some(client) => match client.submit(position as usize, op) {
            Ok(p) => match wait(m, &p) {
                Some(r) => r,
                None => {
                    log!(
                        "{f}: {what} on slave {position}: no answer within {} s{}",
                        TIMEOUT.as_secs(),
                        if m.cyclic_thread.load(Ordering::Relaxed) == 0 {
                            "; nothing has cycled since activation: call it between cycles of the cycling thread, or from another thread while it cycles"
                        } else {
                            " (is the application still cycling?)"
                        }
                    );
                    return Err(errno::EIO);
                }
            },
            Err(e) => Err(e),
        },
        None => {
            // SAFETY: IgH's threading rule: before activation only the configuring thread
            // calls in.
            let dev = match &unsafe { m.inner() }.phase {
                Phase::Idle(dev) => Some(dev.clone()),
                _ => None,
            };
            // The control server may hold the MainDevice for a request of the tool: wait.
            let mut md = dev.as_ref().map(ecat::control::idle::lock);
            match md.as_deref_mut() {
                Some(Some(md)) => md.mailbox(position as usize, op),
                _ => {
                    log!("{f}: master {} has no link (a re-scan failed)", m.index);
                    return Err(errno::EIO);
                }
            }
        }
    };
    result.map_err(|e| {
        failed(&e);
        log!("{f}: {e}");
        errno::EIO
    })
}

/// The body of a blocking write through `master` (checks, then `run` with the data), inside
/// the FFI guard: 0 or a negative errno.
///
/// # Safety
/// `master` NULL or live; `data` points to `size` bytes.
pub(crate) unsafe fn write_from(
    f: &str,
    master: *mut Master,
    data: *const u8,
    size: usize,
    run: impl FnOnce(&Master, &[u8]) -> Result<Vec<u8>, i32>,
) -> i32 {
    guard(f, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, f) }) else {
            return errno::EINVAL;
        };
        // SAFETY: data is NULL or points to size bytes (API contract).
        let bytes = match unsafe { crate::check::input(f, "data", data, size, false) } {
            Ok(b) => b,
            Err(e) => return e,
        };
        run(m, bytes).map_or_else(|e| e, |_| 0)
    })
}

/// The body of a blocking read of `what` through `master` into `target` (checks, `run`,
/// then the copy), inside the FFI guard: 0 or a negative errno.
///
/// # Safety
/// `master` NULL or live; `target` has `target_size` writable bytes; `result_size` NULL or
/// writable.
pub(crate) unsafe fn read_into(
    f: &str,
    master: *mut Master,
    what: impl std::fmt::Display,
    (target, target_size, result_size): (*mut u8, usize, *mut usize),
    run: impl FnOnce(&Master) -> Result<Vec<u8>, i32>,
) -> i32 {
    guard(f, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the master pointer itself is checked.
        let Some(m) = (unsafe { crate::check::master(master, f) }) else {
            return errno::EINVAL;
        };
        if target.is_null() || result_size.is_null() {
            log!("{f}: target or result_size is NULL");
            return errno::EINVAL;
        }
        match run(m) {
            Ok(d) if d.len() > target_size => {
                log!(
                    "{f}: {what} has {} bytes; the target holds {target_size}",
                    d.len()
                );
                errno::EOVERFLOW
            }
            Ok(d) => {
                // SAFETY: target has target_size >= d.len() writable bytes; result_size writable.
                unsafe {
                    std::ptr::copy_nonoverlapping(d.as_ptr(), target, d.len());
                    *result_size = d.len();
                }
                0
            }
            Err(e) => e,
        }
    })
}

/// Blocking SDO write of `data_size` bytes to `index:subindex`.
///
/// # Safety
/// `master` NULL or live; `data` points to `data_size` bytes; `abort_code` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_sdo_download(
    master: *mut Master,
    slave_position: u16,
    index: u16,
    subindex: u8,
    data: *const u8,
    data_size: usize,
    abort_code: *mut u32,
) -> i32 {
    write_from(
        "ecrt_master_sdo_download",
        master,
        data,
        data_size,
        |m, bytes| {
            let op = SdoOp::Download {
                index,
                subindex,
                complete_access: false,
                data: bytes.to_vec(),
            };
            transfer(
                "ecrt_master_sdo_download",
                m,
                slave_position,
                op,
                abort_code,
            )
        },
    )
}

/// Blocking SDO write of a whole object (complete access from subindex 0).
///
/// # Safety
/// `master` NULL or live; `data` points to `data_size` bytes; `abort_code` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_sdo_download_complete(
    master: *mut Master,
    slave_position: u16,
    index: u16,
    data: *const u8,
    data_size: usize,
    abort_code: *mut u32,
) -> i32 {
    const F: &str = "ecrt_master_sdo_download_complete";
    write_from(F, master, data, data_size, |m, bytes| {
        let op = SdoOp::Download {
            index,
            subindex: 0,
            complete_access: true,
            data: bytes.to_vec(),
        };
        transfer(F, m, slave_position, op, abort_code)
    })
}

/// Blocking SDO read of `index:subindex` into `target`.
///
/// # Safety
/// `master` NULL or live; `target` has `target_size` writable bytes; `result_size` and
/// `abort_code` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_sdo_upload(
    master: *mut Master,
    slave_position: u16,
    index: u16,
    subindex: u8,
    target: *mut u8,
    target_size: usize,
    result_size: *mut usize,
    abort_code: *mut u32,
) -> i32 {
    const F: &str = "ecrt_master_sdo_upload";
    let what = format!("0x{index:04X}:{subindex:02X}");
    let out = (target, target_size, result_size);
    read_into(F, master, what, out, |m| {
        let op = SdoOp::Upload {
            index,
            subindex,
            complete_access: false,
        };
        transfer(F, m, slave_position, op, abort_code)
    })
}
