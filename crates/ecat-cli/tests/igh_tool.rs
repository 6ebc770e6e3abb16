//! `ethercat`: the `ecat` binary started under IgH's tool name (a symlink, as
//! `scripts/install-capi.sh` installs it) behaves as IgH's `ethercat` on the simulated
//! network `sim:io`: IgH's command names and abbreviations, its slaves table, its register
//! output, its number syntax and its errors (status 1).

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// A directory holding `ethercat` -> the built `ecat`; it doubles as the (empty) control
/// socket directory, so that no application running on this machine answers for master 0.
fn ethercat() -> PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("ecat-igh-tool-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("ethercat");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ecat"), &link).unwrap();
        link
    })
    .clone()
}

/// `ethercat` with the control socket directory of [`ethercat`].
fn command() -> Command {
    let exe = ethercat();
    let mut c = Command::new(&exe);
    c.env("ECAT_CONTROL_DIR", exe.parent().unwrap());
    c
}

fn run(args: &[&str]) -> Output {
    command()
        .args(args)
        .env("ECAT_INTERFACE", "sim:io")
        .env_remove("ECAT_MASTER0")
        .output()
        .unwrap()
}

fn stdout(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "ethercat {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn sl_prints_the_slaves_table_in_preop() {
    let out = stdout(&["sl"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert_eq!(
        lines[0],
        "0  0:0  PREOP  +  EK1100 EtherCAT Coupler (2A E-Bus)"
    );
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.starts_with(&format!("{i}  0:{i}  PREOP  +  EL")) || i == 0,
            "{l}"
        );
    }
    // IgH's selection: -p picks one row, options may follow the command.
    assert_eq!(
        stdout(&["slaves", "-p", "2"]),
        "2  0:2  PREOP  +  EL1018 8Ch. Dig. Input 24V, 10µs\n"
    );
    let v = stdout(&["-v", "sl", "-p0"]);
    assert!(v.starts_with("=== Master 0, Slave 0 ===\n"), "{v}");
    assert!(v.contains("\nState: PREOP\nFlag: +\n"), "{v}");
    assert!(v.contains("  Vendor Id:       0x00000002\n"), "{v}");
}

#[test]
fn reg_read_prints_the_al_status_as_igh() {
    // Without a type: raw bytes; with one: hex and decimal (PREOP = 2).
    assert_eq!(
        stdout(&["reg_read", "-p", "0", "0x130", "2"]),
        "0x02 0x00\n"
    );
    assert_eq!(
        stdout(&["reg_read", "-p", "0", "-t", "uint16", "0x130"]),
        "0x0002 2\n"
    );
    // A type with a size overrides the size argument, as in IgH.
    assert_eq!(
        stdout(&["rrd", "-p0", "--type=uint8", "0x130", "2"]),
        "0x02 2\n"
    );
    // One SubDevice: IgH refuses a selection of several.
    let o = run(&["reg_read", "0x130", "2"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn numbers_are_decimal_octal_or_hex() {
    // Register 0x0010, the configured station address of SubDevice 0 (0x1001).
    for addr in ["16", "020", "0x10"] {
        assert_eq!(
            stdout(&["reg_read", "-p", "0", addr, "2"]),
            "0x01 0x10\n",
            "address {addr}"
        );
    }
    assert_eq!(
        stdout(&["reg_read", "-p", "0", "0x10", "02"]),
        "0x01 0x10\n"
    );
    let o = run(&["reg_read", "-p", "0", "08", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("octal"));
}

#[test]
fn ambiguous_and_unknown_commands_fail_as_igh() {
    for (abbrev, names) in [
        ("so", vec!["soe_read", "soe_write"]),
        (
            "s",
            vec![
                "sdos",
                "sii_read",
                "sii_write",
                "slaves",
                "soe_read",
                "soe_write",
                "states",
            ],
        ),
    ] {
        let o = run(&[abbrev]);
        assert_eq!(o.status.code(), Some(1), "{abbrev}");
        assert!(o.stdout.is_empty());
        let err = String::from_utf8(o.stderr).unwrap();
        let want = format!(
            "Ambiguous command abbreviation! Matching:\n{}\n\nUsage: ethercat",
            names.join("\n")
        );
        assert!(err.starts_with(&want), "{abbrev}: {err}");
    }
    let o = run(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("Unknown command frobnicate!"));
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["slaves", "extra"]);
    assert_eq!(o.status.code(), Some(1));
    // Help goes to stdout with status 0.
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("  reg_read   "));
}

#[test]
fn version_and_abbreviated_subsequence() {
    assert!(stdout(&["ver"]).starts_with("IgH EtherCAT master 1.6"));
    // `ul` holds the letters of upload in order; EK1100 has no CoE, the EL3102 neither:
    // the command is found and fails for the SubDevice, not for the name.
    let o = run(&["ul", "-p", "1", "0x1018", "1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("Unknown command"), "{err}");
}

#[test]
fn install_script_puts_ethercat_beside_ecat() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let prefix = std::env::temp_dir().join(format!("ecat-igh-prefix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&prefix);
    let o = Command::new("sh")
        .arg(root.join("scripts/install-capi.sh"))
        .args([
            "--tools-only",
            "--bin",
            env!("CARGO_BIN_EXE_ecat"),
            "--prefix",
        ])
        .arg(&prefix)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "install-capi.sh: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let bin = prefix.join("bin");
    assert_eq!(
        std::fs::read_link(bin.join("ethercat")).unwrap(),
        PathBuf::from("ecat")
    );
    assert!(
        !prefix.join("lib").exists(),
        "--tools-only installed the library"
    );
    let o = Command::new(bin.join("ethercat"))
        .args(["slaves", "-p", "0"])
        .env("ECAT_CONTROL_DIR", &prefix)
        .env("ECAT_INTERFACE", "sim:io")
        .env_remove("ECAT_MASTER0")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "0  0:0  PREOP  +  EK1100 EtherCAT Coupler (2A E-Bus)\n"
    );
    let _ = std::fs::remove_dir_all(&prefix);
}

#[test]
fn masters_find_their_links_as_the_c_api_does() {
    let conf = std::env::temp_dir().join(format!("ecat-igh-conf-{}", std::process::id()));
    std::fs::write(
        &conf,
        "MASTER0_DEVICE=sim:io\nMASTER1_DEVICE=\"sim:servo6\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        command()
            .args(args)
            .env_remove("ECAT_INTERFACE")
            .env_remove("ECAT_MASTER0")
            .env_remove("ECAT_MASTER1")
            .env_remove("ECAT_MASTER2")
            .env("ECAT_CONF", &conf)
            .output()
            .unwrap()
    };
    let lines = |o: Output| String::from_utf8(o.stdout).unwrap().lines().count();
    assert_eq!(lines(run(&["slaves"])), 5);
    assert_eq!(lines(run(&["-m", "1", "slaves"])), 6);
    let o = run(&["--master=2", "slaves"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("MASTER2_DEVICE"));
    let _ = std::fs::remove_file(&conf);
}
