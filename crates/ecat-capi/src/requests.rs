//! Asynchronous requests: SDO requests (through the runtime's mailbox service, in the acyclic
//! frame; the transfer is [`crate::mbx_request`]'s, shared with SoE requests and VoE
//! handlers) and register requests (one datagram in the next send's acyclic frame, judged at
//! the following receive).
//!
//! Request objects belong to their slave configuration and are freed with it. Their state is
//! advanced when the application asks for it (`*_state`), as IgH's user-space library does.

use crate::abi::request;
use crate::ffi::{arg, arg_mut, errno, guard};
use crate::log;
use crate::mbx_request::MbxTransfer;
use crate::slave_config::SlaveConfig;
use ecat::frame::{Handle, Status};
use ecat::mailbox::sdo::SdoOp;
use ecat::runtime::Runtime;
use ecat::Error;
use ecat_wire::Command;

/// `ec_sdo_request_t`.
pub struct SdoRequest {
    sc: *mut SlaveConfig,
    index: u16,
    subindex: u8,
    /// The buffer (its length is the memory size).
    mem: Vec<u8>,
    /// Bytes of valid data.
    size: usize,
    transfer: MbxTransfer,
    /// The running transfer is a read.
    reading: bool,
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
    unsafe { crate::check::config(sc, f) }
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
        let Some(mem) = crate::check::buffer(F, "request buffer", size) else {
            return std::ptr::null_mut();
        };
        let r = Box::into_raw(Box::new(SdoRequest {
            sc,
            index,
            subindex,
            mem,
            size,
            transfer: MbxTransfer::default(),
            reading: false,
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
        let Some(mem) = crate::check::buffer(F, "request buffer", size) else {
            return std::ptr::null_mut();
        };
        let r = Box::into_raw(Box::new(RegRequest {
            sc,
            mem,
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
        r.transfer.timeout_ms = timeout;
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

/// Names an SDO request in log lines.
fn describe(index: u16, subindex: u8) -> String {
    format!("SDO request 0x{index:04X}:{subindex:02X}")
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
        let (index, subindex) = (r.index, r.subindex);
        r.transfer
            .poll_into(r.sc, r.reading, &mut r.mem, &mut r.size, || {
                describe(index, subindex)
            })
    })
}

fn start_sdo(f: &str, req: *mut SdoRequest, read: bool) -> i32 {
    // SAFETY: NULL or live (API contract).
    let Some(r) = (unsafe { arg_mut(req, f, "req") }) else {
        return errno::EINVAL;
    };
    let op = if read {
        SdoOp::Upload {
            index: r.index,
            subindex: r.subindex,
            complete_access: false,
        }
    } else {
        SdoOp::Download {
            index: r.index,
            subindex: r.subindex,
            complete_access: false,
            data: r.mem[..r.size.min(r.mem.len())].to_vec(),
        }
    };
    let rc = r.transfer.start(f, r.sc, op.into());
    if rc == 0 {
        r.reading = read;
    }
    rc
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
