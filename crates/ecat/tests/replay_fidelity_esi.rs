//! ESI-built devices against the real ones: the captures of a real EK1100 + EL2828 + EL2889
//! are replayed (`ecat_sim::replay`, what `ecat replay` runs) against the same three devices
//! built from Beckhoff's ESI files (`testdata/networks/replay-esi-ek1100-el2828-el2889.toml`,
//! German names as Beckhoff programs them) and against the network built from their real SII
//! dumps; both figures are printed.
//!
//! What must hold: apart from the content of the EEPROM, the ESI-built network answers at
//! least as faithfully as the dump-built one (every register, working counter, address and
//! IRQ field; same ESC chips). The EEPROM content cannot match fully: the real EEPROMs carry
//! what no ESI describes. Every remaining difference is classified
//! (`ecat_config::sii_diff::Class`: per-unit data, ESI edition, undocumented) by replaying
//! again against the ESI-built images with the real EEPROMs' content of the known classes
//! adopted: with all classes the replay must be exactly as faithful as the dumps' (so no
//! difference is left unexplained), and a difference belongs to each class whose leaving out
//! brings it back. The figure without per-unit data (ESI images plus the per-unit content) is
//! printed too.

use ecat::capture_read::Capture;
use ecat_config::sii_diff::{with_classes, Class, Layout, KNOWN_EDITION_STRINGS};
use ecat_sim::replay::{replay, CapturedFrame, Report};
use ecat_sim::Network;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

const DUMPS: &str = "replay-ek1100-el2828-el2889.toml";
const ESI: &str = "replay-esi-ek1100-el2828-el2889.toml";
const DUMP_FILES: [&str; 3] = ["ek1100-eeprom-dump.bin", "el2828.bin", "el2889.bin"];
const EEPROM_DATA: &str = "FPRD 0x0508 EEPROM data";

fn replay_on(capture: &str, net: &mut Network) -> Report {
    let bytes = std::fs::read(testdata().join("captures").join(capture)).unwrap();
    let cap = Capture::parse(&bytes).unwrap();
    let frames: Vec<CapturedFrame> = cap
        .packets
        .iter()
        .map(|p| CapturedFrame {
            ts_ns: p.ts_ns,
            data: p.data,
        })
        .collect();
    replay(net, &frames)
}

fn network(file: &str) -> Network {
    Network::from_file(&testdata().join("networks").join(file)).unwrap()
}

/// Datagrams reading EEPROM data (the group of any run that differs there; the requests
/// are the same for all runs).
fn eeprom_reads(reports: &[&Report]) -> usize {
    reports
        .iter()
        .flat_map(|r| r.groups.iter())
        .filter(|g| g.key == EEPROM_DATA)
        .map(|g| g.compared)
        .max()
        .unwrap_or(0)
}

/// Fidelity (%) over the datagrams without DC time values that do not read EEPROM data.
fn without_eeprom_content(r: &Report, eeprom: usize) -> (f64, usize) {
    let differing_eeprom = r
        .plain_differences()
        .filter(|d| d.key == EEPROM_DATA)
        .count();
    let n = r.plain - eeprom;
    let equal = r.plain_equal - (eeprom - differing_eeprom);
    (100.0 * equal as f64 / n.max(1) as f64, n)
}

/// The ESI-built images of the three devices with `classes` adopted from the real dumps,
/// replayed as a network of SII images (same chips: both kinds of entry take the chip of
/// the real device).
struct Variants {
    dir: PathBuf,
    built: Vec<Layout>,
    real: Vec<(Layout, usize)>,
}

impl Variants {
    fn new(capture: &str) -> Variants {
        let esi = network(ESI);
        let built = (0..DUMP_FILES.len())
            .map(|i| Layout::parse(esi.subdevice(i).unwrap().sii()).unwrap())
            .collect();
        let real = DUMP_FILES
            .iter()
            .map(|f| {
                let b = std::fs::read(testdata().join("sii").join(f)).unwrap();
                (Layout::parse(&b).unwrap(), b.len())
            })
            .collect();
        let dir = std::env::temp_dir().join(format!(
            "ecat-replay-esi-{}-{}",
            std::process::id(),
            capture.replace('.', "-")
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Variants { dir, built, real }
    }

    fn network(&self, classes: &[Class]) -> Network {
        let mut toml = String::new();
        for (i, (b, (r, len))) in self.built.iter().zip(&self.real).enumerate() {
            let image = with_classes(b, r, *len, classes, KNOWN_EDITION_STRINGS);
            let path = self.dir.join(format!("{i}.bin"));
            std::fs::write(&path, image).unwrap();
            toml.push_str(&format!(
                "[[subdevice]]\nsii = {:?}\n\n",
                path.display().to_string()
            ));
        }
        Network::from_toml_str(&toml, "classes.toml", &self.dir).unwrap()
    }
}

impl Drop for Variants {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn compare(capture: &str) {
    let dumps = replay_on(capture, &mut network(DUMPS));
    let esi = replay_on(capture, &mut network(ESI));
    let eeprom = eeprom_reads(&[&dumps, &esi]);
    let (d_rest, n) = without_eeprom_content(&dumps, eeprom);
    let (e_rest, n2) = without_eeprom_content(&esi, eeprom);
    let variants = Variants::new(capture);
    let all = replay_on(capture, &mut variants.network(&Class::ALL));
    let per_unit = replay_on(capture, &mut variants.network(&[Class::PerUnit]));
    println!(
        "{capture}: fidelity built from SII dumps {:.2} % ({} of {}), built from ESI {:.2} % ({} of {}); \
         ESI without per-unit data {:.2} % ({} of {}); without EEPROM content: dumps {d_rest:.2} %, \
         ESI {e_rest:.2} % of {n} datagrams",
        dumps.fidelity_percent,
        dumps.plain_equal,
        dumps.plain,
        esi.fidelity_percent,
        esi.plain_equal,
        esi.plain,
        per_unit.fidelity_percent,
        per_unit.plain_equal,
        per_unit.plain,
    );
    assert_eq!(n, n2, "the same requests");
    assert_eq!(esi.unanswered + esi.orphan_answers + esi.sim_lost, 0);
    assert!(
        e_rest >= d_rest,
        "ESI-built {e_rest} % < dump-built {d_rest} %"
    );
    let other: Vec<String> = esi
        .plain_differences()
        .filter(|d| d.key != EEPROM_DATA || d.mismatch.wkc || d.mismatch.adp || d.mismatch.irq)
        .map(|d| format!("packet {} {} ({})", d.packet, d.key, d.mismatch.describe()))
        .collect();
    assert!(other.is_empty(), "{}", other.join("\n"));
    assert_eq!(esi.dc_time_structure_equal, esi.dc_time);

    // With every known class adopted, the EEPROM answers are those of the dumps.
    assert_eq!(
        (all.plain_equal, all.plain),
        (dumps.plain_equal, dumps.plain),
        "differences outside the known classes remain"
    );
    // Each difference belongs to the classes whose leaving out brings it back.
    let without: Vec<(Class, Report)> = Class::ALL
        .iter()
        .map(|c| {
            let rest: Vec<Class> = Class::ALL.iter().copied().filter(|x| x != c).collect();
            (*c, replay_on(capture, &mut variants.network(&rest)))
        })
        .collect();
    let mut tally: BTreeMap<(u16, String), usize> = BTreeMap::new();
    let mut unclassified = Vec::new();
    println!("differences of the ESI-built network, classified:");
    for d in esi.plain_differences() {
        let classes: Vec<&str> = without
            .iter()
            .filter(|(_, r)| {
                r.plain_differences()
                    .any(|x| (x.packet, x.datagram) == (d.packet, d.datagram))
            })
            .map(|(c, _)| c.name())
            .collect();
        if classes.is_empty() {
            unclassified.push(format!("packet {} {}", d.packet, d.key));
        }
        let class = classes.join(" + ");
        println!(
            "  packet {:5} {} adp 0x{:04x}: [{class}]",
            d.packet, d.key, d.adp
        );
        *tally.entry((d.adp, class)).or_default() += 1;
    }
    println!("by station and class:");
    for ((adp, class), count) in &tally {
        println!("  0x{adp:04x} {count:4}  {class}");
    }
    assert!(
        unclassified.is_empty(),
        "differences no single class explains: {}",
        unclassified.join(", ")
    );
}

#[test]
fn esi_built_devices_answer_the_capture_like_the_dump_built_ones() {
    compare("replay-ek1100-el2828-el2889.pcapng");
}

#[test]
fn esi_built_devices_answer_the_dc_capture_like_the_dump_built_ones() {
    compare("replay-dc.pcapng");
}
