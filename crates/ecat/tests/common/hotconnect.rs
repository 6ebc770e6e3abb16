//! A bus with a hot-connect group for the tests: the fixed part (EK1100, EL2008, EL1018,
//! EL4132) at positions 0-3 and a three-SubDevice group (EK1100 with alias 0x2000, EL2008,
//! EL1018) behind the first EK1100's port 2 at positions 4-6.

use ecat::clock::VirtualTime;
use ecat::dc::setup::DcOptions;
use ecat::dc::{DcMode, DcRuntime};
use ecat::hotconnect::{GroupHead, HotConnectGroup};
use ecat::link::sim::SimLink;
use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;

pub const MS: u64 = 1_000_000;

/// The network file text.
pub const NET: &str = "[[subdevice]]\nmodel = \"EK1100\"\n\
    [[subdevice]]\nmodel = \"EL2008\"\n[[subdevice]]\nmodel = \"EL1018\"\n\
    [[subdevice]]\nmodel = \"EL4132\"\n\
    [[subdevice]]\nmodel = \"EK1100\"\nalias = 8192\nparent = 0\nport = 2\n\
    [[subdevice]]\nmodel = \"EL2008\"\n[[subdevice]]\nmodel = \"EL1018\"\n";

/// SubDevices in the fixed part (positions 0..FIXED).
pub const FIXED: usize = 4;
/// Position of the group head (also its ESC index in the simulator).
pub const HEAD: usize = 4;

/// The group as the configuration declares it.
pub fn group() -> HotConnectGroup {
    HotConnectGroup::new("tool", GroupHead::Alias(0x2000), 3)
}

/// Scan, activate with the group (and distributed clocks with `dc`, the reference following
/// the MainDevice) and bring everything to OP on virtual time.
pub fn bring_up(net: Network, dc: bool) -> (Runtime, VirtualTime) {
    bring_up_with(net, dc, group())
}

/// [`bring_up`] with the group `g`.
pub fn bring_up_with(net: Network, dc: bool, g: HotConnectGroup) -> (Runtime, VirtualTime) {
    let (mut md, vt) = open(net);
    md.scan().unwrap();
    let mut rt = activate(md, dc, g);
    rt.run_until_state(AlState::Op, MS, 5_000).unwrap();
    (rt, vt)
}

/// A MainDevice on `net` on virtual time (not scanned yet).
pub fn open(net: Network) -> (MainDevice, VirtualTime) {
    let vt = VirtualTime::new();
    vt.advance(1_000_000_000);
    let link = SimLink::with_network(net, "sim:hc".into(), "hc".into()).on_virtual_time(vt.clone());
    (MainDevice::with_link(Box::new(link)), vt)
}

/// Activate the scanned `md` with the group `g` (and distributed clocks with `dc`, the
/// reference following the MainDevice), without waiting for any state.
pub fn activate(mut md: MainDevice, dc: bool, g: HotConnectGroup) -> Runtime {
    let dc = dc.then(|| dc_following_master(&mut md));
    md.activate(Activation {
        hot_connect: vec![g],
        dc,
        ..Default::default()
    })
    .unwrap()
}

/// Set up distributed clocks on the scanned bus, the reference following the MainDevice
/// at a 1 ms cycle.
pub fn dc_following_master(md: &mut MainDevice) -> DcRuntime {
    let setup = md
        .configure_dc(DcOptions::default())
        .unwrap()
        .expect("the bus has DC SubDevices");
    DcRuntime {
        setup,
        mode: DcMode::ReferenceFollowsMaster,
        cycle_ns: MS,
        shift_ns: 0,
    }
}

/// The network of [`NET`].
pub fn network() -> Network {
    Network::from_toml_str(NET, "hotconnect", std::path::Path::new(".")).unwrap()
}

/// The simulated network behind the runtime.
pub fn net(rt: &mut Runtime) -> &mut Network {
    rt.link_mut().sim_network().expect("simulated link")
}
