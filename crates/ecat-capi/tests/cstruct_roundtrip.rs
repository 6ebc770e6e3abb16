//! The `ecat cstruct` round trip: for every device type in the test data, the C arrays
//! `ecat cstruct` prints, compiled into an IgH-style C program that registers every PDO entry,
//! bring the type to OP with a complete domain.
//!
//! Device types: every simulator model with an ESC (one network, EK1100 first), and every type
//! of every ESI file in `../shared/testdata/esi` (else the repository's `testdata/esi`) as
//! `crates/ecat/tests/esi_all_types_sim.rs` takes them (those with a product code), one
//! network per file: an EK1100 first, then one of each type of the file. Per network: the
//! network is scanned in this process (for each slave's identity and DC assign-activate word),
//! `ecat cstruct -i sim:NET` prints the arrays, a generated header holds them verbatim with a
//! table of the slaves, and `tests/capi/cstruct_roundtrip.c` (built with it against `ecrt.h`
//! and the freshly linked `libethercat.so.1`) configures, registers, activates and cycles at
//! 1 ms. Slaves whose SII has a DC mode with SYNC0 get `ecrt_slave_config_dc` with that word
//! (some types refuse SAFEOP without SYNC0). Two networks run at a time.
//!
//! Prints one line per failure (type, file, AL state and AL status code) and closes with
//! `cstruct round trip: N of M device types reached OP with a complete domain, F failures`.
//! Needs `cc` and the `ecat` binary of the same build (the workspace build makes it); skipped
//! with a sentence otherwise (under CI=true a missing binary fails).

mod common;

use ecat::MainDevice;
use ecat_config::DeviceLibrary;
use ecat_wire::al::AlStatusCode;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The ESI test data: the shared folder beside the clone, else the repository's subset.
fn esi_dir() -> PathBuf {
    let repo = common::workspace();
    ["../shared/testdata/esi", "../../shared/testdata/esi"]
        .iter()
        .map(|d| repo.join(d))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| repo.join("testdata/esi"))
}

/// One simulated network of the round trip.
struct Net {
    /// Where its types come from (an ESI file name, or "simulator models").
    source: String,
    /// The network file's text.
    toml: String,
    /// Slaves before this position are not counted (the leading EK1100 of an ESI network
    /// whose file does not describe it).
    first_counted: usize,
}

/// The networks: the simulator's models, then one per ESI file.
fn networks() -> Vec<Net> {
    let mut nets = Vec::new();
    let mut toml = String::from("[[subdevice]]\nmodel = \"EK1100\"\n");
    for m in ecat_sim::devices::catalogue() {
        if !m.is_passive() && m.name != "EK1100" {
            let _ = writeln!(toml, "[[subdevice]]\nmodel = {:?}", m.name);
        }
    }
    nets.push(Net {
        source: "simulator models".into(),
        toml,
        first_counted: 0,
    });

    let dir = esi_dir();
    let lib = DeviceLibrary::new([&dir]);
    let mut files: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for d in lib.devices().expect("the ESI test data parses") {
        if d.product_code.is_some() {
            let file = d.file.path.as_ref().unwrap().file_name().unwrap();
            files
                .entry(file.to_string_lossy().into_owned())
                .or_default()
                .insert(d.type_name.clone());
        }
    }
    for (file, types) in files {
        let head = "[[subdevice]]\nesi = \"Beckhoff_EK11xx.xml\"\ntype = \"EK1100\"\n";
        let mut toml = format!("esi_dirs = [{:?}]\n", dir.display().to_string());
        let own_head = types.contains("EK1100");
        if own_head {
            let _ = writeln!(toml, "[[subdevice]]\nesi = {file:?}\ntype = \"EK1100\"");
        } else {
            toml += head;
        }
        for t in types.iter().filter(|t| *t != "EK1100") {
            let _ = writeln!(toml, "[[subdevice]]\nesi = {file:?}\ntype = {t:?}");
        }
        nets.push(Net {
            source: file,
            toml,
            first_counted: usize::from(!own_head),
        });
    }
    nets
}

/// The outcome for one device type.
struct Outcome {
    /// Type name and where it came from.
    what: String,
    /// Empty when it reached OP with a complete domain, else why not.
    failure: String,
}

/// What the in-process scan tells about a slave.
struct Slave {
    position: u16,
    vendor: u32,
    product: u32,
    dc: u16,
    order: String,
    has_syncs: bool,
}

fn scan(spec: &str) -> Result<Vec<Slave>, String> {
    let link = ecat::link::open(spec).map_err(|e| format!("open {spec}: {e}"))?;
    let mut md = MainDevice::with_link(link);
    let subs = md.scan().map_err(|e| format!("scan {spec}: {e}"))?;
    Ok(subs
        .iter()
        .map(|s| Slave {
            position: s.position,
            vendor: s.identity.vendor_id,
            product: s.identity.product_code,
            dc: s.dc_assign_activate,
            order: s.order.clone(),
            has_syncs: !s.sync_managers.is_empty(),
        })
        .collect())
}

/// Positions `ecat cstruct` printed arrays for (its `/* Master M, Slave N` headers).
fn cstruct_positions(text: &str) -> BTreeSet<u16> {
    text.lines()
        .filter_map(|l| l.strip_prefix("/* Master "))
        .filter_map(|l| l.split(", Slave ").nth(1))
        .filter_map(|l| l.split([',', ' ']).next()?.parse().ok())
        .collect()
}

/// The generated header: cstruct's output verbatim and the slave table.
fn bus_header(cstruct: &str, slaves: &[Slave], printed: &BTreeSet<u16>) -> String {
    let mut h = format!("/* ecat cstruct output */\n{cstruct}\n");
    h += "static const struct bus_slave bus[] = {\n";
    for s in slaves {
        let syncs = if printed.contains(&s.position) {
            format!("slave_{}_syncs", s.position)
        } else {
            "NULL".into()
        };
        let _ = writeln!(
            h,
            "    {{{}, 0x{:08x}, 0x{:08x}, 0x{:04x}, {syncs}, {:?}}},",
            s.position, s.vendor, s.product, s.dc, s.order
        );
    }
    h + "};\n"
}

/// One slave line of the C program: (position, operational, AL state, AL status, error).
fn parse_slave_line(l: &str) -> Option<(u16, bool, u8, u16, String)> {
    let f: Vec<&str> = l.split_whitespace().collect();
    let hex = |s: &str| u16::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    match f.as_slice() {
        ["slave", pos, "operational", op, "al_state", st, "al_status", code, "error", err, ..] => {
            Some((
                pos.parse().ok()?,
                *op == "1",
                hex(st)? as u8,
                hex(code)?,
                err.to_string(),
            ))
        }
        _ => None,
    }
}

/// Run one network end to end; one outcome per counted slave.
fn round_trip(ecat: &Path, n: usize, net: &Net) -> Vec<Outcome> {
    let dir = common::scratch("cstruct_roundtrip");
    let toml = dir.join(format!("net{n}.toml"));
    std::fs::write(&toml, &net.toml).unwrap();
    let spec = format!("sim:{}", toml.display());
    let ctl = dir.join(format!("ctl{n}"));
    let slaves = match scan(&spec) {
        Ok(s) => s,
        Err(e) => {
            return vec![Outcome {
                what: format!("every type of {}", net.source),
                failure: e,
            }]
        }
    };
    let what = |s: &Slave| format!("{} ({}, slave {})", s.order, net.source, s.position);
    let all_fail = |why: &str| -> Vec<Outcome> {
        slaves[net.first_counted..]
            .iter()
            .map(|s| Outcome {
                what: what(s),
                failure: why.to_string(),
            })
            .collect()
    };

    let o = Command::new(ecat)
        .args(["cstruct", "-i", &spec])
        .env("ECAT_CONTROL_DIR", &ctl)
        .env("ECAT_CONF", "/nonexistent/ecat.conf")
        .env_remove("ECAT_INTERFACE")
        .env_remove("ECAT_MASTER0")
        .output()
        .expect("run ecat cstruct");
    let cstruct = String::from_utf8_lossy(&o.stdout).into_owned();
    if !o.status.success() {
        return all_fail(&format!(
            "ecat cstruct failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    let printed = cstruct_positions(&cstruct);

    let header = dir.join(format!("bus{n}.h"));
    std::fs::write(&header, bus_header(&cstruct, &slaves, &printed)).unwrap();
    let exe = dir.join(format!("roundtrip{n}"));
    common::compile(
        &[common::workspace().join("tests/capi/cstruct_roundtrip.c")],
        &exe,
        &[
            &format!("-DBUS_FILE=\"{}\"", header.display()),
            "-Wno-missing-field-initializers",
        ],
    );
    let o = Command::new(&exe)
        .env("ECAT_MASTER0", &spec)
        .env("ECAT_CONTROL_DIR", &ctl)
        .env("ECAT_CONF", "/nonexistent/ecat.conf")
        .env_remove("ECAT_INTERFACE")
        .env_remove("ECAT_MASTER1")
        .output()
        .expect("run the round trip program");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let domain = out.lines().find(|l| l.starts_with("domain "));
    let Some(domain) = domain.filter(|_| o.status.success()) else {
        return all_fail(&format!(
            "the C program ended with {}: {}{}",
            o.status,
            out.trim(),
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    };
    let complete = domain.contains(" state 2 ");
    println!("{}: {} slaves, {domain}", net.source, slaves.len());
    let lines: BTreeMap<u16, _> = out
        .lines()
        .filter_map(parse_slave_line)
        .map(|l| (l.0, l))
        .collect();
    slaves[net.first_counted..]
        .iter()
        .map(|s| {
            let mut failure = String::new();
            if s.has_syncs != printed.contains(&s.position) {
                failure = format!(
                    "cstruct printed {} arrays for a slave {} sync managers; ",
                    if s.has_syncs { "no" } else { "" },
                    if s.has_syncs { "with" } else { "without" }
                );
            }
            match lines.get(&s.position) {
                Some((_, true, _, _, err)) if err == "-" && complete => {}
                Some((_, op, st, code, err)) => {
                    let _ = write!(
                        failure,
                        "operational {op}, AL state 0x{st:02x}, AL status {}, error {err}{}",
                        AlStatusCode(*code),
                        if complete { "" } else { ", domain incomplete" }
                    );
                }
                None => failure += "no line from the C program",
            }
            Outcome {
                what: what(s),
                failure,
            }
        })
        .collect()
}

#[test]
fn every_device_type_reaches_op_from_its_cstruct_output() {
    if common::missing(&["cc"]) {
        return;
    }
    let ecat = common::target_dir().join("ecat");
    if !ecat.exists() {
        let msg = format!(
            "the ecat binary is not built in {} (cargo build -p ecat-cli)",
            common::target_dir().display()
        );
        assert!(std::env::var("CI").is_err(), "{msg}");
        println!("skipped: {msg}");
        return;
    }
    common::library();
    let nets = networks();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let Some(net) = nets.get(n) else { break };
                let r = round_trip(&ecat, n, net);
                results.lock().unwrap().extend(r);
            });
        }
    });
    let results = results.into_inner().unwrap();
    let failures: Vec<&Outcome> = results.iter().filter(|o| !o.failure.is_empty()).collect();
    for f in &failures {
        println!("FAILED {}: {}", f.what, f.failure);
    }
    println!(
        "cstruct round trip: {} of {} device types reached OP with a complete domain, {} failures",
        results.len() - failures.len(),
        results.len(),
        failures.len()
    );
    assert!(results.len() > nets.len(), "too few device types ran");
    assert!(
        failures.is_empty(),
        "{} device types failed",
        failures.len()
    );
}
