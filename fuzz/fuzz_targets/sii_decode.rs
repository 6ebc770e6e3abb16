#![no_main]
//! Fuzz target `sii_decode`: see `ecat::fuzzing::sii`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat::fuzzing::sii(data));
