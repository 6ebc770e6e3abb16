#![no_main]
//! Fuzz target `coe`: see `ecat_wire::fuzzing::coe`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat_wire::fuzzing::coe(data));
