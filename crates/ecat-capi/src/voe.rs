//! VoE (vendor-specific over EtherCAT) handlers in the C API (`ec_voe_handler_t`), with IgH's
//! state machine: `write` sends one message with the header set by `send_header`; `read`
//! waits up to 500 ms for the next VoE message the slave sends, `read_nosync` takes one that
//! is already there (else fails); `execute`, called every cycle while `BUSY`, advances the
//! handler and returns its state. After a read, `data`/`data_size` hold the payload and
//! `received_header` the message's vendor id and type.
//!
//! Writes ride in the application's acyclic frames through the runtime's mailbox service
//! ([`crate::mbx_request`]). A message the slave sends arrives on its own: the cyclic frames
//! carry the slave's SM1 "mailbox full" bit, the runtime reads the message as soon as it is
//! there and keeps it for the application ([`ecat::runtime::Runtime::take_mailbox_message`]);
//! a read takes it from there. Where the slave's SM1 bit is not in the cyclic frames, a read
//! asks the mailbox service to wait for the message instead.

use crate::abi::request;
use crate::ffi::{arg, errno, guard, with_mut};
use crate::log;
use crate::mbx_request::{slave_ready, MbxTransfer};
use crate::slave_config::SlaveConfig;
use ecat::mailbox::voe::{VoeMessage, VoeOp};
use ecat_wire::mailbox::MailboxType;
use std::time::{Duration, Instant};

/// How long `read` waits for a message, and a write for the slave to take it (IgH: 500 ms).
const READ_TIMEOUT: Duration = Duration::from_millis(500);
/// Cycles `read_nosync` waits for a message already announced by the SM1 bit to be fetched.
const NOSYNC_CYCLES: u64 = 3;
/// How long a read waits for its slave to be configured.
const CONFIGURE_TIMEOUT: Duration = Duration::from_secs(5);
/// The VoE protocol bit of the SII mailbox protocols.
const VOE: u16 = 0x20;

/// A read in progress.
#[derive(Debug, Clone, Copy)]
struct Read {
    nosync: bool,
    /// When it was asked for.
    asked: Instant,
    /// When the slave was ready and the wait began: (instant, runtime cycle).
    since: Option<(Instant, u64)>,
}

/// `ec_voe_handler_t`.
pub struct VoeHandler {
    sc: *mut SlaveConfig,
    /// Payload buffer (its length is the memory size).
    mem: Vec<u8>,
    /// Bytes of valid payload.
    size: usize,
    /// Header of the messages written: vendor id, vendor type.
    send: (u32, u16),
    /// Header of the last message read.
    received: (u32, u16),
    /// A write, or a read through the mailbox service.
    transfer: MbxTransfer,
    /// The transfer is a read through the mailbox service.
    service_read: bool,
    /// A read waiting for a message.
    read: Option<Read>,
}

/// Create a VoE handler with a payload buffer of `size` bytes.
///
/// # Safety
/// `sc` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_create_voe_handler(
    sc: *mut SlaveConfig,
    size: usize,
) -> *mut VoeHandler {
    const F: &str = "ecrt_slave_config_create_voe_handler";
    guard(F, std::ptr::null_mut(), || {
        // SAFETY: NULL or live (API contract).
        let Some(s) = (unsafe { crate::check::config(sc, F) }) else {
            return std::ptr::null_mut();
        };
        if s.master().is_active() {
            log!("{F}: create VoE handlers before ecrt_master_activate");
            return std::ptr::null_mut();
        }
        let Some(mem) = crate::check::buffer(F, "VoE buffer", size) else {
            return std::ptr::null_mut();
        };
        let v = Box::into_raw(Box::new(VoeHandler {
            sc,
            mem,
            size: 0,
            send: (0, 0),
            received: (0, 0),
            transfer: MbxTransfer::with_timeout(READ_TIMEOUT.as_millis() as u32),
            service_read: false,
            read: None,
        }));
        s.voe_handlers.push(v);
        v
    })
}

/// Run `body` on the VoeHandler, or return `err` (and log) when `voe` is NULL.
fn with<T: Copy>(
    f: &str,
    voe: *mut VoeHandler,
    err: T,
    body: impl FnOnce(&mut VoeHandler) -> T,
) -> T {
    // SAFETY: NULL or live (API contract).
    unsafe { with_mut(f, voe, "voe", err, body) }
}

/// Set the vendor id and type of the messages written.
///
/// # Safety
/// `voe` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_voe_handler_send_header(
    voe: *mut VoeHandler,
    vendor_id: u32,
    vendor_type: u16,
) -> i32 {
    with("ecrt_voe_handler_send_header", voe, errno::EINVAL, |v| {
        v.send = (vendor_id, vendor_type);
        0
    })
}

/// The vendor id and type of the last message read.
///
/// # Safety
/// `voe` NULL or live; `vendor_id` and `vendor_type` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_voe_handler_received_header(
    voe: *const VoeHandler,
    vendor_id: *mut u32,
    vendor_type: *mut u16,
) -> i32 {
    const F: &str = "ecrt_voe_handler_received_header";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or live (API contract).
        let Some(v) = (unsafe { arg(voe, F, "voe") }) else {
            return errno::EINVAL;
        };
        if vendor_id.is_null() || vendor_type.is_null() {
            log!("{F}: vendor_id or vendor_type is NULL");
            return errno::EINVAL;
        }
        // SAFETY: non-NULL and writable (API contract).
        unsafe {
            *vendor_id = v.received.0;
            *vendor_type = v.received.1;
        }
        0
    })
}

/// The payload buffer (after the VoE header).
///
/// # Safety
/// `voe` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_voe_handler_data(voe: *const VoeHandler) -> *mut u8 {
    guard("ecrt_voe_handler_data", std::ptr::null_mut(), || {
        // SAFETY: NULL or live (API contract).
        unsafe { arg(voe, "ecrt_voe_handler_data", "voe") }
            .map_or(std::ptr::null_mut(), |v| v.mem.as_ptr() as *mut u8)
    })
}

/// Bytes of valid payload (after a read: what was read; after a write: what was written).
///
/// # Safety
/// `voe` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_voe_handler_data_size(voe: *const VoeHandler) -> usize {
    guard("ecrt_voe_handler_data_size", 0, || {
        // SAFETY: NULL or live (API contract).
        unsafe { arg(voe, "ecrt_voe_handler_data_size", "voe") }.map_or(0, |v| v.size)
    })
}

fn busy(f: &str, v: &VoeHandler) -> bool {
    let b = v.transfer.busy() || v.read.is_some();
    if b {
        log!("{f}: the VoE handler is still busy");
    }
    b
}

/// Start writing `size` bytes of the buffer as one VoE message.
///
/// # Safety
/// `voe` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_voe_handler_write(voe: *mut VoeHandler, size: usize) -> i32 {
    const F: &str = "ecrt_voe_handler_write";
    with(F, voe, errno::EINVAL, |v| {
        if size > v.mem.len() {
            log!(
                "{F}: {size} bytes do not fit the handler's {} bytes",
                v.mem.len()
            );
            return errno::EOVERFLOW;
        }
        if busy(F, v) {
            return errno::EBUSY;
        }
        let msg = VoeMessage {
            vendor_id: v.send.0,
            vendor_type: v.send.1,
            data: v.mem[..size].to_vec(),
        };
        let rc = v.transfer.start(F, v.sc, VoeOp::Send(msg).into());
        if rc == 0 {
            v.size = size;
            v.service_read = false;
        }
        rc
    })
}

fn start_read(f: &str, voe: *mut VoeHandler, nosync: bool) -> i32 {
    with(f, voe, errno::EINVAL, |v| {
        if busy(f, v) {
            return errno::EBUSY;
        }
        // SAFETY: a handler never outlives its configuration.
        let sc = unsafe { &*v.sc };
        if sc.attached.is_none() {
            log!(
                "{f}: {} is not attached to a slave; the read fails",
                sc.name()
            );
            v.transfer.state = request::ERROR;
            return 0;
        }
        if !sc.master().is_active() {
            log!("{f}: VoE reads run after ecrt_master_activate");
            return errno::EPERM;
        }
        v.read = Some(Read {
            nosync,
            asked: Instant::now(),
            since: None,
        });
        v.transfer.state = request::BUSY;
        0
    })
}

/// Start reading the next VoE message the slave sends (waiting up to 500 ms for it).
///
/// # Safety
/// `voe` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_voe_handler_read(voe: *mut VoeHandler) -> i32 {
    start_read("ecrt_voe_handler_read", voe, false)
}

/// Start reading a VoE message the slave has already sent (fails if there is none).
///
/// # Safety
/// `voe` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_voe_handler_read_nosync(voe: *mut VoeHandler) -> i32 {
    start_read("ecrt_voe_handler_read_nosync", voe, true)
}

impl VoeHandler {
    /// Keep a received VoE payload (`vendor id | vendor type | data`).
    fn take(&mut self, payload: &[u8]) -> u32 {
        let Some(m) = VoeMessage::parse(payload) else {
            log!(
                "VoE handler: a VoE message of {} bytes has no complete header",
                payload.len()
            );
            return request::ERROR;
        };
        if m.data.len() > self.mem.len() {
            log!(
                "VoE handler: the {} bytes received do not fit the handler's {} bytes",
                m.data.len(),
                self.mem.len()
            );
            return request::ERROR;
        }
        self.mem[..m.data.len()].copy_from_slice(&m.data);
        self.size = m.data.len();
        self.received = (m.vendor_id, m.vendor_type);
        request::SUCCESS
    }

    /// One step of a read waiting for a message.
    fn step_read(&mut self, mut read: Read) -> u32 {
        // SAFETY: a handler never outlives its configuration.
        let sc = unsafe { &*self.sc };
        let ready = slave_ready(self.sc);
        // SAFETY: IgH's threading rule (handlers are executed from the cyclic thread), and
        // no other reference to the runtime is held during this call.
        let (Some(pos), Some(rt)) = (sc.attached, unsafe { sc.master().runtime() }) else {
            return request::ERROR;
        };
        if !ready {
            self.read = Some(read);
            if read.asked.elapsed() > CONFIGURE_TIMEOUT {
                log!(
                    "VoE handler of {}: the slave was not configured within {} s",
                    sc.name(),
                    CONFIGURE_TIMEOUT.as_secs()
                );
                self.read = None;
                return request::ERROR;
            }
            return request::BUSY;
        }
        let protocols = rt
            .supervisor()
            .states()
            .nth(pos)
            .map_or(0, |s| s.info.mailbox.protocols);
        if protocols & VOE == 0 {
            log!(
                "VoE handler of {}: slave {pos} has no VoE mailbox",
                sc.name()
            );
            return request::ERROR;
        }
        if let Some(msg) = rt.take_mailbox_message(pos, MailboxType::Voe) {
            return self.take(msg.get(6..).unwrap_or_default());
        }
        if !rt.mailbox_status_mapped(pos) {
            // No SM1 bit in the cyclic frames: let the mailbox service wait for it.
            self.service_read = true;
            self.transfer.state = request::UNUSED;
            let rc = self
                .transfer
                .start("ecrt_voe_handler_read", self.sc, VoeOp::Receive.into());
            return if rc == 0 {
                self.transfer.state
            } else {
                request::ERROR
            };
        }
        let (since, cycle) = *read.since.get_or_insert((Instant::now(), rt.cycle_count()));
        let late = if read.nosync {
            rt.cycle_count().saturating_sub(cycle) > NOSYNC_CYCLES
        } else {
            since.elapsed() > READ_TIMEOUT
        };
        if late {
            log!(
                "VoE handler of {}: {}",
                sc.name(),
                if read.nosync {
                    "no VoE message from the slave was waiting".to_string()
                } else {
                    format!(
                        "no VoE message from the slave within {} ms",
                        READ_TIMEOUT.as_millis()
                    )
                }
            );
            return request::ERROR;
        }
        self.read = Some(read);
        request::BUSY
    }
}

/// Advance the handler (call it every cycle while it is `BUSY`) and return its state.
///
/// # Safety
/// `voe` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_voe_handler_execute(voe: *mut VoeHandler) -> u32 {
    with("ecrt_voe_handler_execute", voe, request::ERROR, |v| {
        if let Some(read) = v.read.take() {
            v.transfer.state = v.step_read(read);
            return v.transfer.state;
        }
        let sc = v.sc;
        let done = v.transfer.poll(sc, || "VoE handler".to_string());
        if let (Some(Ok(payload)), true) = (done, v.service_read) {
            v.transfer.state = v.take(&payload);
        }
        v.transfer.state
    })
}
