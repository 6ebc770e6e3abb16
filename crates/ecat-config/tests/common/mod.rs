//! Where the test data lives: the shared test data beside the clone (`../shared/testdata`,
//! all files; `../../shared/testdata` from a worktree under `wt/`), else the repository's
//! own `testdata/` (a subset).

use std::path::PathBuf;

/// The directory `sub` ("esi", "sii") of the shared test data, or of the repository's.
pub fn testdata(sub: &str) -> PathBuf {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    for shared in ["../shared/testdata", "../../shared/testdata"] {
        let d = repo.join(shared).join(sub);
        if d.is_dir() {
            return d;
        }
    }
    repo.join("testdata").join(sub)
}
