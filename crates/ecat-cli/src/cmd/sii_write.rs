//! `ecat sii write`: write an SII image into one SubDevice's EEPROM through the ESC's EEPROM
//! registers (IgH: `ethercat sii_write`), then read it back and compare.
//!
//! The image is checked first (even length, CRC of words 0–6, a category list that ends with
//! END, fits the EEPROM size it declares); `--force` skips those checks as IgH's does. Words
//! equal to what the EEPROM already holds (as read at scan) are not written again, which
//! spares a real EEPROM's write cycles and a few ms per word. `write_words` and `read_back`
//! are shared with `ecat alias`.

use super::{open_and_scan, CmdResult};
use crate::select::Select;
use crate::BusArgs;
use ecat::MainDevice;
use ecat_wire::sii::{Categories, CrcCheck, FixedAreaRepr};
use std::io::Read;
use std::path::PathBuf;

/// Options of `ecat sii write`.
#[derive(clap::Args, Debug)]
pub struct WriteArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// Write even if the image fails the checks (length, CRC, category list, size)
    #[arg(long)]
    force: bool,
    /// The image file ("-" for stdin)
    file: PathBuf,
}

/// Why an image would not be a valid SII, or `None` if it is.
pub fn image_problem(image: &[u8]) -> Option<String> {
    if image.len() < 0x80 + 2 {
        return Some(format!(
            "{} bytes is too short for an SII image (at least 130: fixed area and END)",
            image.len()
        ));
    }
    if !image.len().is_multiple_of(2) {
        return Some(format!(
            "{} bytes is an odd length; the EEPROM holds 16-bit words",
            image.len()
        ));
    }
    let crc = CrcCheck::of(image).ok()?;
    if !crc.ok() {
        return Some(format!(
            "the checksum (word 7) is 0x{:02x} but words 0-6 give 0x{:02x}",
            crc.stored, crc.computed
        ));
    }
    for c in Categories::new(image) {
        if let Err(e) = c {
            return Some(format!("the category list is broken: {e}"));
        }
    }
    if length_to_end(image) == image.len() && !image.ends_with(&[0xFF, 0xFF]) {
        return Some("the category list does not end with END (0xFFFF)".into());
    }
    if let Ok(f) = FixedAreaRepr::parse(image) {
        if image.len() as u32 > f.eeprom_bytes() {
            return Some(format!(
                "{} bytes do not fit the {}-byte EEPROM the image declares (word 0x3E)",
                image.len(),
                f.eeprom_bytes()
            ));
        }
    }
    None
}

/// Length of the image up to and including its END marker (what a read returns), or the
/// whole image when it has none.
pub fn length_to_end(image: &[u8]) -> usize {
    let mut pos = 0x80;
    while pos + 4 <= image.len() {
        let kind = u16::from_le_bytes([image[pos], image[pos + 1]]);
        if kind == 0xFFFF {
            return pos + 2;
        }
        let words = u16::from_le_bytes([image[pos + 2], image[pos + 3]]) as usize;
        pos += 4 + 2 * words;
    }
    image.len()
}

/// Write the words of `image` that differ from `current` (what the EEPROM holds as far as
/// known). Returns (written, unchanged).
pub fn write_words(
    md: &mut MainDevice,
    pos: usize,
    image: &[u8],
    current: &[u8],
) -> Result<(usize, usize), ecat::Error> {
    let (mut written, mut same) = (0, 0);
    for (w, pair) in image.chunks(2).enumerate() {
        let value = u16::from_le_bytes([pair[0], *pair.get(1).unwrap_or(&0xFF)]);
        let old = current
            .get(2 * w..2 * w + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]));
        if old == Some(value) {
            same += 1;
            continue;
        }
        md.write_sii_word(pos, w as u16, value)?;
        written += 1;
    }
    Ok((written, same))
}

/// Read the EEPROM of the SubDevice at `pos` again (up to its END marker).
pub fn read_back(md: &mut MainDevice, pos: usize) -> Result<Vec<u8>, ecat::Error> {
    let who = md.subdevice(pos)?.who();
    ecat::eeprom::read_images(md.bus(), &[who])
        .pop()
        .unwrap_or_else(|| Ok(Vec::new()))
}

/// The first byte offset where `got` differs from `want` over `want`'s length.
pub fn first_difference(want: &[u8], got: &[u8]) -> Option<usize> {
    (0..want.len()).find(|&i| got.get(i) != Some(&want[i]))
}

/// Run `ecat sii write`.
pub fn run(a: WriteArgs) -> CmdResult {
    let image = if a.file.as_os_str() == "-" {
        let mut v = Vec::new();
        std::io::stdin().read_to_end(&mut v)?;
        v
    } else {
        std::fs::read(&a.file).map_err(|e| format!("{}: cannot read: {e}", a.file.display()))?
    };
    if let Some(p) = image_problem(&image) {
        if !a.force {
            return Err(format!(
                "{} is not a valid SII image: {p} (--force writes it anyway)",
                a.file.display()
            )
            .into());
        }
        eprintln!("ecat: writing despite: {p}");
    }
    let mut md = open_and_scan(&a.bus)?;
    let pos = a.select.resolve_one(md.subdevices())?;
    let sub = md.subdevice(pos)?;
    let label = format!("SubDevice {pos} ({})", sub.name);
    let current = sub.sii.clone();
    let mut image = image;
    if !image.len().is_multiple_of(2) {
        image.push(0xFF);
    }
    let (written, same) = write_words(&mut md, pos, &image, &current)?;
    let back = read_back(&mut md, pos)?;
    let check = length_to_end(&image);
    if let Some(i) = first_difference(&image[..check], &back) {
        return Err(format!(
            "{label}: read back differs from the image at byte 0x{i:04x} (word 0x{:04x}): wrote 0x{:02x}, read {}",
            i / 2,
            image[i],
            back.get(i).map(|b| format!("0x{b:02x}")).unwrap_or_else(|| "nothing (image ended)".into())
        )
        .into());
    }
    println!(
        "{label}: wrote {written} words ({same} already equal) of a {}-byte image; read back and verified {check} bytes",
        image.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems() {
        assert!(image_problem(&[0; 10]).unwrap().contains("too short"));
        let mut img = vec![0u8; 0x80];
        let fixed = FixedAreaRepr {
            eeprom_size: 15,
            ..Default::default()
        };
        fixed.emit(&mut img).unwrap();
        img.extend_from_slice(&[0xFF, 0xFF]);
        assert_eq!(image_problem(&img), None);
        assert_eq!(length_to_end(&img), 0x82);
        img[0] ^= 1;
        assert!(image_problem(&img).unwrap().contains("checksum"));
    }
}
