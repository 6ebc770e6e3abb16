#![no_main]
//! Fuzz target `foe`: see `ecat_wire::fuzzing::foe`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat_wire::fuzzing::foe(data));
