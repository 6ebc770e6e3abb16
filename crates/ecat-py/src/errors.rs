//! ecat's errors as Python exceptions.
//!
//! Every [`ecat::Error`] becomes one exception whose message is the error's own sentence (who
//! and why, spec codes decoded); the class says what kind of failure it is, and fields carry
//! the numbers a program wants to branch on (`SdoAbort.code`, `AlStatusError.code`,
//! `position`). Classes, all under `ecat.Error`:
//! `LinkError` (interface, permission, link spec, OS call), `TimeoutError` (no answer, state
//! not reached in time), `WkcError` (wrong working counter), `AlStatusError` (state refused),
//! `SdoAbort` (the SubDevice aborted an SDO transfer), `MailboxError` (the mailbox transfer
//! failed below SDO), `SimError` (the simulated network).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(_ecat, Error, PyException, "Base class of every ecat error.");
create_exception!(
    _ecat,
    LinkError,
    Error,
    "The link could not be opened or used (unknown interface, no permission, OS error)."
);
create_exception!(
    _ecat,
    TimeoutError,
    Error,
    "No answer in time, or a state not reached in time."
);
create_exception!(
    _ecat,
    WkcError,
    Error,
    "A datagram came back with an unexpected working counter."
);
create_exception!(
    _ecat,
    AlStatusError,
    Error,
    "A SubDevice refused a state; `code` is the AL status code, `text` its meaning."
);
create_exception!(
    _ecat,
    SdoAbort,
    Error,
    "A SubDevice aborted an SDO transfer; `code` is the abort code, `text` its meaning."
);
create_exception!(
    _ecat,
    MailboxError,
    Error,
    "A mailbox transfer failed below the SDO level."
);
create_exception!(
    _ecat,
    SimError,
    Error,
    "The simulated network refused a request."
);

/// Set `attrs` on the exception `e`.
fn with_attrs(py: Python<'_>, e: PyErr, attrs: &[(&str, PyObject)]) -> PyErr {
    let v = e.value(py);
    for (k, x) in attrs {
        let _ = v.setattr(*k, x);
    }
    e
}

/// Convert an ecat error into its Python exception (needs the GIL for the fields).
pub fn to_py(e: ecat::Error) -> PyErr {
    use ecat::Error as E;
    let msg = e.to_string();
    Python::with_gil(|py| match e {
        E::NoSuchInterface { .. }
        | E::RawSocketPermission { .. }
        | E::BadLinkSpec { .. }
        | E::Io { .. } => LinkError::new_err(msg),
        E::Timeout { .. } | E::NoSubDevices { .. } => TimeoutError::new_err(msg),
        E::StateTimeout { who, .. } => with_attrs(
            py,
            TimeoutError::new_err(msg),
            &[(
                "position",
                who.position.into_pyobject(py).unwrap().into_any().unbind(),
            )],
        ),
        E::Wkc { expected, got, .. } => with_attrs(
            py,
            WkcError::new_err(msg),
            &[
                (
                    "expected",
                    expected.into_pyobject(py).unwrap().into_any().unbind(),
                ),
                ("got", got.into_pyobject(py).unwrap().into_any().unbind()),
            ],
        ),
        E::StateRefused { who, code, .. } => al_error(py, msg, who.position, code.0),
        E::SdoAbort { who, code, .. } => with_attrs(
            py,
            SdoAbort::new_err(msg),
            &[
                (
                    "code",
                    code.0.into_pyobject(py).unwrap().into_any().unbind(),
                ),
                (
                    "text",
                    code.description()
                        .into_pyobject(py)
                        .unwrap()
                        .into_any()
                        .unbind(),
                ),
                (
                    "position",
                    who.position.into_pyobject(py).unwrap().into_any().unbind(),
                ),
            ],
        ),
        E::Mailbox { who, .. } | E::Sii { who, .. } | E::NoCoe { who, .. } => with_attrs(
            py,
            MailboxError::new_err(msg),
            &[(
                "position",
                who.position.into_pyobject(py).unwrap().into_any().unbind(),
            )],
        ),
        E::NotFound(_) => pyo3::exceptions::PyIndexError::new_err(msg),
        E::Invalid(_) => Error::new_err(msg),
    })
}

/// An `AlStatusError` for the SubDevice at `position` refusing with `code`.
pub fn al_error(py: Python<'_>, msg: String, position: u16, code: u16) -> PyErr {
    let text = ecat_wire::al::AlStatusCode(code).description();
    with_attrs(
        py,
        AlStatusError::new_err(msg),
        &[
            ("code", code.into_pyobject(py).unwrap().into_any().unbind()),
            ("text", text.into_pyobject(py).unwrap().into_any().unbind()),
            (
                "position",
                position.into_pyobject(py).unwrap().into_any().unbind(),
            ),
        ],
    )
}

/// A simulator error as `ecat.SimError`.
pub fn sim_err(e: ecat_sim::SimError) -> PyErr {
    SimError::new_err(e.to_string())
}

/// Register the exception classes on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("LinkError", py.get_type::<LinkError>())?;
    m.add("TimeoutError", py.get_type::<TimeoutError>())?;
    m.add("WkcError", py.get_type::<WkcError>())?;
    m.add("AlStatusError", py.get_type::<AlStatusError>())?;
    m.add("SdoAbort", py.get_type::<SdoAbort>())?;
    m.add("MailboxError", py.get_type::<MailboxError>())?;
    m.add("SimError", py.get_type::<SimError>())?;
    Ok(())
}
