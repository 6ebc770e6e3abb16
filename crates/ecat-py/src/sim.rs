//! `ecat.sim.Network`: a simulated EtherCAT network that Python builds, controls and hands to
//! a MainDevice.
//!
//! Design: the network lives in an [`ecat::link::sim::SimLink`] behind an `Arc<Mutex<_>>`.
//! A MainDevice opened on it gets a [`SharedSimLink`] (a [`Link`] that locks, delegates and
//! unlocks per call), so Python keeps controlling the network (pin inputs, read applied
//! outputs, faults, unplug, power-cycle) while the MainDevice, or its cycle thread, exchanges
//! frames with it. Locks are held for one frame at most. On virtual time (the default) the
//! network and the MainDevice share one [`VirtualTime`]: nothing moves unless a step advances
//! it, so runs are deterministic. [`PyNetwork::serve`] answers on a network interface instead,
//! in a thread, as `ecat sim -i IFACE` does.

use crate::errors::{sim_err, to_py};
use ecat::clock::VirtualTime;
use ecat::link::raw::RawSocket;
use ecat::link::sim::SimLink;
use ecat::link::{Link, LinkCounters};
use ecat_sim::{EventAction, FaultEvent, Faults, FrameFate, Network};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The link a MainDevice uses to reach a Python-owned simulated network.
pub struct SharedSimLink {
    inner: Arc<Mutex<SimLink>>,
    name: String,
}

impl SharedSimLink {
    fn lock(&self) -> MutexGuard<'_, SimLink> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Link for SharedSimLink {
    fn send(&mut self, frame: &[u8]) -> ecat::Result<()> {
        self.lock().send(frame)
    }
    fn recv(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> ecat::Result<Option<usize>> {
        // Never sleep holding the lock: poll, and wait in small steps outside it. On virtual
        // time nothing arrives by waiting (the caller moves the clock), so one poll it is.
        loop {
            let virtual_time = {
                let mut g = self.lock();
                if let Some(n) = g.recv(buf, None)? {
                    return Ok(Some(n));
                }
                g.virtual_time().is_some()
            };
            if virtual_time {
                return Ok(None);
            }
            match deadline {
                Some(d) if d > Instant::now() => {
                    std::thread::sleep((d - Instant::now()).min(Duration::from_micros(50)))
                }
                _ => return Ok(None),
            }
        }
    }
    fn mac(&self) -> [u8; 6] {
        self.lock().mac()
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn counters(&self) -> LinkCounters {
        self.lock().counters()
    }
    fn describe(&self) -> String {
        self.lock().describe()
    }
    fn virtual_time(&self) -> Option<VirtualTime> {
        self.lock().virtual_time()
    }
}

/// A simulated EtherCAT network (see the module notes).
#[pyclass(module = "ecat._ecat", name = "Network")]
pub struct PyNetwork {
    pub(crate) link: Arc<Mutex<SimLink>>,
    pub(crate) vt: Option<VirtualTime>,
    spec: String,
    server: Mutex<Option<(Arc<AtomicBool>, JoinHandle<()>)>>,
}

impl PyNetwork {
    fn wrap(net: Network, spec: String, virtual_time: bool) -> PyNetwork {
        let what = if Network::preset_names().contains(&spec.as_str()) {
            format!("built-in simulated network '{spec}'")
        } else {
            format!("simulated network from {spec}")
        };
        let mut link = SimLink::with_network(net, format!("sim:{spec}"), what);
        let vt = virtual_time.then(VirtualTime::new);
        if let Some(v) = &vt {
            link = link.on_virtual_time(v.clone());
        }
        PyNetwork {
            link: Arc::new(Mutex::new(link)),
            vt,
            spec,
            server: Mutex::new(None),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Network) -> T) -> T {
        let mut g = self.link.lock().unwrap_or_else(|p| p.into_inner());
        f(g.network_mut())
    }

    /// A link for a MainDevice on this network.
    pub(crate) fn shared_link(&self) -> SharedSimLink {
        SharedSimLink {
            inner: self.link.clone(),
            name: format!("sim:{}", self.spec),
        }
    }
}

#[pymethods]
impl PyNetwork {
    /// Build a network from a preset name (`io`, `servo6`, `dc8`), a TOML network file or
    /// `eni:FILE` (an ENI's slaves). `esi_dirs`: directories of ESI files for `esi`/`type`
    /// subdevices, searched before those of `ECAT_ESI_PATH` and the file's `esi_dirs`.
    /// On virtual time (the default) nothing moves unless a step advances the clock.
    #[new]
    #[pyo3(signature = (spec = "io", *, virtual_time = true, esi_dirs = Vec::new()))]
    fn new(spec: &str, virtual_time: bool, esi_dirs: Vec<PathBuf>) -> PyResult<Self> {
        let net = with_esi_dirs(&esi_dirs, || Network::open(spec))?;
        Ok(Self::wrap(net, spec.to_string(), virtual_time))
    }

    /// Build a network from the text of a TOML network description (`base_dir` resolves
    /// relative paths such as SII images and ESI files; `esi_dirs` as for `Network()`).
    #[staticmethod]
    #[pyo3(signature = (text, *, base_dir = ".", virtual_time = true, esi_dirs = Vec::new()))]
    fn from_toml(
        text: &str,
        base_dir: &str,
        virtual_time: bool,
        esi_dirs: Vec<PathBuf>,
    ) -> PyResult<Self> {
        let net = with_esi_dirs(&esi_dirs, || {
            Network::from_toml_str(text, "<toml>", Path::new(base_dir))
        })?;
        Ok(Self::wrap(net, "toml".into(), virtual_time))
    }

    /// Build the network an ENI file describes: its slaves in bus order, each with the SII,
    /// PDOs and CoE objects the ENI gives it.
    #[staticmethod]
    #[pyo3(signature = (path, *, virtual_time = true))]
    fn from_eni(path: PathBuf, virtual_time: bool) -> PyResult<Self> {
        let spec = format!("eni:{}", path.display());
        let net = Network::open(&spec).map_err(sim_err)?;
        Ok(Self::wrap(net, spec, virtual_time))
    }

    /// The built-in presets.
    #[staticmethod]
    fn presets() -> Vec<&'static str> {
        Network::preset_names().to_vec()
    }

    /// What the network was built from.
    #[getter]
    fn spec(&self) -> &str {
        &self.spec
    }

    /// True if the network runs on virtual time.
    #[getter]
    fn virtual_time(&self) -> bool {
        self.vt.is_some()
    }

    /// Network time in ns (virtual time, or 0 on real time).
    #[getter]
    fn now_ns(&self) -> u64 {
        self.vt.as_ref().map_or(0, |v| v.now())
    }

    /// Advance virtual time by `ns` (no effect on real time).
    fn advance(&self, ns: u64) {
        if let Some(v) = &self.vt {
            v.advance(ns);
        }
    }

    /// Number of ESCs (SubDevices) in wiring order.
    fn __len__(&self) -> usize {
        self.with(|n| n.esc_count())
    }

    /// One dict per device: position, name, order, vendor, product, revision, alias, passive.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.with(|n| n.summary())
            .into_iter()
            .map(|s| {
                let d = PyDict::new(py);
                d.set_item("position", s.bus_position)?;
                d.set_item("name", s.name)?;
                d.set_item("order", s.order)?;
                d.set_item("vendor", s.vendor)?;
                d.set_item("product", s.product)?;
                d.set_item("revision", s.revision)?;
                d.set_item("alias", s.alias)?;
                d.set_item("passive", s.passive)?;
                Ok(d)
            })
            .collect()
    }

    /// The outputs the SubDevice at `position` applies now (zeros unless it is in OP).
    fn outputs<'py>(&self, py: Python<'py>, position: usize) -> PyResult<Bound<'py, PyBytes>> {
        let o = self.with(|n| n.outputs(position).map(<[u8]>::to_vec));
        match o {
            Some(o) => Ok(PyBytes::new(py, &o)),
            None => Err(crate::errors::SimError::new_err(format!(
                "the simulated network has no SubDevice at position {position}"
            ))),
        }
    }

    /// Pin the inputs of the SubDevice at `position` to `data` until `clear_inputs`.
    fn set_inputs(&self, position: usize, data: &[u8]) -> PyResult<()> {
        self.with(|n| n.set_inputs(position, data)).map_err(sim_err)
    }

    /// Give the SubDevice at `position` its own input values back.
    fn clear_inputs(&self, position: usize) -> PyResult<()> {
        self.with(|n| n.clear_inputs(position)).map_err(sim_err)
    }

    /// Take the SubDevice at `position` off the frame path (as if its cable were pulled).
    fn unplug(&self, position: usize) -> PyResult<()> {
        self.with(|n| n.unplug(position)).map_err(sim_err)
    }

    /// Put it back; `power_cycled=True` if it lost power meanwhile (reset to INIT).
    #[pyo3(signature = (position, power_cycled = false))]
    fn replug(&self, position: usize, power_cycled: bool) -> PyResult<()> {
        self.with(|n| n.replug(position, power_cycled))
            .map_err(sim_err)
    }

    /// Is the SubDevice at `position` on the frame path?
    fn is_plugged(&self, position: usize) -> bool {
        self.with(|n| n.is_plugged(position))
    }

    /// Power-cycle the SubDevice at `position` in place.
    fn power_cycle(&self, position: usize) -> PyResult<()> {
        self.with(|n| n.power_cycle(position)).map_err(sim_err)
    }

    /// Per-frame faults (rates 0..1; delays in ns). No arguments: a perfect wire again.
    #[pyo3(signature = (*, drop_rate = 0.0, corrupt_rate = 0.0, delay_ns = 0, jitter_ns = 0,
                        duplicate_rate = 0.0, seed = 1))]
    fn set_faults(
        &self,
        drop_rate: f64,
        corrupt_rate: f64,
        delay_ns: u64,
        jitter_ns: u64,
        duplicate_rate: f64,
        seed: u64,
    ) -> PyResult<()> {
        for (name, r) in [
            ("drop_rate", drop_rate),
            ("corrupt_rate", corrupt_rate),
            ("duplicate_rate", duplicate_rate),
        ] {
            if !(0.0..=1.0).contains(&r) {
                return Err(crate::errors::SimError::new_err(format!(
                    "{name} {r} is not a probability: give a number from 0 to 1"
                )));
            }
        }
        let f = Faults {
            seed,
            drop_rate,
            corrupt_rate,
            deliver_corrupted: false,
            delay_ns,
            jitter_ns,
            duplicate_rate,
            bad_cable: None,
        };
        self.with(|n| n.set_faults(f));
        Ok(())
    }

    /// Schedule `action` ("unplug", "replug", "replug_power_cycled", "power_cycle", or for the
    /// branch headed there "disconnect", "connect") on the SubDevice at `position` at network
    /// time `at_ns`.
    fn schedule(&self, at_ns: u64, action: &str, position: usize) -> PyResult<()> {
        let action = match action {
            "unplug" => EventAction::Unplug,
            "replug" => EventAction::Replug {
                power_cycled: false,
            },
            "replug_power_cycled" => EventAction::Replug { power_cycled: true },
            "power_cycle" => EventAction::PowerCycle,
            "disconnect" => EventAction::Disconnect,
            "connect" => EventAction::Connect,
            other => {
                return Err(crate::errors::SimError::new_err(format!(
                "unknown action '{other}': use unplug, replug, replug_power_cycled, power_cycle, disconnect or connect"
            )))
            }
        };
        self.with(|n| {
            n.schedule(FaultEvent {
                at_ns,
                action,
                position,
            })
        });
        Ok(())
    }

    /// Make the SubDevice at `position` send a CoE emergency (dropped without CoE or in
    /// INIT), as a device does on a fault.
    #[pyo3(signature = (position, error_code, error_register = 0, data = None))]
    fn send_emergency(
        &self,
        position: usize,
        error_code: u16,
        error_register: u8,
        data: Option<Vec<u8>>,
    ) -> PyResult<()> {
        let mut d = [0u8; 5];
        if let Some(x) = data {
            let n = x.len().min(5);
            d[..n].copy_from_slice(&x[..n]);
        }
        let e = ecat_wire::coe::EmergencyRepr {
            error_code,
            error_register,
            data: d,
        };
        self.with(|n| n.subdevice_mut(position).map(|esc| esc.send_emergency(&e)))
            .ok_or_else(|| {
                crate::errors::SimError::new_err(format!(
                    "the simulated network has no SubDevice at position {position}"
                ))
            })
    }

    /// ESC register bytes of the SubDevice at `position` (e.g. 0x0130 for the AL status).
    fn read_register<'py>(
        &self,
        py: Python<'py>,
        position: usize,
        address: u16,
        length: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let v = self.with(|n| {
            n.subdevice(position).map(|e| {
                let mut out = vec![0u8; length];
                e.read(address, &mut out);
                out
            })
        });
        v.map(|v| PyBytes::new(py, &v)).ok_or_else(|| {
            crate::errors::SimError::new_err(format!(
                "the simulated network has no SubDevice at position {position}"
            ))
        })
    }

    /// Answer frames on the network interface `iface` in a thread (real time), as
    /// `ecat sim -i IFACE` does, until `stop_serving()`.
    fn serve(&self, py: Python<'_>, iface: &str) -> PyResult<()> {
        let mut server = self.server.lock().unwrap_or_else(|p| p.into_inner());
        if server.is_some() {
            return Err(crate::errors::SimError::new_err(
                "the network is already answering on an interface: call stop_serving() first",
            ));
        }
        let iface = iface.strip_prefix("raw:").unwrap_or(iface).to_string();
        let mut sock = py
            .allow_threads(|| RawSocket::open(&iface))
            .map_err(to_py)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (s, link) = (stop.clone(), self.link.clone());
        let h = std::thread::Builder::new()
            .name(format!("ecat-sim-{iface}"))
            .spawn(move || serve_loop(&mut sock, &link, &s))
            .map_err(|e| crate::errors::SimError::new_err(format!("cannot start: {e}")))?;
        *server = Some((stop, h));
        Ok(())
    }

    /// Stop answering on the interface (see `serve`).
    fn stop_serving(&self, py: Python<'_>) {
        let s = self.server.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((stop, h)) = s {
            stop.store(true, Ordering::Relaxed);
            py.allow_threads(|| {
                let _ = h.join();
            });
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<ecat.sim.Network '{}' ({} SubDevices, {} time)>",
            self.spec,
            self.with(|n| n.esc_count()),
            if self.vt.is_some() { "virtual" } else { "real" }
        )
    }
}

impl Drop for PyNetwork {
    fn drop(&mut self) {
        if let Some((stop, h)) = self.server.get_mut().ok().and_then(Option::take) {
            stop.store(true, Ordering::Relaxed);
            let _ = h.join();
        }
    }
}

/// Build with `dirs` searched first for ESI files: the simulator's ESI library is
/// `ECAT_ESI_PATH` followed by the network file's `esi_dirs`, so the directories go in front
/// of `ECAT_ESI_PATH` for the build (with the GIL held, so no other build sees them) and
/// the variable is restored after.
fn with_esi_dirs(
    dirs: &[PathBuf],
    build: impl FnOnce() -> Result<Network, ecat_sim::SimError>,
) -> PyResult<Network> {
    if dirs.is_empty() {
        return build().map_err(sim_err);
    }
    if let Some(d) = dirs.iter().find(|d| !d.is_dir()) {
        return Err(crate::errors::SimError::new_err(format!(
            "ESI directory {} does not exist: give directories that hold ESI (.xml) files",
            d.display()
        )));
    }
    const VAR: &str = "ECAT_ESI_PATH";
    let old = std::env::var_os(VAR);
    let mut all = dirs.to_vec();
    all.extend(old.iter().flat_map(std::env::split_paths));
    let joined = std::env::join_paths(all).map_err(|e| {
        crate::errors::SimError::new_err(format!(
            "an ESI directory name cannot go into {VAR} ({e}): rename it"
        ))
    })?;
    std::env::set_var(VAR, joined);
    let r = build();
    match old {
        Some(v) => std::env::set_var(VAR, v),
        None => std::env::remove_var(VAR),
    }
    r.map_err(sim_err)
}

/// The interface runner: receive a frame, let the network answer, send it back.
fn serve_loop(sock: &mut RawSocket, link: &Mutex<SimLink>, stop: &AtomicBool) {
    let epoch = Instant::now();
    let mut buf = vec![0u8; 2048];
    while !stop.load(Ordering::Relaxed) {
        let deadline = Instant::now() + Duration::from_millis(50);
        let n = match sock.recv(&mut buf, Some(deadline)) {
            Ok(Some(n)) => n,
            Ok(None) => continue,
            Err(_) => break,
        };
        let now = epoch.elapsed().as_nanos() as u64;
        let fate = {
            let mut g = link.lock().unwrap_or_else(|p| p.into_inner());
            g.network_mut().process(&mut buf[..n], now)
        };
        if let FrameFate::Returned { duplicate, .. } = fate {
            for _ in 0..(1 + duplicate as u8) {
                let _ = sock.send(&buf[..n]);
            }
        }
    }
}
