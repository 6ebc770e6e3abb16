//! The one error type of the codecs: what was wrong with the bytes, never a panic.

use core::fmt;

/// Why a buffer could not be read or written as the requested structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The buffer ends before the structure does.
    Truncated,
    /// A length field disagrees with the buffer or with the protocol's limits.
    BadLength,
    /// A field holds a value the protocol does not define (e.g. an unknown command code).
    BadValue,
    /// The EtherType is not EtherCAT (0x88A4).
    NotEtherCat,
    /// The EtherCAT header type is not 1 (datagrams).
    UnsupportedType,
    /// A checksum does not match (SII CRC-8).
    Checksum,
    /// The output buffer is too small for what should be written into it.
    NoSpace,
}

/// Result alias for the codecs.
pub type Result<T> = core::result::Result<T, Error>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::Truncated => "buffer ends before the structure does",
            Error::BadLength => "length field does not fit the buffer or the protocol limits",
            Error::BadValue => "field holds a value the protocol does not define",
            Error::NotEtherCat => "not an EtherCAT frame (EtherType is not 0x88A4)",
            Error::UnsupportedType => "EtherCAT header type is not 1 (datagrams)",
            Error::Checksum => "checksum mismatch",
            Error::NoSpace => "output buffer too small",
        })
    }
}

impl core::error::Error for Error {}
