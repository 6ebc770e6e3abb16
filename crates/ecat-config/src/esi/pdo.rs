//! PDOs (`RxPdo`/`TxPdo`) and their entries.
//!
//! A PDO is assigned to a SyncManager by default when it carries an `Sm` attribute; `Fixed`
//! means its mapping cannot be changed, `Mandatory` that it must stay assigned, `Exclude`
//! lists PDOs that cannot be assigned together with it. An entry with index 0 is a gap
//! (padding) of `BitLen` bits and has no object behind it.

use super::datatype::{base_type_bits, base_type_code};
use super::lenient;
use super::xml::{child, child_text, children, Ctx};
use crate::error::Result;
use roxmltree::Node;

/// Direction of a PDO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PdoDir {
    /// RxPDO: outputs, MainDevice → SubDevice (0x1600..).
    Rx,
    /// TxPDO: inputs, SubDevice → MainDevice (0x1A00..).
    Tx,
}

/// One PDO of a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdo {
    /// RxPDO or TxPDO.
    pub dir: PdoDir,
    /// PDO index (0x1600.. / 0x1A00..).
    pub index: u16,
    /// Name (the first `Name` element).
    pub name: String,
    /// SyncManager the PDO is assigned to by default (`Sm` attribute); `None` = not assigned.
    pub sm: Option<u8>,
    /// Mapping cannot be changed (`Fixed`).
    pub fixed: bool,
    /// Must be assigned (`Mandatory`).
    pub mandatory: bool,
    /// Virtual PDO (`Virtual`).
    pub virtual_pdo: bool,
    /// PDOs that cannot be assigned together with this one (`Exclude`).
    pub excludes: Vec<u16>,
    /// Mapped entries in order.
    pub entries: Vec<PdoEntry>,
}

impl Pdo {
    /// True if assigned by default (has an `Sm` attribute).
    pub fn assigned_by_default(&self) -> bool {
        self.sm.is_some()
    }

    /// Sum of the entries' bit lengths.
    pub fn bit_len(&self) -> u32 {
        self.entries.iter().map(|e| e.bit_len as u32).sum()
    }
}

/// One entry of a PDO: a mapped object, or a gap when `index` is 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdoEntry {
    /// Object index (0 = gap).
    pub index: u16,
    /// Subindex (0 when absent).
    pub subindex: u8,
    /// Length in bits.
    pub bit_len: u16,
    /// Name ("" when absent).
    pub name: String,
    /// Data type name as written (`BOOL`, `UINT`, `BIT2`, ...), if any.
    pub data_type: Option<String>,
}

impl PdoEntry {
    /// True for a padding gap (index 0).
    pub fn is_gap(&self) -> bool {
        self.index == 0
    }

    /// The CoE base data type code of [`data_type`](Self::data_type) (0 when unknown or a
    /// gap).
    pub fn data_type_code(&self) -> u16 {
        self.data_type
            .as_deref()
            .and_then(base_type_code)
            .unwrap_or(0)
    }
}

/// Read one `RxPdo`/`TxPdo` element.
pub(crate) fn parse_pdo(cx: &Ctx<'_, '_>, node: Node<'_, '_>, dir: PdoDir) -> Result<Pdo> {
    let index_node = child(node, "Index").ok_or_else(|| {
        cx.invalid(
            node,
            format!("<{}>: expected an <Index> child", node.tag_name().name()),
        )
    })?;
    let index = cx.int(index_node)?;
    let index = cx.fit::<u16>(index_node, index)?;
    let sm = cx.attr_fit::<u8>(node, "Sm")?;
    let mut excludes = Vec::new();
    for e in children(node, "Exclude") {
        let v = cx.int(e)?;
        excludes.push(cx.fit::<u16>(e, v)?);
    }
    let mut entries = Vec::new();
    for e in children(node, "Entry") {
        entries.push(parse_entry(cx, e)?);
    }
    Ok(Pdo {
        dir,
        index,
        name: child_text(node, "Name").unwrap_or("").to_string(),
        sm,
        fixed: cx.bool_attr(node, "Fixed"),
        mandatory: cx.bool_attr(node, "Mandatory"),
        virtual_pdo: cx.bool_attr(node, "Virtual"),
        excludes,
        entries,
    })
}

fn parse_entry(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<PdoEntry> {
    let index = cx.child_fit::<u16>(node, "Index")?.unwrap_or(0);
    let subindex = cx.child_fit::<u8>(node, "SubIndex")?.unwrap_or(0);
    let data_type = child(node, "DataType").and_then(|n| data_type(cx, n));
    let bit_len = match cx.child_fit::<u16>(node, "BitLen")? {
        Some(b) => b,
        None => match data_type.as_deref().and_then(base_type_bits) {
            Some(b) => {
                let t = data_type.as_deref().unwrap_or("");
                cx.note(
                    node.range().start,
                    format!("<Entry> #x{index:04x}:{subindex} without <BitLen>: read as {b}, the size of its DataType {t}"),
                );
                b
            }
            None => {
                return Err(cx.invalid(
                    node,
                    "<Entry>: expected a <BitLen> child (or a <DataType> of known size); add <BitLen> with the entry's size in bits",
                ))
            }
        },
    };
    Ok(PdoEntry {
        index,
        subindex,
        bit_len,
        name: child_text(node, "Name").unwrap_or("").to_string(),
        data_type,
    })
}

/// The text of a `DataType` element; a base type written with other case or spacing, or by
/// another tool's name (`UINT16`), is read as its ETG.2000 name with a note.
pub(crate) fn data_type(cx: &Ctx<'_, '_>, n: Node<'_, '_>) -> Option<String> {
    let raw = super::xml::text(n);
    if raw.is_empty() {
        return None;
    }
    if base_type_code(raw).is_none() {
        if let Some(t) = lenient::data_type(raw).filter(|t| base_type_code(t).is_some()) {
            cx.note(
                n.range().start,
                format!("<DataType>{raw}</DataType>: read as {t}"),
            );
            return Some(t);
        }
    }
    Some(raw.to_string())
}

/// The `RxPdo`s then `TxPdo`s of a device. A PDO written twice, identical, counts once
/// with a note (kept twice it would double its SyncManager's size); two different PDOs with
/// one index are both kept, as written (Beckhoff's EL2252 has a virtual and a real 0x1602).
pub(crate) fn parse_pdos(cx: &Ctx<'_, '_>, device: Node<'_, '_>) -> Result<Vec<Pdo>> {
    let mut pdos: Vec<Pdo> = Vec::new();
    for (tag, dir) in [("RxPdo", PdoDir::Rx), ("TxPdo", PdoDir::Tx)] {
        for n in children(device, tag) {
            let p = parse_pdo(cx, n, dir)?;
            if pdos.contains(&p) {
                let what = format!(
                    "<{tag}> #x{:04x} is written twice, identical; read once",
                    p.index
                );
                cx.note(n.range().start, what);
            } else {
                pdos.push(p);
            }
        }
    }
    Ok(pdos)
}
