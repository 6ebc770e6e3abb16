//! Mailbox communication with SubDevices: the transport over SM0/SM1 ([`exchange`]) and the
//! CoE SDO client on top of it ([`sdo`]).
//!
//! Both are sans-IO state machines; [`blocking`] drives them over the configuration-phase
//! [`crate::bus::Bus`], and the cyclic [`crate::runtime::Runtime`] drives the same machines one
//! datagram per cycle in its acyclic frame, so SDO access in OP never delays process data.

pub mod blocking;
pub mod exchange;
pub mod job;
pub mod sdo;
pub mod service;
