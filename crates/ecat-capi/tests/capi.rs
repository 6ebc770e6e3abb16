//! The C tests in `tests/capi/`: each C program is compiled against `include/ecrt.h` and the
//! freshly linked `libethercat.so.1` and run against an in-process simulated network
//! (`ECAT_MASTER0=sim:...`). A program prints its checks and exits non-zero on a failure.

mod common;

/// The C programs cycle on real time: run them one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn c_test(name: &str, link: Option<&str>) -> (String, String) {
    c_test_args(name, link, &[])
}

fn c_test_args(name: &str, link: Option<&str>, args: &[&str]) -> (String, String) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if common::missing(&["cc"]) {
        return (String::new(), String::new());
    }
    let src = common::workspace()
        .join("tests/capi")
        .join(format!("{name}.c"));
    let exe = common::scratch("capi").join(name);
    common::compile(&[src], &exe, &[]);
    let o = common::run(&exe, link, args);
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

/// The terminals of IgH's own example (SII images built from Beckhoff's ESI).
fn igh_example_net() -> String {
    let net = common::workspace().join("testdata/networks/igh-example.toml");
    format!("sim:{}", net.display())
}

/// IgH's PDO rules: the mailbox SMs `cstruct` lists are never written, fixed PDOs named as an
/// older revision names them (same sizes) run, with the difference logged as a warning.
#[test]
fn igh_pdo_rules_fixed_pdos_with_other_names_reach_op() {
    let (_, err) = c_test_args("pdo_rules", Some(&igh_example_net()), &["fixed"]);
    if err.is_empty() {
        return;
    }
    assert!(!err.contains("0x1C10") && !err.contains("0x1C11"), "{err}");
    assert!(!err.contains("stays out of OP"), "{err}");
    assert!(
        err.contains("WARNING") && err.contains("0x3001:01/16"),
        "{err}"
    );
}

/// A mapping that differs in size from the terminal's own: SAFEOP refused, reported with the
/// AL status code and the PDOs that differ, once.
#[test]
fn igh_pdo_rules_size_mismatch_is_reported_with_al_code() {
    let (_, err) = c_test_args("pdo_rules", Some(&igh_example_net()), &["size"]);
    if err.is_empty() {
        return;
    }
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("refused SAFEOP"))
        .collect();
    assert_eq!(lines.len(), 1, "reported once: {err}");
    assert!(lines[0].contains("0x001D"), "{}", lines[0]);
    assert!(
        lines[0].contains("SM2") && lines[0].contains("0x3001:01/32"),
        "{}",
        lines[0]
    );
}

#[test]
fn io_identity_offsets_op_registers_no_alloc() {
    c_test("io", Some("sim:io"));
}

/// After each `MARK n what` line on stderr, exactly n `ecat:` lines must follow before the
/// next marker.
fn check_marks(err: &str) {
    let mut problems = Vec::new();
    let mut current: Option<(usize, String, usize)> = None;
    let mut close = |c: Option<(usize, String, usize)>| {
        if let Some((want, what, got)) = c {
            if want != got {
                problems.push(format!("{what}: {got} log lines, expected {want}"));
            }
        }
    };
    for line in err.lines() {
        if let Some(rest) = line.strip_prefix("MARK ") {
            let (n, what) = rest.split_once(' ').unwrap_or((rest, ""));
            close(current.take());
            current = Some((n.parse().unwrap_or(0), what.to_string(), 0));
        } else if line.starts_with("ecat: ") {
            if let Some(c) = current.as_mut() {
                c.2 += 1;
            }
        }
    }
    close(current);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn mismatching_config_stays_unattached_while_the_rest_runs() {
    let (_, err) = c_test("mismatch", Some("sim:io"));
    check_marks(&err);
    if err.is_empty() {
        return;
    }
    assert!(
        err.contains("expects 0x00000002/0x10063052 but SubDevice 3"),
        "{err}"
    );
}

#[test]
fn bad_input_gets_igh_codes_and_one_line() {
    let (_, err) = c_test("bad_input", Some("sim:io"));
    check_marks(&err);
    if err.is_empty() {
        return;
    }
    assert!(
        err.contains("master 7 has no link configured: set ECAT_MASTER7="),
        "{err}"
    );
    assert!(err.contains("SoE"), "{err}");
}

#[test]
fn abuse_gets_igh_codes_one_line_each_and_no_crash() {
    let (out, err) = c_test("abuse", Some("sim:io"));
    check_marks(&err);
    if err.is_empty() {
        return;
    }
    // Every refused call was counted by a MARK: no line of the library outside them.
    assert!(out.contains("abuse: "), "{out}");
    assert!(
        !err.contains("internal error"),
        "a panic was caught:\n{err}"
    );
}

/// The abuse program under valgrind: no invalid read or write, no leak (definite or
/// indirect), whatever the caller did. Skips when valgrind is not installed.
#[test]
fn abuse_under_valgrind_touches_no_freed_memory_and_leaks_nothing() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if common::missing(&["cc", "valgrind"]) {
        return;
    }
    let src = common::workspace().join("tests/capi/abuse.c");
    let exe = common::scratch("capi").join("abuse_vg");
    common::compile(&[src], &exe, &[]);
    let mut c = std::process::Command::new("valgrind");
    c.args([
        "-q",
        "--error-exitcode=99",
        "--leak-check=full",
        "--errors-for-leak-kinds=definite,indirect",
        "--show-leak-kinds=definite,indirect",
    ])
    .arg(&exe);
    let o = common::run_command(c, Some("sim:io"));
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{}", String::from_utf8_lossy(&o.stdout));
    assert!(
        o.status.success(),
        "valgrind found errors ({}):\n{err}",
        o.status
    );
}

#[test]
fn no_link_configured_is_one_sentence() {
    if common::missing(&["cc"]) {
        return;
    }
    let src = common::workspace().join("tests/capi/no_link.c");
    let exe = common::scratch("capi").join("no_link");
    common::compile(&[src], &exe, &[]);
    let o = common::run(&exe, None, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{}{err}", String::from_utf8_lossy(&o.stdout));
    assert!(o.status.success());
    assert_eq!(
        err.lines().filter(|l| l.starts_with("ecat: ")).count(),
        2,
        "{err}"
    );
    assert!(err.contains("write MASTER0_DEVICE=eth0 into"), "{err}");
    assert!(err.contains("nosuchif0"), "{err}");
}

#[test]
fn sdo_blocking_startup_requests_deactivate_reactivate() {
    c_test("sdo", Some("sim:servo6"));
}

#[test]
fn dc_calls_and_sync_monitor_within_100_ns() {
    c_test("dc", Some("sim:dc8"));
}

#[test]
fn sync1_and_watchdog_are_written() {
    c_test("sync1_watchdog", Some("sim:dc8"));
}

#[test]
fn emergency_reaches_the_ring() {
    c_test("emergency", Some("sim:servo"));
}

#[test]
fn soe_blocking_startup_idns_requests_and_errors() {
    let (_, err) = c_test("soe", Some("sim:mbx"));
    if err.is_empty() {
        return;
    }
    assert!(err.contains("SoE error 0x1001 (IDN not present)"), "{err}");
}

#[test]
fn eoe_parameters_at_configuration_and_bad_input() {
    let (_, err) = c_test("eoe", Some("sim:mbx"));
    if err.is_empty() {
        return;
    }
    // Before activation: one line per bad call; after: one for the refused setter.
    let (setup, rest) = err.split_once("MARK activate").unwrap_or((&err, ""));
    check_marks(setup);
    let after = rest.split("MARK release").next().unwrap_or("");
    let after = after.split_once("MARK ").map_or("", |(_, a)| a);
    check_marks(&format!("MARK {after}"));
    // Between activation and the next marker: the EL3102's EoE request passed over once, the
    // servo's refused startup SDO logged once although it was tried at least three times.
    let cycling = rest.split("MARK ").next().unwrap_or("");
    let count = |what: &str| cycling.lines().filter(|l| l.contains(what)).count();
    assert_eq!(count("goes on to OP without it"), 1, "{cycling}");
    assert_eq!(count("EL3102"), 1, "{cycling}");
    assert_eq!(count("stays out of OP"), 1, "{cycling}");
    assert_eq!(count("0x2FFF"), 1, "{cycling}");
}

#[test]
fn voe_handler_round_trip_through_the_echo() {
    let (_, err) = c_test("voe", Some("sim:mbx"));
    if err.is_empty() {
        return;
    }
    assert!(
        err.contains("no VoE message from the slave within 500 ms"),
        "{err}"
    );
}

#[test]
fn remaining_calls() {
    let (_, err) = c_test("coverage", Some("sim:servo6"));
    check_marks(&err);
}

#[test]
fn every_exported_function_is_called_by_a_c_test() {
    let list =
        std::fs::read_to_string(common::crate_dir().join("tests/igh_functions.txt")).unwrap();
    let mut sources = String::new();
    for e in std::fs::read_dir(common::workspace().join("tests/capi")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "c") {
            sources.push_str(&std::fs::read_to_string(p).unwrap());
        }
    }
    let missing: Vec<&str> = list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.ends_with("kernel-only"))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| !sources.contains(&format!("{n}(")))
        .collect();
    assert!(missing.is_empty(), "not called by any C test: {missing:?}");
}

#[test]
fn alias_addressing_and_a_slave_that_leaves_and_returns() {
    let net = common::workspace().join("tests/capi/hotplug.toml");
    c_test("hotplug", Some(&format!("sim:{}", net.display())));
}

#[test]
fn several_domains_at_their_own_rates() {
    c_test("domains", Some("sim:io"));
}

#[test]
fn no_raw_socket_permission_is_one_sentence() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || common::missing(&["cc", "setpriv"]) {
        println!("skipped: needs root (to drop to an unprivileged user) and setpriv");
        return;
    }
    let src = common::workspace().join("tests/capi/permission.c");
    let exe = common::scratch("capi").join("permission");
    common::compile(&[src], &exe, &[]);
    let o = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&exe)
        .env("ECAT_MASTER0", "lo")
        .env_remove("ECAT_INTERFACE")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    println!("{}{err}", String::from_utf8_lossy(&o.stdout));
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("ecat: ")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("no permission to open a raw socket on 'lo'"),
        "{err}"
    );
    assert!(lines[0].contains("setcap cap_net_raw+ep"), "{err}");
}
