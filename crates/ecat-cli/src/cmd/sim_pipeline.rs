//! `ecat sim --threads 2`: the same wire loop as `ecat sim`, with the line split over two
//! threads (`ecat_sim::pipeline`).
//!
//! This thread receives, runs the first half of the ESCs and hands each frame on; the second
//! thread runs the other half and sends the frame back through a second handle on the same
//! socket. Each thread runs its ESCs' deferred firmware work when it has no frame waiting.
//! Only a plain line runs this way (no ring, faults or scheduled events); for anything else
//! the caller stays on one thread and says why.

use super::sim::spin_recv;
use ecat::link::raw::RawSocket;
use ecat::link::Link;
use ecat_sim::pipeline::{NotSplit, Pipeline, PipelineReport, PrepareFn, SendFn};
use ecat_sim::{FrameFate, Network};
use std::time::{Duration, Instant};

/// What a pipelined run answered.
pub struct Served {
    /// The whole network again, settled.
    pub net: Network,
    /// Frames handed to the second thread to send back.
    pub answered: u64,
    /// Frames the simulator dropped.
    pub dropped: u64,
    /// The second thread's report.
    pub report: PipelineReport,
}

/// Start the pipeline on `net` answering on `link`, its second thread pinned to `cpu` if
/// given; on a network that cannot be split the network comes back with the reason.
pub fn start(net: Network, link: &RawSocket, cpu: Option<usize>) -> Result<Pipeline, NotSplit> {
    let mut tx = match link.try_clone() {
        Ok(t) => t,
        Err(e) => {
            return Err(NotSplit {
                network: Box::new(net),
                reason: e.to_string(),
            })
        }
    };
    let send: SendFn =
        Box::new(move |f: &[u8]| tx.send(f).map_err(|e| std::io::Error::other(e.to_string())));
    let prepare = cpu.map(|c| -> PrepareFn {
        Box::new(move || {
            ecat::cycle::pin_current_thread(c, "the simulator's second thread")
                .map_err(|e| e.to_string())
        })
    });
    Pipeline::start_with(net, None, send, prepare)
}

/// Answer frames until SIGINT or SIGTERM, then stop the second thread. With `spin` this
/// thread polls the socket (the second one is woken ahead of each frame either way).
pub fn serve(
    mut p: Pipeline,
    link: &mut RawSocket,
    spin: bool,
    epoch: Instant,
) -> ecat::error::Result<Served> {
    let mut buf = vec![0u8; 2048];
    let (mut answered, mut dropped) = (0u64, 0u64);
    while !crate::signals::stopped() {
        let deadline = Instant::now() + Duration::from_millis(100);
        let waiting = match link.recv(&mut buf, None)? {
            Some(n) => Some(n),
            None => {
                // Idle: this half's firmware work runs now, then wait for the next frame.
                p.settle();
                if spin {
                    spin_recv(link, &mut buf, deadline)?
                } else {
                    link.recv(&mut buf, Some(deadline))?
                }
            }
        };
        let Some(n) = waiting else {
            continue;
        };
        let now = epoch.elapsed().as_nanos() as u64;
        match p.process(&buf[..n], now) {
            FrameFate::Returned { .. } => answered += 1,
            FrameFate::Dropped(_) => dropped += 1,
        }
    }
    let (net, report) = p.stop().map_err(ecat::error::Error::Invalid)?;
    Ok(Served {
        net,
        answered,
        dropped,
        report,
    })
}
