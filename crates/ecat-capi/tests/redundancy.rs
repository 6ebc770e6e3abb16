//! The backup device of cable redundancy through the C API, as IgH configures it
//! (`MASTER0_BACKUP`; here `ECAT_MASTER0_BACKUP`): master 0 on the simulated ring `ring8`
//! with its backup port scans all eight SubDevices through the redundant link; a backup equal
//! to the main device is refused. One test in this binary: the C API reads the environment.

use ethercat::abi::MasterInfo;
use ethercat::master::*;

#[test]
fn backup_device_from_the_environment() {
    // SAFETY: the only test in this process; nothing else reads the environment meanwhile.
    unsafe {
        std::env::set_var("ECAT_MASTER0", "sim:ring8");
        std::env::set_var("ECAT_MASTER0_BACKUP", "sim");
        std::env::set_var("ECAT_CONTROL", "off");
        std::env::set_var("ECAT_CONF", "/nonexistent/ecat.conf");
    }
    let m = ecrt_request_master(0);
    assert!(!m.is_null(), "master 0 on sim:ring8 with backup");
    let mut info: MasterInfo = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { ecrt_master(m, &mut info) }, 0);
    assert_eq!(
        info.slave_count, 8,
        "all of the ring through the redundant link"
    );
    unsafe { ecrt_release_master(m) };
    // The backup equal to the main device: refused (the log line says why).
    unsafe {
        std::env::set_var("ECAT_MASTER1", "ecatnosuch0");
        std::env::set_var("ECAT_MASTER1_BACKUP", "raw:ecatnosuch0");
    }
    assert!(ecrt_request_master(1).is_null());
    let e = ecat::link::open_redundant("ecatnosuch0", "raw:ecatnosuch0")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("is the main interface"), "{e}");
}
