//! What the mailbox request objects (SoE requests, VoE handlers) share: one transfer at a time,
//! submitted to the runtime's mailbox service (it rides in the application's acyclic frames)
//! and advanced when the application asks for the state, as IgH's user-space library does.
//!
//! IgH starts a request only once its slave is configured: one asked for earlier waits
//! (`BUSY`) until then, or fails when its timeout passes first. A configuration that is not
//! attached to a slave fails every request. Nothing is allocated while a request is idle or
//! waiting; starting one allocates its message.

use crate::abi::request;
use crate::ffi::errno;
use crate::log;
use crate::slave_config::SlaveConfig;
use ecat::mailbox::op::MailboxOp;
use ecat::mailbox::service::Pending;
use std::time::{Duration, Instant};

/// One mailbox transfer of a request object. See the module documentation.
#[derive(Default)]
pub struct MbxTransfer {
    /// Timeout in ms (0 = none).
    pub timeout_ms: u32,
    /// IgH's request state (`EC_REQUEST_*`).
    pub state: u32,
    /// The transfer submitted, and when.
    pending: Option<(Pending, Instant)>,
    /// A transfer asked for while the slave was still being configured, and when.
    deferred: Option<(MailboxOp, Instant)>,
}

/// True when the configuration's slave is in its requested state (configured), so its
/// mailbox is free for application transfers.
pub(crate) fn slave_ready(sc: *mut SlaveConfig) -> bool {
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

impl MbxTransfer {
    /// An idle transfer with a timeout of `timeout_ms` (0 = none).
    pub fn with_timeout(timeout_ms: u32) -> MbxTransfer {
        MbxTransfer {
            timeout_ms,
            ..Default::default()
        }
    }

    /// True while a transfer runs or waits.
    pub fn busy(&self) -> bool {
        self.state == request::BUSY
    }

    /// Start `op` for the configuration `sc` (now, or once its slave is configured). Returns 0
    /// or IgH's negative errno; `f` names the C function in log lines.
    pub(crate) fn start(&mut self, f: &str, sc: *mut SlaveConfig, op: MailboxOp) -> i32 {
        if self.busy() {
            log!("{f}: the request is still busy");
            return errno::EBUSY;
        }
        // SAFETY: a request never outlives its configuration.
        let c = unsafe { &*sc };
        if c.attached.is_none() {
            log!(
                "{f}: {} is not attached to a slave; the request fails",
                c.name()
            );
            self.state = request::ERROR;
            return 0;
        }
        if !c.master().is_active() {
            log!("{f}: requests run after ecrt_master_activate");
            return errno::EPERM;
        }
        if slave_ready(sc) {
            self.submit(f, sc, op)
        } else {
            self.deferred = Some((op, Instant::now()));
            self.state = request::BUSY;
            0
        }
    }

    fn submit(&mut self, f: &str, sc: *mut SlaveConfig, op: MailboxOp) -> i32 {
        // SAFETY: a request never outlives its configuration.
        let c = unsafe { &*sc };
        let Some(pos) = c.attached else {
            return errno::EINVAL;
        };
        let client = c.master().sdo_client.lock().ok().and_then(|c| c.clone());
        let Some(client) = client else {
            log!("{f}: requests run after ecrt_master_activate");
            return errno::EPERM;
        };
        match client.submit(pos, op) {
            Ok(p) => {
                self.pending = Some((p, Instant::now()));
                self.state = request::BUSY;
                0
            }
            Err(e) => {
                log!("{f}: {e}");
                errno::ENOBUFS
            }
        }
    }

    fn timed_out(&self, since: Instant) -> bool {
        self.timeout_ms != 0 && since.elapsed() > Duration::from_millis(self.timeout_ms as u64)
    }

    /// Advance the transfer of configuration `sc`: the result once, when it ends (the state is
    /// then `SUCCESS` or `ERROR`; the caller may still turn a success into an error). Errors
    /// and timeouts are logged, naming the request with `what`.
    pub(crate) fn poll(
        &mut self,
        sc: *mut SlaveConfig,
        what: impl Fn() -> String,
    ) -> Option<ecat::Result<Vec<u8>>> {
        if let Some((_, asked)) = &self.deferred {
            if slave_ready(sc) {
                let (op, _) = self.deferred.take()?;
                if self.submit(&what(), sc, op) != 0 {
                    self.state = request::ERROR;
                }
            } else if self.timed_out(*asked) {
                log!(
                    "{}: the slave was not configured within {} ms",
                    what(),
                    self.timeout_ms
                );
                self.deferred = None;
                self.state = request::ERROR;
            }
            return None;
        }
        let (p, started) = self.pending.as_ref()?;
        match p.poll() {
            Some(r) => {
                self.pending = None;
                self.state = match &r {
                    Ok(_) => request::SUCCESS,
                    Err(e) => {
                        log!("{}: {e}", what());
                        request::ERROR
                    }
                };
                Some(r)
            }
            None if self.timed_out(*started) => {
                log!("{}: no answer within {} ms", what(), self.timeout_ms);
                self.pending = None;
                self.state = request::ERROR;
                None
            }
            None => None,
        }
    }

    /// Advance a request whose reads land in `mem` (`size`: bytes valid) and return its
    /// state: [`MbxTransfer::poll`], then the data of a finished read copied in (an error if
    /// it does not fit).
    pub(crate) fn poll_into(
        &mut self,
        sc: *mut SlaveConfig,
        reading: bool,
        mem: &mut [u8],
        size: &mut usize,
        what: impl Fn() -> String,
    ) -> u32 {
        if let Some(Ok(data)) = self.poll(sc, &what) {
            if reading && data.len() > mem.len() {
                log!(
                    "{}: {} bytes read do not fit the request's {} bytes",
                    what(),
                    data.len(),
                    mem.len()
                );
                self.state = request::ERROR;
            } else if reading {
                mem[..data.len()].copy_from_slice(&data);
                *size = data.len();
            }
        }
        self.state
    }
}
