//! PDO configuration of a slave configuration (sync managers, PDO assignment and mapping,
//! `ecrt_slave_config_pdos`) and PDO entry registration into a domain, which returns the
//! entry's byte offset at once (see [`crate::domain`] for the layout).

use crate::abi::{self, PdoInfo, SyncInfo};
use crate::check;
use crate::domain::Domain;
use crate::ffi::{errno, guard};
use crate::log;
use crate::slave_config::{idle_or, sc_or, SlaveConfig};
use ecat::config::{Direction, EntryConfig, PdoConfig};

fn direction(dir: u32) -> Option<Direction> {
    match dir {
        abi::dir::OUTPUT => Some(Direction::Output),
        abi::dir::INPUT => Some(Direction::Input),
        _ => None,
    }
}

/// Configure a sync manager's direction and watchdog mode.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_sync_manager(
    sc: *mut SlaveConfig,
    sync_index: u8,
    dir: u32,
    watchdog_mode: u32,
) -> i32 {
    const F: &str = "ecrt_slave_config_sync_manager";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if !idle_or(sc, F) {
            return errno::EPERM;
        }
        if let Err(e) = check::sync_index(F, sync_index, errno::ENOENT) {
            return e;
        }
        let Some(d) = direction(dir) else {
            log!("{F}: direction {dir} is neither EC_DIR_OUTPUT nor EC_DIR_INPUT");
            return errno::EINVAL;
        };
        let _ = watchdog_mode;
        sc.sync_mut(sync_index, Some(d)).direction = d;
        0
    })
}

/// Add PDO `index` to the assignment of sync manager `sync_index`.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_pdo_assign_add(
    sc: *mut SlaveConfig,
    sync_index: u8,
    index: u16,
) -> i32 {
    const F: &str = "ecrt_slave_config_pdo_assign_add";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if !idle_or(sc, F) {
            return errno::EPERM;
        }
        if let Err(e) = check::sync_index(F, sync_index, errno::EINVAL) {
            return e;
        }
        let entries = sc.default_mapping(index);
        let hint = match index & 0xFF00 {
            0x1600 | 0x1700 => Some(Direction::Output),
            0x1A00 | 0x1B00 => Some(Direction::Input),
            _ => None,
        };
        let pdos = &mut sc.sync_mut(sync_index, hint).pdos;
        if let Err(e) = check::room(F, pdos.len(), "the assignment of that sync manager") {
            return e;
        }
        pdos.push(PdoConfig { index, entries });
        0
    })
}

/// Clear the PDO assignment of sync manager `sync_index`.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_pdo_assign_clear(
    sc: *mut SlaveConfig,
    sync_index: u8,
) -> i32 {
    const F: &str = "ecrt_slave_config_pdo_assign_clear";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if !idle_or(sc, F) {
            return errno::EPERM;
        }
        if let Err(e) = check::sync_index(F, sync_index, errno::EINVAL) {
            return e;
        }
        sc.sync_mut(sync_index, None).pdos.clear();
        0
    })
}

/// Add an entry to the mapping of PDO `pdo_index`.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_pdo_mapping_add(
    sc: *mut SlaveConfig,
    pdo_index: u16,
    entry_index: u16,
    entry_subindex: u8,
    entry_bit_length: u8,
) -> i32 {
    const F: &str = "ecrt_slave_config_pdo_mapping_add";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if !idle_or(sc, F) {
            return errno::EPERM;
        }
        let name = sc.name();
        match sc.pdo_mut(pdo_index) {
            Some(p) => {
                if let Err(e) = check::room(F, p.entries.len(), "the mapping of that PDO") {
                    return e;
                }
                p.entries.push(EntryConfig {
                    index: entry_index,
                    subindex: entry_subindex,
                    bits: entry_bit_length,
                });
                0
            }
            None => {
                log!("{F}: PDO 0x{pdo_index:04X} is not assigned in {name}; assign it first");
                errno::ENOENT
            }
        }
    })
}

/// Clear the mapping of PDO `pdo_index`.
///
/// # Safety
/// `sc` NULL or a live configuration.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_pdo_mapping_clear(
    sc: *mut SlaveConfig,
    pdo_index: u16,
) -> i32 {
    const F: &str = "ecrt_slave_config_pdo_mapping_clear";
    guard(F, errno::EINVAL, || {
        let sc = sc_or!(sc, F, errno::EINVAL);
        if !idle_or(sc, F) {
            return errno::EPERM;
        }
        let name = sc.name();
        match sc.pdo_mut(pdo_index) {
            Some(p) => {
                p.entries.clear();
                0
            }
            None => {
                log!("{F}: PDO 0x{pdo_index:04X} is not assigned in {name}");
                errno::ENOENT
            }
        }
    })
}

/// The whole PDO configuration from `ec_sync_info_t` lists (`n_syncs = EC_END` reads up to
/// `index == 0xff`).
///
/// # Safety
/// `sc` NULL or a live configuration; `syncs` points to `n_syncs` records (or an 0xff-ended
/// list), each with valid `pdos`/`entries` arrays of the given lengths.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_pdos(
    sc: *mut SlaveConfig,
    n_syncs: u32,
    syncs: *const SyncInfo,
) -> i32 {
    const F: &str = "ecrt_slave_config_pdos";
    guard(F, errno::EINVAL, || {
        // SAFETY: IgH's threading rule; the pointer itself is checked.
        if unsafe { check::config(sc, F) }.is_none() {
            return errno::EINVAL;
        }
        if syncs.is_null() {
            return 0;
        }
        let mut i = 0usize;
        loop {
            if n_syncs != u32::MAX && i >= n_syncs as usize {
                break;
            }
            // SAFETY: within the caller's array (n_syncs records or up to the 0xff record).
            let s: SyncInfo = unsafe { *syncs.add(i) };
            i += 1;
            if n_syncs == u32::MAX && s.index == 0xFF {
                break;
            }
            if let Err(e) = check::sync_index(F, s.index, errno::ENOENT) {
                return e;
            }
            // EC_DIR_INVALID leaves the direction as it is (IgH).
            if s.dir != abi::dir::INVALID {
                // SAFETY: forwarded contract.
                let r =
                    unsafe { ecrt_slave_config_sync_manager(sc, s.index, s.dir, s.watchdog_mode) };
                if r != 0 {
                    return r;
                }
            }
            if s.n_pdos == 0 || s.pdos.is_null() {
                continue;
            }
            // SAFETY: forwarded contract.
            let r = unsafe { ecrt_slave_config_pdo_assign_clear(sc, s.index) };
            if r != 0 {
                return r;
            }
            for j in 0..s.n_pdos as usize {
                // SAFETY: s.pdos has n_pdos records (caller's contract).
                let p: PdoInfo = unsafe { *s.pdos.add(j) };
                // SAFETY: forwarded contract.
                let r = unsafe { ecrt_slave_config_pdo_assign_add(sc, s.index, p.index) };
                if r != 0 {
                    return r;
                }
                if p.n_entries == 0 || p.entries.is_null() {
                    continue;
                }
                // SAFETY: forwarded contract.
                let r = unsafe { ecrt_slave_config_pdo_mapping_clear(sc, p.index) };
                if r != 0 {
                    return r;
                }
                for k in 0..p.n_entries as usize {
                    // SAFETY: p.entries has n_entries records (caller's contract).
                    let e = unsafe { *p.entries.add(k) };
                    // SAFETY: forwarded contract.
                    let r = unsafe {
                        ecrt_slave_config_pdo_mapping_add(
                            sc,
                            p.index,
                            e.index,
                            e.subindex,
                            e.bit_length,
                        )
                    };
                    if r != 0 {
                        return r;
                    }
                }
            }
        }
        0
    })
}

/// Register an entry found by sync manager / PDO / entry positions, or by index.
fn register(
    f: &str,
    sc: *mut SlaveConfig,
    domain: *mut Domain,
    bit_position: *mut u32,
    find: impl FnOnce(&SlaveConfig) -> Result<(u8, Direction, u32, usize), String>,
) -> i32 {
    // SAFETY: the C caller passes NULL or live objects (API contract).
    let Some((s, d)) = (unsafe { crate::check::config(sc, f) })
        .and_then(|x| unsafe { crate::check::domain(domain, f) }.map(|y| (x, y)))
    else {
        return errno::EINVAL;
    };
    if !idle_or(s, f) {
        return errno::EPERM;
    }
    if d.master != s.master {
        log!("{f}: the domain belongs to another master");
        return errno::EINVAL;
    }
    let (sm, dir, bit, bytes) = match find(s) {
        Ok(x) => x,
        Err(e) => {
            log!("{f}: {e}");
            return errno::ENOENT;
        }
    };
    // A sync manager holds at most 65535 bytes: an entry mapped beyond them would get an
    // offset outside the domain's image.
    if (bit as usize).div_ceil(8) > bytes {
        log!("{f}: the entry at bit {bit} lies outside the {bytes} bytes of sync manager {sm}'s data (a sync manager holds at most 65535 bytes); map fewer entries");
        return errno::EINVAL;
    }
    let base = d.register(sc, s.attached, sm, dir, bytes);
    let byte = base + (bit / 8) as usize;
    let Ok(offset) = i32::try_from(byte) else {
        log!("{f}: the domain has grown to {byte} bytes, more than an offset can say");
        return errno::ENOMEM;
    };
    let bitpos = bit % 8;
    if bit_position.is_null() {
        if bitpos != 0 {
            log!("{f}: the entry is not byte-aligned (bit {bitpos} of byte {byte}); pass bit_position to get it");
            return errno::EINVAL;
        }
    } else {
        // SAFETY: non-NULL, writable per the API contract.
        unsafe { *bit_position = bitpos };
    }
    offset
}

/// Register PDO entry `index:subindex` in `domain`; returns its byte offset or < 0.
///
/// # Safety
/// `sc`, `domain` NULL or live; `bit_position` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_reg_pdo_entry(
    sc: *mut SlaveConfig,
    entry_index: u16,
    entry_subindex: u8,
    domain: *mut Domain,
    bit_position: *mut u32,
) -> i32 {
    const F: &str = "ecrt_slave_config_reg_pdo_entry";
    guard(F, errno::EINVAL, || {
        register(F, sc, domain, bit_position, |s| {
            s.find_entry(entry_index, entry_subindex).ok_or_else(|| {
                format!(
                    "PDO entry 0x{entry_index:04X}:{entry_subindex:02X} is not mapped in any PDO of {}{}",
                    s.name(),
                    if s.attached.is_none() { " (unattached: give its PDOs with ecrt_slave_config_pdos)" } else { "" }
                )
            })
        })
    })
}

/// Register the entry at (sync manager, PDO position, entry position) in `domain`.
///
/// # Safety
/// `sc`, `domain` NULL or live; `bit_position` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_slave_config_reg_pdo_entry_pos(
    sc: *mut SlaveConfig,
    sync_index: u8,
    pdo_pos: u32,
    entry_pos: u32,
    domain: *mut Domain,
    bit_position: *mut u32,
) -> i32 {
    const F: &str = "ecrt_slave_config_reg_pdo_entry_pos";
    guard(F, errno::EINVAL, || {
        if let Err(e) = check::sync_index(F, sync_index, errno::EINVAL) {
            return e;
        }
        register(F, sc, domain, bit_position, |s| {
            let sync = s.config.sync.iter().find(|x| x.index == sync_index);
            let missing = || {
                format!(
                    "{} has no entry {entry_pos} in PDO {pdo_pos} of sync manager {sync_index}",
                    s.name()
                )
            };
            let sync = sync.ok_or_else(missing)?;
            let pdo = sync.pdos.get(pdo_pos as usize).ok_or_else(missing)?;
            if entry_pos as usize >= pdo.entries.len() {
                return Err(missing());
            }
            let before: u32 = sync.pdos[..pdo_pos as usize]
                .iter()
                .map(PdoConfig::bits)
                .sum::<u32>()
                + pdo.entries[..entry_pos as usize]
                    .iter()
                    .map(|e| e.bits as u32)
                    .sum::<u32>();
            Ok((sync_index, sync.direction, before, sync.bytes() as usize))
        })
    })
}
