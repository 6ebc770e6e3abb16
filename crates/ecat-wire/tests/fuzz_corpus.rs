//! Runs every saved fuzz input (`fuzz/corpus/<target>/*`) through the same code the cargo-fuzz
//! targets call (`ecat_wire::fuzzing`), so a plain `cargo test` on stable exercises the
//! corpus. Each input is also fed truncated at every length and with each byte inverted, a
//! cheap deterministic stand-in for the fuzzer's mutations.

use std::fs;
use std::path::Path;

fn run(target: &str, f: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if !path.is_file() {
            continue;
        }
        let data = fs::read(&path).unwrap();
        f(&data);
        for len in 0..data.len() {
            f(&data[..len]);
        }
        let mut m = data.clone();
        for i in 0..m.len() {
            m[i] ^= 0xFF;
            f(&m);
            m[i] ^= 0xFF;
        }
        n += 1;
    }
    assert!(n > 0, "no corpus files in {}", dir.display());
}

#[test]
fn frame_corpus() {
    run("frame", ecat_wire::fuzzing::frame);
}

#[test]
fn sii_corpus() {
    run("sii", ecat_wire::fuzzing::sii);
}

#[test]
fn mailbox_corpus() {
    run("mailbox", ecat_wire::fuzzing::mailbox);
}

#[test]
fn coe_corpus() {
    run("coe", ecat_wire::fuzzing::coe);
}

#[test]
fn foe_corpus() {
    run("foe", ecat_wire::fuzzing::foe);
}

#[test]
fn soe_corpus() {
    run("soe", ecat_wire::fuzzing::soe);
}

#[test]
fn voe_corpus() {
    run("voe", ecat_wire::fuzzing::voe);
}

#[test]
fn eoe_corpus() {
    run("eoe", ecat_wire::fuzzing::eoe);
}
