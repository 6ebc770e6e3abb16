//! ESI files as vendors write them: the deviations from ETG.2000 that vendors' own tools
//! accept, read with a [`Warning`] that names `file:line:column` and what was assumed.
//!
//! Design: the strict readers (`xml.rs`, `device.rs`, `pdo.rs`, `dictionary.rs`) try the
//! ETG form first; only when it fails do they ask this module for a reading, and each
//! reading comes with a sentence saying what was assumed. The rules follow what the tools
//! in use do: siitool reads numbers with `sscanf("#x%x")` then `sscanf("%u")` (so a `0x`
//! after `#x`, blanks after `#x`, a `+` sign or trailing text pass), TwinCAT and IgH's
//! `ethercat xml` write SyncManagers without a use text (the use follows from the control
//! byte), and files declare Windows-1252 or ISO 8859-1, or declare nothing and are not
//! UTF-8. Everything here is a pure function of the text; the collecting and the
//! positions live in `xml::Ctx`, the reporting (once per process, to stderr unless a
//! handler is set with [`set_warning_handler`]) in [`report`].
//!
//! What stays refused: malformed XML, and values no tool reads the same way (hex digits
//! without a prefix, digits split by blanks). A device whose description is refused is
//! left out of its file with its reason ([`super::BrokenDevice`]); the others load.

use std::borrow::Cow;
use std::sync::{Mutex, RwLock};

/// Something in an ESI file that deviates from ETG.2000 and was read anyway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The file (as named to the reader).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What was found and what was assumed.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

/// A number read from a form outside ETG.2000 (`#x`hex, decimal): the value, what was
/// assumed, and whether it was read as hex.
pub(crate) fn number(raw: &str) -> Option<(i64, &'static str, bool)> {
    let s = raw.trim();
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let hex = s
        .strip_prefix("#x")
        .or(s.strip_prefix("#X"))
        .map(|h| (h, true))
        .or(s
            .strip_prefix("0x")
            .or(s.strip_prefix("0X"))
            .map(|h| (h, false)));
    let (radix, body, mut how) = if let Some((h, etg)) = hex {
        let h2 = h.trim_start();
        match h2.strip_prefix("0x").or(h2.strip_prefix("0X")) {
            Some(r) if etg => (16, r, "a \"0x\" after \"#x\" is ignored"),
            _ if h2.len() != h.len() => (16, h2, "blanks after the hex prefix are ignored"),
            _ => (16, h, ""),
        }
    } else if let Some(h) = s.strip_suffix(['h', 'H']) {
        if h.is_empty() || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        (16, h, "a trailing \"h\" marks hex")
    } else {
        (10, s, "")
    };
    let end = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    let (digits, rest_raw) = body.split_at(end);
    if digits.is_empty() {
        return None;
    }
    if !rest_raw.is_empty() {
        // "16.0" is 16; "16 bit" and "#x10 (16)" keep their number, as sscanf does; what
        // may continue the number ("12a", "#x60 41", "16.5") is not guessed at.
        let adjacent = !rest_raw.starts_with(char::is_whitespace);
        let rest = rest_raw.trim();
        let fraction = rest_raw.strip_prefix('.').filter(|_| radix == 10);
        let note = match fraction {
            Some(f) if f.bytes().all(|b| b == b'0') => "a zero fraction is ignored",
            Some(_) => return None,
            None if adjacent && rest.starts_with(char::is_alphanumeric) => return None,
            None if rest.starts_with(|c: char| c.is_digit(radix)) => return None,
            None => "the text after the number is ignored",
        };
        if how.is_empty() {
            how = note;
        }
    }
    if how.is_empty() {
        how = if raw.trim_start().starts_with('+') {
            "the \"+\" sign is ignored"
        } else {
            "leading zeros beyond 64 bits are ignored"
        };
    }
    let digits = match digits.trim_start_matches('0') {
        "" => "0",
        d => d,
    };
    let v = u64::from_str_radix(digits, radix).ok()? as i64;
    Some((if neg { v.wrapping_neg() } else { v }, how, radix == 16))
}

/// A boolean outside `0`/`1`/`true`/`false`: case and blanks aside, `yes`/`on` are true and
/// `no`/`off` false; anything else is `None`.
pub(crate) fn boolean(raw: &str) -> Option<bool> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" | "y" => Some(true),
        "0" | "false" | "no" | "off" | "n" => Some(false),
        _ => None,
    }
}

/// `raw` matched case- and blank-insensitively against `names`: the canonical spelling.
pub(crate) fn canonical(raw: &str, names: &[&'static str]) -> Option<&'static str> {
    let r = raw.trim();
    names.iter().copied().find(|n| n.eq_ignore_ascii_case(r))
}

/// The use of a SyncManager that has no use text, from its control byte (bits 0–1 mode,
/// 2 mailbox; bits 2–3 direction, 1 = the MainDevice writes), as IgH's `ethercat xml` and
/// generated files leave it.
pub(crate) fn sm_use_from_control(control: u8) -> Option<&'static str> {
    match (control & 0x03, (control >> 2) & 0x03) {
        (2, 1) => Some("MBoxOut"),
        (2, 0) => Some("MBoxIn"),
        (0, 1) => Some("Outputs"),
        (0, 0) => Some("Inputs"),
        _ => None,
    }
}

/// The control byte ETG.2000 gives a SyncManager of `kind` (for one written without).
pub(crate) fn default_control(kind: &str) -> Option<u8> {
    Some(match kind {
        "MBoxOut" => 0x26,
        "MBoxIn" => 0x22,
        "Outputs" => 0x64,
        "Inputs" => 0x20,
        _ => return None,
    })
}

/// A data type name written with other case or spacing, or by IgH's `ethercat xml` names
/// (`UINT16`, `INT8`, ...): the ETG.2000 name, when it differs from `raw`.
pub(crate) fn data_type(raw: &str) -> Option<String> {
    let mut s: String = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    s.make_ascii_uppercase();
    for (from, to) in [
        ("STRING (", "STRING("),
        ("ARRAY[", "ARRAY ["),
        ("]OF ", "] OF "),
    ] {
        s = s.replace(from, to);
    }
    let s = match s.as_str() {
        "UINT8" => "USINT".into(),
        "UINT16" => "UINT".into(),
        "UINT32" => "UDINT".into(),
        "UINT64" => "ULINT".into(),
        "INT8" => "SINT".into(),
        "INT16" => "INT".into(),
        "INT32" => "DINT".into(),
        "INT64" => "LINT".into(),
        "FLOAT" | "FLOAT32" => "REAL".into(),
        "DOUBLE" | "FLOAT64" => "LREAL".into(),
        "BIT" | "BIT1" => "BOOL".into(),
        _ => s,
    };
    (s != raw).then_some(s)
}

/// Decode the bytes of a file: UTF-8 (BOM or not), UTF-16 with a BOM, ISO 8859-1 or
/// Windows-1252 when the declaration says so, else UTF-8 when valid, else Windows-1252;
/// the second value says what was assumed where the file's declaration does not say it.
pub(crate) fn decode(bytes: &[u8]) -> (Cow<'_, str>, Option<String>) {
    if let Some(t) = utf16(bytes) {
        return (Cow::Owned(t), None);
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).to_ascii_lowercase();
    let decl = head
        .trim_start()
        .starts_with("<?xml")
        .then(|| head.split("?>").next().unwrap_or(""));
    let declared = decl.and_then(|d| {
        let at = d.find("encoding")?;
        let v = d[at + 8..].trim_start().strip_prefix('=')?.trim_start();
        let q = v.chars().next()?;
        Some(v[q.len_utf8()..].split(q).next()?.to_string())
    });
    let single_byte = declared
        .as_deref()
        .is_some_and(|e| e.contains("8859-1") || e.contains("latin") || e.contains("1252"));
    if !single_byte {
        if let Ok(s) = std::str::from_utf8(bytes) {
            return (Cow::Borrowed(s), None);
        }
    }
    let cp1252 = !declared.as_deref().is_some_and(|e| e.contains("8859"));
    let text = bytes.iter().map(|&b| byte_char(b, cp1252)).collect();
    let note = (!single_byte).then(|| {
        format!(
            "the file is not UTF-8 although {}; read as Windows-1252",
            match declared {
                Some(e) => format!("it declares \"{e}\""),
                None => "it declares no encoding".into(),
            }
        )
    });
    (Cow::Owned(text), note)
}

/// UTF-16 text behind a byte-order mark.
fn utf16(bytes: &[u8]) -> Option<String> {
    let (le, rest) = match bytes {
        [0xFF, 0xFE, r @ ..] => (true, r),
        [0xFE, 0xFF, r @ ..] => (false, r),
        _ => return None,
    };
    let units = rest.chunks_exact(2).map(|p| {
        if le {
            u16::from_le_bytes([p[0], p[1]])
        } else {
            u16::from_be_bytes([p[0], p[1]])
        }
    });
    Some(
        char::decode_utf16(units)
            .map(|c| c.unwrap_or('\u{FFFD}'))
            .collect(),
    )
}

/// One byte as ISO 8859-1, or as Windows-1252 (0x80–0x9F are printable there).
fn byte_char(b: u8, cp1252: bool) -> char {
    const HIGH: [u16; 32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
        0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013,
        0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ];
    match b {
        0x80..=0x9F if cp1252 => char::from_u32(HIGH[(b - 0x80) as usize] as u32).unwrap_or('?'),
        _ => b as char,
    }
}

/// An XML declaration that is not at the very start (a comment or blank lines before it,
/// which XML forbids): blanked out, positions unchanged. `None` when the text is fine.
pub(crate) fn misplaced_declaration(text: &str) -> Option<(String, usize)> {
    if text.starts_with("<?xml") {
        return None;
    }
    let at = text.find("<?xml")?;
    let before = &text[..at];
    let mut rest = before.trim_start();
    while !rest.is_empty() {
        let c = rest.strip_prefix("<!--")?;
        rest = c[c.find("-->")? + 3..].trim_start();
    }
    if text[at..].starts_with("<?xml-") {
        return None;
    }
    let end = at + text[at..].find("?>")? + 2;
    let mut out = String::with_capacity(text.len());
    out.push_str(before);
    out.extend(
        text[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' }),
    );
    out.push_str(&text[end..]);
    Some((out, at))
}

type Handler = Box<dyn Fn(&Warning) + Send + Sync>;

static HANDLER: RwLock<Option<Handler>> = RwLock::new(None);
static SEEN: Mutex<std::collections::BTreeSet<String>> =
    Mutex::new(std::collections::BTreeSet::new());

/// Where the warnings of ESI files read from disk go: `None` (the default) prints each on
/// stderr as `warning: FILE:LINE:COLUMN: ...`; a handler gets each instead. Either way each
/// warning is passed on once per process, however often its file is read.
pub fn set_warning_handler(handler: Option<Handler>) {
    *HANDLER.write().unwrap_or_else(|e| e.into_inner()) = handler;
}

/// Pass `warnings` on (each once per process).
pub(crate) fn report(warnings: &[Warning]) {
    for w in warnings {
        let fresh = SEEN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(w.to_string());
        if !fresh {
            continue;
        }
        match HANDLER.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(h) => h(w),
            None => eprintln!("warning: {w}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_siitool_reads_them() {
        assert_eq!(number("#x0x6041").map(|n| n.0), Some(0x6041));
        assert_eq!(number("#X0X1a").map(|n| n.0), Some(0x1a));
        assert_eq!(number("#x 6041").map(|n| n.0), Some(0x6041));
        assert_eq!(number("+16").map(|n| n.0), Some(16));
        assert_eq!(number("16.0").map(|n| n.0), Some(16));
        assert_eq!(number("16 bit").map(|n| n.0), Some(16));
        assert_eq!(number("1A00h").map(|n| n.0), Some(0x1a00));
        assert_eq!(number("#x000000000000000001").map(|n| n.0), Some(1));
        assert_eq!(number("#x60 41"), None);
        assert_eq!(number("16.5"), None);
        assert_eq!(number("1A00"), None);
        assert_eq!(number("#x"), None);
        assert_eq!(number("12a"), None);
        assert_eq!(number("0x 10").map(|n| n.0), Some(16));
        assert_eq!(number("abc"), None);
    }

    #[test]
    fn odd_declarations_never_panic() {
        let (t, note) = decode("<?xml version=\"1.0\" encoding=\u{e4}x?><a/>".as_bytes());
        assert!(t.ends_with("<a/>") && note.is_none());
        assert_eq!(
            decode(b"<?xml encoding=\"windows-1252\"?><a>\x80</a>").0,
            "<?xml encoding=\"windows-1252\"?><a>\u{20ac}</a>"
        );
        assert!(misplaced_declaration("<!-- a --><?xml version=\"1.0\"?><a/>").is_some());
        assert!(misplaced_declaration("<a/><?xml version=\"1.0\"?>").is_none());
        assert!(misplaced_declaration("<!-- open <?xml ?>").is_none());
    }

    proptest::proptest! {
        #[test]
        fn numbers_never_panic(s in "\\PC{0,12}") {
            let _ = number(&s);
            let _ = data_type(&s);
            let _ = decode(s.as_bytes());
            let _ = misplaced_declaration(&s);
        }
    }

    #[test]
    fn names_and_bytes() {
        assert_eq!(data_type("uint").as_deref(), Some("UINT"));
        assert_eq!(data_type("STRING (10)").as_deref(), Some("STRING(10)"));
        assert_eq!(
            data_type("ARRAY[0..3] OF BYTE").as_deref(),
            Some("ARRAY [0..3] OF BYTE")
        );
        assert_eq!(data_type("UINT16").as_deref(), Some("UINT"));
        assert_eq!(data_type("UINT"), None);
        assert_eq!(sm_use_from_control(0x26), Some("MBoxOut"));
        assert_eq!(sm_use_from_control(0x64), Some("Outputs"));
        assert_eq!(sm_use_from_control(0x20), Some("Inputs"));
        assert_eq!(byte_char(0x80, true), '€');
        assert_eq!(byte_char(0xE4, true), 'ä');
        assert_eq!(boolean(" True "), Some(true));
        assert_eq!(boolean("maybe"), None);
    }
}
