#![no_main]
//! Fuzz target `pdofile`: see `fuzz` in crates/ecat-cli/src/pdofile.rs (compiled in here
//! because the CLI is a binary crate).

#[path = "../../crates/ecat-cli/src/pdofile.rs"]
#[allow(dead_code)] // `load` reads a file; the target calls `fuzz`
mod pdofile;

libfuzzer_sys::fuzz_target!(|data: &[u8]| pdofile::fuzz(data));
