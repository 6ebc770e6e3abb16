//! Profiles of real EtherCAT SubDevice Controllers: identification (0x0000–0x0003), resources
//! (FMMUs, SyncManagers, RAM, ports, features, DC) and EEPROM interface behaviour.
//!
//! A device's chip comes from, in this order: `chip = "..."` in the network file
//! ([`by_name`]), the real device it is ([`for_device`]: terminals whose answers we have in
//! the captures under `testdata/captures/`), or the ET1100 default. Each value says where it
//! comes from; "unverified" marks values no source at hand confirmed (chosen to be plausible,
//! change them when a datasheet or capture says otherwise).
//!
//! What the captures show (replay-ek1100-el2828-el2889.pcapng, replay-dc.pcapng):
//! * a BRD of 0x0000 ORs to 0x13 (0x11 from the EK1100, 0x12 from the terminals);
//! * BWRs to FMMU 3–7 and SM 4–7 are counted by the EK1100 alone (8 FMMUs/SMs), so both
//!   terminals have at most 3 FMMUs and 4 SMs, as an ET1200 does;
//! * feature registers: EK1100 0x00FC, EL2828 0x01FC, EL2889 0x00FC;
//! * the EL2828 has no DC system time (0x0910–0x09FF unanswered), the EL2889 has it;
//! * EEPROM control/status 0x0502 idle: 0x0040 (EK1100, EL2889), 0x0050 (EL2828); a read
//!   keeps busy (0x8140) for 675–711 µs after the command (all three devices).
//!
//! And `wireshark-sample-ethercat.cap` (TwinCAT, 2007): FPGA-based ESCs whose 0x0000–0x0009
//! read back in full (terminals type 0x01, the EK1100 type 0x03), with fewer registers than
//! the ASICs (see [`EscChip::fpga_terminal_2007`]).

use super::EscChip;

/// Busy time of one EEPROM read as the three captured devices show it (675–711 µs after
/// the command).
const EEPROM_READ_NS: u64 = 690_000;
/// Busy time of a reload: words 0–7, twice a read (unverified).
const EEPROM_RELOAD_NS: u64 = 2 * EEPROM_READ_NS;

impl EscChip {
    /// A Beckhoff ET1100: 8 FMMUs, 8 SMs, 8 KiB RAM, 64-bit DC with system time, 8-byte
    /// EEPROM reads; port descriptor as given. Type 0x11, features 0x00FC and the EEPROM
    /// status/timing as the EK1100 in the captures shows; revision and build unverified.
    pub const fn et1100(port_descriptor: u8) -> EscChip {
        EscChip {
            esc_type: 0x11,
            revision: 0x00,
            build: 0x0003,
            fmmus: 8,
            sms: 8,
            ram_kib: 8,
            port_descriptor,
            features: 0x00FC,
            dc_system_time: true,
            eeprom_read_8: true,
            eeprom_status_extra: 0,
            eeprom_busy_ns: EEPROM_READ_NS,
            eeprom_reload_ns: EEPROM_RELOAD_NS,
            absent: &[],
        }
    }

    /// A Beckhoff ET1200 as in the EL2828 of the captures: type 0x12, 3 FMMUs, 4 SMs, 1 KiB
    /// RAM, two E-Bus ports, features 0x01FC, a DC system time only when the SII enables the
    /// SYNC/latch units. (RAM size, revision and build unverified.)
    pub const fn et1200() -> EscChip {
        EscChip {
            esc_type: 0x12,
            revision: 0x00,
            build: 0x0001,
            fmmus: 3,
            sms: 4,
            ram_kib: 1,
            port_descriptor: 0x0A,
            features: 0x01FC,
            dc_system_time: false,
            eeprom_read_8: true,
            eeprom_status_extra: 0,
            eeprom_busy_ns: EEPROM_READ_NS,
            eeprom_reload_ns: EEPROM_RELOAD_NS,
            absent: &[],
        }
    }

    /// The ET1200-class ESC of the EL2889 in the captures: the ET1200's resources with
    /// features 0x00FC and the DC system-time unit always present.
    pub const fn et1200_dc() -> EscChip {
        EscChip {
            features: 0x00FC,
            dc_system_time: true,
            ..EscChip::et1200()
        }
    }

    /// Beckhoff's ESC IP core for FPGAs (ET1810/ET1815), as configured by default: type 0x04
    /// (as in KickCAT's emulator); 8 FMMUs, 8 SMs, 8 KiB RAM, two MII ports and features
    /// 0x01CC are configuration choices (unverified defaults).
    pub const fn ip_core() -> EscChip {
        EscChip {
            esc_type: 0x04,
            revision: 0x03,
            build: 0x0000,
            port_descriptor: 0x0F,
            features: 0x01CC,
            ..EscChip::et1100(0x0F)
        }
    }

    /// Microchip LAN9252: type 0xC0, revision 0x02, build 0 (0x0000 read as 0x000002C0 on a
    /// real one, SOES issue #211), 3 FMMUs, 4 SMs, 4 KiB RAM, 64-bit DC (datasheet), two MII
    /// ports. Features 0x01CC and the EEPROM timing are unverified.
    pub const fn lan9252() -> EscChip {
        EscChip {
            esc_type: 0xC0,
            revision: 0x02,
            build: 0x0000,
            fmmus: 3,
            sms: 4,
            ram_kib: 4,
            port_descriptor: 0x0F,
            features: 0x01CC,
            ..EscChip::et1100(0x0F)
        }
    }

    /// ASIX AX58100: 8 FMMUs, 8 SMs, 9 KiB RAM, two MII ports, 64-bit DC (product brief).
    /// Type, revision, build and features are unverified (type 0x04 of the Beckhoff IP it
    /// is said to integrate is a guess).
    pub const fn ax58100() -> EscChip {
        EscChip {
            ram_kib: 9,
            ..EscChip::ip_core()
        }
    }

    /// TI PRU-ICSS ESC firmware (AM335x): type 0x90, revision 1 (AM437x 2, AM57x 3, AM64x/
    /// AM243x 5), build 0x04F3, 8 FMMUs, 8 SMs, 8 KiB RAM (AM437x/AM57x 28, AM64x 59), ports
    /// 0x0F, features 0x008C (TI's register list). It emulates the EEPROM (0x0502 bit 5).
    pub const fn ti_pru_icss() -> EscChip {
        EscChip {
            esc_type: 0x90,
            revision: 0x01,
            build: 0x04F3,
            port_descriptor: 0x0F,
            features: 0x008C,
            eeprom_status_extra: ecat_wire::register::eeprom::EMULATION,
            ..EscChip::et1100(0x0F)
        }
    }

    /// The FPGA-based ESC of Beckhoff terminals of 2007, as the EL1014, EL2004, EL3102 and
    /// EL4132 (revision 0) of `wireshark-sample-ethercat.cap` answer: type 0x01, revision 1,
    /// build 0x000C, 2 FMMUs, 4 SMs, 4 KiB RAM, port descriptor and features reading 0 (no
    /// DC), 4-byte EEPROM reads (idle 0x0000, busy 440–454 µs after the command), and no
    /// ECAT event mask (0x0200) or DL alias control (0x0103): broadcast writes there count
    /// only the coupler.
    pub const fn fpga_terminal_2007() -> EscChip {
        EscChip {
            esc_type: 0x01,
            revision: 0x01,
            build: 0x000C,
            fmmus: 2,
            sms: 4,
            ram_kib: 4,
            port_descriptor: 0x0A,
            features: 0x0000,
            dc_system_time: false,
            eeprom_read_8: false,
            eeprom_status_extra: 0,
            eeprom_busy_ns: FPGA_EEPROM_READ_NS,
            eeprom_reload_ns: 2 * FPGA_EEPROM_READ_NS,
            absent: &[(0x0007, 0x0008), (0x0103, 0x0104), (0x0200, 0x0202)],
        }
    }

    /// The ESC of the 2007 EK1100 (revision 1) in the same capture: type 0x03, revision 1,
    /// build 0x000B, 1 FMMU, no SyncManager, 4 KiB RAM, port descriptor reading 0, a 32-bit
    /// DC with system time (features 0x0004) but no SYNC unit (0x0980–0x09FF not counted).
    pub const fn fpga_coupler_2007() -> EscChip {
        EscChip {
            esc_type: 0x03,
            revision: 0x01,
            build: 0x000B,
            fmmus: 1,
            sms: 0,
            features: 0x0004,
            dc_system_time: true,
            absent: &[(0x0007, 0x0008), (0x0980, 0x0A00)],
            ..EscChip::fpga_terminal_2007()
        }
    }
}

/// EEPROM read busy time of the 2007 FPGA ESCs (440–454 µs in the capture).
const FPGA_EEPROM_READ_NS: u64 = 447_000;

/// Chip names a network file may give (`chip = "LAN9252"`), in the order listed in errors.
pub const CHIP_NAMES: &[&str] = &[
    "ET1100",
    "ET1200",
    "ET1200-DC",
    "ET1810",
    "ET1815",
    "LAN9252",
    "AX58100",
    "AM335X-PRU",
];

/// The chip profile called `name` (case-insensitive), see [`CHIP_NAMES`].
pub fn by_name(name: &str) -> Option<EscChip> {
    Some(match name.to_ascii_uppercase().as_str() {
        "ET1100" => EscChip::et1100(0),
        "ET1200" => EscChip::et1200(),
        "ET1200-DC" => EscChip::et1200_dc(),
        "ET1810" | "ET1815" => EscChip::ip_core(),
        "LAN9252" => EscChip::lan9252(),
        "AX58100" => EscChip::ax58100(),
        "AM335X-PRU" | "PRU-ICSS" => EscChip::ti_pru_icss(),
        _ => return None,
    })
}

/// Beckhoff's vendor id.
const BECKHOFF: u32 = 0x0000_0002;

/// The chip of a real device we know, by vendor id, product code and revision (SII words
/// 8–13).
pub fn for_device(vendor: u32, product: u32, revision: u32) -> Option<EscChip> {
    if vendor != BECKHOFF {
        return None;
    }
    Some(match product {
        // EK1100 coupler: the 2007 one of the TwinCAT capture, then ET1100-based ones.
        0x044C_2C52 if revision == 0x0001_0000 => EscChip::fpga_coupler_2007(),
        0x044C_2C52 => EscChip::et1100(0),
        // EL1014, EL2004, EL3102, EL4132 of 2007 (revision 0), TwinCAT capture.
        0x03F6_3052 | 0x07D4_3052 | 0x0C1E_3052 | 0x1024_3052 if revision == 0 => {
            EscChip::fpga_terminal_2007()
        }
        // EL2828: shows 0x0050 in 0x0502 where the others show 0x0040.
        0x0B0C_3052 => EscChip {
            eeprom_status_extra: 0x0010,
            ..EscChip::et1200()
        },
        // EL2889.
        0x0B49_3052 => EscChip::et1200_dc(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_resolves_and_unknown_ones_do_not() {
        for n in CHIP_NAMES {
            assert!(by_name(n).is_some(), "{n}");
        }
        assert_eq!(by_name("lan9252").unwrap().esc_type, 0xC0);
        assert!(by_name("ET9999").is_none());
    }

    #[test]
    fn captured_devices_get_their_chips() {
        let el2828 = for_device(2, 0x0B0C_3052, 0x0011_0000).unwrap();
        let el2889 = for_device(2, 0x0B49_3052, 0x0011_0000).unwrap();
        let ek1100 = for_device(2, 0x044C_2C52, 0x0012_0000).unwrap();
        assert_eq!(ek1100.esc_type | el2828.esc_type | el2889.esc_type, 0x13);
        assert_eq!((el2828.fmmus, el2828.sms), (3, 4));
        assert_eq!((el2889.features, el2828.features), (0x00FC, 0x01FC));
        assert!(el2889.dc_system_time && !el2828.dc_system_time);
        assert!(for_device(3, 0x0B49_3052, 0).is_none());
        assert_eq!(
            for_device(2, 0x044C_2C52, 0x0001_0000).unwrap().esc_type,
            0x03
        );
        assert_eq!(for_device(2, 0x07D4_3052, 0).unwrap().esc_type, 0x01);
        assert!(for_device(2, 0x07D4_3052, 0x0010_0000).is_none());
    }
}
