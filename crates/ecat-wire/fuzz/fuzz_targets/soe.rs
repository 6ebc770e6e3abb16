#![no_main]
//! Fuzz target `soe`: see `ecat_wire::fuzzing::soe`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat_wire::fuzzing::soe(data));
