//! What separates an SII image built from ESI ([`crate::build_sii_with`]) from the EEPROM of a
//! real device, in classes that say why the ESI cannot know it.
//!
//! An image is split into its fixed area and its list of categories ([`Layout`]). Each
//! [`Class`] names one kind of content a real EEPROM may carry beyond its ESI; [`adopt`] copies
//! exactly that kind from the real image into the built one (and says what it copied), so a
//! test can check that the built image plus every known class *is* the real EEPROM, byte for
//! byte ([`explain`]), and can ask which classes a given read depends on (by leaving one
//! class out). Nothing here guesses content: all adopted bytes come from the real image.

use ecat_wire::sii::{CATEGORY_HEADER_LEN, FIXED_AREA_LEN};

/// Why a real EEPROM differs from the image its ESI gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Written per unit at the factory: serial number (words 0x0E–0x0F), production data in
    /// the reserved words (0x10–0x13, 0x1D–0x3D) and device-specific categories (1–9).
    PerUnit,
    /// The EEPROM was programmed from another edition of the ESI: strings that a later
    /// edition changed (listed by the caller as [`EditionString`]).
    EsiEdition,
    /// Written by the vendor's tool with no source saying what it means: GENERAL byte 4.
    Undocumented,
}

impl Class {
    /// Every class, in the order [`explain`] applies them.
    pub const ALL: [Class; 3] = [Class::PerUnit, Class::EsiEdition, Class::Undocumented];

    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Class::PerUnit => "per-unit data",
            Class::EsiEdition => "ESI edition",
            Class::Undocumented => "undocumented",
        }
    }
}

/// A string as an older ESI edition had it (`programmed`) and as ours has it (`esi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EditionString<'a> {
    /// The string in the real EEPROM.
    pub programmed: &'a str,
    /// The string the current ESI gives.
    pub esi: &'a str,
}

/// Strings that changed between editions of Beckhoff's ESI files, as seen in real EEPROMs:
/// the EL2xxx group name lost a typo ("Ausgangklemmen") after the EL2004 and EL2889 of our
/// dumps were programmed (the EL2828 already carries the corrected name).
pub const KNOWN_EDITION_STRINGS: &[EditionString<'static>] = &[EditionString {
    programmed: "Digitale Ausgangklemmen (EL2xxx)",
    esi: "Digitale Ausgangsklemmen (EL2xxx)",
}];

/// An SII image split into its fixed area and categories (END and what follows dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Words 0x00–0x3F.
    pub fixed: Vec<u8>,
    /// (type, payload) of each category before END, in order.
    pub categories: Vec<(u16, Vec<u8>)>,
}

const STRINGS: u16 = 10;
const GENERAL: u16 = 30;

impl Layout {
    /// Split `image`; `None` when it is shorter than the fixed area or a category overruns.
    pub fn parse(image: &[u8]) -> Option<Layout> {
        let fixed = image.get(..FIXED_AREA_LEN)?.to_vec();
        let mut categories = Vec::new();
        let mut pos = FIXED_AREA_LEN;
        loop {
            let kind = image.get(pos..pos + 2)?;
            if kind == [0xFF, 0xFF] {
                break;
            }
            let head = image.get(pos..pos + CATEGORY_HEADER_LEN)?;
            let kind = u16::from_le_bytes([head[0], head[1]]);
            let len = 2 * u16::from_le_bytes([head[2], head[3]]) as usize;
            let start = pos + CATEGORY_HEADER_LEN;
            categories.push((kind, image.get(start..start + len)?.to_vec()));
            pos = start + len;
        }
        Some(Layout { fixed, categories })
    }

    /// The image: fixed area, categories, END, then 0xFF up to `size` bytes.
    pub fn to_image(&self, size: usize) -> Vec<u8> {
        let mut out = self.fixed.clone();
        for (kind, payload) in &self.categories {
            out.extend_from_slice(&kind.to_le_bytes());
            out.extend_from_slice(&((payload.len() / 2) as u16).to_le_bytes());
            out.extend_from_slice(payload);
        }
        out.extend_from_slice(&[0xFF, 0xFF]);
        if out.len() < size {
            out.resize(size, 0xFF);
        }
        out
    }

    fn category_mut(&mut self, kind: u16) -> Option<&mut Vec<u8>> {
        self.categories
            .iter_mut()
            .find(|(k, _)| *k == kind)
            .map(|(_, p)| p)
    }

    fn category(&self, kind: u16) -> Option<&[u8]> {
        self.categories
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, p)| p.as_slice())
    }
}

/// The strings of a STRINGS payload (count byte, then length-prefixed strings).
fn split_strings(p: &[u8]) -> Vec<Vec<u8>> {
    let n = p.first().copied().unwrap_or(0) as usize;
    let mut out = Vec::with_capacity(n);
    let mut pos = 1;
    for _ in 0..n {
        let Some(&len) = p.get(pos) else { break };
        let Some(s) = p.get(pos + 1..pos + 1 + len as usize) else {
            break;
        };
        out.push(s.to_vec());
        pos += 1 + len as usize;
    }
    out
}

/// A STRINGS payload, padded to even with 0xFF.
fn join_strings(strings: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![strings.len() as u8];
    for s in strings {
        out.push(s.len() as u8);
        out.extend_from_slice(s);
    }
    if out.len() % 2 == 1 {
        out.push(0xFF);
    }
    out
}

/// Reserved and per-unit words of the fixed area.
fn per_unit_word(w: usize) -> bool {
    matches!(w, 0x0E..=0x13 | 0x1D..=0x3D)
}

/// Copy what `class` covers from `real` into `built`; returns one line per thing copied.
pub fn adopt(
    built: &mut Layout,
    real: &Layout,
    class: Class,
    editions: &[EditionString<'_>],
) -> Vec<String> {
    let mut done = Vec::new();
    match class {
        Class::PerUnit => {
            for w in (0..FIXED_AREA_LEN / 2).filter(|w| per_unit_word(*w)) {
                let (a, b) = (
                    &real.fixed[2 * w..2 * w + 2],
                    &built.fixed[2 * w..2 * w + 2],
                );
                if a != b {
                    done.push(format!(
                        "word 0x{w:02x}: 0x{:04x} (ESI image 0x{:04x})",
                        u16::from_le_bytes([a[0], a[1]]),
                        u16::from_le_bytes([b[0], b[1]])
                    ));
                    built.fixed[2 * w..2 * w + 2].copy_from_slice(a);
                }
            }
            for (i, (kind, payload)) in real.categories.iter().enumerate() {
                if (1..=9).contains(kind) && built.category(*kind).is_none() {
                    done.push(format!(
                        "device-specific category {kind} ({} words) at position {i}",
                        payload.len() / 2
                    ));
                    let at = i.min(built.categories.len());
                    built.categories.insert(at, (*kind, payload.clone()));
                }
            }
        }
        Class::EsiEdition => {
            let (Some(r), Some(b)) = (real.category(STRINGS), built.category(STRINGS)) else {
                return done;
            };
            let r = split_strings(r);
            let mut b = split_strings(b);
            let mut changed = false;
            for (i, (rs, bs)) in r.iter().zip(b.iter_mut()).enumerate() {
                if let Some(e) = editions
                    .iter()
                    .find(|e| e.programmed.as_bytes() == rs && e.esi.as_bytes() == bs.as_slice())
                {
                    done.push(format!(
                        "string {}: {:?} (ESI {:?})",
                        i + 1,
                        e.programmed,
                        e.esi
                    ));
                    *bs = rs.clone();
                    changed = true;
                }
            }
            if changed {
                if let Some(p) = built.category_mut(STRINGS) {
                    *p = join_strings(&b);
                }
            }
        }
        Class::Undocumented => {
            let r4 = real.category(GENERAL).and_then(|g| g.get(4).copied());
            if let (Some(r4), Some(g)) = (r4, built.category_mut(GENERAL)) {
                if g.get(4).is_some_and(|b| *b != r4) {
                    done.push(format!(
                        "GENERAL byte 4: 0x{r4:02x} (ESI image 0x{:02x})",
                        g[4]
                    ));
                    g[4] = r4;
                }
            }
        }
    }
    done
}

/// `built` with the content of `classes` adopted from `real`, as an image of `real`'s size.
pub fn with_classes(
    built: &Layout,
    real: &Layout,
    real_len: usize,
    classes: &[Class],
    editions: &[EditionString<'_>],
) -> Vec<u8> {
    let mut b = built.clone();
    for c in Class::ALL.iter().filter(|c| classes.contains(c)) {
        adopt(&mut b, real, *c, editions);
    }
    b.to_image(real_len)
}

/// Every difference between `built` and the real EEPROM `real`, each with its class. Fails
/// with the differing byte ranges when the known classes do not account for all of them.
pub fn explain(
    built: &[u8],
    real: &[u8],
    editions: &[EditionString<'_>],
) -> Result<Vec<(Class, String)>, String> {
    let real_l = Layout::parse(real).ok_or("the real image has no category list")?;
    let mut b = Layout::parse(built).ok_or("the built image has no category list")?;
    let mut out = Vec::new();
    for c in Class::ALL {
        out.extend(
            adopt(&mut b, &real_l, c, editions)
                .into_iter()
                .map(|d| (c, d)),
        );
    }
    let image = b.to_image(real.len());
    if image == real {
        return Ok(out);
    }
    let mut ranges = Vec::new();
    let mut i = 0;
    let n = image.len().max(real.len());
    while i < n {
        if image.get(i) != real.get(i) {
            let start = i;
            while i < n && image.get(i) != real.get(i) {
                i += 1;
            }
            ranges.push(format!("bytes 0x{start:04x}..0x{i:04x}"));
        } else {
            i += 1;
        }
    }
    Err(format!(
        "unexplained differences after adopting every known class: {}",
        ranges.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_round_trip_and_classes() {
        let mut fixed = vec![0u8; FIXED_AREA_LEN];
        fixed[0x42] = 7; // word 0x21: production data
        let real = Layout {
            fixed,
            categories: vec![
                (3, vec![1, 2]),
                (STRINGS, join_strings(&[b"old".to_vec(), b"x".to_vec()])),
                (GENERAL, vec![0, 0, 0, 0, 0x0C, 0]),
            ],
        };
        let img = real.to_image(64 * 4);
        assert_eq!(Layout::parse(&img).unwrap(), real);
        // END as the last two bytes of an image cut right after it.
        let cut = real.to_image(0);
        assert_eq!(&cut[cut.len() - 2..], &[0xFF, 0xFF]);
        assert_eq!(Layout::parse(&cut).unwrap(), real);
        assert!(Layout::parse(&cut[..cut.len() - 1]).is_none());
        let built = Layout {
            fixed: vec![0u8; FIXED_AREA_LEN],
            categories: vec![
                (STRINGS, join_strings(&[b"new!".to_vec(), b"x".to_vec()])),
                (GENERAL, vec![0; 6]),
            ],
        };
        let ed = [EditionString {
            programmed: "old",
            esi: "new!",
        }];
        let list = explain(&built.to_image(img.len()), &img, &ed).unwrap();
        let classes: Vec<Class> = list.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            classes,
            [
                Class::PerUnit,
                Class::PerUnit,
                Class::EsiEdition,
                Class::Undocumented
            ]
        );
        // Without the edition list, the string stays unexplained.
        let e = explain(&built.to_image(img.len()), &img, &[]).unwrap_err();
        assert!(e.contains("bytes 0x"), "{e}");
        // Leaving a class out leaves its bytes as built.
        let partial = with_classes(&built, &real, img.len(), &[Class::PerUnit], &ed);
        assert_ne!(partial, img);
        let all = with_classes(&built, &real, img.len(), &Class::ALL, &ed);
        assert_eq!(all, img);
    }
}
