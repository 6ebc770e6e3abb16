//! The EoE parameter functions (`ecrt_slave_config_eoe_*`): the C API does not carry EoE yet.
//! They are exported so programs written for IgH link and run; each returns IgH's error value
//! for an unsupported operation (`-EOPNOTSUPP`) and logs one sentence naming what is missing.
//! They become real when EoE lands in the C API. (SoE and VoE are real: [`crate::soe`],
//! [`crate::voe`].)

use crate::ffi::{errno, guard};
use crate::log;
use crate::slave_config::SlaveConfig;

fn no(func: &str, what: &str) -> i32 {
    log!("{func}: {what} is not implemented in ecat yet");
    errno::EOPNOTSUPP
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

stub!(ecrt_slave_config_eoe_mac_address(sc: *mut SlaveConfig, mac_address: *const u8) -> i32 = errno::EOPNOTSUPP, eoe);
stub!(ecrt_slave_config_eoe_ip_address(sc: *mut SlaveConfig, ip_address: u32) -> i32 = errno::EOPNOTSUPP, eoe);
stub!(ecrt_slave_config_eoe_subnet_mask(sc: *mut SlaveConfig, subnet_mask: u32) -> i32 = errno::EOPNOTSUPP, eoe);
stub!(ecrt_slave_config_eoe_default_gateway(sc: *mut SlaveConfig, gateway_address: u32) -> i32 = errno::EOPNOTSUPP, eoe);
stub!(ecrt_slave_config_eoe_dns_address(sc: *mut SlaveConfig, dns_address: u32) -> i32 = errno::EOPNOTSUPP, eoe);
stub!(ecrt_slave_config_eoe_hostname(sc: *mut SlaveConfig, name: *const std::os::raw::c_char) -> i32 = errno::EOPNOTSUPP, eoe);
