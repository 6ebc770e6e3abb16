//! `ec_domain_t`: a process image laid out IgH's way, exchanged through an ecat domain.
//!
//! Registration assigns offsets at once, as IgH does: the first entry registered from a
//! (slave configuration, sync manager) pair appends that sync manager's whole data to the
//! image, and later entries of the same pair land inside it. At activation ecat lays its
//! domain of the same number out at these offsets when it can ([`crate::share`]): the domain
//! then *is* ecat's image and the cyclic calls copy nothing. Otherwise each region is matched
//! with the region ecat's layout gave the same SubDevice and sync manager in that domain, and
//! the cyclic calls copy inputs out of (`process`) and outputs into (`queue`) ecat's image
//! with one `memcpy` per region, allocation-free. Regions of an unattached configuration have
//! no counterpart: they stay zero and their expected working counter is added, so the domain
//! reports incomplete, as IgH's does.
//!
//! Memory layout: at 1 kHz every cycle starts with cold caches, so what `ecrt_domain_process`
//! and `ecrt_domain_queue` read of a shared domain (its master, number, image, state, missing
//! working counter and flags) lies in one 64-byte line: [`Domain`] is 64-byte aligned and
//! `repr(C)` with those fields first, checked at compile time. The copy lists of a copying
//! domain and the registration data follow.

use crate::abi::{DomainState, PdoEntryReg};
use crate::ffi::{errno, guard};
use crate::log;
use crate::master::Master;
use crate::slave_config::SlaveConfig;
use ecat::config::Direction;

pub use crate::cyclic::{
    ecrt_domain_data, ecrt_domain_process, ecrt_domain_queue, ecrt_domain_state,
};

/// One sync manager's data in the image.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    /// The configuration it belongs to.
    pub sc: *const SlaveConfig,
    /// Ring position of the SubDevice, if attached.
    pub position: Option<usize>,
    /// Sync manager.
    pub sm: u8,
    /// Direction.
    pub dir: Direction,
    /// Offset in the image.
    pub offset: usize,
    /// Bytes.
    pub len: usize,
}

/// A copy between this image and ecat's domain image.
#[derive(Debug, Clone, Copy)]
pub struct Copy {
    /// Offset in this image.
    pub here: usize,
    /// Offset in ecat's image.
    pub there: usize,
    /// Bytes.
    pub len: usize,
}

/// `ec_domain_t`. 64-byte aligned, `repr(C)`: the fields the cyclic calls read share the
/// first cache line (see the module documentation).
#[repr(C, align(64))]
pub struct Domain {
    /// The owning master.
    pub master: *mut Master,
    /// Domain number (also the number of ecat's domain that carries it).
    pub index: usize,
    /// The image when not shared (allocated at activation).
    pub image: Vec<u8>,
    /// Last evaluated state.
    pub state: DomainState,
    /// Working counter the unattached regions would add.
    pub missing_wkc: u32,
    /// The image is ecat's (laid out at these offsets, see [`crate::share`]); set at
    /// activation.
    pub shared: bool,
    /// The "not activated yet" line was logged (once per domain).
    pub(crate) warned: bool,
    /// Output copies (here → ecat).
    pub outputs: Vec<Copy>,
    /// Input copies (ecat → here).
    pub inputs: Vec<Copy>,
    /// Regions in registration order.
    pub regions: Vec<Region>,
    /// Image size.
    pub size: usize,
}

// What a cycle reads of a shared domain ends within its first cache line.
const _: () = assert!(std::mem::offset_of!(Domain, warned) < 64);

impl Domain {
    /// A new, empty domain.
    pub fn new(master: *mut Master, index: usize) -> Domain {
        Domain {
            master,
            index,
            regions: Vec::new(),
            size: 0,
            shared: false,
            image: Vec::new(),
            outputs: Vec::new(),
            inputs: Vec::new(),
            missing_wkc: 0,
            state: DomainState::default(),
            warned: false,
        }
    }

    /// The region of (configuration, sync manager), appended if new; returns its offset.
    pub fn register(
        &mut self,
        sc: *const SlaveConfig,
        position: Option<usize>,
        sm: u8,
        dir: Direction,
        len: usize,
    ) -> usize {
        if let Some(r) = self.regions.iter().find(|r| r.sc == sc && r.sm == sm) {
            return r.offset;
        }
        let offset = self.size;
        self.regions.push(Region {
            sc,
            position,
            sm,
            dir,
            offset,
            len,
        });
        self.size += len;
        offset
    }

    /// The owning master.
    pub(crate) fn master<'a>(&self) -> &'a Master {
        // SAFETY: a domain never outlives its master (freed by it); the master is a separate
        // allocation, so this reference does not alias the domain.
        unsafe { &*self.master }
    }
}

/// Register a list of PDO entries (ends with a record whose index is 0).
///
/// # Safety
/// `domain` NULL or live; `regs` NULL or a list ending with an index-0 record whose `offset`
/// pointers are writable and `bit_position` pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ecrt_domain_reg_pdo_entry_list(
    domain: *mut Domain,
    regs: *const PdoEntryReg,
) -> i32 {
    const F: &str = "ecrt_domain_reg_pdo_entry_list";
    guard(F, errno::EINVAL, || {
        // SAFETY: NULL or live (API contract).
        let Some(d) = (unsafe { crate::check::domain(domain, F) }) else {
            return errno::EINVAL;
        };
        if regs.is_null() {
            log!("{F}: pdo_entry_regs is NULL");
            return errno::EINVAL;
        }
        let master = d.master;
        let mut i = 0;
        loop {
            // SAFETY: the list goes on until the index-0 record (API contract).
            let r: PdoEntryReg = unsafe { *regs.add(i) };
            i += 1;
            if r.index == 0 {
                return 0;
            }
            if r.offset.is_null() {
                log!(
                    "{F}: record {} (0x{:04X}:{:02X}) has a NULL offset pointer",
                    i - 1,
                    r.index,
                    r.subindex
                );
                return errno::EINVAL;
            }
            // SAFETY: master is live (the domain's owner).
            let sc = unsafe {
                crate::master::ecrt_master_slave_config(
                    master,
                    r.alias,
                    r.position,
                    r.vendor_id,
                    r.product_code,
                )
            };
            if sc.is_null() {
                return errno::ENOENT;
            }
            // SAFETY: live sc and domain; bit_position NULL or writable (API contract).
            let off = unsafe {
                crate::pdo_config::ecrt_slave_config_reg_pdo_entry(
                    sc,
                    r.index,
                    r.subindex,
                    domain,
                    r.bit_position,
                )
            };
            if off < 0 {
                return off;
            }
            // SAFETY: non-NULL, writable (API contract).
            unsafe { *r.offset = off as u32 };
        }
    })
}

/// Size of the domain's image.
///
/// # Safety
/// `domain` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn ecrt_domain_size(domain: *const Domain) -> usize {
    guard("ecrt_domain_size", 0, || {
        // SAFETY: IgH's threading rule; the pointer itself is checked.
        unsafe { crate::check::domain(domain as *mut Domain, "ecrt_domain_size") }
            .map_or(0, |d| d.size)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_in_registration_order_and_reused() {
        let mut d = Domain::new(std::ptr::null_mut(), 0);
        // Two distinct addresses standing for two configurations (never dereferenced).
        let pair = [0u64; 2];
        let (a, b) = (
            &pair[0] as *const u64 as *const SlaveConfig,
            &pair[1] as *const u64 as *const SlaveConfig,
        );
        assert_eq!(d.register(a, Some(3), 2, Direction::Output, 4), 0);
        assert_eq!(d.register(b, Some(4), 3, Direction::Input, 6), 4);
        assert_eq!(
            d.register(a, Some(3), 2, Direction::Output, 4),
            0,
            "same SM: same region"
        );
        assert_eq!(d.register(a, Some(3), 3, Direction::Input, 2), 10);
        assert_eq!(d.size, 12);
        assert_eq!(d.regions.len(), 3);
    }
}
