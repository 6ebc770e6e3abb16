//! Ethernet over EtherCAT on the MainDevice side: each SubDevice that serves EoE gets a Linux
//! TAP interface named like IgH's (`eoe0s3`: master 0, ring position 3), and its frames are
//! bridged both ways over the mailbox while the bus cycles.
//!
//! - [`crate::mailbox::eoe`]: the protocol client (frame fragments, set IP parameter), carried
//!   by the one mailbox engine like every other protocol;
//! - [`hub`]: preallocated receive rings and counters shared by the cyclic thread and the
//!   bridge thread (the cyclic thread never allocates or blocks for EoE);
//! - [`tap`]: the TAP interface (`/dev/net/tun`, `TUNSETIFF`);
//! - [`bridge`]: the non real-time thread moving frames between TAPs and the mailbox service;
//! - [`stats`]: the statistics file `ecat eoe` reads from a running `ecat run --eoe`.

pub mod bridge;
pub mod hub;
pub mod stats;
pub mod tap;

pub use bridge::EoeBridge;
pub use hub::{EoeHub, EoeStats};
