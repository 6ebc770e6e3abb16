//! PDO assignment (0x1C10 + n) and mapping (0x1600.., 0x1A00..) objects: their validation
//! and the process-data layout they define (reference §7).
//!
//! A mapping entry is `index << 16 | subindex << 8 | bits`; index 0 is a gap. The layout of
//! SyncManager n is the concatenation, in assignment order, of the entries 1..=SI0 of every
//! assigned mapping object; its size is what the PREOP→SAFEOP check compares with the SM
//! length, and the device packs/unpacks its process data with it ([`pack`], [`unpack`],
//! allocation-free).
//!
//! Validation (our choices where the reference gives no code, pinned by tests):
//! * a mapping entry must name an existing entry that is mappable in the PDO's direction
//!   (RxPDO bit for 0x16xx, TxPDO bit for 0x1Axx) with exactly its bit length, or be a gap →
//!   else 0x06040041;
//! * the mapped bits of one PDO, and the assigned bits of one SM, are at most
//!   [`SM_LIMIT_BYTES`] bytes → else 0x06040042;
//! * an assignment entry must name an existing mapping object of the SM's direction →
//!   else 0x06090030 (value range; unverified choice), and a PDO may be assigned once.

use super::od::{Od, OdHint};
use ecat_wire::coe::info::ObjectAccess;
use ecat_wire::coe::SdoAbortCode;

/// Largest process data one SyncManager (and one PDO) may carry, in bytes. 32 keeps the
/// servo's three SM2 buffers (0x1100..) clear of SM3 at 0x1180 (our choice).
pub const SM_LIMIT_BYTES: u32 = 32;

/// One mapped entry of a SyncManager's process data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapEntry {
    /// Object index (0 for a gap).
    pub index: u16,
    /// Subindex.
    pub sub: u8,
    /// Length in bits.
    pub bits: u8,
    /// Bit offset in the SM's data.
    pub offset: u32,
}

/// The assignment object of SM `n` (0x1C10 + n).
pub fn assign_index(n: u8) -> u16 {
    0x1C10 + n as u16
}

/// True for RxPDO mapping objects (0x1600..=0x17FF).
pub fn is_rx_mapping(index: u16) -> bool {
    (0x1600..=0x17FF).contains(&index)
}

/// True for TxPDO mapping objects (0x1A00..=0x1BFF).
pub fn is_tx_mapping(index: u16) -> bool {
    (0x1A00..=0x1BFF).contains(&index)
}

/// True for PDO assignment objects of process-data SMs (0x1C12..=0x1C2F).
pub fn is_assign(index: u16) -> bool {
    (0x1C12..=0x1C2F).contains(&index)
}

/// The direction of SM `n` from 0x1C00 (true: outputs/RxPDO), defaulting to SM2 = outputs.
fn sm_is_rx(od: &Od, n: u8) -> bool {
    match od.get(0x1C00, n.wrapping_add(1)) {
        Some(3) => true,
        Some(4) => false,
        _ => n.is_multiple_of(2),
    }
}

/// The active entries (1..=SI0) of mapping object `pdo`.
fn mapping_words(od: &Od, pdo: u16) -> impl Iterator<Item = u32> + '_ {
    let n = od.get_or(pdo, 0, 0).clamp(0, 255) as u8;
    (1..=n).filter_map(move |s| od.get(pdo, s).map(|v| v as u32))
}

/// Bits mapped by `pdo` (entries 1..=SI0).
pub fn pdo_bits(od: &Od, pdo: u16) -> u32 {
    mapping_words(od, pdo).map(|w| w & 0xFF).sum()
}

/// The assigned mapping objects of SM `n` (entries 1..=SI0 of 0x1C10 + n).
fn assigned(od: &Od, n: u8) -> impl Iterator<Item = u16> + '_ {
    let a = assign_index(n);
    let k = od.get_or(a, 0, 0).clamp(0, 255) as u8;
    (1..=k).filter_map(move |s| od.get(a, s).map(|v| v as u16))
}

/// Bits of SM `n`'s process data from its assignment; `None` without an assignment object.
pub fn sm_bits(od: &Od, n: u8) -> Option<u32> {
    od.object(assign_index(n))?;
    Some(assigned(od, n).map(|p| pdo_bits(od, p)).sum())
}

/// Fill `out` with the layout of SM `n` (cleared first); returns its size in bits, or `None`
/// without an assignment object.
pub fn layout(od: &Od, n: u8, out: &mut Vec<MapEntry>) -> Option<u32> {
    out.clear();
    od.object(assign_index(n))?;
    let mut offset = 0u32;
    for pdo in assigned(od, n) {
        for w in mapping_words(od, pdo) {
            let e = MapEntry {
                index: (w >> 16) as u16,
                sub: (w >> 8) as u8,
                bits: w as u8,
                offset,
            };
            offset += e.bits as u32;
            out.push(e);
        }
    }
    Some(offset)
}

/// Check one mapping entry `w` for a mapping object of direction `rx`.
pub fn check_mapping_entry(od: &Od, rx: bool, w: u32) -> Result<(), SdoAbortCode> {
    let (index, sub, bits) = ((w >> 16) as u16, (w >> 8) as u8, w as u8);
    if index == 0 {
        return Ok(());
    }
    let need = if rx {
        ObjectAccess::RXPDO
    } else {
        ObjectAccess::TXPDO
    };
    match od.entry(index, sub) {
        Some(e) if e.access & need != 0 && e.bits == bits as u16 => Ok(()),
        _ => Err(SdoAbortCode::NOT_MAPPABLE),
    }
}

/// Check that mapping object `pdo` may become active with `n` entries (SI0 = n).
pub fn check_mapping_count(od: &Od, pdo: u16, n: u8) -> Result<(), SdoAbortCode> {
    let rx = is_rx_mapping(pdo);
    let mut bits = 0u32;
    for s in 1..=n {
        let w = od.get(pdo, s).ok_or(SdoAbortCode::VALUE_TOO_HIGH)? as u32;
        check_mapping_entry(od, rx, w)?;
        bits += w & 0xFF;
    }
    if bits > SM_LIMIT_BYTES * 8 {
        return Err(SdoAbortCode::PDO_TOO_LONG);
    }
    Ok(())
}

/// Check one assignment entry `pdo` for SM `n`.
pub fn check_assign_entry(od: &Od, n: u8, pdo: u16) -> Result<(), SdoAbortCode> {
    let right = if sm_is_rx(od, n) {
        is_rx_mapping(pdo)
    } else {
        is_tx_mapping(pdo)
    };
    if right && od.object(pdo).is_some() {
        Ok(())
    } else {
        Err(SdoAbortCode::VALUE_RANGE)
    }
}

/// Check that the assignment of SM `n` may become active with `k` entries.
pub fn check_assign_count(od: &Od, n: u8, k: u8) -> Result<(), SdoAbortCode> {
    let a = assign_index(n);
    let mut bits = 0;
    let mut seen = [0u16; 255];
    for s in 1..=k {
        let pdo = od.get(a, s).ok_or(SdoAbortCode::VALUE_TOO_HIGH)? as u16;
        check_assign_entry(od, n, pdo)?;
        if seen[..s as usize - 1].contains(&pdo) {
            return Err(SdoAbortCode::VALUE_RANGE);
        }
        seen[s as usize - 1] = pdo;
        bits += pdo_bits(od, pdo);
    }
    if bits > SM_LIMIT_BYTES * 8 {
        return Err(SdoAbortCode::PDO_TOO_LONG);
    }
    Ok(())
}

fn get_bit(b: &[u8], i: u32) -> bool {
    b.get((i / 8) as usize)
        .is_some_and(|x| x >> (i % 8) & 1 != 0)
}

fn put_bit(b: &mut [u8], i: u32, v: bool) {
    if let Some(x) = b.get_mut((i / 8) as usize) {
        if v {
            *x |= 1 << (i % 8);
        } else {
            *x &= !(1 << (i % 8));
        }
    }
}

/// Write the mapped entries' values into `out` (inputs). Gaps are left as they are.
pub fn pack(od: &Od, map: &[MapEntry], out: &mut [u8]) {
    pack_hinted(od, map, &mut [], out);
}

/// [`pack`] for a device that packs the same mapping every frame: `hints[i]` remembers
/// where entry `i` of `map` is in the dictionary (see [`Od::entry_hinted`]); entries
/// without a hint are looked up.
pub fn pack_hinted(od: &Od, map: &[MapEntry], hints: &mut [OdHint], out: &mut [u8]) {
    for (i, m) in map.iter().enumerate() {
        if m.index == 0 {
            continue;
        }
        let e = match hints.get_mut(i) {
            Some(h) => od.entry_hinted(h, m.index, m.sub),
            None => od.entry(m.index, m.sub),
        };
        let Some(e) = e else {
            continue;
        };
        if m.offset.is_multiple_of(8) && m.bits.is_multiple_of(8) {
            let start = (m.offset / 8) as usize;
            let n = (m.bits / 8) as usize;
            if let Some(dst) = out.get_mut(start..start + n) {
                let k = n.min(e.value.len());
                dst[..k].copy_from_slice(&e.value[..k]);
                dst[k..].fill(0);
            }
            continue;
        }
        for i in 0..m.bits as u32 {
            put_bit(out, m.offset + i, get_bit(&e.value, i));
        }
    }
}

/// Store the mapped parts of `data` (outputs) into the dictionary.
pub fn unpack(od: &mut Od, map: &[MapEntry], data: &[u8]) {
    for m in map {
        let Some(e) = (m.index != 0)
            .then(|| od.entry_mut(m.index, m.sub))
            .flatten()
        else {
            continue;
        };
        let bits = (m.bits as u32).min(e.value.len() as u32 * 8);
        if m.offset.is_multiple_of(8) && bits.is_multiple_of(8) {
            // Whole bytes: copied as such (the common case; the same as bit by bit).
            let (start, n) = ((m.offset / 8) as usize, (bits / 8) as usize);
            if let Some(src) = data.get(start..start + n) {
                e.value[..n].copy_from_slice(src);
                continue;
            }
        }
        for i in 0..bits {
            put_bit(&mut e.value, i, get_bit(data, m.offset + i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coe::od::{access, ObjSpec};

    static T: &[ObjSpec] = &[
        crate::od_var!(0x7000, "A", UNSIGNED16, access::RW, 0),
        crate::od_var!(0x7001, "B", UNSIGNED8, access::RW, 0),
        crate::od_var!(0x7002, "C", UNSIGNED16, access::RW, 0),
        crate::od_var!(0x7003, "D", UNSIGNED32, access::RW, 0x1234_5678),
    ];

    fn map(index: u16, bits: u8, offset: u32) -> MapEntry {
        MapEntry {
            index,
            sub: 0,
            bits,
            offset,
        }
    }

    #[test]
    fn unpack_takes_whole_bytes_and_loose_bits_alike() {
        let mut od = Od::new();
        od.insert_specs(T);
        let data = [0xAA, 0x34, 0x12, 0xF5, 0xC3, 0x0B];
        let m = [
            // Whole bytes at byte 1 (the fast path).
            map(0x7000, 16, 8),
            // Four bits at bit 28: the upper nibble of 0xF5.
            map(0x7001, 4, 28),
            // Sixteen bits at bit 36, not byte-aligned: 0x0BC3 >> 4 = 0x00BC, bits 36..52.
            map(0x7002, 16, 36),
            // Past the end of the data: the bits that are missing read as 0.
            map(0x7003, 32, 40),
        ];
        unpack(&mut od, &m, &data);
        assert_eq!(od.get(0x7000, 0), Some(0x1234));
        assert_eq!(od.get(0x7001, 0), Some(0x0F));
        assert_eq!(od.get(0x7002, 0), Some(0x00BC));
        assert_eq!(od.get(0x7003, 0), Some(0x0B));
        let mut out = [0u8; 3];
        pack(&od, &m[..1], &mut out);
        assert_eq!(out, [0x00, 0x34, 0x12], "packed back where it came from");
    }
}
