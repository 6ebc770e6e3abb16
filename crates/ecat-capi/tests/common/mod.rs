//! Shared by the C-facing tests: link `libethercat.so.1` from the static library cargo just
//! built (crates/ecat-capi/link.sh), compile C programs against it, and run them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// True (and a line saying so) when one of `tools` is not installed: the test then skips.
pub fn missing(tools: &[&str]) -> bool {
    let gone: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| Command::new(t).arg("--version").output().is_err())
        .collect();
    if !gone.is_empty() {
        println!(
            "skipped: {} not installed (Debian: apt-get install gcc binutils cmake pkg-config)",
            gone.join(", ")
        );
    }
    !gone.is_empty()
}

/// The crate's directory.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    crate_dir().join("../..").canonicalize().unwrap()
}

/// target/<profile> of this test binary.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// Link libethercat.so.1 (once per test binary); returns the directory holding it.
///
/// Under `cargo test` the library is a dependency, not a root unit, so cargo leaves its
/// static archive in `deps/` (`libethercat-<hash>.a`) without refreshing `libethercat.a`:
/// link from the newest archive there.
pub fn library() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = target_dir();
        let newest = std::fs::read_dir(dir.join("deps"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                n.starts_with("libethercat-") && n.ends_with(".a")
            })
            .chain(Some(dir.join("libethercat.a")).filter(|p| p.exists()))
            .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok());
        let archive = newest.unwrap_or_else(|| {
            panic!(
                "{} has no libethercat archive (cargo builds it with the crate)",
                dir.display()
            )
        });
        let st = Command::new("sh")
            .arg(crate_dir().join("link.sh"))
            .arg(&dir)
            .arg(&archive)
            .status()
            .expect("run link.sh");
        assert!(st.success(), "link.sh failed");
        dir
    })
}

/// Compile C sources into `out` against the header and the library.
pub fn compile(sources: &[PathBuf], out: &Path, extra: &[&str]) {
    let lib = library();
    let o = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-O2", "-g", "-Wall", "-Wextra", "-Werror", "-std=gnu11"])
        .arg(format!("-I{}", crate_dir().join("include").display()))
        .arg(format!("-I{}", workspace().join("tests/capi").display()))
        .args(sources)
        .arg("-o")
        .arg(out)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(extra)
        .arg("-lethercat")
        .arg("-lpthread")
        .output()
        .expect("run cc");
    assert!(
        o.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A control socket directory of this test process's own (test programs run side by side
/// would otherwise compete for `/run/ecat/master0.sock`), under the target directory.
pub fn control_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ctl{}", std::process::id()))
}

/// Run a program with `ECAT_MASTER0=link` (no other ECAT_ variables, no /etc/ecat.conf; its
/// control socket in [`control_dir`]).
pub fn run(exe: &Path, link: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(exe);
    c.args(args);
    run_command(c, link)
}

/// Run `c` (a test program, or a tool running one) in the environment of [`run`].
pub fn run_command(mut c: Command, link: Option<&str>) -> Output {
    c.env("ECAT_CONTROL_DIR", control_dir())
        .env_remove("ECAT_INTERFACE")
        .env_remove("ECAT_MASTER0")
        .env_remove("ECAT_MASTER1")
        .env("ECAT_CONF", "/nonexistent/ecat.conf");
    if let Some(l) = link {
        c.env("ECAT_MASTER0", l);
    }
    c.output().expect("run the test program")
}

/// A scratch directory for this test binary.
pub fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}
