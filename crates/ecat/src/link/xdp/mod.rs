//! AF_XDP link (`xdp:IFACE`): EtherCAT frames are steered out of the driver's receive path by a
//! tiny XDP program into an AF_XDP socket, past the kernel network stack.
//!
//! Design:
//! - **No BPF library.** The few `bpf()` calls (map create/update, program load, link create)
//!   are made directly, and the XDP program is 16 hand-assembled eBPF instructions
//!   ([`program`]): if the frame holds an Ethernet header with EtherType 0x88A4, return
//!   `bpf_redirect_map(xsks, ctx->rx_queue_index, XDP_PASS)`, else `XDP_PASS`. The map is an
//!   XSKMAP keyed by receive queue holding our socket at key 0; on any other queue the lookup
//!   fails and the flags' fallback action XDP_PASS hands the frame to the kernel. A NIC with
//!   several queues should therefore be limited to one (`ethtool -L IFACE combined 1`) or
//!   steer 0x88A4 to queue 0. `bpf_redirect_map` is not a GPL-only helper, so the program
//!   carries the crate's own license string.
//! - **Attach** with `BPF_LINK_CREATE` (attach type BPF_XDP, kernel ≥ 5.9): the attachment
//!   belongs to the link file descriptor, so it is removed when the socket is dropped *and*
//!   when the process dies, with no netlink clean-up. [`XdpMode::Auto`] tries driver (native)
//!   mode first and falls back to generic (SKB) mode, saying so in [`Link::describe`].
//! - **UMEM:** 4096 chunks of 2 KiB in one anonymous mapping. The first half is lent to the
//!   kernel through the fill ring for receiving; each received chunk is copied out to the
//!   caller's buffer and handed straight back to the fill ring. The second half is for
//!   transmitting: a fixed-capacity free list (allocated once) from which `send` takes a chunk,
//!   and to which chunks return through the completion ring.
//! - **Rings** (fill, completion, RX, TX: 2048 entries each) are mapped at the offsets the
//!   kernel reports (`XDP_MMAP_OFFSETS`). We are the only producer or consumer on our side of
//!   each; indices are free-running u32, masked by the size. Producer/consumer words are read
//!   with acquire and written with release ordering.
//! - **Bind** to queue 0 with XDP_USE_NEED_WAKEUP and no copy/zero-copy flag: the kernel uses
//!   zero-copy where the driver can and copy mode otherwise; `describe()` reports which
//!   (`XDP_OPTIONS`). Transmit is always kicked with `sendto(fd, NULL, 0, MSG_DONTWAIT)`: in
//!   copy mode that call is what transmits.
//! - **Own frames** are never received: transmitted frames leave through the driver's transmit
//!   path and never pass our receive hook.
//! - **Waiting:** [`RecvMode::Block`] looks at the RX ring and sleeps in `ppoll` only when it
//!   is empty (one syscall per wait, as a blocking `recv`; the poll also wakes a zero-copy
//!   driver's receive path when the fill ring asks for it); [`RecvMode::BusyPoll`]
//!   re-reads the RX producer index until the deadline (and sets SO_BUSY_POLL, which lets a
//!   driver with NAPI busy polling run its receive path from our syscalls).
//!
//! **veth** (what the tests run on, Linux 6.18): veth has native XDP, and no zero-copy, so the
//! socket runs in driver mode with copy. Frames the *peer* transmits reach our XDP program
//! through veth's NAPI receive path, which attaching the program switches on; our transmitted
//! frames go out as ordinary socket buffers (copy-mode transmit), so the peer needs neither an
//! XDP program nor GRO. (Both would only be needed if an XDP program on this side *redirected*
//! frames into a veth with `XDP_REDIRECT`/`ndo_xdp_xmit`, which this link never does.)

use super::raw::{check_up, set_busy_poll, wait_fd};
use super::{iface, Link, LinkCounters, LinkOptions, RecvMode};
use crate::error::{Error, Result};
use ecat_wire::ETHERTYPE_ETHERCAT;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Where the XDP program runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum XdpMode {
    /// Driver (native) mode when the driver supports it, else generic mode.
    #[default]
    Auto,
    /// Driver (native) mode only.
    Native,
    /// Generic (SKB) mode: works on every interface, slower.
    Generic,
}

mod bpf;
mod ring;
use bpf::*;
pub use bpf::{program, Insn};
use ring::*;

/// `SO_PREFER_BUSY_POLL`.
const SO_PREFER_BUSY_POLL: libc::c_int = 69;

/// UMEM chunks.
const FRAMES: u32 = 4096;
/// Bytes per chunk.
const FRAME_SIZE: u32 = 2048;
/// Entries per ring (fill, completion, RX, TX).
const RING_SIZE: u32 = 2048;
/// Chunks lent to the kernel for receiving (the rest are for transmitting).
const RX_FRAMES: u32 = FRAMES / 2;
// Every receive chunk fits the fill ring, every transmit chunk the TX ring; sizes are powers
// of two (ring masks, chunk masks).
const _: () = assert!(RX_FRAMES <= RING_SIZE && FRAMES - RX_FRAMES <= RING_SIZE);
const _: () = assert!(RING_SIZE.is_power_of_two() && FRAME_SIZE.is_power_of_two());
/// Receive queues the XSKMAP covers (only key 0 is filled).
const MAP_ENTRIES: u32 = 64;

// ---------------------------------------------------------------------------------------------
// The socket.

/// An AF_XDP socket on queue 0 of one interface, with its XDP program attached.
#[derive(Debug)]
pub struct XdpSocket {
    /// The BPF link: dropping it detaches the program. First, so it goes first.
    link: Option<OwnedFd>,
    _prog: OwnedFd,
    map: OwnedFd,
    fill: XRing,
    comp: XRing,
    rx: XRing,
    tx: XRing,
    fd: OwnedFd,
    umem: *mut u8,
    umem_len: usize,
    /// Transmit chunks not in flight (capacity fixed at open).
    tx_free: Vec<u64>,
    name: String,
    ifname: String,
    mac: [u8; 6],
    mode: RecvMode,
    native: bool,
    zero_copy: bool,
    note: Option<String>,
    counters: LinkCounters,
}

// SAFETY: the UMEM and ring mappings are owned by this value alone (no other handle to them
// exists in the process), so moving the value to another thread moves exclusive access.
unsafe impl Send for XdpSocket {}

fn os_err(op: &'static str, iface: &str, e: io::Error) -> Error {
    Error::Io {
        op,
        iface: iface.to_string(),
        source: e,
    }
}

fn permission(ifname: &str) -> Error {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "ecat".into());
    Error::Invalid(format!(
        "no permission to use AF_XDP and BPF on '{ifname}': run as root or grant the \
         capabilities with `setcap cap_net_admin,cap_net_raw,cap_bpf+ep {exe}`"
    ))
}

fn is_perm(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES))
}

fn setsockopt<T>(fd: &OwnedFd, opt: libc::c_int, val: &T) -> io::Result<()> {
    // SAFETY: `val` is a valid, initialised T and the length is its size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_XDP,
            opt,
            val as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as u32,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn getsockopt<T>(fd: &OwnedFd, opt: libc::c_int, val: &mut T) -> io::Result<()> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `val` is writable for its size and `len` says so.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_XDP,
            opt,
            val as *mut T as *mut libc::c_void,
            &mut len,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl XdpSocket {
    /// Open an AF_XDP socket on `ifname` (receive mode Block, XDP mode Auto).
    pub fn open(ifname: &str) -> Result<XdpSocket> {
        Self::open_with(ifname, LinkOptions::default())
    }

    /// Open an AF_XDP socket on queue 0 of `ifname` and attach the steering program. Errors
    /// name the interface and say what the kernel refused and how to fix it.
    pub fn open_with(ifname: &str, opts: LinkOptions) -> Result<XdpSocket> {
        let ifindex = iface::index(ifname)?;
        check_up(ifname)?;
        // SAFETY: plain syscall; the returned descriptor is checked before use.
        let fd = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => permission(ifname),
                Some(libc::EAFNOSUPPORT) => Error::Invalid(format!(
                    "this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS) for '{ifname}'; \
                     use mmap:{ifname} or raw:{ifname}"
                )),
                _ => os_err("opening an AF_XDP socket", ifname, e),
            });
        }
        let fd = owned(fd);

        // UMEM.
        let umem_len = (FRAMES * FRAME_SIZE) as usize;
        // SAFETY: a fresh private anonymous mapping; checked for MAP_FAILED.
        let umem = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                umem_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if umem == libc::MAP_FAILED {
            return Err(os_err(
                "mapping the AF_XDP UMEM",
                ifname,
                io::Error::last_os_error(),
            ));
        }
        let umem = umem as *mut u8;
        // Unmaps the UMEM if anything below fails; disarmed once the socket owns it.
        struct UmemGuard(*mut u8, usize);
        impl Drop for UmemGuard {
            fn drop(&mut self) {
                // SAFETY: the mapping made just above, unmapped once.
                unsafe { libc::munmap(self.0 as *mut libc::c_void, self.1) };
            }
        }
        let guard = UmemGuard(umem, umem_len);
        let reg = libc::xdp_umem_reg {
            addr: umem as u64,
            len: umem_len as u64,
            chunk_size: FRAME_SIZE,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        setsockopt(&fd, libc::XDP_UMEM_REG, &reg)
            .map_err(|e| os_err("registering the AF_XDP UMEM", ifname, e))?;
        for opt in [
            libc::XDP_UMEM_FILL_RING,
            libc::XDP_UMEM_COMPLETION_RING,
            libc::XDP_RX_RING,
            libc::XDP_TX_RING,
        ] {
            setsockopt(&fd, opt, &RING_SIZE)
                .map_err(|e| os_err("sizing the AF_XDP rings", ifname, e))?;
        }
        // SAFETY: plain data; zeroed is a valid starting value.
        let mut off: libc::xdp_mmap_offsets = unsafe { std::mem::zeroed() };
        getsockopt(&fd, libc::XDP_MMAP_OFFSETS, &mut off)
            .map_err(|e| os_err("reading the AF_XDP ring offsets", ifname, e))?;
        let map_err = |e| os_err("mapping the AF_XDP rings", ifname, e);
        let mut fill =
            XRing::map(&fd, &off.fr, 8, libc::XDP_UMEM_PGOFF_FILL_RING).map_err(map_err)?;
        let comp =
            XRing::map(&fd, &off.cr, 8, libc::XDP_UMEM_PGOFF_COMPLETION_RING).map_err(map_err)?;
        let desc = std::mem::size_of::<libc::xdp_desc>();
        let rx = XRing::map(&fd, &off.rx, desc, libc::XDP_PGOFF_RX_RING as u64).map_err(map_err)?;
        let tx = XRing::map(&fd, &off.tx, desc, libc::XDP_PGOFF_TX_RING as u64).map_err(map_err)?;
        for i in 0..RX_FRAMES {
            fill.push_addr((i * FRAME_SIZE) as u64);
        }
        let tx_free: Vec<u64> = (RX_FRAMES..FRAMES)
            .map(|i| (i * FRAME_SIZE) as u64)
            .collect();

        // Bind to queue 0: zero-copy if the driver can, copy otherwise.
        let sxdp = libc::sockaddr_xdp {
            sxdp_family: libc::AF_XDP as u16,
            sxdp_flags: libc::XDP_USE_NEED_WAKEUP,
            sxdp_ifindex: ifindex as u32,
            sxdp_queue_id: 0,
            sxdp_shared_umem_fd: 0,
        };
        // A socket closed on this queue a moment ago releases it from a kernel work item, so
        // EBUSY is retried for a short while before it is believed.
        let bind_start = Instant::now();
        let bound = loop {
            // SAFETY: `sxdp` is a valid sockaddr_xdp and the length matches it.
            let rc = unsafe {
                libc::bind(
                    fd.as_raw_fd(),
                    &sxdp as *const libc::sockaddr_xdp as *const libc::sockaddr,
                    std::mem::size_of::<libc::sockaddr_xdp>() as u32,
                )
            };
            if rc == 0 {
                break Ok(());
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EBUSY)
                || bind_start.elapsed() > Duration::from_millis(500)
            {
                break Err(e);
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        if let Err(e) = bound {
            return Err(match e.raw_os_error() {
                Some(libc::EBUSY) => Error::Invalid(format!(
                    "queue 0 of '{ifname}' is already used by another AF_XDP socket; \
                     close the other program or use mmap:{ifname}"
                )),
                _ => os_err("binding the AF_XDP socket to queue 0", ifname, e),
            });
        }
        let mut xopts = libc::xdp_options { flags: 0 };
        let zero_copy = getsockopt(&fd, libc::XDP_OPTIONS, &mut xopts).is_ok()
            && xopts.flags & libc::XDP_OPTIONS_ZEROCOPY != 0;

        // The XSKMAP with our socket at key 0.
        let mut a = Attr::new();
        a.u32(0, BPF_MAP_TYPE_XSKMAP)
            .u32(4, 4)
            .u32(8, 4)
            .u32(12, MAP_ENTRIES)
            .name(28, "ecat_xsks");
        let map = bpf(BPF_MAP_CREATE, &mut a).map_err(|e| {
            if is_perm(&e) {
                permission(ifname)
            } else {
                os_err("creating the XSKMAP (bpf BPF_MAP_CREATE)", ifname, e)
            }
        })?;
        let map = owned(map);
        let key: u32 = 0;
        let value: u32 = fd.as_raw_fd() as u32;
        let mut a = Attr::new();
        a.u32(0, map.as_raw_fd() as u32)
            .u64(8, &key as *const u32 as u64)
            .u64(16, &value as *const u32 as u64);
        bpf(BPF_MAP_UPDATE_ELEM, &mut a)
            .map_err(|e| os_err("putting the AF_XDP socket in the XSKMAP", ifname, e))?;

        // The program.
        let insns = program(map.as_raw_fd());
        let license = b"MIT OR Apache-2.0\0";
        let mut log = vec![0u8; 64 * 1024];
        let mut a = Attr::new();
        a.u32(0, BPF_PROG_TYPE_XDP)
            .u32(4, insns.len() as u32)
            .u64(8, insns.as_ptr() as u64)
            .u64(16, license.as_ptr() as u64)
            .u32(24, 1)
            .u32(28, log.len() as u32)
            .u64(32, log.as_mut_ptr() as u64)
            .name(48, "ecat_xdp")
            .u32(68, BPF_XDP);
        let prog = match bpf(BPF_PROG_LOAD, &mut a) {
            Ok(p) => owned(p),
            Err(e) if is_perm(&e) => return Err(permission(ifname)),
            Err(e) => {
                let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
                let text = String::from_utf8_lossy(&log[..end]);
                return Err(Error::Invalid(format!(
                    "the kernel refused the XDP program for '{ifname}' ({e}); verifier says: {}",
                    text.trim()
                )));
            }
        };
        drop(log);

        // Attach: driver mode first (unless generic is asked for), then generic.
        let attach = |flags: u32| {
            let mut a = Attr::new();
            a.u32(0, prog.as_raw_fd() as u32)
                .u32(4, ifindex as u32)
                .u32(8, BPF_XDP)
                .u32(12, flags);
            bpf(BPF_LINK_CREATE, &mut a)
        };
        let busy = |e: &io::Error| matches!(e.raw_os_error(), Some(libc::EBUSY | libc::EEXIST));
        let already = || {
            Error::Invalid(format!(
                "interface '{ifname}' already has an XDP program attached; remove it with \
                 `ip link set dev {ifname} xdp off` (or stop the program that owns it)"
            ))
        };
        let (link, native, note) = match opts.xdp_mode {
            XdpMode::Generic => match attach(XDP_FLAGS_SKB_MODE) {
                Ok(l) => (l, false, None),
                Err(e) if busy(&e) => return Err(already()),
                Err(e) => {
                    return Err(os_err(
                        "attaching the XDP program (generic mode)",
                        ifname,
                        e,
                    ))
                }
            },
            XdpMode::Native | XdpMode::Auto => match attach(XDP_FLAGS_DRV_MODE) {
                Ok(l) => (l, true, None),
                Err(e) if busy(&e) => return Err(already()),
                Err(e) if opts.xdp_mode == XdpMode::Native => {
                    return Err(Error::Invalid(format!(
                        "interface '{ifname}' has no XDP support in driver mode ({e}); \
                         use xdp:{ifname}?generic or leave the mode on auto"
                    )))
                }
                Err(e) => match attach(XDP_FLAGS_SKB_MODE) {
                    Ok(l) => (
                        l,
                        false,
                        Some(format!(
                            "interface {ifname} has no XDP support in driver mode ({e}); \
                             using generic mode"
                        )),
                    ),
                    Err(e2) if busy(&e2) => return Err(already()),
                    Err(e2) => {
                        return Err(os_err(
                            "attaching the XDP program (driver and generic mode)",
                            ifname,
                            e2,
                        ))
                    }
                },
            },
        };
        let link = owned(link);
        if opts.recv_mode == RecvMode::BusyPoll {
            set_busy_poll(fd.as_raw_fd());
            let one: libc::c_int = 1;
            // SAFETY: a valid c_int option value and its size; failure is harmless.
            unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    SO_PREFER_BUSY_POLL,
                    &one as *const libc::c_int as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as u32,
                );
            }
        }
        std::mem::forget(guard);
        Ok(XdpSocket {
            link: Some(link),
            _prog: prog,
            map,
            fill,
            comp,
            rx,
            tx,
            fd,
            umem,
            umem_len,
            tx_free,
            name: format!("xdp:{ifname}"),
            ifname: ifname.to_string(),
            mac: iface::mac(ifname),
            mode: opts.recv_mode,
            native,
            zero_copy,
            note,
            counters: LinkCounters::default(),
        })
    }

    /// True if the XDP program runs in driver (native) mode, false for generic mode.
    pub fn native(&self) -> bool {
        self.native
    }

    /// True if the socket runs zero-copy, false for copy mode.
    pub fn zero_copy(&self) -> bool {
        self.zero_copy
    }

    /// Tell the kernel there is work on the TX ring (and, in copy mode, transmit it).
    fn kick(&self) -> Result<()> {
        loop {
            // SAFETY: a sendto without data or address: the kernel reads the TX ring.
            let rc = unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    std::ptr::null(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null(),
                    0,
                )
            };
            if rc >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                // Busy or out of buffers: the descriptors stay on the ring for the next kick.
                Some(libc::EAGAIN | libc::EBUSY | libc::ENOBUFS | libc::ENETDOWN) => return Ok(()),
                _ => return Err(os_err("sending a frame", &self.ifname, e)),
            }
        }
    }

    /// Wake the kernel to refill its receive path when it asks for it (zero-copy drivers).
    fn wake_rx(&self) {
        if self.fill.needs_wakeup() {
            // SAFETY: a recvfrom without buffer; it only drives the driver's receive path.
            unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    std::ptr::null_mut(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                );
            }
        }
    }

    /// Take finished transmit chunks back from the completion ring.
    fn reclaim(&mut self) {
        let n = self.comp.available();
        for _ in 0..n {
            // SAFETY: completion descriptors are u64 chunk addresses; this one is produced.
            let addr = unsafe { (self.comp.slot(self.comp.local, 8) as *const u64).read() };
            self.comp.local = self.comp.local.wrapping_add(1);
            if self.tx_free.len() < self.tx_free.capacity() {
                self.tx_free.push(addr & !(FRAME_SIZE as u64 - 1));
            }
        }
        if n > 0 {
            self.comp
                .consumer()
                .store(self.comp.local, Ordering::Release);
        }
    }

    /// Take the next received frame, if any. `Some(0)` for a frame not passed up (counted).
    fn take_rx(&mut self, buf: &mut [u8]) -> Option<usize> {
        if self.rx.available() == 0 {
            return None;
        }
        let slot = self
            .rx
            .slot(self.rx.local, std::mem::size_of::<libc::xdp_desc>());
        // SAFETY: RX descriptors are xdp_desc; this one has been produced by the kernel.
        let d = unsafe { (slot as *const libc::xdp_desc).read() };
        let chunk = d.addr & !(FRAME_SIZE as u64 - 1);
        let in_chunk = (d.addr - chunk) as usize;
        let len = (d.len as usize)
            .min(buf.len())
            .min((FRAME_SIZE as usize).saturating_sub(in_chunk));
        let ok = (d.addr as usize) < self.umem_len;
        if ok {
            // SAFETY: the chunk lies inside the UMEM (checked) and `len` stays inside it and
            // inside `buf`; the kernel does not touch the chunk until we give it back.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.umem.add(d.addr as usize),
                    buf.as_mut_ptr(),
                    len,
                );
            }
        }
        self.rx.local = self.rx.local.wrapping_add(1);
        self.rx.consumer().store(self.rx.local, Ordering::Release);
        if ok && self.fill.free() > 0 {
            self.fill.push_addr(chunk);
        }
        let ecat = ok && len >= 14 && buf[12..14] == ETHERTYPE_ETHERCAT.to_be_bytes();
        if !ecat {
            self.counters.rx_ignored += 1;
            return Some(0);
        }
        self.counters.rx_frames += 1;
        Some(len)
    }
}

impl Drop for XdpSocket {
    fn drop(&mut self) {
        // Detach the program first, so no frame is steered to a closing socket. Then take the
        // socket out of the XSKMAP: the map holds a reference to it and is freed only later
        // (after an RCU grace period), which would keep queue 0 bound for a while after we
        // are gone. The rings, socket, program and map follow as the fields drop.
        self.link.take();
        let key: u32 = 0;
        let mut a = Attr::new();
        a.u32(0, self.map.as_raw_fd() as u32)
            .u64(8, &key as *const u32 as u64);
        let _ = bpf(BPF_MAP_DELETE_ELEM, &mut a);
        // SAFETY: exactly the UMEM mapping made in `open_with`, unmapped once. The socket that
        // registered it is still open, but the kernel pins its own reference to the pages.
        unsafe {
            libc::munmap(self.umem as *mut libc::c_void, self.umem_len);
        }
    }
}

impl Link for XdpSocket {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        if frame.len() > FRAME_SIZE as usize {
            self.counters.tx_errors += 1;
            return Err(Error::Invalid(format!(
                "frame of {} bytes does not fit an AF_XDP chunk on {} ({FRAME_SIZE} bytes at most)",
                frame.len(),
                self.name
            )));
        }
        self.reclaim();
        let mut waited = None;
        let addr = loop {
            if self.tx.free() > 0 {
                if let Some(a) = self.tx_free.pop() {
                    break a;
                }
            }
            let start = *waited.get_or_insert_with(Instant::now);
            if start.elapsed() > Duration::from_millis(100) {
                self.counters.tx_errors += 1;
                return Err(os_err(
                    "sending a frame (AF_XDP transmit ring full)",
                    &self.ifname,
                    io::Error::from(io::ErrorKind::WouldBlock),
                ));
            }
            self.kick()?;
            self.reclaim();
            std::hint::spin_loop();
        };
        // SAFETY: `addr` is a free transmit chunk inside the UMEM and the frame fits in it; the
        // TX descriptor at our producer index is ours until published.
        unsafe {
            std::ptr::copy_nonoverlapping(
                frame.as_ptr(),
                self.umem.add(addr as usize),
                frame.len(),
            );
            let d = self
                .tx
                .slot(self.tx.local, std::mem::size_of::<libc::xdp_desc>())
                as *mut libc::xdp_desc;
            d.write(libc::xdp_desc {
                addr,
                len: frame.len() as u32,
                options: 0,
            });
        }
        self.tx.local = self.tx.local.wrapping_add(1);
        self.tx.producer().store(self.tx.local, Ordering::Release);
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
            // Descriptors a busy device left on the TX ring go out with this kick.
            if self.tx.consumer().load(Ordering::Relaxed) != self.tx.local {
                self.kick()?;
            }
            // ppoll wakes the driver itself; only a read that does not sleep needs the call.
            if deadline.is_none() || self.mode == RecvMode::BusyPoll {
                self.wake_rx();
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

    fn describe(&self) -> String {
        let mut s = format!(
            "AF_XDP socket on {} queue 0, XDP program in {} mode, {}",
            self.ifname,
            if self.native {
                "driver (native)"
            } else {
                "generic (SKB)"
            },
            if self.zero_copy {
                "zero-copy"
            } else {
                "copy mode"
            }
        );
        s.push_str(self.mode.describe_suffix());
        if let Some(n) = &self.note {
            s.push_str(&format!(" (note: {n})"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insn_encoding() {
        assert_eq!(std::mem::size_of::<Insn>(), 8);
        // r5 = *(u16 *)(r2 + 12): dst in the low nibble, src in the high one.
        let i = insn(LDX_H, 5, 2, 12, 0);
        assert_eq!(i.regs, 0x25);
        // SAFETY: Insn is repr(C) plain data of 8 bytes.
        let bytes: [u8; 8] = unsafe { std::mem::transmute(i) };
        assert_eq!(bytes, [0x69, 0x25, 12, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn program_shape() {
        let p = program(7);
        // Both jumps land on the pass block, which returns XDP_PASS.
        for (at, code) in [(5usize, JGT_X), (7, JNE_K)] {
            assert_eq!(p[at].code, code);
            assert_eq!(at as i16 + 1 + p[at].off, PASS);
        }
        assert_eq!(p[PASS as usize], insn(MOV64_K, 0, 0, 0, XDP_PASS));
        assert_eq!(p[15].code, EXIT);
        // The EtherType compare is against the bytes 0x88 0xA4 as loaded from memory.
        assert_eq!(
            (p[7].imm as u16).to_ne_bytes(),
            [0x88, 0xA4],
            "ethertype immediate"
        );
        // The map load is a two-slot ld_imm64 with the pseudo map fd source.
        assert_eq!(p[9].code, LD_IMM64);
        assert_eq!(p[9].regs, (BPF_PSEUDO_MAP_FD << 4) | 1);
        assert_eq!(p[9].imm, 7);
        assert_eq!(p[10], insn(0, 0, 0, 0, 0));
        assert_eq!(p[12].imm, BPF_FUNC_REDIRECT_MAP);
        assert_eq!(p[11], insn(MOV64_K, 3, 0, 0, XDP_PASS));
    }

    #[test]
    fn attr_fields() {
        let mut a = Attr::new();
        a.u32(4, 0x01020304)
            .u64(8, 5)
            .name(48, "ecat_xdp_long_name_here");
        assert_eq!(&a.0[4..8], &0x01020304u32.to_ne_bytes());
        assert_eq!(&a.0[8..16], &5u64.to_ne_bytes());
        assert_eq!(&a.0[48..63], b"ecat_xdp_long_n");
        assert_eq!(a.0[63], 0, "names stay NUL-terminated");
    }
}
