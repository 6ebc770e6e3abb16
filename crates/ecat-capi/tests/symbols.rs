//! The shared library's packaging, as IgH's: SONAME `libethercat.so.1`, and every
//! user-space function of the reference's list exported under IgH's version node for it,
//! nothing else exported.

mod common;

use std::collections::BTreeMap;
use std::process::Command;

fn reference_list() -> BTreeMap<String, String> {
    let text =
        std::fs::read_to_string(common::crate_dir().join("tests/igh_functions.txt")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (n, v) = l.split_once(' ').unwrap();
            (n.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn list_matches_the_reference_document() {
    // When the shared reference is around, the checked-in list must be its function list.
    let ws = common::workspace();
    let paths = [
        ws.join("../shared/reference/igh-ecrt-api.md"),
        ws.join("../../shared/reference/igh-ecrt-api.md"),
    ];
    let Some(doc) = paths.iter().find_map(|p| std::fs::read_to_string(p).ok()) else {
        println!("skipped: the shared reference (../shared/reference/igh-ecrt-api.md) is not here");
        return;
    };
    let sec = &doc[doc.find("**Functions (").unwrap()..doc.find("**Data-access macros").unwrap()];
    let mut names: Vec<String> = Vec::new();
    for part in sec.split('`').skip(1).step_by(2) {
        if let Some(i) = part.find("ecrt_") {
            let n: String = part[i..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if part[i + n.len()..].starts_with('(') && !names.contains(&n) {
                names.push(n);
            }
        }
    }
    let list = reference_list();
    assert_eq!(names.len(), 106, "the reference declares 106 functions");
    for n in &names {
        assert!(
            list.contains_key(n),
            "{n} missing from tests/igh_functions.txt"
        );
    }
    assert_eq!(list.len(), names.len());
}

#[test]
fn soname_is_libethercat_so_1() {
    if common::missing(&["cc", "readelf"]) {
        return;
    }
    let lib = common::library().join("libethercat.so.1");
    let o = Command::new("readelf")
        .arg("-d")
        .arg(&lib)
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("Library soname: [libethercat.so.1]"), "{s}");
}

#[test]
fn every_function_under_igh_version_node() {
    if common::missing(&["cc", "nm"]) {
        return;
    }
    let lib = common::library().join("libethercat.so.1");
    let o = Command::new("nm")
        .args(["-D", "--with-symbol-versions", "--defined-only"])
        .arg(&lib)
        .output()
        .unwrap();
    assert!(o.status.success());
    let mut exported: BTreeMap<String, String> = BTreeMap::new();
    let mut nodes = Vec::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (kind, sym) = (f[f.len() - 2], f[f.len() - 1]);
        if kind == "A" {
            nodes.push(sym.to_string());
            continue;
        }
        let (name, ver) = sym.split_once("@@").unwrap_or((sym, "(none)"));
        exported.insert(name.to_string(), ver.to_string());
    }
    assert_eq!(
        nodes,
        ["LIBETHERCAT_1.5.2", "LIBETHERCAT_1.5.3", "LIBETHERCAT_1.6"]
    );
    let want: BTreeMap<String, String> = reference_list()
        .into_iter()
        .filter(|(_, v)| v != "kernel-only")
        .collect();
    let mut problems = Vec::new();
    for (n, v) in &want {
        match exported.get(n) {
            None => problems.push(format!("{n}: not exported")),
            Some(got) if got != v => problems.push(format!("{n}: under {got}, IgH has {v}")),
            _ => {}
        }
    }
    for n in exported.keys() {
        if !want.contains_key(n) {
            problems.push(format!("{n}: exported but not in IgH's user-space API"));
        }
    }
    println!("{} functions exported, each under its IgH node", want.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn header_declares_every_function() {
    let h = std::fs::read_to_string(common::crate_dir().join("include/ecrt.h")).unwrap();
    for n in reference_list().keys() {
        assert!(h.contains(&format!("{n}(")), "ecrt.h does not declare {n}");
    }
}

#[test]
fn header_compiles_as_c99_and_cxx() {
    if common::missing(&["cc", "c++"]) {
        return;
    }
    let dir = common::scratch("header");
    let inc = format!("-I{}", common::crate_dir().join("include").display());
    let c = dir.join("t.c");
    std::fs::write(&c, "#include <ecrt.h>\nint main(void) { uint8_t b[8] = {0}; EC_WRITE_S32(b, -5); return EC_READ_S32(b) == -5 ? 0 : 1; }\n").unwrap();
    let cxx = dir.join("t.cpp");
    std::fs::write(&cxx, "#include <ecrt.h>\nint main() { uint8_t b[8] = {0}; EC_WRITE_U64(b, 7); ec_domain_state_t s; (void)s; return EC_READ_U64(b) == 7 ? 0 : 1; }\n").unwrap();
    for (compiler, std, src) in [("cc", "-std=c99", &c), ("c++", "-std=c++11", &cxx)] {
        let o = Command::new(compiler)
            .args([
                std,
                "-Wall",
                "-Wextra",
                "-pedantic",
                "-Werror",
                "-c",
                "-o",
                "/dev/null",
                &inc,
            ])
            .arg(src)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{compiler} {std}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
