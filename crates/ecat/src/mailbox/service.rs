//! Mailbox requests from any thread while the bus is cycling, for every protocol.
//!
//! An application thread holds a [`MailboxClient`] (cheap to clone, `Send`; also known as
//! [`SdoClient`]) and submits requests ([`MailboxOp`]: SDO, and the other protocols) into a
//! bounded queue; each returns a [`Pending`] to poll or wait on. The cyclic runtime calls
//! [`MailboxService::poll`] once per cycle: it takes new requests, runs at most one transfer
//! per SubDevice at a time (further requests to the same SubDevice wait their turn, in order)
//! and lets each running transfer put at most two datagrams into the acyclic frame, so the
//! cyclic frames are never delayed or displaced by mailbox traffic.
//!
//! What the cyclic frames say of each SubDevice's SM1 ("mailbox full", see
//! [`crate::runtime`]) steers the transfers ([`Sm1`]) and, while a SubDevice has no transfer,
//! makes the service read a message it sent on its own: CoE emergencies go to the per-SubDevice
//! queues ([`Emergencies`]) at any time, not only during transfers; other such messages (EoE
//! frames) go to the unsolicited-message sink ([`MailboxService::set_unsolicited_sink`]). While
//! a SubDevice keeps sending on its own, SM1 counts as full until a read finds nothing: it is
//! read again in the next cycle (also alongside a request's write) without waiting for a fresh
//! status bit (a read of an empty SM1 is refused with WKC 0 and changes nothing). An observation counts only
//! if its cyclic frame was sent after the SubDevice's mailbox was last accessed.

use super::emergency::Emergencies;
use super::exchange::{MailboxArea, Sm1};
use super::job::MailboxJob;
use super::op::MailboxOp;
use super::sdo::SdoOp;
use crate::error::{Error, Result, Who};
use crate::frame::FrameEngine;
use ecat_wire::coe::EmergencyRepr;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Requests that may wait in the queue.
pub const QUEUE_DEPTH: usize = 256;

#[derive(Debug, Default)]
struct Reply {
    slot: Mutex<Option<Result<Vec<u8>>>>,
    done: Condvar,
    /// Cycles sent by the runtime when the request completed (0: not yet).
    cycle: AtomicU64,
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

    /// The runtime's cycle count ([`crate::runtime::Runtime::cycle_count`]) when the request
    /// completed, once it has (to measure latency in cycles).
    pub fn completed_cycle(&self) -> Option<u64> {
        Some(self.reply.cycle.load(Ordering::Acquire)).filter(|&c| c > 0)
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
    op: MailboxOp,
    reply: Arc<Reply>,
}

/// Submits mailbox requests to a cycling runtime from any thread.
#[derive(Clone)]
pub struct MailboxClient {
    tx: SyncSender<Request>,
}

/// The former name of [`MailboxClient`].
pub type SdoClient = MailboxClient;

impl std::fmt::Debug for MailboxClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MailboxClient")
    }
}

impl MailboxClient {
    /// Queue `op` for the SubDevice at `position`.
    pub fn submit(&self, position: usize, op: impl Into<MailboxOp>) -> Result<Pending> {
        let reply = Arc::new(Reply::default());
        let r = Request {
            position,
            op: op.into(),
            reply: reply.clone(),
        };
        match self.tx.try_send(r) {
            Ok(()) => Ok(Pending { reply }),
            Err(TrySendError::Full(_)) => Err(Error::Invalid(format!(
                "the mailbox request queue is full ({QUEUE_DEPTH} requests waiting); wait for answers before sending more"
            ))),
            Err(TrySendError::Disconnected(_)) => {
                Err(Error::Invalid("the cyclic runtime has stopped; mailbox requests are no longer served".into()))
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

/// A mailbox SubDevice the service serves: identity, mailbox, protocols (SII word 0x1C).
#[derive(Debug, Clone)]
pub struct Target {
    /// Who it is.
    pub who: Who,
    /// Its standard mailbox, if any.
    pub area: Option<MailboxArea>,
    /// Supported mailbox protocols (bit 2 CoE, 3 FoE, 4 SoE, 1 EoE, 0x20 VoE ...).
    pub protocols: u16,
}

struct Running {
    job: MailboxJob,
    /// `None` for a listening job (nobody waits for it).
    reply: Option<Arc<Reply>>,
}

/// Serves [`MailboxClient`] requests inside the cyclic runtime. See the module documentation.
pub struct MailboxService {
    rx: Receiver<Request>,
    client: MailboxClient,
    targets: Vec<Target>,
    running: Vec<Option<Running>>,
    waiting: Vec<VecDeque<Request>>,
    /// Cycle of each SubDevice's last SM0 write or SM1 read.
    last_access: Vec<u64>,
    /// The SubDevice's last read brought a message it sent on its own: more may follow
    /// (EoE fragments), so SM1 is read again without waiting for a fresh status bit.
    more: Vec<bool>,
    emergencies: Emergencies,
    /// Messages of other protocols SubDevices sent on their own (VoE, EoE ...), by position,
    /// oldest first, at most [`KEEP_MESSAGES`] each.
    messages: Vec<VecDeque<Vec<u8>>>,
    unsolicited: u64,
    sink: Option<UnsolicitedSink>,
}

/// Takes the messages SubDevices send on their own that no transfer answers (EoE frames):
/// `(position, whole mailbox message)`, returning true if it took the message (false: it is
/// kept for [`MailboxService::take_message`]). Called on the cyclic thread: must not block.
pub type UnsolicitedSink = Box<dyn FnMut(usize, &[u8]) -> bool + Send>;

/// Messages sent unasked kept per SubDevice until taken (older ones are dropped).
pub const KEEP_MESSAGES: usize = 16;

/// The former name of [`MailboxService`].
pub type SdoService = MailboxService;

impl std::fmt::Debug for MailboxService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailboxService")
            .field("subdevices", &self.targets.len())
            .finish()
    }
}

fn complete(reply: &Reply, r: Result<Vec<u8>>, cycle: u64) {
    reply.cycle.store(cycle.max(1), Ordering::Release);
    if let Ok(mut s) = reply.slot.lock() {
        *s = Some(r);
        reply.done.notify_all();
    }
}

/// Names of the protocols in an SII mailbox protocol word, e.g. `CoE, FoE` (or `none`).
pub(crate) fn protocol_names(bits: u16) -> String {
    let names = crate::subdevice::MailboxInfo {
        protocols: bits,
        ..Default::default()
    }
    .protocol_names();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

impl MailboxService {
    /// A service for these SubDevices (by position).
    pub fn new(targets: Vec<Target>) -> MailboxService {
        let (tx, rx) = sync_channel(QUEUE_DEPTH);
        let n = targets.len();
        MailboxService {
            rx,
            client: MailboxClient { tx },
            targets,
            running: (0..n).map(|_| None).collect(),
            waiting: (0..n).map(|_| VecDeque::new()).collect(),
            last_access: vec![0; n],
            more: vec![false; n],
            emergencies: Emergencies::new(n),
            messages: (0..n).map(|_| VecDeque::new()).collect(),
            unsolicited: 0,
            sink: None,
        }
    }

    /// A client to submit requests with.
    pub fn client(&self) -> MailboxClient {
        self.client.clone()
    }

    /// The oldest CoE emergency of any SubDevice: (position, message).
    pub fn take_emergency(&mut self) -> Option<(usize, EmergencyRepr)> {
        self.emergencies.take()
    }

    /// The oldest CoE emergency of the SubDevice at `position`.
    pub fn take_emergency_of(&mut self, position: usize) -> Option<EmergencyRepr> {
        self.emergencies.take_of(position)
    }

    /// The emergency queues.
    pub fn emergencies(&self) -> &Emergencies {
        &self.emergencies
    }

    /// Messages SubDevices sent on their own that no protocol client took (all so far).
    pub fn unsolicited(&self) -> u64 {
        self.unsolicited
    }

    /// Offer unsolicited messages to `sink` from now on (e.g. [`crate::eoe::EoeHub`] takes
    /// the EoE ones); what it does not take is kept for [`MailboxService::take_message`].
    pub fn set_unsolicited_sink(&mut self, sink: UnsolicitedSink) {
        self.sink = Some(sink);
    }

    /// The SubDevices served, by position.
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// The oldest message of mailbox type `kind` (e.g. VoE) the SubDevice at `position` sent
    /// on its own: the whole mailbox message, header included.
    pub fn take_message(
        &mut self,
        position: usize,
        kind: ecat_wire::mailbox::MailboxType,
    ) -> Option<Vec<u8>> {
        let q = self.messages.get_mut(position)?;
        let i = q
            .iter()
            .position(|m| m.get(5).is_some_and(|b| b & 0x0F == kind as u8))?;
        q.remove(i)
    }

    /// True if a transfer is running or waiting for the SubDevice at `position`.
    pub fn busy(&self, position: usize) -> bool {
        self.running.get(position).is_some_and(|r| r.is_some())
            || self.waiting.get(position).is_some_and(|w| !w.is_empty())
    }

    fn admit(&mut self, req: Request) {
        let Some(t) = self.targets.get(req.position) else {
            let n = self.targets.len();
            return complete(
                &req.reply,
                Err(Error::NotFound(format!(
                    "there is no SubDevice at position {}; the bus has {n}",
                    req.position
                ))),
                0,
            );
        };
        let bit = req.op.protocol_bit();
        if t.area.is_some() && t.protocols & bit != 0 {
            return self.waiting[req.position].push_back(req);
        }
        let e = match req.op {
            MailboxOp::Sdo(_) => Error::NoCoe {
                who: t.who.clone(),
                protocols: protocol_names(t.protocols),
            },
            _ => Error::Invalid(format!(
                "{} cannot serve the {}: its mailbox protocols are {}",
                t.who,
                req.op.describe(),
                protocol_names(t.protocols)
            )),
        };
        complete(&req.reply, Err(e), 0);
    }

    /// One cycle's work (`cycle` numbers the acyclic frame this goes into). `counters` are
    /// the SubDevices' mailbox counters; `blocked(p)` is true while the supervisor itself
    /// uses SubDevice p's mailbox; `sm1(p)` is the last cyclic observation of its SM1 "mailbox
    /// full" bit with the cycle whose frame carried it, if its status bit is mapped.
    pub fn poll(
        &mut self,
        engine: &mut FrameEngine,
        now: u64,
        cycle: u64,
        counters: &mut [u8],
        blocked: impl Fn(usize) -> bool,
        sm1: impl Fn(usize) -> Option<(bool, u64)>,
    ) {
        while let Ok(req) = self.rx.try_recv() {
            self.admit(req);
        }
        let n = self.targets.len();
        for (p, counter) in counters.iter_mut().enumerate().take(n) {
            let seen = match sm1(p) {
                Some((full, at)) if at > self.last_access[p] => {
                    if full {
                        Sm1::Full
                    } else {
                        Sm1::Empty
                    }
                }
                // It kept sending on its own (EoE fragments): probably more is waiting.
                _ if self.more[p] => Sm1::Full,
                _ => Sm1::Unknown,
            };
            // A transfer that ends this cycle makes room for the next one in the same frame.
            for _ in 0..2 {
                if self.running[p].is_none() && !blocked(p) {
                    self.start(p, *counter, seen, now);
                }
                let Some(r) = self.running[p].as_mut() else {
                    break;
                };
                if r.job.drive(engine, now, seen) {
                    self.last_access[p] = cycle;
                }
                if !r.job.is_done() {
                    break;
                }
                *counter = r.job.counter();
                self.finish(p, cycle);
            }
        }
    }

    /// Take the answers that came back (call after receiving frames): transfers that end
    /// complete now, so the application sees the result in this cycle.
    pub fn collect(&mut self, engine: &mut FrameEngine, now: u64, cycle: u64, counters: &mut [u8]) {
        for p in 0..self.running.len() {
            let Some(r) = self.running[p].as_mut() else {
                continue;
            };
            r.job.collect(engine, now);
            if r.job.is_done() {
                if let Some(c) = counters.get_mut(p) {
                    *c = r.job.counter();
                }
                self.finish(p, cycle);
            }
        }
    }

    /// Start the next request for SubDevice `p`, or a read of a message it sent on its own.
    fn start(&mut self, p: usize, counter: u8, seen: Sm1, now: u64) {
        let Some(area) = self.targets[p].area else {
            return;
        };
        if self.waiting[p].is_empty() && seen != Sm1::Full {
            return; // the common case, every cycle: nothing to do (and nothing allocated)
        }
        let who = self.targets[p].who.clone();
        if let Some(req) = self.waiting[p].pop_front() {
            let job = MailboxJob::new(who, area, req.op, counter, now);
            self.running[p] = Some(Running {
                job,
                reply: Some(req.reply),
            });
        } else if seen == Sm1::Full {
            let job = MailboxJob::listen(who, area, counter, now);
            self.running[p] = Some(Running { job, reply: None });
        }
    }

    /// Hand out what the finished transfer of SubDevice `p` brought.
    fn finish(&mut self, p: usize, cycle: u64) {
        if let Some(mut done) = self.running[p].take() {
            let emergencies = done.job.take_emergencies();
            let unsolicited = done.job.take_unsolicited();
            self.more[p] = !emergencies.is_empty() || !unsolicited.is_empty();
            for e in emergencies {
                self.emergencies.push(p, e);
            }
            for m in unsolicited {
                self.unsolicited += 1;
                if self.sink.as_mut().is_some_and(|sink| sink(p, &m)) {
                    continue;
                }
                let q = &mut self.messages[p];
                if q.len() == KEEP_MESSAGES {
                    q.pop_front();
                }
                q.push_back(m);
            }
            if let (Some(res), Some(reply)) = (done.job.take_result(), done.reply) {
                complete(&reply, res, cycle);
            }
        }
    }
}
