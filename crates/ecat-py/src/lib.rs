//! # ecat-py: Python bindings of ecat (module `ecat._ecat`)
//!
//! The native layer of the `ecat` Python package, kept small and general: it works by
//! SubDevice position and returns plain Python values; the Python code in `python/ecat/`
//! (the Pythonic API, `ecat.sim`, `ecat.pysoem`, the pytest plugin) builds on it.
//!
//! - [`activate`]: process data choices, DC and activation;
//! - [`maindevice`]: open, scan, states, SDO, SII, registers, DC, activation;
//! - [`runtime`]: the activated MainDevice, stepped from Python or cycling in a Rust thread;
//! - [`cycle_thread`]: what that thread runs and shares with Python;
//! - [`image`]: the process image mirrored into Python-owned buffers, entry layout;
//! - [`pending`]: SDO requests in flight during cycling;
//! - [`sim`]: simulated networks built and controlled from Python;
//! - [`errors`]: ecat's errors as Python exceptions.
//!
//! Nothing here panics across the boundary: every fallible call returns a Python exception,
//! and poisoned locks are recovered (the data they guard stays consistent per call).

#![warn(missing_docs)]

pub mod activate;
pub mod cycle_thread;
pub mod errors;
pub mod image;
pub mod maindevice;
pub mod pending;
pub mod runtime;
pub mod sim;

use pyo3::prelude::*;

/// The native module `ecat._ecat`.
#[pymodule]
fn _ecat(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add_class::<maindevice::PyMainDevice>()?;
    m.add_class::<runtime::PyRuntime>()?;
    m.add_class::<pending::PyPending>()?;
    m.add_class::<sim::PyNetwork>()?;
    m.add_function(wrap_pyfunction!(maindevice::decode_object, m)?)?;
    m.add_function(wrap_pyfunction!(maindevice::decode_entry, m)?)?;
    m.add_function(wrap_pyfunction!(al_status_text, m)?)?;
    m.add_function(wrap_pyfunction!(sdo_abort_text, m)?)?;
    m.add("MIN_CYCLE_NS", ecat::cycle::MIN_PERIOD_NS)?;
    Ok(())
}

/// The meaning of an AL status code, e.g. "invalid output configuration" for 0x001D.
#[pyfunction]
fn al_status_text(code: u16) -> &'static str {
    ecat_wire::al::AlStatusCode(code).description()
}

/// The meaning of an SDO abort code, e.g. "object does not exist in the object dictionary".
#[pyfunction]
fn sdo_abort_text(code: u32) -> &'static str {
    ecat_wire::coe::SdoAbortCode(code).description()
}
