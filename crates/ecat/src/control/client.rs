//! The tool's side of the control socket: find the application that holds a master, ask it
//! things, get answers or the application's one-sentence error.

use super::protocol::{
    self, ConfigRecord, DomainRecord, HelloRecord, MasterRecord, Reply, ReplyLine, Request,
    RequestLine, SdoWire, VERSION,
};
use crate::config::SubDeviceConfig;
use crate::error::{Error, Result};
use crate::mailbox::sdo::SdoOp;
use crate::subdevice::SubDevice;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `len` bytes from `address` in request-sized pieces: (address, length).
fn pieces(address: u16, len: usize) -> Vec<(u16, usize)> {
    let max = super::server::MAX_REGISTER_BYTES;
    (0..len.div_ceil(max))
        .map(|k| {
            let off = k * max;
            (address.wrapping_add(off as u16), max.min(len - off))
        })
        .collect()
}

/// The interface a link names: `eth0` for `eth0`, `raw:eth0`, `mmap:eth0` or `xdp:eth0`.
fn bare(link: &str) -> &str {
    match link.split_once(':') {
        Some(("raw" | "mmap" | "xdp", i)) => i,
        _ => link,
    }
}

/// A connection to an application's master.
#[derive(Debug)]
pub struct Client {
    out: UnixStream,
    input: BufReader<UnixStream>,
    path: PathBuf,
    hello: HelloRecord,
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::Invalid(format!("control socket {}: {e}", path.display()))
}

impl Client {
    /// Connect to the application holding master `index`.
    pub fn connect(index: u32) -> Result<Client> {
        let name = super::socket_name(index);
        let mut searched = Vec::new();
        for d in super::socket_dirs() {
            let path = d.join(&name);
            match UnixStream::connect(&path) {
                Ok(s) => return Client::greet(s, path),
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    return Err(Error::Invalid(format!(
                        "permission denied on {}: run as the application's user, as root, or as a member of group ecat",
                        path.display()
                    )))
                }
                Err(_) => searched.push(path.display().to_string()),
            }
        }
        Err(Error::NotFound(format!(
            "no application holds master {index} (searched {})",
            searched.join(", ")
        )))
    }

    /// The application whose master uses link `link` (`raw:`, `mmap:` and `xdp:` prefixes
    /// aside), if one serves a socket.
    pub fn find_link(link: &str) -> Option<Client> {
        for d in super::socket_dirs() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let path = e.path();
                if path.extension().is_none_or(|x| x != "sock") {
                    continue;
                }
                let Ok(s) = UnixStream::connect(&path) else {
                    continue;
                };
                if let Ok(c) = Client::greet(s, path) {
                    if bare(&c.hello.link) == bare(link) {
                        return Some(c);
                    }
                }
            }
        }
        None
    }

    fn greet(s: UnixStream, path: PathBuf) -> Result<Client> {
        let _ = s.set_read_timeout(Some(Duration::from_secs(
            super::server::REQUEST_TIMEOUT.as_secs() + 5,
        )));
        let input = BufReader::new(s.try_clone().map_err(|e| io_err(&path, e))?);
        let mut c = Client {
            out: s,
            input,
            path,
            hello: HelloRecord {
                master: 0,
                link: String::new(),
                pid: 0,
                phase: String::new(),
            },
        };
        match c.request(Request::Hello)? {
            Reply::Hello(h) => c.hello = h,
            _ => return Err(c.unexpected()),
        }
        Ok(c)
    }

    /// Who holds the master.
    pub fn hello(&self) -> &HelloRecord {
        &self.hello
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn unexpected(&self) -> Error {
        Error::Invalid(format!(
            "the application at {} answered something else than asked",
            self.path.display()
        ))
    }

    /// Send `req` and wait for the answer.
    pub fn request(&mut self, req: Request) -> Result<Reply> {
        let mut line = serde_json::to_string(&RequestLine { v: VERSION, req })
            .map_err(|e| Error::Invalid(format!("cannot encode the request: {e}")))?;
        line.push('\n');
        self.out
            .write_all(line.as_bytes())
            .map_err(|e| io_err(&self.path, e))?;
        let mut answer = String::new();
        let n = self
            .input
            .read_line(&mut answer)
            .map_err(|e| io_err(&self.path, e))?;
        if n == 0 {
            return Err(Error::Invalid(format!(
                "the application at {} closed the connection (it ended or released its master)",
                self.path.display()
            )));
        }
        let r: ReplyLine = serde_json::from_str(&answer).map_err(|e| {
            Error::Invalid(format!(
                "the application at {} answered in a form this tool cannot read ({e}); use the ecat tool of the same release",
                self.path.display()
            ))
        })?;
        match (r.ok, r.err) {
            (Some(ok), _) => Ok(ok),
            (None, Some(e)) => Err(Error::Invalid(e)),
            (None, None) => Err(self.unexpected()),
        }
    }

    /// The SubDevices with their states now.
    pub fn subdevices(&mut self) -> Result<Vec<SubDevice>> {
        match self.request(Request::Slaves)? {
            Reply::Slaves(v) => Ok(v.iter().map(|r| r.to_subdevice()).collect()),
            _ => Err(self.unexpected()),
        }
    }

    /// Lost flags of the SubDevices now (by position).
    pub fn lost(&mut self) -> Result<Vec<bool>> {
        match self.request(Request::Slaves)? {
            Reply::Slaves(v) => Ok(v.iter().map(|r| r.lost).collect()),
            _ => Err(self.unexpected()),
        }
    }

    fn data(&mut self, req: Request) -> Result<Vec<u8>> {
        match self.request(req)? {
            Reply::Data(d) => Ok(d),
            Reply::Done => Ok(Vec::new()),
            _ => Err(self.unexpected()),
        }
    }

    /// An SDO transfer in the application's frames.
    pub fn sdo(&mut self, position: usize, op: &SdoOp) -> Result<Vec<u8>> {
        self.data(Request::Sdo {
            position,
            op: SdoWire::from(op),
        })
    }

    /// Set a SubDevice's EoE IP parameters (`Some`) or read them (`None`; the answer), in
    /// the application's frames.
    pub fn eoe_ip(
        &mut self,
        position: usize,
        set: Option<&ecat_wire::eoe::IpParams>,
    ) -> Result<Option<ecat_wire::eoe::IpParams>> {
        let set = set.map(|p| {
            let mut b = vec![0; ecat_wire::eoe::IpParams::LEN];
            let _ = p.emit(&mut b);
            b
        });
        let reading = set.is_none();
        let d = self.data(Request::EoeIp { position, set })?;
        if !reading {
            return Ok(None);
        }
        ecat_wire::eoe::IpParams::parse(&d).map(Some).map_err(|e| {
            Error::Invalid(format!(
                "the IP parameters from the application cannot be decoded ({e})"
            ))
        })
    }

    /// Read `len` bytes of ESC memory (in pieces of at most
    /// [`super::server::MAX_REGISTER_BYTES`]).
    pub fn read_memory(&mut self, position: usize, address: u16, len: usize) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(len);
        for (at, n) in pieces(address, len) {
            out.extend(self.data(Request::RegRead {
                position,
                address: at,
                len: n,
            })?);
        }
        Ok(out)
    }

    /// Write ESC memory (in pieces of at most [`super::server::MAX_REGISTER_BYTES`]).
    pub fn write_memory(&mut self, position: usize, address: u16, data: &[u8]) -> Result<()> {
        let mut rest = data;
        for (at, n) in pieces(address, data.len()) {
            let (now, later) = rest.split_at(n);
            self.data(Request::RegWrite {
                position,
                address: at,
                data: now.to_vec(),
            })?;
            rest = later;
        }
        Ok(())
    }

    /// Limit SubDevices (all if empty) to `state`.
    pub fn request_state(
        &mut self,
        positions: &[usize],
        state: ecat_wire::al::AlState,
    ) -> Result<()> {
        self.data(Request::States {
            positions: positions.to_vec(),
            state: state as u8,
        })
        .map(|_| ())
    }

    /// The domains with their images as of the last cycle.
    pub fn domains(&mut self) -> Result<Vec<DomainRecord>> {
        match self.request(Request::Domains)? {
            Reply::Domains(d) => Ok(d),
            _ => Err(self.unexpected()),
        }
    }

    /// The process data configuration of every SubDevice.
    pub fn pdos(&mut self) -> Result<Vec<SubDeviceConfig>> {
        match self.request(Request::Pdos)? {
            Reply::Pdos(d) => Ok(d.iter().map(protocol::config_from_wire).collect()),
            _ => Err(self.unexpected()),
        }
    }

    /// Master figures.
    pub fn master(&mut self) -> Result<MasterRecord> {
        match self.request(Request::Master)? {
            Reply::Master(m) => Ok(m),
            _ => Err(self.unexpected()),
        }
    }

    /// The application's slave configurations.
    pub fn configs(&mut self) -> Result<Vec<ConfigRecord>> {
        match self.request(Request::Configs)? {
            Reply::Configs(c) => Ok(c),
            _ => Err(self.unexpected()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_pieces_cover_the_span() {
        assert_eq!(pieces(0x0130, 2), vec![(0x0130, 2)]);
        assert_eq!(
            pieces(0x1000, 2500),
            vec![(0x1000, 1024), (0x1400, 1024), (0x1800, 452)]
        );
        assert!(pieces(0, 0).is_empty());
    }

    #[test]
    fn link_names_compare_without_their_kind() {
        assert_eq!(bare("raw:eth0"), "eth0");
        assert_eq!(bare("xdp:eth1"), "eth1");
        assert_eq!(bare("eth0"), "eth0");
        assert_eq!(bare("sim:io"), "sim:io");
    }
}
