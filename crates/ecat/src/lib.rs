//! # ecat: an EtherCAT MainDevice in Linux user space
//!
//! ETG's terms are used throughout: the **MainDevice** (master) drives a ring of
//! **SubDevices** (slaves).
//!
//! Layers, bottom up:
//! - [`link`]: how frames leave and enter (AF_PACKET raw socket, in-process simulator);
//! - [`frame`]: the sans-IO frame engine (datagram queue, index matching, timeouts);
//! - [`bus`]: the blocking driver used during configuration (link + engine + clock);
//! - [`eeprom`]: reading and writing the SII EEPROM through the ESC registers;
//! - [`scan`]: counting, resetting, addressing and identifying the SubDevices;
//! - [`subdevice`]: what the MainDevice knows about each SubDevice;
//! - [`esm`]: EtherCAT state machine requests with decoded refusals;
//! - [`config`], [`domain`], [`cyclic`]: process data layout and the cyclic frames;
//! - [`supervisor`]: per-SubDevice state machines that bring up and recover SubDevices;
//! - [`hotconnect`]: groups of SubDevices that leave and join while the rest cycles;
//! - [`runtime`]: the activated MainDevice (receive / process / send);
//! - [`cycle`], [`perf`]: the real-time loop and the figures it measures;
//! - [`eni`]: running a bus from an ENI file (checks, layout, init commands, variables);
//! - [`control`]: the control socket the `ecat` tool uses beside a running application;
//! - [`maindevice`]: the façade the CLI and applications use.

#![warn(missing_docs)]

pub mod analyze;
pub mod bus;
pub mod capture_read;
pub mod cia402;
pub mod clock;
pub mod config;
pub mod control;
pub mod cpu_load;
pub mod cycle;
pub mod cyclic;
pub mod cyclic_pack;
pub mod dc;
pub mod doctor;
pub mod domain;
pub mod eeprom;
pub mod eni;
pub mod eoe;
pub mod error;
pub mod esm;
pub mod frame;
#[cfg(feature = "sim")]
pub mod fuzzing;
pub mod hotconnect;
pub mod latency_hold;
pub mod link;
pub mod link_config;
pub mod mailbox;
pub mod maindevice;
pub mod netns;
pub mod pdo_coe;
pub mod pdo_setup;
pub mod perf;
pub mod runtime;
pub mod scan;
pub mod servo;
mod sii_decode;
pub mod subdevice;
pub mod supervisor;

pub use error::{Error, Result};
pub use maindevice::MainDevice;
pub use subdevice::SubDevice;
