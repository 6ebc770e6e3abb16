//! Distributed clocks: topology and propagation delays ([`topology`]), and the setup and
//! cyclic maintenance of the SubDevices' clocks.

pub mod setup;
pub mod topology;
