//! How long the simulated network takes to process one cyclic frame (what a veth round trip
//! against `ecat sim` includes besides the wire): the cyclic frames of a real activation on
//! `sim:NET`, processed many times by a second copy of the network.
//!
//!     cargo run --release -p ecat --example sim_cost [NET] [N]

use ecat::link::sim::SimLink;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let net = args.get(1).cloned().unwrap_or_else(|| "io".into());
    let n: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    let link = SimLink::with_network(
        Network::open(&net).unwrap(),
        format!("sim:{net}"),
        net.clone(),
    );
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    // Time the whole cycle (send: template patch + simulated ring; receive: match and copy).
    let t = Instant::now();
    for _ in 0..n {
        rt.tx_rx(1_000_000).unwrap();
    }
    let per = t.elapsed().as_secs_f64() * 1e9 / n as f64;
    let (frames, bytes) = rt.frame_layout();
    println!("{net}: {per:.0} ns per cycle in-process ({frames} frame(s), {bytes} bytes): MainDevice + simulated ring");
}
