//! Asynchronous requests: SDO requests (through the runtime's SDO service, one datagram per
//! cycle in the acyclic frame) and register requests (one datagram in the next send's acyclic
//! frame, judged at the following receive).
//!
//! Request objects belong to their slave configuration and are freed with it. Their state is
//! advanced when the application asks for it (`*_state`), as IgH's user-space library does.

use crate::abi::request;
use crate::ffi::{arg, arg_mut, errno, guard};
use crate::log;
use crate::slave_config::SlaveConfig;
use ecat::frame::{Handle, Status};
use ecat::mailbox::service::Pending;
use ecat::runtime::Runtime;
use ecat::Error;
use ecat_wire::Command;
use std::time::{Duration, Instant};

/// `ec_sdo_request_t`.
pub struct SdoRequest {
    sc: *mut SlaveConfig,
    index: u16,
    subindex: u8,
    /// The buffer (its length is the memory size).
    mem: Vec<u8>,
    /// Bytes of valid data.
    size: usize,
    timeout_ms: u32,
    state: u32,
    pending: Option<(Pending, Instant, bool)>,
    /// A transfer asked for while the slave was still being configured (read?, asked at).
    deferred: Option<(bool, Instant)>,
}

/// `ec_reg_request_t`.
pub struct RegRequest {
    sc: *mut SlaveConfig,
    mem: Vec<u8>,
    state: u32,
    /// (command, register address, size) waiting for the next send.
    queued: Option<(Command, u16, usize)>,
    in_flight: Option<(Handle, bool, usize)>,
}

fn sc_of<'a>(sc: *mut SlaveConfig, f: &str) -> Option<&'a mut SlaveConfig> {
    // SAFETY: NULL or a live configuration (API contract).
    unsafe { arg_mut(sc, f, "sc") }
}

/// Create an SDO request for `index:subindex` with a buffer of `size` bytes.
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_create_sdo_request(
    sc: *mut SlaveConfig,
    index: u16,
    subindex: u8,
    size: usize,
) -> *mut SdoRequest {
    const F: &str = "ecrt_slave_config_create_sdo_request";
    guard(F, std::ptr::null_mut(), || {
        let Some(s) = sc_of(sc, F) else {
            return std::ptr::null_mut();
        };
        if s.master().is_active() {
            log!("{F}: create requests before ecrt_master_activate");
            return std::ptr::null_mut();
        }
        let r = Box::into_raw(Box::new(SdoRequest {
            sc,
            index,
            subindex,
            mem: vec![0; size],
            size,
            timeout_ms: 0,
            state: request::UNUSED,
            pending: None,
            deferred: None,
        }));
        s.sdo_requests.push(r);
        r
    })
}

/// Create a register request with a buffer of `size` bytes.
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_create_reg_request(
    sc: *mut SlaveConfig,
    size: usize,
) -> *mut RegRequest {
    const F: &str = "ecrt_slave_config_create_reg_request";
    guard(F, std::ptr::null_mut(), || {
        let Some(s) = sc_of(sc, F) else {
            return std::ptr::null_mut();
        };
        if s.master().is_active() {
            log!("{F}: create requests before ecrt_master_activate");
            return std::ptr::null_mut();
        }
        let r = Box::into_raw(Box::new(RegRequest {
            sc,
            mem: vec![0; size],
            state: request::UNUSED,
            queued: None,
            in_flight: None,
        }));
        s.reg_requests.push(r);
        r
    })
}

/// Change the object of an SDO request.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_sdo_request_index(
    req: *mut SdoRequest,
    index: u16,
    subindex: u8,
) -> i32 {
    const F: &str = "ecrt_sdo_request_index";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or live (API contract).
        let Some(r) = (unsafe { arg_mut(req, F, "req") }) else {
            return errno::EINVAL;
        };
        r.index = index;
        r.subindex = subindex;
        0
    })
}

/// Timeout in ms (0 = none).
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_sdo_request_timeout(req: *mut SdoRequest, timeout: u32) -> i32 {
    const F: &str = "ecrt_sdo_request_timeout";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or live (API contract).
        let Some(r) = (unsafe { arg_mut(req, F, "req") }) else {
            return errno::EINVAL;
        };
        r.timeout_ms = timeout;
        0
    })
}

/// The request's buffer.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_sdo_request_data(req: *const SdoRequest) -> *mut u8 {
    guard("ecrt_sdo_request_data", std::ptr::null_mut(), || {
        // SAFETY: NULL or live (API contract).
        unsafe { arg(req, "ecrt_sdo_request_data", "req") }
            .map_or(std::ptr::null_mut(), |r| r.mem.as_ptr() as *mut u8)
    })
}

/// Bytes of valid data (after a read: what was read).
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_sdo_request_data_size(req: *const SdoRequest) -> usize {
    guard("ecrt_sdo_request_data_size", 0, || {
        // SAFETY: NULL or live (API contract).
        unsafe { arg(req, "ecrt_sdo_request_data_size", "req") }.map_or(0, |r| r.size)
    })
}

/// Advance and return the request's state.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_sdo_request_state(req: *mut SdoRequest) -> u32 {
    const F: &str = "ecrt_sdo_request_state";
    guard(F, request::ERROR, || {
        // SAFETY: NULL or live (API contract).
        let Some(r) = (unsafe { arg_mut(req, F, "req") }) else {
            return request::ERROR;
        };
        if let Some((read, asked)) = r.deferred {
            if slave_ready(r.sc) {
                r.deferred = None;
                if submit_sdo(F, r, read) != 0 {
                    r.state = request::ERROR;
                }
            } else if r.timeout_ms != 0
                && asked.elapsed() > Duration::from_millis(r.timeout_ms as u64)
            {
                log!(
                    "SDO request 0x{:04X}:{:02X}: the slave was not configured within {} ms",
                    r.index,
                    r.subindex,
                    r.timeout_ms
                );
                r.deferred = None;
                r.state = request::ERROR;
            }
            return r.state;
        }
        let Some((p, started, read)) = &r.pending else {
            return r.state;
        };
        match p.poll() {
            Some(Ok(data)) => {
                if *read {
                    if data.len() > r.mem.len() {
                        log!("SDO request 0x{:04X}:{:02X}: {} bytes read do not fit the request's {} bytes", r.index, r.subindex, data.len(), r.mem.len());
                        r.state = request::ERROR;
                    } else {
                        r.mem[..data.len()].copy_from_slice(&data);
                        r.size = data.len();
                        r.state = request::SUCCESS;
                    }
                } else {
                    r.state = request::SUCCESS;
                }
                r.pending = None;
            }
            Some(Err(e)) => {
                log!("SDO request: {e}");
                r.state = request::ERROR;
                r.pending = None;
            }
            None => {
                if r.timeout_ms != 0
                    && started.elapsed() > Duration::from_millis(r.timeout_ms as u64)
                {
                    log!(
                        "SDO request 0x{:04X}:{:02X}: no answer within {} ms",
                        r.index,
                        r.subindex,
                        r.timeout_ms
                    );
                    r.state = request::ERROR;
                    r.pending = None;
                }
            }
        }
        r.state
    })
}

/// True when the configuration's slave is in its requested state (configured), so its
/// mailbox is free for application transfers.
fn slave_ready(sc: *mut SlaveConfig) -> bool {
    // SAFETY: a request never outlives its configuration.
    let sc = unsafe { &*sc };
    let Some(pos) = sc.attached else { return false };
    // SAFETY: IgH's threading rule (requests are driven from the cyclic thread).
    match unsafe { sc.master().runtime() } {
        Some(rt) => rt
            .supervisor()
            .states()
            .nth(pos)
            .is_some_and(|s| s.running && !s.lost),
        None => false,
    }
}

fn submit_sdo(f: &str, r: &mut SdoRequest, read: bool) -> i32 {
    // SAFETY: a request never outlives its configuration.
    let sc = unsafe { &*r.sc };
    let Some(pos) = sc.attached else {
        return errno::EINVAL;
    };
    let client = sc.master().sdo_client.lock().ok().and_then(|c| c.clone());
    let Some(client) = client else {
        log!("{f}: SDO requests run after ecrt_master_activate");
        return errno::EPERM;
    };
    let sent = if read {
        client.upload(pos, r.index, r.subindex)
    } else {
        client.download(pos, r.index, r.subindex, &r.mem[..r.size.min(r.mem.len())])
    };
    match sent {
        Ok(p) => {
            r.pending = Some((p, Instant::now(), read));
            r.state = request::BUSY;
            0
        }
        Err(e) => {
            log!("{f}: {e}");
            errno::ENOBUFS
        }
    }
}

fn start_sdo(f: &str, req: *mut SdoRequest, read: bool) -> i32 {
    // SAFETY: NULL or live (API contract).
    let Some(r) = (unsafe { arg_mut(req, f, "req") }) else {
        return errno::EINVAL;
    };
    if r.state == request::BUSY {
        log!("{f}: the request is still busy");
        return errno::EBUSY;
    }
    // SAFETY: a request never outlives its configuration.
    let sc = unsafe { &*r.sc };
    if sc.attached.is_none() {
        log!(
            "{f}: {} is not attached to a slave; the request fails",
            sc.name()
        );
        r.state = request::ERROR;
        return 0;
    }
    if !sc.master().is_active() {
        log!("{f}: SDO requests run after ecrt_master_activate");
        return errno::EPERM;
    }
    if slave_ready(r.sc) {
        submit_sdo(f, r, read)
    } else {
        // As IgH: the transfer starts once the slave is configured.
        r.deferred = Some((read, Instant::now()));
        r.state = request::BUSY;
        0
    }
}

/// Start writing `ecrt_sdo_request_data_size` bytes of the buffer (the size given at
/// creation, or what the last read returned).
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_sdo_request_write(req: *mut SdoRequest) -> i32 {
    guard("ecrt_sdo_request_write", errno::EINVAL, || {
        start_sdo("ecrt_sdo_request_write", req, false)
    })
}

/// Start reading into the request's buffer.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_sdo_request_read(req: *mut SdoRequest) -> i32 {
    guard("ecrt_sdo_request_read", errno::EINVAL, || {
        start_sdo("ecrt_sdo_request_read", req, true)
    })
}

/// The register request's buffer.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_reg_request_data(req: *const RegRequest) -> *mut u8 {
    guard("ecrt_reg_request_data", std::ptr::null_mut(), || {
        // SAFETY: NULL or live (API contract).
        unsafe { arg(req, "ecrt_reg_request_data", "req") }
            .map_or(std::ptr::null_mut(), |r| r.mem.as_ptr() as *mut u8)
    })
}

/// The register request's state.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_reg_request_state(req: *const RegRequest) -> u32 {
    guard("ecrt_reg_request_state", request::ERROR, || {
        // SAFETY: NULL or live (API contract).
        unsafe { arg(req, "ecrt_reg_request_state", "req") }.map_or(request::ERROR, |r| r.state)
    })
}

fn start_reg(f: &str, req: *mut RegRequest, cmd: Command, address: u16, size: usize) -> i32 {
    // SAFETY: NULL or live (API contract).
    let Some(r) = (unsafe { arg_mut(req, f, "req") }) else {
        return errno::EINVAL;
    };
    if size > r.mem.len() {
        log!(
            "{f}: {size} bytes do not fit the request's {} bytes",
            r.mem.len()
        );
        return errno::EOVERFLOW;
    }
    if r.state == request::BUSY {
        log!("{f}: the request is still busy");
        return errno::EBUSY;
    }
    // SAFETY: a request never outlives its configuration.
    let sc = unsafe { &*r.sc };
    if sc.attached.is_none() {
        log!(
            "{f}: {} is not attached to a slave; the request fails",
            sc.name()
        );
        r.state = request::ERROR;
        return 0;
    }
    r.queued = Some((cmd, address, size));
    r.state = request::BUSY;
    0
}

/// Write `size` bytes of the buffer to register `address`.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_reg_request_write(
    req: *mut RegRequest,
    address: u16,
    size: usize,
) -> i32 {
    guard("ecrt_reg_request_write", errno::EINVAL, || {
        start_reg("ecrt_reg_request_write", req, Command::Fpwr, address, size)
    })
}

/// Read `size` bytes from register `address` into the buffer.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_reg_request_read(
    req: *mut RegRequest,
    address: u16,
    size: usize,
) -> i32 {
    guard("ecrt_reg_request_read", errno::EINVAL, || {
        start_reg("ecrt_reg_request_read", req, Command::Fprd, address, size)
    })
}

/// Hand queued register requests to the acyclic engine (called by `ecrt_master_send`).
/// Allocates nothing once the engine's buffers have grown to size.
pub fn submit_reg_requests(rt: &mut Runtime, reqs: &[*mut RegRequest]) {
    for &p in reqs {
        // SAFETY: owned by a live configuration of this master; the cyclic thread only.
        let r = unsafe { &mut *p };
        let Some((cmd, addr, size)) = r.queued else {
            continue;
        };
        // SAFETY: a request never outlives its configuration.
        let sc = unsafe { &*r.sc };
        let station = sc
            .attached
            .and_then(|pos| rt.supervisor().states().nth(pos))
            .map(|s| s.info.station);
        let Some(station) = station else {
            r.queued = None;
            r.state = request::ERROR;
            continue;
        };
        let address = station as u32 | (addr as u32) << 16;
        // When the engine is full, try again at the next send.
        if let Ok(h) = rt.engine_mut().submit_with(cmd, address, &r.mem[..size], 2) {
            r.queued = None;
            r.in_flight = Some((h, cmd == Command::Fprd, size));
        }
    }
}

/// Judge register requests whose answer came (called by `ecrt_master_receive`).
pub fn collect_reg_requests(rt: &mut Runtime, reqs: &[*mut RegRequest]) {
    for &p in reqs {
        // SAFETY: owned by a live configuration of this master; the cyclic thread only.
        let r = unsafe { &mut *p };
        let Some((h, read, size)) = r.in_flight else {
            continue;
        };
        let engine = rt.engine_mut();
        match engine.status(h) {
            Status::Pending => continue,
            Status::Done => {
                let ok = match engine.response(h) {
                    Some((d, 1)) => {
                        if read {
                            let n = size.min(d.len());
                            r.mem[..n].copy_from_slice(&d[..n]);
                        }
                        true
                    }
                    _ => false,
                };
                r.state = if ok { request::SUCCESS } else { request::ERROR };
            }
            Status::Failed | Status::Stale => r.state = request::ERROR,
        }
        engine.release(h);
        r.in_flight = None;
    }
}

/// The abort code inside an SDO error, if it is an abort.
pub fn abort_code(e: &Error) -> u32 {
    match e {
        Error::SdoAbort { code, .. } => code.0,
        _ => 0,
    }
}
