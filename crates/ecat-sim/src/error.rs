//! The one error type of the simulator's front door (presets, network files, SII files).
//! Every message is one sentence that names the place (`file:line`) and the fix.

use crate::sii_info::SiiError;
use std::path::PathBuf;

/// Why a network could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// `sim:<name>` named no preset and no file.
    #[error("unknown network preset \"{name}\"; use one of: {presets}, or a path to a .toml network file")]
    UnknownPreset {
        /// What was asked for.
        name: String,
        /// Valid preset names, comma separated.
        presets: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A network file is not valid TOML or does not describe a network.
    #[error("{location}: {message}")]
    Invalid {
        /// `file:line`.
        location: String,
        /// What is wrong.
        message: String,
    },
    /// A network file names a model the catalogue does not have.
    #[error("{location}: unknown model \"{model}\"; valid models: {models}")]
    UnknownModel {
        /// `file:line`.
        location: String,
        /// The name given.
        model: String,
        /// Valid model names, comma separated.
        models: String,
    },
    /// A test API call named a SubDevice the network does not have.
    #[error("no SubDevice at position {position}: the network has {count} (positions 0..{count}, passive terminals not counted)")]
    NoSubDevice {
        /// The position given.
        position: usize,
        /// ESCs in the network.
        count: usize,
    },
    /// An SII image file cannot be used.
    #[error("{location}: cannot use SII image {}: {reason}", path.display())]
    BadSii {
        /// `file:line`.
        location: String,
        /// The image file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl SimError {
    /// Wrap an SII validation error for `path` referenced at `location`.
    pub(crate) fn bad_sii(location: &str, path: PathBuf, e: SiiError) -> SimError {
        SimError::BadSii {
            location: location.to_string(),
            path,
            reason: e.to_string(),
        }
    }
}
