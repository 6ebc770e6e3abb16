//! The configuration phase through the control socket.
//!
//! Before an application activates its master (IgH's idle phase) nothing cycles, so there are
//! no acyclic frames for the tool's requests to ride in. Instead the application shares its
//! [`MainDevice`] with the control server behind a mutex (an [`IdleDevice`]), and the server
//! answers bus requests (SDO transfers, EoE IP parameters, register reads and writes, state
//! changes, the SubDevices' current states) with the MainDevice's blocking calls. The
//! application's own blocking calls take the same lock, so the two never share the link at
//! once. At activation the application takes the MainDevice out of the mutex and hands it to
//! the runtime; from then on [`answer`] declines and requests ride in the runtime's acyclic frames.

use super::protocol::{Reply, Request, SubDeviceRecord};
use super::server::{check_span, eoe_ip_op, REQUEST_TIMEOUT};
use super::shared::Shared;
use crate::mailbox::sdo::SdoOp;
use crate::MainDevice;
use ecat_wire::al::AlState;
use std::sync::{Arc, Mutex, MutexGuard};

/// A MainDevice in its configuration phase, shared between the application and the control
/// server (`None` once the application took it for its runtime).
pub type IdleDevice = Arc<Mutex<Option<MainDevice>>>;

/// Share `md`.
pub fn share(md: MainDevice) -> IdleDevice {
    Arc::new(Mutex::new(Some(md)))
}

/// Lock `dev` (a panic on another thread while it held the lock does not make it unusable:
/// the MainDevice's state is a bus, re-read by every call).
pub fn lock(dev: &IdleDevice) -> MutexGuard<'_, Option<MainDevice>> {
    dev.lock().unwrap_or_else(|e| e.into_inner())
}

/// Answer `req` on the shared MainDevice; `None` when this is not the configuration phase
/// (nothing shared, or the application took the MainDevice) or the request needs no bus.
pub(super) fn answer(sh: &Shared, req: &Request) -> Option<Result<Reply, String>> {
    let dev = sh.statics.lock().ok()?.idle.clone()?;
    if let Request::Pdos = req {
        let st = sh.statics.lock().ok()?;
        return Some(Ok(Reply::Pdos(st.pdos.clone())));
    }
    let mut guard = lock(&dev);
    let md = guard.as_mut()?;
    let err = |e: crate::Error| e.to_string();
    Some(match req {
        Request::Slaves => {
            // States as they are now; the scan's if the bus does not answer.
            let _ = md.refresh_states();
            Ok(Reply::Slaves(
                md.subdevices().iter().map(SubDeviceRecord::from).collect(),
            ))
        }
        Request::Sdo { position, op } => md
            .sdo(*position, SdoOp::from(op.clone()))
            .map(Reply::Data)
            .map_err(err),
        Request::EoeIp { position, set } => {
            eoe_ip_op(set).and_then(|op| md.mailbox(*position, op).map(Reply::Data).map_err(err))
        }
        Request::RegRead {
            position,
            address,
            len,
        } => check_span(*address, *len).and_then(|()| {
            md.read_memory(*position, *address, *len)
                .map(Reply::Data)
                .map_err(err)
        }),
        Request::RegWrite {
            position,
            address,
            data,
        } => check_span(*address, data.len()).and_then(|()| {
            md.write_memory(*position, *address, data)
                .map(|()| Reply::Done)
                .map_err(err)
        }),
        Request::States { positions, state } => match AlState::from_bits(*state) {
            None => Err(format!("0x{state:02x} is not an EtherCAT state")),
            Some(s) => md
                .request_state(positions, s, REQUEST_TIMEOUT)
                .map(|()| Reply::Done)
                .map_err(err),
        },
        _ => return None,
    })
}
