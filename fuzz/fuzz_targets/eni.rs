#![no_main]
//! Fuzz target `eni`: see `ecat::fuzzing::eni`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat::fuzzing::eni(data));
