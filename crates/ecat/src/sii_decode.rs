//! Filling a [`SubDevice`] from its SII image: identity and mailbox from the fixed area, names
//! from STRINGS via GENERAL, SyncManagers, FMMU usage and PDOs from their categories.
//!
//! Lenient where a real device may be imperfect (a bad CRC is kept as a warning: the ESC has
//! already reported it, and the rest of the image may still be right), strict where the image
//! cannot be used at all (shorter than the fixed area).

use crate::subdevice::Identity;
use crate::subdevice::{MailboxArea, MailboxInfo, Pdo, PdoEntry, SiiSyncManager, SubDevice};
use ecat_wire::sii::{
    self, Categories, CategoryType, FixedAreaRepr, GeneralRepr, Pdos, Strings, SyncManagers,
};

impl SubDevice {
    /// Decode `image` into this SubDevice's identity, names, mailbox, SMs and PDOs.
    /// Problems that leave the image usable are collected in [`SubDevice::sii_warnings`].
    pub fn apply_sii(&mut self, image: &[u8]) -> Result<(), String> {
        let (fixed, crc) = FixedAreaRepr::parse_any(image).map_err(|_| {
            format!(
                "image is only {} bytes; the fixed area needs 128",
                image.len()
            )
        })?;
        self.sii_warnings.clear();
        if !crc.ok() {
            self.sii_warnings.push(format!(
                "checksum of words 0-6 is 0x{:02X}, expected 0x{:02X}",
                crc.stored, crc.computed
            ));
        }
        self.identity = Identity {
            vendor_id: fixed.vendor_id,
            product_code: fixed.product_code,
            revision: fixed.revision,
            serial: fixed.serial,
        };
        let area = |offset, size| MailboxArea { offset, size };
        self.mailbox = MailboxInfo {
            rx: area(fixed.std_rx_mailbox_offset, fixed.std_rx_mailbox_size),
            tx: area(fixed.std_tx_mailbox_offset, fixed.std_tx_mailbox_size),
            boot_rx: area(fixed.boot_rx_mailbox_offset, fixed.boot_rx_mailbox_size),
            boot_tx: area(fixed.boot_tx_mailbox_offset, fixed.boot_tx_mailbox_size),
            protocols: fixed.mailbox_protocols.0,
        };
        self.sii = image.to_vec();

        let mut strings = Strings::new(&[]);
        let mut general = None;
        let mut syncm: &[u8] = &[];
        let mut txpdo: &[u8] = &[];
        let mut rxpdo: &[u8] = &[];
        for c in Categories::new(image) {
            match c {
                Ok(c) => match c.kind {
                    CategoryType::Strings => strings = Strings::new(c.data),
                    CategoryType::General => general = GeneralRepr::parse(c.data).ok(),
                    CategoryType::Fmmu => self.fmmu_usage = c.data.to_vec(),
                    CategoryType::SyncM => syncm = c.data,
                    CategoryType::TxPdo => txpdo = c.data,
                    CategoryType::RxPdo => rxpdo = c.data,
                    CategoryType::Dc => {
                        if let Ok(modes) = sii::DcModes::new_checked(c.data) {
                            self.dc_assign_activate = modes
                                .map(|m| m.assign_activate)
                                .find(|a| a & 0x0300 != 0)
                                .unwrap_or(0);
                        }
                    }
                    _ => {}
                },
                Err(e) => {
                    self.sii_warnings.push(format!("category list: {e}"));
                    break;
                }
            }
        }
        let text = |i: u8| strings.text(i).unwrap_or_default().trim().to_string();
        if let Some(g) = general {
            self.name = text(g.name_index);
            self.order = text(g.order_index);
            self.group = text(g.group_index);
            self.coe_details = g.coe_details.0;
            self.general_flags = g.flags.0;
            self.ebus_current_ma = g.ebus_current_ma;
        }
        if self.name.is_empty() {
            self.name = format!("0x{:08X}:0x{:08X}", fixed.vendor_id, fixed.product_code);
        }
        match SyncManagers::new_checked(syncm) {
            Ok(sms) => {
                self.sync_managers = sms
                    .map(|s| SiiSyncManager {
                        start: s.start,
                        length: s.length,
                        control: s.control,
                        enable: s.enable,
                        kind: s.kind.to_u8(),
                    })
                    .collect()
            }
            Err(e) => self.sii_warnings.push(format!("SYNCM category: {e}")),
        }
        self.tx_pdos = decode_pdos(txpdo, &strings, &mut self.sii_warnings);
        self.rx_pdos = decode_pdos(rxpdo, &strings, &mut self.sii_warnings);
        Ok(())
    }
}

fn decode_pdos(data: &[u8], strings: &sii::Strings<'_>, warnings: &mut Vec<String>) -> Vec<Pdo> {
    let text = |i: u8| strings.text(i).unwrap_or_default().trim().to_string();
    let mut out = Vec::new();
    for p in Pdos::new(data) {
        match p {
            Ok(p) => out.push(Pdo {
                index: p.repr.index,
                sync_manager: p.repr.sync_manager,
                name: text(p.repr.name_index),
                entries: p
                    .entries()
                    .map(|e| PdoEntry {
                        index: e.index,
                        subindex: e.subindex,
                        bits: e.bit_len,
                        data_type: e.data_type,
                        name: text(e.name_index),
                    })
                    .collect(),
            }),
            Err(e) => {
                warnings.push(format!("PDO category: {e}"));
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str) -> SubDevice {
        let path = format!("{}/../../testdata/sii/{name}", env!("CARGO_MANIFEST_DIR"));
        let img = std::fs::read(&path).unwrap();
        let mut s = SubDevice::default();
        s.apply_sii(&img).unwrap();
        assert!(s.sii_warnings.is_empty(), "{name}: {:?}", s.sii_warnings);
        s
    }

    #[test]
    fn real_dumps_decode() {
        let ek = load("ek1100-eeprom-dump.bin");
        assert_eq!(ek.identity.vendor_id, 2);
        assert_eq!(ek.identity.product_code, 0x044C_2C52);
        assert_eq!(ek.identity.revision, 0x0012_0000);
        assert!(ek.name.starts_with("EK1100"), "{}", ek.name);
        assert!(!ek.mailbox.present());
        let el = load("el2889.bin");
        assert!(el.name.starts_with("EL2889"), "{}", el.name);
        assert_eq!(el.output_bits(), 16);
        assert_eq!(el.input_bits(), 0);
    }

    #[test]
    fn short_image_is_refused() {
        let mut s = SubDevice::default();
        let e = s.apply_sii(&[0u8; 20]).unwrap_err();
        assert!(e.contains("20 bytes"), "{e}");
    }
}
