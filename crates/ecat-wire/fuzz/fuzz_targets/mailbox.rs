#![no_main]
//! Fuzz target `mailbox`: see `ecat_wire::fuzzing::mailbox`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| ecat_wire::fuzzing::mailbox(data));
