//! SoE (servo drive profile over EtherCAT) in the C API: blocking IDN access through the
//! master (`ecrt_master_read_idn` / `_write_idn`), startup IDNs of a slave configuration
//! (`ecrt_slave_config_idn`) and SoE requests (`ec_soe_request_t`).
//!
//! - Blocking calls run like the blocking SDO calls ([`crate::sdo`]): before activation on the
//!   idle MainDevice, afterwards in the application's acyclic frames. A drive's refusal
//!   returns `-EIO` with its SoE error code in `error_code` (IgH).
//! - Startup IDNs are written at every (re)configuration of the slave: those given for PREOP
//!   in PREOP after the startup SDOs, those for SAFEOP in SAFEOP before OP is requested (IgH);
//!   a failure is reported like a failed startup SDO and the slave is tried again.
//! - SoE requests ride in the application's cycle through the runtime's mailbox service and
//!   advance when the application asks for their state ([`crate::mbx_request`]); all access
//!   the value element of the IDN.

use crate::abi::request;
use crate::ffi::{arg, errno, guard, with_mut};
use crate::log;
use crate::master::Master;
use crate::mbx_request::MbxTransfer;
use crate::sdo::{mailbox_transfer, read_into, write_from};
use crate::slave_config::SlaveConfig;
use ecat::mailbox::soe::{error_code, SoeOp};
use ecat::supervisor::{CmdOp, TransitionCmd};
use ecat_wire::al::AlState;
use ecat_wire::soe::{Elements, Idn};

/// `EC_AL_STATE_PREOP`.
const PREOP: u32 = 2;
/// `EC_AL_STATE_SAFEOP`.
const SAFEOP: u32 = 4;

/// A startup IDN of a slave configuration: written in `state` (PREOP or SAFEOP).
#[derive(Debug, Clone)]
pub struct StartupIdn {
    /// `AlState::PreOp` or `AlState::SafeOp`.
    pub state: AlState,
    /// The write.
    pub op: SoeOp,
}

impl StartupIdn {
    /// As a transition command of SAFEOP → OP (made in SAFEOP before OP is requested).
    pub fn safeop_cmd(&self) -> TransitionCmd {
        TransitionCmd {
            from: AlState::SafeOp,
            to: AlState::Op,
            after: false,
            label: format!("startup IDN ({})", self.op.describe()),
            op: CmdOp::Mailbox(self.op.clone().into()),
        }
    }
}

fn write_op(drive: u8, idn: u16, data: &[u8]) -> SoeOp {
    SoeOp::Write {
        drive,
        idn: Idn(idn),
        elements: Elements::VALUE,
        data: data.to_vec(),
    }
}

fn read_op(drive: u8, idn: u16) -> SoeOp {
    SoeOp::Read {
        drive,
        idn: Idn(idn),
        elements: Elements::VALUE,
    }
}

/// The blocking transfer of `op`, with `error_code` set when it fails (0 unless the drive
/// refused it with an SoE error).
fn blocking(
    f: &str,
    m: &Master,
    position: u16,
    op: SoeOp,
    error: *mut u16,
) -> Result<Vec<u8>, i32> {
    if op_drive(&op) > 7 {
        log!("{f}: drive number {} is out of range 0..7", op_drive(&op));
        return Err(errno::EINVAL);
    }
    mailbox_transfer(f, m, position, op.into(), |e| {
        if !error.is_null() {
            // SAFETY: non-NULL, writable (API contract).
            unsafe { *error = error_code(e).map_or(0, |c| c.0) };
        }
    })
}

fn op_drive(op: &SoeOp) -> u8 {
    match op {
        SoeOp::Read { drive, .. } | SoeOp::Write { drive, .. } => *drive,
    }
}

/// Blocking write of `data_size` bytes to the value of `idn` of drive `drive_no`.
///
/// # Safety
/// `master` NULL or live; `data` points to `data_size` bytes; `error_code` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_write_idn(
    master: *mut Master,
    slave_position: u16,
    drive_no: u8,
    idn: u16,
    data: *const u8,
    data_size: usize,
    error_code: *mut u16,
) -> i32 {
    const F: &str = "ecrt_master_write_idn";
    write_from(F, master, data, data_size, |m, bytes| {
        blocking(
            F,
            m,
            slave_position,
            write_op(drive_no, idn, bytes),
            error_code,
        )
    })
}

/// Blocking read of the value of `idn` of drive `drive_no` into `target`.
///
/// # Safety
/// `master` NULL or live; `target` has `target_size` writable bytes; `result_size` and
/// `error_code` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_read_idn(
    master: *mut Master,
    slave_position: u16,
    drive_no: u8,
    idn: u16,
    target: *mut u8,
    target_size: usize,
    result_size: *mut usize,
    error_code: *mut u16,
) -> i32 {
    const F: &str = "ecrt_master_read_idn";
    let out = (target, target_size, result_size);
    read_into(F, master, Idn(idn), out, |m| {
        blocking(F, m, slave_position, read_op(drive_no, idn), error_code)
    })
}

/// Add a startup IDN: `size` bytes written to the value of `idn` of drive `drive_no` in
/// `state` (`EC_AL_STATE_PREOP` or `EC_AL_STATE_SAFEOP`) at every configuration.
///
/// # Safety
/// `sc` NULL or live; `data` points to `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_idn(
    sc: *mut SlaveConfig,
    drive_no: u8,
    idn: u16,
    state: u32,
    data: *const u8,
    size: usize,
) -> i32 {
    const F: &str = "ecrt_slave_config_idn";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or live (API contract).
        let Some(s) = (unsafe { crate::check::config(sc, F) }) else {
            return errno::EINVAL;
        };
        let state = match state {
            PREOP => AlState::PreOp,
            SAFEOP => AlState::SafeOp,
            _ => {
                log!("{F}: state {state} is not EC_AL_STATE_PREOP (2) or EC_AL_STATE_SAFEOP (4)");
                return errno::EINVAL;
            }
        };
        // SAFETY: data is NULL or points to size readable bytes (API contract).
        let bytes = match unsafe { crate::check::input(F, "data", data, size, false) } {
            Ok(b) => b,
            Err(e) => return e,
        };
        if drive_no > 7 {
            log!("{F}: drive number {drive_no} is out of range 0..7");
            return errno::EINVAL;
        }
        if s.master().is_active() {
            log!("{F}: add startup IDNs before ecrt_master_activate");
            return errno::EPERM;
        }
        let op = write_op(drive_no, idn, bytes);
        s.idns.push(StartupIdn { state, op });
        0
    })
}

/// `ec_soe_request_t`.
pub struct SoeRequest {
    sc: *mut SlaveConfig,
    drive: u8,
    idn: u16,
    /// The buffer (its length is the memory size).
    mem: Vec<u8>,
    /// Bytes of valid data.
    size: usize,
    transfer: MbxTransfer,
    /// The running transfer is a read.
    reading: bool,
}

/// Names an SoE request in log lines.
fn describe(drive: u8, idn: u16) -> String {
    format!("SoE request for {} of drive {drive}", Idn(idn))
}

/// Create an SoE request for `idn` of drive `drive_no` with a buffer of `size` bytes.
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_create_soe_request(
    sc: *mut SlaveConfig,
    drive_no: u8,
    idn: u16,
    size: usize,
) -> *mut SoeRequest {
    const F: &str = "ecrt_slave_config_create_soe_request";
    guard(F, std::ptr::null_mut(), || {
        // SAFETY: NULL or live (API contract).
        let Some(s) = (unsafe { crate::check::config(sc, F) }) else {
            return std::ptr::null_mut();
        };
        if s.master().is_active() {
            log!("{F}: create requests before ecrt_master_activate");
            return std::ptr::null_mut();
        }
        let Some(mem) = crate::check::buffer(F, "request buffer", size) else {
            return std::ptr::null_mut();
        };
        let r = Box::into_raw(Box::new(SoeRequest {
            sc,
            drive: drive_no,
            idn,
            mem,
            size,
            transfer: MbxTransfer::default(),
            reading: false,
        }));
        s.soe_requests.push(r);
        r
    })
}

/// Run `body` on the SoeRequest, or return `err` (and log) when `req` is NULL.
fn with<T: Copy>(
    f: &str,
    req: *mut SoeRequest,
    err: T,
    body: impl FnOnce(&mut SoeRequest) -> T,
) -> T {
    // SAFETY: NULL or live (API contract).
    unsafe { with_mut(f, req, "req", err, body) }
}

/// Change the drive and IDN of an SoE request.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_soe_request_idn(req: *mut SoeRequest, drive_no: u8, idn: u16) -> i32 {
    with("ecrt_soe_request_idn", req, errno::EINVAL, |r| {
        r.drive = drive_no;
        r.idn = idn;
        0
    })
}

/// Timeout in ms (0 = none).
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_soe_request_timeout(req: *mut SoeRequest, timeout: u32) -> i32 {
    with("ecrt_soe_request_timeout", req, errno::EINVAL, |r| {
        r.transfer.timeout_ms = timeout;
        0
    })
}

/// The request's buffer.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_soe_request_data(req: *const SoeRequest) -> *mut u8 {
    guard("ecrt_soe_request_data", std::ptr::null_mut(), || {
        // SAFETY: NULL or live (API contract).
        unsafe { arg(req, "ecrt_soe_request_data", "req") }
            .map_or(std::ptr::null_mut(), |r| r.mem.as_ptr() as *mut u8)
    })
}

/// Bytes of valid data (after a read: what was read).
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_soe_request_data_size(req: *const SoeRequest) -> usize {
    guard("ecrt_soe_request_data_size", 0, || {
        // SAFETY: NULL or live (API contract).
        unsafe { arg(req, "ecrt_soe_request_data_size", "req") }.map_or(0, |r| r.size)
    })
}

/// Advance and return the request's state.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_soe_request_state(req: *mut SoeRequest) -> u32 {
    with("ecrt_soe_request_state", req, request::ERROR, |r| {
        let (drive, idn) = (r.drive, r.idn);
        r.transfer
            .poll_into(r.sc, r.reading, &mut r.mem, &mut r.size, || {
                describe(drive, idn)
            })
    })
}

/// Start writing `ecrt_soe_request_data_size` bytes of the buffer to the IDN's value.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_soe_request_write(req: *mut SoeRequest) -> i32 {
    const F: &str = "ecrt_soe_request_write";
    with(F, req, errno::EINVAL, |r| {
        let op = write_op(r.drive, r.idn, &r.mem[..r.size.min(r.mem.len())]);
        let rc = r.transfer.start(F, r.sc, op.into());
        if rc == 0 {
            r.reading = false;
        }
        rc
    })
}

/// Start reading the IDN's value into the request's buffer.
///
/// # Safety
/// `req` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_soe_request_read(req: *mut SoeRequest) -> i32 {
    const F: &str = "ecrt_soe_request_read";
    with(F, req, errno::EINVAL, |r| {
        let op = read_op(r.drive, r.idn);
        let rc = r.transfer.start(F, r.sc, op.into());
        if rc == 0 {
            r.reading = true;
        }
        rc
    })
}
