//! What the master knows about each SubDevice: `ecrt_master_get_slave`, and the sync
//! managers, PDOs and entries of its current PDO configuration (as found over CoE or in the
//! SII at the last scan; after activation, the configuration the runtime uses).

use crate::abi::{dir, port_desc, PdoEntryInfo, PdoInfo, SlaveInfo, SlavePort, SyncInfo};
use crate::ffi::{arg_mut, errno, guard};
use crate::log;
use crate::master::{Inner, Master, Phase};
use ecat::config::{Direction, SubDeviceConfig};
use ecat_wire::register::PortType;

fn config_of(inner: &Inner, p: usize) -> Option<&SubDeviceConfig> {
    match &inner.phase {
        Phase::Active(rt) => rt
            .supervisor()
            .config(p)
            .filter(|c| !c.sync.is_empty())
            .or(inner.defaults.get(p)),
        _ => inner.defaults.get(p),
    }
}

fn check(f: &str, inner: &Inner, position: u16) -> Option<usize> {
    let n = inner.subdevices.len();
    if (position as usize) < n {
        Some(position as usize)
    } else {
        log!("{f}: there is no slave at position {position} (the bus has {n})");
        None
    }
}

/// Information about the SubDevice at `slave_position`.
///
/// # Safety
/// `master` NULL or live; `slave_info` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_get_slave(
    master: *mut Master,
    slave_position: u16,
    slave_info: *mut SlaveInfo,
) -> i32 {
    const F: &str = "ecrt_master_get_slave";
    guard(F, errno::EINVAL, || {
        // SAFETY: the master pointer is checked; the out-parameter is NULL or writable (API contract).
        let Some((m, out)) = (unsafe { crate::check::master(master, F) })
            .and_then(|x| unsafe { arg_mut(slave_info, F, "slave_info") }.map(|y| (x, y)))
        else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        let Some(p) = check(F, inner, slave_position) else {
            return errno::ENOENT;
        };
        let s = &inner.subdevices[p];
        let al = match &inner.phase {
            Phase::Active(rt) => rt
                .supervisor()
                .states()
                .nth(p)
                .map_or(s.al_status, |x| x.status),
            _ => s.al_status,
        };
        let mut ports = [SlavePort::default(); 4];
        for (i, port) in ports.iter_mut().enumerate() {
            port.desc = match s.ports[i] {
                Some(PortType::Ebus) => port_desc::EBUS,
                Some(PortType::Mii) => port_desc::MII,
                Some(PortType::NotConfigured) => port_desc::NOT_CONFIGURED,
                _ => port_desc::NOT_IMPLEMENTED,
            };
            port.link_up = u8::from(s.open_ports()[i]);
            if let Some(dc) = &s.dc {
                port.receive_time = dc.port_times[i];
            }
        }
        let mut name = [0 as std::os::raw::c_char; 64];
        for (d, b) in name.iter_mut().zip(s.name.bytes().take(63)) {
            *d = b as std::os::raw::c_char;
        }
        *out = SlaveInfo {
            position: p as u16,
            vendor_id: s.identity.vendor_id,
            product_code: s.identity.product_code,
            revision_number: s.identity.revision,
            serial_number: s.identity.serial,
            alias: s.alias,
            current_on_ebus: s.ebus_current_ma,
            ports,
            al_state: al.state_bits(),
            error_flag: u8::from(al.error()),
            sync_count: s.sync_managers.len() as u8,
            sdo_count: 0,
            name,
        };
        0
    })
}

/// Sync manager `sync_index` of the SubDevice at `slave_position` (`pdos` left NULL).
///
/// # Safety
/// `master` NULL or live; `sync` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_get_sync_manager(
    master: *mut Master,
    slave_position: u16,
    sync_index: u8,
    sync: *mut SyncInfo,
) -> i32 {
    const F: &str = "ecrt_master_get_sync_manager";
    guard(F, errno::EINVAL, || {
        // SAFETY: the master pointer is checked; the out-parameter is NULL or writable (API contract).
        let Some((m, out)) = (unsafe { crate::check::master(master, F) })
            .and_then(|x| unsafe { arg_mut(sync, F, "sync") }.map(|y| (x, y)))
        else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        let Some(p) = check(F, inner, slave_position) else {
            return errno::EINVAL;
        };
        let s = &inner.subdevices[p];
        if sync_index as usize >= s.sync_managers.len() {
            log!(
                "{F}: {} has no sync manager {sync_index} ({} in its SII)",
                s.who(),
                s.sync_managers.len()
            );
            return errno::ENOENT;
        }
        let c = config_of(inner, p).and_then(|c| c.sync.iter().find(|x| x.index == sync_index));
        let d = match (
            c.map(|c| c.direction),
            s.sync_managers[sync_index as usize].kind,
        ) {
            (Some(Direction::Output), _) | (None, 1 | 3) => dir::OUTPUT,
            (Some(Direction::Input), _) | (None, 2 | 4) => dir::INPUT,
            _ => dir::INVALID,
        };
        *out = SyncInfo {
            index: sync_index,
            dir: d,
            n_pdos: c.map_or(0, |c| c.pdos.len() as u32),
            pdos: std::ptr::null(),
            watchdog_mode: 0,
        };
        0
    })
}

/// PDO `pos` assigned to sync manager `sync_index` (`entries` left NULL).
///
/// # Safety
/// `master` NULL or live; `pdo` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_get_pdo(
    master: *mut Master,
    slave_position: u16,
    sync_index: u8,
    pos: u16,
    pdo: *mut PdoInfo,
) -> i32 {
    const F: &str = "ecrt_master_get_pdo";
    guard(F, errno::EINVAL, || {
        // SAFETY: the master pointer is checked; the out-parameter is NULL or writable (API contract).
        let Some((m, out)) = (unsafe { crate::check::master(master, F) })
            .and_then(|x| unsafe { arg_mut(pdo, F, "pdo") }.map(|y| (x, y)))
        else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        let Some(p) = check(F, inner, slave_position) else {
            return errno::EINVAL;
        };
        let found = config_of(inner, p)
            .and_then(|c| c.sync.iter().find(|x| x.index == sync_index))
            .and_then(|s| s.pdos.get(pos as usize));
        match found {
            Some(x) => {
                *out = PdoInfo {
                    index: x.index,
                    n_entries: x.entries.len() as u32,
                    entries: std::ptr::null(),
                };
                0
            }
            None => {
                log!("{F}: slave {slave_position} has no PDO {pos} in sync manager {sync_index}");
                errno::ENOENT
            }
        }
    })
}

/// Entry `entry_pos` of PDO `pdo_pos` of sync manager `sync_index`.
///
/// # Safety
/// `master` NULL or live; `entry` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_master_get_pdo_entry(
    master: *mut Master,
    slave_position: u16,
    sync_index: u8,
    pdo_pos: u16,
    entry_pos: u16,
    entry: *mut PdoEntryInfo,
) -> i32 {
    const F: &str = "ecrt_master_get_pdo_entry";
    guard(F, errno::EINVAL, || {
        // SAFETY: the master pointer is checked; the out-parameter is NULL or writable (API contract).
        let Some((m, out)) = (unsafe { crate::check::master(master, F) })
            .and_then(|x| unsafe { arg_mut(entry, F, "entry") }.map(|y| (x, y)))
        else {
            return errno::EINVAL;
        };
        // SAFETY: IgH's threading rule.
        let inner = unsafe { m.inner() };
        let Some(p) = check(F, inner, slave_position) else {
            return errno::EINVAL;
        };
        let found = config_of(inner, p)
            .and_then(|c| c.sync.iter().find(|x| x.index == sync_index))
            .and_then(|s| s.pdos.get(pdo_pos as usize))
            .and_then(|x| x.entries.get(entry_pos as usize));
        match found {
            Some(e) => {
                *out = PdoEntryInfo {
                    index: e.index,
                    subindex: e.subindex,
                    bit_length: e.bits,
                };
                0
            }
            None => {
                log!("{F}: slave {slave_position} has no entry {entry_pos} in PDO {pdo_pos} of sync manager {sync_index}");
                errno::ENOENT
            }
        }
    })
}
