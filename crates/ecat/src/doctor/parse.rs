//! Pure parsing of what the host exposes (/proc, /sys, tool output), kept apart from the
//! checks so it can be unit-tested on sample contents.

use super::*;

// ---------------------------------------------------------------------------------------
// Pure parsing
// ---------------------------------------------------------------------------------------

/// The preemption model from `uname -v`, `/sys/kernel/realtime`, the debugfs `sched/preempt`
/// file and the kernel config (each optional). Returns (is RT, description).
pub fn preempt_model(
    uname_v: &str,
    realtime: Option<&str>,
    debug_preempt: Option<&str>,
    config: Option<&str>,
) -> (bool, String) {
    let config_rt = config.is_some_and(|c| c.lines().any(|l| l.trim() == "CONFIG_PREEMPT_RT=y"));
    let rt = realtime.is_some_and(|r| r.trim() == "1")
        || uname_v.split_whitespace().any(|w| w == "PREEMPT_RT")
        || config_rt;
    let mut parts = Vec::new();
    for w in ["PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT_LAZY", "PREEMPT"] {
        if uname_v.split_whitespace().any(|x| x == w) {
            parts.push(format!("uname -v says {w}"));
            break;
        }
    }
    if let Some(cur) = debug_preempt.and_then(current_choice) {
        parts.push(format!("preemption mode '{cur}'"));
    }
    match realtime {
        Some(r) => parts.push(format!("/sys/kernel/realtime = {}", r.trim())),
        None => parts.push("no /sys/kernel/realtime".into()),
    }
    if config.is_some() {
        parts.push(format!(
            "kernel config {}",
            if config_rt {
                "has CONFIG_PREEMPT_RT=y"
            } else {
                "lacks CONFIG_PREEMPT_RT"
            }
        ));
    }
    if parts.is_empty() {
        parts.push("no preemption model in uname -v".into());
    }
    (rt, parts.join("; "))
}

/// The choice in parentheses of a sysfs/debugfs selection list (`none voluntary (full)`).
pub fn current_choice(s: &str) -> Option<String> {
    s.split_whitespace()
        .find(|w| w.starts_with('(') && w.ends_with(')'))
        .map(|w| w.trim_matches(|c| c == '(' || c == ')').to_string())
}

/// The selected item of a `[bracketed]` list (`always [madvise] never`).
pub fn bracketed(s: &str) -> Option<String> {
    s.split_whitespace()
        .find(|w| w.starts_with('[') && w.ends_with(']'))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
}

/// Kernel command line parameters (`key` or `key=value`); the part after `--` (init's) is
/// left out.
pub fn parse_cmdline(s: &str) -> BTreeMap<String, Option<String>> {
    s.split_whitespace()
        .take_while(|w| *w != "--")
        .map(|w| match w.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (w.to_string(), None),
        })
        .collect()
}

/// A CPU list such as `0-3,5,8-9` (isolcpus flags such as `domain,managed_irq,` skipped).
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut v = Vec::new();
    for part in s.trim().split(',') {
        let part = part.trim();
        if let Some((a, b)) = part.split_once('-') {
            if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                if b >= a && b - a < 4096 {
                    v.extend(a..=b);
                }
            }
        } else if let Ok(n) = part.parse() {
            v.push(n);
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// A hexadecimal CPU mask such as `00000000,00000003` into CPU numbers.
pub fn parse_cpu_mask(s: &str) -> Vec<usize> {
    let hex: String = s.trim().chars().filter(|c| *c != ',').collect();
    let mut v = Vec::new();
    for (i, c) in hex.chars().rev().enumerate() {
        if let Some(d) = c.to_digit(16) {
            for b in 0..4 {
                if d & (1 << b) != 0 {
                    v.push(i * 4 + b);
                }
            }
        }
    }
    v
}

/// Format CPU numbers as a list (`0-2,5`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// Interrupt coalescing from `ethtool -c`: (adaptive rx on, rx-usecs, rx-frames).
pub fn parse_coalesce(s: &str) -> (Option<bool>, Option<u32>, Option<u32>) {
    let mut adaptive = None;
    let (mut usecs, mut frames) = (None, None);
    for line in s.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("Adaptive RX:") {
            adaptive = rest.split_whitespace().next().map(|w| w == "on");
        } else if let Some(v) = l.strip_prefix("rx-usecs:") {
            usecs = v.trim().parse().ok();
        } else if let Some(v) = l.strip_prefix("rx-frames:") {
            frames = v.trim().parse().ok();
        }
    }
    (adaptive, usecs, frames)
}

/// Active swap areas from `/proc/swaps`: (name, size KiB).
pub fn parse_swaps(s: &str) -> Vec<(String, u64)> {
    s.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 3).then(|| (f[0].to_string(), f[2].parse().unwrap_or(0)))
        })
        .collect()
}

/// Drivers known to run XDP programs natively (in the driver, before an skb exists). AF_XDP
/// works on any interface in generic mode, without the speed-up.
pub const NATIVE_XDP_DRIVERS: &[&str] = &[
    "i40e",
    "ice",
    "ixgbe",
    "ixgbevf",
    "igb",
    "igc",
    "mlx4_en",
    "mlx4_core",
    "mlx5_core",
    "bnxt_en",
    "virtio_net",
    "veth",
    "tun",
    "nfp",
    "qede",
    "ena",
    "gve",
    "hv_netvsc",
    "xen-netfront",
    "sfc",
    "stmmac",
    "st_gmac",
    "mvneta",
    "mvpp2",
    "fec",
    "enetc",
    "dpaa2-eth",
    "lan743x",
    "tsnep",
    "thunder-nicvf",
    "bnx2x",
    "netsec",
    "cpsw",
    "am65-cpsw-nuss",
    "atlantic",
    "octeontx2-nicpf",
    "ionic",
    "idpf",
];

/// Mode of a sysfs cpuidle state list: (name, exit latency µs, disabled).
pub type IdleState = (String, u64, bool);

/// Judge cpuidle: states with exit latency above `max_us` that are enabled.
pub fn deep_idle_states(states: &[IdleState], max_us: u64) -> Vec<&IdleState> {
    states
        .iter()
        .filter(|(_, lat, dis)| *lat > max_us && !dis)
        .collect()
}
