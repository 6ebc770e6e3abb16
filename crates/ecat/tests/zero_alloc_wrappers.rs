//! The link wrappers keep the cyclic path allocation-free: 10,000 cycles through a capture
//! (pcap and pcapng, flushing its buffer to the file several times) on top of fault injection
//! (duplicated returns) on the in-process simulated network, under a counting allocator.

use ecat::clock::VirtualTime;
use ecat::link::capture::CaptureLink;
use ecat::link::faults::FaultLink;
use ecat::link::sim::SimLink;
use ecat::link::FaultSpec;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;

mod common;
use common::counting::{self, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn capture_and_faults_allocate_nothing() {
    for name in ["zero-alloc.pcap", "zero-alloc.pcapng"] {
        let path = std::env::temp_dir().join(format!("ecat-{}-{name}", std::process::id()));
        let vt = VirtualTime::new();
        let sim = SimLink::with_network(Network::open("io").unwrap(), "sim:io".into(), "io".into())
            .on_virtual_time(vt.clone());
        let faults = FaultLink::new(
            Box::new(sim),
            FaultSpec::parse("rx-dup=0.05,seed=3").unwrap(),
        );
        let stats = faults.stats();
        let cap = CaptureLink::new(Box::new(faults), &path).unwrap();
        let mut md = MainDevice::with_link(Box::new(cap));
        md.scan().unwrap();
        let mut rt = md.activate(Activation::default()).unwrap();
        rt.run_until_state(AlState::Op, 1_000_000, 2_000).unwrap();
        for _ in 0..100 {
            vt.advance(1_000_000);
            rt.tx_rx(1_000_000).unwrap();
        }
        counting::start();
        for c in 0..10_000u32 {
            vt.advance(1_000_000);
            rt.receive().unwrap();
            rt.process();
            rt.domain_mut(0).outputs_mut()[0] = c as u8;
            rt.send().unwrap();
            rt.wait_return(rt.now() + 1_000_000).unwrap();
        }
        let n = counting::stop();
        assert_eq!(n, 0, "{name}: the wrapped cyclic path allocated {n} times");
        let dups = stats.duplicated[1].load(std::sync::atomic::Ordering::Relaxed);
        assert!(dups > 300, "{dups}");
        let (cy, _, _) = rt.counters();
        drop(rt); // closes and flushes the capture
        let bytes = std::fs::read(&path).unwrap();
        let report = ecat::analyze::analyze_bytes(&bytes).unwrap();
        let c = report.cyclic.as_ref().expect("cyclic frames");
        assert_eq!(c.cycles, cy.cycles, "{}", report.text());
        assert_eq!(c.tx_frames, cy.frames_sent);
        assert_eq!(c.lost, cy.frames_lost);
        assert_eq!(c.repeated, cy.frames_duplicated, "{}", report.text());
        // Virtual time: every cycle exactly 1 ms apart on the wire.
        assert_eq!(c.interval.p50, 1_000_000, "{}", report.text());
        let _ = std::fs::remove_file(&path);
    }
}
