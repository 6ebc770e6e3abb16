//! Host checks for real-time EtherCAT (seed 001): what the kernel and the machine offer a
//! cyclic task, what is missing, and the exact change that fixes it.
//!
//! Each check gives a [`Finding`]: `OK`, `WARN` (works, but costs jitter), `MISSING` (a
//! prerequisite of deterministic timing is absent) or `INFO` (cannot be judged, e.g. without an
//! interface). Checks read `/proc` and `/sys`, and try what can only be known by trying
//! (SCHED_FIFO on a short-lived thread, opening an AF_PACKET socket). For a DPDK port
//! (`-i dpdk:PCI`) the NIC checks give way to what DPDK needs ([`dpdk_checks`]: IOMMU,
//! vfio-pci binding, hugepages). Nothing is changed. The
//! parsing is in small pure functions so it is tested on sample file contents.

use std::collections::BTreeMap;
use std::path::Path;

/// Verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Fine for real-time use.
    Ok,
    /// Informational: cannot be judged here.
    Info,
    /// Works, but costs latency or jitter.
    Warn,
    /// A prerequisite is missing.
    Missing,
}

impl Status {
    /// `OK`, `INFO`, `WARN`, `MISSING`.
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Info => "INFO",
            Status::Warn => "WARN",
            Status::Missing => "MISSING",
        }
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Short key (`preempt_rt`, `cpuidle`, ...).
    pub key: &'static str,
    /// What was checked.
    pub title: &'static str,
    /// Verdict.
    pub status: Status,
    /// What was found.
    pub found: String,
    /// The change to make (empty when nothing is needed).
    pub fix: String,
}

fn finding(
    key: &'static str,
    title: &'static str,
    status: Status,
    found: impl Into<String>,
    fix: impl Into<String>,
) -> Finding {
    Finding {
        key,
        title,
        status,
        found: found.into(),
        fix: fix.into(),
    }
}

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Network interface used for EtherCAT (NIC checks are skipped without it).
    pub iface: Option<String>,
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    read(path).map(|s| s.trim().to_string())
}

mod checks;
mod dpdk;
mod parse;
use checks::*;
pub use dpdk::{dpdk_checks, parse_hugepages};
pub use parse::*;

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/// Run every check.
pub fn run_checks(opts: &Options) -> Vec<Finding> {
    let cmdline = parse_cmdline(&read("/proc/cmdline").unwrap_or_default());
    let ncpu = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let isolated = read_trim("/sys/devices/system/cpu/isolated")
        .map(|s| parse_cpu_list(&s))
        .unwrap_or_default();
    let mut v = vec![
        check_preempt(),
        check_cpuidle(&cmdline),
        check_cpufreq(&cmdline),
        check_isolation(&cmdline, ncpu, &isolated),
        check_irqs(ncpu, &isolated),
        check_rt_throttling(),
        check_memlock(),
        check_sched_fifo(),
        check_raw_socket(),
        check_timer_slack(),
        check_thp(),
        check_swap(),
        check_clocksource(),
    ];
    match &opts.iface {
        Some(i) if i.starts_with("dpdk:") => v.extend(dpdk_checks(i)),
        Some(i) => {
            v.push(check_nic_irqs(i, &isolated));
            v.push(check_coalescing(i));
            v.push(check_xdp(i));
        }
        None => v.push(finding(
            "nic",
            "Network interface",
            Status::Info,
            "no interface given",
            "run `ecat doctor -i IFACE` to check the EtherCAT NIC's interrupts, coalescing and XDP support",
        )),
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preemption() {
        let (rt, d) = preempt_model(
            "6.18.44-fc #1 SMP PREEMPT_DYNAMIC @0",
            None,
            Some("none voluntary (full) lazy\n"),
            None,
        );
        assert!(!rt);
        assert!(d.contains("PREEMPT_DYNAMIC") && d.contains("'full'"), "{d}");
        let (rt, _) = preempt_model("6.12.56 #1 SMP PREEMPT_RT", None, None, None);
        assert!(rt);
        let (rt, _) = preempt_model("#1 SMP", Some("1\n"), None, None);
        assert!(rt);
        let (rt, d) = preempt_model(
            "#1 SMP",
            None,
            None,
            Some("CONFIG_PREEMPT=y\n# CONFIG_PREEMPT_RT is not set\n"),
        );
        assert!(!rt && d.contains("lacks"), "{d}");
        let (rt, _) = preempt_model("#1 SMP", None, None, Some("CONFIG_PREEMPT_RT=y\n"));
        assert!(rt);
    }

    #[test]
    fn cmdline_and_cpus() {
        let c = parse_cmdline("BOOT_IMAGE=/vmlinuz quiet isolcpus=domain,managed_irq,3 nohz_full=3 cpuidle.off=1 -- --init-arg=1");
        assert_eq!(c.get("nohz_full"), Some(&Some("3".into())));
        assert_eq!(c.get("quiet"), Some(&None));
        assert!(c.contains_key("cpuidle.off"));
        assert!(!c.contains_key("--init-arg"));
        assert_eq!(parse_cpu_list(c["isolcpus"].as_deref().unwrap()), vec![3]);
        assert_eq!(parse_cpu_list("0-3,5,8-9\n"), vec![0, 1, 2, 3, 5, 8, 9]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
        assert_eq!(parse_cpu_mask("3\n"), vec![0, 1]);
        assert_eq!(parse_cpu_mask("00000001,00000010"), vec![4, 32]);
        assert_eq!(format_cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(
            current_choice("none voluntary (full) lazy"),
            Some("full".into())
        );
        assert_eq!(
            bracketed("always [madvise] never\n"),
            Some("madvise".into())
        );
    }

    #[test]
    fn ethtool_swaps_idle() {
        let c = "Coalesce parameters for eth0:\nAdaptive RX: off  TX: n/a\nstats-block-usecs: n/a\n\nrx-usecs: 0\nrx-frames: 1\nrx-usecs-irq: n/a\n";
        assert_eq!(parse_coalesce(c), (Some(false), Some(0), Some(1)));
        let c = "Adaptive RX: on  TX: on\nrx-usecs: 3\nrx-frames: n/a\n";
        assert_eq!(parse_coalesce(c), (Some(true), Some(3), None));
        assert!(parse_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n").is_empty());
        let s = parse_swaps("Filename Type Size Used Priority\n/swapfile file 2097148 0 -2\n");
        assert_eq!(s, vec![("/swapfile".to_string(), 2097148)]);
        let states = vec![
            ("POLL".to_string(), 0, false),
            ("C1".to_string(), 2, false),
            ("C6".to_string(), 133, false),
            ("C10".to_string(), 890, true),
        ];
        let deep = deep_idle_states(&states, 10);
        assert_eq!(deep.len(), 1);
        assert_eq!(deep[0].0, "C6");
    }

    #[test]
    fn runs_on_this_machine() {
        let v = run_checks(&Options::default());
        assert!(v.iter().any(|f| f.key == "preempt_rt"));
        assert!(v
            .iter()
            .all(|f| f.status == Status::Ok || !f.found.is_empty()));
    }
}
