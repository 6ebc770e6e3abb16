//! The control socket: the `ecat` tool beside a running application.
//!
//! While an application (C through `libethercat.so.1`, or Rust through [`crate::runtime`])
//! holds master N, it serves `masterN.sock`, a Unix domain socket in the control directory:
//! `/run/ecat/` (mode 0700, or 0770 with group `ecat` when that group exists), else
//! `$XDG_RUNTIME_DIR/ecat/` when `/run/ecat` cannot be written; `ECAT_CONTROL_DIR` overrides
//! both (tests use it). The `ecat` tool's `-m N` connects there instead of opening a second
//! raw socket on the application's link.
//!
//! - [`protocol`]: the versioned request/answer lines (JSON) and the records they carry;
//! - [`shared`]: what the server and the cycling application share, and the application's
//!   endpoint, served once per cycle from [`crate::runtime::Runtime::send_acyclic`] without
//!   allocating;
//! - [`idle`]: before activation, bus requests on the application's shared MainDevice;
//! - [`rates`]: frame rates over 1, 10 and 60 s for `ecat master`;
//! - [`server`]: the socket and its threads (never the application's thread);
//! - [`client`]: the tool's side.
//!
//! Every bus access a request needs (SDO transfers, register reads and writes, state changes)
//! rides in the application's acyclic frames; the cyclic frames are never delayed or displaced.

pub mod client;
pub mod idle;
pub mod protocol;
pub mod rates;
pub mod server;
pub mod shared;

pub use client::Client;
pub use server::Server;

use crate::error::{Error, Result};
use std::path::PathBuf;

/// The system-wide control directory.
pub const RUN_DIR: &str = "/run/ecat";

/// The directories searched for sockets, in order.
pub fn socket_dirs() -> Vec<PathBuf> {
    if let Some(d) = std::env::var_os("ECAT_CONTROL_DIR").filter(|d| !d.is_empty()) {
        return vec![PathBuf::from(d)];
    }
    let mut dirs = vec![PathBuf::from(RUN_DIR)];
    if let Some(x) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        dirs.push(PathBuf::from(x).join("ecat"));
    }
    dirs
}

/// The socket file name of master `index`.
pub fn socket_name(index: u32) -> String {
    format!("master{index}.sock")
}

/// The gid of group `ecat`, if the group exists.
fn ecat_group() -> Option<libc::gid_t> {
    // SAFETY: getgrnam with a NUL-terminated name; the result is read at once.
    let g = unsafe { libc::getgrnam(c"ecat".as_ptr()) };
    // SAFETY: non-null results point to a valid group entry.
    (!g.is_null()).then(|| unsafe { (*g).gr_gid })
}

/// Give `path` group `ecat` and `group_mode` if that group exists, else `owner_mode`.
pub(crate) fn restrict(path: &std::path::Path, group_mode: u32, owner_mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let mode = match ecat_group() {
        Some(gid) => {
            if let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) {
                // SAFETY: chown on a NUL-terminated path; -1 keeps the owner.
                unsafe { libc::chown(c.as_ptr(), u32::MAX, gid) };
            }
            group_mode
        }
        None => owner_mode,
    };
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
}

/// Where master `index` serves: the first control directory that exists or can be made and
/// is writable.
pub fn bind_path(index: u32) -> Result<PathBuf> {
    let dirs = socket_dirs();
    for d in &dirs {
        if !d.is_dir() && std::fs::create_dir_all(d).is_ok() {
            restrict(d, 0o770, 0o700);
        }
        if writable(d) {
            return Ok(d.join(socket_name(index)));
        }
    }
    Err(Error::Invalid(format!(
        "no control directory is writable ({}); run as root or set XDG_RUNTIME_DIR",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

fn writable(d: &std::path::Path) -> bool {
    let Ok(c) = std::ffi::CString::new(d.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: access on a NUL-terminated path.
    d.is_dir() && unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0
}
