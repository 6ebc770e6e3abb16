//! The cyclic frames of a real activation, for the examples that replay them into the
//! simulator (`pipeline_rt`, `sim_instructions`): `sim:NET` brought to OP with distributed
//! clocks as `ecat run` sets them up, one cycle's frames recorded, and the network as it was
//! right after them.

use ecat::dc::setup::DcOptions;
use ecat::dc::{DcMode, DcRuntime};
use ecat::error::Result;
use ecat::link::sim::SimLink;
use ecat::link::{Link, LinkCounters};
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A simulated link that keeps a copy of every frame sent while `recording` is set.
struct Recorder {
    inner: SimLink,
    frames: Arc<Mutex<Option<Vec<Vec<u8>>>>>,
}

impl Link for Recorder {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        if let Some(v) = self.frames.lock().unwrap().as_mut() {
            v.push(frame.to_vec());
        }
        self.inner.send(frame)
    }
    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        self.inner.recv(buf, deadline)
    }
    fn sim_network(&mut self) -> Option<&mut Network> {
        Some(self.inner.network_mut())
    }
    fn mac(&self) -> [u8; 6] {
        self.inner.mac()
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn counters(&self) -> LinkCounters {
        self.inner.counters()
    }
}

/// One cycle of `net_name` in OP: its frames, the network right after them, and the instant
/// the simulated link's clock started (replays go on from there).
pub fn record_cycle(net_name: &str) -> (Vec<Vec<u8>>, Network, Instant) {
    let frames = Arc::new(Mutex::new(None));
    let epoch = Instant::now();
    let link = SimLink::with_network(
        Network::open(net_name).expect("network"),
        format!("sim:{net_name}"),
        net_name.to_string(),
    );
    let mut md = MainDevice::with_link(Box::new(Recorder {
        inner: link,
        frames: frames.clone(),
    }));
    md.scan().expect("scan");
    // With distributed clocks, as `ecat run` sets them up by default.
    let dc = md
        .configure_dc(DcOptions::default())
        .expect("DC setup")
        .map(|setup| DcRuntime {
            setup,
            mode: DcMode::MasterFollowsReference,
            cycle_ns: 1_000_000,
            shift_ns: 0,
        });
    let mut rt = md
        .activate(Activation {
            dc,
            ..Activation::default()
        })
        .expect("activate");
    rt.run_until_state(AlState::Op, 1_000_000, 20_000)
        .expect("OP");
    for _ in 0..50 {
        rt.tx_rx(1_000_000).expect("cycle");
    }
    *frames.lock().unwrap() = Some(Vec::new());
    rt.tx_rx(1_000_000).expect("cycle");
    let cycle_frames = frames.lock().unwrap().take().unwrap_or_default();
    let net = rt
        .link_mut()
        .sim_network()
        .expect("simulated network")
        .clone();
    (cycle_frames, net, epoch)
}
