//! Link layers: how Ethernet frames leave and enter the MainDevice.
//!
//! One small trait, [`Link`]: send a frame, receive a frame (without blocking, or until a
//! deadline), a MAC address and counters. Implementations live one per file: [`raw`]
//! (AF_PACKET raw socket) and [`sim`] (the in-process virtual network). A link is chosen by a
//! short name that every front end accepts the same way ([`open`]): `eth0` or `raw:eth0`, and
//! `sim:io` or `sim:path/net.toml`.
//! [`mmap`] (AF_PACKET with TPACKET rings, `mmap:eth0`) and [`xdp`] (AF_XDP, `xdp:eth0`) are
//! the faster socket links. [`dpdk`] (`dpdk:PORT`, with the `dpdk` feature) drives a port
//! through DPDK's poll-mode drivers.
//!
//! Receiving never allocates: the caller passes the buffer.
//!
//! Socket links wait in one of two ways ([`RecvMode`]): `Block` (the default) sleeps in
//! `ppoll` until a frame or the deadline (interrupt mode); `BusyPoll` spins on non-blocking
//! reads until the deadline, trading a busy core for wake-up latency. Options follow the name
//! after `?`, comma-separated: `raw:eth0?busy`, `mmap:eth0?block`, `xdp:eth0?busy,generic`
//! (`generic`/`skb` forces generic XDP, `native`/`drv` requires driver mode); or call
//! [`open_with`] with [`LinkOptions`].

pub mod capture;
pub mod dpdk;
pub mod faults;
pub mod iface;
pub mod loss;
pub mod mmap;
pub mod raw;
pub mod redundant;
pub mod redundant_dc;
#[cfg(feature = "sim")]
pub mod sim;
#[cfg(feature = "sim")]
pub mod sim_ring;
pub mod xdp;

use crate::clock::VirtualTime;
use crate::error::{Error, Result};
use std::time::Instant;

pub use capture::wrap_capture;
pub use faults::{wrap_faults, FaultSpec};

/// Counters every link keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// Frames handed to the link.
    pub tx_frames: u64,
    /// Frames received and passed up.
    pub rx_frames: u64,
    /// Frames received but ignored (own transmitted copies, other EtherTypes).
    pub rx_ignored: u64,
    /// Send calls that failed.
    pub tx_errors: u64,
}

/// A link layer that carries EtherCAT frames.
pub trait Link: Send {
    /// Transmit one complete Ethernet frame (without FCS).
    fn send(&mut self, frame: &[u8]) -> Result<()>;

    /// Receive one frame into `buf`, waiting until `deadline` at most (`None` = do not wait).
    /// Returns the frame length, or `None` if nothing arrived in time. Frames the MainDevice
    /// sent itself are never returned.
    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> Result<Option<usize>>;

    /// MAC address used as the source of transmitted frames.
    fn mac(&self) -> [u8; 6];

    /// The name the link was opened with (e.g. `raw:eth0`, `sim:io`).
    fn name(&self) -> &str;

    /// Counters.
    fn counters(&self) -> LinkCounters;

    /// Short description for humans (e.g. "built-in simulated network 'io'").
    fn describe(&self) -> String {
        self.name().to_string()
    }

    /// Frames the kernel dropped for this link's socket before it read them (AF_PACKET's
    /// PACKET_STATISTICS `tp_drops`: receive buffer or ring full), accumulated since the link
    /// opened; `None` if the link cannot tell (not a packet socket).
    fn kernel_drops(&mut self) -> Option<u64> {
        None
    }

    /// The virtual clock this link runs on, if it is simulated on virtual time.
    fn virtual_time(&self) -> Option<VirtualTime> {
        None
    }

    /// A descriptor that becomes readable when a frame waits (for waiting on several links
    /// at once, see [`redundant`]); `None` if the link has none.
    fn poll_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }

    /// The ring state, if this is a redundant link ([`redundant::RedundantLink`]).
    fn redundancy(&self) -> Option<redundant::RingStatus> {
        None
    }

    /// On a redundant link with the ring open: how much later (ns) the SubDevices behind the
    /// break see a frame than through the closed ring, as the MainDevice measured it (see
    /// [`redundant`]). Others ignore it.
    fn set_dc_shift(&mut self, _shift_ns: i64) {}

    /// The simulated network behind this link, if it is one (tests and tools reach device
    /// values and faults through it).
    #[cfg(feature = "sim")]
    fn sim_network(&mut self) -> Option<&mut ecat_sim::Network> {
        None
    }
}

/// What kind of link a specification names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkSpec {
    /// AF_PACKET raw socket on an interface.
    Raw(String),
    /// AF_PACKET with TPACKET rings on an interface.
    Mmap(String),
    /// AF_XDP socket on an interface.
    Xdp(String),
    /// In-process simulated network: preset name or network file path.
    Sim(String),
    /// A DPDK port: PCI address, virtual device with arguments, or port name ([`dpdk`]).
    Dpdk(String),
}

impl LinkSpec {
    /// Parse `eth0`, `raw:eth0`, `mmap:eth0`, `xdp:eth0`, `sim:io`, `sim:path.toml` (options
    /// after `?` are left to [`LinkOptions::parse`]).
    pub fn parse(spec: &str) -> Result<LinkSpec> {
        let bad = |reason: &str| Error::BadLinkSpec {
            spec: spec.to_string(),
            reason: reason.to_string(),
        };
        let spec_t = spec.trim();
        let spec_t = spec_t.split_once('?').map_or(spec_t, |(s, _)| s);
        if spec_t.is_empty() {
            return Err(bad(
                "it is empty; give a network interface such as eth0, or sim:io",
            ));
        }
        match spec_t.split_once(':') {
            Some(("raw", ifname)) if !ifname.is_empty() => Ok(LinkSpec::Raw(ifname.to_string())),
            Some(("mmap", ifname)) if !ifname.is_empty() => Ok(LinkSpec::Mmap(ifname.to_string())),
            Some(("xdp", ifname)) if !ifname.is_empty() => Ok(LinkSpec::Xdp(ifname.to_string())),
            Some(("sim", net)) if !net.is_empty() => Ok(LinkSpec::Sim(net.to_string())),
            Some(("dpdk", port)) if !port.is_empty() => Ok(LinkSpec::Dpdk(port.to_string())),
            Some(("raw" | "mmap" | "xdp" | "sim" | "dpdk", _)) => {
                Err(bad("nothing follows the colon"))
            }
            Some((kind, _)) => Err(bad(&format!(
                "unknown link type '{kind}'; use IFACE, raw:IFACE, mmap:IFACE, xdp:IFACE, dpdk:PORT or sim:NETWORK"
            ))),
            None => Ok(LinkSpec::Raw(spec_t.to_string())),
        }
    }
}

/// How a socket link waits for a frame (see the module note).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RecvMode {
    /// Sleep in `ppoll` until a frame arrives or the deadline passes (interrupt mode).
    #[default]
    Block,
    /// Spin on non-blocking reads until the deadline (polling mode; SO_BUSY_POLL where it helps).
    BusyPoll,
}

impl RecvMode {
    /// What a link's description adds for this mode (`""` or `", busy polling"`).
    pub fn describe_suffix(self) -> &'static str {
        match self {
            RecvMode::Block => "",
            RecvMode::BusyPoll => ", busy polling",
        }
    }
}

/// Options for opening a link ([`open_with`]); written after `?` in a link name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkOptions {
    /// How `recv` waits.
    pub recv_mode: RecvMode,
    /// XDP attach mode (the `xdp:` link only).
    pub xdp_mode: xdp::XdpMode,
}

impl LinkOptions {
    /// Options written after `?` in `spec` (`busy`/`poll`, `block`, `native`/`drv`,
    /// `generic`/`skb`, comma-separated); defaults when there is no `?`.
    pub fn parse(spec: &str) -> Result<LinkOptions> {
        let mut o = LinkOptions::default();
        let Some((_, opts)) = spec.trim().split_once('?') else {
            return Ok(o);
        };
        // `eal=` (dpdk: links) takes the rest of the name; the dpdk link reads it itself.
        let (opts, _eal) = dpdk::split_eal(opts);
        for w in opts.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match w {
                "busy" | "poll" | "busypoll" => o.recv_mode = RecvMode::BusyPoll,
                "block" => o.recv_mode = RecvMode::Block,
                "native" | "drv" => o.xdp_mode = xdp::XdpMode::Native,
                "generic" | "skb" => o.xdp_mode = xdp::XdpMode::Generic,
                _ => {
                    return Err(Error::BadLinkSpec {
                        spec: spec.to_string(),
                        reason: format!("unknown option '{w}'; use busy, block, native or generic"),
                    })
                }
            }
        }
        Ok(o)
    }
}

/// Open a link by its specification (see [`LinkSpec::parse`] and [`LinkOptions::parse`]).
pub fn open(spec: &str) -> Result<Box<dyn Link>> {
    open_with(spec, LinkOptions::parse(spec)?)
}

/// Open a link with explicit options (options written in `spec` are ignored).
pub fn open_with(spec: &str, opts: LinkOptions) -> Result<Box<dyn Link>> {
    match LinkSpec::parse(spec)? {
        LinkSpec::Raw(ifname) => Ok(Box::new(raw::RawSocket::open_with(&ifname, opts)?)),
        LinkSpec::Mmap(ifname) => Ok(Box::new(mmap::MmapSocket::open_with(&ifname, opts)?)),
        LinkSpec::Xdp(ifname) => Ok(Box::new(xdp::XdpSocket::open_with(&ifname, opts)?)),
        LinkSpec::Dpdk(port) => dpdk::open(spec, &port, opts),
        #[cfg(feature = "sim")]
        LinkSpec::Sim(net) => Ok(Box::new(sim::SimLink::open(&net)?)),
        #[cfg(not(feature = "sim"))]
        LinkSpec::Sim(_) => Err(Error::BadLinkSpec {
            spec: spec.to_string(),
            reason: "this build has no simulator (enable the `sim` feature)".into(),
        }),
    }
}

/// Open a redundant link: `main` and `backup` as [`open`] takes them, or for a simulated ring
/// (`sim:NET` with `ring = true`) the backup `sim` (its backup port). Fails with one
/// sentence if the backup is the main port.
pub fn open_redundant(main: &str, backup: &str) -> Result<Box<dyn Link>> {
    let same = |a: &str, b: &str| {
        let strip = |s: &str| {
            let s = s.trim().split_once('?').map_or(s.trim(), |(s, _)| s);
            s.split_once(':').map_or(s, |(_, i)| i).to_string()
        };
        strip(a) == strip(b)
    };
    let bad = |reason: String| Error::BadLinkSpec {
        spec: backup.to_string(),
        reason,
    };
    if let LinkSpec::Sim(net) = LinkSpec::parse(main)? {
        if !matches!(backup.trim(), "sim" | "sim:" | "sim:backup") {
            return Err(bad(format!(
                "a simulated ring's backup port is `sim` (its own backup port), not '{backup}'"
            )));
        }
        #[cfg(feature = "sim")]
        {
            let (m, b, _) = sim_ring::open(&net, None)?;
            return Ok(Box::new(redundant::RedundantLink::new(
                Box::new(m),
                Box::new(b),
            )?));
        }
        #[cfg(not(feature = "sim"))]
        return Err(bad(format!("this build has no simulator for sim:{net}")));
    }
    if same(main, backup) {
        return Err(bad(format!(
            "the backup interface '{backup}' is the main interface; give the second interface, the one cabled to the far end of the ring"
        )));
    }
    let (m, b) = (open(main)?, open(backup)?);
    Ok(Box::new(redundant::RedundantLink::new(m, b)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!(
            LinkSpec::parse("eth0").unwrap(),
            LinkSpec::Raw("eth0".into())
        );
        assert_eq!(
            LinkSpec::parse("raw:veth1").unwrap(),
            LinkSpec::Raw("veth1".into())
        );
        assert_eq!(
            LinkSpec::parse("sim:io").unwrap(),
            LinkSpec::Sim("io".into())
        );
        assert_eq!(
            LinkSpec::parse("sim:a/b.toml").unwrap(),
            LinkSpec::Sim("a/b.toml".into())
        );
        let e = LinkSpec::parse("foo:bar").unwrap_err().to_string();
        assert!(e.contains("unknown link type 'foo'"), "{e}");
        assert!(LinkSpec::parse("").is_err());
        assert!(LinkSpec::parse("sim:").is_err());
        assert_eq!(
            LinkSpec::parse("mmap:veth1?busy").unwrap(),
            LinkSpec::Mmap("veth1".into())
        );
        assert_eq!(
            LinkSpec::parse("xdp:veth1").unwrap(),
            LinkSpec::Xdp("veth1".into())
        );
        let o = LinkOptions::parse("xdp:veth1?busy,generic").unwrap();
        assert_eq!(o.recv_mode, RecvMode::BusyPoll);
        assert_eq!(o.xdp_mode, xdp::XdpMode::Generic);
        assert_eq!(
            LinkOptions::parse("raw:eth0").unwrap(),
            LinkOptions::default()
        );
        assert!(LinkOptions::parse("raw:eth0?fast").is_err());
    }
}
