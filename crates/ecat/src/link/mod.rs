//! Link layers: how Ethernet frames leave and enter the MainDevice.
//!
//! One small trait, [`Link`]: send a frame, receive a frame (without blocking, or until a
//! deadline), a MAC address and counters. Implementations live one per file: [`raw`]
//! (AF_PACKET raw socket) and [`sim`] (the in-process virtual network). A link is chosen by a
//! short name that every front end accepts the same way ([`open`]): `eth0` or `raw:eth0`, and
//! `sim:io` or `sim:path/net.toml`.
//!
//! Receiving never allocates: the caller passes the buffer.

pub mod capture;
pub mod faults;
pub mod iface;
pub mod raw;
#[cfg(feature = "sim")]
pub mod sim;

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

    /// The virtual clock this link runs on, if it is simulated on virtual time.
    fn virtual_time(&self) -> Option<VirtualTime> {
        None
    }
}

/// What kind of link a specification names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkSpec {
    /// AF_PACKET raw socket on an interface.
    Raw(String),
    /// In-process simulated network: preset name or network file path.
    Sim(String),
}

impl LinkSpec {
    /// Parse `eth0`, `raw:eth0`, `sim:io`, `sim:path.toml`.
    pub fn parse(spec: &str) -> Result<LinkSpec> {
        let bad = |reason: &str| Error::BadLinkSpec {
            spec: spec.to_string(),
            reason: reason.to_string(),
        };
        let spec_t = spec.trim();
        if spec_t.is_empty() {
            return Err(bad(
                "it is empty; give a network interface such as eth0, or sim:io",
            ));
        }
        match spec_t.split_once(':') {
            Some(("raw", ifname)) if !ifname.is_empty() => Ok(LinkSpec::Raw(ifname.to_string())),
            Some(("sim", net)) if !net.is_empty() => Ok(LinkSpec::Sim(net.to_string())),
            Some(("raw", _)) | Some(("sim", _)) => Err(bad("nothing follows the colon")),
            Some((kind @ ("mmap" | "xdp"), _)) => Err(bad(&format!(
                "the {kind} link is not built yet; use raw:IFACE for now"
            ))),
            Some((kind, _)) => Err(bad(&format!(
                "unknown link type '{kind}'; use IFACE, raw:IFACE or sim:NETWORK"
            ))),
            None => Ok(LinkSpec::Raw(spec_t.to_string())),
        }
    }
}

/// Open a link by its specification (see [`LinkSpec::parse`]).
pub fn open(spec: &str) -> Result<Box<dyn Link>> {
    match LinkSpec::parse(spec)? {
        LinkSpec::Raw(ifname) => Ok(Box::new(raw::RawSocket::open(&ifname)?)),
        #[cfg(feature = "sim")]
        LinkSpec::Sim(net) => Ok(Box::new(sim::SimLink::open(&net)?)),
        #[cfg(not(feature = "sim"))]
        LinkSpec::Sim(_) => Err(Error::BadLinkSpec {
            spec: spec.to_string(),
            reason: "this build has no simulator (enable the `sim` feature)".into(),
        }),
    }
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
    }
}
