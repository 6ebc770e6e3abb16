//! The far end of the veth pair: a thread inside the namespace that echoes every echo frame
//! (EtherType 0x88B5, see `packet`) unchanged, the floor: no EtherCAT processing at all, and
//! answers EtherCAT frames with the simulated network (when it has one). One socket bound to
//! every EtherType carries both, so an ecat row and its floor meet the same thread.
//!
//! Pinned to the other CPU so the measured thread has its core to itself: by default under
//! SCHED_FIFO receiving in Block mode; with `--peer busy` busy-polling under SCHED_OTHER
//! (always ready, like real SubDevices that answer in microseconds, without the wake-up tail
//! of a sleeping thread; SCHED_OTHER so RT throttling never stalls it). A spinning
//! SCHED_OTHER thread keeps its CPU only if the scheduler gives it most of it: Linux first
//! shares CPU time between sessions (autogroups), so with builds running in other sessions
//! the busy peer got one session's share and lost 60-70 % of its frames (load average 12-17),
//! whatever its own nice value. While a busy peer runs, [`SessionBoost`] therefore sets the
//! bench's autogroup to nice -20 (and the thread itself to nice -20, which is what counts
//! without autogroups); it lost 0.2 % then. Every row starts a fresh peer (a fresh network:
//! every SubDevice in INIT, counters at zero). The peer counts how often the scheduler took
//! its CPU away while it could run (the thread's involuntary context switches, see
//! [`PeerStats`]): a busy peer that is preempted misses frames or answers them late, which
//! shows in the round trip of every row behind it.

use super::packet::{ethertype, socket, ETHERTYPE_FLOOR};
use ecat::link::raw::ETH_P_ALL;
use ecat::link::{Link, RecvMode};
use ecat::netns::{enter, fifo, pin_thread, VethNs};
use ecat_sim::Network;
use ecat_wire::ETHERTYPE_ETHERCAT;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// CPU of the measured threads (MainDevice, echo client, bare timer, ethercrab).
pub const MEASURED_CPU: usize = 0;
/// CPU of the peer (simulator or echo).
pub const PEER_CPU: usize = 1;
/// SCHED_FIFO priority of the measured threads.
pub const MEASURED_PRIO: i32 = 40;
/// SCHED_FIFO priority of the peer.
pub const PEER_PRIO: i32 = 50;

/// Nice value of the busy peer's thread and, while it runs, of the bench's autogroup.
pub const PEER_NICE: i32 = -20;

/// While alive, the process's autogroup (its session's share of CPU time against other
/// sessions, `/proc/self/autogroup`) runs at [`PEER_NICE`]; the previous nice value comes
/// back on drop. Without autogroups (or without the file) it does nothing.
pub struct SessionBoost {
    old: Option<i32>,
}

const AUTOGROUP: &str = "/proc/self/autogroup";

impl SessionBoost {
    /// Raise the autogroup's share.
    pub fn new() -> SessionBoost {
        // The file reads `/autogroup-19 nice 0`.
        let old = std::fs::read_to_string(AUTOGROUP)
            .ok()
            .and_then(|s| s.split_whitespace().last()?.parse().ok());
        let old = old.filter(|_| std::fs::write(AUTOGROUP, PEER_NICE.to_string()).is_ok());
        SessionBoost { old }
    }
}

impl Drop for SessionBoost {
    fn drop(&mut self) {
        if let Some(n) = self.old {
            let _ = std::fs::write(AUTOGROUP, n.to_string());
        }
    }
}

/// Set the calling thread's nice value (best effort).
fn nice_thread(nice: i32) {
    // SAFETY: plain syscalls; on Linux `setpriority(PRIO_PROCESS, tid)` sets one thread.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, nice);
    }
}

/// Busy-polling peer (`--peer busy`), set once before the rows run.
pub static PEER_BUSY: AtomicBool = AtomicBool::new(false);

/// What the peer answers.
#[derive(Debug, Clone)]
pub enum PeerKind {
    /// Echo frames only.
    Echo,
    /// Echo frames, and EtherCAT frames processed by a simulated network (preset name or
    /// file) and sent back.
    Sim(String),
}

/// What the peer thread went through while it served one row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeerStats {
    /// Times the scheduler preempted the thread (involuntary context switches).
    pub preempted: u64,
    /// How long it served, ns.
    pub ns: u64,
}

/// The calling thread's involuntary context switches so far (0 if unreadable).
fn involuntary_switches() -> u64 {
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_THREAD, &mut u) == 0 {
            u.ru_nivcsw.max(0) as u64
        } else {
            0
        }
    }
}

/// A running peer; stops when dropped.
pub struct Peer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<PeerStats>>,
    _boost: Option<SessionBoost>,
}

impl Peer {
    /// Start the peer on `v.far` inside the namespace; returns once its socket is open.
    pub fn start(v: &VethNs, kind: PeerKind) -> Result<Peer, String> {
        let boost = PEER_BUSY.load(Ordering::Relaxed).then(SessionBoost::new);
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel::<Result<(), String>>();
        let stop2 = stop.clone();
        let (ns, far) = (v.ns.clone(), v.far.clone());
        let thread = std::thread::Builder::new()
            .name("bench-peer".into())
            .spawn(move || {
                if let Err(e) = enter(&ns) {
                    let _ = tx.send(Err(e));
                    return PeerStats::default();
                }
                pin_thread(PEER_CPU);
                let busy = PEER_BUSY.load(Ordering::Relaxed);
                if busy {
                    nice_thread(PEER_NICE);
                } else {
                    fifo(PEER_PRIO);
                }
                let mut net = match &kind {
                    PeerKind::Echo => None,
                    PeerKind::Sim(n) => match Network::open(n) {
                        Ok(net) => Some(net),
                        Err(e) => {
                            let _ = tx.send(Err(format!("simulated network {n}: {e}")));
                            return PeerStats::default();
                        }
                    },
                };
                let mode = if busy {
                    RecvMode::BusyPoll
                } else {
                    RecvMode::Block
                };
                let mut link = match socket(&far, ETH_P_ALL, mode) {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = tx.send(Err(format!("peer socket: {e}")));
                        return PeerStats::default();
                    }
                };
                let _ = tx.send(Ok(()));
                let epoch = Instant::now();
                let switched = involuntary_switches();
                let mut buf = vec![0u8; 2048];
                while !stop2.load(Ordering::Relaxed) {
                    let deadline = Instant::now() + Duration::from_millis(20);
                    let Ok(Some(n)) = link.recv(&mut buf, Some(deadline)) else {
                        continue;
                    };
                    let answer = match (ethertype(&buf[..n]), net.as_mut()) {
                        (ETHERTYPE_FLOOR, _) => true,
                        (ETHERTYPE_ETHERCAT, Some(net)) => {
                            net.process_frame(&mut buf[..n], epoch.elapsed().as_nanos() as u64)
                        }
                        _ => false,
                    };
                    if answer {
                        let _ = link.send(&buf[..n]);
                    }
                }
                PeerStats {
                    preempted: involuntary_switches().saturating_sub(switched),
                    ns: epoch.elapsed().as_nanos() as u64,
                }
            })
            .map_err(|e| format!("cannot start the peer thread: {e}"))?;
        let mut p = Peer {
            stop,
            thread: Some(thread),
            _boost: boost,
        };
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => Ok(p),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                let _ = p.stop();
                Err("the peer thread did not start".into())
            }
        }
    }

    /// Stop and join the thread; what it went through (`None` when already stopped or it
    /// panicked).
    pub fn stop(&mut self) -> Option<PeerStats> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take()?.join().ok()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
