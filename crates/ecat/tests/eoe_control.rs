//! `ecat ip -m N` underneath: EoE IP parameters set and read back through the control socket
//! of a running Rust runtime (`sim:mbx` cycling in OP, master 43). The set-IP-parameter and
//! get-IP-parameter requests ride in the application's acyclic frames; a SubDevice without
//! EoE is refused with a sentence naming it and the request.

use ecat::clock::VirtualTime;
use ecat::control::Client;
use ecat::link::sim::SimLink;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use ecat_wire::eoe::{DnsName, IpParams};
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[test]
fn ip_parameters_through_the_control_socket() {
    let dir = std::env::temp_dir().join(format!("ecat-eoe-control-{}", std::process::id()));
    // Set before any other thread of this test binary reads the environment.
    std::env::set_var("ECAT_CONTROL_DIR", &dir);
    let vt = VirtualTime::new();
    let link = SimLink::with_network(
        Network::open("mbx").unwrap(),
        "sim:mbx".into(),
        "mbx".into(),
    )
    .on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let eoe = md
        .subdevices()
        .iter()
        .position(|s| s.mailbox.protocols & 0x02 != 0)
        .expect("sim:mbx has an EoE SubDevice");
    let plain = md
        .subdevices()
        .iter()
        .position(|s| s.mailbox.protocols & 0x02 == 0)
        .expect("sim:mbx has a SubDevice without EoE");
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    let _server = rt.serve_control(43).unwrap();

    let set = IpParams {
        ip: Some(Ipv4Addr::new(192, 168, 9, 3)),
        subnet: Some(Ipv4Addr::new(255, 255, 255, 0)),
        gateway: Some(Ipv4Addr::new(192, 168, 9, 1)),
        dns_name: Some(DnsName::new("drive9").unwrap()),
        ..Default::default()
    };
    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    let client = std::thread::spawn(move || {
        let r = (|| -> ecat::Result<(IpParams, String)> {
            let mut c = Client::connect(43)?;
            assert_eq!(c.eoe_ip(eoe, Some(&set))?, None, "a set answers nothing");
            let got = c.eoe_ip(eoe, None)?.expect("a read answers the parameters");
            let refused = c.eoe_ip(plain, None).unwrap_err().to_string();
            Ok((got, refused))
        })();
        d2.store(true, Ordering::SeqCst);
        r
    });
    let mut cycles = 0u64;
    while !done.load(Ordering::SeqCst) && cycles < 200_000 {
        vt.advance(1_000_000);
        rt.receive().unwrap();
        rt.process();
        rt.send().unwrap();
        if rt.wait_return(rt.now() + 1_000_000).unwrap() {
            rt.prepare_acyclic();
        }
        cycles += 1;
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    let (got, refused) = client.join().unwrap().unwrap();
    assert_eq!(got.ip, set.ip);
    assert_eq!(got.subnet, set.subnet);
    assert_eq!(got.gateway, set.gateway);
    assert_eq!(
        got.dns_name
            .and_then(|n| n.as_str().map(String::from))
            .as_deref(),
        Some("drive9")
    );
    assert!(
        refused.contains("cannot serve the EoE get IP parameter request"),
        "{refused}"
    );
    assert!(
        rt.supervisor()
            .states()
            .nth(eoe)
            .is_some_and(|s| s.running && !s.lost),
        "the EoE SubDevice stays in OP"
    );
}
