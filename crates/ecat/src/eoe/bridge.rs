//! The TAP ↔ EoE bridge: one ordinary (non real-time) thread for all EoE SubDevices of a
//! runtime.
//!
//! Host → SubDevice: a frame read from a TAP interface is submitted as an EoE frame request
//! through the runtime's [`MailboxClient`]; the mailbox service sends its fragments in the
//! acyclic frames, one SubDevice transfer at a time, so process data never waits. At most
//! [`IN_FLIGHT`] frames per SubDevice are queued; beyond that the bridge stops reading the
//! TAP and the kernel's queue holds (or drops) them, like a busy NIC.
//!
//! SubDevice → host: the runtime's unsolicited-message sink feeds the [`EoeHub`], whose ring
//! the thread empties into the TAP every millisecond at most.
//!
//! Every second the thread writes the counters and rates to the statistics file
//! ([`super::stats`]) that `ecat eoe` reads.

use super::hub::{interface_name, EoeHub, SLOT};
use super::stats::StatsFile;
use super::tap::Tap;
use crate::error::{Error, Result};
use crate::mailbox::eoe::EoeOp;
use crate::mailbox::service::{MailboxClient, Pending};
use crate::runtime::Runtime;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// EoE frames queued per SubDevice before the bridge stops reading its TAP.
pub const IN_FLIGHT: usize = 16;

/// SII mailbox protocol bit of EoE.
pub const EOE_BIT: u16 = 0x02;

/// A running bridge; stops (and removes the interfaces) when dropped.
#[derive(Debug)]
pub struct EoeBridge {
    hub: Arc<EoeHub>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EoeBridge {
    /// Create a TAP interface `eoe<master>s<position>` for every SubDevice of `rt` that serves
    /// EoE, hand the runtime's EoE messages to them and start the bridge thread.
    /// Fails with one sentence if no SubDevice serves EoE or an interface cannot be created
    /// (naming the missing capability); the runtime is unchanged then.
    pub fn start(rt: &mut Runtime, master: u32) -> Result<EoeBridge> {
        let svc = rt.mailbox_service_mut();
        let ports: Vec<_> = svc
            .targets()
            .iter()
            .filter(|t| t.area.is_some() && t.protocols & EOE_BIT != 0)
            .map(|t| {
                let name = interface_name(master, t.who.position as usize);
                (t.who.clone(), name)
            })
            .collect();
        if ports.is_empty() {
            return Err(Error::Invalid(
                "no SubDevice on this bus serves EoE (no EoE bit in their SII mailbox protocols); nothing to bridge".into(),
            ));
        }
        let taps = ports
            .iter()
            .map(|(_, name)| Tap::open(name))
            .collect::<Result<Vec<_>>>()?;
        let hub = Arc::new(EoeHub::new(ports));
        svc.set_unsolicited_sink(hub.sink());
        let client = rt.mailbox_client();
        let stop = Arc::new(AtomicBool::new(false));
        let (h, s) = (hub.clone(), stop.clone());
        let stats = StatsFile::new(master);
        let thread = std::thread::Builder::new()
            .name("ecat-eoe".into())
            .spawn(move || bridge(&h, &taps, &client, &s, stats))
            .map_err(|e| Error::Invalid(format!("cannot start the EoE bridge thread: {e}")))?;
        Ok(EoeBridge {
            hub,
            stop,
            thread: Some(thread),
        })
    }

    /// The ports and their counters.
    pub fn hub(&self) -> &Arc<EoeHub> {
        &self.hub
    }

    /// One line saying what was created, e.g. `EoE: TAP eoe0s2 for SubDevice 2 (...)`.
    pub fn describe(&self) -> String {
        let v: Vec<String> = self
            .hub
            .ports()
            .iter()
            .map(|p| format!("{} for {}", p.name, p.who))
            .collect();
        format!("EoE: TAP interfaces {}", v.join(", "))
    }
}

impl Drop for EoeBridge {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Sent {
    pending: Pending,
    bytes: usize,
}

fn bridge(
    hub: &EoeHub,
    taps: &[Tap],
    client: &MailboxClient,
    stop: &AtomicBool,
    mut stats: StatsFile,
) {
    let mut buf = vec![0u8; SLOT.max(2048)];
    let mut sent: Vec<VecDeque<Sent>> = taps.iter().map(|_| VecDeque::new()).collect();
    let mut frame_no = vec![0u8; taps.len()];
    let mut fds: Vec<libc::pollfd> = taps
        .iter()
        .map(|t| libc::pollfd {
            fd: t.fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let mut next_stats = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        for (f, s) in fds.iter_mut().zip(&sent) {
            // Stop reading a TAP whose SubDevice has enough queued.
            f.events = if s.len() < IN_FLIGHT { libc::POLLIN } else { 0 };
        }
        // SAFETY: `fds` is a valid array of pollfd for the call's duration.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 1) };
        for (i, tap) in taps.iter().enumerate() {
            let position = hub.ports()[i].position;
            while sent[i].len() < IN_FLIGHT {
                let n = match tap.read(&mut buf) {
                    Ok(n) if n > 0 => n,
                    _ => break,
                };
                let op = EoeOp::Frame {
                    port: 0,
                    frame_no: frame_no[i],
                    frame: buf[..n].to_vec(),
                };
                frame_no[i] = (frame_no[i] + 1) & 0x0F;
                match client.submit(position, op) {
                    Ok(pending) => sent[i].push_back(Sent { pending, bytes: n }),
                    Err(_) => hub.count_tx(i, n, false),
                }
            }
            while let Some(s) = sent[i].front() {
                let Some(r) = s.pending.poll() else { break };
                hub.count_tx(i, s.bytes, r.is_ok());
                sent[i].pop_front();
            }
            while let Some(n) = hub.pop_rx(i, &mut buf) {
                let _ = tap.write(&buf[..n]);
            }
        }
        if Instant::now() >= next_stats {
            next_stats += Duration::from_secs(1);
            stats.write(hub);
        }
    }
    stats.remove();
}
