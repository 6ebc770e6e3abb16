//! Hot-connect groups in the supervisor: a run of SubDevices (a group head and the SubDevices
//! behind it) that may leave and join the bus as a whole, with the rest running on.
//!
//! A group's members are supervised like any SubDevice (the same loss, probe, identity check
//! and walk up to the target), with three differences kept here:
//! * their loss is not an error: the first member found missing while the group was present
//!   reports the group disconnected ([`Event::GroupDisconnected`]) instead of a `Lost` per
//!   member, and the first member answering again reports it connected
//!   ([`Event::GroupConnected`]); when every member is back in the target state the group is
//!   reported ready with the cycles it took ([`Event::GroupReady`]);
//! * a lost SubDevice is probed where it would be if every absent group were plugged out:
//!   its position less the members of absent groups in front of it ([`Supervisor::bus_position`]),
//!   so a group in a junction branch is found again wherever it sits;
//! * [`Supervisor::all_running`] does not wait for the members of an absent group.

use super::{Event, Phase, Supervisor};
use std::ops::Range;

/// A hot-connect group as the supervisor tracks it.
#[derive(Debug, Clone)]
pub(super) struct Group {
    pub name: String,
    /// Positions of its members (the head first).
    pub members: Range<usize>,
    /// Plugged in as far as the supervisor knows.
    pub present: bool,
    /// Cycle when it was last seen connected (for the time to the target state).
    pub since: u64,
    /// Every member reached the target since it was last connected.
    pub ready: bool,
}

impl Supervisor {
    /// Declare hot-connect groups: `(name, member positions)` each; members of a group that
    /// is not present (`present = false`) start lost and are probed for. Positions outside
    /// the bus are ignored.
    pub fn set_groups(&mut self, groups: Vec<(String, Range<usize>, bool)>) {
        self.quiet = false;
        self.groups.clear();
        for s in &mut self.subs {
            s.group = None;
        }
        for (g, (name, members, present)) in groups.into_iter().enumerate() {
            let members = members.start.min(self.subs.len())..members.end.min(self.subs.len());
            for i in members.clone() {
                self.subs[i].group = Some(g as u16);
                if !present {
                    self.subs[i].phase = Phase::Lost { next_probe: 0 };
                }
            }
            self.groups.push(Group {
                name,
                members,
                present,
                since: 0,
                ready: false,
            });
        }
        self.update_expected_probe();
    }

    /// True if the hot-connect group `g` is plugged in as far as the supervisor knows.
    pub fn group_present(&self, g: usize) -> bool {
        self.groups.get(g).is_some_and(|x| x.present)
    }

    /// How often the bus's shape changed: a hot-connect group in the target state after
    /// joining, or gone. The runtime measures the DC delays again after each change (see
    /// `dc::remeasure`).
    pub fn topology_changes(&self) -> u64 {
        self.topology_changes
    }

    /// True if no hot-connect group is between joining and ready (its members are still
    /// being configured).
    pub fn groups_settled(&self) -> bool {
        self.groups.iter().all(|g| !g.present || g.ready)
    }

    /// Report a round of measuring the delays again (see `dc::remeasure`).
    pub(crate) fn report_dc_delays(
        &mut self,
        measured: usize,
        corrected: usize,
        largest_change_ns: u32,
        cycle: u64,
    ) {
        self.emit(Event::DcDelaysMeasured {
            measured,
            corrected,
            largest_change_ns,
            cycle,
        });
    }

    /// Record the propagation delay measured again for the SubDevice at `i` (used when its
    /// clock is set up after a power loss).
    pub(crate) fn set_dc_delay(&mut self, i: usize, delay_ns: u32) {
        if let Some(dc) = self.subs.get_mut(i).and_then(|s| s.info.dc.as_mut()) {
            dc.delay_ns = delay_ns;
        }
    }

    /// The positions of hot-connect group `g`'s members.
    pub fn group_members(&self, g: usize) -> Option<Range<usize>> {
        self.groups.get(g).map(|x| x.members.clone())
    }

    /// The name of hot-connect group `g`.
    pub fn group_name(&self, g: usize) -> Option<&str> {
        self.groups.get(g).map(|x| x.name.as_str())
    }

    /// Number of hot-connect groups.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// True if the SubDevice at `i` belongs to a hot-connect group that is absent.
    pub(super) fn in_absent_group(&self, i: usize) -> bool {
        self.subs[i]
            .group
            .is_some_and(|g| !self.groups[g as usize].present)
    }

    /// The auto-increment position at which SubDevice `i` answers if it is plugged in: its
    /// position with everything present, less the members of other absent groups in front.
    pub(super) fn bus_position(&self, i: usize) -> u16 {
        let own = self.subs[i].group;
        let p = self.subs[i].info.position as usize;
        let gone: usize = self
            .groups
            .iter()
            .enumerate()
            .filter(|(g, x)| !x.present && Some(*g as u16) != own && x.members.end <= p)
            .map(|(_, x)| x.members.len())
            .sum();
        p.saturating_sub(gone) as u16
    }

    /// A member of a group is lost (newly): the group is reported disconnected once.
    /// Returns false if `i` is in no group (the caller reports a plain loss).
    pub(super) fn group_member_lost(&mut self, i: usize, cycle: u64) -> bool {
        let Some(g) = self.subs[i].group.map(usize::from) else {
            return false;
        };
        let grp = &mut self.groups[g];
        if grp.present {
            grp.present = false;
            grp.ready = false;
            self.topology_changes += 1;
            let (name, members) = (grp.name.clone(), grp.members.clone());
            self.emit(Event::GroupDisconnected {
                group: g,
                name,
                members,
                cycle,
            });
            // The others of the group are gone too: no need to wait for each to time out.
            for k in self.groups[g].members.clone() {
                // (A datagram in flight is judged when it comes back, as for any lost one.)
                if k != i && !matches!(self.subs[k].phase, Phase::Lost { .. } | Phase::Probe) {
                    self.subs[k].phase = Phase::Lost { next_probe: 0 };
                    self.subs[k].lost_at_cycle = cycle;
                }
            }
        }
        true
    }

    /// A member of a group answers again: the group is reported connected once.
    /// Returns false if `i` is in no group (the caller reports a plain return).
    pub(super) fn group_member_found(&mut self, i: usize, cycle: u64) -> bool {
        let Some(g) = self.subs[i].group.map(usize::from) else {
            return false;
        };
        let grp = &mut self.groups[g];
        if !grp.present {
            grp.present = true;
            grp.ready = false;
            grp.since = cycle;
            let (name, members) = (grp.name.clone(), grp.members.clone());
            self.emit(Event::GroupConnected {
                group: g,
                name,
                members,
                cycle,
            });
            // Its other members are there too: probe them now.
            for k in self.groups[g].members.clone() {
                if let Phase::Lost { .. } = self.subs[k].phase {
                    self.subs[k].phase = Phase::Lost { next_probe: 0 };
                }
            }
        }
        true
    }

    /// After a poll: report each connected group ready once all its members run in the
    /// target state.
    pub(super) fn check_groups_ready(&mut self, cycle: u64) {
        for g in 0..self.groups.len() {
            let grp = &self.groups[g];
            if grp.ready
                || !grp.present
                || !grp
                    .members
                    .clone()
                    .all(|k| self.subs[k].phase == Phase::Running)
            {
                continue;
            }
            let grp = &mut self.groups[g];
            grp.ready = true;
            self.topology_changes += 1;
            let (name, members, since) = (grp.name.clone(), grp.members.clone(), grp.since);
            self.emit(Event::GroupReady {
                group: g,
                name,
                members,
                state: self.target,
                cycle,
                after_cycles: cycle.saturating_sub(since),
            });
        }
    }
}
