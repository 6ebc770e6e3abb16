#![no_main]
//! Fuzz target `netfile`: see `ecat::fuzzing::netfile`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat::fuzzing::netfile(data));
