//! `ecat._ecat.MainDevice`: the configuration phase (open, scan, states, SDO, SII, registers,
//! DC) and activation into a [`crate::runtime::PyRuntime`].
//!
//! Design: the native class works by SubDevice position and returns plain Python values
//! (dicts, bytes, ints); the `ecat` package builds the friendly objects (`SubDevice`) on top.
//! Every bus operation runs with the GIL released. The MainDevice sits in a `Mutex<Option<_>>`:
//! `activate` moves it into the runtime and `close` drops it, after which every call raises
//! one clear error.

use crate::activate::ActivateArgs;
use crate::errors::to_py;
use crate::runtime::PyRuntime;
use crate::sim::PyNetwork;
use ecat::clock::VirtualTime;
use ecat::mailbox::sdo::SdoOp;
use ecat::MainDevice;
use ecat_wire::al::AlState;
use ecat_wire::coe::info::{value_info, EntryDescriptionRepr, ObjectDescriptionRepr, OdListType};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Parse a state given as a name (`"OP"`, `"PREOP"`, `"SAFE-OP"`) or as AL state bits (8).
pub fn parse_state(s: &Bound<'_, PyAny>) -> PyResult<AlState> {
    let st = if let Ok(n) = s.extract::<u8>() {
        AlState::from_bits(n)
    } else {
        AlState::parse_name(&s.extract::<String>()?)
    };
    st.ok_or_else(|| {
        crate::errors::Error::new_err(format!(
            "unknown state {s}: use INIT, PREOP, BOOT, SAFEOP or OP (or 1, 2, 3, 4, 8)"
        ))
    })
}

/// The SII-described PDOs of one direction as a list of dicts.
fn pdos<'py>(py: Python<'py>, list: &[ecat::subdevice::Pdo]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for p in list {
        let d = PyDict::new(py);
        d.set_item("index", p.index)?;
        d.set_item("name", &p.name)?;
        d.set_item("sync_manager", p.sync_manager)?;
        let entries = PyList::empty(py);
        for e in &p.entries {
            let ed = PyDict::new(py);
            ed.set_item("index", e.index)?;
            ed.set_item("subindex", e.subindex)?;
            ed.set_item("bits", e.bits)?;
            ed.set_item("data_type", e.data_type)?;
            ed.set_item("name", &e.name)?;
            entries.append(ed)?;
        }
        d.set_item("entries", entries)?;
        out.append(d)?;
    }
    Ok(out)
}

/// What the scan found about one SubDevice, as a dict.
pub fn info_dict<'py>(py: Python<'py>, s: &ecat::SubDevice) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("position", s.position)?;
    d.set_item("station", s.station)?;
    d.set_item("alias", s.alias)?;
    d.set_item("name", &s.name)?;
    d.set_item("order", &s.order)?;
    d.set_item("group", &s.group)?;
    d.set_item("vendor_id", s.identity.vendor_id)?;
    d.set_item("product_code", s.identity.product_code)?;
    d.set_item("revision", s.identity.revision)?;
    d.set_item("serial", s.identity.serial)?;
    d.set_item("mailbox_protocols", s.mailbox.protocol_names())?;
    d.set_item("has_coe", ecat::runtime::coe_area(s).is_some())?;
    d.set_item("dc_supported", s.dc_supported())?;
    d.set_item("dc_assign_activate", s.dc_assign_activate)?;
    d.set_item("input_bits", s.input_bits())?;
    d.set_item("output_bits", s.output_bits())?;
    d.set_item("al_status", s.al_status.0)?;
    d.set_item("al_status_code", s.al_status_code.0)?;
    d.set_item("sii", PyBytes::new(py, &s.sii))?;
    d.set_item("tx_pdos", pdos(py, &s.tx_pdos)?)?;
    d.set_item("rx_pdos", pdos(py, &s.rx_pdos)?)?;
    Ok(d)
}

type Shared = Arc<Mutex<Option<MainDevice>>>;

/// An EtherCAT MainDevice in its configuration phase.
#[pyclass(module = "ecat._ecat", name = "MainDevice")]
pub struct PyMainDevice {
    inner: Shared,
    vt: Option<VirtualTime>,
    link_name: String,
}

impl PyMainDevice {
    /// Run `f` on the MainDevice with the GIL released.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut MainDevice) -> ecat::Result<T> + Send,
    ) -> PyResult<T> {
        let inner = self.inner.clone();
        let r = py.allow_threads(move || {
            let mut g = inner.lock().unwrap_or_else(|p| p.into_inner());
            g.as_mut().map(f)
        });
        match r {
            Some(r) => r.map_err(to_py),
            None => Err(crate::errors::Error::new_err(format!(
                "the MainDevice on '{}' is closed or activated: use its Runtime, or open a new one",
                self.link_name
            ))),
        }
    }
}

#[pymethods]
impl PyMainDevice {
    /// Open the link `link`: an interface name (`eth0`, `raw:eth0`, `mmap:eth0`, `xdp:eth0`),
    /// `sim:io` / `sim:servo6` / `sim:net.toml` (in-process, real time), or an
    /// `ecat.sim.Network` (in-process, on the network's clock).
    #[new]
    fn new(py: Python<'_>, link: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(net) = link.downcast::<PyNetwork>() {
            let net = net.borrow();
            let l = net.shared_link();
            let name = ecat::link::Link::name(&l).to_string();
            return Ok(PyMainDevice {
                inner: Arc::new(Mutex::new(Some(MainDevice::with_link(Box::new(l))))),
                vt: net.vt.clone(),
                link_name: name,
            });
        }
        let spec: String = link.extract().map_err(|_| {
            crate::errors::LinkError::new_err(format!(
                "cannot use {link} as a link: give an interface name such as 'eth0', 'sim:io', or an ecat.sim.Network"
            ))
        })?;
        let s = spec.clone();
        let md = py
            .allow_threads(move || MainDevice::open(&s))
            .map_err(to_py)?;
        Ok(PyMainDevice {
            inner: Arc::new(Mutex::new(Some(md))),
            vt: None,
            link_name: spec,
        })
    }

    /// The link's name.
    #[getter]
    fn link(&self) -> &str {
        &self.link_name
    }

    /// A human description of the link.
    fn describe(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |md| Ok(md.bus().link().describe()))
    }

    /// Scan the bus: one info dict per SubDevice, in ring order.
    fn scan<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let subs = self.with(py, |md| md.scan().map(<[ecat::SubDevice]>::to_vec))?;
        subs.iter().map(|s| info_dict(py, s)).collect()
    }

    /// The info dicts of the last scan (AL status as last read).
    fn subdevices<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let subs = self.with(py, |md| Ok(md.subdevices().to_vec()))?;
        subs.iter().map(|s| info_dict(py, s)).collect()
    }

    /// Read every SubDevice's AL status now: a list of (AL status register, AL status code).
    fn read_states(&self, py: Python<'_>) -> PyResult<Vec<(u16, u16)>> {
        self.with(py, |md| {
            md.refresh_states()?;
            Ok(md
                .subdevices()
                .iter()
                .map(|s| (s.al_status.0, s.al_status_code.0))
                .collect())
        })
    }

    /// Request `state` from the SubDevices at `positions` (all if None) and wait up to
    /// `timeout` seconds. Raises `AlStatusError` naming the SubDevice and code on refusal.
    #[pyo3(signature = (state, positions = None, timeout = 5.0))]
    fn request_state(
        &self,
        py: Python<'_>,
        state: &Bound<'_, PyAny>,
        positions: Option<Vec<usize>>,
        timeout: f64,
    ) -> PyResult<()> {
        let st = parse_state(state)?;
        let p = positions.unwrap_or_default();
        let t = Duration::from_secs_f64(timeout.max(0.0));
        self.with(py, move |md| md.request_state(&p, st, t))
    }

    /// Read object `index:subindex` of the SubDevice at `position` (the whole object with
    /// `complete_access`).
    #[pyo3(signature = (position, index, subindex = 0, complete_access = false))]
    fn sdo_read<'py>(
        &self,
        py: Python<'py>,
        position: usize,
        index: u16,
        subindex: u8,
        complete_access: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let v = self.with(py, |md| {
            md.sdo_upload(position, index, subindex, complete_access)
        })?;
        Ok(PyBytes::new(py, &v))
    }

    /// Write `data` to object `index:subindex` of the SubDevice at `position`.
    #[pyo3(signature = (position, index, subindex, data, complete_access = false))]
    fn sdo_write(
        &self,
        py: Python<'_>,
        position: usize,
        index: u16,
        subindex: u8,
        data: Vec<u8>,
        complete_access: bool,
    ) -> PyResult<()> {
        self.with(py, |md| {
            md.sdo_download(position, index, subindex, complete_access, &data)
        })
    }

    /// The object dictionary over SDO Information: a list of dicts (index, name, object_code,
    /// data_type, max_subindex, entries: subindex, name, data_type, bit_length, access).
    /// `entries=False` lists objects only (faster).
    #[pyo3(signature = (position, entries = true))]
    fn sdo_info<'py>(
        &self,
        py: Python<'py>,
        position: usize,
        entries: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let raw = self.with(py, |md| od_raw(md, position, entries))?;
        let out = PyList::empty(py);
        for (index, obj, ents) in raw {
            let d = decode_object(py, &obj)?;
            d.set_item("index", index)?;
            let el = PyList::empty(py);
            for (sub, body) in ents {
                if let Some(ed) = decode_entry(py, &body)? {
                    ed.set_item("subindex", sub)?;
                    el.append(ed)?;
                }
            }
            d.set_item("entries", el)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// Read the file `name` of the SubDevice at `position` over FoE (`password` 0: none).
    #[pyo3(signature = (position, name, password = 0))]
    fn foe_read<'py>(
        &self,
        py: Python<'py>,
        position: usize,
        name: String,
        password: u32,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let v = self.with(py, move |md| md.foe_read(position, &name, password))?;
        Ok(PyBytes::new(py, &v))
    }

    /// Write `data` as the file `name` of the SubDevice at `position` over FoE.
    #[pyo3(signature = (position, name, data, password = 0))]
    fn foe_write(
        &self,
        py: Python<'_>,
        position: usize,
        name: String,
        data: Vec<u8>,
        password: u32,
    ) -> PyResult<()> {
        self.with(py, move |md| md.foe_write(position, &name, password, &data))
    }

    /// Read `length` bytes of ESC memory at `address` of the SubDevice at `position`.
    fn read_memory<'py>(
        &self,
        py: Python<'py>,
        position: usize,
        address: u16,
        length: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let v = self.with(py, |md| md.read_memory(position, address, length))?;
        Ok(PyBytes::new(py, &v))
    }

    /// Write `data` to ESC memory at `address` of the SubDevice at `position`.
    fn write_memory(
        &self,
        py: Python<'_>,
        position: usize,
        address: u16,
        data: Vec<u8>,
    ) -> PyResult<()> {
        self.with(py, |md| md.write_memory(position, address, &data))
    }

    /// Set up distributed clocks (delays, offsets, static drift compensation). Returns the
    /// reference clock's position, or None if no SubDevice supports DC.
    fn configure_dc(&self, py: Python<'_>) -> PyResult<Option<u16>> {
        self.with(py, |md| {
            Ok(md
                .configure_dc(ecat::dc::setup::DcOptions::default())?
                .map(|s| s.reference_position))
        })
    }

    /// Things worth knowing that were not errors (e.g. a fallback to the SII's PDOs).
    fn notes(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |md| Ok(md.notes().to_vec()))
    }

    /// Lay out the process data and hand the bus to a Runtime (this object is then spent).
    /// `cycle_ns`: the cycle; `target`: the state to walk every SubDevice to; `dc`: None
    /// (auto: when a SubDevice's SII asks for SYNC0), True or False.
    /// `pdo`: PDOs to assign instead, as (position, outputs?, PDO index, entries or None for
    /// the PDO's current mapping).
    #[pyo3(signature = (cycle_ns = 1_000_000, target = None, dc = None, pdo = None))]
    fn activate(
        &self,
        py: Python<'_>,
        cycle_ns: u64,
        target: Option<&Bound<'_, PyAny>>,
        dc: Option<bool>,
        pdo: Option<Vec<crate::activate::PdoChoice>>,
    ) -> PyResult<PyRuntime> {
        let target = match target {
            Some(t) => parse_state(t)?,
            None => AlState::Op,
        };
        let md = {
            let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            g.take()
        }
        .ok_or_else(|| {
            crate::errors::Error::new_err(format!(
                "the MainDevice on '{}' is closed or already activated",
                self.link_name
            ))
        })?;
        PyRuntime::activate(
            py,
            md,
            ActivateArgs {
                cycle_ns,
                target,
                dc,
                vt: self.vt.clone(),
                pdo: pdo.unwrap_or_default(),
            },
        )
    }

    /// Request INIT from every SubDevice (best effort) and close the link.
    fn close(&self, py: Python<'_>) {
        let md = self.inner.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(mut md) = md {
            py.allow_threads(move || {
                if !md.subdevices().is_empty() {
                    let _ = md.request_state(&[], AlState::Init, Duration::from_secs(2));
                }
            });
        }
    }

    /// True once closed or activated.
    #[getter]
    fn closed(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }
}

/// Object list, each object's description and (optionally) each entry's description.
type OdRaw = Vec<(u16, Vec<u8>, Vec<(u8, Vec<u8>)>)>;

fn od_raw(md: &mut MainDevice, position: usize, entries: bool) -> ecat::Result<OdRaw> {
    let list = md.sdo(
        position,
        SdoOp::OdList {
            list_type: OdListType(1),
        },
    )?;
    let mut out = Vec::new();
    for c in list.chunks_exact(2) {
        let index = u16::from_le_bytes([c[0], c[1]]);
        let obj = md.sdo(position, SdoOp::ObjectDescription { index })?;
        let mut ents = Vec::new();
        if entries {
            let max = ObjectDescriptionRepr::parse(&obj).map_or(0, |o| o.max_subindex);
            for sub in 0..=max {
                let op = SdoOp::EntryDescription {
                    index,
                    subindex: sub,
                    value_info: value_info::ACCESS,
                };
                if let Ok(b) = md.sdo(position, op) {
                    ents.push((sub, b));
                }
            }
        }
        out.push((index, obj, ents));
    }
    Ok(out)
}

/// An SDO Information object description (the answer's payload) as a dict: index, name,
/// object_code, data_type, max_subindex (empty name and zeros if it cannot be decoded).
#[pyfunction]
pub fn decode_object<'py>(py: Python<'py>, body: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match ObjectDescriptionRepr::parse(body) {
        Ok(o) => {
            d.set_item("index", o.index)?;
            d.set_item("name", ecat_wire::Latin1(o.name).trim().to_string())?;
            d.set_item("object_code", o.object_code.0)?;
            d.set_item("data_type", o.data_type.0)?;
            d.set_item("max_subindex", o.max_subindex)?;
        }
        Err(_) => {
            d.set_item("index", 0)?;
            d.set_item("name", "")?;
            d.set_item("object_code", 0)?;
            d.set_item("data_type", 0)?;
            d.set_item("max_subindex", 0)?;
        }
    }
    Ok(d)
}

/// An SDO Information entry description as a dict: subindex, name, data_type,
/// data_type_name, bit_length, access; None if it cannot be decoded.
#[pyfunction]
pub fn decode_entry<'py>(py: Python<'py>, body: &[u8]) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Ok(e) = EntryDescriptionRepr::parse(body) else {
        return Ok(None);
    };
    let ed = PyDict::new(py);
    ed.set_item("subindex", e.subindex)?;
    let name = e
        .fields()
        .map(|f| ecat_wire::Latin1(f.name).trim().to_string())
        .unwrap_or_default();
    ed.set_item("name", name)?;
    ed.set_item("data_type", e.data_type.0)?;
    ed.set_item("data_type_name", e.data_type.name())?;
    ed.set_item("bit_length", e.bit_len)?;
    ed.set_item("access", e.access.0)?;
    Ok(Some(ed))
}
