//! Small helpers over `roxmltree` for reading ESI elements.
//!
//! ESI numbers come as `#x1A00` (hex, ETG style), `0x1A00` or decimal, sometimes negative;
//! booleans as `1`/`0` or `true`/`false`; byte strings as hex digits. Elements are matched by
//! local name, so a namespace prefix or an unknown vendor element never gets in the way:
//! readers ask for the children they know and ignore the rest. Errors carry the file and the
//! node's `line:column`. A context made with [`Ctx::lenient`] (the ESI reader) also reads the
//! forms of `lenient.rs`, noting a [`Warning`] for each; the ENI reader stays strict.

use super::lenient::{self, Warning};
use crate::error::Error;
use roxmltree::{Document, Node};
use std::borrow::Cow;
use std::cell::RefCell;

/// The document being read and its file name, for positions in error messages.
pub(crate) struct Ctx<'a, 'input> {
    pub doc: &'a Document<'input>,
    pub file: &'a str,
    /// Last position computed (byte offset, line, column): nodes are asked for in document
    /// order, so counting on from here keeps positions linear in the file size.
    pub cursor: std::cell::Cell<(usize, u32, u32)>,
    /// Read the deviations vendors' tools accept (ESI), noting each in `notes`.
    pub lenient: bool,
    /// What was read leniently, in the order met, each with the kind it folds under.
    pub notes: RefCell<Vec<(String, Warning)>>,
}

impl<'a, 'input> Ctx<'a, 'input> {
    /// A context for `doc` read from `file`.
    pub fn new(doc: &'a Document<'input>, file: &'a str) -> Self {
        Ctx {
            doc,
            file,
            cursor: std::cell::Cell::new((0, 1, 1)),
            lenient: false,
            notes: RefCell::new(Vec::new()),
        }
    }

    /// A context that reads vendors' deviations with a note each.
    pub fn lenient(doc: &'a Document<'input>, file: &'a str) -> Self {
        Ctx {
            lenient: true,
            ..Ctx::new(doc, file)
        }
    }
}

impl<'input> Ctx<'_, 'input> {
    /// An [`Error::Invalid`] at `node`.
    pub fn invalid(&self, node: Node<'_, 'input>, message: impl Into<String>) -> Error {
        let pos = self.doc.text_pos_at(node.range().start);
        Error::Invalid {
            file: self.file.to_string(),
            line: pos.row,
            column: pos.col,
            message: message.into(),
        }
    }

    /// The `line:column` of `node` (columns count characters).
    pub fn line_col(&self, node: Node<'_, 'input>) -> (u32, u32) {
        let target = node.range().start;
        let (mut off, mut line, mut col) = self.cursor.get();
        if target < off {
            (off, line, col) = (0, 1, 1);
        }
        let text = self.doc.input_text();
        let Some(span) = text.get(off..target) else {
            let pos = self.doc.text_pos_at(target);
            return (pos.row, pos.col);
        };
        for c in span.chars() {
            if c == '\n' {
                line += 1;
                col = 1;
            } else {
                col += 1;
            }
        }
        self.cursor.set((target, line, col));
        (line, col)
    }

    /// Note a lenient reading at byte offset `at` (nothing for a strict context); notes with
    /// the same text fold into one.
    pub fn note(&self, at: usize, message: String) {
        self.note_kind(at, message.clone(), message);
    }

    /// Note a lenient reading of kind `kind`: the notes of one kind fold into the first.
    pub fn note_kind(&self, at: usize, kind: String, message: String) {
        if self.lenient {
            let pos = self.doc.text_pos_at(at);
            let w = Warning {
                file: self.file.to_string(),
                line: pos.row,
                column: pos.col,
                message,
            };
            self.notes.borrow_mut().push((kind, w));
        }
    }

    /// `raw` as a number: the ETG forms, else (lenient) a form of `lenient::number`, noted.
    fn number(
        &self,
        raw: &str,
        what: &str,
        node: Node<'_, 'input>,
        at: usize,
    ) -> Result<i64, Error> {
        if let Some(v) = parse_int(raw) {
            let t = raw.trim().trim_start_matches('-');
            if t.starts_with("0x") || t.starts_with("0X") {
                let raw = short(raw.trim());
                let message = format!("{what}: read \"{raw}\" as hex (ETG.2000 writes #x)");
                self.note_kind(at, format!("{what} 0x"), message);
            }
            return Ok(v);
        }
        if let Some((v, how, hex)) = lenient::number(raw).filter(|_| self.lenient) {
            let v_text = if hex {
                format!("#x{v:x}")
            } else {
                v.to_string()
            };
            let raw = short(raw.trim());
            let message = format!("{what}: read \"{raw}\" as {v_text} ({how})");
            self.note_kind(at, format!("{what} {how}"), message);
            return Ok(v);
        }
        Err(self.invalid(
            node,
            format!(
                "{what}: expected a number (#x hex or decimal), found \"{}\"",
                short(raw)
            ),
        ))
    }

    /// The integer text of element `node` (required).
    pub fn int(&self, node: Node<'_, 'input>) -> Result<i64, Error> {
        let t = value_text(node);
        let what = format!("<{}>", node.tag_name().name());
        self.number(&t, &what, node, node.range().start)
    }

    /// An integer attribute of `node`, if present (lenient: an empty one counts as absent).
    pub fn int_attr(&self, node: Node<'_, 'input>, name: &str) -> Result<Option<i64>, Error> {
        let Some(a) = node.attribute_node(name) else {
            return Ok(None);
        };
        let what = format!("<{} {name}>", node.tag_name().name());
        if self.lenient && a.value().trim().is_empty() {
            self.note(a.range().start, format!("{what} is empty; read as absent"));
            return Ok(None);
        }
        self.number(a.value(), &what, node, a.range().start)
            .map(Some)
    }

    /// The integer text of child `name` of `node`, if the child is present (lenient: an empty
    /// one counts as absent).
    pub fn child_int(&self, node: Node<'_, 'input>, name: &str) -> Result<Option<i64>, Error> {
        let Some(c) = child(node, name) else {
            return Ok(None);
        };
        if self.lenient && value_text(c).is_empty() {
            self.note(
                c.range().start,
                format!("<{name}> is empty; read as absent"),
            );
            return Ok(None);
        }
        self.int(c).map(Some)
    }

    /// Child `name` of `node` as a number that fits `T`, if present.
    pub fn child_fit<T: TryFrom<i64>>(
        &self,
        node: Node<'_, 'input>,
        name: &str,
    ) -> Result<Option<T>, Error> {
        match self.child_int(node, name)? {
            Some(v) => self.fit(child(node, name).unwrap_or(node), v).map(Some),
            None => Ok(None),
        }
    }

    /// Attribute `name` of `node` as a number that fits `T`, if present.
    pub fn attr_fit<T: TryFrom<i64>>(
        &self,
        node: Node<'_, 'input>,
        name: &str,
    ) -> Result<Option<T>, Error> {
        match self.int_attr(node, name)? {
            Some(v) => self.fit(node, v).map(Some),
            None => Ok(None),
        }
    }

    /// A value that only sets a default or a limit: lenient, one that cannot be read is left
    /// out with a note (`Ok(None)`); strict, its error.
    pub fn optional<T>(
        &self,
        node: Node<'_, 'input>,
        r: Result<T, Error>,
    ) -> Result<Option<T>, Error> {
        match r {
            Ok(v) => Ok(Some(v)),
            Err(Error::Invalid { message, .. }) if self.lenient => {
                self.note(
                    node.range().start,
                    format!("{message}; the value is left out"),
                );
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// A boolean attribute: `1`/`true` true, `0`/`false`/absent false; lenient: other case,
    /// blanks, `yes`/`no`/`on`/`off` with a note, anything else false with a note.
    pub fn bool_attr(&self, node: Node<'_, 'input>, name: &str) -> bool {
        let Some(a) = node.attribute_node(name) else {
            return false;
        };
        match a.value() {
            "1" | "true" => true,
            "0" | "false" => false,
            raw if self.lenient => {
                let v = lenient::boolean(raw);
                let what = match v {
                    Some(v) => format!("read as {v}"),
                    None => "not a boolean (1, 0, true or false); read as false".into(),
                };
                let tag = node.tag_name().name();
                self.note(
                    a.range().start,
                    format!("<{tag} {name}=\"{}\">: {what}", short(raw)),
                );
                v.unwrap_or(false)
            }
            raw => parse_bool(raw),
        }
    }

    /// A number that must fit `T`, with a message naming the element when it does not.
    pub fn fit<T: TryFrom<i64>>(&self, node: Node<'_, 'input>, v: i64) -> Result<T, Error> {
        T::try_from(v).map_err(|_| {
            self.invalid(
                node,
                format!(
                    "<{}>: the value {v} is out of range for this field",
                    node.tag_name().name()
                ),
            )
        })
    }

    /// The hex-byte text of `node` (e.g. `0401000000000f00`).
    pub fn hex(&self, node: Node<'_, 'input>) -> Result<Vec<u8>, Error> {
        let t = value_text(node);
        let t = t.as_ref();
        parse_hex_bytes(t).ok_or_else(|| {
            self.invalid(
                node,
                format!(
                    "<{}>: expected hex bytes (an even number of hex digits), found \"{}\"",
                    node.tag_name().name(),
                    short(t)
                ),
            )
        })
    }
}

fn short(t: &str) -> String {
    if t.chars().count() > 40 {
        format!("{}...", t.chars().take(40).collect::<String>())
    } else {
        t.to_string()
    }
}

/// First element child of `node` with local name `name`.
pub(crate) fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    node.children()
        .find(|c| c.is_element() && c.tag_name().name() == name)
}

/// All element children of `node` with local name `name`.
pub(crate) fn children<'a, 'i: 'a>(
    node: Node<'a, 'i>,
    name: &'a str,
) -> impl Iterator<Item = Node<'a, 'i>> + 'a {
    node.children()
        .filter(move |c| c.is_element() && c.tag_name().name() == name)
}

/// The trimmed text of an element (CDATA included), or "": the first text that is not blank,
/// so a comment before the value does not hide it.
pub(crate) fn text<'a>(node: Node<'a, '_>) -> &'a str {
    node.children()
        .filter_map(|c| c.is_text().then(|| c.text()).flatten())
        .map(str::trim)
        .find(|t| !t.is_empty())
        .unwrap_or("")
}

/// Every text of an element joined and trimmed (a number split by a comment is one number).
pub(crate) fn value_text<'a>(node: Node<'a, '_>) -> Cow<'a, str> {
    let mut parts = node
        .children()
        .filter_map(|c| c.is_text().then(|| c.text()).flatten())
        .filter(|t| !t.trim().is_empty());
    match (parts.next(), parts.next()) {
        (None, _) => Cow::Borrowed(""),
        (Some(t), None) => Cow::Borrowed(t.trim()),
        (Some(a), Some(b)) => {
            let mut s = format!("{a}{b}");
            parts.for_each(|p| s.push_str(p));
            Cow::Owned(s.trim().to_string())
        }
    }
}

/// The trimmed text of child `name`, if present.
pub(crate) fn child_text<'a>(node: Node<'a, '_>, name: &str) -> Option<&'a str> {
    child(node, name).map(text)
}

/// A boolean attribute: `1`/`true` are true; absent or anything else false.
pub(crate) fn bool_attr(node: Node<'_, '_>, name: &str) -> bool {
    node.attribute(name).is_some_and(parse_bool)
}

/// `1` or `true` (any case).
pub(crate) fn parse_bool(s: &str) -> bool {
    let s = s.trim();
    s == "1" || s.eq_ignore_ascii_case("true")
}

/// Parse `#x1A00`, `0x1A00`, `1234` or `-500`.
pub fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = if let Some(h) = s
        .strip_prefix("#x")
        .or_else(|| s.strip_prefix("#X"))
        .or_else(|| s.strip_prefix("0x"))
        .or_else(|| s.strip_prefix("0X"))
    {
        if h.is_empty() || h.len() > 16 {
            return None;
        }
        u64::from_str_radix(h, 16).ok()? as i64
    } else {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse::<i64>().ok()?
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// Parse hex digits into bytes (whitespace allowed between them).
pub fn parse_hex_bytes(s: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks_exact(2)
        .map(|p| {
            let hi = (p[0] as char).to_digit(16)?;
            let lo = (p[1] as char).to_digit(16)?;
            Some((hi * 16 + lo) as u8)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_int("#x07d43052"), Some(0x07d43052));
        assert_eq!(parse_int(" #X1A00 "), Some(0x1a00));
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("2048"), Some(2048));
        assert_eq!(parse_int("-500"), Some(-500));
        assert_eq!(parse_int("#x"), None);
        assert_eq!(parse_int("12a"), None);
        assert_eq!(parse_int(""), None);
    }

    #[test]
    fn hex_bytes() {
        assert_eq!(parse_hex_bytes("0401 0f00"), Some(vec![4, 1, 0x0f, 0]));
        assert_eq!(parse_hex_bytes("040"), None);
        assert_eq!(parse_hex_bytes("zz"), None);
        assert_eq!(parse_hex_bytes(""), Some(vec![]));
    }
}
