//! The outcome of a replay: counts, the fidelity figure, every difference, and the
//! differences grouped by command and register.
//!
//! The fidelity figure is the share of datagrams without a DC time value whose simulated
//! answer equals the real one in every field (ADP, IRQ, data, WKC). Datagrams with DC time
//! values are counted apart: for them only whether the rest matches is reported.

use super::compare::{register_name, Dg, Mismatch};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// One datagram whose simulated answer differs from the captured one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// 1-based number of the captured answer frame in the file (as Wireshark counts).
    pub packet: usize,
    /// 0-based position of the datagram in its frame.
    pub datagram: usize,
    /// Command name ("FPRD").
    pub command: String,
    /// ADP as sent.
    pub adp: u16,
    /// ADO as sent (for logical commands, the high half of the logical address).
    pub ado: u16,
    /// Data length.
    pub len: usize,
    /// The datagram covers a DC time value.
    pub dc_time: bool,
    /// What differs.
    pub mismatch: Mismatch,
    /// Working counter of the real answer.
    pub real_wkc: u16,
    /// Working counter of the simulator's answer.
    pub sim_wkc: u16,
    /// Returned ADP, real.
    pub real_adp: u16,
    /// Returned ADP, simulated.
    pub sim_adp: u16,
    /// IRQ field, real.
    pub real_irq: u16,
    /// IRQ field, simulated.
    pub sim_irq: u16,
    /// Data of the real answer, hex (at most 64 bytes shown).
    pub real_data: String,
    /// Data of the simulator's answer, hex (at most 64 bytes shown).
    pub sim_data: String,
    /// The group this difference belongs to (see [`Group::key`]).
    pub key: String,
}

/// Differences of one command on one register block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    /// "FPRD 0x0502 EEPROM control/status" or "LRW logical".
    pub key: String,
    /// The group covers DC time values (not counted in the fidelity figure).
    pub dc_time: bool,
    /// Datagrams of this group that differ.
    pub differing: usize,
    /// Datagrams of this group compared.
    pub compared: usize,
    /// Every kind of difference seen in the group.
    pub mismatch: Mismatch,
    /// The first difference, as an example.
    pub first: Difference,
}

/// What a replay found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Frames in the capture.
    pub packets: usize,
    /// Frames that are no EtherCAT frames or do not decode (skipped).
    pub skipped: usize,
    /// Requests sent to the simulator.
    pub requests: usize,
    /// Requests with their real answer in the capture (compared).
    pub answered: usize,
    /// Requests whose answer is not in the capture (sent, not compared).
    pub unanswered: usize,
    /// Answers in the capture whose request is not.
    pub orphan_answers: usize,
    /// Answered requests the simulator did not return.
    pub sim_lost: usize,
    /// Datagrams compared.
    pub datagrams: usize,
    /// Compared datagrams without a DC time value.
    pub plain: usize,
    /// ... of which equal the real answer.
    pub plain_equal: usize,
    /// Compared datagrams with a DC time value.
    pub dc_time: usize,
    /// ... of which equal the real answer except for the data (WKC, ADP, IRQ equal).
    pub dc_time_structure_equal: usize,
    /// `plain_equal / plain` in percent (100 when nothing was compared).
    pub fidelity_percent: f64,
    /// Differences grouped by command and register, most frequent first.
    pub groups: Vec<Group>,
    /// Every difference in capture order.
    pub differences: Vec<Difference>,
}

fn hex(b: &[u8]) -> String {
    let mut s: String = b.iter().take(64).map(|x| format!("{x:02x}")).collect();
    if b.len() > 64 {
        s.push('…');
    }
    s
}

/// The group key of a request datagram.
pub(crate) fn key_of(d: &Dg) -> String {
    if d.logical() {
        format!("{} logical", d.command_name())
    } else {
        format!(
            "{} 0x{:04X} {}",
            d.command_name(),
            d.ado,
            register_name(d.ado)
        )
    }
}

impl Report {
    /// Account one compared datagram: the request, the real and the simulated answer.
    pub(crate) fn add(
        &mut self,
        tally: &mut BTreeMap<String, usize>,
        at: (usize, usize),
        req: &Dg,
        real: &Dg,
        sim: &Dg,
    ) {
        let dc = req.carries_dc_time();
        let m = Mismatch::of(real, sim);
        let key = key_of(req);
        *tally.entry(key.clone()).or_default() += 1;
        self.datagrams += 1;
        if dc {
            self.dc_time += 1;
            if !(m.wkc || m.adp || m.irq) {
                self.dc_time_structure_equal += 1;
            }
        } else {
            self.plain += 1;
            if m.is_equal() {
                self.plain_equal += 1;
            }
        }
        if m.is_equal() {
            return;
        }
        self.differences.push(Difference {
            packet: at.0,
            datagram: at.1,
            command: req.command_name(),
            adp: req.adp,
            ado: req.ado,
            len: req.data.len(),
            dc_time: dc,
            mismatch: m,
            real_wkc: real.wkc,
            sim_wkc: sim.wkc,
            real_adp: real.adp,
            sim_adp: sim.adp,
            real_irq: real.irq,
            sim_irq: sim.irq,
            real_data: hex(&real.data),
            sim_data: hex(&sim.data),
            key,
        });
    }

    /// Compute the figure and the groups once every datagram was added.
    pub(crate) fn finish(&mut self, tally: &BTreeMap<String, usize>) {
        self.fidelity_percent = if self.plain == 0 {
            100.0
        } else {
            100.0 * self.plain_equal as f64 / self.plain as f64
        };
        let mut groups: BTreeMap<&str, Group> = BTreeMap::new();
        for d in &self.differences {
            let g = groups.entry(&d.key).or_insert_with(|| Group {
                key: d.key.clone(),
                dc_time: d.dc_time,
                differing: 0,
                compared: tally.get(&d.key).copied().unwrap_or(0),
                mismatch: Mismatch::default(),
                first: d.clone(),
            });
            g.differing += 1;
            g.mismatch = g.mismatch.or(d.mismatch);
            g.dc_time &= d.dc_time;
        }
        let mut v: Vec<Group> = groups.into_values().collect();
        v.sort_by(|a, b| {
            (a.dc_time, std::cmp::Reverse(a.differing), &a.key).cmp(&(
                b.dc_time,
                std::cmp::Reverse(b.differing),
                &b.key,
            ))
        });
        self.groups = v;
    }

    /// Differing datagrams without a DC time value.
    pub fn plain_differences(&self) -> impl Iterator<Item = &Difference> {
        self.differences.iter().filter(|d| !d.dc_time)
    }

    /// Every difference, one line each, in capture order.
    pub fn differences_text(&self) -> String {
        let mut s = String::new();
        for d in &self.differences {
            s.push_str(&format!(
                "packet {:>6} #{} {:<40} adp 0x{:04X}: {}: real wkc {} data {} | sim wkc {} data {}{}\n",
                d.packet,
                d.datagram,
                d.key,
                d.adp,
                d.mismatch.describe(),
                d.real_wkc,
                d.real_data,
                d.sim_wkc,
                d.sim_data,
                if d.dc_time { " (DC time)" } else { "" }
            ));
        }
        s
    }
}

impl fmt::Display for Report {
    /// The human report: counts, the figure, then one line per group with its first example.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "frames: {} ({} requests, {} answered in the capture, {} unanswered, {} skipped)",
            self.packets, self.requests, self.answered, self.unanswered, self.skipped
        )?;
        if self.sim_lost > 0 || self.orphan_answers > 0 {
            writeln!(
                f,
                "not returned by the simulator: {}; answers without request: {}",
                self.sim_lost, self.orphan_answers
            )?;
        }
        writeln!(
            f,
            "fidelity: {:.2} % ({} of {} datagrams without DC time values answered as the real devices did)",
            self.fidelity_percent, self.plain_equal, self.plain
        )?;
        writeln!(
            f,
            "DC time values (counted apart): {} datagrams, {} with the same WKC, ADP and IRQ",
            self.dc_time, self.dc_time_structure_equal
        )?;
        if self.groups.is_empty() {
            return writeln!(f, "no differences");
        }
        writeln!(f, "differences by command and register:")?;
        for g in &self.groups {
            let d = &g.first;
            writeln!(
                f,
                "  {:<44} {:>5} of {:<5} {}{}",
                g.key,
                g.differing,
                g.compared,
                g.mismatch.describe(),
                if g.dc_time { " (DC time)" } else { "" }
            )?;
            writeln!(
                f,
                "      e.g. packet {} adp 0x{:04X}: real wkc {} data {} | sim wkc {} data {}{}{}",
                d.packet,
                d.adp,
                d.real_wkc,
                d.real_data,
                d.sim_wkc,
                d.sim_data,
                if d.mismatch.adp {
                    format!(" | adp real 0x{:04X} sim 0x{:04X}", d.real_adp, d.sim_adp)
                } else {
                    String::new()
                },
                if d.mismatch.irq {
                    format!(" | irq real 0x{:04X} sim 0x{:04X}", d.real_irq, d.sim_irq)
                } else {
                    String::new()
                },
            )?;
        }
        Ok(())
    }
}
