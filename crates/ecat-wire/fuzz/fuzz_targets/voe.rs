#![no_main]
//! Fuzz target `voe`: see `ecat_wire::fuzzing::voe`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat_wire::fuzzing::voe(data));
