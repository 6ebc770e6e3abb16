#![no_main]
//! Fuzz target `eoe`: see `ecat_wire::fuzzing::eoe`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat_wire::fuzzing::eoe(data));
