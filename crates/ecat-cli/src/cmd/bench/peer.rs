//! The far end of the veth pair: a thread inside the namespace that echoes every echo frame
//! (EtherType 0x88B5, see `packet`) unchanged, the floor: no EtherCAT processing at all, and
//! answers EtherCAT frames with the simulated network (when it has one). One socket bound to
//! every EtherType carries both, so an ecat row and its floor meet the same thread.
//!
//! Pinned to the other CPU so the measured thread has its core to itself: by default under
//! SCHED_FIFO receiving in Block mode; with `--peer busy` busy-polling under SCHED_OTHER
//! (always ready, like real SubDevices that answer in microseconds, without the wake-up tail
//! of a sleeping thread; SCHED_OTHER so RT throttling never stalls it). With builds running
//! on its CPU the busy peer loses frames: 60-70 % of them at a load average of 12-17, at nice
//! 0 as at nice -20. Every row starts a fresh peer (a fresh network: every SubDevice in INIT,
//! counters at zero).

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

/// A running peer; stops when dropped.
pub struct Peer {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Peer {
    /// Start the peer on `v.far` inside the namespace; returns once its socket is open.
    pub fn start(v: &VethNs, kind: PeerKind) -> Result<Peer, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel::<Result<(), String>>();
        let stop2 = stop.clone();
        let (ns, far) = (v.ns.clone(), v.far.clone());
        let thread = std::thread::Builder::new()
            .name("bench-peer".into())
            .spawn(move || {
                if let Err(e) = enter(&ns) {
                    let _ = tx.send(Err(e));
                    return;
                }
                pin_thread(PEER_CPU);
                let busy = PEER_BUSY.load(Ordering::Relaxed);
                if !busy {
                    fifo(PEER_PRIO);
                }
                let mut net = match &kind {
                    PeerKind::Echo => None,
                    PeerKind::Sim(n) => match Network::open(n) {
                        Ok(net) => Some(net),
                        Err(e) => {
                            let _ = tx.send(Err(format!("simulated network {n}: {e}")));
                            return;
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
                        return;
                    }
                };
                let _ = tx.send(Ok(()));
                let epoch = Instant::now();
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
            })
            .map_err(|e| format!("cannot start the peer thread: {e}"))?;
        let mut p = Peer {
            stop,
            thread: Some(thread),
        };
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(Ok(())) => Ok(p),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                p.stop();
                Err("the peer thread did not start".into())
            }
        }
    }

    /// Stop and join the thread.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.stop();
    }
}
