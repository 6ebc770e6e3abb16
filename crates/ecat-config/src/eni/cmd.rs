//! ENI commands: EtherCAT init commands (master and per slave), CoE init commands and the
//! state transitions they belong to.
//!
//! An init command is one datagram the configuration tool wants sent when a SubDevice goes
//! through a transition (`IP`, `PS`, ...): command code 0–14, address (`Adp`/`Ado`, or `Addr`
//! = `Ado << 16 | Adp`), data (or just a length, zeros), the working counter to expect, how
//! often to retry, and optionally a `Validate` block: read until `data & mask == expected &
//! mask` or the timeout passes. CoE init commands are SDO transfers; the ENI's `Ccs` field is
//! ambiguous across tools (1 or 2 for a download), so a command with data is a download and
//! one without is an upload, whatever `Ccs` says.

use crate::eni::xml::{child, child_text, children, Ctx};
use crate::error::Result;
use roxmltree::Node;

/// A state transition as the ENI writes it (`IP` = INIT → PREOP, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transition {
    /// INIT → PREOP.
    IP,
    /// PREOP → SAFEOP.
    PS,
    /// PREOP → INIT.
    PI,
    /// SAFEOP → PREOP.
    SP,
    /// SAFEOP → OP.
    SO,
    /// SAFEOP → INIT.
    SI,
    /// OP → SAFEOP.
    OS,
    /// OP → PREOP.
    OP,
    /// OP → INIT.
    OI,
    /// INIT → BOOT.
    IB,
    /// BOOT → INIT.
    BI,
    /// INIT → INIT.
    II,
    /// PREOP → PREOP.
    PP,
    /// SAFEOP → SAFEOP.
    SS,
}

impl Transition {
    /// Every transition, in the order of the ENI bit mask (IP = bit 0 ...).
    pub const ALL: [Transition; 14] = [
        Transition::IP,
        Transition::PS,
        Transition::PI,
        Transition::SP,
        Transition::SO,
        Transition::SI,
        Transition::OS,
        Transition::OP,
        Transition::OI,
        Transition::IB,
        Transition::BI,
        Transition::II,
        Transition::PP,
        Transition::SS,
    ];

    /// The two-letter code (`IP`).
    pub fn code(self) -> &'static str {
        match self {
            Transition::IP => "IP",
            Transition::PS => "PS",
            Transition::PI => "PI",
            Transition::SP => "SP",
            Transition::SO => "SO",
            Transition::SI => "SI",
            Transition::OS => "OS",
            Transition::OP => "OP",
            Transition::OI => "OI",
            Transition::IB => "IB",
            Transition::BI => "BI",
            Transition::II => "II",
            Transition::PP => "PP",
            Transition::SS => "SS",
        }
    }

    /// Parse a two-letter code (any case).
    pub fn parse(s: &str) -> Option<Transition> {
        let s = s.trim();
        Transition::ALL
            .into_iter()
            .find(|t| t.code().eq_ignore_ascii_case(s))
    }

    /// The AL state codes (1 INIT, 2 PREOP, 3 BOOT, 4 SAFEOP, 8 OP) it goes from and to.
    pub fn states(self) -> (u8, u8) {
        let st = |c: u8| match c {
            b'I' => 1,
            b'P' => 2,
            b'B' => 3,
            b'S' => 4,
            _ => 8,
        };
        let c = self.code().as_bytes();
        (st(c[0]), st(c[1]))
    }
}

impl std::fmt::Display for Transition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = |s: u8| match s {
            1 => "INIT",
            2 => "PREOP",
            3 => "BOOT",
            4 => "SAFEOP",
            _ => "OP",
        };
        let (a, b) = self.states();
        write!(f, "{} ({}→{})", self.code(), name(a), name(b))
    }
}

/// The `Validate` block of an init command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validate {
    /// Expected data.
    pub data: Vec<u8>,
    /// Bits that matter (`None` = all).
    pub mask: Option<Vec<u8>>,
    /// How long to keep reading until it matches (ms).
    pub timeout_ms: u32,
}

impl Validate {
    /// True if `read` matches the expected data under the mask.
    pub fn matches(&self, read: &[u8]) -> bool {
        masked_match(&self.data, self.mask.as_deref(), read)
    }
}

/// True if `read` holds `want` in the bits `mask` selects (`None` or a short mask: all bits
/// of the bytes it does not cover); a `read` shorter than `want` does not match.
pub fn masked_match(want: &[u8], mask: Option<&[u8]>, read: &[u8]) -> bool {
    want.iter().enumerate().all(|(i, &w)| {
        let m = mask.map_or(0xFF, |m| m.get(i).copied().unwrap_or(0xFF));
        read.get(i).is_some_and(|&got| got & m == w & m)
    })
}

/// One EtherCAT init command (master or slave level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitCmd {
    /// Transitions it belongs to.
    pub transitions: Vec<Transition>,
    /// Send before the slave-level commands of the transition (master commands).
    pub before_slave: bool,
    /// Comment (what the tool says it does).
    pub comment: String,
    /// `frame` or `cycle` (`Requires`), if given.
    pub requires: Option<String>,
    /// Datagram command code (0 NOP .. 14 FRMW).
    pub cmd: u8,
    /// ADP (position, station address or low word of `Addr`).
    pub adp: u16,
    /// ADO (register, or high word of `Addr`).
    pub ado: u16,
    /// Data to send (`Data`, or `DataLength` zeros).
    pub data: Vec<u8>,
    /// Expected working counter (`Cnt`), if checked.
    pub cnt: Option<u16>,
    /// Retries after a wrong working counter.
    pub retries: u32,
    /// Read-back check.
    pub validate: Option<Validate>,
    /// Timeout (ms), if given outside `Validate`.
    pub timeout_ms: Option<u32>,
}

impl InitCmd {
    /// The 32-bit logical address (`Ado << 16 | Adp`) for LRD/LWR/LRW.
    pub fn logical(&self) -> u32 {
        (self.ado as u32) << 16 | self.adp as u32
    }

    /// True if it belongs to `t`.
    pub fn has(&self, t: Transition) -> bool {
        self.transitions.contains(&t)
    }

    /// The transitions as `IP,PS`.
    pub fn transition_list(&self) -> String {
        let v: Vec<&str> = self.transitions.iter().map(|t| t.code()).collect();
        v.join(",")
    }
}

/// A CoE init command (an SDO transfer at a transition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoeInitCmd {
    /// Transitions it belongs to.
    pub transitions: Vec<Transition>,
    /// Comment.
    pub comment: String,
    /// Timeout (ms; 0 = the master's default).
    pub timeout_ms: u32,
    /// `Ccs` as written (ambiguous: see [`CoeInitCmd::is_download`]).
    pub ccs: u8,
    /// Complete access (`CompleteAccess` attribute).
    pub complete_access: bool,
    /// Fixed (generated from the PDO configuration; `Fixed` attribute).
    pub fixed: bool,
    /// Object index.
    pub index: u16,
    /// Subindex.
    pub subindex: u8,
    /// Data (empty for an upload).
    pub data: Vec<u8>,
    /// Disabled: listed but not to be sent.
    pub disabled: bool,
}

impl CoeInitCmd {
    /// A download (write) when it carries data, else an upload (the robust reading of the
    /// `Ccs` conflict between tools).
    pub fn is_download(&self) -> bool {
        !self.data.is_empty()
    }
}

pub(crate) fn transitions(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<Vec<Transition>> {
    let mut out = Vec::new();
    for t in children(node, "Transition") {
        let s = crate::eni::xml::text(t);
        out.push(Transition::parse(s).ok_or_else(|| {
            cx.invalid(
                t,
                format!("<Transition>: expected a code such as IP, PS, SO, SI; found \"{s}\""),
            )
        })?);
    }
    Ok(out)
}

fn num<T: TryFrom<i64>>(cx: &Ctx<'_, '_>, node: Node<'_, '_>, name: &str) -> Result<Option<T>> {
    match child(node, name) {
        None => Ok(None),
        Some(c) => {
            let v = cx.int(c)?;
            cx.fit::<T>(c, v).map(Some)
        }
    }
}

/// Read an `InitCmd` of the master or a slave.
pub(crate) fn parse_init_cmd(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<InitCmd> {
    let cmd: u8 = num(cx, node, "Cmd")?
        .ok_or_else(|| cx.invalid(node, "<InitCmd>: expected a <Cmd> child (0..14)"))?;
    if cmd > 14 {
        return Err(cx.invalid(
            node,
            format!("<InitCmd>: <Cmd> must be a datagram code 0..14, found {cmd}"),
        ));
    }
    let (adp, ado) = match num::<u32>(cx, node, "Addr")? {
        Some(a) => (a as u16, (a >> 16) as u16),
        None => (
            num(cx, node, "Adp")?.unwrap_or(0),
            num(cx, node, "Ado")?.unwrap_or(0),
        ),
    };
    let data = match child(node, "Data") {
        Some(d) => cx.hex(d)?,
        None => vec![0; num::<u16>(cx, node, "DataLength")?.unwrap_or(0) as usize],
    };
    let validate = match child(node, "Validate") {
        Some(v) => Some(Validate {
            data: match child(v, "Data") {
                Some(d) => cx.hex(d)?,
                None => return Err(cx.invalid(v, "<Validate>: expected a <Data> child")),
            },
            mask: child(v, "DataMask").map(|m| cx.hex(m)).transpose()?,
            timeout_ms: num(cx, v, "Timeout")?.unwrap_or(0),
        }),
        None => None,
    };
    Ok(InitCmd {
        transitions: transitions(cx, node)?,
        before_slave: child_text(node, "BeforeSlave").is_some_and(crate::eni::xml::parse_bool),
        comment: child_text(node, "Comment").unwrap_or("").to_string(),
        requires: child_text(node, "Requires").map(str::to_string),
        cmd,
        adp,
        ado,
        data,
        cnt: num(cx, node, "Cnt")?,
        retries: num(cx, node, "Retries")?.unwrap_or(0),
        validate,
        timeout_ms: num(cx, node, "Timeout")?,
    })
}

/// Read a CoE `InitCmd`.
pub(crate) fn parse_coe_cmd(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<CoeInitCmd> {
    let index = num::<u16>(cx, node, "Index")?
        .ok_or_else(|| cx.invalid(node, "<InitCmd>: a CoE init command needs an <Index>"))?;
    let data = match child(node, "Data") {
        Some(d) => cx.hex(d)?,
        None => Vec::new(),
    };
    Ok(CoeInitCmd {
        transitions: transitions(cx, node)?,
        comment: child_text(node, "Comment").unwrap_or("").to_string(),
        timeout_ms: num(cx, node, "Timeout")?.unwrap_or(0),
        ccs: num(cx, node, "Ccs")?.unwrap_or(0),
        complete_access: crate::eni::xml::bool_attr(node, "CompleteAccess"),
        fixed: crate::eni::xml::bool_attr(node, "Fixed"),
        index,
        subindex: num(cx, node, "SubIndex")?.unwrap_or(0),
        data,
        disabled: child_text(node, "Disabled").is_some_and(crate::eni::xml::parse_bool),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transitions_and_validate() {
        assert_eq!(Transition::parse("ps"), Some(Transition::PS));
        assert_eq!(Transition::PS.states(), (2, 4));
        assert_eq!(Transition::OI.states(), (8, 1));
        assert_eq!(Transition::parse("XY"), None);
        let v = Validate {
            data: vec![0x02, 0],
            mask: Some(vec![0x0f, 0]),
            timeout_ms: 0,
        };
        assert!(v.matches(&[0x12, 0x55]));
        assert!(!v.matches(&[0x04, 0]));
        assert!(!v.matches(&[]));
    }
}
