//! The far end of the veth pair: a thread inside the namespace that either echoes every
//! EtherCAT frame unchanged (the floor: no EtherCAT processing at all) or answers it with the
//! simulated network. Pinned to the other CPU so the measured thread has its core to itself:
//! by default under SCHED_FIFO receiving in Block mode; with `--peer busy` busy-polling under
//! SCHED_OTHER (always ready, like real SubDevices that answer in microseconds, without the
//! wake-up tail of a sleeping thread; SCHED_OTHER so RT throttling never stalls it). Every row
//! starts a fresh peer (a fresh network: every SubDevice in INIT, counters at zero).

use ecat::link::raw::RawSocket;
use ecat::link::Link;
use ecat::netns::{enter, fifo, pin_thread, VethNs};
use ecat_sim::Network;
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

/// What the peer does with a frame.
#[derive(Debug, Clone)]
pub enum PeerKind {
    /// Send it back as it came.
    Echo,
    /// Process it with a simulated network (preset name or file) and send it back.
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
                let opts = ecat::link::LinkOptions {
                    recv_mode: if busy {
                        ecat::link::RecvMode::BusyPoll
                    } else {
                        ecat::link::RecvMode::Block
                    },
                    ..Default::default()
                };
                let mut link = match RawSocket::open_with(&far, opts) {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = tx.send(Err(format!("peer socket on {far}: {e}")));
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
                    let answer = match net.as_mut() {
                        None => true,
                        Some(net) => {
                            net.process_frame(&mut buf[..n], epoch.elapsed().as_nanos() as u64)
                        }
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
