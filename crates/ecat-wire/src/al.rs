//! Application layer: the EtherCAT state machine states, AL control/status words and the AL
//! status code table (register 0x0134) with text.
//!
//! [`AlStatusCode`] is a newtype so unknown and vendor codes still print (as "vendor specific" or
//! "unknown"); code 0x002E decodes to both of its historical meanings (see the reference's
//! CONFLICT note), pinned by a test below.

use core::fmt;

/// An EtherCAT state (AL status bits 3:0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum AlState {
    /// INIT.
    Init = 0x01,
    /// PRE-OPERATIONAL.
    PreOp = 0x02,
    /// BOOT (bootstrap).
    Boot = 0x03,
    /// SAFE-OPERATIONAL.
    SafeOp = 0x04,
    /// OPERATIONAL.
    Op = 0x08,
}

impl AlState {
    /// Decode the state bits (3:0); `None` for combinations that are not a state.
    pub fn from_bits(v: u8) -> Option<AlState> {
        Some(match v & 0x0F {
            0x01 => AlState::Init,
            0x02 => AlState::PreOp,
            0x03 => AlState::Boot,
            0x04 => AlState::SafeOp,
            0x08 => AlState::Op,
            _ => return None,
        })
    }
    /// The name IgH's tool prints (`INIT`, `PREOP`, `BOOT`, `SAFEOP`, `OP`).
    pub fn name(self) -> &'static str {
        match self {
            AlState::Init => "INIT",
            AlState::PreOp => "PREOP",
            AlState::Boot => "BOOT",
            AlState::SafeOp => "SAFEOP",
            AlState::Op => "OP",
        }
    }
    /// Parse a user-typed state name (case-insensitive; `PRE-OP`, `SAFE-OP` and numbers too).
    pub fn parse_name(s: &str) -> Option<AlState> {
        let mut buf = [0u8; 16];
        let mut n = 0;
        for c in s.bytes() {
            if c == b'-' || c == b'_' {
                continue;
            }
            if n == buf.len() {
                return None;
            }
            buf[n] = c.to_ascii_uppercase();
            n += 1;
        }
        Some(match &buf[..n] {
            b"INIT" | b"1" => AlState::Init,
            b"PREOP" | b"2" => AlState::PreOp,
            b"BOOT" | b"3" => AlState::Boot,
            b"SAFEOP" | b"4" => AlState::SafeOp,
            b"OP" | b"8" => AlState::Op,
            _ => return None,
        })
    }
}

impl fmt::Display for AlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// AL status register (0x0130): state, error flag, identification flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AlStatus(pub u16);

impl AlStatus {
    /// Error indication bit.
    pub const ERROR: u16 = 0x10;
    /// Device identification loaded bit.
    pub const ID_LOADED: u16 = 0x20;

    /// The state, if bits 3:0 hold one.
    pub fn state(self) -> Option<AlState> {
        AlState::from_bits(self.0 as u8)
    }
    /// Raw state bits (3:0); a BRD of several SubDevices ORs them together.
    pub fn state_bits(self) -> u8 {
        (self.0 & 0x0F) as u8
    }
    /// Error flag set (a transition was refused or a local error happened).
    pub fn error(self) -> bool {
        self.0 & Self::ERROR != 0
    }
    /// Build a status word.
    pub fn new(state: AlState, error: bool) -> AlStatus {
        AlStatus(state as u16 | if error { Self::ERROR } else { 0 })
    }
}

impl fmt::Display for AlStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.state() {
            Some(s) => f.write_str(s.name())?,
            None => write!(f, "0x{:02X}", self.state_bits())?,
        }
        if self.error() {
            f.write_str("+ERR")?;
        }
        Ok(())
    }
}

/// AL control word (0x0120): requested state and error acknowledge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlControl(pub u16);

impl AlControl {
    /// Error acknowledge bit.
    pub const ACK: u16 = 0x10;
    /// Request `state`, optionally acknowledging an error.
    pub fn request(state: AlState, ack: bool) -> AlControl {
        AlControl(state as u16 | if ack { Self::ACK } else { 0 })
    }
    /// Requested state bits.
    pub fn state_bits(self) -> u8 {
        (self.0 & 0x0F) as u8
    }
    /// Acknowledge bit set.
    pub fn ack(self) -> bool {
        self.0 & Self::ACK != 0
    }
}

/// An AL status code (register 0x0134).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AlStatusCode(pub u16);

impl AlStatusCode {
    /// No error.
    pub const NO_ERROR: AlStatusCode = AlStatusCode(0x0000);
    /// Invalid requested state change.
    pub const INVALID_STATE_CHANGE: AlStatusCode = AlStatusCode(0x0011);
    /// Unknown requested state.
    pub const UNKNOWN_STATE: AlStatusCode = AlStatusCode(0x0012);
    /// Bootstrap not supported.
    pub const BOOTSTRAP_NOT_SUPPORTED: AlStatusCode = AlStatusCode(0x0013);
    /// Invalid mailbox configuration (BOOT).
    pub const INVALID_BOOT_MAILBOX: AlStatusCode = AlStatusCode(0x0015);
    /// Invalid mailbox configuration (PREOP).
    pub const INVALID_MAILBOX: AlStatusCode = AlStatusCode(0x0016);
    /// Invalid sync manager configuration.
    pub const INVALID_SM: AlStatusCode = AlStatusCode(0x0017);
    /// No valid outputs.
    pub const NO_VALID_OUTPUTS: AlStatusCode = AlStatusCode(0x0019);
    /// Sync manager watchdog.
    pub const SM_WATCHDOG: AlStatusCode = AlStatusCode(0x001B);
    /// Invalid output configuration.
    pub const INVALID_OUTPUT_CONFIG: AlStatusCode = AlStatusCode(0x001D);
    /// Invalid input configuration.
    pub const INVALID_INPUT_CONFIG: AlStatusCode = AlStatusCode(0x001E);
    /// Invalid DC SYNC configuration (e.g. SYNC0 not activated on a device that needs it).
    pub const INVALID_DC_SYNC_CONFIG: AlStatusCode = AlStatusCode(0x0030);

    /// The text for this code.
    pub fn description(self) -> &'static str {
        match self.0 {
            0x0000 => "no error",
            0x0001 => "unspecified error",
            0x0002 => "no memory",
            0x0003 => "invalid device setup",
            0x0004 => "invalid revision",
            0x0005 => "reserved",
            0x0006 => "SII/EEPROM information does not match firmware",
            0x0007 => "firmware update not successful, old firmware still running",
            0x000E => "license error",
            0x0011 => "invalid requested state change",
            0x0012 => "unknown requested state",
            0x0013 => "bootstrap not supported",
            0x0014 => "no valid firmware",
            0x0015 => "invalid mailbox configuration (BOOT)",
            0x0016 => "invalid mailbox configuration (PREOP)",
            0x0017 => "invalid sync manager configuration",
            0x0018 => "no valid inputs available",
            0x0019 => "no valid outputs",
            0x001A => "synchronization error",
            0x001B => "sync manager watchdog",
            0x001C => "invalid sync manager types",
            0x001D => "invalid output configuration",
            0x001E => "invalid input configuration",
            0x001F => "invalid watchdog configuration",
            0x0020 => "SubDevice needs cold start",
            0x0021 => "SubDevice needs INIT",
            0x0022 => "SubDevice needs PREOP",
            0x0023 => "SubDevice needs SAFEOP",
            0x0024 => "invalid input mapping",
            0x0025 => "invalid output mapping",
            0x0026 => "inconsistent settings",
            0x0027 => "free-run not supported",
            0x0028 => "synchronization mode not supported",
            0x0029 => "free-run needs 3-buffer mode",
            0x002A => "background watchdog",
            0x002B => "no valid inputs and outputs",
            0x002C => "fatal sync error",
            0x002D => "no sync error (sync signal not received)",
            0x002E => "cycle time too small (older: invalid input FMMU configuration)",
            0x0030 => "invalid DC SYNC configuration",
            0x0031 => "invalid DC latch configuration",
            0x0032 => "PLL error",
            0x0033 => "DC sync IO error",
            0x0034 => "DC sync timeout error",
            0x0035 => "DC invalid sync cycle time",
            0x0036 => "DC invalid SYNC0 cycle time",
            0x0037 => "DC invalid SYNC1 cycle time",
            0x0041 => "mailbox AoE error",
            0x0042 => "mailbox EoE error",
            0x0043 => "mailbox CoE error",
            0x0044 => "mailbox FoE error",
            0x0045 => "mailbox SoE error",
            0x004F => "mailbox VoE error",
            0x0050 => "EEPROM no access",
            0x0051 => "EEPROM error",
            0x0052 => "external hardware not ready",
            0x0060 => "SubDevice restarted locally",
            0x0061 => "device identification value updated",
            0x0070 => "detected module ident list does not match",
            0x0080 => "supply voltage too low",
            0x0081 => "supply voltage too high",
            0x0082 => "temperature too low",
            0x0083 => "temperature too high",
            0x00F0 => "application controller available",
            0x8000..=0xFFFF => "vendor specific",
            _ => "unknown AL status code",
        }
    }
}

impl fmt::Display for AlStatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:04X} ({})", self.0, self.description())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn states_round_trip() {
        for s in [
            AlState::Init,
            AlState::PreOp,
            AlState::Boot,
            AlState::SafeOp,
            AlState::Op,
        ] {
            assert_eq!(AlState::from_bits(s as u8), Some(s));
            assert_eq!(AlState::parse_name(s.name()), Some(s));
        }
        assert_eq!(AlState::from_bits(0x05), None);
        assert_eq!(AlState::parse_name("pre-op"), Some(AlState::PreOp));
        assert_eq!(AlState::parse_name("Safe_Op"), Some(AlState::SafeOp));
        assert_eq!(AlState::parse_name("RUN"), None);
        assert_eq!(AlState::parse_name("averyveryverylongname"), None);
    }

    #[test]
    fn status_word() {
        let s = AlStatus(0x0014);
        assert_eq!(s.state(), Some(AlState::SafeOp));
        assert!(s.error());
        assert_eq!(format!("{s}"), "SAFEOP+ERR");
        assert_eq!(format!("{}", AlStatus(0x06)), "0x06");
        assert_eq!(AlControl::request(AlState::Init, true).0, 0x0011);
    }

    #[test]
    fn codes_have_text() {
        assert_eq!(
            format!("{}", AlStatusCode(0x001D)),
            "0x001D (invalid output configuration)"
        );
        assert_eq!(AlStatusCode(0x001B).description(), "sync manager watchdog");
        assert_eq!(AlStatusCode(0x8001).description(), "vendor specific");
        assert_eq!(AlStatusCode(0x0099).description(), "unknown AL status code");
        // Reference CONFLICT on 0x002E: both meanings are shown.
        let t = AlStatusCode(0x002E).description();
        assert!(t.contains("cycle time too small") && t.contains("FMMU"));
    }
}
