//! `ecat._ecat.Pending`: the answer to an SDO request queued on a cycling Runtime.
//!
//! Wraps ecat's [`Pending`]; `wait` releases the GIL, so a Python thread can block on it
//! while another steps the Runtime, and the `ecat` package turns it into a
//! `concurrent.futures.Future`.

use crate::errors::to_py;
use ecat::mailbox::sdo::SdoOp;
use ecat::mailbox::service::Pending;
use ecat_wire::coe::info::{value_info, OdListType};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Mutex;
use std::time::Duration;

/// Build an [`SdoOp`] from its Python description.
pub fn sdo_op(
    op: &str,
    index: u16,
    subindex: u8,
    data: Option<Vec<u8>>,
    complete_access: bool,
) -> PyResult<SdoOp> {
    Ok(match (op, data) {
        ("upload", _) => SdoOp::Upload {
            index,
            subindex,
            complete_access,
        },
        ("download", Some(data)) => SdoOp::Download {
            index,
            subindex,
            complete_access,
            data,
        },
        ("od_list", _) => SdoOp::OdList {
            list_type: OdListType(1),
        },
        ("object", _) => SdoOp::ObjectDescription { index },
        ("entry", _) => SdoOp::EntryDescription {
            index,
            subindex,
            value_info: value_info::ACCESS,
        },
        ("download", None) => {
            return Err(crate::errors::Error::new_err(
                "an SDO download needs data (bytes)",
            ))
        }
        (other, _) => {
            return Err(crate::errors::Error::new_err(format!(
                "unknown SDO operation '{other}': use upload, download, od_list, object or entry"
            )))
        }
    })
}

/// An SDO request in flight.
#[pyclass(module = "ecat._ecat", name = "Pending")]
pub struct PyPending {
    p: Pending,
    result: Mutex<Option<ecat::Result<Vec<u8>>>>,
}

impl PyPending {
    /// Wrap ecat's handle.
    pub fn new(p: Pending) -> PyPending {
        PyPending {
            p,
            result: Mutex::new(None),
        }
    }

    fn take(&self, py: Python<'_>, wait: Option<Duration>) -> Option<PyResult<Py<PyBytes>>> {
        let mut g = self.result.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            *g = match wait {
                Some(t) => py.allow_threads(|| self.p.wait(t)),
                None => self.p.poll(),
            };
        }
        g.as_ref().map(|r| match r {
            Ok(v) => Ok(PyBytes::new(py, v).unbind()),
            Err(e) => Err(to_py(clone_err(e))),
        })
    }
}

/// Errors are not `Clone`; keep the kind and sentence by rebuilding the variants that matter.
fn clone_err(e: &ecat::Error) -> ecat::Error {
    use ecat::Error as E;
    match e {
        E::SdoAbort { who, what, code } => E::SdoAbort {
            who: who.clone(),
            what: what.clone(),
            code: *code,
        },
        E::Mailbox { who, what, reason } => E::Mailbox {
            who: who.clone(),
            what: what.clone(),
            reason: reason.clone(),
        },
        E::NoCoe { who, protocols } => E::NoCoe {
            who: who.clone(),
            protocols: protocols.clone(),
        },
        other => E::Invalid(other.to_string()),
    }
}

#[pymethods]
impl PyPending {
    /// True once the answer (or the error) is there.
    fn done(&self, py: Python<'_>) -> bool {
        self.take(py, None).is_some()
    }

    /// Wait up to `timeout` seconds (None: forever) for the answer: the bytes read (empty for
    /// a download), or the error raised (`SdoAbort`, `MailboxError`, ...).
    #[pyo3(signature = (timeout = None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Py<PyBytes>> {
        let t = Duration::from_secs_f64(timeout.unwrap_or(1e9).max(0.0));
        match self.take(py, Some(t)) {
            Some(r) => r,
            None => Err(crate::errors::TimeoutError::new_err(format!(
                "no SDO answer within {:.3} s (is the Runtime cycling?)",
                t.as_secs_f64()
            ))),
        }
    }
}
