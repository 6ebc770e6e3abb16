//! The `dpdk:` link: a port driven by one of DPDK's poll-mode drivers (igb for i210/i211, igc
//! for i225/i226, virtio, ... bound to vfio-pci; or a virtual device such as `net_af_packet`,
//! `net_af_xdp` or `net_tap` on a kernel interface). Built only with the `dpdk` cargo feature
//! (Debian's `libdpdk-dev` through the C shim in `dpdk-shim/`); without it, opening a `dpdk:`
//! link is one sentence saying how to build it in.
//!
//! Names: `dpdk:PORT[?OPTIONS]` where PORT is a PCI address (`dpdk:0000:03:00.0`), a virtual
//! device with its arguments (`dpdk:net_af_packet0,iface=veth0`), or the name or number of a
//! port the EAL options already created. Options are the usual `busy`/`block`, and `eal=`
//! which takes the rest of the name as DPDK's EAL options
//! (`dpdk:net_af_packet0,iface=veth0?busy,eal=--no-huge -m 64`).
//!
//! EAL options come from, in this order: the link name, `ECAT_DPDK_EAL`, `DPDK_EAL=` in
//! `/etc/ecat.conf` (or the file `ECAT_CONF` names), else defaults chosen by the port: a
//! virtual device runs without hugepages or PCI (`--no-huge -m 64 --no-pci`), a PCI port
//! with hugepages and only that device allowed (`-a ADDR`); both without shared files
//! (`--no-shconf`, `--in-memory`) or telemetry, the main lcore on the first CPU the thread
//! may use. DPDK's EAL starts
//! once per process (it cannot be restarted), so every `dpdk:` link of a process shares it;
//! ports are attached and detached after it (`rte_dev_probe`), so they can be opened again.
//!
//! DPDK's own output while starting and attaching is captured and reduced to the line a
//! failure quotes; `ECAT_DPDK_LOG=1` prints all of it.
//!
//! The port itself ([`port`]): one Rx and one Tx queue, one mempool used only by the thread
//! that owns the link, transmit as a burst of 1, receive by polling; in the default `block`
//! mode the thread sleeps on the port's Rx interrupt where the PMD arms one (em, igb, igc,
//! virtio bound to vfio-pci; not tried here, for want of such a NIC), and otherwise polls
//! every 10 µs until the deadline, sleeping in between (a real-time thread spinning would
//! starve whatever delivers the frame on its CPU). af_packet and af_xdp have no Rx
//! interrupt; tap's is a SIGIO its receive path waits for, which `rte_eth_dev_rx_intr_enable`
//! does not arm, so a tap port polls too.

#[cfg(feature = "dpdk")]
mod eal;
#[cfg(feature = "dpdk")]
pub mod port;

use super::{Link, LinkOptions};
use crate::error::{Error, Result};

/// Environment variable with EAL options for every `dpdk:` link.
pub const EAL_ENV: &str = "ECAT_DPDK_EAL";
/// Key in `/etc/ecat.conf` with EAL options.
pub const EAL_CONF_KEY: &str = "DPDK_EAL";

/// What a `dpdk:` port names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Port {
    /// A PCI device: its full address (`0000:03:00.0`) and device arguments after a comma.
    Pci {
        /// Domain:bus:device.function.
        addr: String,
        /// Everything the user wrote (address and arguments), for `rte_dev_probe`.
        devargs: String,
    },
    /// A virtual device (`net_af_packet0,iface=veth0`).
    Vdev {
        /// The device name (before the first comma).
        name: String,
        /// Name and arguments, for `rte_dev_probe`.
        devargs: String,
    },
    /// A port that already exists after the EAL started (created by EAL options): by name.
    Existing(String),
    /// A port that already exists: by number.
    Id(u16),
}

impl Port {
    /// Parse the part after `dpdk:` (options after `?` already removed).
    pub fn parse(s: &str) -> Port {
        let s = s.trim();
        let name = s.split(',').next().unwrap_or("");
        if let Some(addr) = pci_address(name) {
            return Port::Pci {
                addr,
                devargs: s.to_string(),
            };
        }
        if name.starts_with("net_") {
            return Port::Vdev {
                name: name.to_string(),
                devargs: s.to_string(),
            };
        }
        match s.parse::<u16>() {
            Ok(id) => Port::Id(id),
            Err(_) => Port::Existing(s.to_string()),
        }
    }

    /// The name DPDK gives the port once it exists (`None` for a port number).
    pub fn dpdk_name(&self) -> Option<&str> {
        match self {
            Port::Pci { addr, .. } => Some(addr),
            Port::Vdev { name, .. } => Some(name),
            Port::Existing(n) => Some(n),
            Port::Id(_) => None,
        }
    }

    /// A device argument (`iface=veth0` → `Some("veth0")` for `key` "iface").
    pub fn devarg(&self, key: &str) -> Option<&str> {
        let (Port::Pci { devargs, .. } | Port::Vdev { devargs, .. }) = self else {
            return None;
        };
        devargs
            .split(',')
            .skip(1)
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| v.trim())
    }
}

/// `0000:03:00.0` or `03:00.0` → the full address (domain 0000 added); `None` if not one.
pub fn pci_address(s: &str) -> Option<String> {
    let parts: Vec<&str> = s.split(':').collect();
    let (dom, bus, devfn) = match parts.as_slice() {
        [d, b, df] => (*d, *b, *df),
        [b, df] => ("0000", *b, *df),
        _ => return None,
    };
    let (dev, func) = devfn.split_once('.')?;
    let hex = |x: &str, n: usize| x.len() == n && x.chars().all(|c| c.is_ascii_hexdigit());
    let func_ok = func.len() == 1 && matches!(func.as_bytes()[0], b'0'..=b'7');
    (hex(dom, 4) && hex(bus, 2) && hex(dev, 2) && func_ok)
        .then(|| format!("{dom}:{bus}:{dev}.{func}").to_ascii_lowercase())
}

/// Split a link name's option string (after `?`) into the ordinary options and the `eal=`
/// option, which takes the rest of the string (commas included).
pub fn split_eal(opts: &str) -> (&str, Option<&str>) {
    let at = if opts.trim_start().starts_with("eal=") {
        Some(opts.len() - opts.trim_start().len())
    } else {
        opts.find(",eal=").map(|i| i + 1)
    };
    match at {
        Some(i) => (&opts[..i], Some(opts[i + 4..].trim())),
        None => (opts, None),
    }
}

/// Where explicit EAL options came from (named in error sentences).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EalOptions {
    /// The options, split at whitespace.
    pub args: Vec<String>,
    /// Where they came from: "the link name", "ECAT_DPDK_EAL", "DPDK_EAL in /etc/ecat.conf".
    pub source: String,
}

/// The explicit EAL options for link name `spec`, if any (link name, environment, file).
pub fn explicit_eal(spec: &str) -> Option<EalOptions> {
    let split = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    if let Some((_, opts)) = spec.split_once('?') {
        if let (_, Some(e)) = split_eal(opts) {
            return Some(EalOptions {
                args: split(e),
                source: "the link name's eal= option".into(),
            });
        }
    }
    if let Some(v) = std::env::var(EAL_ENV).ok().filter(|v| !v.trim().is_empty()) {
        return Some(EalOptions {
            args: split(&v),
            source: EAL_ENV.into(),
        });
    }
    let conf = std::env::var("ECAT_CONF")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| crate::link_config::CONF.to_string());
    crate::link_config::conf_value(std::path::Path::new(&conf), EAL_CONF_KEY).map(|v| EalOptions {
        args: split(&v),
        source: format!("{EAL_CONF_KEY} in {conf}"),
    })
}

/// The EAL options used when none are given, for `port`, with the main lcore on `cpu`.
pub fn default_eal(port: &Port, cpu: usize) -> Vec<String> {
    let mut v: Vec<String> = ["-l", &cpu.to_string(), "--no-telemetry"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // --in-memory (no shared files) needs hugepages; without them --no-shconf does the same.
    match port {
        Port::Pci { addr, .. } => v.extend(["--in-memory", "-a", addr].map(String::from)),
        _ => v.extend(["--no-huge", "-m", "64", "--no-pci", "--no-shconf"].map(String::from)),
    }
    v
}

/// What DPDK printed before its usage text (which, after a refused option, only lists the
/// options; the reason comes before it).
pub fn before_usage(text: &str) -> &str {
    text.split("\nUsage:").next().unwrap_or(text)
}

/// The most telling line of what DPDK printed (an error line if there is one), trimmed.
pub fn dpdk_says(text: &str) -> Option<String> {
    let text = before_usage(text);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let telling = |l: &&&str| {
        let l = l.to_ascii_lowercase();
        [
            "unrecognized",
            "invalid",
            "cannot",
            "can't",
            "error",
            "fail",
            "permission",
            "not permitted",
            "no such",
            "requires",
            "unsupported",
        ]
        .iter()
        .any(|w| l.contains(w))
    };
    lines
        .iter()
        .find(telling)
        .or(lines.last())
        .map(|l| l.trim_end_matches('.').to_string())
}

/// The sentence for a `dpdk:` link in an ecat built without the `dpdk` feature.
pub fn not_built(spec: &str) -> Error {
    Error::Invalid(format!(
        "'{spec}' is a DPDK port, but this ecat was built without DPDK: install DPDK's development files (`apt-get install libdpdk-dev`) and build with the `dpdk` feature (`cargo build --release --features dpdk`)"
    ))
}

/// Open `dpdk:PORT` (`port` is the part after `dpdk:`, `spec` the whole name).
pub fn open(spec: &str, port: &str, opts: LinkOptions) -> Result<Box<dyn Link>> {
    let port = Port::parse(port);
    #[cfg(feature = "dpdk")]
    {
        Ok(Box::new(port::DpdkLink::open(spec, port, opts)?))
    }
    #[cfg(not(feature = "dpdk"))]
    {
        let _ = (port, opts);
        Err(not_built(spec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports() {
        assert_eq!(
            Port::parse("0000:03:00.0"),
            Port::Pci {
                addr: "0000:03:00.0".into(),
                devargs: "0000:03:00.0".into()
            }
        );
        assert!(matches!(Port::parse("03:00.1"), Port::Pci { addr, .. } if addr == "0000:03:00.1"));
        let v = Port::parse("net_af_packet0,iface=veth0,qdisc_bypass=1");
        assert_eq!(v.dpdk_name(), Some("net_af_packet0"));
        assert_eq!(v.devarg("iface"), Some("veth0"));
        assert_eq!(v.devarg("qpairs"), None);
        assert_eq!(Port::parse("1"), Port::Id(1));
        assert_eq!(Port::parse("myport"), Port::Existing("myport".into()));
        assert_eq!(pci_address("0000:03:00.8"), None);
        assert_eq!(pci_address("03:0.0"), None);
    }

    #[test]
    fn eal_option_split() {
        assert_eq!(split_eal("busy"), ("busy", None));
        assert_eq!(
            split_eal("busy,eal=--no-huge -m 64,x"),
            ("busy,", Some("--no-huge -m 64,x"))
        );
        assert_eq!(split_eal("eal=--no-pci"), ("", Some("--no-pci")));
        let e = explicit_eal("dpdk:net_x0?busy,eal=-l 1 --no-huge").unwrap();
        assert_eq!(e.args, ["-l", "1", "--no-huge"]);
        let d = default_eal(&Port::parse("0000:03:00.0"), 1);
        assert!(d.windows(2).any(|w| w == ["-a", "0000:03:00.0"]), "{d:?}");
        assert!(default_eal(&Port::parse("net_tap0"), 0).contains(&"--no-huge".to_string()));
    }

    #[test]
    fn dpdk_output_to_one_line() {
        let t = "EAL: Detected CPU lcores: 2\n./ecat: unrecognized option '--bogus'\n\nUsage: ...\n[NOTE: a cannot be used with b]\n";
        assert_eq!(
            dpdk_says(t).unwrap(),
            "./ecat: unrecognized option '--bogus'"
        );
        assert_eq!(dpdk_says("a\nb.\n").unwrap(), "b");
        assert_eq!(dpdk_says(""), None);
    }

    #[cfg(not(feature = "dpdk"))]
    #[test]
    fn without_the_feature_one_sentence() {
        let e = crate::link::open("dpdk:net_af_packet0,iface=veth0")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("built without DPDK"), "{e}");
        assert!(
            e.contains("libdpdk-dev") && e.contains("--features dpdk"),
            "{e}"
        );
    }
}
