//! # ecat-py: Python bindings of ecat (module `ecat._ecat`)
//!
//! The native layer of the `ecat` Python package, kept small and general: it works by
//! SubDevice position and returns plain Python values; the Python code in `python/ecat/`
//! (the Pythonic API, `ecat.sim`, `ecat.pysoem`, the pytest plugin) builds on it.
//!
//! - [`maindevice`]: open, scan, states, SDO, SII, registers, DC, activation;
//! - [`runtime`]: the activated MainDevice, stepped from Python or cycling in a Rust thread;
//! - [`image`]: the process image mirrored into Python-owned buffers, entry layout;
//! - [`pending`]: SDO requests in flight during cycling;
//! - [`sim`]: simulated networks built and controlled from Python;
//! - [`errors`]: ecat's errors as Python exceptions.
//!
//! Nothing here panics across the boundary: every fallible call returns a Python exception,
//! and poisoned locks are recovered (the data they guard stays consistent per call).

#![warn(missing_docs)]

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
    m.add("MIN_CYCLE_NS", ecat::cycle::MIN_PERIOD_NS)?;
    Ok(())
}
