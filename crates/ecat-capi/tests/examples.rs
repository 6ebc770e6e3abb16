//! The C examples in `examples/c/`: installed into a scratch prefix with
//! `scripts/install-capi.sh`, each example builds with
//! `cc main.c $(pkg-config --cflags --libs libethercat)` and with CMake
//! (`find_package(EtherCAT)`, target `EtherLab::ethercat`), and runs for two seconds on the
//! simulated network it is written for.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn prefix() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let lib = common::library();
        let p = common::scratch("prefix");
        let o = Command::new("sh")
            .arg(common::workspace().join("scripts/install-capi.sh"))
            .arg("--lib")
            .arg(lib.join("libethercat.so.1.6.0"))
            .arg("--prefix")
            .arg(&p)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "install-capi.sh: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        for f in [
            "lib/libethercat.so.1",
            "lib/libethercat.so",
            "include/ecrt.h",
            "lib/pkgconfig/libethercat.pc",
            "lib/cmake/EtherCAT/EtherCATConfig.cmake",
        ] {
            assert!(p.join(f).exists(), "{f} not installed");
        }
        p
    })
}

/// The examples cycle on real time: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run_example(name: &str, link: &str) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if common::missing(&["cc", "cmake", "pkg-config"]) {
        return;
    }
    let prefix = prefix();
    let src = common::workspace().join("examples/c").join(name);
    let out = common::scratch("examples").join(name);
    std::fs::create_dir_all(&out).unwrap();
    let libdir = prefix.join("lib");

    // pkg-config, exactly as the README shows it.
    let exe = out.join(format!("{name}-pc"));
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("cc -Wall -Wextra -Werror -std=gnu11 main.c $(pkg-config --cflags --libs libethercat) -lm -o {}", exe.display()))
        .current_dir(&src)
        .env("PKG_CONFIG_PATH", libdir.join("pkgconfig"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{name} with pkg-config: {}",
        String::from_utf8_lossy(&o.stderr)
    );

    // CMake.
    let build = out.join("build");
    let _ = std::fs::remove_dir_all(&build);
    let o = Command::new("cmake")
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .arg("-DCMAKE_C_FLAGS=-Wall -Werror")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{name} cmake configure: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let o = Command::new("cmake")
        .arg("--build")
        .arg(&build)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{name} cmake build: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );

    for exe in [exe, build.join(name)] {
        let o = Command::new(&exe)
            .arg("2")
            .env("ECAT_MASTER0", link)
            .env("LD_LIBRARY_PATH", &libdir)
            .env("ECAT_CONF", "/nonexistent")
            .env("ECAT_CONTROL_DIR", common::control_dir())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        println!("== {} ==\n{text}", exe.display());
        assert!(
            o.status.success(),
            "{} exited with {}:\n{text}",
            exe.display(),
            o.status
        );
    }
}

#[test]
fn io_example() {
    run_example("io", "sim:io");
}

#[test]
fn dc_example() {
    run_example("dc", "sim:dc8");
}

#[test]
fn requests_example() {
    run_example("requests", "sim:io");
}

#[test]
fn servo_csp_example() {
    run_example("servo_csp", "sim:servo6");
}

#[test]
fn igh_terminals_example() {
    let net = common::workspace().join("testdata/networks/igh-example.toml");
    run_example("igh_terminals", &format!("sim:{}", net.display()));
}
