//! EoE through our MainDevice against the simulator's `mbx` network (SubDevice 2 serves EoE
//! with a small IP stack): the set-IP-parameter request blocking and in OP, then an ICMP echo
//! and a UDP echo of a frame larger than the mailbox (fragments both ways) in OP through the
//! mailbox service, received through the hub the TAP bridge uses, with the process data
//! complete in every cycle. EoE to a SubDevice without EoE is one sentence.

mod common;

use ecat::clock::VirtualTime;
use ecat::eoe::hub::{interface_name, SLOT};
use ecat::eoe::EoeHub;
use ecat::mailbox::eoe::EoeOp;
use ecat::mailbox::service::Pending;
use ecat::runtime::{Activation, Runtime};
use ecat_wire::al::AlState;
use ecat_wire::eoe::IpParams;
use std::net::Ipv4Addr;
use std::sync::Arc;

const HOST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const HOST_IP: [u8; 4] = [10, 231, 76, 1];
const DEV_IP: [u8; 4] = [10, 231, 76, 2];

fn set_ip(ip: [u8; 4]) -> EoeOp {
    EoeOp::SetIp {
        port: 0,
        params: IpParams {
            ip: Some(Ipv4Addr::from(ip)),
            subnet: Some(Ipv4Addr::new(255, 255, 255, 0)),
            ..Default::default()
        },
    }
}

fn checksum(b: &[u8]) -> u16 {
    let mut s: u32 = b
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}

/// An IPv4 frame to the device (broadcast MAC: no ARP needed) with `proto` and `l4`.
fn ipv4(proto: u8, l4: &[u8]) -> Vec<u8> {
    let mut f = vec![0xFF; 6];
    f.extend_from_slice(&HOST_MAC);
    f.extend_from_slice(&[0x08, 0x00]);
    let total = (20 + l4.len()) as u16;
    let mut ip = vec![0x45, 0, 0, 0, 0, 1, 0, 0, 64, proto, 0, 0];
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&HOST_IP);
    ip.extend_from_slice(&DEV_IP);
    let c = checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(l4);
    f
}

fn icmp_echo(payload: &[u8]) -> Vec<u8> {
    let mut m = vec![8, 0, 0, 0, 0x12, 0x34, 0, 1];
    m.extend_from_slice(payload);
    let c = checksum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    ipv4(1, &m)
}

fn udp_echo(payload: &[u8]) -> Vec<u8> {
    let len = (8 + payload.len()) as u16;
    let mut u = vec![0xC3, 0x50, 0, 7];
    u.extend_from_slice(&len.to_be_bytes());
    u.extend_from_slice(&[0, 0]); // no checksum
    u.extend_from_slice(payload);
    ipv4(17, &u)
}

/// Cycle until `done` or `limit` cycles, asserting complete process data in every cycle.
fn cycle_until(
    rt: &mut Runtime,
    vt: &VirtualTime,
    limit: u32,
    mut done: impl FnMut() -> bool,
) -> u32 {
    for c in 1..=limit {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
        assert_eq!(
            rt.domain(0).state(),
            ecat::domain::DomainState::Complete,
            "process data incomplete in cycle {c}"
        );
        if done() {
            return c;
        }
    }
    panic!("not done within {limit} cycles");
}

fn wait_ok(rt: &mut Runtime, vt: &VirtualTime, p: &Pending) -> u32 {
    let mut r = None;
    let c = cycle_until(rt, vt, 3_000, || {
        r = p.poll();
        r.is_some()
    });
    r.unwrap().unwrap();
    c
}

#[test]
fn set_ip_blocking_and_unsupported_subdevice() {
    let mut md = common::sim::scanned("mbx", None);
    md.mailbox(2, set_ip(DEV_IP)).unwrap();
    let e = md.mailbox(1, set_ip(DEV_IP)).unwrap_err().to_string();
    assert!(
        e.contains("SubDevice 1") && e.contains("cannot serve the EoE set IP parameter request"),
        "{e}"
    );
}

#[test]
fn ping_and_udp_echo_in_op_with_fragments_both_ways() {
    let vt = VirtualTime::new();
    let md = common::sim::scanned("mbx", Some(&vt));
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    let who = rt.mailbox_service_mut().targets()[2].who.clone();
    let hub = Arc::new(EoeHub::new([(who, interface_name(0, 2))]));
    rt.mailbox_service_mut().set_unsolicited_sink(hub.sink());
    let client = rt.mailbox_client();
    // What a host sends as soon as an interface is up (IPv6 multicast): no IP yet, no answer.
    let mut v6 = vec![0x33, 0x33, 0, 0, 0, 0x16];
    v6.extend_from_slice(&HOST_MAC);
    v6.extend_from_slice(&[0x86, 0xDD]);
    v6.extend_from_slice(&[0; 76]);
    for no in 0..3 {
        let p = client
            .submit(
                2,
                EoeOp::Frame {
                    port: 0,
                    frame_no: no,
                    frame: v6.clone(),
                },
            )
            .unwrap();
        wait_ok(&mut rt, &vt, &p);
    }
    let p = client.submit(2, set_ip(DEV_IP)).unwrap();
    let c = wait_ok(&mut rt, &vt, &p);
    assert!(c <= 4, "set IP took {c} cycles");

    let mut buf = [0u8; SLOT];
    for (no, frame) in [icmp_echo(b"ping through EoE"), udp_echo(&[0x5A; 600])]
        .into_iter()
        .enumerate()
    {
        let op = EoeOp::Frame {
            port: 0,
            frame_no: no as u8,
            frame: frame.clone(),
        };
        let p = client.submit(2, op).unwrap();
        wait_ok(&mut rt, &vt, &p);
        let mut got = None;
        cycle_until(&mut rt, &vt, 200, || {
            got = hub.pop_rx(0, &mut buf);
            got.is_some()
        });
        let n = got.unwrap();
        let reply = &buf[..n];
        assert_eq!(&reply[0..6], &HOST_MAC, "reply to our MAC");
        assert_eq!(&reply[26..30], &DEV_IP, "from the device");
        assert_eq!(&reply[30..34], &HOST_IP, "to us");
        if no == 0 {
            assert_eq!(reply[34], 0, "ICMP echo reply");
            assert_eq!(&reply[42..], b"ping through EoE");
        } else {
            assert_eq!(n, frame.len(), "UDP echo of the same size");
            assert_eq!(&reply[42..], &[0x5A; 600]);
        }
    }
    let s = hub.stats(0);
    assert_eq!((s.rx_frames, s.rx_errors, s.rx_dropped), (2, 0, 0));
}

#[test]
fn set_ip_submitted_while_the_bus_comes_up_waits_for_the_mailbox() {
    let vt = VirtualTime::new();
    let md = common::sim::scanned("mbx", Some(&vt));
    let mut rt = md.activate(Activation::default()).unwrap();
    let p = rt.mailbox_client().submit(2, set_ip(DEV_IP)).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    let mut r = p.poll();
    if r.is_none() {
        cycle_until(&mut rt, &vt, 3_000, || {
            r = p.poll();
            r.is_some()
        });
    }
    r.unwrap().unwrap();
}
