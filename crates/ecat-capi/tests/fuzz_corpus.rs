//! Replays the saved corpus of the `capi_calls` fuzz target (`fuzz/corpus/capi_calls` at the
//! repository root) through the function the cargo-fuzz target calls, so `cargo test` on
//! stable runs every saved call sequence: none may crash, hang, leak a master or panic (the
//! library's FFI guard would catch a panic and return an error; the fuzzer aborts on it, and
//! so does this test, through a panic hook that counts them).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

static PANICS: AtomicUsize = AtomicUsize::new(0);

#[test]
fn capi_calls_corpus() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::Relaxed);
        default(info);
    }));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/capi_calls");
    let n = ecat_sim::fuzzing::replay_corpus(&dir, &ethercat::fuzzing::call_sequence, false);
    assert!(n >= 4, "only {n} saved call sequences in {}", dir.display());
    assert_eq!(
        PANICS.load(Ordering::Relaxed),
        0,
        "the library panicked (caught by its FFI guard); see the messages above"
    );
    // Every input released what it opened: master 0 can be requested again.
    let m = ethercat::master::ecrt_request_master(0);
    assert!(!m.is_null(), "master 0 is still open after the corpus");
    // SAFETY: the master just requested.
    unsafe { ethercat::master::ecrt_release_master(m) };
}
