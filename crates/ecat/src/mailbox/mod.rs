//! Mailbox communication with SubDevices, one engine for every protocol: the transport over
//! SM0/SM1 ([`exchange`]), the protocol-agnostic transfer interface ([`transfer`]) and the
//! requests ([`op`]), the job that steps one transfer ([`job`]), and the protocol clients
//! (CoE SDO: [`sdo`], FoE: [`foe`], SoE: [`soe`], VoE: [`voe`], EoE: [`eoe`]).
//!
//! All are sans-IO state machines; [`blocking`] drives a job over the configuration-phase
//! [`crate::bus::Bus`], and the cyclic [`crate::runtime::Runtime`] drives the same jobs through
//! [`service`] in its acyclic frame, so mailbox access in OP never delays process data. The
//! cyclic frames carry every SubDevice's SM1 "mailbox full" bit (an FMMU maps it into the
//! process image), so answers are read as soon as they are there and messages a SubDevice
//! sends on its own (CoE emergencies) are picked up at any time ([`emergency`]).

pub mod blocking;
pub mod emergency;
pub mod eoe;
pub mod exchange;
pub mod foe;
pub mod job;
pub mod op;
pub mod sdo;
pub mod service;
pub mod soe;
pub mod transfer;
pub mod voe;
