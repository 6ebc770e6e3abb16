//! SII EEPROM access through the ESC's EEPROM interface (registers 0x0500–0x050F).
//!
//! Reads run for several SubDevices at once: every step (issue the read command, poll until not
//! busy, take the data) is one batch of datagrams for all SubDevices still reading, so a scan of
//! N SubDevices costs about as many round trips as a scan of one. The poll reads status,
//! address and data in one 14-byte FPRD from 0x0502, so a finished read needs no extra
//! round trip. The image is read until the category list ends (type 0xFFFF) or the EEPROM size
//! from word 0x003E is reached.

use crate::bus::{check_wkc, Bus, Pdu};
use crate::error::{Error, Result, Who};
use ecat_wire::register::{eeprom as ee, EEPROM_CONFIG, EEPROM_CONTROL};
use ecat_wire::Command;

/// How long the EEPROM may stay busy for one command (ns).
const BUSY_TIMEOUT_NS: u64 = 100_000_000;
/// Retries of a read that reported a missing acknowledge.
const NACK_RETRIES: u32 = 3;
/// The largest image we read (32 Kwords would be 64 KiB; real devices have 2–32 KiB).
const MAX_IMAGE: usize = 64 * 1024;

/// Give EEPROM access to the MainDevice on every SubDevice (0x0500 = 2, then 0).
pub fn take_all(bus: &mut Bus) -> Result<()> {
    bus.write(Command::Bwr, 0, EEPROM_CONFIG, &[0x02])?;
    bus.write(Command::Bwr, 0, EEPROM_CONFIG, &[0x00])?;
    Ok(())
}

struct Reader {
    who: Who,
    image: Vec<u8>,
    /// Word address of the next read.
    next: u32,
    /// Byte limit (from the EEPROM size word once known).
    limit: usize,
    done: bool,
    error: Option<String>,
    nacks: u32,
    /// The last read reported an error: clear the error bits before the next command.
    clear_first: bool,
}

impl Reader {
    fn station(&self) -> u16 {
        self.who.station
    }

    /// After new data arrived: is the image complete?
    fn check_complete(&mut self) {
        if self.image.len() >= 0x80 && self.limit == MAX_IMAGE {
            let size_word = u16::from_le_bytes([self.image[0x7C], self.image[0x7D]]);
            let bytes = (size_word as usize + 1) * 128;
            if size_word != 0xFFFF && bytes >= 0x80 {
                self.limit = bytes.min(MAX_IMAGE);
            }
        }
        if self.image.len() >= self.limit {
            self.image.truncate(self.limit);
            self.done = true;
            return;
        }
        // Walk the categories from word 0x40 through what we have so far.
        let mut pos = 0x80;
        while pos + 4 <= self.image.len() {
            let kind = u16::from_le_bytes([self.image[pos], self.image[pos + 1]]);
            if kind == 0xFFFF {
                self.image.truncate(pos + 2);
                self.done = true;
                return;
            }
            let words = u16::from_le_bytes([self.image[pos + 2], self.image[pos + 3]]);
            pos += 4 + 2 * words as usize;
        }
    }
}

/// Read the SII images of several SubDevices in parallel. Each result is the image bytes (up
/// to and including the END category marker) or an error naming the SubDevice.
pub fn read_images(bus: &mut Bus, who: &[Who]) -> Vec<Result<Vec<u8>>> {
    let mut readers: Vec<Reader> = who
        .iter()
        .map(|w| Reader {
            who: w.clone(),
            image: Vec::with_capacity(1024),
            next: 0,
            limit: MAX_IMAGE,
            done: false,
            error: None,
            nacks: 0,
            clear_first: false,
        })
        .collect();
    if let Err(e) = run(bus, &mut readers) {
        let text = e.to_string();
        for r in readers.iter_mut().filter(|r| !r.done) {
            r.error.get_or_insert_with(|| text.clone());
        }
    }
    readers
        .into_iter()
        .map(|r| match r.error {
            Some(reason) => Err(Error::Sii { who: r.who, reason }),
            None => Ok(r.image),
        })
        .collect()
}

fn active(readers: &[Reader]) -> Vec<usize> {
    (0..readers.len())
        .filter(|&i| !readers[i].done && readers[i].error.is_none())
        .collect()
}

fn run(bus: &mut Bus, readers: &mut [Reader]) -> Result<()> {
    // Clear stale error bits first (writing command 000), then read chunk after chunk.
    let mut batch: Vec<Pdu> = readers
        .iter()
        .map(|r| Pdu::physical(Command::Fpwr, r.station(), EEPROM_CONTROL, vec![0, 0]))
        .collect();
    bus.exchange(&mut batch)?;
    loop {
        let act = active(readers);
        if act.is_empty() {
            return Ok(());
        }
        let mut clears = Vec::new();
        for &i in &act {
            if std::mem::take(&mut readers[i].clear_first) {
                let st = readers[i].station();
                clears.push(Pdu::physical(Command::Fpwr, st, EEPROM_CONTROL, vec![0, 0]));
            }
        }
        bus.exchange(&mut clears)?;
        let mut cmds: Vec<Pdu> = act
            .iter()
            .map(|&i| {
                let r = &readers[i];
                let mut d = vec![0u8; 6];
                d[0..2].copy_from_slice(&ee::CMD_READ.to_le_bytes());
                d[2..6].copy_from_slice(&r.next.to_le_bytes());
                Pdu::physical(Command::Fpwr, r.station(), EEPROM_CONTROL, d)
            })
            .collect();
        bus.exchange(&mut cmds)?;
        for (p, &i) in cmds.iter().zip(&act) {
            if let Err(e) = check_wkc(p, p.wkc, 1) {
                readers[i].error = Some(format!("read command not accepted: {e}"));
            }
        }
        poll_until_idle(bus, readers, &act)?;
    }
}

/// Poll 0x0502..0x050F of every active reader until not busy; take data or handle errors.
fn poll_until_idle(bus: &mut Bus, readers: &mut [Reader], act: &[usize]) -> Result<()> {
    let start = bus.now();
    let mut waiting: Vec<usize> = act
        .iter()
        .copied()
        .filter(|&i| readers[i].error.is_none())
        .collect();
    while !waiting.is_empty() {
        let mut polls: Vec<Pdu> = waiting
            .iter()
            .map(|&i| {
                Pdu::physical(
                    Command::Fprd,
                    readers[i].station(),
                    EEPROM_CONTROL,
                    vec![0; 14],
                )
            })
            .collect();
        bus.exchange(&mut polls)?;
        let mut still = Vec::new();
        for (p, &i) in polls.iter().zip(&waiting) {
            let r = &mut readers[i];
            if p.wkc != 1 {
                r.error = Some(format!("EEPROM status read gave working counter {}", p.wkc));
                continue;
            }
            let status = u16::from_le_bytes([p.data[0], p.data[1]]);
            if status & ee::BUSY != 0 {
                if bus.now() - start > BUSY_TIMEOUT_NS {
                    r.error = Some(format!(
                        "EEPROM stayed busy for more than {} ms",
                        BUSY_TIMEOUT_NS / 1_000_000
                    ));
                } else {
                    still.push(i);
                }
                continue;
            }
            if status & (ee::ERR_ACK | ee::ERR_LOADING) != 0 {
                r.nacks += 1;
                r.clear_first = true;
                if r.nacks > NACK_RETRIES {
                    r.error = Some(format!(
                        "EEPROM read of word 0x{:04X} failed (status 0x{status:04X})",
                        r.next
                    ));
                }
                // Retried by the caller's next round (same word address).
                continue;
            }
            let n = if status & ee::READ_8_BYTES != 0 { 8 } else { 4 };
            r.image.extend_from_slice(&p.data[6..6 + n]);
            r.next += (n / 2) as u32;
            r.check_complete();
        }
        waiting = still;
    }
    Ok(())
}

/// Write one SII word and wait for completion.
pub fn write_word(bus: &mut Bus, who: &Who, word: u16, value: u16) -> Result<()> {
    let st = who.station;
    let sii_err = |reason: String| Error::Sii {
        who: who.clone(),
        reason,
    };
    wait_idle(bus, who)?;
    bus.write_expect(
        Command::Fpwr,
        st,
        EEPROM_CONTROL + 6,
        &value.to_le_bytes(),
        1,
    )?;
    let mut cmd = [0u8; 6];
    cmd[0..2].copy_from_slice(&(ee::CMD_WRITE | ee::WRITE_ENABLE).to_le_bytes());
    cmd[2..4].copy_from_slice(&word.to_le_bytes());
    bus.write_expect(Command::Fpwr, st, EEPROM_CONTROL, &cmd, 1)?;
    let status = wait_idle(bus, who)?;
    if status & ee::ERR_MASK != 0 {
        return Err(sii_err(format!(
            "EEPROM write of word 0x{word:04X} failed (status 0x{status:04X})"
        )));
    }
    Ok(())
}

/// Ask the ESC to reload its configuration area from the EEPROM.
pub fn reload(bus: &mut Bus, who: &Who) -> Result<()> {
    wait_idle(bus, who)?;
    bus.fpwr_u16(who.station, EEPROM_CONTROL, ee::CMD_RELOAD)?;
    wait_idle(bus, who).map(|_| ())
}

fn wait_idle(bus: &mut Bus, who: &Who) -> Result<u16> {
    let start = bus.now();
    loop {
        let s = bus.fprd_u16(who.station, EEPROM_CONTROL)?;
        if s & ee::BUSY == 0 {
            return Ok(s);
        }
        if bus.now() - start > BUSY_TIMEOUT_NS {
            return Err(Error::Sii {
                who: who.clone(),
                reason: format!(
                    "EEPROM stayed busy for more than {} ms",
                    BUSY_TIMEOUT_NS / 1_000_000
                ),
            });
        }
    }
}
