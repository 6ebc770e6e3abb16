//! One datagram, decoded and owned, and what makes two answers to it differ.
//!
//! A capture's answer and the simulator's answer to the same request are compared field by
//! field: the returned address (ADP, which auto-increment and broadcast commands count up),
//! the IRQ field, the data and the working counter. Datagrams whose bytes cover a DC time
//! value (receive times, system time, offsets, delays, SYNC start and latch times) are
//! flagged: two different clocks never give the same value, so those are counted apart.

use ecat_wire::frame::parse_ethernet;
use ecat_wire::Command;

/// One datagram of a frame, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dg {
    pub cmd: u8,
    pub idx: u8,
    pub adp: u16,
    pub ado: u16,
    pub irq: u16,
    pub data: Vec<u8>,
    pub wkc: u16,
}

impl Dg {
    /// Name of the command ("FPRD"), or its code for undefined ones.
    pub fn command_name(&self) -> String {
        match Command::from_u8(self.cmd) {
            Some(c) => c.name().to_string(),
            None => format!("CMD{:#04x}", self.cmd),
        }
    }

    /// Logical commands (LRD, LWR, LRW) address the logical space, not registers.
    pub fn logical(&self) -> bool {
        matches!(self.cmd, 0x0A..=0x0C)
    }

    /// Auto-increment and broadcast commands: their ADP changes on the way round.
    fn counts_adp(&self) -> bool {
        matches!(self.cmd, 1..=3 | 7..=9 | 13)
    }

    /// Does the datagram's data cover a DC time value?
    pub fn carries_dc_time(&self) -> bool {
        if self.logical() || self.data.is_empty() {
            return false;
        }
        let start = self.ado as u32;
        let end = start + self.data.len() as u32;
        DC_TIME_RANGES
            .iter()
            .any(|&(lo, hi)| start < hi as u32 && end > lo as u32)
    }

    /// The request's identity used to pair it with its answer: command, index, length, and
    /// the address where it does not change on the way.
    pub fn signature(&self) -> (u8, u8, u16, u16, usize) {
        let adp = if self.counts_adp() { 0 } else { self.adp };
        (self.cmd, self.idx, adp, self.ado, self.data.len())
    }
}

/// Register ranges `[lo, hi)` that hold DC time values.
const DC_TIME_RANGES: [(u16, u16); 4] = [
    (0x0900, 0x0930), // receive times, system time, EPU time, offset, delay, difference
    (0x0990, 0x09A0), // start time / next SYNC0, next SYNC1
    (0x09B0, 0x09D0), // latch times
    (0x09F0, 0x0A00), // time stamps of SM buffer changes and PDI events
];

/// Decode every datagram of an Ethernet frame; `None` if it is no EtherCAT frame or a
/// datagram is malformed.
pub(crate) fn datagrams(frame: &[u8]) -> Option<Vec<Dg>> {
    let f = parse_ethernet(frame).ok()?;
    let mut out = Vec::new();
    for d in f.datagrams() {
        let d = d.ok()?;
        out.push(Dg {
            cmd: d.command_code(),
            idx: d.index(),
            adp: d.adp(),
            ado: d.ado(),
            irq: d.irq(),
            data: d.data().to_vec(),
            wkc: d.wkc(),
        });
    }
    Some(out)
}

/// How a simulated answer differs from the real one (every flag false: equal).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Mismatch {
    /// Working counters differ.
    pub wkc: bool,
    /// Data bytes differ.
    pub data: bool,
    /// Returned ADP differs (auto-increment/broadcast commands count SubDevices in it).
    pub adp: bool,
    /// IRQ fields differ.
    pub irq: bool,
}

impl Mismatch {
    /// Compare two answers to the same request.
    pub(crate) fn of(real: &Dg, sim: &Dg) -> Mismatch {
        Mismatch {
            wkc: real.wkc != sim.wkc,
            data: real.data != sim.data,
            adp: real.adp != sim.adp,
            irq: real.irq != sim.irq,
        }
    }

    /// Nothing differs.
    pub fn is_equal(&self) -> bool {
        !(self.wkc || self.data || self.adp || self.irq)
    }

    /// Short text: "wkc+data".
    pub fn describe(&self) -> String {
        let mut v = Vec::new();
        for (on, name) in [
            (self.wkc, "wkc"),
            (self.data, "data"),
            (self.adp, "adp"),
            (self.irq, "irq"),
        ] {
            if on {
                v.push(name);
            }
        }
        v.join("+")
    }

    /// Union of two mismatches.
    pub(crate) fn or(self, o: Mismatch) -> Mismatch {
        Mismatch {
            wkc: self.wkc || o.wkc,
            data: self.data || o.data,
            adp: self.adp || o.adp,
            irq: self.irq || o.irq,
        }
    }
}

/// A name for the register block a datagram starts in.
pub fn register_name(ado: u16) -> String {
    let fixed = match ado {
        0x0000 => "type",
        0x0001 => "revision",
        0x0002..=0x0003 => "build",
        0x0004 => "FMMUs supported",
        0x0005 => "SMs supported",
        0x0006 => "RAM size",
        0x0007 => "port descriptor",
        0x0008..=0x0009 => "features",
        0x0010..=0x0011 => "station address",
        0x0012..=0x0013 => "station alias",
        0x0020..=0x0031 => "write protection",
        0x0040..=0x0041 => "ESC reset",
        0x0100 => "DL control",
        0x0101 => "DL control loop ports",
        0x0102..=0x0103 => "DL control alias",
        0x0108..=0x0109 => "physical RW offset",
        0x0110..=0x0111 => "DL status",
        0x0120..=0x0121 => "AL control",
        0x0130..=0x0131 => "AL status",
        0x0134..=0x0135 => "AL status code",
        0x0138..=0x0139 => "LED override",
        0x0140 => "PDI control",
        0x0141 => "ESC configuration",
        0x0150..=0x0153 => "PDI configuration",
        0x0200..=0x0201 => "ECAT event mask",
        0x0204..=0x0207 => "AL event mask",
        0x0210..=0x0211 => "ECAT event request",
        0x0220..=0x0223 => "AL event request",
        0x0300..=0x0313 => "error counters",
        0x0400..=0x0401 => "watchdog divider",
        0x0410..=0x0411 => "PDI watchdog",
        0x0420..=0x0421 => "process-data watchdog",
        0x0440..=0x0441 => "watchdog status",
        0x0442..=0x0443 => "watchdog counters",
        0x0500 => "EEPROM configuration",
        0x0501 => "EEPROM PDI access",
        0x0502..=0x0503 => "EEPROM control/status",
        0x0504..=0x0507 => "EEPROM address",
        0x0508..=0x050F => "EEPROM data",
        0x0510..=0x051F => "MII management",
        0x0900..=0x090F => "DC receive times",
        0x0910..=0x0917 => "DC system time",
        0x0918..=0x091F => "DC EPU receive time",
        0x0920..=0x0927 => "DC system time offset",
        0x0928..=0x092B => "DC system time delay",
        0x092C..=0x092F => "DC system time difference",
        0x0930..=0x0933 => "DC speed counter",
        0x0934..=0x0935 => "DC filter depth",
        0x0980 => "DC cyclic unit control",
        0x0981 => "DC activation",
        0x0982..=0x098F => "DC SYNC pulse/status",
        0x0990..=0x0997 => "DC start time",
        0x0998..=0x099F => "DC next SYNC1",
        0x09A0..=0x09A3 => "DC SYNC0 cycle",
        0x09A4..=0x09A7 => "DC SYNC1 cycle",
        0x09A8..=0x09AF => "DC latch control/status",
        0x09B0..=0x09CF => "DC latch times",
        0x0F00..=0x0FFF => "user RAM",
        0x0600..=0x06FF => return format!("FMMU {}", (ado - 0x0600) / 16),
        0x0800..=0x087F => return format!("SM {}", (ado - 0x0800) / 8),
        0x1000..=0xFFFF => "process RAM",
        _ => "register",
    };
    fixed.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dg(cmd: u8, ado: u16, len: usize) -> Dg {
        Dg {
            cmd,
            idx: 0,
            adp: 0,
            ado,
            irq: 0,
            data: vec![0; len],
            wkc: 0,
        }
    }

    #[test]
    fn dc_time_values_are_recognised() {
        assert!(dg(4, 0x0900, 16).carries_dc_time());
        assert!(dg(14, 0x0910, 8).carries_dc_time());
        assert!(dg(4, 0x092C, 4).carries_dc_time());
        assert!(!dg(4, 0x0930, 2).carries_dc_time(), "speed counter");
        assert!(!dg(4, 0x0980, 2).carries_dc_time());
        assert!(dg(5, 0x0990, 8).carries_dc_time());
        assert!(!dg(4, 0x08F8, 8).carries_dc_time(), "SM 15, just before");
        assert!(!dg(12, 0x0900, 16).carries_dc_time(), "logical");
    }

    #[test]
    fn names_and_mismatches() {
        assert_eq!(register_name(0x0620), "FMMU 2");
        assert_eq!(register_name(0x0838), "SM 7");
        assert_eq!(register_name(0x0502), "EEPROM control/status");
        let a = dg(7, 0, 2);
        let mut b = a.clone();
        assert!(Mismatch::of(&a, &b).is_equal());
        b.wkc = 3;
        b.data[1] = 1;
        assert_eq!(Mismatch::of(&a, &b).describe(), "wkc+data");
    }
}
