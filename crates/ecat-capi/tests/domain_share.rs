//! Zero-copy domains (`ethercat::share`): an IgH application registers outputs and inputs
//! interleaved (EL2008 out, EL1018 in, EL4132 out, EL3102 in on `sim:io`); ecat lays its
//! image out at exactly those offsets, `ecrt_domain_data` hands out ecat's image itself, and
//! outputs written at the registered offsets reach the simulated terminals while forced
//! inputs show up at theirs. A domain that names a sync manager an earlier domain owns cannot
//! be shared: it keeps its own image and copies, with the same results for the rest.
//!
//! One test in this binary on purpose: the C API reads `ECAT_MASTER0` from the environment,
//! and a second test in the same process changing it would race (the `-ENOENT` a registration
//! got once came from a slave configuration of another test's network).

use ethercat::abi::{DomainState, PdoEntryReg};
use ethercat::domain::*;
use ethercat::master::*;

const EL2008: (u16, u32) = (1, 0x07d83052);
const EL1018: (u16, u32) = (2, 0x03fa3052);
const EL4132: (u16, u32) = (3, 0x10243052);
const EL3102: (u16, u32) = (4, 0x0c1e3052);

fn reg(at: (u16, u32), index: u16, subindex: u8, offset: &mut u32) -> PdoEntryReg {
    PdoEntryReg {
        alias: 0,
        position: at.0,
        vendor_id: 2,
        product_code: at.1,
        index,
        subindex,
        offset,
        bit_position: std::ptr::null_mut(),
    }
}

fn end() -> PdoEntryReg {
    PdoEntryReg {
        alias: 0,
        position: 0,
        vendor_id: 0,
        product_code: 0,
        index: 0,
        subindex: 0,
        offset: std::ptr::null_mut(),
        bit_position: std::ptr::null_mut(),
    }
}

/// Cycle `m` with domains `ds` (1 ms of real time apart) until the first is complete and
/// every SubDevice is in OP.
unsafe fn cycle_to_op(m: *mut Master, doms: &[*mut Domain]) -> bool {
    let mut ds = DomainState::default();
    for _ in 0..5000 {
        ecrt_master_receive(m);
        for &d in doms {
            ecrt_domain_process(d);
            ecrt_domain_queue(d);
        }
        ecrt_master_send(m);
        std::thread::sleep(std::time::Duration::from_millis(1));
        ecrt_domain_state(doms[0], &mut ds);
        let rt = (*m).runtime().expect("active");
        if ds.wc_state == ethercat::abi::wc::COMPLETE && rt.supervisor().all_running() {
            return true;
        }
    }
    false
}

/// Write the EL2008 byte and the first EL4132 channel, force EL1018/EL3102 inputs, cycle, and
/// check both ways at the registered offsets (the EL2008 output only if `d` carries it).
unsafe fn exchange(m: *mut Master, d: *mut Domain, pd: *mut u8, off: &[u32; 4], el2008: bool) {
    {
        let rt = (*m).runtime().expect("active");
        let net = rt.link_mut().sim_network().expect("simulated");
        net.set_inputs(2, &[0x5a]).unwrap();
        net.set_inputs(4, &[0, 0x34, 0x12]).unwrap();
    }
    for k in 0..20u8 {
        ecrt_master_receive(m);
        ecrt_domain_process(d);
        *pd.add(off[0] as usize) = 0xa0 | (k & 0x0f);
        *pd.add(off[2] as usize) = 0x78;
        *pd.add(off[2] as usize + 1) = 0x56;
        ecrt_domain_queue(d);
        ecrt_master_send(m);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    ecrt_master_receive(m);
    ecrt_domain_process(d);
    let rt = (*m).runtime().expect("active");
    let net = rt.link_mut().sim_network().expect("simulated");
    if el2008 {
        assert_eq!(net.outputs(1).unwrap()[0] & 0xf0, 0xa0, "EL2008 output");
    }
    assert_eq!(
        &net.outputs(3).unwrap()[..2],
        &[0x78, 0x56],
        "EL4132 output"
    );
    assert_eq!(*pd.add(off[1] as usize), 0x5a, "EL1018 input");
    // 0x3101:02 is the value after the 8-bit status.
    assert_eq!(*pd.add(off[3] as usize), 0x34, "EL3102 input");
    assert_eq!(*pd.add(off[3] as usize + 1), 0x12, "EL3102 input");
}

#[test]
fn interleaved_registration_shares_the_image_and_a_doubly_owned_sm_copies() {
    std::env::set_var("ECAT_MASTER0", "sim:io");
    std::env::set_var("ECAT_CONTROL", "off");
    std::env::set_var("ECAT_CONF", "/nonexistent/ecat.conf");
    std::env::remove_var("ECAT_INTERFACE");
    // SAFETY: one thread; every object comes from the library and lives until release.
    unsafe {
        // Shared: one domain, IgH's interleaved registration order.
        let mut off = [0u32; 4];
        let [a, b, c, e] = &mut off;
        let regs = [
            reg(EL2008, 0x7000, 1, a),
            reg(EL1018, 0x6000, 1, b),
            reg(EL4132, 0x6411, 1, c),
            reg(EL3102, 0x3101, 2, e),
            end(),
        ];
        let m = ecrt_request_master(0);
        assert!(!m.is_null());
        let d = ecrt_master_create_domain(m);
        assert_eq!(ecrt_domain_reg_pdo_entry_list(d, regs.as_ptr()), 0);
        assert_eq!(off[..2], [0, 1], "offsets in registration order");
        assert_eq!(ecrt_master_activate(m), 0);
        assert!((*d).shared, "the interleaved domain is shared");
        let pd = ecrt_domain_data(d);
        let rt = (*m).runtime().expect("active");
        assert_eq!(
            pd as *const u8,
            rt.domain(0).image().as_ptr(),
            "ecrt_domain_data is ecat's image"
        );
        assert_eq!(rt.domain(0).size(), ecrt_domain_size(d));
        assert!(cycle_to_op(m, &[d]), "OP with a complete working counter");
        exchange(m, d, pd, &off, true);
        ecrt_release_master(m);

        // Not shared: domain 1 names the EL2008's SM, which domain 0 (created first) owns.
        let mut off = [0u32; 4];
        let mut extra = 0u32;
        let [a, b, c, e] = &mut off;
        let regs = [
            reg(EL2008, 0x7000, 1, a),
            reg(EL1018, 0x6000, 1, b),
            reg(EL4132, 0x6411, 1, c),
            reg(EL3102, 0x3101, 2, e),
            end(),
        ];
        let m = ecrt_request_master(0);
        assert!(!m.is_null());
        let first = ecrt_master_create_domain(m);
        let d = ecrt_master_create_domain(m);
        let mut bit = 0u32;
        let regs0 = [
            PdoEntryReg {
                bit_position: &mut bit,
                ..reg(EL2008, 0x7010, 1, &mut extra)
            },
            end(),
        ];
        assert_eq!(ecrt_domain_reg_pdo_entry_list(first, regs0.as_ptr()), 0);
        assert_eq!(ecrt_domain_reg_pdo_entry_list(d, regs.as_ptr()), 0);
        assert_eq!(ecrt_master_activate(m), 0);
        assert_eq!((extra, bit), (0, 1), "channel 2 of the EL2008");
        assert!(
            (*first).shared,
            "domain 0 holds exactly the SM it registered"
        );
        assert!(!(*d).shared, "domain 1 names an SM that domain 0 owns");
        let pd = ecrt_domain_data(d);
        assert!(!pd.is_null());
        let rt = (*m).runtime().expect("active");
        assert_ne!(pd as *const u8, rt.domain(1).image().as_ptr());
        assert!(cycle_to_op(m, &[first, d]), "OP");
        exchange(m, d, pd, &off, false);
        ecrt_release_master(m);
    }
}
