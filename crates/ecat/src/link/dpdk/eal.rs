//! DPDK's EAL, once per process: started by the first `dpdk:` link with its options, shared by
//! every later one, never stopped (`rte_eal_cleanup` would forbid any later DPDK call). Ports
//! are attached to it with `rte_dev_probe` and detached when their link drops, so a name can
//! be opened again. One lock serialises starting, probing and the set of open ports.
//!
//! `rte_eal_init` pins the calling thread to the main lcore; the thread's CPU affinity is put
//! back afterwards, so where the cycle thread runs stays the caller's choice (`--cpu`).

use super::{dpdk_says, EalOptions};
use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, CString};
use std::sync::Mutex;

extern "C" {
    fn ecat_dpdk_eal_init(
        argc: c_int,
        argv: *mut *mut c_char,
        quiet: c_int,
        msg: *mut c_char,
        len: usize,
    ) -> c_int;
    fn ecat_dpdk_probe(devargs: *const c_char, msg: *mut c_char, len: usize) -> c_int;
    fn ecat_dpdk_port_by_name(name: *const c_char) -> c_int;
    fn ecat_dpdk_port_names(out: *mut c_char, len: usize);
}

/// The EAL's state in this process.
struct State {
    /// The options it started with (`None`: not started).
    args: Option<Vec<String>>,
    /// Why it could not start, if it failed in a way DPDK does not let us retry.
    failed: Option<String>,
    /// DPDK names of the ports open as links.
    open: Vec<String>,
}

static STATE: Mutex<State> = Mutex::new(State {
    args: None,
    failed: None,
    open: Vec::new(),
});

/// Room for what DPDK prints while starting or probing (the start is kept; DPDK's usage text
/// after a refused option is about 5 KiB).
const MSG_LEN: usize = 16384;

fn lock() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// What DPDK printed into `buf`; echoed to stderr when `ECAT_DPDK_LOG` is set (DPDK's own
/// lines are otherwise reduced to the one a failure quotes).
pub(super) fn text(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let s = String::from_utf8_lossy(&buf[..end]).into_owned();
    if std::env::var_os(LOG_ENV).is_some() {
        eprint!("{s}");
    }
    s
}

/// Set to print what DPDK says while starting and attaching ports.
pub const LOG_ENV: &str = "ECAT_DPDK_LOG";

fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::Invalid(format!("'{s}' contains a NUL byte")))
}

/// The thread's CPU affinity, to put back after `rte_eal_init` pinned it.
fn affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
            .then_some(set)
    }
}

/// The first CPU the calling thread may run on (the EAL's main lcore by default).
pub(super) fn first_cpu() -> usize {
    affinity()
        // SAFETY: CPU_ISSET reads within the set for every index below CPU_SETSIZE.
        .and_then(|s| (0..libc::CPU_SETSIZE as usize).find(|&c| unsafe { libc::CPU_ISSET(c, &s) }))
        .unwrap_or(0)
}

/// Start the EAL with `args` (without the program name) unless it runs already. `explicit`
/// says where the options came from when the user gave them (checked against a running EAL).
pub(super) fn start(args: &[String], explicit: Option<&EalOptions>) -> Result<()> {
    let mut st = lock();
    if let Some(running) = &st.args {
        return match explicit {
            Some(e) if &e.args != running => Err(Error::Invalid(format!(
                "DPDK's EAL already runs in this process with `{}`, and it starts only once per process: give every dpdk: link the same EAL options as {} (or none)",
                running.join(" "),
                e.source
            ))),
            _ => Ok(()),
        };
    }
    if let Some(why) = &st.failed {
        return Err(Error::Invalid(why.clone()));
    }
    let mut owned: Vec<CString> = Vec::with_capacity(args.len() + 1);
    owned.push(cstring("ecat")?);
    for a in args {
        owned.push(cstring(a)?);
    }
    let mut argv: Vec<*mut c_char> = owned.iter().map(|c| c.as_ptr() as *mut c_char).collect();
    argv.push(std::ptr::null_mut());
    let mut msg = vec![0u8; MSG_LEN];
    let saved = affinity();
    // SAFETY: argv holds argc valid NUL-terminated strings (DPDK may permute the pointers,
    // not the strings) and a NULL; msg is writable for its length.
    let rc = unsafe {
        ecat_dpdk_eal_init(
            (argv.len() - 1) as c_int,
            argv.as_mut_ptr(),
            std::env::var_os(LOG_ENV).is_none() as c_int,
            msg.as_mut_ptr() as *mut c_char,
            msg.len(),
        )
    };
    if let Some(set) = saved {
        // SAFETY: a valid cpu_set_t for the calling thread.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    }
    let out = text(&msg);
    if rc == 0 {
        st.args = Some(args.to_vec());
        return Ok(());
    }
    let why = eal_failure(-rc, &out, args, explicit);
    // DPDK lets a start that failed on its options be retried; other failures stick.
    if -rc != libc::EINVAL {
        st.failed = Some(why.clone());
    }
    Err(Error::Invalid(why))
}

/// The sentence for a failed `rte_eal_init` (errno `err`, DPDK's output `out`).
fn eal_failure(err: i32, out: &str, args: &[String], explicit: Option<&EalOptions>) -> String {
    let said = dpdk_says(out).unwrap_or_else(|| format!("error {err}"));
    let lower = super::before_usage(out).to_ascii_lowercase();
    let opts = args.join(" ");
    if lower.contains("hugepage") && !args.iter().any(|a| a == "--no-huge") {
        return format!(
            "DPDK could not start: no usable hugepages ({said}); reserve some with `dpdk-hugepages.py --setup 256M` (see `ecat doctor`), or add --no-huge -m 64 to the EAL options for a virtual device"
        );
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if err == libc::EACCES || err == libc::EPERM || (!root && lower.contains("permission")) {
        return format!(
            "DPDK could not start: no permission ({said}); run as root (DPDK needs it for hugepages, vfio and raw sockets)"
        );
    }
    if err == libc::EALREADY {
        return "DPDK's EAL failed to start earlier in this process and cannot be started again; restart the program with working EAL options".into();
    }
    match explicit {
        Some(e) if err == libc::EINVAL => format!(
            "DPDK refused the EAL options `{opts}` from {} ({said}); fix them (`dpdk-testpmd --help` lists the EAL options) or remove them to use ecat's defaults",
            e.source
        ),
        _ => format!("DPDK could not start with the EAL options `{opts}`: {said}"),
    }
}

/// The port id of an existing port by DPDK name.
pub(super) fn port_by_name(name: &str) -> Result<Option<u16>> {
    let c = cstring(name)?;
    // SAFETY: a valid NUL-terminated string.
    let id = unsafe { ecat_dpdk_port_by_name(c.as_ptr()) };
    Ok((id >= 0).then_some(id as u16))
}

/// The ports DPDK has, comma-separated ("none" if none).
pub(super) fn port_names() -> String {
    let mut buf = vec![0u8; 1024];
    // SAFETY: buf is writable for its length.
    unsafe { ecat_dpdk_port_names(buf.as_mut_ptr() as *mut c_char, buf.len()) };
    let s = text(&buf);
    if s.is_empty() {
        "none".into()
    } else {
        s
    }
}

/// Probe `devargs` (a PCI address or a vdev with arguments). On failure: -errno and the most
/// telling line of DPDK's output.
pub(super) fn probe(devargs: &str) -> Result<std::result::Result<(), (i32, String)>> {
    let c = cstring(devargs)?;
    let mut msg = vec![0u8; MSG_LEN];
    // SAFETY: a valid string; msg is writable for its length.
    let rc = unsafe { ecat_dpdk_probe(c.as_ptr(), msg.as_mut_ptr() as *mut c_char, msg.len()) };
    let out = text(&msg);
    if rc == 0 {
        return Ok(Ok(()));
    }
    Ok(Err((-rc, dpdk_says(&out).unwrap_or_default())))
}

/// Claim port `name` for a link; an error if another link of this process has it open.
pub(super) fn claim(name: &str) -> Result<()> {
    let mut st = lock();
    if st.open.iter().any(|n| n == name) {
        return Err(Error::Invalid(format!(
            "DPDK port {name} is already open in this process; a port carries one link"
        )));
    }
    st.open.push(name.to_string());
    Ok(())
}

/// Give port `name` back (its link closed).
pub(super) fn release(name: &str) {
    lock().open.retain(|n| n != name);
}

/// Serialises attaching, opening and closing ports (DPDK's control path is not thread-safe).
static PORTS: Mutex<()> = Mutex::new(());

/// Hold this while probing, opening or closing a port.
pub(super) fn ports_lock() -> std::sync::MutexGuard<'static, ()> {
    PORTS.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_sentences() {
        let e = EalOptions {
            args: vec!["--bogus".into()],
            source: "ECAT_DPDK_EAL".into(),
        };
        let s = eal_failure(
            libc::EINVAL,
            "ecat: unrecognized option '--bogus'\nEAL: Invalid 'command line' arguments.",
            &e.args,
            Some(&e),
        );
        assert!(
            s.contains("refused the EAL options `--bogus` from ECAT_DPDK_EAL"),
            "{s}"
        );
        assert!(s.contains("unrecognized option '--bogus'"), "{s}");
        let s = eal_failure(
            libc::ENOMEM,
            "EAL: Cannot get hugepage information.",
            &["-l".into(), "0".into()],
            None,
        );
        assert!(s.contains("dpdk-hugepages.py --setup"), "{s}");
    }
}
