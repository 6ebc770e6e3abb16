//! Fuzz target `capi_calls`: random bytes read as a sequence of C API calls on master 0 over
//! the simulated `sim:io` network, which must never crash, hang or leak. The cargo-fuzz target
//! in `fuzz/` calls [`call_sequence`]; `cargo test` replays the saved corpus through it on
//! stable (`tests/fuzz_corpus.rs`).
//!
//! Each input is a script: one byte picks a call (request or open the master, release it,
//! create domains and slave configurations, PDO configuration, entry registration,
//! activation, cycles that also write the domain's image, deactivation, requests of every
//! kind, DC, emergency, EoE, state and information calls, blocking SDO/IDN calls before
//! activation, a released master used again), the bytes after it its arguments. Objects are
//! picked among those the script created so far, or NULL; sizes among 0, small ones and
//! absurd ones. The interpreter forgets the objects a call frees (deactivation, release), as
//! a correct program would, except the released master, which the library must refuse. At the
//! end of the input a live master is released, so nothing outlives it.
//!
//! Blocking transfers run only before activation: after it, a blocking call from a thread that
//! has not cycled yet waits for another thread to carry the transfer (5 s), as IgH's does.

use crate::abi::{PdoEntryInfo, PdoEntryReg, PdoInfo, SyncInfo};
use crate::check;
use crate::cyclic::*;
use crate::domain::{ecrt_domain_reg_pdo_entry_list, ecrt_domain_size, Domain};
use crate::helpers::*;
use crate::master::*;
use crate::pdo_config::*;
use crate::requests::{RegRequest, SdoRequest};
use crate::slave_config::SlaveConfig;
use crate::soe::SoeRequest;
use crate::voe::{ecrt_voe_handler_execute, VoeHandler};
use std::ptr::{null, null_mut};

mod services;
use services::*;

/// Calls one input may make (a longer input is cut: each call may cycle the bus).
pub const MAX_CALLS: usize = 96;

/// (vendor id, product code) of `sim:io`'s SubDevices, by position.
const IDENTITIES: [(u32, u32); 5] = [
    (2, 0x044c_2c52), // EK1100
    (2, 0x07d8_3052), // EL2008
    (2, 0x03fa_3052), // EL1018
    (2, 0x1024_3052), // EL4132
    (2, 0x0c1e_3052), // EL3102
];

/// PDO entries mapped on `sim:io`'s SubDevices (index, subindex, bits).
const ENTRIES: [(u16, u8, u8); 10] = [
    (0x7000, 1, 1),
    (0x7070, 1, 1),
    (0x6000, 1, 1),
    (0x6070, 1, 1),
    (0x6411, 1, 16),
    (0x6411, 2, 16),
    (0x3101, 1, 8),
    (0x3101, 2, 16),
    (0x3102, 1, 8),
    (0x3102, 2, 16),
];

/// The script's bytes, read front to back; zeros once they run out.
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Input<'_> {
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    /// True one time in `n` (by the next byte).
    fn one_in(&mut self, n: u8) -> bool {
        self.u8().is_multiple_of(n)
    }
    fn more(&self) -> bool {
        self.pos < self.data.len()
    }
    /// A size: mostly small, sometimes 0, the limit, just over it or absurd.
    fn size(&mut self) -> usize {
        match self.u8() {
            0..=9 => 0,
            10..=19 => usize::MAX,
            20..=24 => check::MAX_BUFFER + 1,
            25..=29 => 1 << 40,
            30..=34 => usize::MAX / 2,
            b => (b as usize) % 70,
        }
    }
    /// An object of `v`, or NULL (byte 0xFF or nothing created yet).
    fn pick<T>(&mut self, v: &[*mut T]) -> *mut T {
        let b = self.u8();
        if b == 0xFF || v.is_empty() {
            null_mut()
        } else {
            v[b as usize % v.len()]
        }
    }
    /// An index mostly among `n` real ones, sometimes absurd.
    fn index(&mut self, n: u16) -> u16 {
        match self.u8() {
            0xF0..=0xFF => self.u16(),
            b => b as u16 % n.max(1),
        }
    }
}

/// What the script created so far.
#[derive(Default)]
struct State {
    /// The master (kept after release: the library must refuse it then).
    master: Option<*mut Master>,
    live: bool,
    active: bool,
    domains: Vec<*mut Domain>,
    configs: Vec<*mut SlaveConfig>,
    sdo: Vec<*mut SdoRequest>,
    soe: Vec<*mut SoeRequest>,
    voe: Vec<*mut VoeHandler>,
    reg: Vec<*mut RegRequest>,
}

impl State {
    fn m(&self) -> *mut Master {
        self.master.unwrap_or(null_mut())
    }
    /// Forget the configuration objects (freed by deactivation or release).
    fn forget_config(&mut self) {
        self.domains.clear();
        self.configs.clear();
        self.sdo.clear();
        self.soe.clear();
        self.voe.clear();
        self.reg.clear();
        self.active = false;
    }
}

/// Point master 0 at `sim:io` (once). Without the control socket: its thread takes up to
/// 20 ms to stop at each release, which would be most of an input's time (the socket has tests
/// of its own).
fn environment() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::env::set_var("ECAT_MASTER0", "sim:io");
        std::env::set_var("ECAT_CONTROL", "off");
        std::env::set_var("ECAT_CONF", "/nonexistent/ecat.conf");
        std::env::remove_var("ECAT_INTERFACE");
        std::env::remove_var("ECAT_MASTER0_BACKUP");
    });
}

/// Fuzz target `capi_calls` (see the module documentation).
pub fn call_sequence(data: &[u8]) {
    environment();
    let mut input = Input { data, pos: 0 };
    let mut st = State::default();
    let mut calls = 0;
    while input.more() && calls < MAX_CALLS {
        calls += 1;
        let op = input.u8();
        // SAFETY: every object passed is NULL, live (created by this script and not freed
        // since), or the released master, which the library refuses by design.
        unsafe { step(op, &mut input, &mut st) };
    }
    if st.live {
        // SAFETY: the live master of this script.
        unsafe { ecrt_release_master(st.m()) };
    }
}

/// One call (`op`), its arguments from `inp`.
///
/// # Safety
/// The objects in `st` are live (see [`call_sequence`]).
unsafe fn step(op: u8, inp: &mut Input, st: &mut State) {
    let m = st.m();
    // SAFETY (whole body): objects are NULL or live; out-parameters are locals.
    unsafe {
        match op % 28 {
            0 | 1 => {
                let index = u32::from(inp.u8() % 4 == 3); // master 1 has no link
                let p = if op.is_multiple_of(28) {
                    ecrt_request_master(index)
                } else {
                    ecrt_open_master(index)
                };
                if !p.is_null() {
                    *st = State {
                        master: Some(p),
                        live: true,
                        ..State::default()
                    };
                }
            }
            2 => {
                ecrt_release_master(m);
                if st.live {
                    st.forget_config();
                    st.live = false;
                }
            }
            3 => {
                let d = ecrt_master_create_domain(if inp.u8() == 0xFF { null_mut() } else { m });
                if !d.is_null() {
                    st.domains.push(d);
                }
            }
            4 => slave_config(inp, st),
            5 => pdos(inp, st),
            6 => pdo_calls(inp, st),
            7 | 8 => register(op % 28 == 8, inp, st),
            9 => reg_list(inp, st),
            10 => {
                if ecrt_master_activate(m) == 0 {
                    st.active = true;
                }
            }
            11 => {
                if ecrt_master_deactivate(m) == 0 {
                    st.forget_config();
                }
            }
            12 | 13 => cycles(1 + inp.u8() % 16, inp, st),
            14 => states(inp, st),
            15 => info(inp, m),
            16 => startup(inp, st),
            17 => create_request(inp, st),
            18 => sdo_request(inp, st),
            19 => soe_request(inp, st),
            20 => voe(inp, st),
            21 => reg_request(inp, st),
            22 => dc(inp, st),
            23 => emergency(inp, st),
            24 => settings(inp, st),
            25 if !st.active => blocking(inp, m),
            26 => {
                let mut b = [0u8; 8];
                let p = if inp.one_in(4) {
                    null_mut()
                } else {
                    b.as_mut_ptr().cast()
                };
                ecrt_write_lreal(p, 1.5);
                ecrt_write_real(p, 2.5);
                let _ = ecrt_read_real(p) + ecrt_read_lreal(p) as f32;
                let _ = ecrt_version_magic();
            }
            _ => {
                let _ = ecrt_master_set_send_interval(m, inp.u16() as usize);
                let _ = ecrt_master_reset(m);
                let _ = ecrt_master_reserve(m);
            }
        }
    }
}

unsafe fn slave_config(inp: &mut Input, st: &mut State) {
    let (alias, position) = match inp.u8() {
        0xF0..=0xFF => (inp.u16(), inp.u16()),
        b => (0, (b % 7) as u16),
    };
    let (vendor, product) = match inp.u8() {
        0xF8..=0xFF => (inp.u32(), inp.u32()),
        b => IDENTITIES[b as usize % IDENTITIES.len()],
    };
    // SAFETY: the master is NULL, live or released (refused).
    let sc = unsafe { ecrt_master_slave_config(st.m(), alias, position, vendor, product) };
    if !sc.is_null() && !st.configs.contains(&sc) {
        st.configs.push(sc);
    }
}

/// An entry: one of `sim:io`'s, or any.
fn entry(inp: &mut Input) -> (u16, u8, u8) {
    match inp.u8() {
        0xE0..=0xFF => (inp.u16(), inp.u8(), inp.u8()),
        b => ENTRIES[b as usize % ENTRIES.len()],
    }
}

unsafe fn pdos(inp: &mut Input, st: &mut State) {
    let sc = inp.pick(&st.configs);
    let n_syncs = 1 + inp.u8() as usize % 4;
    let mut entries: Vec<Vec<PdoEntryInfo>> = Vec::new();
    let mut pdo_specs = Vec::new();
    let mut sync_specs = Vec::new();
    for _ in 0..n_syncs {
        let index = match inp.u8() {
            0xF0..=0xFF => inp.u8(),
            b => b % 5,
        };
        let dir = (inp.u8() % 4) as u32;
        let n_pdos = inp.u8() % 3;
        let first = pdo_specs.len();
        for _ in 0..n_pdos {
            let pdo = 0x1600 + (inp.u8() as u16 % 4) * 0x200 + (inp.u8() % 3) as u16;
            let n = inp.u8() % 4;
            let list: Vec<PdoEntryInfo> = (0..n)
                .map(|_| {
                    let (index, subindex, bit_length) = entry(inp);
                    PdoEntryInfo {
                        index,
                        subindex,
                        bit_length,
                    }
                })
                .collect();
            // A count that lies about a NULL list (IgH skips NULL lists whatever the count).
            let lie = inp.u8() == 0xAA;
            pdo_specs.push((pdo, if lie { u32::MAX } else { n as u32 }, lie));
            entries.push(list);
        }
        sync_specs.push((index, dir, first, n_pdos as usize));
    }
    let pdo_infos: Vec<PdoInfo> = pdo_specs
        .iter()
        .zip(&entries)
        .map(|(&(index, n_entries, lie), list)| PdoInfo {
            index,
            n_entries,
            entries: if lie { null() } else { list.as_ptr() },
        })
        .collect();
    let mut syncs: Vec<SyncInfo> = sync_specs
        .iter()
        .map(|&(index, dir, first, n)| SyncInfo {
            index,
            dir,
            n_pdos: n as u32,
            pdos: if n == 0 {
                null()
            } else {
                pdo_infos[first..].as_ptr()
            },
            watchdog_mode: 0,
        })
        .collect();
    let ended = inp.one_in(2);
    if ended {
        syncs.push(SyncInfo {
            index: 0xFF,
            dir: 0,
            n_pdos: 0,
            pdos: null(),
            watchdog_mode: 0,
        });
    }
    let n = if ended { u32::MAX } else { syncs.len() as u32 };
    let p = if inp.u8() == 0xFF {
        null()
    } else {
        syncs.as_ptr()
    };
    // SAFETY: sc NULL or live; the arrays live until the call returns.
    let _ = unsafe { ecrt_slave_config_pdos(sc, n, p) };
}

unsafe fn pdo_calls(inp: &mut Input, st: &mut State) {
    let sc = inp.pick(&st.configs);
    let sm = match inp.u8() {
        0xF0..=0xFF => inp.u8(),
        b => b % 5,
    };
    let pdo = 0x1600 + (inp.u8() as u16 % 4) * 0x200;
    // SAFETY: sc NULL or live.
    unsafe {
        match inp.u8() % 5 {
            0 => {
                let _ = ecrt_slave_config_sync_manager(sc, sm, (inp.u8() % 4) as u32, 0);
            }
            1 => {
                let _ = ecrt_slave_config_pdo_assign_add(sc, sm, pdo);
            }
            2 => {
                let _ = ecrt_slave_config_pdo_assign_clear(sc, sm);
            }
            3 => {
                // Up to 255 entries at once: sync managers beyond 65535 bytes.
                let (index, subindex, bits) = entry(inp);
                for _ in 0..=inp.u8() {
                    let _ = ecrt_slave_config_pdo_mapping_add(sc, pdo, index, subindex, bits);
                }
            }
            _ => {
                let _ = ecrt_slave_config_pdo_mapping_clear(sc, pdo);
            }
        }
    }
}

unsafe fn register(by_position: bool, inp: &mut Input, st: &mut State) {
    let sc = inp.pick(&st.configs);
    let d = inp.pick(&st.domains);
    let mut bit = 0u32;
    let bp = if inp.one_in(3) {
        null_mut()
    } else {
        &mut bit as *mut u32
    };
    // SAFETY: sc and d NULL or live; bp NULL or a local.
    let _ = unsafe {
        if by_position {
            let sm = inp.u8() % 17;
            let pdo = inp.index(3) as u32;
            let pos = inp.index(8) as u32;
            ecrt_slave_config_reg_pdo_entry_pos(sc, sm, pdo, pos, d, bp)
        } else {
            let (index, subindex, _) = entry(inp);
            ecrt_slave_config_reg_pdo_entry(sc, index, subindex, d, bp)
        }
    };
}

unsafe fn reg_list(inp: &mut Input, st: &mut State) {
    let d = inp.pick(&st.domains);
    let mut offsets = [0u32; 4];
    let mut bits = [0u32; 4];
    let mut regs = Vec::new();
    for i in 0..(inp.u8() % 4) as usize {
        let position = inp.u8() as u16 % 6;
        let (vendor_id, product_code) =
            IDENTITIES.get(position as usize).copied().unwrap_or((2, 1));
        let (index, subindex, _) = entry(inp);
        let flags = inp.u8();
        regs.push(PdoEntryReg {
            alias: 0,
            position,
            vendor_id,
            product_code,
            index: index.max(1),
            subindex,
            offset: if flags & 1 == 0 {
                &mut offsets[i]
            } else {
                null_mut()
            },
            bit_position: if flags & 2 == 0 {
                &mut bits[i]
            } else {
                null_mut()
            },
        });
    }
    regs.push(PdoEntryReg {
        alias: 0,
        position: 0,
        vendor_id: 0,
        product_code: 0,
        index: 0,
        subindex: 0,
        offset: null_mut(),
        bit_position: null_mut(),
    });
    let p = if inp.u8() == 0xFF {
        null()
    } else {
        regs.as_ptr()
    };
    // SAFETY: d NULL or live; the list ends with an index-0 record and points at locals.
    let _ = unsafe { ecrt_domain_reg_pdo_entry_list(d, p) };
}

/// `n` IgH-style cycles, each writing a byte of every domain's image within its size.
unsafe fn cycles(n: u8, inp: &mut Input, st: &mut State) {
    let m = st.m();
    let value = inp.u8();
    for _ in 0..n {
        // SAFETY: m and the domains NULL, live or (m) released.
        unsafe {
            let _ = ecrt_master_receive(m);
            for &d in &st.domains {
                let _ = ecrt_domain_process(d);
                let data = ecrt_domain_data(d);
                let size = ecrt_domain_size(d);
                if !data.is_null() && size > 0 {
                    *data.add(value as usize % size) = value;
                }
                let _ = ecrt_domain_queue(d);
            }
            for &v in &st.voe {
                let _ = ecrt_voe_handler_execute(v);
            }
            let _ = ecrt_master_send(m);
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
}
