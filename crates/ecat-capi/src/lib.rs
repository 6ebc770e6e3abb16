//! # libethercat: IgH's `ecrt.h` (API 1.6) over the ecat MainDevice
//!
//! This crate is a thin door: every `ecrt_*` function maps onto [`ecat::MainDevice`] (before
//! activation) or [`ecat::runtime::Runtime`] (after it). There is no second frame engine and
//! no second cyclic loop: `ecrt_master_send` is `Runtime::send`, `ecrt_master_receive` is
//! `Runtime::receive`, and acyclic work (supervisor, mailbox and register requests) rides in the
//! frames the application's thread sends.
//!
//! Layout of the crate, one concern per module:
//! - [`abi`]: the C structures and enums of `include/ecrt.h`, byte for byte;
//! - [`ffi`]: the FFI guard (no panic crosses into C) and the `ecat:` log line;
//! - [`check`]: the checks of the caller's mistakes (a released master, the wrong phase,
//!   absurd sizes and indices), one helper per kind;
//! - [`link_config`]: which link master N uses (environment, `/etc/ecat.conf`);
//! - [`master`]: `ec_master_t`, request/release, activation, send/receive, state, info;
//! - [`control`]: the control socket the `ecat` tool talks to beside the application;
//! - [`info`]: `ecrt_master_get_slave` / `_sync_manager` / `_pdo` / `_pdo_entry`;
//! - [`sdo`]: blocking SDO access through the master;
//! - [`slave_config`]: `ec_slave_config_t`, its state, flags and timeouts;
//! - [`pdo_config`]: PDO assignment and mapping, entry registration;
//! - [`startup`]: startup SDOs and the emergency ring;
//! - [`layout`]: IgH's domain layout (offsets known at registration) and its mapping onto
//!   ecat's domains at activation;
//! - [`domain`]: `ec_domain_t`, registration and IgH's image layout;
//! - [`cyclic`]: the cyclic calls (receive, domain process/state/data/queue, send), together;
//! - [`share`]: ecat's image laid out at IgH's offsets, so a domain copies nothing;
//! - [`requests`]: SDO and register requests;
//! - [`mbx_request`]: what the SoE requests and VoE handlers share (a transfer in the cycle);
//! - [`soe`]: blocking IDN access, startup IDNs and SoE requests;
//! - [`voe`]: VoE handlers;
//! - [`dc`]: distributed clock calls;
//! - [`eoe`]: EoE parameters, sent as one set-IP-parameter request at configuration;
//! - [`helpers`]: version magic and the real/lreal helpers;
//! - [`fuzzing`]: the fuzz target over random call sequences (`fuzz/`, replayed by `cargo test`).
//!
//! Threading follows IgH: configuration calls and the cyclic calls come from one thread at a
//! time; blocking SDO calls may come from another thread while the application cycles.

#![warn(missing_docs)]

pub mod abi;
pub mod check;
pub mod control;
pub mod cyclic;
pub mod dc;
pub mod domain;
pub mod eoe;
pub mod ffi;
pub mod fuzzing;
pub mod helpers;
pub mod info;
pub mod layout;
pub use ecat::link_config;
pub mod master;
pub mod mbx_request;
pub mod pdo_config;
pub mod requests;
pub mod sdo;
pub mod share;
pub mod slave_config;
pub mod soe;
pub mod startup;
pub mod voe;
