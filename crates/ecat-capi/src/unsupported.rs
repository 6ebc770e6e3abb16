//! Functions whose protocol ecat does not speak yet (SoE, VoE, EoE). They are exported so
//! programs written for IgH link and run; each returns IgH's error value for an unsupported
//! operation (`-EOPNOTSUPP`, or NULL for constructors) and logs one sentence naming what is
//! missing. They become real when those protocols land in `ecat`.

use crate::ffi::{errno, guard};
use crate::log;
use crate::master::Master;
use crate::slave_config::SlaveConfig;

/// `ec_soe_request_t` (never created yet).
pub enum SoeRequest {}
/// `ec_voe_handler_t` (never created yet).
pub enum VoeHandler {}

fn no(func: &str, what: &str) -> i32 {
    log!("{func}: {what} is not implemented in ecat yet");
    errno::EOPNOTSUPP
}

macro_rules! soe {
    () => {
        "SoE (servo drive profile over EtherCAT)"
    };
}
macro_rules! voe {
    () => {
        "VoE (vendor-specific mailbox protocol)"
    };
}
macro_rules! eoe {
    () => {
        "EoE (Ethernet over EtherCAT)"
    };
}

macro_rules! stub {
    ($name:ident ( $($a:ident : $t:ty),* ) -> $ret:ty = $val:expr, $what:ident) => {
        #[doc = concat!("`", stringify!($name), "`: not supported yet (", $what!(), ").")]
        ///
        /// # Safety
        /// Any arguments; none is dereferenced.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $ret {
            $(let _ = $a;)*
            guard(stringify!($name), $val, || {
                let _ = no(stringify!($name), $what!());
                $val
            })
        }
    };
}

stub!(ecrt_master_write_idn(master: *mut Master, slave_position: u16, drive_no: u8, idn: u16, data: *const u8, data_size: usize, error_code: *mut u16) -> i32 = errno::EOPNOTSUPP, soe);
stub!(ecrt_master_read_idn(master: *mut Master, slave_position: u16, drive_no: u8, idn: u16, target: *mut u8, target_size: usize, result_size: *mut usize, error_code: *mut u16) -> i32 = errno::EOPNOTSUPP, soe);
stub!(ecrt_slave_config_idn(sc: *mut SlaveConfig, drive_no: u8, idn: u16, state: u32, data: *const u8, size: usize) -> i32 = errno::EOPNOTSUPP, soe);
stub!(ecrt_slave_config_create_soe_request(sc: *mut SlaveConfig, drive_no: u8, idn: u16, size: usize) -> *mut SoeRequest = std::ptr::null_mut(), soe);
stub!(ecrt_soe_request_idn(req: *mut SoeRequest, drive_no: u8, idn: u16) -> i32 = errno::EOPNOTSUPP, soe);
stub!(ecrt_soe_request_timeout(req: *mut SoeRequest, timeout: u32) -> i32 = errno::EOPNOTSUPP, soe);
stub!(ecrt_soe_request_data(req: *const SoeRequest) -> *mut u8 = std::ptr::null_mut(), soe);
stub!(ecrt_soe_request_data_size(req: *const SoeRequest) -> usize = 0, soe);
stub!(ecrt_soe_request_state(req: *mut SoeRequest) -> u32 = crate::abi::request::ERROR, soe);
stub!(ecrt_soe_request_write(req: *mut SoeRequest) -> i32 = errno::EOPNOTSUPP, soe);
stub!(ecrt_soe_request_read(req: *mut SoeRequest) -> i32 = errno::EOPNOTSUPP, soe);
stub!(ecrt_slave_config_create_voe_handler(sc: *mut SlaveConfig, size: usize) -> *mut VoeHandler = std::ptr::null_mut(), voe);
stub!(ecrt_voe_handler_send_header(voe: *mut VoeHandler, vendor_id: u32, vendor_type: u16) -> i32 = errno::EOPNOTSUPP, voe);
stub!(ecrt_voe_handler_received_header(voe: *const VoeHandler, vendor_id: *mut u32, vendor_type: *mut u16) -> i32 = errno::EOPNOTSUPP, voe);
stub!(ecrt_voe_handler_data(voe: *const VoeHandler) -> *mut u8 = std::ptr::null_mut(), voe);
stub!(ecrt_voe_handler_data_size(voe: *const VoeHandler) -> usize = 0, voe);
stub!(ecrt_voe_handler_write(voe: *mut VoeHandler, size: usize) -> i32 = errno::EOPNOTSUPP, voe);
stub!(ecrt_voe_handler_read(voe: *mut VoeHandler) -> i32 = errno::EOPNOTSUPP, voe);
stub!(ecrt_voe_handler_read_nosync(voe: *mut VoeHandler) -> i32 = errno::EOPNOTSUPP, voe);
stub!(ecrt_voe_handler_execute(voe: *mut VoeHandler) -> u32 = crate::abi::request::ERROR, voe);
stub!(ecrt_slave_config_eoe_mac_address(sc: *mut SlaveConfig, mac_address: *const u8) -> i32 = errno::EOPNOTSUPP, eoe);
stub!(ecrt_slave_config_eoe_ip_address(sc: *mut SlaveConfig, ip_address: u32) -> i32 = errno::EOPNOTSUPP, eoe);
stub!(ecrt_slave_config_eoe_subnet_mask(sc: *mut SlaveConfig, subnet_mask: u32) -> i32 = errno::EOPNOTSUPP, eoe);
stub!(ecrt_slave_config_eoe_default_gateway(sc: *mut SlaveConfig, gateway_address: u32) -> i32 = errno::EOPNOTSUPP, eoe);
stub!(ecrt_slave_config_eoe_dns_address(sc: *mut SlaveConfig, dns_address: u32) -> i32 = errno::EOPNOTSUPP, eoe);
stub!(ecrt_slave_config_eoe_hostname(sc: *mut SlaveConfig, name: *const std::os::raw::c_char) -> i32 = errno::EOPNOTSUPP, eoe);
