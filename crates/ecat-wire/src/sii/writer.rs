//! [`SiiWriter`]: lays a complete SII image into a caller's buffer — fixed area with its CRC,
//! then categories in the order they are added, then the END marker.
//!
//! Every category method checks the room first (always keeping 2 bytes for END), so a failed
//! call leaves the image as it was and [`SiiWriter::finish`] cannot fail.

use super::categories::*;
use super::{CategoryType, FixedAreaRepr, CATEGORY_HEADER_LEN, FIXED_AREA_LEN};
use crate::{latin1, put16, Error, Result};

/// Builds an SII image in place.
///
/// ```
/// use ecat_wire::sii::*;
/// let mut buf = [0xFFu8; 2048];
/// let fixed = FixedAreaRepr { vendor_id: 2, product_code: 0x07D43052, ..Default::default() };
/// let mut w = SiiWriter::new(&mut buf, &fixed).unwrap();
/// w.strings(&["EL2004", "4 Ch. Dig. Output 24V, 0.5A"]).unwrap();
/// w.general(&GeneralRepr { order_index: 1, name_index: 2, ..Default::default() }).unwrap();
/// let len = w.finish();
/// let sii = Sii::new(&buf[..len]).unwrap();
/// assert_eq!(sii.fixed().unwrap().product_code, 0x07D43052);
/// assert_eq!(sii.strings().unwrap().get_str(1), Some("EL2004"));
/// ```
#[derive(Debug)]
pub struct SiiWriter<'a> {
    buf: &'a mut [u8],
    pos: usize,
    pad: u8,
}

/// Bytes of the END marker.
const END_LEN: usize = 2;

impl<'a> SiiWriter<'a> {
    /// Start an image: writes the fixed area (CRC computed) into the first 128 bytes.
    pub fn new(buf: &'a mut [u8], fixed: &FixedAreaRepr) -> Result<Self> {
        if buf.len() < FIXED_AREA_LEN + END_LEN {
            return Err(Error::NoSpace);
        }
        fixed.emit(buf)?;
        Ok(SiiWriter {
            buf,
            pos: FIXED_AREA_LEN,
            pad: 0,
        })
    }

    /// Pad odd-length category payloads with `byte` instead of 0 (Beckhoff's EEPROM tool
    /// leaves the pad byte erased, 0xFF, e.g. after the last string).
    pub fn with_padding(mut self, byte: u8) -> Self {
        self.pad = byte;
        self
    }

    /// Bytes written so far (without the END marker).
    pub fn len(&self) -> usize {
        self.pos
    }

    /// Never true: the fixed area is always there.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Reserve a category of `len` payload bytes (padded to even with the pad byte, 0 unless
    /// [`SiiWriter::with_padding`] says otherwise), write its header and return the zeroed
    /// payload to fill.
    pub fn category(&mut self, kind: CategoryType, len: usize) -> Result<&mut [u8]> {
        if kind == CategoryType::End {
            return Err(Error::BadValue);
        }
        let padded = len + (len & 1);
        let words = u16::try_from(padded / 2).map_err(|_| Error::BadLength)?;
        let end = self.pos + CATEGORY_HEADER_LEN + padded;
        if end + END_LEN > self.buf.len() {
            return Err(Error::NoSpace);
        }
        let start = self.pos;
        put16(self.buf, start, kind.to_u16());
        put16(self.buf, start + 2, words);
        let payload = &mut self.buf[start + CATEGORY_HEADER_LEN..end];
        payload.fill(0);
        if padded > len {
            payload[len] = self.pad;
        }
        self.pos = end;
        Ok(&mut payload[..len])
    }

    /// Add any category with a raw payload.
    pub fn raw(&mut self, kind: CategoryType, data: &[u8]) -> Result<()> {
        self.category(kind, data.len())?.copy_from_slice(data);
        Ok(())
    }

    /// Add the STRINGS category; string `i` of the slice gets index `i + 1`. At most 255
    /// strings of at most 255 bytes each ([`Error::BadLength`]).
    pub fn strings<S: AsRef<[u8]>>(&mut self, strings: &[S]) -> Result<()> {
        let count = u8::try_from(strings.len()).map_err(|_| Error::BadLength)?;
        let mut len = 1;
        for s in strings {
            if s.as_ref().len() > 255 {
                return Err(Error::BadLength);
            }
            len += 1 + s.as_ref().len();
        }
        let out = self.category(CategoryType::Strings, len)?;
        out[0] = count;
        let mut p = 1;
        for s in strings {
            let s = s.as_ref();
            out[p] = s.len() as u8;
            out[p + 1..p + 1 + s.len()].copy_from_slice(s);
            p += 1 + s.len();
        }
        Ok(())
    }

    /// Add the STRINGS category from text, encoded as ISO 8859-1 as SII strings are ('µ'
    /// becomes the byte 0xB5; characters beyond U+00FF become `?`). Limits as [`strings`].
    ///
    /// [`strings`]: SiiWriter::strings
    pub fn strings_text<S: AsRef<str>>(&mut self, strings: &[S]) -> Result<()> {
        let count = u8::try_from(strings.len()).map_err(|_| Error::BadLength)?;
        let mut len = 1;
        for s in strings {
            let n = latin1::encoded_len(s.as_ref());
            if n > 255 {
                return Err(Error::BadLength);
            }
            len += 1 + n;
        }
        let out = self.category(CategoryType::Strings, len)?;
        out[0] = count;
        let mut p = 1;
        for s in strings {
            let n = latin1::encode_into(s.as_ref(), &mut out[p + 1..]).ok_or(Error::NoSpace)?;
            out[p] = n as u8;
            p += 1 + n;
        }
        Ok(())
    }

    /// Add the GENERAL category.
    pub fn general(&mut self, g: &GeneralRepr) -> Result<()> {
        g.emit(self.category(CategoryType::General, GeneralRepr::LEN)?)
    }

    /// Add the FMMU category (one byte per FMMU).
    pub fn fmmus(&mut self, fmmus: &[FmmuUsage]) -> Result<()> {
        let out = self.category(CategoryType::Fmmu, fmmus.len())?;
        for (o, f) in out.iter_mut().zip(fmmus) {
            *o = f.to_u8();
        }
        Ok(())
    }

    /// Add the SYNCM category.
    pub fn sync_managers(&mut self, sms: &[SyncManagerRepr]) -> Result<()> {
        let out = self.category(CategoryType::SyncM, sms.len() * SyncManagerRepr::LEN)?;
        for (o, sm) in out.chunks_exact_mut(SyncManagerRepr::LEN).zip(sms) {
            sm.emit(o)?;
        }
        Ok(())
    }

    /// Add the FMMU_EX category.
    pub fn fmmu_ex(&mut self, entries: &[FmmuExRepr]) -> Result<()> {
        let out = self.category(CategoryType::FmmuEx, entries.len() * FmmuExRepr::LEN)?;
        for (o, e) in out.chunks_exact_mut(FmmuExRepr::LEN).zip(entries) {
            e.emit(o)?;
        }
        Ok(())
    }

    /// Add one TXPDO or RXPDO category (`kind`) holding the given PDOs with their entries
    /// (at most 255 entries per PDO). Other kinds are refused with [`Error::BadValue`].
    pub fn pdos(&mut self, kind: CategoryType, pdos: &[(PdoRepr, &[PdoEntryRepr])]) -> Result<()> {
        if !matches!(kind, CategoryType::TxPdo | CategoryType::RxPdo) {
            return Err(Error::BadValue);
        }
        let mut len = 0;
        for (_, entries) in pdos {
            if entries.len() > 255 {
                return Err(Error::BadLength);
            }
            len += PdoRepr::LEN + entries.len() * PdoEntryRepr::LEN;
        }
        let out = self.category(kind, len)?;
        let mut p = 0;
        for (pdo, entries) in pdos {
            pdo.emit(entries.len() as u8, &mut out[p..])?;
            p += PdoRepr::LEN;
            for e in entries.iter() {
                e.emit(&mut out[p..])?;
                p += PdoEntryRepr::LEN;
            }
        }
        Ok(())
    }

    /// Add the DC category.
    pub fn dc(&mut self, modes: &[DcRepr]) -> Result<()> {
        let out = self.category(CategoryType::Dc, modes.len() * DcRepr::LEN)?;
        for (o, m) in out.chunks_exact_mut(DcRepr::LEN).zip(modes) {
            m.emit(o)?;
        }
        Ok(())
    }

    /// Write the END marker (0xFFFF) and return the image length in bytes. Bytes after it are
    /// left untouched (pre-fill the buffer with 0xFF to look like an erased EEPROM).
    pub fn finish(self) -> usize {
        put16(self.buf, self.pos, 0xFFFF);
        self.pos + END_LEN
    }
}
