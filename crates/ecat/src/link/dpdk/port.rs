//! [`DpdkLink`]: one DPDK port as a [`Link`] (see the module note of [`super`]).
//!
//! Opening checks what it can before DPDK is involved (the kernel interface behind an
//! af_packet/af_xdp device, a PCI device and its driver binding, the right to open raw
//! sockets), so each mistake is one sentence naming the fix; then it starts the EAL (once per
//! process), attaches the device and starts the port through the C shim. The cyclic path is
//! `ecat_dpdk_send` (an mbuf from the link's own pool, a burst of 1) and `ecat_dpdk_recv` (a
//! copy out of the mbuf into the caller's buffer): no heap allocation, no system call on a
//! PMD that needs none.

use super::super::{raw, Link, LinkCounters, LinkOptions, RecvMode};
use super::{default_eal, eal, explicit_eal, Port};
use crate::error::{Error, Result};
use ecat_wire::ETHERTYPE_ETHERCAT;
use std::ffi::{c_char, c_int, c_void};
use std::time::Instant;

/// Descriptors per queue (Intel's user-space IgH port uses 128).
const DESCRIPTORS: u16 = 128;
/// Mbufs in the link's pool (2^n - 1 is the mempool's best size): af_xdp puts 1,024 of them
/// into its fill queue at start, a NIC one per Rx descriptor; about 9 MB.
const MBUFS: u32 = 4095;
/// How long `recv` sleeps between polls in `block` mode on a port without Rx interrupts.
const POLL_SLEEP: std::time::Duration = std::time::Duration::from_micros(10);
/// Tries of a full Tx queue before a send counts as failed.
const TX_TRIES: u32 = 1000;

extern "C" {
    fn ecat_dpdk_port_open(
        id: u16,
        nb_desc: u16,
        nb_mbufs: u32,
        want_intr: c_int,
        is_vdev: c_int,
        err: *mut c_int,
        msg: *mut c_char,
        len: usize,
    ) -> *mut c_void;
    fn ecat_dpdk_port_close(p: *mut c_void);
    fn ecat_dpdk_mac(p: *const c_void, out: *mut u8);
    fn ecat_dpdk_intr_fd(p: *const c_void) -> c_int;
    fn ecat_dpdk_intr_arm(p: *const c_void, on: c_int) -> c_int;
    fn ecat_dpdk_intr_clear(p: *const c_void);
    fn ecat_dpdk_send(p: *mut c_void, frame: *const u8, len: u16) -> c_int;
    fn ecat_dpdk_recv(p: *mut c_void, buf: *mut u8, cap: u32) -> c_int;
    fn ecat_dpdk_drops(p: *const c_void, drops: *mut u64) -> c_int;
}

/// A DPDK port carrying EtherCAT frames.
#[derive(Debug)]
pub struct DpdkLink {
    port: *mut c_void,
    name: String,
    dpdk_name: String,
    mac: [u8; 6],
    mode: RecvMode,
    intr_fd: Option<c_int>,
    counters: LinkCounters,
}

// SAFETY: the port and its mempool are used only through `&mut self` (one thread at a time);
// DPDK's queue and single-producer/consumer pool functions need no more than that.
unsafe impl Send for DpdkLink {}

fn invalid(s: String) -> Error {
    Error::Invalid(s)
}

/// Checks that need no DPDK: the interface behind a virtual device, a PCI device and its
/// driver, raw-socket permission.
fn precheck(spec: &str, port: &Port) -> Result<()> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    match port {
        Port::Vdev { name, .. } => {
            if let Some(ifname) = port.devarg("iface") {
                super::super::iface::index(ifname)?;
                if name.starts_with("net_af_packet") || name.starts_with("net_af_xdp") {
                    raw_socket_allowed(spec, ifname)?;
                }
            }
        }
        Port::Pci { addr, .. } => {
            let dev = format!("/sys/bus/pci/devices/{addr}");
            if !std::path::Path::new(&dev).exists() {
                return Err(invalid(format!(
                    "there is no PCI device {addr} for '{spec}': list the network devices with `dpdk-devbind.py --status` (Debian package dpdk) or `lspci -D | grep -i ethernet`"
                )));
            }
            let driver = std::fs::read_link(format!("{dev}/driver"))
                .ok()
                .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()));
            let usable = |d: &str| {
                matches!(
                    d,
                    "vfio-pci" | "uio_pci_generic" | "igb_uio" | "mlx4_core" | "mlx5_core"
                )
            };
            match driver.as_deref() {
                Some(d) if usable(d) => {}
                other => {
                    let now = other.map_or("no driver".to_string(), |d| {
                        format!("the kernel driver {d}")
                    });
                    return Err(invalid(format!(
                        "PCI device {addr} is bound to {now}, not to vfio-pci: bind it with `dpdk-devbind.py --bind=vfio-pci {addr}` (IOMMU on; `ecat doctor` checks)"
                    )));
                }
            }
            if !root {
                return Err(invalid(format!(
                    "no permission to drive PCI device {addr} through DPDK: run as root (vfio and hugepages need it)"
                )));
            }
        }
        Port::Existing(_) | Port::Id(_) => {}
    }
    Ok(())
}

/// An error sentence if this process may not open AF_PACKET sockets (what DPDK's af_packet
/// and af_xdp drivers need).
fn raw_socket_allowed(spec: &str, ifname: &str) -> Result<()> {
    // SAFETY: plain syscall; the descriptor is closed right away.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd >= 0 {
        // SAFETY: `fd` is ours.
        unsafe { libc::close(fd) };
        return Ok(());
    }
    match raw::socket_error(std::io::Error::last_os_error(), "opening a raw socket", ifname) {
        Error::RawSocketPermission { .. } => Err(invalid(format!(
            "no permission to open '{spec}': DPDK's driver needs a raw socket on {ifname}; run as root"
        ))),
        e => Err(e),
    }
}

/// The port id for `port`, attaching the device if it is not there yet.
fn attach(spec: &str, port: &Port) -> Result<u16> {
    if let Port::Id(id) = port {
        let names = eal::port_names();
        return match names
            .split(", ")
            .nth(*id as usize)
            .filter(|_| names != "none")
        {
            Some(n) => eal::port_by_name(n)?.ok_or_else(|| invalid(format!("no DPDK port {id}"))),
            None => Err(invalid(format!(
                "DPDK has no port {id} for '{spec}' (ports: {names}); name a PCI address or a virtual device such as net_af_packet0,iface=eth0"
            ))),
        };
    }
    let name = port.dpdk_name().unwrap_or_default();
    if let Some(id) = eal::port_by_name(name)? {
        return Ok(id);
    }
    let devargs = match port {
        Port::Pci { devargs, .. } | Port::Vdev { devargs, .. } => devargs,
        _ => {
            return Err(invalid(format!(
                "DPDK has no port '{name}' for '{spec}' (ports: {}); name a PCI address (dpdk:0000:03:00.0) or a virtual device (dpdk:net_af_packet0,iface=eth0)",
                eal::port_names()
            )))
        }
    };
    if let Err((err, said)) = eal::probe(devargs)? {
        let said = if said.is_empty() {
            format!("error {err}")
        } else {
            said
        };
        return Err(invalid(match port {
            Port::Pci { addr, .. } => format!(
                "DPDK could not attach PCI device {addr} ({said}): check that DPDK has a driver for it and that it is bound to vfio-pci (`dpdk-devbind.py --status`, `ecat doctor`)"
            ),
            _ => format!(
                "DPDK could not create the virtual device '{devargs}' ({said}): check the device's arguments and that its driver is installed (Debian: librte-net-af-packet23, librte-net-af-xdp23, librte-net-tap23)"
            ),
        }));
    }
    eal::port_by_name(name)?.ok_or_else(|| {
        invalid(format!(
            "DPDK attached '{devargs}' but made no port named {name}; give the port's name as DPDK prints it"
        ))
    })
}

impl DpdkLink {
    /// Open `port` (parsed from link name `spec`) with `opts` (the receive mode).
    pub fn open(spec: &str, port: Port, opts: LinkOptions) -> Result<DpdkLink> {
        precheck(spec, &port)?;
        let explicit = explicit_eal(spec);
        let args = match &explicit {
            Some(e) => e.args.clone(),
            None => default_eal(&port, eal::first_cpu()),
        };
        eal::start(&args, explicit.as_ref())?;
        let _g = eal::ports_lock();
        let id = attach(spec, &port)?;
        let dpdk_name = match port.dpdk_name() {
            Some(n) => n.to_string(),
            None => id.to_string(),
        };
        eal::claim(&dpdk_name)?;
        let is_vdev = matches!(port, Port::Vdev { .. }) || dpdk_name.starts_with("net_");
        let mut err: c_int = 0;
        let mut msg = vec![0u8; 4096];
        // SAFETY: `err` and `msg` are writable for their sizes; the port id exists.
        let p = unsafe {
            ecat_dpdk_port_open(
                id,
                DESCRIPTORS,
                MBUFS,
                (opts.recv_mode == RecvMode::Block) as c_int,
                is_vdev as c_int,
                &mut err,
                msg.as_mut_ptr() as *mut c_char,
                msg.len(),
            )
        };
        if p.is_null() {
            eal::release(&dpdk_name);
            let out = eal::text(&msg);
            let said = super::dpdk_says(&out).unwrap_or_else(|| format!("error {}", -err));
            return Err(invalid(format!(
                "DPDK could not start port {dpdk_name} for '{spec}' ({said}); `ECAT_DPDK_LOG=1` shows all DPDK said"
            )));
        }
        let mut mac = [0u8; 6];
        // SAFETY: `p` is a live port; `mac` has room for 6 bytes.
        unsafe { ecat_dpdk_mac(p, mac.as_mut_ptr()) };
        // SAFETY: `p` is a live port.
        let fd = unsafe { ecat_dpdk_intr_fd(p) };
        Ok(DpdkLink {
            port: p,
            name: spec
                .split_once('?')
                .map_or(spec, |(s, _)| s)
                .trim()
                .to_string(),
            dpdk_name,
            mac,
            mode: opts.recv_mode,
            intr_fd: (fd >= 0 && opts.recv_mode == RecvMode::Block).then_some(fd),
            counters: LinkCounters::default(),
        })
    }

    /// True if `recv` sleeps on the port's Rx interrupt (else it polls).
    pub fn has_rx_interrupt(&self) -> bool {
        self.intr_fd.is_some()
    }

    /// Arm (`true`) or disarm the Rx interrupt; false if the PMD refused.
    fn arm(&mut self, on: bool) -> bool {
        // SAFETY: `self.port` is live.
        unsafe { ecat_dpdk_intr_arm(self.port, on as c_int) == 0 }
    }

    /// Sleep on the armed Rx interrupt's fd until it fires or `deadline` passes, then disarm.
    fn sleep_on_interrupt(&mut self, fd: c_int, deadline: Instant) -> Result<()> {
        let woke = raw::wait_fd(fd, libc::POLLIN, deadline, &self.dpdk_name);
        if matches!(woke, Ok(true)) {
            // SAFETY: `self.port` is live.
            unsafe { ecat_dpdk_intr_clear(self.port) };
        }
        self.arm(false);
        woke.map(|_| ())
    }
}

/// Sleep until the next poll (POLL_SLEEP, or less to `deadline`) in `block` mode without Rx
/// interrupts. Spinning instead would starve whatever must run on this CPU to deliver the
/// frame (a responder, the kernel's packet processing) when the cycle thread is real-time.
fn pause(deadline: Instant) {
    let left = deadline.saturating_duration_since(Instant::now());
    std::thread::sleep(left.min(POLL_SLEEP));
}

impl Drop for DpdkLink {
    fn drop(&mut self) {
        let _g = eal::ports_lock();
        // SAFETY: the port is live and used by no one else; it is not touched afterwards.
        unsafe { ecat_dpdk_port_close(self.port) };
        eal::release(&self.dpdk_name);
    }
}

impl Link for DpdkLink {
    fn send(&mut self, frame: &[u8]) -> Result<()> {
        let Ok(len) = u16::try_from(frame.len()) else {
            self.counters.tx_errors += 1;
            return Err(Error::Invalid(format!(
                "a frame of {} bytes is too long for {}",
                frame.len(),
                self.dpdk_name
            )));
        };
        for _ in 0..TX_TRIES {
            // SAFETY: `frame` is readable for `len` bytes (≤ its length); the port is live.
            let rc = unsafe { ecat_dpdk_send(self.port, frame.as_ptr(), len) };
            if rc == 1 {
                self.counters.tx_frames += 1;
                return Ok(());
            }
            if rc < 0 {
                self.counters.tx_errors += 1;
                return Err(Error::Io {
                    op: "sending a frame",
                    iface: self.dpdk_name.clone(),
                    source: std::io::Error::from_raw_os_error(-rc),
                });
            }
            std::hint::spin_loop();
        }
        self.counters.tx_errors += 1;
        Err(Error::Io {
            op: "sending a frame (the Tx queue stayed full)",
            iface: self.dpdk_name.clone(),
            source: std::io::Error::from_raw_os_error(libc::ENOBUFS),
        })
    }

    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>> {
        let cap = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        // Armed: the Rx interrupt is on and one more poll came after arming it, so a frame
        // that arrived meanwhile is not slept over.
        let mut armed = false;
        loop {
            // SAFETY: `buf` is writable for `cap` bytes; the port is live.
            let n = unsafe { ecat_dpdk_recv(self.port, buf.as_mut_ptr(), cap) };
            if n > 0 {
                let n = n as usize;
                if n > buf.len() || n < 14 || buf[12..14] != ETHERTYPE_ETHERCAT.to_be_bytes() {
                    self.counters.rx_ignored += 1;
                    continue;
                }
                if armed {
                    self.arm(false);
                }
                self.counters.rx_frames += 1;
                return Ok(Some(n));
            }
            let d = match deadline {
                Some(d) if Instant::now() < d => d,
                _ => {
                    if armed {
                        self.arm(false);
                    }
                    return Ok(None);
                }
            };
            match (self.mode, self.intr_fd) {
                (RecvMode::Block, Some(fd)) if armed => {
                    armed = false;
                    self.sleep_on_interrupt(fd, d)?;
                }
                (RecvMode::Block, Some(_)) => {
                    armed = self.arm(true);
                    if !armed {
                        pause(d);
                    }
                }
                (RecvMode::Block, None) => pause(d),
                (RecvMode::BusyPoll, _) => std::hint::spin_loop(),
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
        let wait = match (self.mode, self.intr_fd) {
            (RecvMode::BusyPoll, _) => "busy polling",
            (RecvMode::Block, Some(_)) => "sleeping on Rx interrupts",
            (RecvMode::Block, None) => "polling every 10 µs (the driver has no Rx interrupt)",
        };
        format!("DPDK port {}, {wait}", self.dpdk_name)
    }

    fn kernel_drops(&mut self) -> Option<u64> {
        let mut d = 0u64;
        // SAFETY: the port is live; `d` is writable.
        (unsafe { ecat_dpdk_drops(self.port, &mut d) } == 0).then_some(d)
    }
}
