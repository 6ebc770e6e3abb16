//! Errors of the MainDevice: every one names who (SubDevice position, address, name) and why,
//! with spec codes decoded to text, so a user reads one sentence and knows what to fix.

use ecat_wire::al::{AlState, AlStatus, AlStatusCode};
use std::fmt;

/// Identifies a SubDevice in error messages: position, station address and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Who {
    /// Position in the ring (0 = first after the MainDevice).
    pub position: u16,
    /// Configured station address (0 before assignment).
    pub station: u16,
    /// Name from the SII (may be empty before the SII was read).
    pub name: String,
}

impl fmt::Display for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SubDevice {} (0x{:04X}", self.position, self.station)?;
        if !self.name.is_empty() {
            write!(f, ", {}", self.name)?;
        }
        f.write_str(")")
    }
}

/// Everything that can go wrong in the MainDevice.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The named network interface does not exist.
    #[error("network interface '{name}' does not exist; available: {}", available.join(", "))]
    NoSuchInterface {
        /// What the user asked for.
        name: String,
        /// Interfaces that exist on this machine.
        available: Vec<String>,
    },
    /// Opening a raw socket was not permitted.
    #[error("no permission to open a raw socket on '{iface}': run as root or grant the capability with `setcap cap_net_raw+ep {exe}`")]
    RawSocketPermission {
        /// Interface.
        iface: String,
        /// Path of the running program.
        exe: String,
    },
    /// The link specification could not be understood.
    #[error("cannot understand interface '{spec}': {reason}")]
    BadLinkSpec {
        /// What the user wrote.
        spec: String,
        /// Why it was refused.
        reason: String,
    },
    /// An operating-system call on the link failed.
    #[error("{op} on '{iface}' failed: {source}")]
    Io {
        /// What was attempted.
        op: &'static str,
        /// Interface.
        iface: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A datagram got no answer after all retries.
    #[error("no answer to {what} after {attempts} attempts (is the cable plugged in and the interface up?)")]
    Timeout {
        /// What was sent.
        what: String,
        /// How often it was sent.
        attempts: u32,
    },
    /// A datagram came back with an unexpected working counter.
    #[error("{what}: working counter {got}, expected {expected}")]
    Wkc {
        /// What was sent.
        what: String,
        /// WKC expected.
        expected: u16,
        /// WKC received.
        got: u16,
    },
    /// No SubDevice answered.
    #[error("no SubDevices found on '{iface}' (nothing answered a broadcast read)")]
    NoSubDevices {
        /// Interface.
        iface: String,
    },
    /// A SubDevice refused a state change.
    #[error("{who} refused {requested}: AL status {status}, code {code}")]
    StateRefused {
        /// The SubDevice.
        who: Who,
        /// State asked for.
        requested: AlState,
        /// Status it reported.
        status: AlStatus,
        /// AL status code with text.
        code: AlStatusCode,
    },
    /// A SubDevice did not reach a state in time.
    #[error("{who} did not reach {requested} within {timeout_ms} ms (still {status})")]
    StateTimeout {
        /// The SubDevice.
        who: Who,
        /// State asked for.
        requested: AlState,
        /// Last status seen.
        status: AlStatus,
        /// Timeout.
        timeout_ms: u64,
    },
    /// The SII EEPROM could not be read or decoded.
    #[error("{who}: SII {reason}")]
    Sii {
        /// The SubDevice.
        who: Who,
        /// What went wrong.
        reason: String,
    },
    /// The SubDevice has no CoE mailbox.
    #[error("{who} has no CoE mailbox (mailbox protocols in its SII: {protocols})")]
    NoCoe {
        /// The SubDevice.
        who: Who,
        /// The protocols it does have.
        protocols: String,
    },
    /// The SubDevice aborted an SDO transfer.
    #[error("{who}: SDO {what} aborted: {code}")]
    SdoAbort {
        /// The SubDevice.
        who: Who,
        /// The transfer, e.g. `upload 0x1018:01`.
        what: String,
        /// The abort code with its text.
        code: ecat_wire::coe::SdoAbortCode,
    },
    /// A mailbox transfer failed (timeout, mailbox error, garbled answer, or refused by the
    /// SubDevice with a protocol error such as an FoE or SoE error code).
    #[error("{who}: {what} failed: {reason}")]
    Mailbox {
        /// The SubDevice.
        who: Who,
        /// The transfer with its protocol, e.g. `SDO upload 0x1018:01`.
        what: String,
        /// What went wrong.
        reason: String,
    },
    /// The user asked for a SubDevice that is not on the bus.
    #[error("{0}")]
    NotFound(String),
    /// A request the user made cannot be carried out as given.
    #[error("{0}")]
    Invalid(String),
}

/// Result alias for the MainDevice.
pub type Result<T> = std::result::Result<T, Error>;
