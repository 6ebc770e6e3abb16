//! Errors of the ESI reader, the device library and the SII builder.
//!
//! Each variant renders as one sentence that names the file (and `line:column` where the
//! problem has a place in it), what was expected, and what was found, so a front end can print
//! it as is.

use std::path::PathBuf;

/// Everything that can go wrong while reading ESI files or building an SII image.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read.
    #[error("{path}: cannot read the ESI file: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The file is not well-formed XML.
    #[error("{file}:{line}:{column}: malformed XML: {message}")]
    Xml {
        /// The file (or `<input>` for text without a file).
        file: String,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// The XML parser's description of what it expected.
        message: String,
    },
    /// Well-formed XML that does not hold what an ESI must hold at this place.
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What was expected and what was found.
        message: String,
    },
    /// The ESI file has no device of the requested type (or revision).
    #[error("{file}: no device type {wanted}; the file has {}", list_or_none(.available))]
    NoSuchType {
        /// The file.
        file: String,
        /// The type (and revision) asked for.
        wanted: String,
        /// The device types the file does describe (with their revisions).
        available: Vec<String>,
    },
    /// No ESI file in the library describes the requested device.
    #[error("no ESI file describes {wanted}; searched {}", dirs_or_none(.dirs))]
    UnknownDevice {
        /// What was asked for (vendor, product, revision or type name).
        wanted: String,
        /// The ESI directories searched.
        dirs: Vec<PathBuf>,
    },
    /// The device cannot be laid out as an SII image.
    #[error("device {device}: cannot build its SII image: {message}")]
    Sii {
        /// The device's type name and revision.
        device: String,
        /// Why.
        message: String,
    },
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "no devices".into()
    } else {
        v.join(", ")
    }
}

fn dirs_or_none(v: &[PathBuf]) -> String {
    if v.is_empty() {
        "no directories (set ECAT_ESI_PATH or pass --esi-dir)".into()
    } else {
        v.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
