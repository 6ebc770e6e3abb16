//! The EoE parameters of a slave configuration reach the SubDevice: through the C API's
//! functions (called from Rust) against `sim:mbx`, the drive at position 2 holds the MAC, IP,
//! subnet, gateway, DNS server and host name once its configuration is in OP, and gets them
//! again after it is reset (every configuration). Addresses go in as `struct in_addr`
//! (network byte order in memory).

use ecat_wire::eoe::{DnsName, IpParams};
use ethercat::abi::SlaveConfigState;
use ethercat::domain::{ecrt_domain_process, ecrt_domain_queue};
use ethercat::eoe::*;
use ethercat::master::*;
use ethercat::pdo_config::ecrt_slave_config_reg_pdo_entry;
use ethercat::slave_config::{ecrt_slave_config_state, SlaveConfig};
use std::net::Ipv4Addr;

fn in_addr(a: [u8; 4]) -> u32 {
    u32::from_ne_bytes(a)
}

/// Cycle until the configuration is in OP (or give up); returns whether it is.
unsafe fn cycle_to_op(
    m: *mut Master,
    d: *mut ethercat::domain::Domain,
    sc: *mut SlaveConfig,
) -> bool {
    for _ in 0..10_000 {
        ecrt_master_receive(m);
        ecrt_domain_process(d);
        ecrt_domain_queue(d);
        ecrt_master_send(m);
        std::thread::sleep(std::time::Duration::from_micros(200));
        let mut s = SlaveConfigState { bits: 0 };
        ecrt_slave_config_state(sc, &mut s);
        if s.bits & 2 != 0 {
            return true;
        }
    }
    false
}

fn params(m: *mut Master) -> IpParams {
    // SAFETY: live master, this thread.
    let rt = unsafe { (*m).runtime() }.expect("active");
    let net = rt.link_mut().sim_network().expect("a simulated link");
    net.subdevice_mut(2).unwrap().eoe().unwrap().params
}

#[test]
fn eoe_parameters_reach_the_drive_at_every_configuration() {
    std::env::set_var("ECAT_MASTER0", "sim:mbx");
    unsafe {
        let m = ecrt_request_master(0);
        assert!(!m.is_null());
        let d = ecrt_master_create_domain(m);
        let sc = ecrt_master_slave_config(m, 0, 2, 0x0eca, 0x0403);
        assert!(!d.is_null() && !sc.is_null());
        assert!(ecrt_slave_config_reg_pdo_entry(sc, 0x6041, 0, d, std::ptr::null_mut()) >= 0);
        let mac = [0x02, 0, 0, 0, 0, 0x42];
        assert_eq!(ecrt_slave_config_eoe_mac_address(sc, mac.as_ptr()), 0);
        assert_eq!(
            ecrt_slave_config_eoe_ip_address(sc, in_addr([192, 168, 77, 2])),
            0
        );
        assert_eq!(
            ecrt_slave_config_eoe_subnet_mask(sc, in_addr([255, 255, 255, 0])),
            0
        );
        assert_eq!(
            ecrt_slave_config_eoe_default_gateway(sc, in_addr([192, 168, 77, 1])),
            0
        );
        assert_eq!(
            ecrt_slave_config_eoe_dns_address(sc, in_addr([192, 168, 77, 53])),
            0
        );
        assert_eq!(ecrt_slave_config_eoe_hostname(sc, c"drive-2".as_ptr()), 0);
        assert_eq!(ecrt_master_activate(m), 0);
        assert!(cycle_to_op(m, d, sc), "the drive reaches OP");
        let want = IpParams {
            mac: Some(mac),
            ip: Some(Ipv4Addr::new(192, 168, 77, 2)),
            subnet: Some(Ipv4Addr::new(255, 255, 255, 0)),
            gateway: Some(Ipv4Addr::new(192, 168, 77, 1)),
            dns: Some(Ipv4Addr::new(192, 168, 77, 53)),
            dns_name: Some(DnsName::new("drive-2").unwrap()),
        };
        assert_eq!(params(m), want);

        // The drive forgets them and is power-cycled: configured again, it gets them again.
        {
            let rt = (*m).runtime().unwrap();
            let net = rt.link_mut().sim_network().unwrap();
            let esc = net.subdevice_mut(2).unwrap();
            esc.eoe_mut().unwrap().params = IpParams::default();
        }
        assert_ne!(params(m), want);
        let rt = (*m).runtime().unwrap();
        let esc = rt
            .link_mut()
            .sim_network()
            .unwrap()
            .subdevice_mut(2)
            .unwrap();
        esc.power_up();
        let mut back = false;
        for _ in 0..5_000 {
            if cycle_to_op(m, d, sc) && params(m) == want {
                back = true;
                break;
            }
        }
        assert!(
            back,
            "the parameters were sent again at reconfiguration: {:?}",
            params(m)
        );
        ecrt_release_master(m);
    }
}
