//! The EoE parameters of a slave configuration (`ecrt_slave_config_eoe_*`), IgH-style.
//!
//! Each setter records one field (MAC, IP address, subnet mask, default gateway, DNS server,
//! host name) in the configuration and returns 0; nothing is sent then. At activation the
//! fields given become one EoE set-IP-parameter request ([`EoeOp::SetIp`]), a startup request
//! made in PREOP after the startup SDOs and PREOP IDNs (IgH's order) on every
//! (re)configuration of the SubDevice. A SubDevice without EoE, or one that refuses the
//! request, is reported like a failed startup SDO (the setters do not check: IgH checks at
//! configuration too).
//!
//! Argument forms are IgH's: addresses are `struct in_addr` (network byte order, passed as
//! its `u32`), the MAC is 6 bytes, the host name a C string of at most 32 bytes including
//! its NUL.

use crate::ffi::{errno, guard};
use crate::log;
use crate::slave_config::{idle_or, sc_or, SlaveConfig};
use ecat::mailbox::eoe::EoeOp;
use ecat::mailbox::op::MailboxOp;
use ecat_wire::eoe::{DnsName, IpParams};
use std::net::Ipv4Addr;
use std::os::raw::c_char;

/// The startup request of `params`, if any field was given.
pub fn startup_op(params: &IpParams) -> Option<MailboxOp> {
    (*params != IpParams::default()).then(|| {
        EoeOp::SetIp {
            port: 0,
            params: *params,
        }
        .into()
    })
}

/// Run `set` on the EoE parameters of `sc` (before activation), returning 0.
fn set(f: &str, sc: *mut SlaveConfig, set: impl FnOnce(&mut IpParams)) -> i32 {
    guard(f, errno::EINVAL, || {
        let sc = sc_or!(sc, f, errno::EINVAL);
        if !idle_or(sc, f) {
            return errno::EPERM;
        }
        set(&mut sc.eoe);
        0
    })
}

/// A `struct in_addr` (network byte order in memory) as an address.
fn addr(a: u32) -> Ipv4Addr {
    Ipv4Addr::from(a.to_ne_bytes())
}

/// Set the MAC address (6 bytes) the SubDevice's EoE interface gets at configuration.
///
/// # Safety
/// `sc` NULL or live; `mac_address` NULL or 6 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_eoe_mac_address(
    sc: *mut SlaveConfig,
    mac_address: *const u8,
) -> i32 {
    const F: &str = "ecrt_slave_config_eoe_mac_address";
    if mac_address.is_null() {
        log!("{F}: mac_address is NULL; pass 6 bytes");
        return errno::EINVAL;
    }
    let mut mac = [0u8; 6];
    // SAFETY: 6 readable bytes (API contract).
    mac.copy_from_slice(unsafe { std::slice::from_raw_parts(mac_address, 6) });
    set(F, sc, |p| p.mac = Some(mac))
}

/// An address setter: `$name(sc, struct in_addr)` sets `$field`.
macro_rules! addr_setter {
    ($name:ident, $field:ident, $what:literal) => {
        #[doc = concat!("Set the ", $what, " (`struct in_addr`).")]
        ///
        /// # Safety
        /// `sc` NULL or live.
        #[no_mangle]
        pub unsafe extern "C" fn $name(sc: *mut SlaveConfig, address: u32) -> i32 {
            set(stringify!($name), sc, |p| p.$field = Some(addr(address)))
        }
    };
}

addr_setter!(ecrt_slave_config_eoe_ip_address, ip, "IP address");
addr_setter!(ecrt_slave_config_eoe_subnet_mask, subnet, "subnet mask");
addr_setter!(
    ecrt_slave_config_eoe_default_gateway,
    gateway,
    "default gateway"
);
addr_setter!(ecrt_slave_config_eoe_dns_address, dns, "DNS server");

/// Set the host name (a C string of at most 31 characters plus its NUL).
///
/// # Safety
/// `sc` NULL or live; `name` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_eoe_hostname(
    sc: *mut SlaveConfig,
    name: *const c_char,
) -> i32 {
    const F: &str = "ecrt_slave_config_eoe_hostname";
    if name.is_null() {
        log!("{F}: name is NULL; pass a host name of at most 31 characters");
        return errno::EINVAL;
    }
    // SAFETY: NUL-terminated (API contract).
    let bytes = unsafe { std::ffi::CStr::from_ptr(name) }.to_bytes();
    if bytes.len() >= 32 {
        log!(
            "{F}: the host name has {} bytes; EoE carries at most 31 (32 with the NUL)",
            bytes.len()
        );
        return errno::EINVAL;
    }
    let mut n = DnsName([0; 32]);
    n.0[..bytes.len()].copy_from_slice(bytes);
    set(F, sc, |p| p.dns_name = Some(n))
}
