//! The control server: a Unix socket per master and a thread that answers requests.
//!
//! [`Server::start`] binds `masterN.sock` in the control directory (see
//! [`super::socket_dirs`]): a stale socket file (nobody accepting) is replaced, a live one
//! (another process holds master N) is an error. One thread accepts; each connection gets a
//! thread of its own that reads request lines and writes answers. None of this runs on the
//! application's thread: answers come from the statics, from live figures the application
//! copies when asked (see [`super::shared`]), from the runtime's SDO client, from jobs the
//! application's acyclic frames carry, or, before activation, from the MainDevice the
//! application shares (see [`super::idle`]). Dropping the server stops the threads and removes the
//! socket file.

use super::idle::IdleDevice;
use super::protocol::{self, Reply, ReplyLine, Request, RequestLine, VERSION};
use super::shared::{self, Job, JobKind, JobReply, Live, Shared, Statics};
use crate::config::SubDeviceConfig;
use crate::error::{Error, Result};
use crate::runtime::Runtime;
use crate::subdevice::SubDevice;
use ecat_wire::al::AlState;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a request waits for the application's cycle (SDO, register, live figures).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Bytes of ESC memory one register request may read or write (one datagram in one frame).
pub const MAX_REGISTER_BYTES: usize = 1024;

/// Longest request line taken (a longer one ends the connection).
const MAX_LINE: u64 = 1 << 20;

/// A running control server for one master.
pub struct Server {
    shared: Arc<Shared>,
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "control::Server({})", self.path.display())
    }
}

impl Server {
    /// Serve master `index` (on link `link`) at `masterN.sock` in the first usable control
    /// directory.
    pub fn start(index: u32, link: &str) -> Result<Server> {
        let path = super::bind_path(index)?;
        let listener = bind(&path, index)?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
        let shared = Arc::new(Shared {
            index,
            link: link.to_string(),
            started: Instant::now(),
            statics: Mutex::new(Statics::default()),
            live: Mutex::new(Live::default()),
            fresh: Default::default(),
            wanted: AtomicBool::new(false),
            queued: Default::default(),
            app_time: Default::default(),
            history: Default::default(),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (sh, st) = (shared.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name(format!("ecat-control{index}"))
            .spawn(move || accept_loop(listener, sh, st))
            .map_err(|e| Error::Invalid(format!("cannot start the control thread: {e}")))?;
        Ok(Server {
            shared,
            path,
            stop,
            thread: Some(thread),
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Idle phase: the SubDevices of the last scan and their process data configurations;
    /// with `device`, bus requests are answered on it (see [`super::idle`]) until a runtime
    /// attaches.
    pub fn set_idle(
        &self,
        subs: &[SubDevice],
        pdos: &[SubDeviceConfig],
        device: Option<IdleDevice>,
    ) {
        let mut st = self.statics();
        st.active = false;
        st.subdevices = subs.iter().map(Into::into).collect();
        st.pdos = pdos.iter().map(protocol::config_to_wire).collect();
        st.domains.clear();
        st.sdo = None;
        st.jobs = None;
        st.idle = device;
    }

    /// Serve `rt`'s state and carry requests in its acyclic frames from now on (call before
    /// cycling; it copies the statics and sizes the live buffers).
    pub fn attach(&self, rt: &mut Runtime) {
        if let Ok(mut h) = self.shared.history.lock() {
            h.clear();
        }
        let (tx, rx) = mpsc::sync_channel(shared::JOB_QUEUE);
        shared::attach(&self.shared, rt, tx);
        rt.set_control(Some(shared::Endpoint::new(self.shared.clone(), rx)));
    }

    /// The application's slave configurations (shown by `ecat config`).
    pub fn set_configs(&self, configs: Vec<protocol::ConfigRecord>) {
        self.statics().configs = configs;
    }

    /// Record the application time (ns since 2000); an atomic store, fine in the cycle.
    pub fn set_app_time(&self, ns: u64) {
        self.shared.app_time.store(ns, Ordering::Relaxed);
    }

    fn statics(&self) -> std::sync::MutexGuard<'_, Statics> {
        self.shared
            .statics
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Bind `path`, replacing a stale socket file.
fn bind(path: &Path, index: u32) -> Result<UnixListener> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(Error::Invalid(format!(
                "another process already serves master {index} at {}; release that master first",
                path.display()
            )));
        }
        let _ = std::fs::remove_file(path);
    }
    let l = UnixListener::bind(path)
        .map_err(|e| Error::Invalid(format!("cannot create {}: {e}", path.display())))?;
    super::restrict(path, 0o660, 0o600);
    Ok(l)
}

/// About once a second while the application cycles: ask for its live figures and, once
/// they came (a later pass; this thread never waits for them), record the frame counters.
fn sample_rates(sh: &Shared, asked: &mut Option<(Instant, u64)>) {
    let active = sh.statics.lock().is_ok_and(|st| st.active);
    let Ok(live) = sh.live.try_lock() else {
        return;
    };
    match *asked {
        Some((_, seq)) if live.seq != seq => {
            let (tx, rx, lost, _) = live.frames;
            if let Ok(mut h) = sh.history.lock() {
                h.push(Instant::now(), tx, rx, lost);
            }
            *asked = None;
        }
        Some((at, _)) if at.elapsed() < Duration::from_secs(3) => {}
        _ if active && asked.is_none_or(|(at, _)| at.elapsed() >= Duration::from_secs(1)) => {
            *asked = Some((Instant::now(), live.seq));
            sh.wanted.store(true, Ordering::Release);
        }
        _ => {}
    }
}

fn accept_loop(listener: UnixListener, shared: Arc<Shared>, stop: Arc<AtomicBool>) {
    let mut asked = None;
    let mut last_sample = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if asked.is_some() || last_sample.elapsed() >= Duration::from_secs(1) {
            if asked.is_none() {
                last_sample = Instant::now();
            }
            sample_rates(&shared, &mut asked);
        }
        match listener.accept() {
            Ok((conn, _)) => {
                let sh = shared.clone();
                let _ = std::thread::Builder::new()
                    .name("ecat-control-conn".into())
                    .spawn(move || serve_conn(conn, sh));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn serve_conn(conn: UnixStream, shared: Arc<Shared>) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(mut out) = conn.try_clone() else {
        return;
    };
    let mut input = BufReader::new(conn);
    loop {
        let mut line = String::new();
        match (&mut input).take(MAX_LINE).read_line(&mut line) {
            Ok(n) if n > 0 && line.ends_with('\n') => {}
            _ => return,
        }
        let reply = match serde_json::from_str::<RequestLine>(&line) {
            Ok(r) if r.v != VERSION => Err(format!(
                "the application speaks control protocol {VERSION}, this tool {}; use the ecat tool of the same release",
                r.v
            )),
            Ok(r) => answer(&shared, r.req),
            Err(e) => Err(format!("the request cannot be read ({e})")),
        };
        let (ok, err) = match reply {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e)),
        };
        let Ok(mut text) = serde_json::to_string(&ReplyLine {
            v: VERSION,
            ok,
            err,
        }) else {
            return;
        };
        text.push('\n');
        if out.write_all(text.as_bytes()).is_err() {
            return;
        }
    }
}

type Answer = std::result::Result<Reply, String>;

fn answer(sh: &Shared, req: Request) -> Answer {
    if let Some(a) = super::idle::answer(sh, &req) {
        return a;
    }
    match req {
        Request::Hello => Ok(Reply::Hello(protocol::HelloRecord {
            master: sh.index,
            link: sh.link.clone(),
            pid: std::process::id(),
            phase: phase(sh).to_string(),
        })),
        Request::Slaves => {
            let live = fresh_live(sh)?;
            let st = sh.statics.lock().map_err(|_| poisoned())?;
            let mut subs = st.subdevices.clone();
            if let Some(live) = live {
                for (s, l) in subs.iter_mut().zip(&live.subs) {
                    s.al = (l.status, l.code);
                    s.lost = l.lost;
                }
            }
            Ok(Reply::Slaves(subs))
        }
        Request::Sdo { position, op } => {
            mailbox(sh, position, crate::mailbox::sdo::SdoOp::from(op).into())
        }
        Request::EoeIp { position, set } => mailbox(sh, position, eoe_ip_op(&set)?.into()),
        Request::RegRead {
            position,
            address,
            len,
        } => {
            check_span(address, len)?;
            let data = vec![0; len];
            let (kind, _) = job(
                sh,
                JobKind::Read {
                    position,
                    address,
                    data,
                },
            )?;
            match kind {
                JobKind::Read { data, .. } => Ok(Reply::Data(data)),
                _ => Ok(Reply::Done),
            }
        }
        Request::RegWrite {
            position,
            address,
            data,
        } => check_span(address, data.len())
            .and_then(|()| {
                job(
                    sh,
                    JobKind::Write {
                        position,
                        address,
                        data,
                    },
                )
            })
            .map(|_| Reply::Done),
        Request::States { positions, state } => {
            let state = AlState::from_bits(state)
                .ok_or_else(|| format!("0x{state:02x} is not an EtherCAT state"))?;
            job(sh, JobKind::State { positions, state }).map(|_| Reply::Done)
        }
        Request::Domains => {
            let live = fresh_live(sh)?;
            let st = sh.statics.lock().map_err(|_| poisoned())?;
            let mut doms = st.domains.clone();
            if let Some(live) = live {
                for (d, l) in doms.iter_mut().zip(&live.domains) {
                    d.image.clone_from(&l.0);
                    d.wkc = (l.1, l.2);
                    d.state = l.3.to_string();
                }
            }
            Ok(Reply::Domains(doms))
        }
        Request::Pdos => {
            let st = sh.statics.lock().map_err(|_| poisoned())?;
            if !st.active {
                return Err(not_active(sh));
            }
            Ok(Reply::Pdos(st.pdos.clone()))
        }
        Request::Master => master(sh),
        Request::Configs => {
            let st = sh.statics.lock().map_err(|_| poisoned())?;
            Ok(Reply::Configs(st.configs.clone()))
        }
    }
}

/// A register access must fit one datagram and the ESC's 64 KiB address space.
/// The EoE request of a [`Request::EoeIp`]: set-IP with the parameters given, else get-IP.
pub(super) fn eoe_ip_op(
    set: &Option<Vec<u8>>,
) -> std::result::Result<crate::mailbox::eoe::EoeOp, String> {
    use crate::mailbox::eoe::EoeOp;
    Ok(match set {
        Some(b) => EoeOp::SetIp {
            port: 0,
            params: ecat_wire::eoe::IpParams::parse(b).map_err(|e| {
                format!("the IP parameters sent cannot be decoded ({e}); use the ecat tool of the same release")
            })?,
        },
        None => EoeOp::GetIp { port: 0 },
    })
}

/// Carry `op` through the application's mailbox service and wait for its result.
fn mailbox(sh: &Shared, position: usize, op: crate::mailbox::op::MailboxOp) -> Answer {
    let client = active(sh, |st| st.sdo.clone())?;
    let what = op.describe();
    let pending = client.submit(position, op).map_err(|e| e.to_string())?;
    match pending.wait(REQUEST_TIMEOUT) {
        Some(Ok(d)) => Ok(Reply::Data(d)),
        Some(Err(e)) => Err(e.to_string()),
        None => Err(format!(
            "the application did not carry the {what} within {} s (is it cycling?)",
            REQUEST_TIMEOUT.as_secs()
        )),
    }
}

pub(super) fn check_span(address: u16, len: usize) -> std::result::Result<(), String> {
    if len == 0 || len > MAX_REGISTER_BYTES {
        return Err(format!(
            "a register access through the application takes 1 to {MAX_REGISTER_BYTES} bytes, not {len}; access larger areas in parts"
        ));
    }
    if address as usize + len > 0x1_0000 {
        return Err(format!(
            "0x{address:04x} + {len} bytes runs past the 64 KiB ESC address space"
        ));
    }
    Ok(())
}

fn poisoned() -> String {
    "the application's control state is unusable (a thread panicked)".into()
}

fn phase(sh: &Shared) -> &'static str {
    match sh.statics.lock() {
        Ok(st) if st.active => "Operation",
        _ => "Idle",
    }
}

fn not_active(sh: &Shared) -> String {
    format!(
        "master {} is in its configuration phase (not activated); bus access through the application starts with its cycle",
        sh.index
    )
}

fn active<T>(sh: &Shared, f: impl FnOnce(&Statics) -> Option<T>) -> std::result::Result<T, String> {
    let st = sh.statics.lock().map_err(|_| poisoned())?;
    f(&st).ok_or_else(|| not_active(sh))
}

/// Ask the application for fresh live figures and wait for them; `None` in the idle phase.
fn fresh_live(sh: &Shared) -> std::result::Result<Option<LiveCopy>, String> {
    if phase(sh) != "Operation" {
        return Ok(None);
    }
    let live = sh.live.lock().map_err(|_| poisoned())?;
    let seq = live.seq;
    sh.wanted.store(true, Ordering::Release);
    let (live, _) = sh
        .fresh
        .wait_timeout_while(live, REQUEST_TIMEOUT, |l| l.seq == seq)
        .map_err(|_| poisoned())?;
    if live.seq == seq {
        return Err(format!(
            "the application did not cycle within {} s, so its live state cannot be read",
            REQUEST_TIMEOUT.as_secs()
        ));
    }
    Ok(Some(LiveCopy {
        subs: live.subs.clone(),
        domains: live.domains.clone(),
        cycles: live.cycles,
        frames: live.frames,
        timeouts: live.timeouts,
        dc_time: live.dc_time,
        sync_monitor: live.sync_monitor,
    }))
}

/// A copy of [`Live`] taken on the server's thread.
struct LiveCopy {
    subs: Vec<shared::LiveSub>,
    domains: Vec<(Vec<u8>, u32, u32, &'static str)>,
    cycles: u64,
    frames: (u64, u64, u64, u64),
    timeouts: u64,
    dc_time: Option<u64>,
    sync_monitor: Option<u32>,
}

/// Hand a job to the application and wait for it.
fn job(sh: &Shared, kind: JobKind) -> std::result::Result<shared::JobResult, String> {
    let tx = active(sh, |st| st.jobs.clone())?;
    let reply = Arc::new(JobReply::default());
    // Counted before it is sent, so the application never takes more than were counted.
    sh.queued.fetch_add(1, Ordering::Release);
    tx.try_send(Job {
        kind,
        reply: reply.clone(),
    })
    .map_err(|_| {
        sh.queued.fetch_sub(1, Ordering::Relaxed);
        "the application's control queue is full or its runtime stopped; try again".to_string()
    })?;
    let slot = reply.slot.lock().map_err(|_| poisoned())?;
    let (mut slot, _) = reply
        .done
        .wait_timeout_while(slot, REQUEST_TIMEOUT, |s| s.is_none())
        .map_err(|_| poisoned())?;
    let Some((kind, wkc)) = slot.take() else {
        return Err(format!(
            "the application did not carry the request within {} s (is it cycling?)",
            REQUEST_TIMEOUT.as_secs()
        ));
    };
    let position = match &kind {
        JobKind::Read { position, .. } | JobKind::Write { position, .. } => *position,
        JobKind::State { .. } => return Ok((kind, wkc)),
    };
    match wkc {
        None => Err(format!(
            "there is no SubDevice at position {position} on the application's bus"
        )),
        Some(1) => Ok((kind, wkc)),
        Some(shared::ENGINE_FULL) => {
            Err("the application's acyclic frame engine is full just now; try again".into())
        }
        Some(w) => Err(format!(
            "SubDevice {position} did not answer the register access (working counter {w}, expected 1)"
        )),
    }
}

fn master(sh: &Shared) -> Answer {
    let live = fresh_live(sh)?;
    let st = sh.statics.lock().map_err(|_| poisoned())?;
    let mut m = protocol::MasterRecord {
        index: sh.index,
        phase: if st.active { "Operation" } else { "Idle" }.into(),
        link: sh.link.clone(),
        mac: st.mac,
        link_up: true,
        slaves: st.subdevices.len(),
        cyclic_layout: st.cyclic_layout,
        uptime_s: sh.started.elapsed().as_secs_f64(),
        dc_reference: st.dc_reference,
        app_time_ns: sh.app_time.load(Ordering::Relaxed),
        ..Default::default()
    };
    m.rates = sh.history.lock().map(|h| h.rates()).unwrap_or_default();
    if let Some(l) = live {
        m.cycles = l.cycles;
        m.frames = l.frames;
        m.timeouts = l.timeouts;
        m.dc_time_ns = l.dc_time;
        m.sync_monitor_ns = l.sync_monitor;
    }
    Ok(Reply::Master(m))
}
