#![no_main]
//! Fuzz target `capi_calls`: see `ethercat::fuzzing` (crates/ecat-capi/src/fuzzing.rs).

libfuzzer_sys::fuzz_target!(|data: &[u8]| ethercat::fuzzing::call_sequence(data));
