//! EtherCAT configuration files.
//!
//! - [`esi`]: the ESI reader (ETG.2000 device descriptions) into plain data types that do not
//!   depend on the simulator or the master: [`Device`] with its SyncManagers, FMMUs, PDOs,
//!   CoE dictionary, DC modes, EEPROM and ESC information.
//! - [`eni`]: the ENI reader (ETG.2100 network configurations): master and slave init
//!   commands, process data, mailbox and CoE init commands, cyclic frames, process image.
//! - [`library`]: ESI directories (`ECAT_ESI_PATH`, `--esi-dir`) indexed by vendor, product,
//!   revision and type name, parsed lazily.
//! - [`sii_build`]: SII EEPROM images built from a [`Device`].
//! - [`sii_diff`]: what separates a built image from a real EEPROM, by class (per-unit data,
//!   ESI edition, undocumented).
//!
//! ```no_run
//! use ecat_config::{DeviceLibrary, build_sii};
//! let lib = DeviceLibrary::from_env_and(["/opt/esi"]);
//! let dev = lib.find_type("EL2004", None)?;
//! let image = build_sii(&dev)?;
//! # Ok::<(), ecat_config::Error>(())
//! ```

pub mod eni;
pub mod error;
pub mod esi;
pub mod library;
pub mod sii_build;
pub mod sii_diff;

pub use eni::Eni;
pub use error::{Error, Result};
pub use esi::{set_warning_handler, BrokenDevice, Device, EsiFile, Warning};
pub use library::{DeviceLibrary, DeviceRef, ESI_PATH_ENV};
pub use sii_build::{
    build_sii, build_sii_detailed, build_sii_with, latin1, sync_unit_bytes, BuiltSii, PdoContent,
    SiiOptions,
};
