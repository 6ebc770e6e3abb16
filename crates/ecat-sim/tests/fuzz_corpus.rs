//! Replays the saved corpus of the `sim_frames` fuzz target (`fuzz/corpus/sim_frames` at the
//! repository root) through `ecat_sim::fuzzing::frames`, so `cargo test` on stable exercises
//! it; the seeds are written by `cargo test -p ecat --test fuzz_corpus -- --ignored`.

#[test]
fn sim_frames_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/sim_frames");
    ecat_sim::fuzzing::replay_corpus(&dir, &ecat_sim::fuzzing::frames, true);
}
