//! The calls of [`super`]'s scripts around the process data: state and information, startup
//! SDOs and IDNs, requests of every kind, DC, emergencies, settings and blocking transfers.
//! Each takes its arguments from the script and passes objects the script created (or NULL).

use super::{Input, State};
use crate::abi::{
    DomainState, MasterInfo, MasterState, PdoEntryInfo, PdoInfo, ScanProgress, SlaveConfigState,
    SlaveInfo, SyncInfo,
};
use crate::check;
use crate::cyclic::ecrt_domain_state;
use crate::dc::*;
use crate::eoe::*;
use crate::info::*;
use crate::master::*;
use crate::requests::*;
use crate::sdo::*;
use crate::slave_config::{
    ecrt_slave_config_flag, ecrt_slave_config_state, ecrt_slave_config_state_timeout,
    ecrt_slave_config_watchdog,
};
use crate::soe::*;
use crate::startup::*;
use crate::voe::*;
use std::ptr::{null, null_mut};

pub(super) unsafe fn states(inp: &mut Input, st: &mut State) {
    let m = st.m();
    let mut ms = MasterState::default();
    let mut ss = SlaveConfigState::default();
    let mut ds = DomainState::default();
    let mut mi = MasterInfo::default();
    let mut sp = ScanProgress::default();
    let null_out = inp.one_in(4);
    macro_rules! out {
        ($v:expr) => {
            if null_out {
                null_mut()
            } else {
                &mut $v
            }
        };
    }
    let sc = inp.pick(&st.configs);
    let d = inp.pick(&st.domains);
    // SAFETY: objects NULL or live; out-parameters NULL or locals.
    unsafe {
        let _ = ecrt_master_state(m, out!(ms));
        let _ = ecrt_master_link_state(m, inp.u8() as u32 % 3, out!(ms));
        let _ = ecrt_master(m, out!(mi));
        let _ = ecrt_master_scan_progress(m, out!(sp));
        let _ = ecrt_slave_config_state(sc, out!(ss));
        let _ = ecrt_domain_state(d, out!(ds));
    }
}

pub(super) unsafe fn info(inp: &mut Input, m: *mut Master) {
    let pos = inp.index(6);
    let sm = inp.u8() % 18;
    let pdo = inp.index(3);
    let e = inp.index(8);
    let null_out = inp.one_in(4);
    // SAFETY: SlaveInfo is plain integers and arrays: all zeros is a value.
    let mut si: SlaveInfo = unsafe { std::mem::zeroed() };
    let mut sy = SyncInfo {
        index: 0,
        dir: 0,
        n_pdos: 0,
        pdos: null(),
        watchdog_mode: 0,
    };
    let mut pi = PdoInfo {
        index: 0,
        n_entries: 0,
        entries: null(),
    };
    let mut pe = PdoEntryInfo::default();
    // SAFETY: m NULL, live or released; out-parameters NULL or locals.
    unsafe {
        if null_out {
            let _ = ecrt_master_get_slave(m, pos, null_mut());
            let _ = ecrt_master_get_pdo_entry(m, pos, sm, pdo, e, null_mut());
        } else {
            let _ = ecrt_master_get_slave(m, pos, &mut si);
            let _ = ecrt_master_get_sync_manager(m, pos, sm, &mut sy);
            let _ = ecrt_master_get_pdo(m, pos, sm, pdo, &mut pi);
            let _ = ecrt_master_get_pdo_entry(m, pos, sm, pdo, e, &mut pe);
        }
    }
}

/// Bytes for a call: a buffer of `size` (capped at 64) or NULL, with `size` passed as is.
fn bytes(inp: &mut Input, buf: &[u8; 64]) -> (*const u8, usize) {
    let size = inp.size();
    let p = if inp.one_in(5) || size > buf.len() && size <= check::MAX_BUFFER {
        // A size beyond the buffer that the library would read: pass NULL instead.
        null()
    } else {
        buf.as_ptr()
    };
    (p, size)
}

pub(super) unsafe fn startup(inp: &mut Input, st: &mut State) {
    let sc = inp.pick(&st.configs);
    let buf = [inp.u8(); 64];
    let (index, sub) = (inp.u16(), inp.u8());
    // SAFETY: sc NULL or live; data NULL or `buf` for sizes it holds (absurd ones are
    // refused before anything is read).
    unsafe {
        match inp.u8() % 6 {
            0 => {
                let (p, n) = bytes(inp, &buf);
                let _ = ecrt_slave_config_sdo(sc, index, sub, p, n);
            }
            1 => {
                let _ = ecrt_slave_config_sdo8(sc, index, sub, 1);
            }
            2 => {
                let _ = ecrt_slave_config_sdo16(sc, index, sub, 2);
            }
            3 => {
                let _ = ecrt_slave_config_sdo32(sc, index, sub, 3);
            }
            4 => {
                let (p, n) = bytes(inp, &buf);
                let _ = ecrt_slave_config_complete_sdo(sc, index, p, n);
            }
            _ => {
                let (p, n) = bytes(inp, &buf);
                let state = [2, 4, 8, 0][inp.u8() as usize % 4];
                let _ = ecrt_slave_config_idn(sc, inp.u8() % 9, index, state, p, n);
            }
        }
    }
}

pub(super) unsafe fn create_request(inp: &mut Input, st: &mut State) {
    let sc = inp.pick(&st.configs);
    let size = inp.size();
    // SAFETY: sc NULL or live.
    unsafe {
        match inp.u8() % 4 {
            0 => {
                let r = ecrt_slave_config_create_sdo_request(sc, 0x1018, 1, size);
                if !r.is_null() {
                    st.sdo.push(r);
                }
            }
            1 => {
                let r = ecrt_slave_config_create_soe_request(sc, 0, 1, size);
                if !r.is_null() {
                    st.soe.push(r);
                }
            }
            2 => {
                let r = ecrt_slave_config_create_voe_handler(sc, size);
                if !r.is_null() {
                    st.voe.push(r);
                }
            }
            _ => {
                let r = ecrt_slave_config_create_reg_request(sc, size);
                if !r.is_null() {
                    st.reg.push(r);
                }
            }
        }
    }
}

pub(super) unsafe fn sdo_request(inp: &mut Input, st: &mut State) {
    let r = inp.pick(&st.sdo);
    // SAFETY: r NULL or live.
    unsafe {
        match inp.u8() % 5 {
            0 => {
                let _ = ecrt_sdo_request_index(r, inp.u16(), inp.u8());
            }
            1 => {
                let _ = ecrt_sdo_request_timeout(r, inp.u8() as u32);
            }
            2 => {
                let _ = ecrt_sdo_request_write(r);
            }
            3 => {
                let _ = ecrt_sdo_request_read(r);
            }
            _ => {}
        }
        let _ = ecrt_sdo_request_state(r);
        let (p, n) = (ecrt_sdo_request_data(r), ecrt_sdo_request_data_size(r));
        if !p.is_null() && n > 0 {
            *p = 1;
        }
    }
}

pub(super) unsafe fn soe_request(inp: &mut Input, st: &mut State) {
    let r = inp.pick(&st.soe);
    // SAFETY: r NULL or live.
    unsafe {
        match inp.u8() % 5 {
            0 => {
                let _ = ecrt_soe_request_idn(r, inp.u8() % 9, inp.u16());
            }
            1 => {
                let _ = ecrt_soe_request_timeout(r, inp.u8() as u32);
            }
            2 => {
                let _ = ecrt_soe_request_write(r);
            }
            3 => {
                let _ = ecrt_soe_request_read(r);
            }
            _ => {}
        }
        let _ = ecrt_soe_request_state(r);
        let _ = (ecrt_soe_request_data(r), ecrt_soe_request_data_size(r));
    }
}

pub(super) unsafe fn voe(inp: &mut Input, st: &mut State) {
    let v = inp.pick(&st.voe);
    let (mut vid, mut vt) = (0u32, 0u16);
    // SAFETY: v NULL or live; out-parameters NULL or locals.
    unsafe {
        match inp.u8() % 6 {
            0 => {
                let _ = ecrt_voe_handler_send_header(v, inp.u32(), inp.u16());
            }
            1 => {
                let _ = ecrt_voe_handler_write(v, inp.size());
            }
            2 => {
                let _ = ecrt_voe_handler_read(v);
            }
            3 => {
                let _ = ecrt_voe_handler_read_nosync(v);
            }
            4 => {
                let _ = ecrt_voe_handler_received_header(v, &mut vid, null_mut());
            }
            _ => {
                let _ = ecrt_voe_handler_received_header(v, &mut vid, &mut vt);
            }
        }
        let _ = ecrt_voe_handler_execute(v);
        let _ = (ecrt_voe_handler_data(v), ecrt_voe_handler_data_size(v));
    }
}

pub(super) unsafe fn reg_request(inp: &mut Input, st: &mut State) {
    let r = inp.pick(&st.reg);
    let (address, size) = (inp.u16(), inp.size());
    // SAFETY: r NULL or live.
    unsafe {
        let _ = if inp.one_in(2) {
            ecrt_reg_request_read(r, address, size)
        } else {
            ecrt_reg_request_write(r, address, size)
        };
        let _ = (ecrt_reg_request_state(r), ecrt_reg_request_data(r));
    }
}

pub(super) unsafe fn dc(inp: &mut Input, st: &mut State) {
    let m = st.m();
    let sc = inp.pick(&st.configs);
    let mut t = 0u32;
    // SAFETY: objects NULL, live or (m) released.
    unsafe {
        let _ = ecrt_slave_config_dc(sc, inp.u16(), inp.u32(), inp.u32() as i32, inp.u32(), 0);
        let _ = ecrt_master_select_reference_clock(m, sc);
        let _ = ecrt_master_application_time(m, inp.u32() as u64);
        let _ = ecrt_master_sync_reference_clock(m);
        let _ = ecrt_master_sync_reference_clock_to(m, 5);
        let _ = ecrt_master_sync_slave_clocks(m);
        let _ =
            ecrt_master_reference_clock_time(m, if inp.one_in(3) { null_mut() } else { &mut t });
        let _ = ecrt_master_sync_monitor_queue(m);
        let _ = ecrt_master_sync_monitor_process(m);
    }
}

pub(super) unsafe fn emergency(inp: &mut Input, st: &mut State) {
    let sc = inp.pick(&st.configs);
    let mut rec = [0u8; 8];
    // SAFETY: sc NULL or live; the target NULL or 8 local bytes.
    unsafe {
        let _ = ecrt_slave_config_emerg_size(sc, inp.size() / 8);
        let target = if inp.one_in(3) {
            null_mut()
        } else {
            rec.as_mut_ptr()
        };
        let _ = ecrt_slave_config_emerg_pop(sc, target);
        let _ = ecrt_slave_config_emerg_overruns(sc);
        if inp.one_in(2) {
            let _ = ecrt_slave_config_emerg_clear(sc);
        }
    }
}

pub(super) unsafe fn settings(inp: &mut Input, st: &mut State) {
    let sc = inp.pick(&st.configs);
    let mac = [2u8, 0, 0, 0, 0, 1];
    let long = c"a-host-name-longer-than-thirty-one-bytes";
    // SAFETY: sc NULL or live; pointers NULL or to locals and literals.
    unsafe {
        match inp.u8() % 6 {
            0 => {
                let p = if inp.one_in(2) { null() } else { mac.as_ptr() };
                let _ = ecrt_slave_config_eoe_mac_address(sc, p);
                let _ = ecrt_slave_config_eoe_ip_address(sc, inp.u32());
                let _ = ecrt_slave_config_eoe_subnet_mask(sc, inp.u32());
                let _ = ecrt_slave_config_eoe_default_gateway(sc, inp.u32());
                let _ = ecrt_slave_config_eoe_dns_address(sc, inp.u32());
            }
            1 => {
                let name = [null(), c"drive".as_ptr(), long.as_ptr()][inp.u8() as usize % 3];
                let _ = ecrt_slave_config_eoe_hostname(sc, name);
            }
            2 => {
                let key = [null(), c"".as_ptr(), c"AssignToPdi".as_ptr()][inp.u8() as usize % 3];
                let _ = ecrt_slave_config_flag(sc, key, inp.u16() as i32);
            }
            3 => {
                let _ =
                    ecrt_slave_config_state_timeout(sc, inp.u8() as u32 % 9, 8, inp.u16() as u32);
            }
            4 => {
                let _ = ecrt_slave_config_watchdog(sc, inp.u16(), inp.u16());
            }
            _ => {}
        }
    }
}

/// Blocking SDO and IDN calls (before activation only, see the module documentation).
pub(super) unsafe fn blocking(inp: &mut Input, m: *mut Master) {
    let pos = inp.index(6);
    let mut buf = [0u8; 64];
    let mut rs = 0usize;
    let mut abort = 0u32;
    let mut code = 0u16;
    let target_size = inp.u8() as usize % 65;
    // SAFETY: m NULL, live or released; buffers are locals (absurd sizes are refused before
    // anything is read).
    unsafe {
        match inp.u8() % 4 {
            0 => {
                let _ = ecrt_master_sdo_upload(
                    m,
                    pos,
                    0x1018,
                    inp.u8() % 5,
                    buf.as_mut_ptr(),
                    target_size,
                    &mut rs,
                    &mut abort,
                );
            }
            1 => {
                let (p, n) = bytes(inp, &buf);
                let _ = ecrt_master_sdo_download(m, pos, 0x8000, 1, p, n, null_mut());
            }
            2 => {
                let (p, n) = bytes(inp, &buf);
                let _ = ecrt_master_sdo_download_complete(m, pos, 0x1c12, p, n, &mut abort);
            }
            _ => {
                let _ = ecrt_master_read_idn(
                    m,
                    pos,
                    inp.u8() % 9,
                    1,
                    buf.as_mut_ptr(),
                    target_size,
                    &mut rs,
                    &mut code,
                );
            }
        }
    }
}
