#![no_main]
//! Fuzz target `receive_path`: see `ecat::fuzzing::receive_path`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat::fuzzing::receive_path(data));
