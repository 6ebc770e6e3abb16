//! Hot-connect groups: parts of the bus (a tool changer, an optional station) that may be
//! absent, and leave and join while everything else cycles.
//!
//! A group is declared by its head, the first SubDevice of the group in auto-increment order,
//! identified by its station alias (register 0x0012, loaded from the SII) or by its identity
//! (vendor and product) at a position, and by how many SubDevices it has (the head and those
//! behind it). [`resolve`] finds the declared groups on the scanned bus and checks that they
//! neither overlap each other nor the fixed part of the configuration.
//!
//! A group may be absent when the bus is scanned if the configuration says what its members
//! are: their SII images (from the devices' ESI files, or dumps). [`place_absent`] then lays
//! the group out where it would sit with everything plugged in: it inserts a [`SubDevice`]
//! per member built from its image (marked [`SubDevice::absent_at_scan`], with a station
//! address no one else has) and moves the positions behind it up, so the process data, the
//! SM configuration and the working counters are planned as if the group were there. The
//! supervisor starts those members lost and probes for them; the first time the group
//! answers it is identified, addressed, configured and brought to the target state by the
//! same path as a group that comes back.
//!
//! At run time the supervisor keeps the groups (see `supervisor::groups`: reported as
//! connected, disconnected and ready instead of lost; probed where they would be), and
//! [`GroupWkc`] keeps the domains' working counters honest: each cyclic datagram's expected
//! WKC may lack the share of group members that do not exchange data (not yet in SAFEOP, or
//! gone), so the domain stays complete for the rest of the bus. When a group disappears its
//! share is missing before the supervisor has noticed: a datagram short by exactly the share
//! of one group (or of all groups together) counts that group as gone from that cycle on. All
//! of it works on tables sized at activation, so a cycle allocates nothing whether a group is
//! present, absent or changing.

use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::subdevice::SubDevice;
use crate::supervisor::Supervisor;
use std::ops::Range;

/// How a group's head is recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupHead {
    /// By its station alias (register 0x0012, from SII word 4).
    Alias(u16),
    /// By vendor and product at an auto-increment position (with every group present).
    Identity {
        /// Position of the head.
        position: u16,
        /// Vendor ID.
        vendor_id: u32,
        /// Product code.
        product_code: u32,
    },
}

/// A hot-connect group as the configuration declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HotConnectGroup {
    /// Name used in reports.
    pub name: String,
    /// Its head.
    pub head: GroupHead,
    /// SubDevices in the group, the head included (at least 1).
    pub subdevices: u16,
    /// The members' SII images, head first, one per SubDevice, for a group that may be
    /// absent at the scan (see the module notes); empty: the group must be plugged in then.
    pub images: Vec<Vec<u8>>,
    /// For a group named by alias that is absent at the scan: the auto-increment position of
    /// its head with every group plugged in (`None`: behind the last SubDevice). A head named
    /// by identity has its position already.
    pub absent_position: Option<u16>,
}

impl HotConnectGroup {
    /// A group that must be plugged in at the scan.
    pub fn new(name: impl Into<String>, head: GroupHead, subdevices: u16) -> HotConnectGroup {
        HotConnectGroup {
            name: name.into(),
            head,
            subdevices,
            images: Vec::new(),
            absent_position: None,
        }
    }

    /// The position of its head on `subs`, if there; an error if its alias is not unique.
    fn find_head(&self, subs: &[SubDevice]) -> Result<Option<usize>> {
        Ok(match self.head {
            GroupHead::Alias(a) => {
                let found: Vec<usize> = (0..subs.len()).filter(|&p| subs[p].alias == a).collect();
                if found.len() > 1 {
                    return Err(Error::Invalid(format!(
                        "hot-connect group \"{}\": alias {a} is held by the SubDevices at positions {found:?}; give each group head an alias of its own",
                        self.name
                    )));
                }
                found.first().copied()
            }
            GroupHead::Identity {
                position,
                vendor_id,
                product_code,
            } => subs
                .get(position as usize)
                .filter(|s| {
                    s.identity.vendor_id == vendor_id && s.identity.product_code == product_code
                })
                .map(|_| position as usize),
        })
    }
}

/// Lay out every group of `groups` that is not on the scanned bus `subs` but has its members'
/// SII images (see the module notes): their SubDevices are inserted where the groups sit
/// with everything plugged in. Returns the positions inserted, in order. Errors are one
/// sentence naming the group and the fix.
pub fn place_absent(groups: &[HotConnectGroup], subs: &mut Vec<SubDevice>) -> Result<Vec<usize>> {
    let mut absent: Vec<(usize, &HotConnectGroup)> = Vec::new();
    for g in groups {
        if g.images.is_empty() || g.find_head(subs)?.is_some() {
            continue;
        }
        if g.images.len() != g.subdevices as usize {
            return Err(Error::Invalid(format!(
                "hot-connect group \"{}\" has {} SubDevices but {} SII image(s); give one image per member, the head first",
                g.name,
                g.subdevices,
                g.images.len()
            )));
        }
        let at = match g.head {
            GroupHead::Identity { position, .. } => Some(position),
            GroupHead::Alias(_) => g.absent_position,
        };
        absent.push((at.map_or(usize::MAX, usize::from), g));
    }
    // In the order of their positions with everything plugged in: each insertion makes the
    // bus more like that, so the next position means what it says.
    absent.sort_by_key(|(at, _)| *at);
    let mut next_station = subs
        .iter()
        .map(|s| s.station)
        .max()
        .unwrap_or(0)
        .max(0x1000);
    let mut inserted = Vec::new();
    for (at, g) in absent {
        let at = if at == usize::MAX { subs.len() } else { at };
        if at > subs.len() {
            return Err(Error::Invalid(format!(
                "hot-connect group \"{}\" is absent and placed at position {at}, but the bus has {} SubDevices with the groups before it; correct the position of its head",
                g.name,
                subs.len()
            )));
        }
        for (k, image) in g.images.iter().enumerate() {
            next_station = next_station.checked_add(1).ok_or_else(|| {
                Error::Invalid(format!(
                    "hot-connect group \"{}\": no station address is left for its members",
                    g.name
                ))
            })?;
            let mut s = SubDevice {
                position: (at + k) as u16,
                station: next_station,
                absent_at_scan: true,
                ..Default::default()
            };
            s.apply_sii(image).map_err(|reason| {
                Error::Invalid(format!(
                    "hot-connect group \"{}\": the SII image of member {} cannot be used ({reason}); give the image of the device that sits there",
                    g.name,
                    k + 1
                ))
            })?;
            if let (0, GroupHead::Alias(a)) = (k, g.head) {
                s.alias = a;
            }
            // What the ESC registers would say, from what the SII says it uses.
            s.fmmu_count = s.fmmu_usage.len().clamp(3, 16) as u8;
            s.sm_count = s.sync_managers.len().clamp(4, 16) as u8;
            subs.insert(at + k, s);
            inserted.push(at + k);
        }
        for (p, s) in subs.iter_mut().enumerate() {
            s.position = p as u16;
        }
    }
    Ok(inserted)
}

/// A group found on the bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedGroup {
    /// Name used in reports.
    pub name: String,
    /// Positions of its members, the head first.
    pub members: Range<usize>,
    /// Present when the bus was scanned.
    pub present: bool,
}

fn span(r: &Range<usize>) -> String {
    match r.len() {
        1 => format!("position {}", r.start),
        _ => format!("positions {}-{}", r.start, r.end.saturating_sub(1)),
    }
}

/// With distributed clocks running: give each laid-out member a clock to set up when it
/// appears, if its ESC turns out to have one (see `supervisor::dc_join`). Its propagation
/// delay was never measured: it starts with that of the nearest DC SubDevice in front of it,
/// and the runtime measures the real one once the group is in the target state
/// (`dc::remeasure`).
pub fn assume_dc(subs: &mut [SubDevice]) {
    let mut delay = 0;
    for s in subs.iter_mut() {
        match s.dc {
            Some(d) => delay = d.delay_ns,
            None if s.absent_at_scan => {
                s.dc = Some(crate::subdevice::DcInfo {
                    system_time: true,
                    delay_ns: delay,
                    ..Default::default()
                });
            }
            None => {}
        }
    }
}

/// Find `groups` on the scanned bus `subs`. `fixed` lists the positions the rest of the
/// configuration names explicitly (e.g. a PDO configuration file's entries): a group may
/// not include one. Errors are one sentence naming the group and the fix.
pub fn resolve(
    groups: &[HotConnectGroup],
    subs: &[SubDevice],
    fixed: &[usize],
) -> Result<Vec<ResolvedGroup>> {
    let mut out: Vec<ResolvedGroup> = Vec::with_capacity(groups.len());
    for g in groups {
        if g.subdevices == 0 {
            return Err(Error::Invalid(format!(
                "hot-connect group \"{}\" has no SubDevices; give `subdevices` (the head and those behind it, at least 1)",
                g.name
            )));
        }
        let head = g.find_head(subs)?;
        let Some(head) = head else {
            return Err(Error::Invalid(format!(
                "hot-connect group \"{}\" is not on the bus ({}); connect it for the start, or give its members' SII images so it can be laid out while absent",
                g.name,
                match g.head {
                    GroupHead::Alias(a) => format!("no SubDevice has alias {a}"),
                    GroupHead::Identity { position, vendor_id, product_code } => format!(
                        "position {position} holds no SubDevice with vendor 0x{vendor_id:08X}, product 0x{product_code:08X}"
                    ),
                }
            )));
        };
        let members = head..head + g.subdevices as usize;
        if members.end > subs.len() {
            return Err(Error::Invalid(format!(
                "hot-connect group \"{}\" has {} SubDevices from its head at position {head}, but the bus ends at position {}; correct `subdevices`",
                g.name,
                g.subdevices,
                subs.len().saturating_sub(1)
            )));
        }
        if let Some(o) = out
            .iter()
            .find(|o| o.members.start < members.end && members.start < o.members.end)
        {
            return Err(Error::Invalid(format!(
                "hot-connect groups \"{}\" ({}) and \"{}\" ({}) overlap; a SubDevice belongs to one group at most",
                o.name,
                span(&o.members),
                g.name,
                span(&members)
            )));
        }
        if let Some(p) = fixed.iter().find(|p| members.contains(p)) {
            return Err(Error::Invalid(format!(
                "hot-connect group \"{}\" ({}) includes position {p}, which the configuration also sets up as a fixed SubDevice; take position {p} out of one of them",
                g.name,
                span(&members)
            )));
        }
        out.push(ResolvedGroup {
            name: g.name.clone(),
            present: !subs[members.clone()].iter().any(|s| s.absent_at_scan),
            members,
        });
    }
    Ok(out)
}

/// Per domain and cyclic datagram: the WKC shares of group members, and which members count
/// (see the module notes).
#[derive(Debug, Default)]
pub struct GroupWkc {
    /// Per group: member positions.
    groups: Vec<Range<usize>>,
    /// `share[d][plan][m]`: WKC share of the `m`-th group member (all groups' members in
    /// order) in plan `plan` of domain `d`.
    share: Vec<Vec<Vec<u16>>>,
    /// Per member (same order): exchanging data as of the last cycle.
    counted: Vec<bool>,
    /// Per group: missing from the last cycles' WKCs before the supervisor noticed.
    gone: Vec<bool>,
    /// The slack was set once (a group absent from the start has its share missing from
    /// the first cycle, with no change of `counted` to say so).
    slack_set: bool,
}

impl GroupWkc {
    /// Tables for `groups` over `domains` (made at activation).
    pub fn new(groups: &[ResolvedGroup], domains: &[Domain]) -> GroupWkc {
        let members: Vec<usize> = groups.iter().flat_map(|g| g.members.clone()).collect();
        let share = domains
            .iter()
            .map(|d| {
                (0..d.plans.len())
                    .map(|i| members.iter().map(|&p| d.member_wkc(i, p as u16)).collect())
                    .collect()
            })
            .collect();
        GroupWkc {
            groups: groups.iter().map(|g| g.members.clone()).collect(),
            share,
            counted: vec![false; members.len()],
            gone: vec![false; groups.len()],
            slack_set: false,
        }
    }

    /// True if there are no groups.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Before the domains are evaluated: set each datagram's slack to the share of the group
    /// members that do not exchange data.
    pub fn apply(&mut self, sup: &Supervisor, domains: &mut [Domain]) {
        if self.groups.is_empty() {
            return;
        }
        // Every datagram full: whatever was guessed gone is there.
        if self.gone.iter().any(|&g| g)
            && domains
                .iter()
                .all(|d| (0..d.plans.len()).all(|i| d.plan_wkc(i) == d.plans[i].expected_wkc))
        {
            self.gone.iter_mut().for_each(|g| *g = false);
        }
        let mut changed = !self.slack_set;
        self.slack_set = true;
        let mut m = 0;
        for (g, r) in self.groups.iter().enumerate() {
            let mut all_out = true;
            for p in r.clone() {
                let c = sup.fmmus_mapped(p) && !self.gone[g];
                all_out &= !sup.fmmus_mapped(p);
                changed |= self.counted[m] != c;
                self.counted[m] = c;
                m += 1;
            }
            // Noticed by the supervisor (or never in): the early guess is no longer needed.
            if all_out && self.gone[g] {
                self.gone[g] = false;
            }
        }
        if changed {
            self.set_slack(domains);
        }
        // A group gone before the supervisor noticed: its share is missing exactly.
        for d in 0..domains.len() {
            if domains[d].evaluate() == crate::domain::DomainState::Complete {
                continue;
            }
            if let Some(g) = self.missing_group(d, &domains[d]) {
                for k in self.group_members(g) {
                    self.counted[k] = false;
                }
                match g {
                    Some(g) => self.gone[g] = true,
                    None => self.gone.iter_mut().for_each(|x| *x = true),
                }
                self.set_slack(domains);
            }
        }
    }

    /// Indices (in member order) of group `g`'s members, or of every member for `None`.
    fn group_members(&self, g: Option<usize>) -> Range<usize> {
        match g {
            None => 0..self.counted.len(),
            Some(g) => {
                let start: usize = self.groups[..g].iter().map(|r| r.len()).sum();
                start..start + self.groups[g].len()
            }
        }
    }

    /// The group (`Some(None)`: all of them) whose counted share is exactly what domain `d`
    /// lacks in every datagram, if any.
    fn missing_group(&self, d: usize, dom: &Domain) -> Option<Option<usize>> {
        let candidates = (0..self.groups.len()).map(Some).chain([None]);
        for g in candidates {
            let ms = self.group_members(g);
            let fits = (0..dom.plans.len()).all(|i| {
                let counted: u16 = ms
                    .clone()
                    .filter(|&k| self.counted[k])
                    .map(|k| self.share[d][i][k])
                    .sum();
                let want = dom.plans[i].expected_wkc.saturating_sub(dom.slack(i));
                dom.plan_wkc(i).saturating_add(counted) == want
            });
            let any = ms.clone().any(|k| self.counted[k]);
            if fits && any {
                return Some(g);
            }
        }
        None
    }

    fn set_slack(&self, domains: &mut [Domain]) {
        for (d, dom) in domains.iter_mut().enumerate() {
            for i in 0..dom.plans.len() {
                let s: u16 = (0..self.counted.len())
                    .filter(|&k| !self.counted[k])
                    .map(|k| self.share[d][i][k])
                    .sum();
                dom.set_slack(i, s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subdevice::Identity;

    fn bus() -> Vec<SubDevice> {
        (0..7u16)
            .map(|p| SubDevice {
                position: p,
                alias: if p == 4 { 0x2000 } else { 0 },
                identity: Identity {
                    vendor_id: 2,
                    product_code: 0x100 + p as u32,
                    ..Default::default()
                },
                ..Default::default()
            })
            .collect()
    }

    fn g(name: &str, head: GroupHead, n: u16) -> HotConnectGroup {
        HotConnectGroup::new(name, head, n)
    }

    fn one_sentence(e: Error) -> String {
        let t = e.to_string();
        assert!(!t.contains('\n') && t.matches(". ").count() == 0, "{t}");
        t
    }

    #[test]
    fn heads_by_alias_and_by_identity() {
        let by_id = GroupHead::Identity {
            position: 2,
            vendor_id: 2,
            product_code: 0x102,
        };
        let r = resolve(
            &[g("a", GroupHead::Alias(0x2000), 3), g("b", by_id, 2)],
            &bus(),
            &[0],
        )
        .unwrap();
        assert_eq!(r[0].members, 4..7);
        assert_eq!(r[1].members, 2..4);
    }

    #[test]
    fn overlaps_and_bad_sizes_are_one_sentence() {
        let by_id = GroupHead::Identity {
            position: 3,
            vendor_id: 2,
            product_code: 0x103,
        };
        let e = resolve(
            &[g("a", GroupHead::Alias(0x2000), 3), g("b", by_id, 2)],
            &bus(),
            &[],
        )
        .unwrap_err();
        let t = one_sentence(e);
        assert!(
            t.contains("\"a\" (positions 4-6) and \"b\" (positions 3-4) overlap"),
            "{t}"
        );
        let e = resolve(&[g("a", GroupHead::Alias(0x2000), 3)], &bus(), &[5]).unwrap_err();
        let t = one_sentence(e);
        assert!(
            t.contains("includes position 5") && t.contains("fixed"),
            "{t}"
        );
        let e = resolve(&[g("a", GroupHead::Alias(0x2000), 4)], &bus(), &[]).unwrap_err();
        assert!(one_sentence(e).contains("the bus ends at position 6"));
        let e = resolve(&[g("a", GroupHead::Alias(7), 1)], &bus(), &[]).unwrap_err();
        assert!(one_sentence(e).contains("no SubDevice has alias 7"));
    }
}
