//! Zero-copy domains: ecat's process image laid out at IgH's offsets.
//!
//! An IgH application learns its offsets at registration, before ecat lays out the process
//! data (outputs first, then inputs). At activation, each ecat domain whose sync managers are
//! exactly those of the C domain of the same number (same SubDevices, sync managers and
//! lengths) and whose SubDevices all take LRW is laid out again at the C domain's offsets: the
//! regions move, their FMMUs' logical addresses with them, and LRW spans carry the image
//! (only the input regions take the returned data, so outputs written at any time between two
//! sends go out, as with the copying domains). The C domain then hands out ecat's
//! image itself, and `ecrt_domain_process`/`ecrt_domain_queue` copy nothing. A domain that
//! does not qualify (an unattached configuration, a SubDevice without LRW, a sync manager
//! registered in two domains) keeps ecat's layout and the per-region copies of [`crate::domain`].

use crate::domain::Domain;
use ecat::domain::{Domain as EcatDomain, Layout, Region};
use ecat::SubDevice;

/// Lay ecat's domain `c.index` of `lay` out at the offsets of C domain `c` if it qualifies
/// (see the module documentation); true if it did.
pub fn relocate(lay: &mut Layout, c: &Domain, subs: &[SubDevice]) -> bool {
    let Some(ed) = lay.domains.get(c.index) else {
        return false;
    };
    if ed.size() != c.size || ed.regions.len() != c.regions.len() || c.size == 0 {
        return false;
    }
    // Every ecat region at its C offset (same SubDevice, sync manager, direction, length).
    let mut moved: Vec<Region> = Vec::with_capacity(ed.regions.len());
    for r in &ed.regions {
        let Some(cr) = c
            .regions
            .iter()
            .find(|x| x.position == Some(r.position as usize) && x.sm == r.sm)
        else {
            return false;
        };
        if cr.len != r.len || cr.dir != r.direction {
            return false;
        }
        moved.push(Region {
            offset: cr.offset,
            ..*r
        });
    }
    if moved
        .iter()
        .any(|r| subs.get(r.position as usize).is_none_or(|s| s.no_lrw()))
    {
        return false;
    }
    // Each region's FMMU (found by its logical span) moves with it.
    let base = ed.logical_base;
    let fmmu = |lay: &Layout, r: &Region| {
        lay.mappings.get(r.position as usize).and_then(|m| {
            m.fmmus.iter().position(|f| {
                f.logical_start == base + r.offset as u32 && f.length as usize == r.len
            })
        })
    };
    let Some(found) = ed
        .regions
        .iter()
        .map(|r| fmmu(lay, r))
        .collect::<Option<Vec<usize>>>()
    else {
        return false;
    };
    for (r, k) in moved.iter().zip(found) {
        lay.mappings[r.position as usize].fmmus[k].logical_start = base + r.offset as u32;
    }
    lay.domains[c.index] = EcatDomain::interleaved(c.index, base, moved);
    true
}
