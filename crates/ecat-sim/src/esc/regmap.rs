//! Which ESC addresses exist and which the MainDevice may write.
//!
//! Real ESCs answer only for registers they implement: the capture
//! `testdata/captures/replay-ek1100-el2828-el2889.pcapng` shows a BWR to FMMU 3..7 counted by
//! one of three SubDevices and a BWR to FMMU 8 by none (the ESCs implement 8 and 3 FMMUs), and
//! a BWR to the read-only DC register 0x092C counted by nobody. So the simulator counts a
//! datagram only when at least one of its bytes hits an implemented register (read) or a
//! writable one (write); writes to read-only bytes are ignored. The table below is derived from
//! the register map in the reference (§3); where it is silent the byte is treated as absent.
//! Every datagram byte is classified on every ESC it concerns, so the map is compiled into
//! tables (`CLASSES`, `DC_CLASSES`) and classifying a byte is a load or two; the test
//! `class_table_matches_the_register_map` checks the tables against the map walked range by
//! range.

use ecat_wire::register::features;

/// How the MainDevice (ECAT side) may access one byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Not implemented: reads leave the frame unchanged, nothing counts.
    Absent,
    /// Readable, writes are ignored (and do not count).
    ReadOnly,
    /// Readable and writable.
    ReadWrite,
}

/// The per-device facts the register map depends on.
#[derive(Debug, Clone, Copy)]
pub struct MapShape {
    /// FMMUs implemented (0x0004).
    pub fmmus: u8,
    /// SyncManagers implemented (0x0005).
    pub sms: u8,
    /// Bytes of process RAM from 0x1000.
    pub ram_bytes: u32,
    /// Feature register (0x0008): decides whether DC receive times exist.
    pub features: u16,
    /// DC system-time/SYNC units enabled (0x0141 bits 2/3, loaded from the SII).
    pub dc_units: bool,
    /// Ranges `[start, end)` the chip lacks (see `EscChip::absent`).
    pub absent: &'static [(u16, u16)],
}

/// Per register address 0x0000–0x0FFF, what [`MapShape::access`] starts from: an access
/// that holds for every device (`FIXED_*`), or the unit whose size or presence decides it.
const FIXED_ABSENT: u8 = 0;
const FIXED_RO: u8 = 1;
const FIXED_RW: u8 = 2;
const BY_FMMUS: u8 = 3;
const BY_SMS: u8 = 4;
const BY_DC: u8 = 5;

/// The classes of all register addresses, built at compile time from [`register_class`]: a
/// byte is classified with one load instead of a walk through the register map (each
/// datagram byte is classified, on every ESC it concerns).
static CLASSES: [u8; 0x1000] = {
    let mut t = [FIXED_ABSENT; 0x1000];
    let mut a = 0;
    while a < 0x1000 {
        t[a] = register_class(a as u16);
        a += 1;
    }
    t
};

/// The register map (reference §3) as classes; see [`MapShape::access`].
const fn register_class(a: u16) -> u8 {
    match a {
        0x0000..=0x0009 => FIXED_RO,
        0x0010..=0x0011 => FIXED_RW,
        0x0012..=0x0013 => FIXED_RO,
        0x0020..=0x0021 | 0x0030..=0x0031 => FIXED_RW,
        0x0040..=0x0041 => FIXED_RW,
        0x0100..=0x0103 | 0x0108..=0x0109 => FIXED_RW,
        0x0110..=0x0111 => FIXED_RO,
        0x0120..=0x0121 => FIXED_RW,
        0x0130..=0x0131 | 0x0134..=0x0135 => FIXED_RO,
        0x0138..=0x0139 => FIXED_RW,
        0x0140..=0x0141 | 0x014E..=0x014F | 0x0150..=0x0153 => FIXED_RO,
        0x0200..=0x0201 => FIXED_RW,
        0x0204..=0x0207 | 0x0210..=0x0211 | 0x0220..=0x0223 => FIXED_RO,
        0x0300..=0x0313 => FIXED_RW,
        0x0400..=0x0401 | 0x0410..=0x0411 | 0x0420..=0x0421 => FIXED_RW,
        0x0440..=0x0441 => FIXED_RO,
        0x0442..=0x0443 => FIXED_RW,
        0x0500 => FIXED_RW,
        0x0501 => FIXED_RO,
        0x0502..=0x050F => FIXED_RW,
        0x0600..=0x06FF => BY_FMMUS,
        0x0800..=0x087F => BY_SMS,
        0x0900..=0x09FF => BY_DC,
        0x0F00..=0x0FFF => FIXED_RW,
        _ => FIXED_ABSENT,
    }
}

/// The DC registers 0x0900–0x09FF of a device with DC, by `dc_units as usize | wide << 1`
/// (`wide`: 64-bit DC), as [`FIXED_ABSENT`], [`FIXED_RO`] or [`FIXED_RW`] (see
/// [`dc_class`]).
static DC_CLASSES: [[u8; 256]; 4] = {
    let mut t = [[FIXED_ABSENT; 256]; 4];
    let mut v = 0;
    while v < 4 {
        let mut a = 0;
        while a < 256 {
            t[v][a] = dc_class(0x0900 + a as u16, v & 1 != 0, v & 2 != 0);
            a += 1;
        }
        v += 1;
    }
    t
};

/// Access to DC register `a` of a device with DC: receive times always, the system-time and
/// SYNC units with `units`; 32-bit DCs (`!wide`) implement only the low 4 bytes of the
/// system time, its offset and the start/next-SYNC times (reference §8.1).
const fn dc_class(a: u16, units: bool, wide: bool) -> u8 {
    match a {
        0x0900..=0x0903 => FIXED_RW,
        0x0904..=0x090F => FIXED_RO,
        _ if !units => FIXED_ABSENT,
        0x0914..=0x0917 | 0x091C..=0x091F | 0x0924..=0x0927 | 0x0994..=0x0997 | 0x099C..=0x099F
            if !wide =>
        {
            FIXED_ABSENT
        }
        0x0910..=0x0917 => FIXED_RW,
        0x0918..=0x091F => FIXED_RO,
        0x0920..=0x092B => FIXED_RW,
        0x092C..=0x092F => FIXED_RO,
        0x0930..=0x0931 => FIXED_RW,
        0x0932..=0x0933 => FIXED_RO,
        0x0934..=0x0935 => FIXED_RW,
        0x0980..=0x0981 => FIXED_RW,
        0x0982..=0x0984 => FIXED_RO,
        0x098E..=0x098F => FIXED_RO,
        0x0990..=0x0997 => FIXED_RW,
        0x0998..=0x099F => FIXED_RO,
        0x09A0..=0x09A9 => FIXED_RW,
        0x09AE..=0x09CF => FIXED_RO,
        0x09F0..=0x09FF => FIXED_RO,
        _ => FIXED_ABSENT,
    }
}

/// What [`MapShape::access`] answers for each register byte 0x0000–0x0FFF of one shape.
pub(crate) type RegTable = [Access; 0x1000];

/// Shapes whose tables are kept at most (a network has a few chip variants; past this,
/// e.g. under a fuzzer inventing chips, lookups go through [`MapShape::access`]).
const TABLES_KEPT: usize = 64;

/// The tables made so far, one per shape (see [`MapShape::table`]).
#[allow(clippy::type_complexity)]
static TABLES: std::sync::Mutex<Vec<(ShapeKey, &'static RegTable)>> =
    std::sync::Mutex::new(Vec::new());

/// What a register table depends on (the absent ranges by identity: they are static).
type ShapeKey = (u8, u8, u16, bool, usize, usize);

impl MapShape {
    /// The access of every register byte for this shape, made once per shape and shared
    /// (a lookup instead of the classification per byte); `None` past [`TABLES_KEPT`].
    pub(crate) fn table(&self) -> Option<&'static RegTable> {
        let key = (
            self.fmmus,
            self.sms,
            self.features,
            self.dc_units,
            self.absent.as_ptr() as usize,
            self.absent.len(),
        );
        let mut tables = TABLES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, t)) = tables.iter().find(|(k, _)| *k == key) {
            return Some(t);
        }
        if tables.len() >= TABLES_KEPT {
            return None;
        }
        let mut t = [Access::Absent; 0x1000];
        for (a, v) in t.iter_mut().enumerate() {
            *v = self.access(a as u32);
        }
        let t: &'static RegTable = Box::leak(Box::new(t));
        tables.push((key, t));
        Some(t)
    }

    /// Classify the byte at `addr` (addresses ≥ 0x10000 are absent).
    #[inline]
    pub fn access(&self, addr: u32) -> Access {
        use Access::*;
        let a = match u16::try_from(addr) {
            Ok(a) => a,
            Err(_) => return Absent,
        };
        if self.absent.iter().any(|&(lo, hi)| (lo..hi).contains(&a)) {
            return Absent;
        }
        let Some(&class) = CLASSES.get(a as usize) else {
            return if addr < 0x1000 + self.ram_bytes {
                ReadWrite
            } else {
                Absent
            };
        };
        match class {
            FIXED_RO => ReadOnly,
            FIXED_RW => ReadWrite,
            BY_FMMUS => {
                if ((a - 0x0600) / 16) < self.fmmus as u16 {
                    ReadWrite
                } else {
                    Absent
                }
            }
            BY_SMS => {
                let n = (a - 0x0800) / 8;
                if n >= self.sms as u16 {
                    return Absent;
                }
                match (a - 0x0800) % 8 {
                    5 | 7 => ReadOnly,
                    _ => ReadWrite,
                }
            }
            BY_DC => {
                if self.features & features::DC == 0 {
                    return Absent;
                }
                let wide = self.features & features::DC_64BIT != 0;
                let v =
                    DC_CLASSES[self.dc_units as usize | (wide as usize) << 1][(a & 0xFF) as usize];
                match v {
                    FIXED_RO => ReadOnly,
                    FIXED_RW => ReadWrite,
                    _ => Absent,
                }
            }
            _ => Absent,
        }
    }

    /// The register map as a walk through its ranges: what [`MapShape::access`] computes
    /// from [`CLASSES`] (kept for the test that compares the two).
    #[cfg(test)]
    fn access_by_ranges(&self, addr: u32) -> Access {
        use Access::*;
        let a = match u16::try_from(addr) {
            Ok(a) => a,
            Err(_) => return Absent,
        };
        if self.absent.iter().any(|&(lo, hi)| (lo..hi).contains(&a)) {
            return Absent;
        }
        match a {
            0x0000..=0x0009 => ReadOnly,
            0x0010..=0x0011 => ReadWrite,
            0x0012..=0x0013 => ReadOnly,
            0x0020..=0x0021 | 0x0030..=0x0031 => ReadWrite,
            0x0040..=0x0041 => ReadWrite,
            0x0100..=0x0103 | 0x0108..=0x0109 => ReadWrite,
            0x0110..=0x0111 => ReadOnly,
            0x0120..=0x0121 => ReadWrite,
            0x0130..=0x0131 | 0x0134..=0x0135 => ReadOnly,
            0x0138..=0x0139 => ReadWrite,
            0x0140..=0x0141 | 0x014E..=0x014F | 0x0150..=0x0153 => ReadOnly,
            0x0200..=0x0201 => ReadWrite,
            0x0204..=0x0207 | 0x0210..=0x0211 | 0x0220..=0x0223 => ReadOnly,
            0x0300..=0x0313 => ReadWrite,
            0x0400..=0x0401 | 0x0410..=0x0411 | 0x0420..=0x0421 => ReadWrite,
            0x0440..=0x0441 => ReadOnly,
            0x0442..=0x0443 => ReadWrite,
            0x0500 => ReadWrite,
            0x0501 => ReadOnly,
            0x0502..=0x050F => ReadWrite,
            0x0600..=0x06FF => {
                if ((a - 0x0600) / 16) < self.fmmus as u16 {
                    ReadWrite
                } else {
                    Absent
                }
            }
            0x0800..=0x087F => {
                let n = (a - 0x0800) / 8;
                if n >= self.sms as u16 {
                    return Absent;
                }
                match (a - 0x0800) % 8 {
                    5 | 7 => ReadOnly,
                    _ => ReadWrite,
                }
            }
            0x0900..=0x09FF => self.dc_access(a),
            0x0F00..=0x0FFF => ReadWrite,
            _ if addr >= 0x1000 && addr < 0x1000 + self.ram_bytes => ReadWrite,
            _ => Absent,
        }
    }

    #[cfg(test)]
    fn dc_access(&self, a: u16) -> Access {
        use Access::*;
        if self.features & features::DC == 0 {
            return Absent;
        }
        match a {
            0x0900..=0x0903 => ReadWrite,
            0x0904..=0x090F => ReadOnly,
            _ if !self.dc_units => Absent,
            // 32-bit DCs implement only the low 4 bytes of the system time, its offset and
            // the start/next-SYNC times (reference §8.1).
            0x0914..=0x0917
            | 0x091C..=0x091F
            | 0x0924..=0x0927
            | 0x0994..=0x0997
            | 0x099C..=0x099F
                if self.features & features::DC_64BIT == 0 =>
            {
                Absent
            }
            0x0910..=0x0917 => ReadWrite,
            0x0918..=0x091F => ReadOnly,
            0x0920..=0x092B => ReadWrite,
            0x092C..=0x092F => ReadOnly,
            0x0930..=0x0931 => ReadWrite,
            0x0932..=0x0933 => ReadOnly,
            0x0934..=0x0935 => ReadWrite,
            0x0980..=0x0981 => ReadWrite,
            0x0982..=0x0984 => ReadOnly,
            0x098E..=0x098F => ReadOnly,
            0x0990..=0x0997 => ReadWrite,
            0x0998..=0x099F => ReadOnly,
            0x09A0..=0x09A9 => ReadWrite,
            0x09AE..=0x09CF => ReadOnly,
            0x09F0..=0x09FF => ReadOnly,
            _ => Absent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> MapShape {
        MapShape {
            fmmus: 3,
            sms: 4,
            ram_bytes: 1024,
            features: 0x00FC,
            dc_units: false,
            absent: &[(0x0103, 0x0104)],
        }
    }

    #[test]
    fn counts_follow_implemented_units() {
        let s = shape();
        assert_eq!(s.access(0x0600 + 16 * 2), Access::ReadWrite);
        assert_eq!(s.access(0x0600 + 16 * 3), Access::Absent);
        assert_eq!(s.access(0x0800 + 8 * 3 + 5), Access::ReadOnly);
        assert_eq!(s.access(0x0800 + 8 * 4), Access::Absent);
        assert_eq!(s.access(0x1000 + 1023), Access::ReadWrite);
        assert_eq!(s.access(0x1000 + 1024), Access::Absent);
        assert_eq!(s.access(0x10000), Access::Absent);
        assert_eq!(s.access(0x0102), Access::ReadWrite);
        assert_eq!(s.access(0x0103), Access::Absent, "listed as absent");
    }

    #[test]
    fn class_table_matches_the_register_map() {
        for fmmus in [0, 1, 3, 8, 16] {
            for sms in [0, 2, 4, 8, 16] {
                for features in [0x0000, 0x0004, 0x000C, 0x00FC, 0x01FF] {
                    for dc_units in [false, true] {
                        for absent in [&[][..], &[(0x0103, 0x0104), (0x0900, 0x0904)][..]] {
                            let s = MapShape {
                                fmmus,
                                sms,
                                ram_bytes: 8 * 1024,
                                features,
                                dc_units,
                                absent,
                            };
                            for a in (0..0x3100).chain([0xFFFF, 0x10000, 0x10001, u32::MAX]) {
                                assert_eq!(s.access(a), s.access_by_ranges(a), "{a:#x}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn dc_registers_need_the_units() {
        let mut s = shape();
        assert_eq!(s.access(0x0900), Access::ReadWrite, "receive times exist");
        assert_eq!(s.access(0x0910), Access::Absent);
        s.dc_units = true;
        assert_eq!(s.access(0x0910), Access::ReadWrite);
        assert_eq!(s.access(0x092C), Access::ReadOnly);
    }
}
