//! Replays the saved corpus of the `capi_calls` fuzz target (`fuzz/corpus/capi_calls` at the
//! repository root) through the function the cargo-fuzz target calls, so `cargo test` on
//! stable runs every saved call sequence: none may crash, hang or leak a master.

use std::path::Path;

#[test]
fn capi_calls_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/capi_calls");
    let n = ecat_sim::fuzzing::replay_corpus(&dir, &ethercat::fuzzing::call_sequence, false);
    assert!(n >= 4, "only {n} saved call sequences in {}", dir.display());
    // Every input released what it opened: master 0 can be requested again.
    let m = ethercat::master::ecrt_request_master(0);
    assert!(!m.is_null(), "master 0 is still open after the corpus");
    // SAFETY: the master just requested.
    unsafe { ethercat::master::ecrt_release_master(m) };
}
