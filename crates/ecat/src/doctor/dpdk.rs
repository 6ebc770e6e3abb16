//! What a real DPDK port needs (`ecat doctor -i dpdk:0000:03:00.0`): an IOMMU (or vfio's
//! unsafe no-IOMMU mode), the NIC bound to vfio-pci, and hugepages. A virtual device
//! (`dpdk:net_af_packet0,iface=eth0`) needs none of them: it runs without hugepages on a
//! kernel interface, whose own checks then apply.

use super::{finding, read, read_trim, Finding, Status};
use crate::link::dpdk::Port;
use std::path::Path;

/// Hugepages (`HugePages_Total`, `HugePages_Free`, `Hugepagesize` in kB) from /proc/meminfo.
pub fn parse_hugepages(meminfo: &str) -> (u64, u64, u64) {
    let get = |key: &str| {
        meminfo
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (
        get("HugePages_Total:"),
        get("HugePages_Free:"),
        get("Hugepagesize:"),
    )
}

/// Megabytes of free hugepages a DPDK port should find (its pool is about 9 MB; DPDK's own
/// tables take the rest).
const HUGE_MB_NEEDED: u64 = 256;

fn check_hugepages() -> Finding {
    let (total, free, size_kb) = parse_hugepages(&read("/proc/meminfo").unwrap_or_default());
    let free_mb = free * size_kb / 1024;
    let found = format!("{total} hugepages of {size_kb} kB reserved, {free} free ({free_mb} MB)");
    let fix = format!(
        "reserve them with `dpdk-hugepages.py --setup {HUGE_MB_NEEDED}M` (Debian package dpdk; or `echo {} > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages`), at boot with `hugepages={}` on the kernel command line",
        HUGE_MB_NEEDED / 2,
        HUGE_MB_NEEDED / 2
    );
    let status = if free_mb >= HUGE_MB_NEEDED {
        Status::Ok
    } else {
        Status::Missing
    };
    finding("dpdk_hugepages", "DPDK hugepages", status, found, fix)
}

fn check_iommu() -> Finding {
    let units: Vec<String> = std::fs::read_dir("/sys/class/iommu")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let noiommu = read_trim("/sys/module/vfio/parameters/enable_unsafe_noiommu_mode")
        .is_some_and(|v| v == "Y" || v == "1");
    let fix = "turn the IOMMU on: add `intel_iommu=on iommu=pt` (AMD: `amd_iommu=on iommu=pt`) to the kernel command line and reboot, with VT-d/AMD-Vi enabled in the firmware; without one, `modprobe vfio enable_unsafe_noiommu_mode=1` (no DMA protection)";
    if !units.is_empty() {
        finding(
            "dpdk_iommu",
            "IOMMU for vfio-pci",
            Status::Ok,
            format!("IOMMU on ({})", units.join(", ")),
            "",
        )
    } else if noiommu {
        finding(
            "dpdk_iommu",
            "IOMMU for vfio-pci",
            Status::Warn,
            "no IOMMU; vfio runs in its unsafe no-IOMMU mode (the NIC can write anywhere in memory)",
            fix,
        )
    } else {
        finding(
            "dpdk_iommu",
            "IOMMU for vfio-pci",
            Status::Missing,
            "no IOMMU is active (/sys/class/iommu is empty) and vfio's no-IOMMU mode is off",
            fix,
        )
    }
}

fn check_binding(addr: &str) -> Finding {
    let dev = format!("/sys/bus/pci/devices/{addr}");
    let title = "NIC bound to vfio-pci";
    if !Path::new(&dev).exists() {
        return finding(
            "dpdk_vfio",
            title,
            Status::Missing,
            format!("there is no PCI device {addr}"),
            "list the network devices with `dpdk-devbind.py --status` (Debian package dpdk) or `lspci -D | grep -i ethernet`",
        );
    }
    let driver = std::fs::read_link(format!("{dev}/driver"))
        .ok()
        .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()));
    let bind = format!(
        "`modprobe vfio-pci` and `dpdk-devbind.py --bind=vfio-pci {addr}` (its kernel interface goes away while DPDK has it)"
    );
    match driver.as_deref() {
        Some("vfio-pci") => finding(
            "dpdk_vfio",
            title,
            Status::Ok,
            format!("{addr} is bound to vfio-pci"),
            "",
        ),
        Some(d @ ("mlx4_core" | "mlx5_core")) => finding(
            "dpdk_vfio",
            title,
            Status::Ok,
            format!(
                "{addr} is driven by {d}, which DPDK shares with the kernel (no vfio-pci needed)"
            ),
            "",
        ),
        Some(d) => finding(
            "dpdk_vfio",
            title,
            Status::Missing,
            format!("{addr} is bound to the kernel driver {d}"),
            bind,
        ),
        None => finding(
            "dpdk_vfio",
            title,
            Status::Missing,
            format!("{addr} has no driver"),
            bind,
        ),
    }
}

/// The checks for DPDK link `spec` (`dpdk:...`).
pub fn dpdk_checks(spec: &str) -> Vec<Finding> {
    let port = spec.strip_prefix("dpdk:").unwrap_or(spec);
    let port = port.split_once('?').map_or(port, |(p, _)| p);
    match Port::parse(port) {
        Port::Pci { addr, .. } => vec![check_iommu(), check_binding(&addr), check_hugepages()],
        p @ Port::Vdev { .. } => vec![finding(
            "dpdk",
            "DPDK port",
            Status::Info,
            format!(
                "{port} is a virtual device{}: it runs without hugepages, IOMMU or vfio-pci",
                p.devarg("iface")
                    .map(|i| format!(" on kernel interface {i}"))
                    .unwrap_or_default()
            ),
            "",
        )],
        _ => vec![check_iommu(), check_hugepages()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hugepages_from_meminfo() {
        let m = "MemTotal: 8000000 kB\nHugePages_Total:     128\nHugePages_Free:      120\nHugepagesize:       2048 kB\n";
        assert_eq!(parse_hugepages(m), (128, 120, 2048));
        assert_eq!(parse_hugepages(""), (0, 0, 0));
    }

    #[test]
    fn checks_by_port() {
        let v = dpdk_checks("dpdk:0000:7f:1f.7?busy");
        let keys: Vec<_> = v.iter().map(|f| f.key).collect();
        assert_eq!(keys, ["dpdk_iommu", "dpdk_vfio", "dpdk_hugepages"]);
        assert_eq!(v[1].status, Status::Missing);
        assert!(v[1].fix.contains("dpdk-devbind.py --status"), "{:?}", v[1]);
        let v = dpdk_checks("dpdk:net_af_packet0,iface=eth0");
        assert_eq!(v.len(), 1);
        assert!(v[0].found.contains("kernel interface eth0"), "{:?}", v[0]);
    }
}
