//! The floor's own channel: echo frames travel under their own EtherType,
//! [`ETHERTYPE_FLOOR`], on a raw socket like the raw link's (`RawSocket::open_ethertype`),
//! so that the floor can be measured on the same veth pair, against the same peer thread, in
//! alternation with an ecat row (see `floor`): the MainDevice's socket (raw, mmap, or the XDP
//! program, which passes any other EtherType to the kernel) never sees an echo frame, and the
//! floor's socket never sees an EtherCAT frame. The peer listens to both on one socket bound
//! to every EtherType and tells them apart by [`ethertype`].

use ecat::link::raw::RawSocket;
use ecat::link::{LinkOptions, RecvMode};

/// EtherType of the echo frames: IEEE 802's Local Experimental EtherType 1.
pub const ETHERTYPE_FLOOR: u16 = 0x88b5;

/// A raw socket on `ifname` for `ethertype` (or every one), receiving the `mode` way.
pub fn socket(ifname: &str, ethertype: u16, mode: RecvMode) -> Result<RawSocket, String> {
    let opts = LinkOptions {
        recv_mode: mode,
        ..Default::default()
    };
    RawSocket::open_ethertype(ifname, ethertype, opts).map_err(|e| e.to_string())
}

/// The EtherType of a received frame (0 when too short).
pub fn ethertype(frame: &[u8]) -> u16 {
    if frame.len() < 14 {
        return 0;
    }
    u16::from_be_bytes([frame[12], frame[13]])
}
