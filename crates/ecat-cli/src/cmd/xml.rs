//! `ecat xml`: an ESI-like description (ETG.2000 `EtherCATInfo`) of each scanned SubDevice,
//! as IgH's `ethercat xml` prints it: identity, names, SyncManagers and the PDOs with their
//! entries, taken from the current PDO configuration (CoE where the SubDevice has it, the SII
//! otherwise) with the names the SII gives.
//!
//! One XML document, as IgH prints it: the declaration, then a bare `EtherCATInfo` for one
//! SubDevice (`-p 3 > el2008.xml` is a file other tools read as an ESI), or an
//! `EtherCATInfoList` holding one indented `EtherCATInfo` per SubDevice. The vendor id is
//! decimal and each description opens with `<!-- Slave N -->`, as in IgH's output; other
//! numbers use the ESI's `#x` hex notation; text is escaped, never put in CDATA, so any name
//! survives.

use super::pdos::{chosen, entry_name, pdo_name, sii_entry, Args};
use super::CmdResult;
use ecat::config::{Direction, SubDeviceConfig};
use ecat::SubDevice;
use std::fmt::Write;

/// Run `ecat xml` (the same options as `ecat cstruct`; through a running application's
/// master with -m N, its configured PDOs).
pub fn run(a: Args) -> CmdResult {
    let (subs, _, cs) = chosen(&a)?;
    let infos: Vec<_> = cs.into_iter().map(|(p, c)| (subs[p].clone(), c)).collect();
    print!("{}", document(&infos));
    Ok(())
}

/// The whole document for these SubDevices and their PDO configurations.
pub fn document(infos: &[(SubDevice, SubDeviceConfig)]) -> String {
    let mut o = String::from("<?xml version=\"1.0\" ?>\n");
    let list = infos.len() > 1;
    if list {
        o.push_str("<EtherCATInfoList>\n");
    }
    for (s, c) in infos {
        o.push_str(&info(s, c, if list { "  " } else { "" }));
    }
    if list {
        o.push_str("</EtherCATInfoList>\n");
    }
    o
}

/// Escape text for an XML element or attribute.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\n' => o.push_str("&#10;"),
            '\r' => o.push_str("&#13;"),
            c if (c as u32) < 0x20 && c != '\t' => {}
            c => o.push(c),
        }
    }
    o
}

/// The ESI data type name for a CoE data type code, falling back on the bit length when the
/// SII gives no type (code 0).
pub fn esi_type_name(code: u8, bits: u8) -> String {
    let known = match code {
        0x01 => Some("BOOL"),
        0x02 => Some("SINT"),
        0x03 => Some("INT"),
        0x04 => Some("DINT"),
        0x05 => Some("USINT"),
        0x06 => Some("UINT"),
        0x07 => Some("UDINT"),
        0x08 => Some("REAL"),
        0x11 => Some("LREAL"),
        0x15 => Some("LINT"),
        0x1B => Some("ULINT"),
        _ => None,
    };
    if let Some(k) = known {
        return k.to_string();
    }
    match (code, bits) {
        (0x09, _) => format!("STRING({})", bits / 8),
        (0x0A, _) => format!("OCTET_STRING[{}]", bits / 8),
        (0x30..=0x37, _) => format!("BIT{}", code - 0x2F),
        (_, 1) => "BOOL".into(),
        (_, 8) => "USINT".into(),
        (_, 16) => "UINT".into(),
        (_, 32) => "UDINT".into(),
        (_, 64) => "ULINT".into(),
        (_, n) => format!("BIT{n}"),
    }
}

fn entry_type(s: &SubDevice, pdo: u16, index: u16, sub: u8, bits: u8) -> String {
    esi_type_name(
        sii_entry(s, pdo, index, sub).map_or(0, |e| e.data_type),
        bits,
    )
}

/// The `EtherCATInfo` element for one SubDevice, each line indented by `ind`.
fn info(s: &SubDevice, c: &SubDeviceConfig, ind: &str) -> String {
    let mut body = String::new();
    let o = &mut body;
    let id = &s.identity;
    let _ = writeln!(o, "<EtherCATInfo>");
    let _ = writeln!(o, "  <!-- Slave {} -->", s.position);
    let _ = writeln!(o, "  <Vendor>");
    let _ = writeln!(o, "    <Id>{}</Id>", id.vendor_id);
    let _ = writeln!(o, "  </Vendor>");
    let _ = writeln!(o, "  <Descriptions>");
    let _ = writeln!(o, "    <Devices>");
    let _ = writeln!(o, "      <Device>");
    let _ = writeln!(
        o,
        "        <Type ProductCode=\"#x{:08x}\" RevisionNo=\"#x{:08x}\">{}</Type>",
        id.product_code,
        id.revision,
        esc(&s.order)
    );
    let _ = writeln!(o, "        <Name LcId=\"1033\">{}</Name>", esc(&s.name));
    if !s.group.is_empty() {
        let _ = writeln!(o, "        <GroupType>{}</GroupType>", esc(&s.group));
    }
    for f in &s.fmmu_usage {
        let what = match f {
            1 => "Outputs",
            2 => "Inputs",
            3 => "MBoxState",
            _ => continue,
        };
        let _ = writeln!(o, "        <Fmmu>{what}</Fmmu>");
    }
    for sm in &s.sync_managers {
        let what = match sm.kind {
            1 => "MBoxOut",
            2 => "MBoxIn",
            3 => "Outputs",
            4 => "Inputs",
            _ => "",
        };
        let _ = writeln!(
            o,
            "        <Sm Enable=\"{}\" StartAddress=\"#x{:04x}\" ControlByte=\"#x{:02x}\" \
             DefaultSize=\"{}\">{what}</Sm>",
            sm.enable & 1,
            sm.start,
            sm.control,
            sm.length
        );
    }
    for sync in &c.sync {
        let tag = match sync.direction {
            Direction::Output => "RxPdo",
            Direction::Input => "TxPdo",
        };
        for pdo in &sync.pdos {
            let _ = writeln!(
                o,
                "        <{tag} Sm=\"{}\" Fixed=\"1\" Mandatory=\"1\">",
                sync.index
            );
            let _ = writeln!(o, "          <Index>#x{:04x}</Index>", pdo.index);
            let _ = writeln!(o, "          <Name>{}</Name>", esc(&pdo_name(s, pdo.index)));
            for e in &pdo.entries {
                let _ = writeln!(o, "          <Entry>");
                let _ = writeln!(o, "            <Index>#x{:04x}</Index>", e.index);
                if e.index != 0 {
                    let _ = writeln!(o, "            <SubIndex>{}</SubIndex>", e.subindex);
                }
                let _ = writeln!(o, "            <BitLen>{}</BitLen>", e.bits);
                if e.index != 0 {
                    let name = entry_name(s, pdo.index, e.index, e.subindex);
                    let ty = entry_type(s, pdo.index, e.index, e.subindex, e.bits);
                    let _ = writeln!(o, "            <Name>{}</Name>", esc(&name));
                    let _ = writeln!(o, "            <DataType>{ty}</DataType>");
                }
                let _ = writeln!(o, "          </Entry>");
            }
            let _ = writeln!(o, "        </{tag}>");
        }
    }
    let _ = writeln!(o, "      </Device>");
    let _ = writeln!(o, "    </Devices>");
    let _ = writeln!(o, "  </Descriptions>");
    let _ = writeln!(o, "</EtherCATInfo>");
    body.lines().map(|l| format!("{ind}{l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat::config::{EntryConfig, PdoConfig, SyncConfig};
    use ecat::subdevice::SiiSyncManager;

    #[test]
    fn our_esi_reader_reads_what_xml_writes() {
        let mut s = SubDevice {
            order: "EL2008".into(),
            name: "EL2008 8Ch. Dig. Output 24V, 0.5A <µ&>".into(),
            sync_managers: vec![SiiSyncManager {
                start: 0x0F00,
                length: 1,
                control: 0x44,
                enable: 1,
                kind: 3,
            }],
            ..Default::default()
        };
        s.identity.vendor_id = 2;
        s.identity.product_code = 0x07D8_3052;
        s.identity.revision = 0x0010_0000;
        let c = SubDeviceConfig {
            sync: vec![SyncConfig {
                index: 0,
                direction: Direction::Output,
                pdos: vec![PdoConfig {
                    index: 0x1600,
                    entries: vec![EntryConfig {
                        index: 0x7000,
                        subindex: 1,
                        bits: 1,
                    }],
                }],
                domain: 0,
            }],
        };
        let text = document(&[(s.clone(), c.clone())]);
        assert!(text.starts_with("<?xml version=\"1.0\" ?>\n<EtherCATInfo>\n  <!-- Slave 0 -->\n"));
        let f = ecat_config::EsiFile::parse_str(&text, "ecat-xml").unwrap();
        let d = f.device("EL2008", None).unwrap();
        assert_eq!(
            (f.vendor.id, d.product_code, d.revision),
            (2, Some(0x07D8_3052), 0x0010_0000)
        );
        assert_eq!(d.name(1033), s.name);
        assert_eq!(d.sms.len(), 1);
        let p = d.rx_pdos().next().unwrap();
        assert_eq!(
            (p.index, p.sm, p.entries[0].index),
            (0x1600, Some(0), 0x7000)
        );
    }

    #[test]
    fn names_are_escaped_and_types_named() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(esi_type_name(0x07, 32), "UDINT");
        assert_eq!(esi_type_name(0, 1), "BOOL");
        assert_eq!(esi_type_name(0, 3), "BIT3");
        assert_eq!(esi_type_name(0x09, 64), "STRING(8)");
    }
}
