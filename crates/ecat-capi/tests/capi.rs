//! The C tests in `tests/capi/`: each C program is compiled against `include/ecrt.h` and the
//! freshly linked `libethercat.so.1` and run against an in-process simulated network
//! (`ECAT_MASTER0=sim:...`). A program prints its checks and exits non-zero on a failure.

mod common;

use std::path::PathBuf;

fn c_test(name: &str, link: Option<&str>) -> (String, String) {
    let src = common::workspace()
        .join("tests/capi")
        .join(format!("{name}.c"));
    let exe = common::scratch("capi").join(name);
    common::compile(&[src], &exe, &[]);
    let o = common::run(&exe, link, &[]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    println!("{out}");
    eprintln!("{err}");
    assert!(
        o.status.success(),
        "{name} failed ({}):\n{out}\n{err}",
        o.status
    );
    (out, err)
}

#[test]
fn io_identity_offsets_op_registers_no_alloc() {
    c_test("io", Some("sim:io"));
}

#[allow(dead_code)]
fn unused(_: PathBuf) {}
