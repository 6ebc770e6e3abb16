#![no_main]
//! Fuzz target `analyze`: see `ecat::fuzzing::capture`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat::fuzzing::capture(data));
