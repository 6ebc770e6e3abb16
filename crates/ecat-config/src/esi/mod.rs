//! The ESI reader (EtherCAT SubDevice Information, ETG.2000).
//!
//! `roxmltree` builds a read-only DOM of the whole file (fast, positions for every node), and
//! we walk it once into an owned model ([`EsiFile`] → [`Device`] → SMs, FMMUs, PDOs,
//! dictionary, ...), so the DOM and the source text are dropped after parsing. Elements we do
//! not model (`ChannelInfo` details, `Slots`/`Modules`, `VendorSpecific`, images, URLs ...)
//! are skipped, never refused. Files are read as UTF-8 or UTF-16, or as ISO 8859-1 /
//! Windows-1252 when they declare it or are not valid UTF-8 (several vendors write Latin-1).
//!
//! Vendors' deviations from ETG.2000 that their tools accept are read with a [`Warning`] each
//! (`lenient.rs`); a device whose description cannot be read is left out with its reason
//! ([`BrokenDevice`]) and the file's other devices load. Asking for a left-out device gives
//! its reason, not "no such type".

mod datatype;
mod device;
mod dictionary;
mod lenient;
pub(crate) mod pdo;
mod query;
pub(crate) mod xml;

pub use datatype::{base_type_bits, base_type_code, is_signed};
pub use device::{
    pick_text, CoeInfo, DcOpMode, Device, EepromInfo, EscInfo, Fmmu, FmmuKind, Group, LocalText,
    Mailbox, PortKind, Sm, SmKind, SyncUnit,
};
pub use dictionary::{
    Access, DataType, DataTypeSubItem, Dictionary, Flags, Object, ObjectKind, PdoMapping, States,
    SubItem,
};
pub use lenient::{set_warning_handler, Warning};
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
    /// Devices whose description could not be read, left out of `devices`.
    pub broken: Vec<BrokenDevice>,
    /// What deviated from ETG.2000 and was read anyway, in file order.
    pub warnings: Vec<Warning>,
}

/// A device left out of its file because its description cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenDevice {
    /// The text of its `Type` ("" when even that is missing).
    pub type_name: String,
    /// Its product code, where readable.
    pub product_code: Option<u32>,
    /// Its revision, where readable.
    pub revision: Option<u32>,
    /// The file (as named to the reader).
    pub file: String,
    /// 1-based line of the fault.
    pub line: u32,
    /// 1-based column of the fault.
    pub column: u32,
    /// What is wrong there.
    pub message: String,
}

impl BrokenDevice {
    /// "EL2004 rev 0x00100000" (or "the device at line N" when it has no type).
    pub fn label(&self) -> String {
        match (self.type_name.is_empty(), self.revision) {
            (true, _) => "a device without <Type>".into(),
            (false, Some(r)) => format!("{} rev 0x{r:08x}", self.type_name),
            (false, None) => self.type_name.clone(),
        }
    }

    /// What is wrong and what follows, without the position.
    fn sentence(&self) -> String {
        format!(
            "{}; device {} is left out until this is corrected (the file's other devices load)",
            self.message,
            self.label()
        )
    }

    /// The fault as one sentence: where, what, and that the file's other devices load.
    pub fn to_error(&self) -> Error {
        Error::Invalid {
            file: self.file.clone(),
            line: self.line,
            column: self.column,
            message: self.sentence(),
        }
    }

    fn matches(&self, type_name: &str, revision: Option<u32>) -> bool {
        self.type_name.eq_ignore_ascii_case(type_name)
            && revision.is_none_or(|r| self.revision.is_none_or(|b| b == r))
    }
}

impl EsiFile {
    /// Read and parse an ESI file; its warnings (and left-out devices) are reported once per
    /// process (see [`set_warning_handler`]).
    pub fn from_path(path: &Path) -> Result<EsiFile> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut f = Self::parse_bytes(&bytes, &path.display().to_string())?;
        f.path = Some(path.to_path_buf());
        lenient::report(&f.warnings);
        Ok(f)
    }

    /// Parse ESI bytes (UTF-8, UTF-16 or ISO 8859-1/Windows-1252); `file` names the source
    /// in messages.
    pub fn parse_bytes(bytes: &[u8], file: &str) -> Result<EsiFile> {
        let (text, note) = lenient::decode(bytes);
        let mut f = Self::parse_str(&text, file)?;
        if let Some(message) = note {
            let w = Warning {
                file: file.to_string(),
                line: 1,
                column: 1,
                message,
            };
            f.warnings.insert(0, w);
        }
        Ok(f)
    }

    /// Parse ESI text; `file` names the source in messages.
    pub fn parse_str(text: &str, file: &str) -> Result<EsiFile> {
        let mut moved = None;
        let fixed;
        let mut text = text;
        if let Some((t, at)) = lenient::misplaced_declaration(text) {
            fixed = t;
            text = &fixed;
            moved = Some(at);
        }
        let opts = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        };
        let doc = roxmltree::Document::parse_with_options(text, opts).map_err(|e| {
            let pos = e.pos();
            Error::Xml {
                file: file.to_string(),
                line: pos.row,
                column: pos.col,
                message: xml_message(&e),
            }
        })?;
        let cx = Ctx::lenient(&doc, file);
        if let Some(at) = moved {
            cx.note(
                at,
                "the XML declaration must open the file; ignored here".into(),
            );
        }
        let root = doc.root_element();
        let infos: Vec<_> = match root.tag_name().name() {
            "EtherCATInfo" => vec![root],
            "EtherCATInfoList" => {
                let v: Vec<_> = children(root, "EtherCATInfo").collect();
                let n = v.len();
                cx.note(
                    root.range().start,
                    format!(
                        "<EtherCATInfoList> (IgH's `ethercat xml`): read as {n} ESI files in one"
                    ),
                );
                v
            }
            other => {
                return Err(cx.invalid(
                    root,
                    format!("expected an ESI file (root element <EtherCATInfo>), found <{other}>"),
                ))
            }
        };
        let mut f = EsiFile::default();
        for (k, info) in infos.into_iter().enumerate() {
            let vendor = match child(info, "Vendor") {
                Some(v) => Vendor {
                    id: cx.child_int(v, "Id")?.unwrap_or(0) as u32,
                    name: child_text(v, "Name").unwrap_or("").to_string(),
                },
                None => Vendor::default(),
            };
            let Some(d) = child(info, "Descriptions") else {
                continue;
            };
            let first_group = f.groups.len();
            if let Some(gs) = child(d, "Groups") {
                f.groups
                    .extend(children(gs, "Group").map(device::parse_group));
            }
            if let Some(ds) = child(d, "Devices") {
                for n in children(ds, "Device") {
                    match device::parse_device(&cx, n, vendor.id, &f.groups[first_group..]) {
                        Ok(dev) => f.devices.push(dev),
                        Err(e) => f.broken.push(broken(&cx, n, e)),
                    }
                }
            }
            if k == 0 {
                f.vendor = vendor;
            }
        }
        f.warnings = collect(cx.notes.take(), &f.broken);
        Ok(f)
    }

    /// The device of `product` code at `revision`, or at its highest revision when `revision`
    /// is `None`; a left-out device of that code gives its reason.
    pub fn device_by_product(&self, product: u32, revision: Option<u32>) -> Result<&Device> {
        self.devices
            .iter()
            .filter(|d| d.product_code == Some(product))
            .filter(|d| revision.is_none_or(|r| r == d.revision))
            .max_by_key(|d| d.revision)
            .ok_or_else(|| {
                match self.broken.iter().find(|b| {
                    b.product_code == Some(product)
                        && revision.is_none_or(|r| b.revision.is_none_or(|x| x == r))
                }) {
                    Some(b) => b.to_error(),
                    None => Error::NoSuchType {
                        file: self.file_name(),
                        wanted: match revision {
                            Some(r) => format!("product 0x{product:08x} revision 0x{r:08x}"),
                            None => format!("product 0x{product:08x}"),
                        },
                        available: self.type_list(),
                    },
                }
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
            .ok_or_else(
                || match self.broken.iter().find(|b| b.matches(type_name, revision)) {
                    Some(b) => b.to_error(),
                    None => Error::NoSuchType {
                        file: self.file_name(),
                        wanted: match revision {
                            Some(r) => format!("{type_name} revision 0x{r:08x}"),
                            None => type_name.to_string(),
                        },
                        available: self.type_list(),
                    },
                },
            )
    }

    /// The left-out device of type `type_name` (at `revision`), if there is one.
    pub fn broken_device(&self, type_name: &str, revision: Option<u32>) -> Option<&BrokenDevice> {
        self.broken.iter().find(|b| b.matches(type_name, revision))
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

/// Report a file the library skips because it cannot be read (once per process, as the
/// warnings).
pub(crate) fn report_unreadable(e: &Error) {
    let (file, line, column, message) = match e {
        Error::Xml {
            file,
            line,
            column,
            message,
        } => (
            file.clone(),
            *line,
            *column,
            format!("malformed XML: {message}"),
        ),
        Error::Invalid {
            file,
            line,
            column,
            message,
        } => (file.clone(), *line, *column, message.clone()),
        Error::Io { path, source } => (
            path.display().to_string(),
            1,
            1,
            format!("cannot read the ESI file: {source}"),
        ),
        e => ("<library>".into(), 1, 1, e.to_string()),
    };
    let message = format!("{message}; the file is skipped");
    lenient::report(&[Warning {
        file,
        line,
        column,
        message,
    }]);
}

/// A device that failed to parse, with what can still be read of its identity.
fn broken(cx: &Ctx<'_, '_>, node: roxmltree::Node<'_, '_>, e: Error) -> BrokenDevice {
    let ty = child(node, "Type");
    let attr = |name: &str| {
        ty.and_then(|t| t.attribute(name))
            .and_then(|v| parse_int(v).or(lenient::number(v).map(|n| n.0)))
            .map(|v| v as u32)
    };
    let (line, column, message) = match e {
        Error::Invalid {
            line,
            column,
            message,
            ..
        } => (line, column, message),
        e => {
            let (l, c) = cx.line_col(node);
            (l, c, e.to_string())
        }
    };
    BrokenDevice {
        type_name: ty.map(xml::text).unwrap_or("").to_string(),
        product_code: attr("ProductCode"),
        revision: attr("RevisionNo"),
        file: cx.file.to_string(),
        line,
        column,
        message,
    }
}

/// The notes in file order, each kind once at its first place ("and N more like it"), then
/// one warning per left-out device.
fn collect(notes: Vec<(String, Warning)>, broken: &[BrokenDevice]) -> Vec<Warning> {
    let mut out: Vec<(Warning, usize)> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for (kind, w) in notes {
        match seen.get(&kind) {
            Some(&i) => out[i].1 += 1,
            None => {
                seen.insert(kind, out.len());
                out.push((w, 0));
            }
        }
    }
    let mut v: Vec<Warning> = out
        .into_iter()
        .map(|(mut w, more)| {
            if more > 0 {
                w.message += &format!(" (and {more} more like it)");
            }
            w
        })
        .collect();
    v.sort_by_key(|w| (w.line, w.column));
    v.extend(broken.iter().map(|b| Warning {
        file: b.file.clone(),
        line: b.line,
        column: b.column,
        message: b.sentence(),
    }));
    v
}

/// Bytes to text: UTF-8 (or UTF-16 behind a byte-order mark) unless the declaration says ISO
/// 8859-1/Windows-1252 or the bytes are not UTF-8, in which case each byte is one character.
pub fn decode(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    lenient::decode(bytes).0
}
