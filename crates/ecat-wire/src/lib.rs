//! # ecat-wire: EtherCAT on the wire
//!
//! Codecs for everything a MainDevice and a SubDevice exchange, written once and shared by the
//! master (`ecat`) and the virtual network (`ecat-sim`).
//!
//! Design, after smoltcp:
//! - a zero-copy **view** `Foo<T: AsRef<[u8]>>` wraps a buffer, `Foo::new_checked` validates
//!   lengths once, after which the getters cannot panic; with `T: AsMut<[u8]>` the setters write
//!   in place, so frames are built and patched without copies;
//! - a semantic **`FooRepr`** holds the decoded fields, with `parse(&view)` and `emit(&mut view)`;
//! - errors are one small [`Error`] enum; parsers never panic on any input (each has a fuzz
//!   target under `fuzz/`).
//!
//! The crate is `no_std` and never allocates. All multi-byte fields are little-endian except the
//! Ethernet header, which is big-endian.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
extern crate std;

pub mod al;
pub mod coe;
pub mod datagram;
pub mod eoe;
mod error;
pub mod foe;
pub mod frame;
#[doc(hidden)]
pub mod fuzzing;
pub mod latin1;
pub mod mailbox;
pub mod register;
pub mod sii;
pub mod soe;
pub mod voe;

pub use datagram::{Command, Datagram, DatagramRepr};
pub use error::{Error, Result};
pub use frame::{EcatFrame, EthernetFrame, FrameBuilder, ETHERTYPE_ETHERCAT};
pub use latin1::Latin1;

/// Read a little-endian `u16` at `off`. Callers guarantee the bounds (checked views).
#[inline]
pub(crate) fn le16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

/// Read a little-endian `u32` at `off`. Callers guarantee the bounds (checked views).
#[inline]
pub(crate) fn le32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// Write a little-endian `u16` at `off`.
#[inline]
pub(crate) fn put16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_le_bytes());
}

/// Write a little-endian `u32` at `off`.
#[inline]
pub(crate) fn put32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
