//! A Linux TAP interface: `/dev/net/tun` opened and bound to a named interface with the
//! `TUNSETIFF` ioctl (`IFF_TAP | IFF_NO_PI`: whole Ethernet frames, no packet-information
//! prefix), non-blocking, brought up with `SIOCSIFFLAGS`. The interface disappears when the
//! [`Tap`] is dropped (it is not made persistent).
//!
//! Creating one needs `/dev/net/tun` (the `tun` kernel module) and the `CAP_NET_ADMIN`
//! capability; the error says which is missing.

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

const TUNSETIFF: libc::c_ulong = 0x4004_54CA;
const IFF_TAP: libc::c_short = 0x0002;
const IFF_NO_PI: libc::c_short = 0x1000;

/// `struct ifreq` with the flags member of its union.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

impl IfReq {
    fn new(name: &str) -> IfReq {
        let mut r = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: 0,
            _pad: [0; 22],
        };
        r.name[..name.len()].copy_from_slice(name.as_bytes());
        r
    }
}

/// An open TAP interface. See the module documentation.
#[derive(Debug)]
pub struct Tap {
    file: File,
    name: String,
}

const FIX: &str =
    "run as root, or give the program the capability: sudo setcap cap_net_admin+ep $(which ecat)";

impl Tap {
    /// Create the TAP interface `name` (at most 15 bytes) and bring it up.
    pub fn open(name: &str) -> Result<Tap> {
        let what = format!("cannot create the TAP interface {name}");
        if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(['/', ' ']) {
            return Err(Error::Invalid(format!(
                "{what}: an interface name has 1..15 characters without '/' or spaces"
            )));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")
            .map_err(|e| {
                Error::Invalid(match e.raw_os_error() {
                    Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::ENXIO) => format!(
                        "{what}: /dev/net/tun is missing; load the tun kernel module (modprobe tun)"
                    ),
                    Some(libc::EACCES) | Some(libc::EPERM) => format!(
                        "{what}: no permission to open /dev/net/tun, and creating an interface needs the CAP_NET_ADMIN capability; run as root, or make /dev/net/tun accessible and grant the capability: sudo setcap cap_net_admin+ep $(which ecat)"
                    ),
                    _ => format!("{what}: /dev/net/tun: {e}"),
                })
            })?;
        let mut req = IfReq::new(name);
        req.flags = IFF_TAP | IFF_NO_PI;
        // SAFETY: TUNSETIFF reads and writes a `struct ifreq`, which `IfReq` lays out.
        let r = unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF as _, &mut req) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            return Err(Error::Invalid(match e.raw_os_error() {
                Some(libc::EPERM) | Some(libc::EACCES) => {
                    format!("{what}: the CAP_NET_ADMIN capability is missing; {FIX}")
                }
                Some(libc::EBUSY) => {
                    format!("{what}: an interface of that name is in use by another program")
                }
                _ => format!("{what}: TUNSETIFF: {e}"),
            }));
        }
        let tap = Tap {
            file,
            name: name.to_string(),
        };
        tap.set_up()
            .map_err(|e| Error::Invalid(format!("cannot bring {name} up: {e}")))?;
        Ok(tap)
    }

    /// The interface name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file descriptor (for `poll`).
    pub fn fd(&self) -> libc::c_int {
        self.file.as_raw_fd()
    }

    fn set_up(&self) -> std::io::Result<()> {
        // SAFETY: a plain socket call; the descriptor is owned right away.
        let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if s < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `s` is a fresh descriptor nobody else owns.
        let s = unsafe { OwnedFd::from_raw_fd(s) };
        let mut req = IfReq::new(&self.name);
        // SAFETY: SIOCGIFFLAGS/SIOCSIFFLAGS read and write a `struct ifreq`.
        unsafe {
            if libc::ioctl(s.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut req) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            req.flags |= libc::IFF_UP as libc::c_short;
            if libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS as _, &mut req) < 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Read one frame the host sends into the interface (`WouldBlock` when none waits).
    pub fn read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        (&self.file).read(buf)
    }

    /// Hand one frame to the host as received on the interface.
    pub fn write(&self, frame: &[u8]) -> std::io::Result<usize> {
        (&self.file).write(frame)
    }
}
