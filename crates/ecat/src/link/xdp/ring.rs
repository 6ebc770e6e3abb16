//! The AF_XDP rings (fill, completion, RX, TX): producer/consumer indices in shared memory.

use super::*;

// ---------------------------------------------------------------------------------------------
// Rings.

/// One AF_XDP ring mapped from the kernel: producer, consumer, flags words and descriptors.
#[derive(Debug)]
pub(super) struct XRing {
    pub(super) map: *mut u8,
    pub(super) map_len: usize,
    pub(super) producer: *const AtomicU32,
    pub(super) consumer: *const AtomicU32,
    pub(super) flags: *const AtomicU32,
    pub(super) desc: *mut u8,
    /// Our own index (producer for fill/TX, consumer for completion/RX).
    pub(super) local: u32,
}

impl XRing {
    /// Map a ring of `RING_SIZE` descriptors of `desc_size` bytes at page offset `pgoff`.
    pub(super) fn map(
        fd: &OwnedFd,
        off: &libc::xdp_ring_offset,
        desc_size: usize,
        pgoff: u64,
    ) -> io::Result<XRing> {
        let map_len = off.desc as usize + RING_SIZE as usize * desc_size;
        // SAFETY: a fresh shared mapping of the socket's ring; checked for MAP_FAILED.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                pgoff as libc::off_t,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let map = map as *mut u8;
        // SAFETY: the kernel's offsets lie inside the mapping it sized for them; the words are
        // 4-byte aligned u32s that the kernel also accesses atomically.
        unsafe {
            Ok(XRing {
                map,
                map_len,
                producer: map.add(off.producer as usize) as *const AtomicU32,
                consumer: map.add(off.consumer as usize) as *const AtomicU32,
                flags: map.add(off.flags as usize) as *const AtomicU32,
                desc: map.add(off.desc as usize),
                local: 0,
            })
        }
    }

    pub(super) fn producer(&self) -> &AtomicU32 {
        // SAFETY: valid for the life of the mapping, which lives as long as `self`.
        unsafe { &*self.producer }
    }
    pub(super) fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { &*self.consumer }
    }
    pub(super) fn needs_wakeup(&self) -> bool {
        // SAFETY: as for `producer`.
        unsafe { &*self.flags }.load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }
    /// Pointer to descriptor `i` (any free-running index) of `size` bytes.
    pub(super) fn slot(&self, i: u32, size: usize) -> *mut u8 {
        // SAFETY: the masked index is < RING_SIZE, inside the descriptor array.
        unsafe { self.desc.add((i & (RING_SIZE - 1)) as usize * size) }
    }
    /// Produce a u64 address (fill ring).
    pub(super) fn push_addr(&mut self, addr: u64) {
        // SAFETY: descriptor slots of the fill ring are 8-byte aligned u64s; the slot at our
        // producer index is ours until we publish it.
        unsafe { (self.slot(self.local, 8) as *mut u64).write(addr) };
        self.local = self.local.wrapping_add(1);
        self.producer().store(self.local, Ordering::Release);
    }
    /// Entries the kernel has produced that we have not consumed yet.
    pub(super) fn available(&self) -> u32 {
        self.producer()
            .load(Ordering::Acquire)
            .wrapping_sub(self.local)
    }
    /// Free entries for us to produce into.
    pub(super) fn free(&self) -> u32 {
        RING_SIZE
            - self
                .local
                .wrapping_sub(self.consumer().load(Ordering::Acquire))
    }
}

impl Drop for XRing {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `map`, unmapped once.
        unsafe {
            libc::munmap(self.map as *mut libc::c_void, self.map_len);
        }
    }
}
