//! AF_PACKET raw-socket link: works on any NIC the kernel drives, no kernel module of ours.
//!
//! The socket is bound to one interface and to EtherType 0x88A4, so the kernel hands us only
//! EtherCAT frames. It is non-blocking; waiting for a deadline uses `ppoll` with a nanosecond
//! timeout. A wait costs one syscall more than SOEM's blocking `recv`, never two: when the last
//! read found the queue empty (as it is right after the cycle's send, the frames are still on
//! their way) the wait sleeps in `ppoll` first and then reads, instead of trying a read that
//! would fail; after a frame it reads first (the next one often came with it). A blocking
//! `recv` with SO_RCVTIMEO would save the `ppoll`, but Linux rounds that timeout up to whole
//! jiffies (4 ms at HZ=250), so a lost frame would stall the loop for several cycles; `ppoll`
//! wakes at the deadline to the nanosecond.
//!
//! PACKET_QDISC_BYPASS skips the queueing discipline on transmit, and our own transmitted
//! copies (which AF_PACKET loops back as PACKET_OUTGOING) are dropped twice over:
//! PACKET_IGNORE_OUTGOING where the kernel has it, and a check of the packet type on receive.
//!
//! In [`RecvMode::BusyPoll`] the socket is never slept on: `recv` retries the non-blocking read
//! until the deadline, and SO_BUSY_POLL asks the kernel to poll the device queue inside the
//! read (it helps on NICs with NAPI busy-poll support; on others it is a harmless no-op).
//!
//! [`RawSocket::open_ethertype`] binds another EtherType (or every one, [`ETH_P_ALL`]) for
//! tools that carry their own frames beside EtherCAT's, such as `ecat bench`'s echo floor.

use super::{iface, Link, LinkCounters, LinkOptions, RecvMode};
use crate::error::{Error, Result};
use ecat_wire::ETHERTYPE_ETHERCAT;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

/// `PACKET_IGNORE_OUTGOING` (Linux ≥ 4.20); not in every libc version.
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
/// `SO_BUSY_POLL` (microseconds the kernel may busy-poll the device in a read).
pub(super) const SO_BUSY_POLL: libc::c_int = 46;
/// Busy-poll budget asked of the kernel, in microseconds.
pub(super) const BUSY_POLL_US: libc::c_int = 50;

/// Every EtherType (`ETH_P_ALL`), for [`RawSocket::open_ethertype`].
pub const ETH_P_ALL: u16 = 0x0003;

/// A raw AF_PACKET socket bound to one interface and EtherType 0x88A4 (or the one given to
/// [`RawSocket::open_ethertype`]).
#[derive(Debug)]
pub struct RawSocket {
    fd: OwnedFd,
    name: String,
    ifname: String,
    mac: [u8; 6],
    mode: RecvMode,
    counters: LinkCounters,
    ethertype: u16,
    kernel_drops: u64,
    /// The last read found the queue empty: a wait sleeps before it reads again.
    drained: bool,
}

fn io_err(op: &'static str, iface: &str) -> Error {
    Error::Io {
        op,
        iface: iface.to_string(),
        source: io::Error::last_os_error(),
    }
}

impl RawSocket {
    /// Open a raw socket on `ifname`. Errors name the interface and say how to fix missing
    /// permissions or a down interface.
    pub fn open(ifname: &str) -> Result<RawSocket> {
        Self::open_with(ifname, LinkOptions::default())
    }

    /// Open a raw socket on `ifname` with options (the receive mode).
    pub fn open_with(ifname: &str, opts: LinkOptions) -> Result<RawSocket> {
        Self::open_ethertype(ifname, ETHERTYPE_ETHERCAT, opts)
    }

    /// Open a raw socket on `ifname` for frames of `ethertype` ([`ETH_P_ALL`]: every frame),
    /// with options (the receive mode).
    pub fn open_ethertype(ifname: &str, ethertype: u16, opts: LinkOptions) -> Result<RawSocket> {
        let ifindex = iface::index(ifname)?;
        let proto = ethertype.to_be() as libc::c_int;
        // SAFETY: plain syscall; the returned descriptor is checked before use.
        let fd = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                proto,
            )
        };
        if fd < 0 {
            let e = io::Error::last_os_error();
            return Err(socket_error(e, "opening a raw socket", ifname));
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: sockaddr_ll is plain data; zeroed is a valid starting value.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ethertype.to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: `sll` is a valid sockaddr_ll and the length matches it.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if rc < 0 {
            return Err(io_err("binding the raw socket", ifname));
        }
        let one: libc::c_int = 1;
        for opt in [libc::PACKET_QDISC_BYPASS, PACKET_IGNORE_OUTGOING] {
            // SAFETY: `one` is a valid c_int for the option's size. Failure is harmless: both
            // options are optimisations with a fallback.
            unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_PACKET,
                    opt,
                    &one as *const libc::c_int as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as u32,
                );
            }
        }
        if opts.recv_mode == RecvMode::BusyPoll {
            set_busy_poll(fd.as_raw_fd());
        }
        check_up(ifname)?;
        Ok(RawSocket {
            fd,
            name: format!("raw:{ifname}"),
            ifname: ifname.to_string(),
            mac: iface::mac(ifname),
            mode: opts.recv_mode,
            counters: LinkCounters::default(),
            ethertype,
            kernel_drops: 0,
            drained: false,
        })
    }

    /// A second handle on the same socket (a duplicated descriptor), for a thread that only
    /// sends while another one receives (`ecat sim --threads 2`). Its counters start at zero.
    pub fn try_clone(&self) -> Result<RawSocket> {
        let fd = self.fd.try_clone().map_err(|source| Error::Io {
            op: "duplicating the raw socket",
            iface: self.ifname.clone(),
            source,
        })?;
        Ok(RawSocket {
            fd,
            name: self.name.clone(),
            ifname: self.ifname.clone(),
            mac: self.mac,
            mode: self.mode,
            counters: LinkCounters::default(),
            ethertype: self.ethertype,
            kernel_drops: 0,
            drained: false,
        })
    }

    /// Ask for a socket receive buffer of `bytes` (SO_RCVBUFFORCE when privileged, else
    /// SO_RCVBUF up to the system's limit), so a stall of the reader turns into late frames,
    /// not dropped ones. Returns the size the kernel granted (it doubles the request for its
    /// bookkeeping), `None` if it refused.
    pub fn set_receive_buffer(&self, bytes: usize) -> Option<usize> {
        let want = bytes.min(i32::MAX as usize) as libc::c_int;
        let fd = self.fd.as_raw_fd();
        let set = |opt| {
            // SAFETY: `want` is a valid c_int for the option's size.
            unsafe {
                libc::setsockopt(
                    fd,
                    libc::SOL_SOCKET,
                    opt,
                    &want as *const libc::c_int as *const libc::c_void,
                    std::mem::size_of::<libc::c_int>() as u32,
                ) == 0
            }
        };
        if !set(libc::SO_RCVBUFFORCE) && !set(libc::SO_RCVBUF) {
            return None;
        }
        let mut got: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `got` is a writable c_int and `len` its size.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                &mut got as *mut libc::c_int as *mut libc::c_void,
                &mut len,
            )
        };
        (rc == 0).then_some(got as usize)
    }

    /// Wait until the socket is readable or `deadline` passes. Returns false on timeout.
    fn wait_readable(&self, deadline: Instant) -> Result<bool> {
        wait_fd(self.fd.as_raw_fd(), libc::POLLIN, deadline, &self.ifname)
    }
}

/// Frames the kernel dropped on packet socket `fd` since the last call (PACKET_STATISTICS
/// reads and resets `tp_drops`); `None` if the kernel does not say.
pub(super) fn packet_drops(fd: libc::c_int) -> Option<u64> {
    let mut st = libc::tpacket_stats {
        tp_packets: 0,
        tp_drops: 0,
    };
    let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: `st` is a writable tpacket_stats and `len` its size (TPACKET_V1/V2 layout).
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            &mut st as *mut libc::tpacket_stats as *mut libc::c_void,
            &mut len,
        )
    };
    (rc == 0).then_some(st.tp_drops as u64)
}

/// The error for a failed `socket()` call: the permission sentence for EPERM/EACCES.
pub(super) fn socket_error(e: io::Error, op: &'static str, ifname: &str) -> Error {
    match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => Error::RawSocketPermission {
            iface: ifname.to_string(),
            exe: std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "ecat".into()),
        },
        _ => Error::Io {
            op,
            iface: ifname.to_string(),
            source: e,
        },
    }
}

/// Ask the kernel to busy-poll the device queue in reads on `fd` (best effort: without
/// CAP_NET_ADMIN or NAPI support it is simply not applied).
pub(super) fn set_busy_poll(fd: libc::c_int) {
    // SAFETY: a valid c_int option value and its size.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_BUSY_POLL,
            &BUSY_POLL_US as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as u32,
        );
    }
}

/// An error if the interface is administratively down, with the command that fixes it.
pub(super) fn check_up(ifname: &str) -> Result<()> {
    if is_up(ifname) {
        return Ok(());
    }
    Err(Error::Invalid(format!(
        "network interface '{ifname}' is down; bring it up with `ip link set {ifname} up`"
    )))
}

/// Wait in `ppoll` until `fd` has one of `events` or `deadline` passes. Returns false on
/// timeout; true when ready (or interrupted by a signal: the caller simply tries again).
pub(super) fn wait_fd(
    fd: libc::c_int,
    events: libc::c_short,
    deadline: Instant,
    ifname: &str,
) -> Result<bool> {
    let now = Instant::now();
    if deadline <= now {
        return Ok(false);
    }
    let left = deadline - now;
    let ts = libc::timespec {
        tv_sec: left.as_secs() as libc::time_t,
        tv_nsec: left.subsec_nanos() as libc::c_long,
    };
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a valid timespec, no signal mask.
    let rc = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(true);
        }
        return Err(Error::Io {
            op: "waiting for a frame",
            iface: ifname.to_string(),
            source: e,
        });
    }
    Ok(rc > 0)
}

/// True if the interface is administratively up (IFF_UP in /sys/class/net/IF/flags).
fn is_up(ifname: &str) -> bool {
    std::fs::read_to_string(format!("/sys/class/net/{ifname}/flags"))
        .ok()
        .and_then(|s| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok())
        .map(|f| f & libc::IFF_UP as u32 != 0)
        .unwrap_or(true)
}

impl Link for RawSocket {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        loop {
            // SAFETY: `frame` is a valid readable buffer of the given length.
            let rc = unsafe {
                libc::send(
                    self.fd.as_raw_fd(),
                    frame.as_ptr() as *const libc::c_void,
                    frame.len(),
                    0,
                )
            };
            if rc >= 0 {
                self.counters.tx_frames += 1;
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            self.counters.tx_errors += 1;
            return Err(Error::Io {
                op: "sending a frame",
                iface: self.ifname.clone(),
                source: e,
            });
        }
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        // Known empty and told to wait: sleep first (one syscall saved per wait). Timed out,
        // the read below still takes a frame that came at the last moment.
        if let (Some(d), RecvMode::Block, true) = (deadline, self.mode, self.drained) {
            self.wait_readable(d)?;
        }
        loop {
            // SAFETY: sockaddr_ll is plain data.
            let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut sll_len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            // SAFETY: `buf` is writable for its length; `sll` and its length are valid.
            let rc = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    libc::MSG_DONTWAIT,
                    &mut sll as *mut libc::sockaddr_ll as *mut libc::sockaddr,
                    &mut sll_len,
                )
            };
            self.drained = rc < 0;
            if rc < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock => match (deadline, self.mode) {
                        (Some(d), RecvMode::BusyPoll) if Instant::now() < d => {
                            std::hint::spin_loop();
                            continue;
                        }
                        (Some(d), RecvMode::Block) if self.wait_readable(d)? => continue,
                        _ => return Ok(None),
                    },
                    _ => {
                        return Err(Error::Io {
                            op: "receiving a frame",
                            iface: self.ifname.clone(),
                            source: e,
                        })
                    }
                }
            }
            let n = rc as usize;
            let ours = sll.sll_pkttype == libc::PACKET_OUTGOING;
            let wanted = n >= 14
                && (self.ethertype == ETH_P_ALL || buf[12..14] == self.ethertype.to_be_bytes());
            if ours || !wanted {
                self.counters.rx_ignored += 1;
                continue;
            }
            self.counters.rx_frames += 1;
            return Ok(Some(n));
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
        self.kernel_drops += packet_drops(self.fd.as_raw_fd())?;
        Some(self.kernel_drops)
    }

    fn describe(&self) -> String {
        let mode = self.mode.describe_suffix();
        format!("raw socket on {}{mode}", self.ifname)
    }

    fn poll_fd(&self) -> Option<std::os::fd::RawFd> {
        Some(self.fd.as_raw_fd())
    }
}
