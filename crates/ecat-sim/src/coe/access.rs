//! What an SDO transfer may do with the dictionary: reading and writing one entry or a whole
//! object (complete access), with the checks and abort codes of reference §6.4–6.5.
//!
//! * No object → 0x06020000; no subindex → 0x06090011.
//! * Rights per AL state (object access word): reading an entry without any read bit →
//!   0x06010001, writing one without any write bit → 0x06010002; allowed in another state
//!   only → 0x08000022 (BOOT counts as PREOP).
//! * Length of a single-entry write: too long → 0x06070012, too short → 0x06070013; a
//!   complete-access write whose length does not match the entries → 0x06070010.
//! * Writable strings take 0..=[`MAX_STRING`] bytes (longer → 0x06070012).
//! * Value range: below min → 0x06090032, above max → 0x06090031; a mode of operation
//!   (0x6060) that 0x6502 does not list → 0x06090030.
//! * PDO mapping/assignment objects (see `pdo`): entries are writable only while SI0 = 0
//!   (else 0x06010003), each entry is checked when written, the whole object when SI0 is set.
//! * Complete access (CA): subindex 0 (SI0 included, taking 2 bytes: value + pad) or 1
//!   (entries only) of an ARRAY/RECORD without strings, on a device that advertises CA;
//!   otherwise 0x06010004. CA covers entries 1..=SI0 that exist. A CA write is all or
//!   nothing: on any abort the object is restored. Writing SI0 through CA is needed only
//!   where it changes (records with a read-only SI0 accept their own count).

use super::od::{decode_int, Od};
use super::pdo;
use ecat_wire::al::AlState;
use ecat_wire::coe::info::ObjectAccess as A;
use ecat_wire::coe::SdoAbortCode as Abort;

/// Longest text a writable string entry takes (our choice).
pub const MAX_STRING: usize = 256;

/// The device side of an SDO access: state and capabilities.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    /// Current AL state.
    pub state: AlState,
    /// The device supports complete access.
    pub complete_access: bool,
}

impl Ctx {
    fn read_bit(&self) -> u16 {
        match self.state {
            AlState::SafeOp => A::READ_SAFEOP,
            AlState::Op => A::READ_OP,
            _ => A::READ_PREOP,
        }
    }
    fn write_bit(&self) -> u16 {
        match self.state {
            AlState::SafeOp => A::WRITE_SAFEOP,
            AlState::Op => A::WRITE_OP,
            _ => A::WRITE_PREOP,
        }
    }
}

fn readable(ctx: &Ctx, access: u16) -> Result<(), Abort> {
    if access & A::READ_ALL == 0 {
        Err(Abort::WRITE_ONLY)
    } else if access & ctx.read_bit() == 0 {
        Err(Abort::DEVICE_STATE)
    } else {
        Ok(())
    }
}

fn writable(ctx: &Ctx, access: u16) -> Result<(), Abort> {
    if access & A::WRITE_ALL == 0 {
        Err(Abort::READ_ONLY)
    } else if access & ctx.write_bit() == 0 {
        Err(Abort::DEVICE_STATE)
    } else {
        Ok(())
    }
}

/// Read `index:sub` (or the whole object with `ca`) into `out` (cleared first).
pub fn upload(
    od: &Od,
    ctx: &Ctx,
    index: u16,
    sub: u8,
    ca: bool,
    out: &mut Vec<u8>,
) -> Result<(), Abort> {
    out.clear();
    let obj = od.object(index).ok_or(Abort::NO_OBJECT)?;
    if !ca {
        let e = obj.entry(sub).ok_or(Abort::NO_SUBINDEX)?;
        readable(ctx, e.access)?;
        out.extend_from_slice(&e.value);
        return Ok(());
    }
    ca_allowed(od, ctx, index, sub)?;
    let n = obj.entry(0).map_or(0, |e| e.int()) as u8;
    if sub == 0 {
        readable(ctx, obj.entry(0).map_or(0, |e| e.access))?;
        out.extend_from_slice(&[n, 0]);
    }
    let base = out.len() as u32 * 8;
    let mut bit = 0u32;
    for e in obj.entries.iter().filter(|e| (1..=n).contains(&e.sub)) {
        readable(ctx, e.access)?;
        for i in 0..e.bits as u32 {
            let v = e
                .value
                .get((i / 8) as usize)
                .is_some_and(|b| b >> (i % 8) & 1 != 0);
            let at = base + bit + i;
            if (at / 8) as usize >= out.len() {
                out.push(0);
            }
            if v {
                out[(at / 8) as usize] |= 1 << (at % 8);
            }
        }
        bit += e.bits as u32;
    }
    Ok(())
}

fn ca_allowed(od: &Od, ctx: &Ctx, index: u16, sub: u8) -> Result<(), Abort> {
    let obj = od.object(index).ok_or(Abort::NO_OBJECT)?;
    if !ctx.complete_access
        || !obj.is_structured()
        || sub > 1
        || obj.entries.iter().any(|e| e.is_string())
    {
        return Err(Abort::COMPLETE_ACCESS_UNSUPPORTED);
    }
    Ok(())
}

/// Checks that can be made before the data of a segmented download has arrived: the object
/// (and entry) exist, may be written in this state, and `len` bytes fit.
pub fn check_download(
    od: &Od,
    ctx: &Ctx,
    index: u16,
    sub: u8,
    ca: bool,
    len: usize,
) -> Result<(), Abort> {
    let obj = od.object(index).ok_or(Abort::NO_OBJECT)?;
    if ca {
        return ca_allowed(od, ctx, index, sub);
    }
    let e = obj.entry(sub).ok_or(Abort::NO_SUBINDEX)?;
    writable(ctx, e.access)?;
    if e.is_string() && len > MAX_STRING {
        return Err(Abort::TOO_LONG);
    }
    if !e.is_string() {
        match len.cmp(&e.value.len()) {
            core::cmp::Ordering::Greater => return Err(Abort::TOO_LONG),
            core::cmp::Ordering::Less => return Err(Abort::TOO_SHORT),
            _ => {}
        }
    }
    Ok(())
}

/// Write `data` to `index:sub` (or the whole object with `ca`).
pub fn download(
    od: &mut Od,
    ctx: &Ctx,
    index: u16,
    sub: u8,
    ca: bool,
    data: &[u8],
) -> Result<(), Abort> {
    if ca {
        download_ca(od, ctx, index, sub, data)
    } else {
        download_one(od, ctx, index, sub, data)
    }
}

fn download_one(od: &mut Od, ctx: &Ctx, index: u16, sub: u8, data: &[u8]) -> Result<(), Abort> {
    check_download(od, ctx, index, sub, false, data.len())?;
    let Some(e) = od.entry(index, sub) else {
        return Err(Abort::NO_SUBINDEX);
    };
    if e.is_string() {
        let e = od.entry_mut(index, sub).ok_or(Abort::NO_SUBINDEX)?;
        e.value = data.to_vec();
        e.bits = (data.len() * 8) as u16;
        return Ok(());
    }
    let v = decode_int(data, e.bits, e.is_signed());
    if e.min.is_some_and(|m| v < m) {
        return Err(Abort::VALUE_TOO_LOW);
    }
    if e.max.is_some_and(|m| v > m) {
        return Err(Abort::VALUE_TOO_HIGH);
    }
    check_special(od, index, sub, v)?;
    od.set(index, sub, v);
    Ok(())
}

/// Object-specific rules: PDO mapping and assignment, modes of operation.
fn check_special(od: &Od, index: u16, sub: u8, v: i64) -> Result<(), Abort> {
    let mapping = pdo::is_rx_mapping(index) || pdo::is_tx_mapping(index);
    let assign = pdo::is_assign(index);
    if mapping || assign {
        let obj = od.object(index).ok_or(Abort::NO_OBJECT)?;
        if sub == 0 {
            if v > obj.max_subindex() as i64 {
                return Err(Abort::VALUE_TOO_HIGH);
            }
            let n = v as u8;
            return if mapping {
                pdo::check_mapping_count(od, index, n)
            } else {
                pdo::check_assign_count(od, (index - 0x1C10) as u8, n)
            };
        }
        if obj.entry(0).map_or(0, |e| e.int()) != 0 {
            return Err(Abort::SUBINDEX_CANNOT_BE_WRITTEN);
        }
        return if mapping {
            pdo::check_mapping_entry(od, pdo::is_rx_mapping(index), v as u32)
        } else {
            pdo::check_assign_entry(od, (index - 0x1C10) as u8, v as u16)
        };
    }
    if index == 0x6060 && sub == 0 && v != 0 {
        if let Some(modes) = od.get(0x6502, 0) {
            if !(1..=32).contains(&v) || modes >> (v - 1) & 1 == 0 {
                return Err(Abort::VALUE_RANGE);
            }
        }
    }
    Ok(())
}

/// Bits `[at, at + n)` of `data` as little-endian bytes.
fn bits_at(data: &[u8], at: u32, n: u16) -> [u8; 8] {
    let mut b = [0u8; 8];
    for i in 0..(n as u32).min(64) {
        let p = at + i;
        if data
            .get((p / 8) as usize)
            .is_some_and(|x| x >> (p % 8) & 1 != 0)
        {
            b[(i / 8) as usize] |= 1 << (i % 8);
        }
    }
    b
}

fn download_ca(od: &mut Od, ctx: &Ctx, index: u16, sub: u8, data: &[u8]) -> Result<(), Abort> {
    ca_allowed(od, ctx, index, sub)?;
    let obj = od.object(index).ok_or(Abort::NO_OBJECT)?;
    let (n, body) = if sub == 0 {
        if data.len() < 2 {
            return Err(Abort::TYPE_MISMATCH);
        }
        if data[0] > obj.max_subindex() {
            return Err(Abort::VALUE_TOO_HIGH);
        }
        (data[0], &data[2..])
    } else {
        (obj.max_subindex(), data)
    };
    // The entries the data covers, in order: for subindex 0 exactly 1..=n; for subindex 1
    // as many as the data fills.
    let mut subs: Vec<(u8, u16)> = Vec::new();
    let mut total = 0u32;
    for e in obj.entries.iter().filter(|e| (1..=n).contains(&e.sub)) {
        if sub == 1 && total.div_ceil(8) as usize >= body.len() {
            break;
        }
        subs.push((e.sub, e.bits));
        total += e.bits as u32;
    }
    if total.div_ceil(8) as usize != body.len() {
        return Err(Abort::TYPE_MISMATCH);
    }
    let special = pdo::is_rx_mapping(index) || pdo::is_tx_mapping(index) || pdo::is_assign(index);
    let old_n = obj.entry(0).map_or(0, |e| e.int());
    let backup = obj.clone();
    let mut run = || -> Result<(), Abort> {
        if sub == 0 && special {
            download_one(od, ctx, index, 0, &[0])?;
        }
        let mut at = 0u32;
        for &(s, bits) in &subs {
            let b = bits_at(body, at, bits);
            let len = (bits as usize).div_ceil(8).min(8);
            download_one(od, ctx, index, s, &b[..len])?;
            at += bits as u32;
        }
        if sub == 0 && (special || n as i64 != old_n) {
            download_one(od, ctx, index, 0, &[n])?;
        }
        Ok(())
    };
    let r = run();
    if r.is_err() {
        od.insert(backup);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coe::od::{access, ObjSpec, SubSpec};
    use ecat_wire::coe::info::ObjectCode;
    use ecat_wire::coe::DataType;

    static T: &[ObjSpec] = &[
        crate::od_var!(0x6041, "Statusword", UNSIGNED16, access::RO | access::TX, 0),
        crate::od_var!(
            0x6040,
            "Controlword",
            UNSIGNED16,
            access::RW | access::RX,
            0
        ),
        ObjSpec {
            index: 0x607D,
            name: "Software position limit",
            code: ObjectCode::ARRAY,
            dtype: DataType::INTEGER32,
            subs: &[
                SubSpec::int(0, "SubIndex 000", DataType::UNSIGNED8, access::RO, 2),
                SubSpec::int(1, "Min", DataType::INTEGER32, access::RW_PREOP, -1),
                SubSpec::int(2, "Max", DataType::INTEGER32, access::RW_PREOP, 1).range(0, 100),
            ],
        },
    ];

    fn od() -> Od {
        let mut od = Od::new();
        od.insert_specs(T);
        od
    }

    const PRE: Ctx = Ctx {
        state: AlState::PreOp,
        complete_access: true,
    };

    #[test]
    fn rights_lengths_and_ranges() {
        let mut od = od();
        let op = Ctx {
            state: AlState::Op,
            ..PRE
        };
        assert_eq!(
            download(&mut od, &PRE, 0x6041, 0, false, &[1, 0]),
            Err(Abort::READ_ONLY)
        );
        assert_eq!(
            download(&mut od, &op, 0x607D, 1, false, &[0; 4]),
            Err(Abort::DEVICE_STATE)
        );
        assert_eq!(
            download(&mut od, &PRE, 0x6040, 0, false, &[1]),
            Err(Abort::TOO_SHORT)
        );
        assert_eq!(
            download(&mut od, &PRE, 0x6040, 0, false, &[1; 3]),
            Err(Abort::TOO_LONG)
        );
        assert_eq!(
            download(&mut od, &PRE, 0x607D, 2, false, &[101, 0, 0, 0]),
            Err(Abort::VALUE_TOO_HIGH)
        );
        assert_eq!(
            download(&mut od, &PRE, 0x607D, 3, false, &[1]),
            Err(Abort::NO_SUBINDEX)
        );
        assert_eq!(
            download(&mut od, &PRE, 0x6000, 0, false, &[1]),
            Err(Abort::NO_OBJECT)
        );
        assert_eq!(
            download(&mut od, &PRE, 0x6040, 0, false, &[0x0F, 0]),
            Ok(())
        );
        assert_eq!(od.get(0x6040, 0), Some(0x0F));
    }

    #[test]
    fn complete_access_both_ways() {
        let mut od = od();
        let mut out = Vec::new();
        upload(&od, &PRE, 0x607D, 0, true, &mut out).unwrap();
        assert_eq!(out, [2, 0, 0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0]);
        upload(&od, &PRE, 0x607D, 1, true, &mut out).unwrap();
        assert_eq!(out.len(), 8);
        assert_eq!(
            upload(&od, &PRE, 0x6040, 0, true, &mut out),
            Err(Abort::COMPLETE_ACCESS_UNSUPPORTED)
        );
        let data = [2, 0, 5, 0, 0, 0, 7, 0, 0, 0];
        download(&mut od, &PRE, 0x607D, 0, true, &data).unwrap();
        assert_eq!((od.get(0x607D, 1), od.get(0x607D, 2)), (Some(5), Some(7)));
        // All or nothing: entry 2 out of range leaves entry 1 as it was.
        let bad = [2, 0, 9, 0, 0, 0, 200, 0, 0, 0];
        assert_eq!(
            download(&mut od, &PRE, 0x607D, 0, true, &bad),
            Err(Abort::VALUE_TOO_HIGH)
        );
        assert_eq!(od.get(0x607D, 1), Some(5));
        assert_eq!(
            download(&mut od, &PRE, 0x607D, 0, true, &data[..9]),
            Err(Abort::TYPE_MISMATCH)
        );
        let no_ca = Ctx {
            complete_access: false,
            ..PRE
        };
        assert_eq!(
            upload(&od, &no_ca, 0x607D, 0, true, &mut out),
            Err(Abort::COMPLETE_ACCESS_UNSUPPORTED)
        );
    }
}
