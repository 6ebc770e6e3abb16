#![no_main]
//! Fuzz target `frame`: see `ecat_wire::fuzzing::frame`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat_wire::fuzzing::frame(data));
