//! Holding the CPUs out of deep idle states while the cycle runs, as cyclictest does.
//!
//! Linux's PM QoS interface `/dev/cpu_dma_latency` takes a wake-up latency bound (a 4-byte
//! s32, in µs) from every process that opens it and writes one; the bound holds for as long as
//! the file stays open, and the kernel keeps the CPUs out of idle states that take longer to
//! leave. Writing 0 keeps them in the shallowest state (seed 001 gets the same with
//! `cpuidle.off=1`): on a VM the difference is ~20 µs of wake-up latency per cycle.
//!
//! [`LatencyHold`] is that open file: [`LatencyHold::acquire`] opens it and writes 0, dropping
//! the guard closes it (the kernel drops the bound). Every front end holds one while cycling:
//! `ecat run` (unless `--no-latency-hold`), the C API from `ecrt_master_activate` until
//! deactivate or release (unless [`wanted_by_config`] says no), the Python runtime's cycle
//! thread (unless `latency_hold=False`). Without permission (not root, or no such file) the
//! hold is not an error: the front end prints [`LatencyHold::acquire`]'s sentence and cycles
//! on.

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// The PM QoS file that bounds the CPUs' wake-up latency.
pub const PATH: &str = "/dev/cpu_dma_latency";

/// What a front end's real-time line says while the hold is in place.
pub const NOTE: &str = "idle states held off (cpu_dma_latency 0)";

/// `/dev/cpu_dma_latency`, open with 0 written; closing it (on drop) lifts the bound.
#[derive(Debug)]
pub struct LatencyHold {
    fd: OwnedFd,
}

impl LatencyHold {
    /// Open [`PATH`] and write 0. Refused, the error is one sentence saying what the CPUs
    /// will do instead and how to allow the hold; `opt_out` ends it, saying how the caller's
    /// users turn the hold off (e.g. `pass --no-latency-hold to cycle without it`).
    pub fn acquire(opt_out: &str) -> Result<LatencyHold, String> {
        let refused = |e: io::Error| refusal(&e, opt_out);
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(PATH)
            .map_err(refused)?;
        f.write_all(&0i32.to_ne_bytes()).map_err(refused)?;
        Ok(LatencyHold { fd: f.into() })
    }

    /// The open descriptor (for tests and diagnostics).
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// The sentence for a refused hold: what happens instead, how to allow it, how to opt out.
fn refusal(e: &io::Error, opt_out: &str) -> String {
    format!(
        "note: CPU idle states are not held off ({PATH}: {e}), so wake-ups may come tens of µs late; run as root or give this user write access to {PATH}, or {opt_out}"
    )
}

/// The bound in force now (µs), read from [`PATH`] (the kernel answers with the smallest
/// value any holder wrote, or its default); `None` if it cannot be read.
pub fn current_us() -> Option<i32> {
    let mut b = [0u8; 4];
    std::fs::File::open(PATH).ok()?.read_exact(&mut b).ok()?;
    Some(i32::from_ne_bytes(b))
}

/// Whether the C API should hold the latency for master runtimes: yes unless the environment
/// (`ECAT_LATENCY_HOLD=0`) or the configuration file (`LATENCY_HOLD=0` in `/etc/ecat.conf`,
/// or the file `ECAT_CONF` names) says `0`, `no`, `off` or `false`.
pub fn wanted_by_config() -> bool {
    let env = std::env::var("ECAT_LATENCY_HOLD").ok();
    let conf = std::env::var("ECAT_CONF")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| crate::link_config::CONF.to_string());
    wanted(env.as_deref(), std::path::Path::new(&conf))
}

/// [`wanted_by_config`] given the environment variable's value and the file.
fn wanted(env: Option<&str>, conf: &std::path::Path) -> bool {
    let value = env
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .or_else(|| crate::link_config::conf_value(conf, "LATENCY_HOLD"));
    !value.is_some_and(|v| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "0" | "no" | "off" | "false"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(fd: RawFd) -> Option<String> {
        std::fs::read_link(format!("/proc/self/fd/{fd}"))
            .ok()
            .map(|p| p.display().to_string())
    }

    #[test]
    fn the_guard_holds_the_file_at_zero_and_closes_it_on_drop() {
        // SAFETY: plain syscall.
        if unsafe { libc::geteuid() } != 0 || !std::path::Path::new(PATH).exists() {
            eprintln!("skipped: holding {PATH} needs root and the file");
            return;
        }
        let hold = LatencyHold::acquire("pass --no-latency-hold").expect("root may hold the file");
        let fd = hold.fd();
        assert_eq!(target(fd).as_deref(), Some(PATH), "the guard keeps it open");
        assert_eq!(current_us(), Some(0), "the bound in force is 0 while held");
        drop(hold);
        assert_ne!(target(fd).as_deref(), Some(PATH), "closed on drop");
    }

    #[test]
    fn a_refusal_is_one_sentence_naming_the_fix_and_the_opt_out() {
        let s = refusal(&io::Error::from_raw_os_error(libc::EACCES), "--x");
        assert!(s.contains("run as root") && s.contains("--x"), "{s}");
        assert!(!s.contains(". ") && !s.ends_with('.'), "one sentence: {s}");
        // SAFETY: plain syscall.
        if unsafe { libc::geteuid() } != 0 {
            assert!(LatencyHold::acquire("--x").unwrap_err().contains("--x"));
        }
    }

    #[test]
    fn the_config_switch_reads_the_environment_then_the_file() {
        let dir = std::env::temp_dir().join(format!("ecat-lh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("ecat.conf");
        std::fs::write(&conf, "MASTER0_DEVICE=sim:io\nLATENCY_HOLD=off\n").unwrap();
        assert!(!wanted(None, &conf), "LATENCY_HOLD=off in the file");
        assert!(wanted(Some("1"), &conf), "the environment wins");
        assert!(!wanted(Some("0"), &dir.join("absent.conf")));
        assert!(
            wanted(Some(" "), &dir.join("absent.conf")),
            "held by default"
        );
        std::fs::write(&conf, "MASTER0_DEVICE=sim:io\n").unwrap();
        assert!(wanted(None, &conf), "held by default");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
