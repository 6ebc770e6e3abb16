//! The ESI reader (EtherCAT SubDevice Information, ETG.2000).
//!
//! `roxmltree` builds a read-only DOM of the whole file (fast, positions for every node), and
//! we walk it once into an owned model ([`EsiFile`] → [`Device`] → SMs, FMMUs, PDOs,
//! dictionary, ...), so the DOM and the source text are dropped after parsing. Elements we do
//! not model (`ChannelInfo` details, `Slots`/`Modules`, `VendorSpecific`, images, URLs ...)
//! are skipped, never refused. Files are read as UTF-8, or as ISO 8859-1 when they declare it
//! or are not valid UTF-8 (several vendors write Latin-1).

mod datatype;
mod device;
mod dictionary;
pub(crate) mod pdo;
mod query;
pub(crate) mod xml;

pub use datatype::{base_type_code, is_signed};
pub use device::{
    pick_text, CoeInfo, DcOpMode, Device, EepromInfo, EscInfo, Fmmu, FmmuKind, Group, LocalText,
    Mailbox, PortKind, Sm, SmKind, SyncUnit,
};
pub use dictionary::{
    Access, DataType, DataTypeSubItem, Dictionary, Flags, Object, ObjectKind, PdoMapping, States,
    SubItem,
};
pub use pdo::{Pdo, PdoDir, PdoEntry};
pub use xml::{parse_hex_bytes, parse_int};

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use xml::{child, child_text, children, Ctx};

/// The vendor of an ESI file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vendor {
    /// Vendor id.
    pub id: u32,
    /// Name.
    pub name: String,
}

/// A parsed ESI file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EsiFile {
    /// Where it was read from (`None` for text parsed directly).
    pub path: Option<PathBuf>,
    /// The vendor.
    pub vendor: Vendor,
    /// Device groups.
    pub groups: Vec<Group>,
    /// Devices in file order (one per type and revision).
    pub devices: Vec<Device>,
}

impl EsiFile {
    /// Read and parse an ESI file.
    pub fn from_path(path: &Path) -> Result<EsiFile> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut f = Self::parse_bytes(&bytes, &path.display().to_string())?;
        f.path = Some(path.to_path_buf());
        Ok(f)
    }

    /// Parse ESI bytes (UTF-8 or ISO 8859-1); `file` names the source in error messages.
    pub fn parse_bytes(bytes: &[u8], file: &str) -> Result<EsiFile> {
        let text = decode(bytes);
        Self::parse_str(&text, file)
    }

    /// Parse ESI text; `file` names the source in error messages.
    pub fn parse_str(text: &str, file: &str) -> Result<EsiFile> {
        let doc = roxmltree::Document::parse(text).map_err(|e| {
            let pos = e.pos();
            Error::Xml {
                file: file.to_string(),
                line: pos.row,
                column: pos.col,
                message: xml_message(&e),
            }
        })?;
        let cx = Ctx::new(&doc, file);
        let root = doc.root_element();
        if root.tag_name().name() != "EtherCATInfo" {
            return Err(cx.invalid(
                root,
                format!(
                    "expected an ESI file (root element <EtherCATInfo>), found <{}>",
                    root.tag_name().name()
                ),
            ));
        }
        let vendor = match child(root, "Vendor") {
            Some(v) => Vendor {
                id: cx.child_int(v, "Id")?.unwrap_or(0) as u32,
                name: child_text(v, "Name").unwrap_or("").to_string(),
            },
            None => Vendor::default(),
        };
        let mut groups = Vec::new();
        let mut devices = Vec::new();
        if let Some(d) = child(root, "Descriptions") {
            if let Some(gs) = child(d, "Groups") {
                groups.extend(children(gs, "Group").map(device::parse_group));
            }
            if let Some(ds) = child(d, "Devices") {
                for n in children(ds, "Device") {
                    devices.push(device::parse_device(&cx, n, vendor.id, &groups)?);
                }
            }
        }
        Ok(EsiFile {
            path: None,
            vendor,
            groups,
            devices,
        })
    }

    /// The name used in messages: the path, or `<input>`.
    pub fn file_name(&self) -> String {
        self.path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "<input>".into())
    }

    /// The device of type `type_name` (case-insensitive) at `revision`, or at its highest
    /// revision when `revision` is `None`. The error lists the types the file has.
    pub fn device(&self, type_name: &str, revision: Option<u32>) -> Result<&Device> {
        self.devices
            .iter()
            .filter(|d| d.type_name.eq_ignore_ascii_case(type_name))
            .filter(|d| revision.is_none_or(|r| r == d.revision))
            .max_by_key(|d| d.revision)
            .ok_or_else(|| Error::NoSuchType {
                file: self.file_name(),
                wanted: match revision {
                    Some(r) => format!("{type_name} revision 0x{r:08x}"),
                    None => type_name.to_string(),
                },
                available: self.type_list(),
            })
    }

    /// "EL2004 (0x00000000, 0x00100000, ...)" for every type in the file, in file order.
    pub fn type_list(&self) -> Vec<String> {
        let mut out: Vec<(String, Vec<u32>)> = Vec::new();
        for d in &self.devices {
            match out.iter_mut().find(|(t, _)| *t == d.type_name) {
                Some((_, revs)) => revs.push(d.revision),
                None => out.push((d.type_name.clone(), vec![d.revision])),
            }
        }
        out.into_iter()
            .map(|(t, revs)| {
                let revs: Vec<String> = revs.iter().map(|r| format!("0x{r:08x}")).collect();
                format!("{t} (rev {})", revs.join(", "))
            })
            .collect()
    }
}

/// The XML parser's message without its trailing position (we print it in front).
fn xml_message(e: &roxmltree::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at ") {
        Some(i) if s[i + 4..].contains(':') => s[..i].to_string(),
        _ => s,
    }
}

/// Bytes to text: UTF-8 unless the declaration says ISO 8859-1/Latin-1 or the bytes are not
/// UTF-8, in which case each byte is the code point of the same value.
pub fn decode(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let head = &bytes[..bytes.len().min(200)];
    let head = String::from_utf8_lossy(head).to_ascii_lowercase();
    let decl_latin1 = head.starts_with("<?xml")
        && head
            .split("?>")
            .next()
            .is_some_and(|d| d.contains("8859-1") || d.contains("latin") || d.contains("1252"));
    if !decl_latin1 {
        if let Ok(s) = std::str::from_utf8(bytes) {
            return std::borrow::Cow::Borrowed(s);
        }
    }
    std::borrow::Cow::Owned(bytes.iter().map(|&b| b as char).collect())
}
