//! Test and benchmark plumbing: a veth pair with one end in a fresh network namespace, and the
//! thread settings (CPU pinning, SCHED_FIFO, entering the namespace) that the real-socket
//! tests, the `link_rtt` example and `ecat bench` share.
//!
//! [`VethNs::create`] makes namespace `<base>` holding `<base>b`, and `<base>a` in the root
//! namespace, both up (IPv6 off on the near end so autoconfiguration adds no noise frames).
//! Dropping it deletes both, also when a panic unwinds. Needs root and the `ip` tool.

use std::process::{Command, Stdio};

/// Run `ip ARGS`; true if it succeeded.
pub fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// True when running as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A veth pair `near` (root namespace) / `far` (inside namespace `ns`), removed on drop.
#[derive(Debug)]
pub struct VethNs {
    /// Namespace name.
    pub ns: String,
    /// The end in the root namespace (where the MainDevice runs).
    pub near: String,
    /// The end inside the namespace (where the simulator or echo answers).
    pub far: String,
}

impl VethNs {
    /// Create namespace `base` and the pair `<base>a` / `<base>b` (`base` ≤ 14 characters).
    /// Leftovers of a crashed earlier run with the same names are removed first.
    pub fn create(base: &str) -> Result<VethNs, String> {
        let v = VethNs {
            ns: base.to_string(),
            near: format!("{base}a"),
            far: format!("{base}b"),
        };
        if v.near.len() > 15 {
            return Err(format!("interface name {} is too long", v.near));
        }
        ip(&["netns", "del", &v.ns]);
        ip(&["link", "del", &v.near]);
        if !ip(&["netns", "add", &v.ns]) {
            return Err(format!(
                "`ip netns add {}` failed (needs root and iproute2)",
                v.ns
            ));
        }
        // From here on, Drop cleans up whatever was made.
        if !ip(&[
            "link", "add", &v.near, "type", "veth", "peer", "name", &v.far, "netns", &v.ns,
        ]) {
            return Err(format!("`ip link add {} type veth` failed", v.near));
        }
        let _ = std::fs::write(
            format!("/proc/sys/net/ipv6/conf/{}/disable_ipv6", v.near),
            "1",
        );
        if !ip(&["link", "set", &v.near, "up"]) || !ip(&["-n", &v.ns, "link", "set", &v.far, "up"])
        {
            return Err(format!("cannot bring {} / {} up", v.near, v.far));
        }
        Ok(v)
    }

    /// Move the calling thread into the namespace (only this thread; others stay where they are).
    pub fn enter(&self) -> Result<(), String> {
        enter(&self.ns)
    }
}

/// Move the calling thread into network namespace `ns` (made with `ip netns add`).
pub fn enter(ns: &str) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    let path = format!("/run/netns/{ns}");
    let f = std::fs::File::open(&path).map_err(|e| format!("cannot open {path}: {e}"))?;
    // SAFETY: a valid namespace descriptor; setns moves only the calling thread.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(format!(
            "setns into {ns}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

impl Drop for VethNs {
    fn drop(&mut self) {
        ip(&["link", "del", &self.near]);
        ip(&["netns", "del", &self.ns]);
    }
}

/// Number of CPUs this process may use.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Pin the calling thread to `cpu` (modulo the CPU count; nothing on a single-CPU machine).
pub fn pin_thread(cpu: usize) {
    let n = cpus();
    if n < 2 {
        return;
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET stays in bounds (cpu % n < CPU_SETSIZE);
    // sched_setaffinity(0, ...) affects the calling thread only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu % n, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Run the calling thread under SCHED_FIFO at `prio` (best effort; false if refused).
pub fn fifo(prio: i32) -> bool {
    let p = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: a valid sched_param; pid 0 is the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 }
}
