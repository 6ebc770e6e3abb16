//! IgH's PDO configuration rules on the simulator, end to end (see `ecat::pdo_setup`):
//! programs written for IgH configure PDOs a terminal has fixed, name the mailbox sync
//! managers, or ask for a mapping that does not fit; ecat must behave as IgH does.
//! Beckhoff terminals are built by the simulator from their ESI (`../shared/testdata/esi`, or
//! the repository's subset), CiA 402 drives from the `servo6` preset; all on virtual time.

use ecat::clock::VirtualTime;
use ecat::config::{Direction, EntryConfig, PdoConfig, SubDeviceConfig, SyncConfig};
use ecat::link::sim::SimLink;
use ecat::pdo_setup::PdoWrites;
use ecat::runtime::{Activation, Runtime};
use ecat::supervisor::Event;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::path::{Path, PathBuf};

fn esi_dir() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    ["../shared/testdata/esi", "../../shared/testdata/esi"]
        .iter()
        .map(|d| repo.join(d))
        .find(|d| d.join("Beckhoff_EL4xxx.xml").is_file())
        .unwrap_or_else(|| repo.join("testdata/esi"))
}

/// EK1100, EL3102, EL4102 (IgH's own example's analog terminals), scanned on virtual time.
fn analog_line() -> MainDevice {
    let dir = esi_dir();
    let text = format!(
        "esi_dirs = [{:?}]\n\
         [[subdevice]]\nesi = \"Beckhoff_EK11xx.xml\"\ntype = \"EK1100\"\n\
         [[subdevice]]\nesi = \"Beckhoff_EL31xx.xml\"\ntype = \"EL3102\"\n\
         [[subdevice]]\nesi = \"Beckhoff_EL4xxx.xml\"\ntype = \"EL4102\"\n",
        dir.display().to_string()
    );
    let net = Network::from_toml_str(&text, "analog.toml", &dir).unwrap();
    open(net)
}

fn open(net: Network) -> MainDevice {
    let link = SimLink::with_network(net, "sim:test".into(), "test".into())
        .on_virtual_time(VirtualTime::new());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    md
}

fn entry(index: u16, subindex: u8, bits: u8) -> EntryConfig {
    EntryConfig {
        index,
        subindex,
        bits,
    }
}

fn sync(index: u8, direction: Direction, pdos: Vec<(u16, Vec<EntryConfig>)>) -> SyncConfig {
    SyncConfig {
        index,
        direction,
        pdos: pdos
            .into_iter()
            .map(|(index, entries)| PdoConfig { index, entries })
            .collect(),
        domain: 0,
    }
}

/// IgH's example for an EL3102: the older revisions' entry names, `cstruct`'s shape with the
/// mailbox sync managers.
fn igh_el3102() -> SubDeviceConfig {
    let ch = |pdo: u16, obj: u16| (pdo, vec![entry(obj, 1, 8), entry(obj, 2, 16)]);
    SubDeviceConfig {
        sync: vec![
            sync(0, Direction::Output, vec![]),
            sync(1, Direction::Input, vec![]),
            sync(2, Direction::Output, vec![]),
            sync(
                3,
                Direction::Input,
                vec![ch(0x1A00, 0x3101), ch(0x1A01, 0x3102)],
            ),
        ],
    }
}

/// IgH's example for an EL4102 (entries 0x3001:01, 0x3002:01 of the older revisions).
fn igh_el4102(bits: u8) -> SubDeviceConfig {
    SubDeviceConfig {
        sync: vec![
            sync(0, Direction::Output, vec![]),
            sync(1, Direction::Input, vec![]),
            sync(
                2,
                Direction::Output,
                vec![
                    (0x1600, vec![entry(0x3001, 1, bits)]),
                    (0x1601, vec![entry(0x3002, 1, 16)]),
                ],
            ),
            sync(3, Direction::Input, vec![]),
        ],
    }
}

fn events(rt: &mut Runtime) -> Vec<Event> {
    std::iter::from_fn(|| rt.next_event()).collect()
}

fn cycles(rt: &mut Runtime, n: u64) {
    for _ in 0..n {
        rt.tx_rx(1_000_000).unwrap();
    }
}

#[test]
fn igh_example_terminals_with_fixed_pdos_reach_op() {
    let mut md = analog_line();
    let mut configs = md.discover_configs().unwrap();
    configs[1] = igh_el3102();
    configs[2] = igh_el4102(16);
    let mut rt = md
        .activate(Activation {
            configs: Some(configs),
            ..Default::default()
        })
        .unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 3_000)
        .expect("IgH's example configuration reaches OP");
    let ev = events(&mut rt);
    assert!(
        !ev.iter().any(|e| matches!(e, Event::StartupFailed { .. })),
        "no PDO write may fail hard: {ev:#?}"
    );
    // No write to the mailbox sync managers' assignment, and the fixed mappings were not
    // written: what differs is said once as a warning per terminal.
    let warnings: Vec<String> = ev
        .iter()
        .filter(|e| matches!(e, Event::PdoWarning { .. }))
        .map(|e| e.to_string())
        .collect();
    for w in &warnings {
        println!("{w}");
    }
    assert!(
        warnings.iter().any(|w| w.contains("0x3001:01/16")),
        "the EL4102's difference is reported: {warnings:#?}"
    );
    assert!(
        warnings
            .iter()
            .all(|w| !w.contains("0x1C10") && !w.contains("0x1C11")),
        "{warnings:#?}"
    );
}

#[test]
fn a_mapping_that_differs_in_size_is_reported_with_the_al_code() {
    let mut md = analog_line();
    let mut configs = md.discover_configs().unwrap();
    // 32 bits where the terminal's fixed PDO has 16: its SM2 is 2 bytes too long.
    configs[2] = igh_el4102(32);
    let mut rt = md
        .activate(Activation {
            configs: Some(configs),
            ..Default::default()
        })
        .unwrap();
    assert!(rt.run_until_state(AlState::Op, 1_000_000, 300).is_err());
    let ev = events(&mut rt);
    let mismatch = ev
        .iter()
        .find_map(|e| match e {
            Event::PdoMismatch {
                who,
                code,
                differences,
                ..
            } => Some((who.position, code.0, differences.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("a PDO mismatch is reported: {ev:#?}"));
    println!("{}", mismatch.2);
    assert_eq!(mismatch.0, 2);
    assert_eq!(mismatch.1, 0x001D, "invalid output configuration");
    assert!(
        mismatch.2.contains("SM2") && mismatch.2.contains("0x3001:01/32"),
        "{}",
        mismatch.2
    );
    assert!(
        !ev.iter().any(|e| matches!(e, Event::StartupFailed { .. })),
        "{ev:#?}"
    );
    // The rest of the bus runs.
    let states: Vec<bool> = rt.supervisor().states().map(|s| s.running).collect();
    assert_eq!(states, vec![true, true, false]);
}

/// A drive that refuses a mapping write (an object that cannot be mapped): one warning naming
/// the PDO, the object and the abort code, no hard failure; its PDO is left with the entries
/// written before the refusal (as under IgH, whose mapping writes also start with count 0), so
/// it refuses SAFEOP, and that is reported with the PDOs that differ, while the rest of the
/// bus reaches OP. A write of the mailbox SMs' assignment never happens.
#[test]
fn a_refused_pdo_write_is_one_warning_and_is_reported_at_safeop() {
    let mut md = open(Network::open("servo6").unwrap());
    let n = md.subdevices().len();
    let mut configs = md.discover_configs().unwrap();
    let drive = (0..n)
        .find(|&p| configs[p].entry_bit_offset(0x6041, 0).is_some())
        .expect("a drive");
    let mut c = configs[drive].clone();
    c.sync.insert(0, sync(1, Direction::Input, vec![]));
    c.sync.insert(0, sync(0, Direction::Output, vec![]));
    let tx = c
        .sync
        .iter_mut()
        .find(|s| s.direction == Direction::Input && !s.pdos.is_empty())
        .unwrap();
    // The identity object's vendor id (32 bits) is no process data object.
    let e = tx.pdos[0]
        .entries
        .iter_mut()
        .find(|e| e.bits == 32)
        .expect("a 32-bit input entry");
    *e = entry(0x1018, 1, 32);
    configs[drive] = c;
    let mut rt = md
        .activate(Activation {
            configs: Some(configs),
            ..Default::default()
        })
        .unwrap();
    cycles(&mut rt, 1);
    assert!(rt.run_until_state(AlState::Op, 1_000_000, 600).is_err());
    let ev = events(&mut rt);
    let mine = |e: &&Event| match e {
        Event::PdoWarning { who, .. } | Event::PdoMismatch { who, .. } => {
            who.position as usize == drive
        }
        _ => false,
    };
    let refused: Vec<String> = ev
        .iter()
        .filter(|e| matches!(e, Event::PdoWarning { .. }))
        .filter(mine)
        .map(|e| e.to_string())
        .collect();
    println!("{}", refused.join("\n"));
    assert_eq!(
        refused.len(),
        1,
        "one warning per configuration: {refused:#?}"
    );
    assert!(refused[0].contains("mapping of PDO 0x1A"), "{}", refused[0]);
    assert!(
        refused[0].contains("0x06040041"),
        "the abort code: {}",
        refused[0]
    );
    assert!(
        !ev.iter().any(|e| matches!(e, Event::StartupFailed { .. })),
        "a PDO write never fails hard: {ev:#?}"
    );
    let mismatch = ev
        .iter()
        .filter(|e| matches!(e, Event::PdoMismatch { .. }))
        .find(mine)
        .map(|e| e.to_string())
        .unwrap_or_else(|| panic!("the refused SAFEOP names the PDOs: {ev:#?}"));
    println!("{mismatch}");
    assert!(
        mismatch.contains("SM3") && mismatch.contains("0x1018:01/32"),
        "{mismatch}"
    );
    let running = rt.supervisor().states().filter(|s| s.running).count();
    assert_eq!(running, n - 1, "the other drives reach OP");
}

/// Without knowledge of the current configuration (`Known(None)`) everything the SubDevice
/// allows is written, which is what a power-cycled device gets; with it, nothing is written
/// where nothing differs.
#[test]
fn what_the_scan_found_is_not_written_again() {
    let mut md = open(Network::open("servo6").unwrap());
    let configs = md.discover_configs().unwrap();
    let mut rt = md
        .activate(Activation {
            configs: Some(configs),
            pdo_writes: PdoWrites::FromScan,
            ..Default::default()
        })
        .unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 3_000).unwrap();
    let ev = events(&mut rt);
    assert!(
        !ev.iter().any(|e| matches!(e, Event::PdoWarning { .. })),
        "{ev:#?}"
    );
}
