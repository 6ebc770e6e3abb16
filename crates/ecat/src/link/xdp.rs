//! AF_XDP link (`xdp:IFACE`): work in progress.

use super::{Link, LinkOptions};
use crate::error::{Error, Result};

/// Where the XDP program runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum XdpMode {
    /// Driver (native) mode when the driver supports it, else generic mode.
    #[default]
    Auto,
    /// Driver (native) mode only.
    Native,
    /// Generic (SKB) mode.
    Generic,
}

/// An AF_XDP socket.
#[derive(Debug)]
pub struct XdpSocket;

impl XdpSocket {
    /// Open an AF_XDP socket on `ifname`.
    pub fn open_with(ifname: &str, _opts: LinkOptions) -> Result<Box<dyn Link>> {
        Err(Error::BadLinkSpec {
            spec: format!("xdp:{ifname}"),
            reason: "the xdp link is not built yet".into(),
        })
    }
}
