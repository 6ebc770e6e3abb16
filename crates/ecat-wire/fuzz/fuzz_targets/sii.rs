#![no_main]
//! Fuzz target `sii`: see `ecat_wire::fuzzing::sii`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat_wire::fuzzing::sii(data));
