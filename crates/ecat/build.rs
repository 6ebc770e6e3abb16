//! Build script: with the `dpdk` feature, compile the C shim over DPDK (dpdk-shim/shim.c) with
//! the flags `pkg-config libdpdk` gives and link DPDK's shared libraries (Debian's build loads
//! its poll-mode drivers as plugins from its own directory). Without the feature it does
//! nothing, so the crate builds on machines without DPDK.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "dpdk")]
    dpdk::build();
}

#[cfg(feature = "dpdk")]
mod dpdk {
    use std::process::Command;

    const HELP: &str = "the `dpdk` feature needs DPDK's development files (22.11 or later): \
                        install them with `apt-get install libdpdk-dev` (Debian 12) so that \
                        `pkg-config --cflags --libs libdpdk` finds them, or build without `--features dpdk`";

    fn pkg_config(arg: &str) -> Vec<String> {
        let out = Command::new("pkg-config")
            .args([arg, "libdpdk"])
            .output()
            .unwrap_or_else(|e| panic!("running pkg-config failed ({e}): {HELP}"));
        if !out.status.success() {
            panic!(
                "pkg-config found no libdpdk ({}): {HELP}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    pub fn build() {
        println!("cargo:rerun-if-changed=dpdk-shim/shim.c");
        println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
        let mut cc = cc::Build::new();
        cc.file("dpdk-shim/shim.c").warnings(true);
        let cflags = pkg_config("--cflags");
        let mut it = cflags.iter();
        while let Some(f) = it.next() {
            if let Some(dir) = f.strip_prefix("-I") {
                cc.include(dir);
            } else if f == "-include" {
                if let Some(h) = it.next() {
                    cc.flag("-include").flag(h);
                }
            } else {
                // -march from DPDK's build: the inline burst functions are compiled for it.
                cc.flag(f);
            }
        }
        cc.compile("ecat_dpdk_shim");
        // Only the libraries the shim calls; the PMDs come as plugins (RTE_EAL_PMD_PATH).
        for f in pkg_config("--libs") {
            if let Some(dir) = f.strip_prefix("-L") {
                println!("cargo:rustc-link-search=native={dir}");
            }
        }
        for lib in [
            "rte_ethdev",
            "rte_mbuf",
            "rte_mempool",
            "rte_eal",
            "rte_kvargs",
        ] {
            println!("cargo:rustc-link-lib=dylib={lib}");
        }
    }
}
