#![no_main]
//! Fuzz target `sim_frames`: see `ecat_sim::fuzzing::frames`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat_sim::fuzzing::frames(data));
