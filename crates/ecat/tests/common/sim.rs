//! A MainDevice on the in-process simulator, scanned, on virtual time or real time.

use ecat::clock::VirtualTime;
use ecat::link::sim::SimLink;
use ecat::MainDevice;
use ecat_sim::Network;

/// Scan the preset or network file `net`; on virtual time when `vt` is given.
pub fn scanned(net: &str, vt: Option<&VirtualTime>) -> MainDevice {
    let mut link = SimLink::with_network(
        Network::open(net).unwrap(),
        format!("sim:{net}"),
        net.into(),
    );
    if let Some(vt) = vt {
        link = link.on_virtual_time(vt.clone());
    }
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    md
}
