//! ESC register addresses (0x0000–0x0FFF) and the bitfields a MainDevice and a simulator need.
//!
//! Addresses are plain `u16` constants named after ETG.1000.4 / the Beckhoff register manual.
//! The multi-byte register blocks (SyncManager, FMMU, DL status, EEPROM control) have small
//! `Repr`s with `parse`/`emit` over byte slices.

use crate::{le16, le32, put16, put32, Error, Result};

/// ESC type (0x0000).
pub const TYPE: u16 = 0x0000;
/// ESC revision (0x0001).
pub const REVISION: u16 = 0x0001;
/// ESC build (0x0002, 2 bytes).
pub const BUILD: u16 = 0x0002;
/// Number of FMMUs supported (0x0004).
pub const FMMU_COUNT: u16 = 0x0004;
/// Number of SyncManagers supported (0x0005).
pub const SM_COUNT: u16 = 0x0005;
/// Process RAM size in KiB (0x0006).
pub const RAM_SIZE: u16 = 0x0006;
/// Port descriptor, 2 bits per port (0x0007).
pub const PORT_DESCRIPTOR: u16 = 0x0007;
/// ESC features supported (0x0008, 2 bytes).
pub const FEATURES: u16 = 0x0008;
/// Configured station address (0x0010, 2 bytes).
pub const STATION_ADDRESS: u16 = 0x0010;
/// Configured station alias (0x0012, 2 bytes).
pub const STATION_ALIAS: u16 = 0x0012;
/// Register write enable (0x0020).
pub const WRITE_ENABLE: u16 = 0x0020;
/// Register write protection (0x0021).
pub const WRITE_PROTECTION: u16 = 0x0021;
/// ESC write enable (0x0030).
pub const ESC_WRITE_ENABLE: u16 = 0x0030;
/// ESC write protection (0x0031).
pub const ESC_WRITE_PROTECTION: u16 = 0x0031;
/// ESC reset ECAT (0x0040).
pub const RESET_ECAT: u16 = 0x0040;
/// DL control (0x0100, 4 bytes).
pub const DL_CONTROL: u16 = 0x0100;
/// DL control: loop port settings (0x0101).
pub const DL_CONTROL_LOOP: u16 = 0x0101;
/// DL control byte 3: bit 0 enables alias addressing (0x0103).
pub const DL_CONTROL_ALIAS: u16 = 0x0103;
/// Physical read/write offset (0x0108).
pub const PHYSICAL_RW_OFFSET: u16 = 0x0108;
/// DL status (0x0110, 2 bytes).
pub const DL_STATUS: u16 = 0x0110;
/// AL control (0x0120, 2 bytes).
pub const AL_CONTROL: u16 = 0x0120;
/// AL status (0x0130, 2 bytes).
pub const AL_STATUS: u16 = 0x0130;
/// AL status code (0x0134, 2 bytes).
pub const AL_STATUS_CODE: u16 = 0x0134;
/// RUN LED override (0x0138).
pub const RUN_LED: u16 = 0x0138;
/// ERR LED override (0x0139).
pub const ERR_LED: u16 = 0x0139;
/// PDI control (0x0140).
pub const PDI_CONTROL: u16 = 0x0140;
/// ESC configuration (0x0141); bit 0 device emulation.
pub const ESC_CONFIG: u16 = 0x0141;
/// PDI configuration (0x0150).
pub const PDI_CONFIG: u16 = 0x0150;
/// ECAT event mask (0x0200, 2 bytes).
pub const ECAT_EVENT_MASK: u16 = 0x0200;
/// AL event mask (0x0204, 4 bytes).
pub const AL_EVENT_MASK: u16 = 0x0204;
/// ECAT event request (0x0210, 2 bytes).
pub const ECAT_EVENT: u16 = 0x0210;
/// AL event request (0x0220, 4 bytes).
pub const AL_EVENT: u16 = 0x0220;
/// RX error counters, port 0..3 (0x0300, 2 bytes each: invalid frame, RX error).
pub const RX_ERROR_COUNTER: u16 = 0x0300;
/// Forwarded RX error counters (0x0308, 1 byte per port).
pub const FWD_RX_ERROR_COUNTER: u16 = 0x0308;
/// ECAT processing unit error counter (0x030C).
pub const EPU_ERROR_COUNTER: u16 = 0x030C;
/// PDI error counter (0x030D).
pub const PDI_ERROR_COUNTER: u16 = 0x030D;
/// Lost link counters (0x0310, 1 byte per port).
pub const LOST_LINK_COUNTER: u16 = 0x0310;
/// Watchdog divider (0x0400, 2 bytes).
pub const WATCHDOG_DIVIDER: u16 = 0x0400;
/// PDI watchdog time (0x0410, 2 bytes).
pub const WATCHDOG_PDI: u16 = 0x0410;
/// Process data (SM) watchdog time (0x0420, 2 bytes).
pub const WATCHDOG_PD: u16 = 0x0420;
/// Process data watchdog status (0x0440).
pub const WATCHDOG_PD_STATUS: u16 = 0x0440;
/// Process data watchdog expiry counter (0x0442).
pub const WATCHDOG_PD_COUNTER: u16 = 0x0442;
/// PDI watchdog expiry counter (0x0443).
pub const WATCHDOG_PDI_COUNTER: u16 = 0x0443;
/// EEPROM configuration (0x0500): bit 0 PDI access offered, bit 1 force ECAT.
pub const EEPROM_CONFIG: u16 = 0x0500;
/// EEPROM PDI access state (0x0501).
pub const EEPROM_PDI_ACCESS: u16 = 0x0501;
/// EEPROM control/status (0x0502, 2 bytes).
pub const EEPROM_CONTROL: u16 = 0x0502;
/// EEPROM word address (0x0504, 4 bytes).
pub const EEPROM_ADDRESS: u16 = 0x0504;
/// EEPROM data (0x0508, 4 or 8 bytes).
pub const EEPROM_DATA: u16 = 0x0508;
/// FMMU 0 (0x0600); FMMU n at `FMMU0 + 16·n`.
pub const FMMU0: u16 = 0x0600;
/// SyncManager 0 (0x0800); SM n at `SM0 + 8·n`.
pub const SM0: u16 = 0x0800;
/// DC receive time port 0 (0x0900, 4 bytes; a write latches all ports).
pub const DC_RECEIVE_TIME_PORT0: u16 = 0x0900;
/// DC system time (0x0910, 8 bytes).
pub const DC_SYSTEM_TIME: u16 = 0x0910;
/// DC receive time of the processing unit (0x0918, 8 bytes).
pub const DC_RECEIVE_TIME_EPU: u16 = 0x0918;
/// DC system time offset (0x0920, 8 bytes).
pub const DC_SYSTEM_TIME_OFFSET: u16 = 0x0920;
/// DC system time delay (0x0928, 4 bytes).
pub const DC_SYSTEM_TIME_DELAY: u16 = 0x0928;
/// DC system time difference (0x092C, 4 bytes).
pub const DC_SYSTEM_TIME_DIFFERENCE: u16 = 0x092C;
/// DC speed counter start (0x0930, 2 bytes).
pub const DC_SPEED_COUNTER_START: u16 = 0x0930;
/// DC system time difference filter depth (0x0934).
pub const DC_TIME_FILTER_DEPTH: u16 = 0x0934;
/// DC cyclic unit control (0x0980).
pub const DC_CYCLIC_UNIT_CONTROL: u16 = 0x0980;
/// DC activation (0x0981).
pub const DC_ACTIVATION: u16 = 0x0981;
/// DC SYNC pulse length (0x0982, 2 bytes).
pub const DC_PULSE_LENGTH: u16 = 0x0982;
/// DC start time of cyclic operation (0x0990, 8 bytes).
pub const DC_START_TIME: u16 = 0x0990;
/// DC SYNC0 cycle time (0x09A0, 4 bytes).
pub const DC_SYNC0_CYCLE: u16 = 0x09A0;
/// DC SYNC1 cycle time (0x09A4, 4 bytes).
pub const DC_SYNC1_CYCLE: u16 = 0x09A4;
/// First byte of process RAM.
pub const PROCESS_RAM: u16 = 0x1000;

/// Address of FMMU `n`.
pub const fn fmmu(n: u8) -> u16 {
    FMMU0 + 16 * n as u16
}

/// Address of SyncManager `n`.
pub const fn sm(n: u8) -> u16 {
    SM0 + 8 * n as u16
}

/// ESC feature bits (register 0x0008).
pub mod features {
    /// FMMU operation is bit-oriented.
    pub const FMMU_BIT_OPERATION: u16 = 1 << 0;
    /// Distributed clocks supported.
    pub const DC: u16 = 1 << 2;
    /// 64-bit distributed clocks.
    pub const DC_64BIT: u16 = 1 << 3;
    /// Low-jitter EBUS.
    pub const LOW_JITTER_EBUS: u16 = 1 << 4;
    /// Enhanced link detection EBUS.
    pub const ENHANCED_LINK_EBUS: u16 = 1 << 5;
    /// Enhanced link detection MII.
    pub const ENHANCED_LINK_MII: u16 = 1 << 6;
    /// Separate handling of FCS errors.
    pub const SEPARATE_FCS: u16 = 1 << 7;
    /// Enhanced DC SYNC activation.
    pub const ENHANCED_DC_SYNC: u16 = 1 << 8;
    /// LRW is NOT supported.
    pub const NO_LRW: u16 = 1 << 9;
    /// BRW/APRW/FPRW are NOT supported.
    pub const NO_RW: u16 = 1 << 10;
    /// Fixed FMMU/SM configuration.
    pub const FIXED_CONFIG: u16 = 1 << 11;
}

/// Physical type of a port from the port descriptor (0x0007).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortType {
    /// Port not implemented.
    NotImplemented,
    /// Not configured (SII).
    NotConfigured,
    /// E-Bus (LVDS).
    Ebus,
    /// MII/RMII/RGMII (100BASE-TX).
    Mii,
}

impl PortType {
    /// Decode the 2-bit port type of `port` from a port descriptor byte.
    pub fn from_descriptor(desc: u8, port: usize) -> PortType {
        match (desc >> (2 * (port & 3))) & 3 {
            0 => PortType::NotImplemented,
            1 => PortType::NotConfigured,
            2 => PortType::Ebus,
            _ => PortType::Mii,
        }
    }
    /// Short name (`EBUS`, `MII`, `N/C`, `-`).
    pub fn name(self) -> &'static str {
        match self {
            PortType::NotImplemented => "-",
            PortType::NotConfigured => "N/C",
            PortType::Ebus => "EBUS",
            PortType::Mii => "MII",
        }
    }
}

/// DL status (0x0110).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DlStatus(pub u16);

impl DlStatus {
    /// EEPROM loaded / PDI operational.
    pub fn pdi_operational(self) -> bool {
        self.0 & 1 != 0
    }
    /// PDI watchdog not expired.
    pub fn pdi_watchdog_ok(self) -> bool {
        self.0 & 2 != 0
    }
    /// Physical link on `port` (0..3).
    pub fn link(self, port: usize) -> bool {
        self.0 & (1 << (4 + (port & 3))) != 0
    }
    /// Loop closed on `port`.
    pub fn loop_closed(self, port: usize) -> bool {
        self.0 & (1 << (8 + 2 * (port & 3))) != 0
    }
    /// Stable communication on `port`.
    pub fn communication(self, port: usize) -> bool {
        self.0 & (1 << (9 + 2 * (port & 3))) != 0
    }
    /// Port open and in use: communication established and loop open.
    pub fn port_open(self, port: usize) -> bool {
        self.communication(port) && !self.loop_closed(port)
    }
    /// Build a DL status from per-port (link, loop closed, communication) flags.
    pub fn from_ports(pdi_operational: bool, ports: [(bool, bool, bool); 4]) -> DlStatus {
        let mut v = if pdi_operational { 0b11 } else { 0b10 };
        for (i, (link, closed, com)) in ports.iter().enumerate() {
            if *link {
                v |= 1 << (4 + i);
            }
            if *closed {
                v |= 1 << (8 + 2 * i);
            }
            if *com {
                v |= 1 << (9 + 2 * i);
            }
        }
        DlStatus(v)
    }
}

/// EEPROM control/status bits (0x0502).
pub mod eeprom {
    /// ECAT write enable (accompanies a write command).
    pub const WRITE_ENABLE: u16 = 1 << 0;
    /// EEPROM emulation by the PDI.
    pub const EMULATION: u16 = 1 << 5;
    /// Reads return 8 bytes (else 4).
    pub const READ_8_BYTES: u16 = 1 << 6;
    /// Two address bytes (EEPROMs above 16 Kbit).
    pub const TWO_ADDRESS_BYTES: u16 = 1 << 7;
    /// Command field mask (bits 8–10).
    pub const CMD_MASK: u16 = 0x0700;
    /// Command: idle (also clears error bits).
    pub const CMD_IDLE: u16 = 0x0000;
    /// Command: read.
    pub const CMD_READ: u16 = 0x0100;
    /// Command: write.
    pub const CMD_WRITE: u16 = 0x0200;
    /// Command: reload the ESC configuration area.
    pub const CMD_RELOAD: u16 = 0x0400;
    /// Checksum error in the ESC configuration area.
    pub const ERR_CHECKSUM: u16 = 1 << 11;
    /// EEPROM loading / device information error.
    pub const ERR_LOADING: u16 = 1 << 12;
    /// Missing acknowledge or invalid command.
    pub const ERR_ACK: u16 = 1 << 13;
    /// Write without write enable.
    pub const ERR_WRITE_ENABLE: u16 = 1 << 14;
    /// Busy.
    pub const BUSY: u16 = 1 << 15;
    /// All error bits.
    pub const ERR_MASK: u16 = 0x7800;
}

/// SyncManager control byte (offset 4 of an SM entry).
pub mod sm_control {
    /// Mode mask (bits 1:0).
    pub const MODE_MASK: u8 = 0b11;
    /// 3-buffer (buffered) mode.
    pub const MODE_BUFFERED: u8 = 0b00;
    /// Mailbox (1-buffer) mode.
    pub const MODE_MAILBOX: u8 = 0b10;
    /// Direction mask (bits 3:2).
    pub const DIR_MASK: u8 = 0b1100;
    /// ECAT reads, PDI writes (inputs, SM1/SM3).
    pub const DIR_READ: u8 = 0b0000;
    /// ECAT writes, PDI reads (outputs, SM0/SM2).
    pub const DIR_WRITE: u8 = 0b0100;
    /// ECAT event enable.
    pub const ECAT_EVENT: u8 = 1 << 4;
    /// PDI event enable.
    pub const PDI_EVENT: u8 = 1 << 5;
    /// Watchdog trigger enable.
    pub const WATCHDOG: u8 = 1 << 6;
}

/// One SyncManager register block (8 bytes at 0x0800 + 8·n).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SmRepr {
    /// Physical start address.
    pub start: u16,
    /// Length in bytes.
    pub length: u16,
    /// Control byte (mode, direction, events, watchdog).
    pub control: u8,
    /// Status byte (read-only for the MainDevice).
    pub status: u8,
    /// Activate byte: bit 0 enable, bit 1 repeat request.
    pub activate: u8,
    /// PDI control: bit 0 deactivate, bit 1 repeat acknowledge.
    pub pdi_control: u8,
}

impl SmRepr {
    /// Size of the register block.
    pub const LEN: usize = 8;
    /// Status bit: mailbox full.
    pub const STATUS_MAILBOX_FULL: u8 = 1 << 3;

    /// Decode 8 bytes.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        Ok(SmRepr {
            start: le16(b, 0),
            length: le16(b, 2),
            control: b[4],
            status: b[5],
            activate: b[6],
            pdi_control: b[7],
        })
    }
    /// Encode into 8 bytes.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < Self::LEN {
            return Err(Error::NoSpace);
        }
        put16(b, 0, self.start);
        put16(b, 2, self.length);
        b[4] = self.control;
        b[5] = self.status;
        b[6] = self.activate;
        b[7] = self.pdi_control;
        Ok(())
    }
    /// Enabled by the MainDevice.
    pub fn enabled(&self) -> bool {
        self.activate & 1 != 0
    }
    /// Mailbox mode (else buffered).
    pub fn is_mailbox(&self) -> bool {
        self.control & sm_control::MODE_MASK == sm_control::MODE_MAILBOX
    }
    /// MainDevice writes this SM (outputs / mailbox out).
    pub fn ecat_writes(&self) -> bool {
        self.control & sm_control::DIR_MASK == sm_control::DIR_WRITE
    }
}

/// One FMMU register block (16 bytes at 0x0600 + 16·n).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FmmuRepr {
    /// Logical start address.
    pub logical_start: u32,
    /// Length of the logical window in bytes.
    pub length: u16,
    /// Logical start bit (0–7).
    pub logical_start_bit: u8,
    /// Logical stop bit (0–7).
    pub logical_stop_bit: u8,
    /// Physical start address.
    pub physical_start: u16,
    /// Physical start bit (0–7).
    pub physical_start_bit: u8,
    /// Type: bit 0 read (inputs), bit 1 write (outputs).
    pub kind: u8,
    /// Activate: bit 0 enable.
    pub enable: u8,
}

impl FmmuRepr {
    /// Size of the register block.
    pub const LEN: usize = 16;
    /// Type bit: mapped for reading (inputs to the MainDevice).
    pub const READ: u8 = 1;
    /// Type bit: mapped for writing (outputs from the MainDevice).
    pub const WRITE: u8 = 2;

    /// Decode 16 bytes.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < Self::LEN {
            return Err(Error::Truncated);
        }
        Ok(FmmuRepr {
            logical_start: le32(b, 0),
            length: le16(b, 4),
            logical_start_bit: b[6],
            logical_stop_bit: b[7],
            physical_start: le16(b, 8),
            physical_start_bit: b[10],
            kind: b[11],
            enable: b[12],
        })
    }
    /// Encode into 16 bytes (reserved bytes zeroed).
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < Self::LEN {
            return Err(Error::NoSpace);
        }
        put32(b, 0, self.logical_start);
        put16(b, 4, self.length);
        b[6] = self.logical_start_bit;
        b[7] = self.logical_stop_bit;
        put16(b, 8, self.physical_start);
        b[10] = self.physical_start_bit;
        b[11] = self.kind;
        b[12] = self.enable;
        b[13..16].fill(0);
        Ok(())
    }
    /// Enabled.
    pub fn enabled(&self) -> bool {
        self.enable & 1 != 0
    }
    /// Number of mapped bits: (length − 1)·8 + (stop − start + 1).
    pub fn bit_count(&self) -> u32 {
        if self.length == 0 {
            return 0;
        }
        ((self.length as u32 - 1) * 8 + self.logical_stop_bit as u32 + 1)
            .saturating_sub(self.logical_start_bit as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sm_round_trip_and_bytes() {
        let sm = SmRepr {
            start: 0x1000,
            length: 128,
            control: 0x26,
            status: 0,
            activate: 1,
            pdi_control: 0,
        };
        let mut b = [0xA5u8; 8];
        sm.emit(&mut b).unwrap();
        assert_eq!(b, [0x00, 0x10, 0x80, 0x00, 0x26, 0x00, 0x01, 0x00]);
        assert_eq!(SmRepr::parse(&b).unwrap(), sm);
        assert!(sm.is_mailbox() && sm.ecat_writes() && sm.enabled());
        assert_eq!(SmRepr::parse(&b[..7]).unwrap_err(), Error::Truncated);
    }

    #[test]
    fn fmmu_round_trip_and_bits() {
        let f = FmmuRepr {
            logical_start: 0x0001_0000,
            length: 1,
            logical_start_bit: 0,
            logical_stop_bit: 7,
            physical_start: 0x0F00,
            physical_start_bit: 0,
            kind: FmmuRepr::WRITE,
            enable: 1,
        };
        let mut b = [0xA5u8; 16];
        f.emit(&mut b).unwrap();
        assert_eq!(
            b,
            [0, 0, 1, 0, 1, 0, 0, 7, 0x00, 0x0F, 0, 2, 1, 0, 0, 0],
            "FMMU layout per ETG.1000.4"
        );
        assert_eq!(FmmuRepr::parse(&b).unwrap(), f);
        assert_eq!(f.bit_count(), 8);
        let nibble = FmmuRepr {
            logical_start_bit: 4,
            logical_stop_bit: 7,
            ..f
        };
        assert_eq!(nibble.bit_count(), 4);
    }

    #[test]
    fn dl_status_ports() {
        // Port 0 and 1 open with communication, 2 and 3 closed.
        let s = DlStatus(0x0200 | 0x0800 | 0x1000 | 0x4000 | 0x30 | 0x03);
        assert!(s.port_open(0) && s.port_open(1));
        assert!(!s.port_open(2) && !s.port_open(3));
        assert!(s.link(0) && s.link(1) && !s.link(2));
        let built = DlStatus::from_ports(
            true,
            [
                (true, false, true),
                (true, false, true),
                (false, true, false),
                (false, true, false),
            ],
        );
        assert_eq!(built, s);
    }

    #[test]
    fn port_descriptor() {
        // EK1100-like: port0 MII, port1 EBUS, port2 MII, port3 not implemented.
        let d = 0b00_11_10_11;
        assert_eq!(PortType::from_descriptor(d, 0), PortType::Mii);
        assert_eq!(PortType::from_descriptor(d, 1), PortType::Ebus);
        assert_eq!(PortType::from_descriptor(d, 2), PortType::Mii);
        assert_eq!(PortType::from_descriptor(d, 3), PortType::NotImplemented);
    }
}
