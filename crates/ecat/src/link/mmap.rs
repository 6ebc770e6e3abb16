//! AF_PACKET link with memory-mapped rings (`mmap:IFACE`): frames are exchanged with the
//! kernel through two rings shared with it, so receiving a waiting frame costs no syscall and
//! sending costs one argument-less `send` to kick the transmit ring.
//!
//! Design:
//! - **TPACKET_V2, not V3.** V3 hands frames to user space a *block* at a time: a block is
//!   released to us only when it is full or its retire timer (milliseconds) fires, which suits
//!   capture throughput but adds up to a timer period of latency to every EtherCAT round trip.
//!   V2 gives every frame its own slot and status word, released the moment it is written.
//!   V2 is also the layout the transmit ring uses in every kernel.
//! - **One socket, two rings, one `mmap`:** the RX ring (PACKET_RX_RING) comes first in the
//!   mapping, the TX ring (PACKET_TX_RING) right after it. Each ring is `BLOCKS` blocks of one
//!   page holding two 2 KiB slots, so slot `i` lives at `i * FRAME_SIZE` (see [`Ring`]).
//! - The socket is created with protocol 0 (it queues nothing), the rings are set up, and only
//!   then it is bound to the interface and EtherType 0x88A4, so no frame lands in a half-built
//!   socket. PACKET_QDISC_BYPASS skips the queueing discipline on transmit.
//! - **Receive:** the slot at our read index is ours when its status has TP_STATUS_USER; we
//!   copy the frame out, hand the slot back (status TP_STATUS_KERNEL) and advance. Frames we
//!   sent ourselves (PACKET_OUTGOING, in the slot's `sockaddr_ll`) are skipped — and
//!   PACKET_IGNORE_OUTGOING keeps the kernel from queueing them at all where it can. With
//!   nothing waiting, [`RecvMode::Block`] sleeps in `ppoll` until the deadline, and
//!   [`RecvMode::BusyPoll`] re-reads the status word until the deadline (no syscalls at all).
//! - **Transmit:** the slot at our write index must be TP_STATUS_AVAILABLE (the kernel sets it
//!   back once the frame has left); we copy the frame in after the slot header, set
//!   TP_STATUS_SEND_REQUEST and call `send(fd, NULL, 0, MSG_DONTWAIT)`, which transmits every
//!   requested slot without waiting for completion. PACKET_LOSS makes the kernel mark a
//!   malformed slot TP_STATUS_WRONG_FORMAT and go on instead of stopping the ring.
//! - Status words are read with acquire and written with release ordering: the kernel writes
//!   the frame before the status, and must see our frame before our status.
//! - Nothing is allocated per frame; the mapping is released on drop.

use super::raw::{check_up, set_busy_poll, socket_error, wait_fd};
use super::{iface, Link, LinkCounters, LinkOptions, RecvMode};
use crate::error::{Error, Result};
use ecat_wire::ETHERTYPE_ETHERCAT;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

// linux/if_packet.h
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_TX_RING: libc::c_int = 13;
const PACKET_LOSS: libc::c_int = 14;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_AVAILABLE: u32 = 0;
const TP_STATUS_SEND_REQUEST: u32 = 1;
const TP_STATUS_WRONG_FORMAT: u32 = 4;

/// `struct tpacket_req`.
#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

/// `struct tpacket2_hdr` (32 bytes), the header at the start of every V2 slot.
#[repr(C)]
struct Tpacket2Hdr {
    status: u32,
    len: u32,
    snaplen: u32,
    mac: u16,
    net: u16,
    sec: u32,
    nsec: u32,
    vlan_tci: u16,
    vlan_tpid: u16,
    padding: [u8; 4],
}

/// TPACKET_ALIGN(sizeof(struct tpacket2_hdr)): where the `sockaddr_ll` of a received slot
/// starts, and where a transmitted frame starts (without PACKET_TX_HAS_OFF).
const HDR_ALIGNED: usize = (std::mem::size_of::<Tpacket2Hdr>() + 15) & !15;
/// Offset of `sll_pkttype` in `struct sockaddr_ll`.
const SLL_PKTTYPE_OFFSET: usize = 10;

/// Slot size: room for a full Ethernet frame plus the slot header.
const FRAME_SIZE: usize = 2048;
/// Block size: one page.
const BLOCK_SIZE: usize = 4096;
/// Blocks per ring (128 slots each way).
const BLOCKS: usize = 64;

/// Index arithmetic of one ring of equal slots, in blocks that each hold a whole number of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ring {
    /// Bytes per block.
    pub block_size: usize,
    /// Bytes per slot.
    pub frame_size: usize,
    /// Number of blocks.
    pub blocks: usize,
}

impl Ring {
    /// Slots per block.
    pub fn frames_per_block(&self) -> usize {
        self.block_size / self.frame_size
    }
    /// Slots in the ring.
    pub fn frames(&self) -> usize {
        self.frames_per_block() * self.blocks
    }
    /// Bytes the ring occupies in the mapping.
    pub fn bytes(&self) -> usize {
        self.block_size * self.blocks
    }
    /// Byte offset of slot `i` from the start of the ring (slots never straddle blocks).
    pub fn offset(&self, i: usize) -> usize {
        let fpb = self.frames_per_block();
        (i / fpb) * self.block_size + (i % fpb) * self.frame_size
    }
    /// The slot after `i`, wrapping.
    pub fn next(&self, i: usize) -> usize {
        if i + 1 == self.frames() {
            0
        } else {
            i + 1
        }
    }
    /// The largest frame a transmit slot holds.
    pub fn max_tx_frame(&self) -> usize {
        self.frame_size - HDR_ALIGNED
    }
}

const RING: Ring = Ring {
    block_size: BLOCK_SIZE,
    frame_size: FRAME_SIZE,
    blocks: BLOCKS,
};

/// An AF_PACKET socket with TPACKET_V2 RX and TX rings, bound to one interface and 0x88A4.
#[derive(Debug)]
pub struct MmapSocket {
    fd: OwnedFd,
    map: *mut u8,
    map_len: usize,
    rx_next: usize,
    tx_next: usize,
    name: String,
    ifname: String,
    mac: [u8; 6],
    mode: RecvMode,
    counters: LinkCounters,
    kernel_drops: u64,
}

// SAFETY: the mapping is owned by this value alone (no other handle to it exists in the
// process), so moving the value to another thread moves exclusive access with it.
unsafe impl Send for MmapSocket {}

fn io_err(op: &'static str, iface: &str) -> Error {
    Error::Io {
        op,
        iface: iface.to_string(),
        source: io::Error::last_os_error(),
    }
}

fn setsockopt<T>(fd: &OwnedFd, level: libc::c_int, opt: libc::c_int, val: &T) -> bool {
    // SAFETY: `val` is a valid, initialised T and the length is its size.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            opt,
            val as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as u32,
        ) == 0
    }
}

impl MmapSocket {
    /// Open a ring socket on `ifname` (receive mode Block).
    pub fn open(ifname: &str) -> Result<MmapSocket> {
        Self::open_with(ifname, LinkOptions::default())
    }

    /// Open a ring socket on `ifname` with options. Errors name the interface and say how to
    /// fix missing permissions or a down interface.
    pub fn open_with(ifname: &str, opts: LinkOptions) -> Result<MmapSocket> {
        let ifindex = iface::index(ifname)?;
        // SAFETY: plain syscall; the returned descriptor is checked before use.
        let fd = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if fd < 0 {
            return Err(socket_error(
                io::Error::last_os_error(),
                "opening a packet socket",
                ifname,
            ));
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        if !setsockopt(&fd, libc::SOL_PACKET, PACKET_VERSION, &TPACKET_V2) {
            return Err(io_err("selecting TPACKET_V2 on the packet socket", ifname));
        }
        let one: libc::c_int = 1;
        // Optimisations with a fallback: failure is harmless.
        setsockopt(&fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, &one);
        setsockopt(&fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &one);
        setsockopt(&fd, libc::SOL_PACKET, PACKET_LOSS, &one);
        let req = TpacketReq {
            block_size: RING.block_size as u32,
            block_nr: RING.blocks as u32,
            frame_size: RING.frame_size as u32,
            frame_nr: RING.frames() as u32,
        };
        if !setsockopt(&fd, libc::SOL_PACKET, PACKET_RX_RING, &req) {
            return Err(io_err(
                "setting up the receive ring (PACKET_RX_RING)",
                ifname,
            ));
        }
        if !setsockopt(&fd, libc::SOL_PACKET, PACKET_TX_RING, &req) {
            return Err(io_err(
                "setting up the transmit ring (PACKET_TX_RING)",
                ifname,
            ));
        }
        let map_len = 2 * RING.bytes();
        // SAFETY: a fresh shared mapping of the socket's rings; checked for MAP_FAILED.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(io_err("mapping the packet rings", ifname));
        }
        // From here on, Drop unmaps.
        let me = MmapSocket {
            fd,
            map: map as *mut u8,
            map_len,
            rx_next: 0,
            tx_next: 0,
            name: format!("mmap:{ifname}"),
            ifname: ifname.to_string(),
            mac: iface::mac(ifname),
            mode: opts.recv_mode,
            counters: LinkCounters::default(),
            kernel_drops: 0,
        };
        // SAFETY: sockaddr_ll is plain data; zeroed is a valid starting value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETHERTYPE_ETHERCAT.to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: `sll` is a valid sockaddr_ll and the length matches it.
        let rc = unsafe {
            libc::bind(
                me.fd.as_raw_fd(),
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if rc < 0 {
            return Err(io_err("binding the packet socket", ifname));
        }
        if me.mode == RecvMode::BusyPoll {
            set_busy_poll(me.fd.as_raw_fd());
        }
        check_up(ifname)?;
        Ok(me)
    }

    /// Pointer to RX slot `i`.
    fn rx_slot(&self, i: usize) -> *mut u8 {
        // SAFETY: `i` < RING.frames(), so the offset is inside the RX half of the mapping.
        unsafe { self.map.add(RING.offset(i)) }
    }

    /// Pointer to TX slot `i`.
    fn tx_slot(&self, i: usize) -> *mut u8 {
        // SAFETY: `i` < RING.frames(), so the offset is inside the TX half of the mapping.
        unsafe { self.map.add(RING.bytes() + RING.offset(i)) }
    }

    /// The status word of the slot at `p`.
    fn status(p: *mut u8) -> &'static AtomicU32 {
        // SAFETY: every slot starts with a 4-byte aligned u32 status word that lives as long as
        // the mapping; the kernel and we only access it atomically. The 'static lifetime never
        // escapes the methods of the socket that owns the mapping.
        unsafe { &*(p as *const AtomicU32) }
    }

    /// Take the frame in the next RX slot, if the kernel has filled it. Returns the length
    /// copied (`Some(0)` for a frame that is not ours to return, already counted).
    fn take_rx(&mut self, buf: &mut [u8]) -> Option<usize> {
        let slot = self.rx_slot(self.rx_next);
        let status = Self::status(slot);
        if status.load(Ordering::Acquire) & TP_STATUS_USER == 0 {
            return None;
        }
        // SAFETY: the slot is ours until we hand it back; the header is at its start, the
        // sockaddr_ll at HDR_ALIGNED, and the kernel keeps mac + snaplen inside the slot.
        let (n, ours) = unsafe {
            let hdr = &*(slot as *const Tpacket2Hdr);
            let pkttype = *slot.add(HDR_ALIGNED + SLL_PKTTYPE_OFFSET);
            let mac = hdr.mac as usize;
            let len = (hdr.snaplen as usize)
                .min(buf.len())
                .min(RING.frame_size.saturating_sub(mac));
            std::ptr::copy_nonoverlapping(slot.add(mac), buf.as_mut_ptr(), len);
            (len, pkttype == libc::PACKET_OUTGOING)
        };
        status.store(TP_STATUS_KERNEL, Ordering::Release);
        self.rx_next = RING.next(self.rx_next);
        let ecat = n >= 14 && buf[12..14] == ETHERTYPE_ETHERCAT.to_be_bytes();
        if ours || !ecat {
            self.counters.rx_ignored += 1;
            return Some(0);
        }
        self.counters.rx_frames += 1;
        Some(n)
    }

    /// Ask the kernel to transmit every slot marked TP_STATUS_SEND_REQUEST.
    fn kick(&mut self) -> Result<()> {
        loop {
            // SAFETY: a send without data: the kernel takes the frames from the TX ring.
            let rc =
                unsafe { libc::send(self.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
            if rc >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                // The device queue is busy; the slots stay requested for the next kick.
                io::ErrorKind::WouldBlock => return Ok(()),
                _ => {
                    return Err(Error::Io {
                        op: "sending a frame",
                        iface: self.ifname.clone(),
                        source: e,
                    })
                }
            }
        }
    }
}

impl Drop for MmapSocket {
    fn drop(&mut self) {
        // SAFETY: `map`/`map_len` are exactly the mapping made in `open_with`, unmapped once.
        unsafe {
            libc::munmap(self.map as *mut libc::c_void, self.map_len);
        }
    }
}

impl Link for MmapSocket {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        if frame.len() > RING.max_tx_frame() {
            self.counters.tx_errors += 1;
            return Err(Error::Invalid(format!(
                "frame of {} bytes does not fit a transmit slot on {} ({} bytes at most)",
                frame.len(),
                self.name,
                RING.max_tx_frame()
            )));
        }
        let slot = self.tx_slot(self.tx_next);
        let status = Self::status(slot);
        let mut waited = None;
        loop {
            match status.load(Ordering::Acquire) {
                TP_STATUS_AVAILABLE => break,
                TP_STATUS_WRONG_FORMAT => {
                    // An earlier frame in this slot was refused; it is counted and the slot
                    // reused.
                    self.counters.tx_errors += 1;
                    break;
                }
                _ => {
                    // The ring is full of frames still in flight: push them and wait a little.
                    let start = *waited.get_or_insert_with(Instant::now);
                    if start.elapsed() > Duration::from_millis(100) {
                        self.counters.tx_errors += 1;
                        return Err(Error::Io {
                            op: "sending a frame (transmit ring full)",
                            iface: self.ifname.clone(),
                            source: io::Error::from(io::ErrorKind::WouldBlock),
                        });
                    }
                    self.kick()?;
                    std::hint::spin_loop();
                }
            }
        }
        // SAFETY: the slot is AVAILABLE, so it is ours; the frame fits after the header
        // (checked above) and the header fields are plain data at the slot's start.
        unsafe {
            std::ptr::copy_nonoverlapping(frame.as_ptr(), slot.add(HDR_ALIGNED), frame.len());
            let hdr = slot as *mut Tpacket2Hdr;
            (*hdr).len = frame.len() as u32;
            (*hdr).snaplen = frame.len() as u32;
        }
        status.store(TP_STATUS_SEND_REQUEST, Ordering::Release);
        self.tx_next = RING.next(self.tx_next);
        if let Err(e) = self.kick() {
            self.counters.tx_errors += 1;
            return Err(e);
        }
        self.counters.tx_frames += 1;
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        loop {
            match self.take_rx(buf) {
                Some(0) => continue,
                Some(n) => return Ok(Some(n)),
                None => {}
            }
            match (deadline, self.mode) {
                (Some(d), RecvMode::BusyPoll) if Instant::now() < d => std::hint::spin_loop(),
                (Some(d), RecvMode::Block)
                    if wait_fd(self.fd.as_raw_fd(), libc::POLLIN, d, &self.ifname)? => {}
                _ => return Ok(None),
            }
        }
    }

    fn mac(&self) -> [u8; 6] {
        self.mac
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn counters(&self) -> LinkCounters {
        self.counters
    }

    fn kernel_drops(&mut self) -> Option<u64> {
        self.kernel_drops += super::raw::packet_drops(self.fd.as_raw_fd())?;
        Some(self.kernel_drops)
    }

    fn describe(&self) -> String {
        let mode = self.mode.describe_suffix();
        format!(
            "packet socket with TPACKET_V2 rings on {} ({} slots each way){mode}",
            self.ifname,
            RING.frames()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout() {
        assert_eq!(std::mem::size_of::<Tpacket2Hdr>(), 32);
        assert_eq!(HDR_ALIGNED, 32);
        assert_eq!(std::mem::size_of::<TpacketReq>(), 16);
    }

    #[test]
    fn ring_index_math() {
        assert_eq!(RING.frames_per_block(), 2);
        assert_eq!(RING.frames(), 128);
        assert_eq!(RING.bytes(), 64 * 4096);
        assert_eq!(RING.offset(0), 0);
        assert_eq!(RING.offset(1), 2048);
        assert_eq!(RING.offset(2), 4096);
        assert_eq!(RING.offset(127), 127 * 2048);
        assert_eq!(RING.next(126), 127);
        assert_eq!(RING.next(127), 0);
        assert!(RING.max_tx_frame() >= 1514);
        // A block size that is not a multiple of the slot size leaves a gap per block.
        let r = Ring {
            block_size: 4096,
            frame_size: 1536,
            blocks: 3,
        };
        assert_eq!(r.frames(), 6);
        assert_eq!(r.offset(1), 1536);
        assert_eq!(r.offset(2), 4096);
        assert_eq!(r.offset(5), 2 * 4096 + 1536);
        for i in 0..r.frames() {
            assert!(r.offset(i) + r.frame_size <= r.bytes());
        }
    }
}
