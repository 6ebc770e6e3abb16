//! The C types of `include/ecrt.h`, laid out exactly as a C compiler lays them out.
//!
//! Bit fields are modelled as the integer that holds them (GCC on little-endian targets
//! allocates bit fields from the least significant bit of their `unsigned int` unit); the C
//! tests check sizes and offsets against the header.

use std::os::raw::c_char;

/// `ec_master_state_t` / `ec_master_link_state_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct MasterState {
    /// `slaves_responding`.
    pub slaves_responding: u32,
    /// `al_states:4` (bits 0..3) and `link_up:1` (bit 4).
    pub bits: u32,
}

impl MasterState {
    /// Build from the fields.
    pub fn new(slaves: u32, al_states: u8, link_up: bool) -> MasterState {
        MasterState {
            slaves_responding: slaves,
            bits: (al_states as u32 & 0xF) | (u32::from(link_up) << 4),
        }
    }
}

/// `ec_slave_config_state_t`: `online:1`, `operational:1`, `al_state:4` in one unit.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SlaveConfigState {
    /// The bit fields.
    pub bits: u32,
}

impl SlaveConfigState {
    /// Build from the fields.
    pub fn new(online: bool, operational: bool, al_state: u8) -> SlaveConfigState {
        SlaveConfigState {
            bits: u32::from(online)
                | (u32::from(operational) << 1)
                | ((al_state as u32 & 0xF) << 2),
        }
    }
}

/// `ec_master_info_t`: `slave_count`, `link_up:1` (bit 0 of byte 4), `scan_busy` at byte 5,
/// `app_time` at byte 8.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct MasterInfo {
    /// `slave_count`.
    pub slave_count: u32,
    /// The byte holding `link_up:1`.
    pub link_up: u8,
    /// `scan_busy`.
    pub scan_busy: u8,
    /// Padding.
    pub _pad: [u8; 2],
    /// `app_time`.
    pub app_time: u64,
}

/// `ec_master_scan_progress_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ScanProgress {
    /// `slave_count`.
    pub slave_count: u32,
    /// `scan_index`.
    pub scan_index: u32,
}

/// `ec_slave_port_desc_t` values.
pub mod port_desc {
    /// `EC_PORT_NOT_IMPLEMENTED`.
    pub const NOT_IMPLEMENTED: u32 = 0;
    /// `EC_PORT_NOT_CONFIGURED`.
    pub const NOT_CONFIGURED: u32 = 1;
    /// `EC_PORT_EBUS`.
    pub const EBUS: u32 = 2;
    /// `EC_PORT_MII`.
    pub const MII: u32 = 3;
}

/// One port in `ec_slave_info_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SlavePort {
    /// `desc` (`ec_slave_port_desc_t`).
    pub desc: u32,
    /// `link.link_up`.
    pub link_up: u8,
    /// `link.loop_closed`.
    pub loop_closed: u8,
    /// `link.signal_detected`.
    pub signal_detected: u8,
    /// `receive_time`.
    pub receive_time: u32,
    /// `next_slave`.
    pub next_slave: u16,
    /// `delay_to_next_dc`.
    pub delay_to_next_dc: u32,
}

/// `ec_slave_info_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SlaveInfo {
    /// `position`.
    pub position: u16,
    /// `vendor_id`.
    pub vendor_id: u32,
    /// `product_code`.
    pub product_code: u32,
    /// `revision_number`.
    pub revision_number: u32,
    /// `serial_number`.
    pub serial_number: u32,
    /// `alias`.
    pub alias: u16,
    /// `current_on_ebus`.
    pub current_on_ebus: i16,
    /// `ports`.
    pub ports: [SlavePort; 4],
    /// `al_state`.
    pub al_state: u8,
    /// `error_flag`.
    pub error_flag: u8,
    /// `sync_count`.
    pub sync_count: u8,
    /// `sdo_count`.
    pub sdo_count: u16,
    /// `name`.
    pub name: [c_char; 64],
}

/// `ec_wc_state_t` values.
pub mod wc {
    /// `EC_WC_ZERO`.
    pub const ZERO: u32 = 0;
    /// `EC_WC_INCOMPLETE`.
    pub const INCOMPLETE: u32 = 1;
    /// `EC_WC_COMPLETE`.
    pub const COMPLETE: u32 = 2;
}

/// `ec_domain_state_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct DomainState {
    /// `working_counter`.
    pub working_counter: u32,
    /// `wc_state` (`ec_wc_state_t`).
    pub wc_state: u32,
    /// `redundancy_active`.
    pub redundancy_active: u32,
}

/// `ec_direction_t` values.
pub mod dir {
    /// `EC_DIR_INVALID`.
    pub const INVALID: u32 = 0;
    /// `EC_DIR_OUTPUT`.
    pub const OUTPUT: u32 = 1;
    /// `EC_DIR_INPUT`.
    pub const INPUT: u32 = 2;
}

/// `ec_pdo_entry_info_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct PdoEntryInfo {
    /// `index`.
    pub index: u16,
    /// `subindex`.
    pub subindex: u8,
    /// `bit_length`.
    pub bit_length: u8,
}

/// `ec_pdo_info_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PdoInfo {
    /// `index`.
    pub index: u16,
    /// `n_entries`.
    pub n_entries: u32,
    /// `entries`.
    pub entries: *const PdoEntryInfo,
}

/// `ec_sync_info_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SyncInfo {
    /// `index` (0xff ends a list).
    pub index: u8,
    /// `dir` (`ec_direction_t`).
    pub dir: u32,
    /// `n_pdos`.
    pub n_pdos: u32,
    /// `pdos`.
    pub pdos: *const PdoInfo,
    /// `watchdog_mode` (`ec_watchdog_mode_t`).
    pub watchdog_mode: u32,
}

/// `ec_pdo_entry_reg_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PdoEntryReg {
    /// `alias`.
    pub alias: u16,
    /// `position`.
    pub position: u16,
    /// `vendor_id`.
    pub vendor_id: u32,
    /// `product_code`.
    pub product_code: u32,
    /// `index` (0 ends the list).
    pub index: u16,
    /// `subindex`.
    pub subindex: u8,
    /// `offset`.
    pub offset: *mut u32,
    /// `bit_position`.
    pub bit_position: *mut u32,
}

/// `ec_request_state_t` values.
pub mod request {
    /// `EC_REQUEST_UNUSED`.
    pub const UNUSED: u32 = 0;
    /// `EC_REQUEST_BUSY`.
    pub const BUSY: u32 = 1;
    /// `EC_REQUEST_SUCCESS`.
    pub const SUCCESS: u32 = 2;
    /// `EC_REQUEST_ERROR`.
    pub const ERROR: u32 = 3;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_the_c_header() {
        assert_eq!(size_of::<MasterState>(), 8);
        assert_eq!(size_of::<MasterInfo>(), 16);
        assert_eq!(offset_of!(MasterInfo, scan_busy), 5);
        assert_eq!(size_of::<SlavePort>(), 20);
        assert_eq!(offset_of!(SlaveInfo, ports), 24);
        assert_eq!(offset_of!(SlaveInfo, al_state), 104);
        assert_eq!(offset_of!(SlaveInfo, sdo_count), 108);
        assert_eq!(offset_of!(SlaveInfo, name), 110);
        assert_eq!(size_of::<SlaveInfo>(), 176);
        assert_eq!(size_of::<SlaveConfigState>(), 4);
        assert_eq!(size_of::<DomainState>(), 12);
        assert_eq!(size_of::<SyncInfo>(), 32);
        assert_eq!(size_of::<PdoInfo>(), 16);
        assert_eq!(size_of::<PdoEntryReg>(), 32);
    }
}
