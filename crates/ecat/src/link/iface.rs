//! Network interface lookup: index, MAC address, and the list of interfaces for error messages.
//! Reads `/sys/class/net` (no netlink needed for what a MainDevice asks).

use crate::error::{Error, Result};
use std::ffi::CString;

/// Names of the network interfaces on this machine, sorted.
pub fn list() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/class/net")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Kernel index of interface `name`, or an error that names it and lists the ones that exist.
pub fn index(name: &str) -> Result<i32> {
    let not_found = || Error::NoSuchInterface {
        name: name.to_string(),
        available: list(),
    };
    if name.len() >= libc::IFNAMSIZ || name.contains('/') {
        return Err(not_found());
    }
    let c = CString::new(name).map_err(|_| not_found())?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        return Err(not_found());
    }
    Ok(idx as i32)
}

/// MAC address of interface `name` (zeros if it has none, e.g. `lo`).
pub fn mac(name: &str) -> [u8; 6] {
    let mut mac = [0u8; 6];
    if let Ok(s) = std::fs::read_to_string(format!("/sys/class/net/{name}/address")) {
        for (i, part) in s.trim().split(':').take(6).enumerate() {
            mac[i] = u8::from_str_radix(part, 16).unwrap_or(0);
        }
    }
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lo_exists_and_unknown_is_named() {
        assert!(index("lo").unwrap() > 0);
        let e = index("nosuchif0").unwrap_err().to_string();
        assert!(e.contains("nosuchif0") && e.contains("lo"), "{e}");
        assert!(index("a/b").is_err());
        assert!(index("0123456789abcdefghij").is_err());
    }
}
