//! The ENI reader (EtherCAT Network Information, ETG.2100: `EtherCATConfig` files written by
//! TwinCAT, EC-Engineer and similar tools).
//!
//! Like the ESI reader, it walks a `roxmltree` DOM once into an owned model ([`Eni`] → master,
//! [`Slave`]s, [`Cyclic`] frames, [`ProcessImage`]) and drops the DOM. Numbers may be `#x..`,
//! `0x..` or decimal; data is hex in wire order. Nothing is dropped silently: a second walk
//! compares every element path with the paths this reader understands and records each one it
//! does not, once, in [`Eni::notes`]. Blocks kept for later (a slave's `SoE`/`EoE` mailbox
//! settings) are stored as raw XML text.

mod cmd;
mod image;
mod known;
mod slave;
mod write;

pub use cmd::{masked_match, CoeInitCmd, InitCmd, Transition, Validate};
pub use image::{Cyclic, CyclicCmd, CyclicFrame, Image, ProcessImage, Variable};
pub use slave::{
    BitRange, EniSm, Identity, IdentityChecks, Mailbox, MailboxArea, PreviousPort, ProcessData,
    Slave, SlaveDc,
};

pub(crate) use crate::esi::xml;

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use xml::{child, child_text, children, Ctx};

/// Master settings (`Config/Master`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Master {
    /// Name.
    pub name: String,
    /// Destination MAC (6 bytes), if given.
    pub destination: Option<Vec<u8>>,
    /// Source MAC, if given.
    pub source: Option<Vec<u8>>,
    /// EtherType bytes as written (`a488`).
    pub ether_type: Option<Vec<u8>>,
    /// Logical area of the mapped mailbox-state bits: (start address, count).
    pub mailbox_states: Option<(u32, u32)>,
    /// EoE settings: (MaxPorts, MaxFrames, MaxMACs).
    pub eoe: Option<(u32, u32, u32)>,
    /// Master-level init commands.
    pub init_cmds: Vec<InitCmd>,
}

/// A parsed ENI file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Eni {
    /// Where it was read from.
    pub path: Option<PathBuf>,
    /// `Version` attribute of the root.
    pub version: Option<String>,
    /// Master settings and init commands.
    pub master: Master,
    /// Slaves in bus order.
    pub slaves: Vec<Slave>,
    /// Cyclic tasks and their frames.
    pub cyclic: Vec<Cyclic>,
    /// Named variables of the process image.
    pub process_image: ProcessImage,
    notes: Vec<String>,
}

impl Eni {
    /// Read and parse an ENI file.
    pub fn from_path(path: &Path) -> Result<Eni> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let text = crate::esi::decode(&bytes);
        let mut e = Self::parse_str(&text, &path.display().to_string())?;
        e.path = Some(path.to_path_buf());
        Ok(e)
    }

    /// Parse ENI text; `file` names the source in error messages.
    pub fn parse_str(text: &str, file: &str) -> Result<Eni> {
        let doc = roxmltree::Document::parse(text).map_err(|e| {
            let pos = e.pos();
            let s = e.to_string();
            let message = match s.rfind(" at ") {
                Some(i) if s[i + 4..].contains(':') => s[..i].to_string(),
                _ => s,
            };
            Error::Xml {
                file: file.to_string(),
                line: pos.row,
                column: pos.col,
                message,
            }
        })?;
        let cx = Ctx::new(&doc, file);
        let root = doc.root_element();
        if root.tag_name().name() != "EtherCATConfig" {
            return Err(cx.invalid(
                root,
                format!(
                    "expected an ENI file (root element <EtherCATConfig>), found <{}>",
                    root.tag_name().name()
                ),
            ));
        }
        let config = child(root, "Config")
            .ok_or_else(|| cx.invalid(root, "<EtherCATConfig>: expected a <Config> child"))?;
        let mut eni = Eni {
            version: root.attribute("Version").map(str::to_string),
            ..Default::default()
        };
        if let Some(m) = child(config, "Master") {
            eni.master = parse_master(&cx, m)?;
        }
        for s in children(config, "Slave") {
            eni.slaves.push(slave::parse_slave(&cx, s)?);
        }
        for c in children(config, "Cyclic") {
            eni.cyclic.push(image::parse_cyclic(&cx, c)?);
        }
        if let Some(p) = child(config, "ProcessImage") {
            eni.process_image = image::parse_process_image(&cx, p)?;
        }
        eni.notes = known::unknown_elements(root);
        Ok(eni)
    }

    /// The name used in messages: the path, or `<input>`.
    pub fn file_name(&self) -> String {
        self.path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "<input>".into())
    }

    /// Elements this reader does not handle, each named once with how often it occurs.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Every cyclic command of every task and frame, in order.
    pub fn cyclic_cmds(&self) -> impl Iterator<Item = &CyclicCmd> {
        self.cyclic
            .iter()
            .flat_map(|c| &c.frames)
            .flat_map(|f| &f.cmds)
    }
}

fn hex_child(
    cx: &Ctx<'_, '_>,
    node: roxmltree::Node<'_, '_>,
    name: &str,
) -> Result<Option<Vec<u8>>> {
    child(node, name).map(|n| cx.hex(n)).transpose()
}

fn parse_master(cx: &Ctx<'_, '_>, node: roxmltree::Node<'_, '_>) -> Result<Master> {
    let mut m = Master::default();
    if let Some(info) = child(node, "Info") {
        m.name = child_text(info, "Name").unwrap_or("").to_string();
        m.destination = hex_child(cx, info, "Destination")?;
        m.source = hex_child(cx, info, "Source")?;
        m.ether_type = hex_child(cx, info, "EtherType")?;
    }
    let u32_of = |n: roxmltree::Node<'_, '_>, name: &str| -> Result<u32> {
        match child(n, name) {
            Some(c) => {
                let v = cx.int(c)?;
                cx.fit::<u32>(c, v)
            }
            None => Ok(0),
        }
    };
    if let Some(ms) = child(node, "MailboxStates") {
        m.mailbox_states = Some((u32_of(ms, "StartAddr")?, u32_of(ms, "Count")?));
    }
    if let Some(e) = child(node, "EoE") {
        m.eoe = Some((
            u32_of(e, "MaxPorts")?,
            u32_of(e, "MaxFrames")?,
            u32_of(e, "MaxMACs")?,
        ));
    }
    if let Some(cmds) = child(node, "InitCmds") {
        for c in children(cmds, "InitCmd") {
            m.init_cmds.push(cmd::parse_init_cmd(cx, c)?);
        }
    }
    Ok(m)
}
