//! The SII EEPROM interface (0x0500–0x050F) over the device's SII image.
//!
//! Ownership: 0x0500 bit 0 offers the EEPROM to the PDI; firmware devices take it
//! (0x0501 bit 0) until the MainDevice takes it back or forces access (0x0500 bit 1). While
//! the PDI holds it, ECAT commands are ignored.
//! Commands in 0x0502 bits 8–10: read (0x0100) fills 0x0508 with 8 bytes (or 4, per chip),
//! words past the image read 0xFFFF; write (0x0200) needs write enable (bit 0) or sets bit 14,
//! and writing past the image sets bit 13; reload (0x0400) re-reads words 0–7 into the
//! registers and checks their CRC (bit 11 and bit 12 "not loaded" on failure, DL status bit
//! 0; bit 12 also while a reload runs); command 000 clears the error bits; undefined
//! commands set bit 13 (bit meanings as Infineon's XMC4300 ECAT register docs give them for
//! Beckhoff's IP).
//!
//! Status as real ESCs show it (see [`super::chips`]): the idle value carries the chip's
//! fixed bits (read size bit 6, address width bit 7 for images over 16 Kbit, and reserved
//! bits some chips show, e.g. 0x0050 on the EL2828); while a command runs, busy (bit 15) and
//! the command bits read back (0x8140 for a read, as captured) for the chip's
//! `eeprom_busy_ns` (reads and writes) or `eeprom_reload_ns`; then the command bits read 0
//! again. A command written while busy is ignored and leaves the registers as they are (the
//! write still counts; unverified on real chips).
use super::Esc;
use ecat_wire::register::{self as reg, eeprom as ee};
use ecat_wire::sii::crc8;

/// EEPROM interface state that is not visible in registers.
#[derive(Debug, Default, Clone)]
pub(crate) struct EepromState {
    /// The configuration area (words 0–7) loaded with a good CRC.
    pub config_loaded: bool,
    /// Time of the latest tick.
    pub now_ns: u64,
    /// A command waiting for its busy time to pass: (command, done at).
    pub pending: Option<(u16, u64)>,
}

impl Esc {
    /// Status bits that describe the chip and never change.
    fn eeprom_fixed_bits(&self) -> u16 {
        let mut v = self.chip.eeprom_status_extra;
        if self.chip.eeprom_read_8 {
            v |= ee::READ_8_BYTES;
        }
        if self.sii.len() > 2048 {
            v |= ee::TWO_ADDRESS_BYTES;
        }
        v
    }

    fn ecat_owns_eeprom(&self) -> bool {
        self.mem[reg::EEPROM_CONFIG as usize] & 1 == 0
            || self.mem[reg::EEPROM_PDI_ACCESS as usize] & 1 == 0
    }

    /// 0x0500 written: the firmware takes an offered EEPROM; force access takes it back.
    pub(crate) fn eeprom_config_written(&mut self) {
        let cfg = self.mem[reg::EEPROM_CONFIG as usize];
        let pdi_takes = cfg & 1 != 0 && cfg & 2 == 0 && !self.device_emulation();
        self.mem[reg::EEPROM_PDI_ACCESS as usize] = pdi_takes as u8;
    }

    /// 0x0502/0x0503 written by ECAT; `old` is the value before the write.
    pub(crate) fn eeprom_control_written(&mut self, old: u16) {
        let new = self.get16(reg::EEPROM_CONTROL);
        if old & ee::BUSY != 0 || !self.ecat_owns_eeprom() {
            self.put16(reg::EEPROM_CONTROL, old);
            return;
        }
        let fixed = self.eeprom_fixed_bits();
        let cmd = new & ee::CMD_MASK;
        match cmd {
            ee::CMD_IDLE => self.put16(reg::EEPROM_CONTROL, fixed),
            ee::CMD_READ | ee::CMD_WRITE | ee::CMD_RELOAD => {
                let cmd = cmd | (new & ee::WRITE_ENABLE);
                if self.chip.eeprom_busy_ns == 0 {
                    self.put16(reg::EEPROM_CONTROL, fixed);
                    self.eeprom_execute(cmd);
                } else {
                    let busy = if cmd & ee::CMD_MASK == ee::CMD_RELOAD {
                        self.chip.eeprom_reload_ns
                    } else {
                        self.chip.eeprom_busy_ns
                    };
                    let done = self.eeprom.now_ns.saturating_add(busy);
                    self.eeprom.pending = Some((cmd, done));
                    // A reload shows "loading" (bit 12) until it is done.
                    let loading = if cmd & ee::CMD_MASK == ee::CMD_RELOAD {
                        ee::ERR_LOADING
                    } else {
                        0
                    };
                    self.put16(
                        reg::EEPROM_CONTROL,
                        fixed | ee::BUSY | loading | (cmd & ee::CMD_MASK),
                    );
                }
            }
            _ => self.put16(
                reg::EEPROM_CONTROL,
                (old & ee::ERR_MASK) | fixed | ee::ERR_ACK,
            ),
        }
    }

    /// Complete a pending command once its busy time is over.
    pub(crate) fn eeprom_tick(&mut self, now_ns: u64) {
        self.eeprom.now_ns = now_ns;
        if let Some((cmd, done)) = self.eeprom.pending {
            if now_ns >= done {
                self.kick_pdi();
                self.eeprom.pending = None;
                let fixed = self.eeprom_fixed_bits();
                self.put16(reg::EEPROM_CONTROL, fixed);
                self.eeprom_execute(cmd);
            }
        }
    }

    fn sii_word(&self, word: u32) -> u16 {
        let i = word as usize * 2;
        match self.sii.get(i..i + 2) {
            Some(b) => u16::from_le_bytes([b[0], b[1]]),
            None => 0xFFFF,
        }
    }

    fn eeprom_set_error(&mut self, bit: u16) {
        let v = self.get16(reg::EEPROM_CONTROL) | bit;
        self.put16(reg::EEPROM_CONTROL, v);
    }

    fn eeprom_execute(&mut self, cmd: u16) {
        let addr = self.read_u32(reg::EEPROM_ADDRESS);
        match cmd & ee::CMD_MASK {
            ee::CMD_READ => {
                let words = if self.chip.eeprom_read_8 { 4 } else { 2 };
                for k in 0..words {
                    let w = self.sii_word(addr.saturating_add(k));
                    self.put16(reg::EEPROM_DATA + 2 * k as u16, w);
                }
            }
            ee::CMD_WRITE => {
                let i = addr as usize * 2;
                if cmd & ee::WRITE_ENABLE == 0 {
                    self.eeprom_set_error(ee::ERR_WRITE_ENABLE);
                } else if i + 2 <= self.sii.len() {
                    let v = self.get16(reg::EEPROM_DATA).to_le_bytes();
                    self.sii[i..i + 2].copy_from_slice(&v);
                } else {
                    self.eeprom_set_error(ee::ERR_ACK);
                }
            }
            _ => {
                self.eeprom_reload();
            }
        }
    }

    /// Load words 0–7 into their registers if their CRC is good (else flag bit 11 and leave
    /// the registers alone); updates DL status bit 0. Returns whether it loaded.
    pub(crate) fn eeprom_reload(&mut self) -> bool {
        let ok = self.sii.len() >= 16 && crc8(&self.sii[..14]) == self.sii[14];
        self.eeprom.config_loaded = ok;
        if ok {
            let w = |n: u32| self.sii_word(n);
            let (w0, w1, w2, w3, w4) = (w(0), w(1), w(2), w(3), w(4));
            self.put16(reg::PDI_CONTROL, w0);
            self.put16(reg::PDI_CONFIG, w1);
            self.put16(reg::DC_PULSE_LENGTH, w2);
            self.put16(reg::PDI_CONFIG + 2, w3);
            self.put16(reg::STATION_ALIAS, w4);
            // The system-time part of the DC (0x0910–0x09FF): chips with the unit always have
            // it (the EK1100 and EL2889 of `replay-dc.pcapng` answer 0x0910/0x0918/0x0920
            // with ESC config 0x01), others only with their SYNC/latch units enabled in ESC
            // config 0x0141 bits 2/3 (the EL2828 there, same config, answers none of them).
            self.shape.dc_units =
                self.chip.dc_system_time || self.mem[reg::ESC_CONFIG as usize] & 0x0C != 0;
            self.regs = self.shape.table();
            let v = self.get16(reg::EEPROM_CONTROL) & !(ee::ERR_CHECKSUM | ee::ERR_LOADING);
            self.put16(reg::EEPROM_CONTROL, v | self.eeprom_fixed_bits());
        } else {
            // Bit 12: "EEPROM not loaded, device information not available" goes with it.
            self.eeprom_set_error(ee::ERR_CHECKSUM | ee::ERR_LOADING | self.eeprom_fixed_bits());
        }
        self.refresh_dl_status();
        ok
    }
}
