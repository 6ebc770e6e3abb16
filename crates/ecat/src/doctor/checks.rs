//! The individual checks: each reads the host, judges it against what a real-time
//! EtherCAT host needs, and returns a [`Finding`] with the fix.

use super::*;

pub(super) fn uname_version() -> String {
    // SAFETY: utsname is plain data, filled by the kernel.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return String::new();
        }
        let f = |a: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(a.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        format!("{} {}", f(&u.release), f(&u.version))
    }
}

pub(super) fn kernel_config() -> Option<String> {
    let release = uname_version()
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string();
    if let Some(c) = read(format!("/boot/config-{release}")) {
        return Some(c);
    }
    // /proc/config.gz: decompress with zcat if it is there.
    if Path::new("/proc/config.gz").exists() {
        let out = std::process::Command::new("zcat")
            .arg("/proc/config.gz")
            .output()
            .ok()?;
        if out.status.success() {
            return Some(String::from_utf8_lossy(&out.stdout).into_owned());
        }
    }
    None
}

pub(super) fn check_preempt() -> Finding {
    let uname = uname_version();
    let realtime = read("/sys/kernel/realtime");
    let dbg = read("/sys/kernel/debug/sched/preempt");
    let config = kernel_config();
    let (rt, found) = preempt_model(
        &uname,
        realtime.as_deref(),
        dbg.as_deref(),
        config.as_deref(),
    );
    let found = format!(
        "kernel {}: {found}",
        uname.split_whitespace().next().unwrap_or("?")
    );
    if rt {
        finding(
            "preempt_rt",
            "Kernel preemption model",
            Status::Ok,
            found,
            "",
        )
    } else {
        finding(
            "preempt_rt",
            "Kernel preemption model",
            Status::Missing,
            format!("{found}: not a PREEMPT_RT kernel"),
            "boot a PREEMPT_RT kernel (mainline since 6.12: CONFIG_PREEMPT_RT=y; Debian: apt install linux-image-rt-amd64; Ubuntu: `pro enable realtime-kernel`); without it, worst-case wake-up latency is unbounded",
        )
    }
}

pub(super) fn idle_states(cpu: usize) -> Vec<IdleState> {
    let mut v = Vec::new();
    for i in 0..16 {
        let d = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle/state{i}");
        let Some(name) = read_trim(format!("{d}/name")) else {
            break;
        };
        let lat = read_trim(format!("{d}/latency"))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let dis = read_trim(format!("{d}/disable")).is_some_and(|s| s == "1");
        v.push((name, lat, dis));
    }
    v
}

pub(super) fn check_cpuidle(cmdline: &BTreeMap<String, Option<String>>) -> Finding {
    let off = cmdline
        .get("cpuidle.off")
        .is_some_and(|v| v.as_deref() == Some("1"))
        || cmdline
            .get("idle")
            .is_some_and(|v| v.as_deref() == Some("poll"));
    let driver = read_trim("/sys/devices/system/cpu/cpuidle/current_driver");
    let states = idle_states(0);
    let dma = Path::new("/dev/cpu_dma_latency");
    let dma_note = if dma.exists() {
        "/dev/cpu_dma_latency present (a process holding it open with 0 keeps CPUs out of deep C-states)"
    } else {
        "no /dev/cpu_dma_latency"
    };
    let list: Vec<String> = states
        .iter()
        .map(|(n, l, d)| format!("{n} {l}us{}", if *d { " (disabled)" } else { "" }))
        .collect();
    let found = format!(
        "driver {}; CPU0 states: {}; {dma_note}",
        driver.as_deref().unwrap_or("none"),
        if list.is_empty() {
            "none".into()
        } else {
            list.join(", ")
        }
    );
    let deep = deep_idle_states(&states, 10);
    if off || driver.is_none() || driver.as_deref() == Some("none") || deep.is_empty() {
        let note = if off {
            " (cpuidle off on the command line)"
        } else {
            ""
        };
        finding(
            "cpuidle",
            "CPU idle states",
            Status::Ok,
            format!("{found}{note}"),
            "",
        )
    } else {
        let names: Vec<&str> = deep.iter().map(|s| s.0.as_str()).collect();
        finding(
            "cpuidle",
            "CPU idle states",
            Status::Warn,
            format!("{found}; enabled states with exit latency > 10 us: {}", names.join(", ")),
            "add `cpuidle.off=1` (or `processor.max_cstate=1 intel_idle.max_cstate=0`) to the kernel command line, or keep /dev/cpu_dma_latency open with 0 while the cycle runs",
        )
    }
}

pub(super) fn check_cpufreq(cmdline: &BTreeMap<String, Option<String>>) -> Finding {
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut govs: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for cpu in 0..n.max(1) {
        if let Some(g) = read_trim(format!(
            "/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"
        )) {
            govs.entry(g).or_default().push(cpu);
        }
    }
    if govs.is_empty() {
        let why = if cmdline.contains_key("cpufreq.off") {
            "cpufreq.off on the command line"
        } else {
            "no cpufreq driver (fixed frequency, or a virtual machine)"
        };
        return finding(
            "cpufreq",
            "CPU frequency scaling",
            Status::Ok,
            format!("no scaling governor: {why}"),
            "",
        );
    }
    let found = govs
        .iter()
        .map(|(g, c)| format!("{g} on CPU {}", format_cpu_list(c)))
        .collect::<Vec<_>>()
        .join("; ");
    if govs.keys().all(|g| g == "performance") {
        finding("cpufreq", "CPU frequency scaling", Status::Ok, found, "")
    } else {
        finding(
            "cpufreq",
            "CPU frequency scaling",
            Status::Warn,
            found,
            "use the performance governor: `cpupower frequency-set -g performance` (or echo performance > /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor), or boot with `cpufreq.off=1`",
        )
    }
}

pub(super) fn suggested_isolation(ncpu: usize) -> (usize, String) {
    let rt = ncpu - 1;
    let house = if rt == 1 {
        "0".to_string()
    } else {
        format!("0-{}", rt - 1)
    };
    (rt, house)
}

pub(super) fn check_isolation(
    cmdline: &BTreeMap<String, Option<String>>,
    ncpu: usize,
    isolated: &[usize],
) -> Finding {
    let get = |k: &str| cmdline.get(k).map(|v| v.clone().unwrap_or_default());
    let params: Vec<String> = ["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"]
        .iter()
        .map(|k| match get(k) {
            Some(v) => format!("{k}={v}"),
            None => format!("no {k}"),
        })
        .collect();
    let found = format!(
        "{ncpu} CPUs; {}; isolated: {}",
        params.join(", "),
        if isolated.is_empty() {
            "none".into()
        } else {
            format_cpu_list(isolated)
        }
    );
    if ncpu < 2 {
        return finding(
            "isolcpus",
            "CPU isolation",
            Status::Warn,
            found,
            "a single CPU cannot be isolated: use a machine with at least 2 cores for real-time work",
        );
    }
    let (rt, house) = suggested_isolation(ncpu);
    let fix = format!(
        "add `isolcpus={rt} nohz_full={rt} rcu_nocbs={rt} irqaffinity={house}` to the kernel command line and run the cycle there (`ecat run --cpu {rt} --priority 80`)"
    );
    let has_iso = !isolated.is_empty() || get("isolcpus").is_some();
    let has_all = has_iso && get("nohz_full").is_some() && get("rcu_nocbs").is_some();
    if has_all {
        finding("isolcpus", "CPU isolation", Status::Ok, found, "")
    } else if has_iso {
        finding(
            "isolcpus",
            "CPU isolation",
            Status::Warn,
            format!("{found}; partial"),
            fix,
        )
    } else {
        finding("isolcpus", "CPU isolation", Status::Warn, found, fix)
    }
}

pub(super) fn irq_affinities() -> Vec<(u32, Vec<usize>)> {
    let mut v = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/proc/irq") {
        for e in rd.flatten() {
            let Ok(n) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if let Some(s) = read_trim(e.path().join("smp_affinity_list")) {
                v.push((n, parse_cpu_list(&s)));
            }
        }
    }
    v.sort();
    v
}

pub(super) fn check_irqs(ncpu: usize, isolated: &[usize]) -> Finding {
    let default = read_trim("/proc/irq/default_smp_affinity")
        .map(|m| parse_cpu_mask(&m))
        .unwrap_or_default();
    let irqs = irq_affinities();
    let found = format!(
        "default_smp_affinity CPUs {}; {} IRQs",
        format_cpu_list(&default),
        irqs.len()
    );
    if isolated.is_empty() {
        let (_, house) = suggested_isolation(ncpu.max(2));
        return finding(
            "irq_affinity",
            "IRQ affinity",
            Status::Warn,
            format!("{found}; no isolated CPU, so interrupts may land on the cycle's CPU"),
            format!("boot with `irqaffinity={house}` together with isolcpus, or move IRQs: `echo {house} > /proc/irq/N/smp_affinity_list`"),
        );
    }
    let on_iso: Vec<String> = irqs
        .iter()
        .filter(|(_, c)| c.iter().any(|x| isolated.contains(x)) && c.len() < ncpu)
        .map(|(n, _)| n.to_string())
        .collect();
    let default_on_iso = default.iter().any(|c| isolated.contains(c));
    if on_iso.is_empty() && !default_on_iso {
        finding("irq_affinity", "IRQ affinity", Status::Ok, found, "")
    } else {
        let housekeeping: Vec<usize> = (0..ncpu).filter(|c| !isolated.contains(c)).collect();
        let hk = format_cpu_list(&housekeeping);
        finding(
            "irq_affinity",
            "IRQ affinity",
            Status::Warn,
            format!(
                "{found}; pinned to isolated CPUs: IRQs {}{}",
                if on_iso.is_empty() { "none".into() } else { on_iso.join(",") },
                if default_on_iso { "; the default affinity includes isolated CPUs" } else { "" }
            ),
            format!("boot with `irqaffinity={hk}`, or `echo {hk} > /proc/irq/N/smp_affinity_list` for each IRQ listed"),
        )
    }
}

pub(super) fn check_nic_irqs(iface: &str, isolated: &[usize]) -> Finding {
    let mut irqs: Vec<u32> = Vec::new();
    // MSI vectors of the device (or of its PCI parent, for virtio devices).
    for dir in ["device/msi_irqs", "device/../msi_irqs"] {
        if let Ok(rd) = std::fs::read_dir(format!("/sys/class/net/{iface}/{dir}")) {
            irqs.extend(
                rd.flatten()
                    .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok()),
            );
            break;
        }
    }
    // Lines of /proc/interrupts named after the interface or its device (`virtio2-input.0`).
    let dev = std::fs::read_link(format!("/sys/class/net/{iface}/device"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let named = |w: &str| {
        w == iface
            || w.starts_with(&format!("{iface}-"))
            || dev
                .as_deref()
                .is_some_and(|d| w.starts_with(&format!("{d}-")))
    };
    if let Some(s) = read("/proc/interrupts") {
        for l in s.lines() {
            if l.split_whitespace().any(named) {
                if let Some(n) = l.split(':').next().and_then(|n| n.trim().parse().ok()) {
                    irqs.push(n);
                }
            }
        }
    }
    irqs.sort_unstable();
    irqs.dedup();
    if irqs.is_empty() {
        return finding(
            "nic_irq",
            "NIC interrupts",
            Status::Info,
            format!("no interrupts found for {iface} (virtual interface, or named differently)"),
            "",
        );
    }
    let desc: Vec<String> = irqs
        .iter()
        .map(|n| {
            let a = read_trim(format!("/proc/irq/{n}/smp_affinity_list")).unwrap_or("?".into());
            format!("{n}->CPU {a}")
        })
        .collect();
    let found = format!("{iface} IRQs: {}", desc.join(", "));
    let housekeeping_note = if isolated.is_empty() {
        "keep them off the cycle's CPU"
    } else {
        "keep them on housekeeping CPUs, or on the cycle's CPU only when polling is off and you want the wake-up there"
    };
    finding(
        "nic_irq",
        "NIC interrupts",
        Status::Ok,
        found,
        format!("{housekeeping_note}: `echo CPUS > /proc/irq/N/smp_affinity_list`"),
    )
}

pub(super) fn which(cmd: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
}

pub(super) fn check_coalescing(iface: &str) -> Finding {
    let Some(ethtool) = which("ethtool") else {
        return finding(
            "coalescing",
            "NIC interrupt coalescing",
            Status::Info,
            "ethtool not installed",
            "install ethtool (apt install ethtool) and run `ethtool -c IFACE`",
        );
    };
    let out = std::process::Command::new(ethtool)
        .args(["-c", iface])
        .output();
    let text = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => {
            return finding(
                "coalescing",
                "NIC interrupt coalescing",
                Status::Info,
                format!(
                    "ethtool -c {iface}: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
                "",
            )
        }
        Err(e) => {
            return finding(
                "coalescing",
                "NIC interrupt coalescing",
                Status::Info,
                format!("ethtool failed: {e}"),
                "",
            )
        }
    };
    let (adaptive, usecs, frames) = parse_coalesce(&text);
    let found = format!(
        "adaptive rx {}, rx-usecs {}, rx-frames {}",
        adaptive.map_or("n/a", |a| if a { "on" } else { "off" }),
        usecs.map_or("n/a".into(), |u| u.to_string()),
        frames.map_or("n/a".into(), |f| f.to_string())
    );
    if adaptive == Some(true) || usecs.is_some_and(|u| u > 0) || frames.is_some_and(|f| f > 1) {
        finding(
            "coalescing",
            "NIC interrupt coalescing",
            Status::Warn,
            found,
            format!("deliver every frame at once: `ethtool -C {iface} adaptive-rx off rx-usecs 0 rx-frames 1`"),
        )
    } else {
        finding(
            "coalescing",
            "NIC interrupt coalescing",
            Status::Ok,
            found,
            "",
        )
    }
}

pub(super) fn check_xdp(iface: &str) -> Finding {
    let base = format!("/sys/class/net/{iface}");
    if !Path::new(&base).exists() {
        return finding(
            "xdp",
            "XDP support of the driver",
            Status::Info,
            format!("no interface {iface}"),
            "",
        );
    }
    let driver = std::fs::read_link(format!("{base}/device/driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| {
            // Virtual interfaces have no device: ask ethtool.
            let o = std::process::Command::new(which("ethtool")?)
                .args(["-i", iface])
                .output()
                .ok()?;
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find_map(|l| l.strip_prefix("driver: ").map(|d| d.trim().to_string()))
        });
    match driver {
        Some(d) if NATIVE_XDP_DRIVERS.contains(&d.as_str()) => finding(
            "xdp",
            "XDP support of the driver",
            Status::Ok,
            format!("driver {d} is on the list of drivers with native XDP (AF_XDP zero-copy depends on the driver version; not verified by attaching a program)"),
            "",
        ),
        Some(d) => finding(
            "xdp",
            "XDP support of the driver",
            Status::Warn,
            format!("driver {d} is not on the list of drivers with native XDP: AF_XDP would run in generic (skb) mode, no faster than a raw socket (a list-based judgement; not verified by attaching a program)"),
            "use the raw link on this NIC, or a NIC whose driver runs XDP natively (e.g. igb, igc, i40e, ice, ixgbe, mlx5_core)",
        ),
        None => finding(
            "xdp",
            "XDP support of the driver",
            Status::Info,
            format!("cannot tell the driver of {iface}"),
            "",
        ),
    }
}

pub(super) fn check_rt_throttling() -> Finding {
    let runtime = read_trim("/proc/sys/kernel/sched_rt_runtime_us");
    let period = read_trim("/proc/sys/kernel/sched_rt_period_us");
    let found = format!(
        "sched_rt_runtime_us {} of sched_rt_period_us {}",
        runtime.as_deref().unwrap_or("?"),
        period.as_deref().unwrap_or("?")
    );
    match runtime.as_deref() {
        Some("-1") => finding("rt_throttling", "RT throttling", Status::Ok, format!("{found} (off)"), ""),
        Some(_) => finding(
            "rt_throttling",
            "RT throttling",
            Status::Warn,
            format!("{found}: real-time tasks are stopped for the rest of the period once they used that much (matters for busy-polling loops)"),
            "`sysctl -w kernel.sched_rt_runtime_us=-1` (persist in /etc/sysctl.d/90-ecat.conf)",
        ),
        None => finding("rt_throttling", "RT throttling", Status::Info, "not readable", ""),
    }
}

pub(super) fn is_root() -> bool {
    // SAFETY: plain syscall.
    unsafe { libc::geteuid() == 0 }
}

pub(super) fn check_memlock() -> Finding {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid rlimit pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) };
    let fmt = |v: libc::rlim_t| {
        if v == libc::RLIM_INFINITY {
            "unlimited".to_string()
        } else {
            format!("{} KiB", v / 1024)
        }
    };
    let found = format!(
        "RLIMIT_MEMLOCK {} (hard {})",
        fmt(r.rlim_cur),
        fmt(r.rlim_max)
    );
    if r.rlim_cur == libc::RLIM_INFINITY {
        finding("memlock", "Locked-memory limit", Status::Ok, found, "")
    } else if is_root() {
        finding(
            "memlock",
            "Locked-memory limit",
            Status::Ok,
            format!("{found}; running as root (CAP_IPC_LOCK), so mlockall is not limited"),
            "",
        )
    } else {
        finding(
            "memlock",
            "Locked-memory limit",
            Status::Warn,
            found,
            "`ulimit -l unlimited`, or `@realtime - memlock unlimited` in /etc/security/limits.d/ecat.conf, so `ecat run --lock-memory` can lock everything",
        )
    }
}

pub(super) fn check_sched_fifo() -> Finding {
    let res = std::thread::spawn(|| {
        // SAFETY: scheduling calls on the calling (short-lived) thread with valid params.
        unsafe {
            let me = libc::pthread_self();
            let mut policy = 0;
            let mut old = libc::sched_param { sched_priority: 0 };
            libc::pthread_getschedparam(me, &mut policy, &mut old);
            let p = libc::sched_param { sched_priority: 1 };
            let rc = libc::pthread_setschedparam(me, libc::SCHED_FIFO, &p);
            if rc == 0 {
                libc::pthread_setschedparam(me, policy, &old);
            }
            rc
        }
    })
    .join()
    .unwrap_or(libc::EPERM);
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid rlimit pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut r) };
    if res == 0 {
        finding(
            "sched_fifo",
            "SCHED_FIFO permission",
            Status::Ok,
            "a thread could switch to SCHED_FIFO (tried priority 1, restored)",
            "",
        )
    } else {
        finding(
            "sched_fifo",
            "SCHED_FIFO permission",
            Status::Missing,
            format!(
                "SCHED_FIFO refused ({}); RLIMIT_RTPRIO {}",
                std::io::Error::from_raw_os_error(res),
                r.rlim_cur
            ),
            "run as root, grant CAP_SYS_NICE (`setcap cap_sys_nice,cap_net_raw+ep $(which ecat)`), or `@realtime - rtprio 99` in /etc/security/limits.d/ecat.conf",
        )
    }
}

pub(super) fn check_raw_socket() -> Finding {
    let proto = (0x88A4u16).to_be() as libc::c_int;
    // SAFETY: plain syscalls; the descriptor is closed at once.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, proto) };
    if fd >= 0 {
        // SAFETY: closing the descriptor just opened.
        unsafe { libc::close(fd) };
        finding(
            "raw_socket",
            "Raw socket permission",
            Status::Ok,
            "an AF_PACKET raw socket for EtherType 0x88A4 could be opened",
            "",
        )
    } else {
        finding(
            "raw_socket",
            "Raw socket permission",
            Status::Missing,
            format!(
                "AF_PACKET socket refused: {}",
                std::io::Error::last_os_error()
            ),
            "run as root or `setcap cap_net_raw,cap_net_admin+ep $(which ecat)`",
        )
    }
}

pub(super) fn check_timer_slack() -> Finding {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer and returns the value.
    let slack = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    finding(
        "timer_slack",
        "Timer slack",
        Status::Ok,
        format!(
            "{slack} ns for normal threads; the kernel ignores slack for SCHED_FIFO threads, so it matters only when the cycle runs without --priority"
        ),
        if slack > 1000 {
            "run the cycle with `--priority N` (or prctl(PR_SET_TIMERSLACK, 1) in the cyclic thread)"
        } else {
            ""
        },
    )
}

pub(super) fn check_thp() -> Finding {
    let Some(s) = read("/sys/kernel/mm/transparent_hugepage/enabled") else {
        return finding(
            "thp",
            "Transparent hugepages",
            Status::Ok,
            "not available",
            "",
        );
    };
    let mode = bracketed(&s).unwrap_or_else(|| s.trim().to_string());
    if mode == "always" {
        finding(
            "thp",
            "Transparent hugepages",
            Status::Warn,
            "always: page faults may compact memory and khugepaged may collapse pages under the cycle",
            "`echo madvise > /sys/kernel/mm/transparent_hugepage/enabled` (or boot with `transparent_hugepage=madvise`)",
        )
    } else {
        finding("thp", "Transparent hugepages", Status::Ok, mode, "")
    }
}

pub(super) fn check_swap() -> Finding {
    let swaps = parse_swaps(&read("/proc/swaps").unwrap_or_default());
    if swaps.is_empty() {
        finding("swap", "Swap", Status::Ok, "no swap", "")
    } else {
        let list: Vec<String> = swaps
            .iter()
            .map(|(n, k)| format!("{n} ({k} KiB)"))
            .collect();
        finding(
            "swap",
            "Swap",
            Status::Warn,
            format!("swap on: {}", list.join(", ")),
            "`swapoff -a` on a dedicated controller, or always run the cycle with `--lock-memory` so its pages stay in RAM",
        )
    }
}

pub(super) fn check_clocksource() -> Finding {
    let cur = read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    match cur.as_deref() {
        Some(c @ ("tsc" | "arch_sys_counter" | "kvm-clock" | "riscv_clocksource")) => {
            finding("clocksource", "Clock source", Status::Ok, c.to_string(), "")
        }
        Some(c) => finding(
            "clocksource",
            "Clock source",
            Status::Warn,
            format!("{c}: reading the clock may be slow"),
            "prefer tsc where it is stable (`clocksource=tsc tsc=reliable` on x86 with an invariant TSC)",
        ),
        None => finding("clocksource", "Clock source", Status::Info, "unknown", ""),
    }
}
