//! ISO 8859-1 (Latin-1) text, the encoding of SII strings and CoE visible strings.
//!
//! Real EEPROMs hold names such as "EL1018 8K. Dig. Eingang 24V, 10µs" with 'µ' as the single
//! byte 0xB5, so decoding them as UTF-8 fails or garbles them. Every byte of Latin-1 is the
//! Unicode code point of the same value, which makes decoding infallible and allocation-free:
//! [`Latin1`] is a view over the bytes that yields `char`s and implements `Display`.
//! Encoding maps each `char` up to U+00FF to its byte and anything beyond to `?`, so one
//! `char` is always one byte ([`encoded_len`] is the `char` count).

use core::fmt;

/// A borrowed ISO 8859-1 string: decoding never fails.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Latin1<'a>(pub &'a [u8]);

impl<'a> Latin1<'a> {
    /// The raw bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }
    /// The characters, one per byte.
    pub fn chars(&self) -> impl Iterator<Item = char> + 'a {
        self.0.iter().map(|&b| char::from(b))
    }
    /// The text without leading and trailing ASCII whitespace and NUL padding.
    pub fn trim(&self) -> Latin1<'a> {
        let pad = |b: &u8| b.is_ascii_whitespace() || *b == 0;
        let start = self.0.iter().position(|b| !pad(b)).unwrap_or(self.0.len());
        let end = self
            .0
            .iter()
            .rposition(|b| !pad(b))
            .map_or(start, |e| e + 1);
        Latin1(&self.0[start..end])
    }
    /// True if there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Latin1<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        for c in self.chars() {
            f.write_char(c)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Latin1<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.chars() {
            fmt::Display::fmt(&c.escape_debug(), f)?;
        }
        f.write_str("\"")
    }
}

/// The byte for one `char`: itself up to U+00FF, `?` beyond.
pub fn encode_char(c: char) -> u8 {
    u8::try_from(u32::from(c)).unwrap_or(b'?')
}

/// The number of bytes `text` takes in Latin-1 (one per `char`).
pub fn encoded_len(text: &str) -> usize {
    text.chars().count()
}

/// Write `text` as Latin-1 into `out`; returns the bytes written, or `None` if `out` is too
/// short (nothing is promised about `out` then).
pub fn encode_into(text: &str, out: &mut [u8]) -> Option<usize> {
    let mut n = 0;
    for c in text.chars() {
        *out.get_mut(n)? = encode_char(c);
        n += 1;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_sign_is_one_byte_both_ways() {
        let mut buf = [0xA5u8; 8];
        assert_eq!(encode_into("10µs", &mut buf), Some(4));
        assert_eq!(&buf[..4], b"10\xB5s");
        let mut s = [0u8; 0];
        assert_eq!(encode_into("x", &mut s), None);
        use std::string::ToString;
        assert_eq!(Latin1(b"10\xB5s").to_string(), "10µs");
        assert_eq!(Latin1(b"\xE4\xF6\xFC\xDF").to_string(), "äöüß");
    }

    #[test]
    fn beyond_latin1_becomes_question_mark() {
        let mut buf = [0u8; 4];
        assert_eq!(encode_into("a€b", &mut buf), Some(3));
        assert_eq!(&buf[..3], b"a?b");
        assert_eq!(encoded_len("a€b"), 3);
    }

    #[test]
    fn trim_removes_spaces_and_nul_padding() {
        assert_eq!(Latin1(b"  EL1018\0\0").trim().as_bytes(), b"EL1018");
        assert!(Latin1(b" \0 ").trim().is_empty());
    }
}
