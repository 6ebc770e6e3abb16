//! SDO requests from any thread while the bus is cycling.
//!
//! An application thread holds an [`SdoClient`] (cheap to clone, `Send`) and submits requests
//! into a bounded queue; each returns a [`Pending`] to poll or wait on. The cyclic runtime calls
//! [`SdoService::poll`] once per cycle: it takes new requests, runs at most one transfer per
//! SubDevice at a time (further requests to the same SubDevice wait their turn, in order) and
//! gives each running transfer at most one datagram per cycle in the acyclic frame, so the
//! cyclic frames are never delayed or displaced by SDO traffic.

use super::exchange::MailboxArea;
use super::job::SdoJob;
use super::sdo::SdoOp;
use crate::error::{Error, Result, Who};
use crate::frame::{FrameEngine, Handle, Status};
use ecat_wire::coe::EmergencyRepr;
use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Requests that may wait in the queue.
pub const QUEUE_DEPTH: usize = 256;

#[derive(Debug, Default)]
struct Reply {
    slot: Mutex<Option<Result<Vec<u8>>>>,
    done: Condvar,
}

/// The answer to a submitted request, once it comes.
#[derive(Debug, Clone)]
pub struct Pending {
    reply: Arc<Reply>,
}

impl Pending {
    /// The result if it has come (taken: a second call returns `None`).
    pub fn poll(&self) -> Option<Result<Vec<u8>>> {
        self.reply.slot.lock().ok()?.take()
    }

    /// Wait up to `timeout` for the result.
    pub fn wait(&self, timeout: Duration) -> Option<Result<Vec<u8>>> {
        let guard = self.reply.slot.lock().ok()?;
        let (mut guard, _) = self
            .reply
            .done
            .wait_timeout_while(guard, timeout, |s| s.is_none())
            .ok()?;
        guard.take()
    }
}

struct Request {
    position: usize,
    op: SdoOp,
    reply: Arc<Reply>,
}

/// Submits SDO requests to a cycling runtime from any thread.
#[derive(Clone)]
pub struct SdoClient {
    tx: SyncSender<Request>,
}

impl std::fmt::Debug for SdoClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SdoClient")
    }
}

impl SdoClient {
    /// Queue `op` for the SubDevice at `position`.
    pub fn submit(&self, position: usize, op: SdoOp) -> Result<Pending> {
        let reply = Arc::new(Reply::default());
        let r = Request {
            position,
            op,
            reply: reply.clone(),
        };
        match self.tx.try_send(r) {
            Ok(()) => Ok(Pending { reply }),
            Err(TrySendError::Full(_)) => Err(Error::Invalid(format!(
                "the SDO queue is full ({QUEUE_DEPTH} requests waiting); wait for answers before sending more"
            ))),
            Err(TrySendError::Disconnected(_)) => {
                Err(Error::Invalid("the cyclic runtime has stopped; SDO requests are no longer served".into()))
            }
        }
    }

    /// Queue a read of `index:subindex`.
    pub fn upload(&self, position: usize, index: u16, subindex: u8) -> Result<Pending> {
        self.submit(
            position,
            SdoOp::Upload {
                index,
                subindex,
                complete_access: false,
            },
        )
    }

    /// Queue a write of `data` to `index:subindex`.
    pub fn download(
        &self,
        position: usize,
        index: u16,
        subindex: u8,
        data: &[u8],
    ) -> Result<Pending> {
        self.submit(
            position,
            SdoOp::Download {
                index,
                subindex,
                complete_access: false,
                data: data.to_vec(),
            },
        )
    }
}

struct Running {
    job: SdoJob,
    reply: Arc<Reply>,
    handle: Option<Handle>,
}

/// Serves [`SdoClient`] requests inside the cyclic runtime. See the module documentation.
pub struct SdoService {
    rx: Receiver<Request>,
    client: SdoClient,
    targets: Vec<(Who, Option<MailboxArea>)>,
    running: Vec<Option<Running>>,
    waiting: Vec<VecDeque<Request>>,
    /// CoE emergencies that arrived during transfers: (position, message), oldest first.
    emergencies: VecDeque<(usize, EmergencyRepr)>,
}

/// Emergencies kept until taken (older ones are dropped first).
pub const MAX_EMERGENCIES: usize = 256;

impl std::fmt::Debug for SdoService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SdoService")
            .field("subdevices", &self.targets.len())
            .finish()
    }
}

fn complete(reply: &Reply, r: Result<Vec<u8>>) {
    if let Ok(mut s) = reply.slot.lock() {
        *s = Some(r);
        reply.done.notify_all();
    }
}

impl SdoService {
    /// A service for SubDevices with these identities and CoE mailboxes (by position).
    pub fn new(targets: Vec<(Who, Option<MailboxArea>)>) -> SdoService {
        let (tx, rx) = sync_channel(QUEUE_DEPTH);
        let n = targets.len();
        SdoService {
            rx,
            client: SdoClient { tx },
            targets,
            running: (0..n).map(|_| None).collect(),
            waiting: (0..n).map(|_| VecDeque::new()).collect(),
            emergencies: VecDeque::with_capacity(MAX_EMERGENCIES),
        }
    }

    /// A client to submit requests with.
    pub fn client(&self) -> SdoClient {
        self.client.clone()
    }

    /// The oldest CoE emergency received while serving transfers: (position, message).
    pub fn take_emergency(&mut self) -> Option<(usize, EmergencyRepr)> {
        self.emergencies.pop_front()
    }

    /// True if a transfer is running or waiting for the SubDevice at `position`.
    pub fn busy(&self, position: usize) -> bool {
        self.running.get(position).is_some_and(|r| r.is_some())
            || self.waiting.get(position).is_some_and(|w| !w.is_empty())
    }

    /// One cycle's work. `counters` are the SubDevices' mailbox counters; `blocked[p]` is true
    /// while the supervisor itself uses SubDevice p's mailbox.
    pub fn poll(
        &mut self,
        engine: &mut FrameEngine,
        now: u64,
        counters: &mut [u8],
        blocked: impl Fn(usize) -> bool,
    ) {
        while let Ok(req) = self.rx.try_recv() {
            match self.targets.get(req.position) {
                None => complete(
                    &req.reply,
                    Err(Error::NotFound(format!(
                        "there is no SubDevice at position {}; the bus has {}",
                        req.position,
                        self.targets.len()
                    ))),
                ),
                Some((who, None)) => complete(
                    &req.reply,
                    Err(Error::NoCoe {
                        who: who.clone(),
                        protocols: "none with CoE".into(),
                    }),
                ),
                Some(_) => self.waiting[req.position].push_back(req),
            }
        }
        let n = self.targets.len();
        for (p, counter) in counters.iter_mut().enumerate().take(n) {
            if self.running[p].is_none() && !blocked(p) {
                if let Some(req) = self.waiting[p].pop_front() {
                    let (who, area) = &self.targets[p];
                    let Some(area) = *area else { continue };
                    let job = SdoJob::new(who.clone(), area, req.op, *counter, now);
                    self.running[p] = Some(Running {
                        job,
                        reply: req.reply,
                        handle: None,
                    });
                }
            }
            let Some(r) = self.running[p].as_mut() else {
                continue;
            };
            if let Some(h) = r.handle {
                match engine.status(h) {
                    Status::Pending => continue,
                    Status::Done => {
                        let (data, wkc) = engine
                            .response(h)
                            .map(|(d, w)| (d.to_vec(), w))
                            .unwrap_or_default();
                        engine.release(h);
                        r.handle = None;
                        r.job.answer(&data, wkc, now);
                    }
                    Status::Failed | Status::Stale => {
                        engine.release(h);
                        r.handle = None;
                        r.job.answer(&[], 0, now);
                    }
                }
            }
            if !r.job.is_done() {
                if let Some((cmd, adp, ado, data)) = r.job.next_datagram(now) {
                    if let Ok(h) =
                        engine.submit_with(cmd, adp as u32 | (ado as u32) << 16, &data, 0)
                    {
                        r.handle = Some(h);
                    }
                }
            }
            if r.job.is_done() {
                *counter = r.job.counter();
                if let Some(mut done) = self.running[p].take() {
                    for e in done.job.take_emergencies() {
                        if self.emergencies.len() == MAX_EMERGENCIES {
                            self.emergencies.pop_front();
                        }
                        self.emergencies.push_back((p, e));
                    }
                    if let Some(res) = done.job.take_result() {
                        complete(&done.reply, res);
                    }
                }
            }
        }
    }
}
