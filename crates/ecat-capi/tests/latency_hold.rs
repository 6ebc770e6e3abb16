//! The C API holds `/dev/cpu_dma_latency` at 0 from `ecrt_master_activate` until
//! `ecrt_master_deactivate` or `ecrt_release_master` (CPUs out of deep idle states while the
//! application cycles), and `ECAT_LATENCY_HOLD=0` turns it off. Root only (the file is
//! root's); skipped with one line otherwise.
//!
//! One test in this binary on purpose: it sets environment variables the library reads.

use ethercat::master::*;

/// Whether this process has the file open.
fn held() -> bool {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .any(|p| p == std::path::Path::new("/dev/cpu_dma_latency"))
}

#[test]
fn activation_holds_the_cpu_latency_until_deactivate_or_release() {
    // SAFETY: plain syscall.
    if unsafe { libc::geteuid() } != 0 || !std::path::Path::new("/dev/cpu_dma_latency").exists() {
        eprintln!("skipped: holding /dev/cpu_dma_latency needs root and the file");
        return;
    }
    std::env::set_var("ECAT_MASTER0", "sim:io");
    std::env::set_var("ECAT_CONTROL", "off");
    std::env::set_var("ECAT_CONF", "/nonexistent/ecat.conf");
    std::env::remove_var("ECAT_LATENCY_HOLD");
    // SAFETY: the C API's contract: a master from ecrt_request_master, one thread.
    unsafe {
        let m = ecrt_request_master(0);
        assert!(!m.is_null());
        assert!(!held(), "nothing held before activation");
        assert_eq!(ecrt_master_activate(m), 0);
        assert!(held(), "held from activation");
        assert_eq!(ecrt_master_deactivate(m), 0);
        assert!(!held(), "let go at deactivation");
        std::env::set_var("ECAT_LATENCY_HOLD", "0");
        assert_eq!(ecrt_master_activate(m), 0);
        assert!(!held(), "ECAT_LATENCY_HOLD=0 turns it off");
        std::env::remove_var("ECAT_LATENCY_HOLD");
        assert_eq!(ecrt_master_deactivate(m), 0);
        assert_eq!(ecrt_master_activate(m), 0);
        assert!(held());
        ecrt_release_master(m);
        assert!(!held(), "let go at release");
    }
}
