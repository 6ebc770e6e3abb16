#![no_main]
//! Fuzz target `esi`: see `ecat::fuzzing::esi`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat::fuzzing::esi(data));
