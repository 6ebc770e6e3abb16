//! `ecat._ecat.Runtime`: the activated MainDevice, stepped from Python or cycling in a Rust
//! thread.
//!
//! Design: two ways to drive it, one at a time.
//! - **Step mode** (after activation): `step()`, `send()`/`receive()` and `run_until_state()`
//!   run cycles in the calling thread with the GIL released. On virtual time every step
//!   advances the shared clock by one period first, so runs are deterministic.
//! - **Thread mode** (`start()` … `stop()`): the Runtime moves into a Rust thread that runs
//!   `ecat::cycle::run` with its real-time defaults; the GIL is never taken there. Queries from
//!   Python (states, WKC, counters, state requests) are closures handed to the thread through a
//!   small job list and answered at the next cycle ([`PyRuntime::with_rt`]), so Python never
//!   blocks the cycle. The perf figures are copied out at each report interval.
//!
//! The process image is mirrored to Python buffers ([`crate::image`]); events go into a queue
//! that Python reads with a timeout; SDO requests go through ecat's `SdoClient` from any
//! thread and return a [`PyPending`].

use crate::activate::ActivateArgs;
use crate::cycle_thread::{cycle_body, CycleThread, Shared};
use crate::errors::to_py;
use crate::image::{layout, Mirrors, Views};
use ecat::clock::VirtualTime;
use ecat::cycle::{CycleOptions, LoopCounters};
use ecat::perf::Metric;
use ecat::runtime::Runtime;
use ecat::MainDevice;
use ecat_wire::al::AlState;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMemoryView};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub use crate::pending::PyPending;

/// An event as `next_event` returns it: (kind, position, message, code, data).
type PyEvent = (String, u16, String, u32, Vec<u8>);

fn closed() -> PyErr {
    crate::errors::Error::new_err("the Runtime is closed")
}

/// The activated MainDevice (see the module notes).
#[pyclass(module = "ecat._ecat", name = "Runtime")]
pub struct PyRuntime {
    rt: Arc<Mutex<Option<Runtime>>>,
    thread: Mutex<Option<CycleThread>>,
    shared: Arc<Shared>,
    views: Views,
    sdo: ecat::mailbox::service::SdoClient,
    vt: Option<VirtualTime>,
    period_ns: u64,
}

impl PyRuntime {
    /// Discover the configuration, apply the PDO choices, set up DC if wanted, activate.
    pub fn activate(py: Python<'_>, md: MainDevice, a: ActivateArgs) -> PyResult<PyRuntime> {
        let vt = a.vt.clone();
        let period = a.cycle_ns;
        let rt = crate::activate::activate(py, md, a)?;
        Self::from_runtime(py, rt, vt, period)
    }

    fn from_runtime(
        py: Python<'_>,
        rt: Runtime,
        vt: Option<VirtualTime>,
        period_ns: u64,
    ) -> PyResult<PyRuntime> {
        let (mirrors, views) = Mirrors::new(py, &rt)?;
        Ok(PyRuntime {
            sdo: rt.sdo_client(),
            rt: Arc::new(Mutex::new(Some(rt))),
            thread: Mutex::new(None),
            shared: Arc::new(Shared {
                mirrors,
                events: Mutex::new(VecDeque::new()),
                events_cv: Condvar::new(),
                jobs: Mutex::new(Vec::new()),
                stop: AtomicBool::new(false),
                perf: Mutex::new(None),
                loop_counters: Mutex::new(LoopCounters::default()),
            }),
            views,
            vt,
            period_ns,
        })
    }

    fn running(&self) -> bool {
        self.thread
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Run `f` on the Runtime: directly in step mode, or at the next cycle in thread mode.
    /// The GIL is released while waiting.
    fn with_rt<T: Send + 'static>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Runtime) -> T + Send + 'static,
    ) -> PyResult<T> {
        let running = self.running();
        let (rt, shared) = (self.rt.clone(), self.shared.clone());
        py.allow_threads(move || {
            if !running {
                let mut g = rt.lock().unwrap_or_else(|p| p.into_inner());
                return g.as_mut().map(f).ok_or(0);
            }
            let (tx, rx) = mpsc::sync_channel(1);
            shared
                .jobs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Box::new(move |rt: &mut Runtime| {
                    let _ = tx.send(f(rt));
                }));
            rx.recv_timeout(Duration::from_secs(5)).map_err(|_| 1)
        })
        .map_err(|e| match e {
            0 => closed(),
            _ => crate::errors::TimeoutError::new_err(
                "the cycle thread did not answer within 5 s (it may have stopped on an error: call stop())",
            ),
        })
    }

    /// Step mode only: run `f` on the Runtime with the GIL released.
    fn stepping<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Runtime, &Shared) -> ecat::Result<T> + Send,
    ) -> PyResult<T> {
        if self.running() {
            return Err(crate::errors::Error::new_err(
                "the cycle thread is running: call stop() before stepping from Python",
            ));
        }
        let (rt, shared) = (self.rt.clone(), self.shared.clone());
        let r = py.allow_threads(move || {
            let mut g = rt.lock().unwrap_or_else(|p| p.into_inner());
            g.as_mut().map(|rt| {
                let r = f(rt, &shared);
                shared.drain_events(rt);
                r
            })
        });
        r.ok_or_else(closed)?.map_err(to_py)
    }
}

#[pymethods]
impl PyRuntime {
    /// The cycle time in ns.
    #[getter]
    fn cycle_ns(&self) -> u64 {
        self.period_ns
    }

    /// True while the cycle thread runs.
    #[getter]
    fn is_running(&self) -> bool {
        self.running()
    }

    /// Run `n` cycles now (step mode): outputs in, send, wait for the frames, inputs out.
    /// On virtual time each cycle first advances the clock by one period. Returns the WKC of
    /// domain 0 in the last cycle.
    #[pyo3(signature = (n = 1))]
    fn step(&self, py: Python<'_>, n: u64) -> PyResult<u32> {
        let (vt, period) = (self.vt.clone(), self.period_ns);
        // In chunks, so Ctrl-C (and other signals) interrupt a long run of steps.
        let mut left = n;
        loop {
            let chunk = left.min(1_000);
            left -= chunk;
            let vt = vt.clone();
            let wkc = self.stepping(py, move |rt, sh| {
                for _ in 0..chunk {
                    if let Some(v) = &vt {
                        v.advance(period);
                    }
                    sh.mirrors.outputs_in(rt);
                    rt.tx_rx(period)?;
                    sh.mirrors.inputs_out(rt);
                }
                Ok(rt.domains().first().map_or(0, |d| d.wkc()))
            })?;
            if left == 0 {
                return Ok(wkc);
            }
            py.check_signals()?;
        }
    }

    /// Send the cyclic frames with the outputs as they are now (step mode; pysoem's
    /// `send_processdata`). On virtual time the clock advances one period first.
    fn send(&self, py: Python<'_>) -> PyResult<()> {
        let (vt, period) = (self.vt.clone(), self.period_ns);
        self.stepping(py, move |rt, sh| {
            if let Some(v) = &vt {
                v.advance(period);
            }
            sh.mirrors.outputs_in(rt);
            rt.send()
        })
    }

    /// Wait up to `timeout_us` for the frames of the last send, process them and copy the
    /// inputs out (step mode; pysoem's `receive_processdata`). Returns the WKC of domain 0.
    #[pyo3(signature = (timeout_us = 2000))]
    fn receive(&self, py: Python<'_>, timeout_us: u64) -> PyResult<u32> {
        self.stepping(py, move |rt, sh| {
            let deadline = rt.now() + timeout_us * 1000;
            rt.wait_return(deadline)?;
            rt.receive()?;
            rt.process();
            sh.mirrors.inputs_out(rt);
            Ok(rt.domains().first().map_or(0, |d| d.wkc()))
        })
    }

    /// Step until every SubDevice is in `state` or `timeout` seconds (of the Runtime's clock)
    /// have passed; raises with the SubDevices still behind.
    #[pyo3(signature = (state, timeout = 10.0))]
    fn run_until_state(
        &self,
        py: Python<'_>,
        state: &Bound<'_, PyAny>,
        timeout: f64,
    ) -> PyResult<()> {
        let st = crate::maindevice::parse_state(state)?;
        let period = self.period_ns;
        let cycles = ((timeout.max(0.0) * 1e9) as u64 / period.max(1)).max(1);
        self.stepping(py, move |rt, sh| {
            sh.mirrors.outputs_in(rt);
            let r = rt.run_until_state(st, period, cycles);
            sh.mirrors.inputs_out(rt);
            r
        })
    }

    /// Walk every SubDevice to `state` (returns at once; see `states()` and the events).
    fn request_state(&self, py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<()> {
        let st = crate::maindevice::parse_state(state)?;
        self.with_rt(py, move |rt| rt.request_state(st))
    }

    /// True if every SubDevice is in the requested state.
    fn all_running(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_rt(py, |rt| rt.supervisor().all_running())
    }

    /// Per SubDevice: (AL status register, AL status code, lost, in the target state).
    fn states(&self, py: Python<'_>) -> PyResult<Vec<(u16, u16, bool, bool)>> {
        self.with_rt(py, |rt| {
            rt.supervisor()
                .states()
                .map(|s| (s.status.0, s.code.0, s.lost, s.running))
                .collect()
        })
    }

    /// Per domain: (WKC of the last cycle, expected WKC, state name).
    fn wkc(&self, py: Python<'_>) -> PyResult<Vec<(u32, u32, &'static str)>> {
        self.with_rt(py, |rt| {
            rt.domains()
                .iter()
                .map(|d| (d.wkc(), d.expected_wkc(), d.state().name()))
                .collect()
        })
    }

    /// The reference clock's DC time seen by the last cycle (ns since 2000), if DC is on.
    fn dc_time(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.with_rt(py, |rt| rt.dc_time())
    }

    /// Cycles sent so far.
    fn cycle_count(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_rt(py, |rt| rt.cycle_count())
    }

    /// Frame and link counters as a dict.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (c, e, l) = self.with_rt(py, |rt| rt.counters())?;
        let lc = *self
            .shared
            .loop_counters
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let d = PyDict::new(py);
        d.set_item("cycles", c.cycles)?;
        d.set_item("frames_sent", c.frames_sent)?;
        d.set_item("frames_received", c.frames_received)?;
        d.set_item("frames_lost", c.frames_lost)?;
        d.set_item("frames_late", c.frames_late)?;
        d.set_item("frames_duplicated", c.frames_duplicated)?;
        d.set_item("frames_corrupted", c.frames_corrupted)?;
        d.set_item("acyclic", format!("{e:?}"))?;
        d.set_item("link_tx_frames", l.tx_frames)?;
        d.set_item("link_rx_frames", l.rx_frames)?;
        d.set_item("loop_cycles", lc.cycles)?;
        d.set_item("overruns", lc.overruns)?;
        d.set_item("incomplete_returns", lc.incomplete_returns)?;
        Ok(d)
    }

    /// Per domain: dict with index, size, outputs_len, inputs_len, logical_base.
    fn domains<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let ds = self.with_rt(py, |rt| {
            rt.domains()
                .iter()
                .map(|d| {
                    (
                        d.index,
                        d.size(),
                        d.outputs_len,
                        d.inputs_len,
                        d.logical_base,
                    )
                })
                .collect::<Vec<_>>()
        })?;
        ds.into_iter()
            .map(|(i, s, o, n, b)| {
                let d = PyDict::new(py);
                d.set_item("index", i)?;
                d.set_item("size", s)?;
                d.set_item("outputs_len", o)?;
                d.set_item("inputs_len", n)?;
                d.set_item("logical_base", b)?;
                Ok(d)
            })
            .collect()
    }

    /// Domain `i`'s process image as a writable memoryview (outputs first, then inputs).
    #[pyo3(signature = (i = 0))]
    fn image(&self, py: Python<'_>, i: usize) -> PyResult<Py<PyMemoryView>> {
        self.views
            .views
            .get(i)
            .map(|v| v.clone_ref(py))
            .ok_or_else(|| {
                pyo3::exceptions::PyIndexError::new_err(format!("there is no domain {i}"))
            })
    }

    /// Process data layout of the SubDevice at `position` (see `ecat.Runtime.subdevice`).
    fn layout<'py>(&self, py: Python<'py>, position: usize) -> PyResult<Bound<'py, PyDict>> {
        let g = self.rt.lock().unwrap_or_else(|p| p.into_inner());
        match g.as_ref() {
            Some(rt) => layout(py, rt, position),
            None => Err(crate::errors::Error::new_err(
                "the layout is read while the Runtime is stepped: call it before start()",
            )),
        }
    }

    /// Read an entry's bits from the process image (under the exchange lock).
    fn read_bits(&self, domain: usize, byte: usize, bit: u8, bits: u8) -> PyResult<u64> {
        self.shared
            .mirrors
            .read_bits(domain, byte, bit, bits)
            .map_err(pyo3::exceptions::PyValueError::new_err)
    }

    /// Write an entry's bits into the process image (sent with the next cycle).
    fn write_bits(
        &self,
        domain: usize,
        byte: usize,
        bit: u8,
        bits: u8,
        value: u64,
    ) -> PyResult<()> {
        self.shared
            .mirrors
            .write_bits(domain, byte, bit, bits, value)
            .map_err(pyo3::exceptions::PyValueError::new_err)
    }

    /// Next event as (kind, position, message), waiting up to `timeout` seconds (None: don't
    /// wait). Kinds: lost, found, reached, refused, startup_failed, wrong_device, emergency.
    #[pyo3(signature = (timeout = None))]
    fn next_event(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<PyEvent>> {
        if !self.running() {
            // Step mode: collect what the supervisor has.
            let (rt, sh) = (self.rt.clone(), self.shared.clone());
            py.allow_threads(move || {
                if let Some(rt) = rt.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
                    sh.drain_events(rt);
                }
            });
        }
        let sh = self.shared.clone();
        let e = py.allow_threads(move || {
            let q = sh.events.lock().unwrap_or_else(|p| p.into_inner());
            let wait = Duration::from_secs_f64(timeout.unwrap_or(0.0).max(0.0));
            let (mut q, _) = sh
                .events_cv
                .wait_timeout_while(q, wait, |q| q.is_empty())
                .unwrap_or_else(|p| p.into_inner());
            q.pop_front()
        });
        Ok(e.map(|(k, p, m, c, d)| (k.to_string(), p, m, c, d)))
    }

    /// Queue an FoE read (`data` None) or write of the file `name` (works in step and thread
    /// mode; it progresses as cycles run).
    #[pyo3(signature = (position, name, password = 0, data = None))]
    fn foe_submit(
        &self,
        position: usize,
        name: String,
        password: u32,
        data: Option<Vec<u8>>,
    ) -> PyResult<PyPending> {
        use ecat::mailbox::foe::FoeOp;
        let op = match data {
            Some(data) => FoeOp::Write {
                name,
                password,
                data,
            },
            None => FoeOp::Read { name, password },
        };
        let p = self.sdo.submit(position, op).map_err(to_py)?;
        Ok(PyPending::new(p))
    }

    /// Queue an SDO request (works in step and thread mode; it progresses as cycles run).
    /// `op`: "upload", "download", "od_list", "object", "entry".
    #[pyo3(signature = (position, op, index = 0, subindex = 0, data = None, complete_access = false))]
    fn sdo_submit(
        &self,
        position: usize,
        op: &str,
        index: u16,
        subindex: u8,
        data: Option<Vec<u8>>,
        complete_access: bool,
    ) -> PyResult<PyPending> {
        let op = crate::pending::sdo_op(op, index, subindex, data, complete_access)?;
        let p = self.sdo.submit(position, op).map_err(to_py)?;
        Ok(PyPending::new(p))
    }

    /// Start the cycle thread. Returns what the real-time setup did (one note per setting).
    /// With `latency_hold` (by default as `realtime`) the thread holds `/dev/cpu_dma_latency`
    /// at 0 while it cycles (CPUs out of deep idle states, as cyclictest does); without
    /// permission one sentence goes to stderr and it cycles on.
    #[pyo3(signature = (*, cpu = None, priority = None, busy_wait_ns = 0, realtime = true,
                        lock_memory = false, report_interval_ns = 100_000_000,
                        latency_hold = None))]
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        py: Python<'_>,
        cpu: Option<usize>,
        priority: Option<i32>,
        busy_wait_ns: u64,
        realtime: bool,
        lock_memory: bool,
        report_interval_ns: u64,
        latency_hold: Option<bool>,
    ) -> PyResult<Vec<String>> {
        let mut th = self.thread.lock().unwrap_or_else(|p| p.into_inner());
        if th.is_some() {
            return Err(crate::errors::Error::new_err(
                "the cycle thread is already running",
            ));
        }
        let opts = CycleOptions {
            period_ns: self.period_ns,
            duration_ns: 0,
            priority,
            cpu,
            lock_memory,
            busy_wait_ns,
            report_interval_ns,
            auto_realtime: realtime,
        };
        opts.validate().map_err(to_py)?;
        let rt = self
            .rt
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(closed)?;
        let sh = self.shared.clone();
        sh.stop.store(false, Ordering::Relaxed);
        let (vt, period) = (self.vt.clone(), self.period_ns);
        let (ntx, nrx) = mpsc::sync_channel(1);
        let hold = latency_hold.unwrap_or(realtime);
        let h = std::thread::Builder::new()
            .name("ecat-cycle".into())
            .spawn(move || cycle_body(rt, opts, hold, sh, vt, period, ntx))
            .map_err(|e| {
                crate::errors::Error::new_err(format!("cannot start the cycle thread: {e}"))
            })?;
        let notes = py.allow_threads(move || nrx.recv());
        match notes {
            Ok(Ok(n)) => {
                *th = Some(h);
                Ok(n)
            }
            other => {
                let (rt, _) = h
                    .join()
                    .map_err(|_| crate::errors::Error::new_err("the cycle thread panicked"))?;
                *self.rt.lock().unwrap_or_else(|p| p.into_inner()) = Some(rt);
                match other {
                    Ok(Err(e)) => Err(to_py(e)),
                    _ => Err(crate::errors::Error::new_err(
                        "the cycle thread did not start",
                    )),
                }
            }
        }
    }

    /// Stop the cycle thread (the Runtime returns to step mode). Raises the loop's error, if
    /// it stopped on one.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let h = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some(h) = h else { return Ok(()) };
        self.shared.stop.store(true, Ordering::Relaxed);
        let (rt, r) = py
            .allow_threads(|| h.join())
            .map_err(|_| crate::errors::Error::new_err("the cycle thread panicked"))?;
        let mut rt = rt;
        // Jobs queued while the thread was stopping.
        self.shared.run_jobs(&mut rt);
        self.shared.drain_events(&mut rt);
        *self.rt.lock().unwrap_or_else(|p| p.into_inner()) = Some(rt);
        r.map(|_| ()).map_err(to_py)
    }

    /// Cycle figures of the thread as a dict: metric → {count, min_us, avg_us, max_us,
    /// std_us, p50_us, p99_us}, plus the loop counters. Empty before the thread ran.
    fn perf<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let p = *self.shared.perf.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = p {
            for (m, s) in Metric::ALL.iter().zip(p.iter()) {
                let x = PyDict::new(py);
                x.set_item("count", s.count)?;
                x.set_item("min_us", s.min as f64 / 1e3)?;
                x.set_item("avg_us", s.avg / 1e3)?;
                x.set_item("max_us", s.max as f64 / 1e3)?;
                x.set_item("std_us", s.std / 1e3)?;
                x.set_item("p50_us", s.p50 as f64 / 1e3)?;
                x.set_item("p99_us", s.p99 as f64 / 1e3)?;
                x.set_item("line", s.perfmsmt(m.label()))?;
                d.set_item(m.key(), x)?;
            }
        }
        Ok(d)
    }

    /// Stop the thread, walk every SubDevice to INIT (best effort, bounded) and release the
    /// link. Safe to call twice.
    fn close(&self, py: Python<'_>) {
        let _ = self.stop(py);
        let (rt, period, vt) = (
            self.rt.clone(),
            self.period_ns.max(100_000),
            self.vt.clone(),
        );
        py.allow_threads(move || {
            let taken = rt.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(mut rt) = taken {
                rt.request_state(AlState::Init);
                let end = Instant::now() + Duration::from_secs(2);
                for _ in 0..5_000 {
                    if let Some(v) = &vt {
                        v.advance(period);
                    }
                    if rt.tx_rx(period).is_err()
                        || rt.supervisor().all_running()
                        || Instant::now() > end
                    {
                        break;
                    }
                    if vt.is_none() {
                        std::thread::sleep(Duration::from_nanos(period.min(10_000_000)));
                    }
                }
            }
        });
    }
}

impl Drop for PyRuntime {
    fn drop(&mut self) {
        // The mirrors point into Python buffers this object keeps alive: the thread must end
        // first.
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.thread.get_mut().ok().and_then(Option::take) {
            let _ = h.join();
        }
    }
}
