//! # ecat-sim: a virtual EtherCAT network that answers real frames
//!
//! A [`Network`] is a line of SubDevices; [`Network::process_frame`] takes one whole Ethernet
//! frame and returns it the way the ring of ESCs would: every datagram executed by every ESC
//! in wiring order, working counters and IRQ fields updated, the source MAC marked as
//! returned. Networks come from presets ([`Network::preset`]) or TOML files
//! ([`Network::from_file`]) listing catalogue models ([`devices`]), raw SII images, or any
//! device an ESI file describes ([`devices::esi`]: SII, ESC, CoE dictionary and PDO objects
//! built from the ESI, generic process-data behaviour, the drive model for CiA 402 drives).
//!
//! Each ESC ([`Esc`]) models the register space, process RAM, SyncManager mailbox gating,
//! FMMU (logical) addressing, the SII EEPROM interface and the AL state machine; see the
//! module notes in [`esc`]. The model must behave like real ESCs, not merely agree with our
//! own MainDevice: behaviour is taken from the reference and checked against captures of real
//! devices where they exist (the notes name them).
//!
//! Devices with CoE have an object dictionary ([`coe`]) generated from their description;
//! the mailbox serves SDO (every transfer form, complete access), SDO Information and
//! emergencies from it, and their process data follows the PDO assignment and mapping in it
//! (changeable in PREOP). The CiA 402 servo ([`devices::drive`]) runs its state machine,
//! modes and motor model on it.
//!
//! The other mailbox protocols ([`mbx`]) follow the SII's protocol word: FoE with a file store
//! per device and firmware writes in BOOT through the bootstrap mailbox, SoE IDNs (the
//! `ECAT-SOE-DRIVE` model), an EoE endpoint with a small IP stack (ARP, ICMP echo, UDP echo)
//! and VoE echo.
//!
//! Process data flows through 3-buffer SyncManagers into device behaviours (inputs that move,
//! outputs you can observe: [`Network::outputs`], [`Network::set_inputs`]). Faults are seeded
//! and scriptable ([`Faults`], [`FaultEvent`], [`Network::process`] returns each frame's
//! [`FrameFate`]); SubDevices can be unplugged, replugged and power-cycled, and whole branches
//! disconnected and connected (hot-connect groups).
//!
//! Distributed clocks ([`esc::dc`]): every ESC has a drifting local clock; a frame passes the
//! ports of a line or a tree (junction ports of the EK1100 and EK1122) hop by hop with cable
//! and forwarding delays, and the ESCs latch receive times, keep a local copy of system time
//! steered by a control loop, and generate SYNC0/SYNC1 pulses whose true times tests can
//! read ([`Network::frame_passages`], [`Network::sync0_pulses`], [`Esc::system_time`]).
//!
//! Each ESC has the resources of its chip ([`esc::chips`]: ET1100, ET1200, IP core, LAN9252,
//! TI PRU-ICSS, the 2007 FPGA ESCs, and the chips of the real devices in our captures), and
//! [`replay`] replays a real capture against a network and compares every answer with the
//! real devices' (`ecat replay`).
//!
//! Nothing from the wire can panic: malformed frames are dropped and counted.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod branch;
pub mod coe;
mod control;
mod deferred;
pub mod devices;
pub mod eni;
mod error;
pub mod esc;
pub mod faults;
pub mod fuzzing;
pub mod mbx;
mod netfile;
mod netfile_esi;
mod netfile_mbx;
mod network;
mod open;
pub mod pipeline;
pub mod replay;
mod ring;
mod rx_errors;
pub mod sii_info;
mod walk;

pub use error::SimError;
pub use esc::{Behaviour, BehaviourClone, DcClock, Esc, EscChip, FramePassage};
pub use faults::{DropReason, EventAction, FaultEvent, Faults, FrameFate};
pub use network::{Network, SimCounters, SubDeviceSummary, Wiring};
pub use open::{generated_line, MAX_GENERATED};
pub use ring::RingPort;
pub use sii_info::{SiiError, SiiInfo};
