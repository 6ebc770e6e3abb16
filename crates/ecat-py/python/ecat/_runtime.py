"""The cyclic phase: ``Runtime``, process data by entry name, events, async SDO.

Design: ``Runtime`` wraps the native ``ecat._ecat.Runtime``. Its cycle runs in a Rust thread
(``start``) or is stepped from Python (``step``). The process image lives in Python-owned
buffers (writable ``memoryview``s, numpy-wrappable without copies) that the cycle mirrors to
and from the wire each cycle; ``ProcessData`` reads and writes entries by name under the
exchange lock. SDO requests are queued to the cycle and return ``concurrent.futures.Future``s
completed by one helper thread per Runtime. Events come through ``Runtime.events``, a
queue-like reader (``get(timeout)``, ``get_nowait()``, iteration drains).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import queue
import threading
import time
import weakref
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

from . import _ecat
from ._core import ObjectEntry, ObjectInfo, state_name
from ._types import TypeSpec, decode, encode, entry_raw, entry_value


# Runtimes with helper threads: stopped at exit, before the interpreter finalizes (a helper
# thread waiting in native code must not wake up into a finalized interpreter).
_live: "weakref.WeakSet[Runtime]" = weakref.WeakSet()


@atexit.register
def _stop_all_helpers() -> None:
    for rt in list(_live):
        rt._stop_helpers()


class Event(NamedTuple):
    """Something the supervisor reports: ``kind`` is lost, found, reached, refused,
    startup_failed, startup_skipped (an optional startup request failed and was passed over),
    wrong_device or emergency; ``code`` is the AL status code of a refusal or
    an emergency's error code; ``data`` an emergency's error register and 5 manufacturer
    bytes. Emergencies come as soon as the runtime reads them from the SubDevice's mailbox
    (cyclically where it polls mailboxes, otherwise during its next SDO transfer)."""

    kind: str
    position: int
    message: str
    code: int
    data: bytes = b""


class Events:
    """Queue-like reader of a Runtime's events."""

    def __init__(self, native):
        self._native = native

    def get(self, block: bool = True, timeout: Optional[float] = None) -> Event:
        """The next event; raises ``queue.Empty`` if none comes within ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = 0.0 if not block else (0.5 if deadline is None else max(0.0, deadline - time.monotonic()))
            e = self._native.next_event(min(left, 0.5))
            if e is not None:
                return Event(e[0], e[1], e[2], e[3], bytes(e[4]))
            if not block or (deadline is not None and time.monotonic() >= deadline):
                raise queue.Empty

    def get_nowait(self) -> Event:
        """The next event if there is one, else ``queue.Empty``."""
        return self.get(block=False)

    def __iter__(self) -> Iterator[Event]:
        """Drain the events there are now."""
        while True:
            e = self._native.next_event(None)
            if e is None:
                return
            yield Event(e[0], e[1], e[2], e[3], bytes(e[4]))


class Entry(NamedTuple):
    """One mapped PDO entry and where it sits in the process image."""

    name: str
    pdo_index: int
    pdo_name: str
    index: int
    subindex: int
    bits: int
    data_type: int
    direction: str
    domain: int
    byte: int
    bit: int


class ProcessData:
    """A SubDevice's outputs or inputs: ``pd["Channel 1"]``, ``pd[0x7000, 1]``,
    ``pd["0x7000:01"]``, ``pd["PDO name/Entry name"]``; ``pd.raw`` is the writable
    memoryview of its bytes."""

    def __init__(self, rt: "Runtime", entries: List[Entry], raw: memoryview):
        self._rt = rt
        self.entries = entries
        self.raw = raw
        self._by: Dict[Any, Entry] = {}
        self._names: List[str] = []
        counts: Dict[str, int] = {}
        per_pdo: Dict[int, int] = {}
        for e in entries:
            counts[e.name] = counts.get(e.name, 0) + 1
            per_pdo[e.pdo_index] = per_pdo.get(e.pdo_index, 0) + 1
            if e.pdo_name:
                counts[e.pdo_name] = counts.get(e.pdo_name, 0) + (1 if per_pdo[e.pdo_index] == 1 else 0)
        for e in entries:
            self._by[(e.index, e.subindex)] = e
            self._by[f"0x{e.index:04x}:{e.subindex:02x}"] = e
            qualified = f"{e.pdo_name}/{e.name}" if e.pdo_name else ""
            if qualified:
                self._by[qualified] = e
            # The friendliest unique name: the PDO's name when it maps one entry
            # (e.g. "Channel 1"), else the entry's name, else "PDO/entry".
            short = ""
            if e.pdo_name and per_pdo[e.pdo_index] == 1 and counts.get(e.pdo_name) == 1 and e.name != e.pdo_name:
                short = e.pdo_name
                if counts.get(e.name) == 1:
                    self._by[e.name] = e
            elif e.name and counts[e.name] == 1:
                short = e.name
            if short:
                self._by[short] = e
            self._names.append(short or qualified or f"0x{e.index:04x}:{e.subindex:02x}")

    def _find(self, key) -> Entry:
        k = key.lower() if isinstance(key, str) and key.lower().startswith("0x") else key
        if isinstance(k, int):
            k = (k, 0)
        e = self._by.get(k)
        if e is None:
            names = ", ".join(repr(n) for n in self.keys())
            raise KeyError(f"no entry {key!r} here; entries: {names or 'none'}")
        return e

    def keys(self) -> List[str]:
        """Entry names: the PDO's name for single-entry PDOs, else the entry's name, or
        ``PDO/entry`` where a name repeats."""
        return list(self._names)

    def __contains__(self, key) -> bool:
        try:
            self._find(key)
            return True
        except KeyError:
            return False

    def __getitem__(self, key) -> Union[int, float, bool]:
        e = self._find(key)
        return entry_value(self._rt._native.read_bits(e.domain, e.byte, e.bit, e.bits), e.bits, e.data_type)

    def __setitem__(self, key, value) -> None:
        e = self._find(key)
        self._rt._native.write_bits(e.domain, e.byte, e.bit, e.bits, entry_raw(value, e.bits, e.data_type))

    def to_dict(self) -> Dict[str, Any]:
        """Every entry's value by name."""
        return {k: self[k] for k in self.keys()}

    def __repr__(self) -> str:
        return f"<ProcessData {self.to_dict()}>"


class SubDeviceData:
    """The process data of one SubDevice in a Runtime (``rt.subdevice(position)``)."""

    def __init__(self, rt: "Runtime", position: int):
        lay = rt._native.layout(position)
        self.position = position
        entries = [Entry(**e) for e in lay["entries"]]

        def view(span):
            if span is None:
                return memoryview(bytearray(0))
            d, off, n = span
            return rt._native.image(d)[off : off + n]

        self.outputs = ProcessData(rt, [e for e in entries if e.direction == "output"], view(lay["outputs"]))
        self.inputs = ProcessData(rt, [e for e in entries if e.direction == "input"], view(lay["inputs"]))


class Runtime:
    """The activated MainDevice (see the module notes). Context manager: INIT on exit."""

    def __init__(self, native, md=None):
        self._native = native
        self._md = md
        self._subs: Dict[int, SubDeviceData] = {}
        self._futures: "queue.Queue" = queue.Queue()
        self._completer: Optional[threading.Thread] = None
        self._closed = False
        self._helpers: List[threading.Thread] = []
        self._helpers_stop = False
        self.events = Events(native)
        self.cycle_ns: int = native.cycle_ns
        # Layouts are read while stepping; cache them before a thread takes the Runtime.
        n = len(native.states())
        for p in range(n):
            self._subs[p] = SubDeviceData(self, p)

    def __enter__(self) -> "Runtime":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- driving --------------------------------------------------------------------
    def start(self, **options: Any) -> List[str]:
        """Run the cycle in a Rust real-time thread (GIL released). Options: ``cpu``,
        ``priority``, ``busy_wait_ns``, ``realtime`` (default True: SCHED_FIFO and locked
        memory when permitted), ``lock_memory``, ``latency_hold`` (default: as ``realtime``;
        hold /dev/cpu_dma_latency at 0 while cycling so the CPUs stay out of deep idle states;
        without permission one sentence goes to stderr). Returns what the
        real-time setup did."""
        return self._native.start(**options)

    def stop(self) -> None:
        """Stop the thread; the Runtime can be stepped again."""
        self._native.stop()

    @property
    def running(self) -> bool:
        """True while the cycle thread runs."""
        return self._native.is_running

    def step(self, n: int = 1) -> int:
        """Run ``n`` cycles from Python (not while the thread runs). Returns domain 0's WKC."""
        return self._native.step(n)

    def request_state(self, state: Union[str, int]) -> None:
        """Walk every SubDevice to ``state``."""
        self._native.request_state(state)

    def wait_state(self, state: Union[str, int], timeout: float = 10.0) -> None:
        """Wait (stepping, when not threaded) until every SubDevice is in ``state``."""
        if not self.running:
            self._native.run_until_state(state, timeout)
            return
        self._native.request_state(state)
        end = time.monotonic() + timeout
        while not self._native.all_running():
            if time.monotonic() > end:
                behind = [
                    f"{p}: {state_name(s[0])}" for p, s in enumerate(self._native.states()) if not s[3]
                ]
                raise _ecat.TimeoutError(
                    f"not every SubDevice reached {state} within {timeout} s: {', '.join(behind)}"
                )
            time.sleep(0.005)

    def close(self) -> None:
        """Stop the thread, bring every SubDevice to INIT (bounded), release the link."""
        if self._closed:
            return
        self._closed = True
        self._stop_helpers()
        self._native.close()

    def _stop_helpers(self) -> None:
        self._helpers_stop = True
        self._futures.put(None)
        for t in self._helpers:
            if t is not threading.current_thread():
                t.join(timeout=2)
        self._helpers = []

    def _helper(self, target, name: str) -> threading.Thread:
        t = threading.Thread(target=target, name=name, daemon=True)
        self._helpers.append(t)
        _live.add(self)
        t.start()
        return t

    def on_event(self, callback) -> None:
        """Call ``callback(event)`` for every event from now on, from a helper thread (the
        events then no longer reach ``rt.events``)."""

        def pump():
            while not self._helpers_stop:
                try:
                    e = self.events.get(timeout=0.2)
                except queue.Empty:
                    continue
                except _ecat.Error:
                    return
                callback(e)

        self._helper(pump, "ecat-events")

    # -- process data -----------------------------------------------------------------
    def subdevice(self, position: int) -> SubDeviceData:
        """Process data of the SubDevice at ``position`` (``.outputs``, ``.inputs``)."""
        try:
            return self._subs[position]
        except KeyError:
            raise IndexError(f"there is no SubDevice at position {position}; the bus has {len(self._subs)}") from None

    def image(self, domain: int = 0) -> memoryview:
        """Domain ``domain``'s whole image: outputs first, then inputs."""
        return self._native.image(domain)

    @property
    def outputs(self) -> memoryview:
        """Domain 0's outputs (writable; sent with the next cycle)."""
        d = self._native.domains()[0]
        return self._native.image(0)[: d["outputs_len"]]

    @property
    def inputs(self) -> memoryview:
        """Domain 0's inputs (as of the last cycle)."""
        d = self._native.domains()[0]
        return self._native.image(0)[d["outputs_len"] :]

    def wkc(self, domain: int = 0) -> Tuple[int, int]:
        """(working counter of the last cycle, expected) of a domain."""
        w, e, _ = self._native.wkc()[domain]
        return w, e

    @property
    def expected_wkc(self) -> int:
        """Domain 0's expected working counter."""
        return self.wkc()[1]

    def states(self) -> List[str]:
        """Each SubDevice's state (``"OP"``, ``"SAFEOP+ERR"``, ``"lost"``)."""
        return ["lost" if s[2] else state_name(s[0]) for s in self._native.states()]

    def perf(self) -> Dict[str, Dict[str, float]]:
        """Cycle figures of the thread (cycle_time, wake_latency, task_duration, round_trip,
        ...: count, min_us, avg_us, max_us, std_us, p50_us, p99_us, line)."""
        return self._native.perf()

    def counters(self) -> Dict[str, Any]:
        """Frame, link and loop counters."""
        return self._native.counters()

    def dc_time(self) -> Optional[int]:
        """The reference clock's time at the last cycle (ns since 2000), if DC runs."""
        return self._native.dc_time()

    # -- SDO ----------------------------------------------------------------------------
    def _submit(self, position, op, index=0, subindex=0, data=None, ca=False):
        return self._native.sdo_submit(position, op, index, subindex, data, ca)

    def _wait(self, pending, timeout: float = 5.0) -> bytes:
        if self.running:
            return pending.wait(timeout)
        cycles = max(1, int(timeout * 1e9 / self.cycle_ns))
        for _ in range(cycles):
            if pending.done():
                break
            self._native.step(1)
        return pending.wait(0)

    def _sdo_blocking(self, position, op, index, subindex, data, ca) -> bytes:
        return self._wait(self._submit(position, op, index, subindex, data, ca))

    def _foe_blocking(self, position, name, password, data=None, timeout: float = 30.0) -> bytes:
        return self._wait(self._native.foe_submit(position, name, password, data), timeout)

    def _sdo_info(self, position: int, entries: bool):
        raw = self._wait(self._submit(position, "od_list"))
        out = []
        for i in range(0, len(raw) - 1, 2):
            index = int.from_bytes(raw[i : i + 2], "little")
            o = _ecat.decode_object(self._wait(self._submit(position, "object", index)))
            o["index"] = index
            o["entries"] = []
            if entries:
                for sub in range(o["max_subindex"] + 1):
                    try:
                        e = _ecat.decode_entry(self._wait(self._submit(position, "entry", index, sub)))
                    except _ecat.Error:
                        continue
                    if e is not None:
                        e["subindex"] = sub
                        o["entries"].append(e)
            out.append(o)
        return out

    def sdo_read(self, position: int, index: int, subindex: int = 0, *, complete_access: bool = False,
                 type: TypeSpec = None) -> Any:
        """Read an object while cycling (blocks; steps the Runtime when not threaded)."""
        return decode(self._sdo_blocking(position, "upload", index, subindex, None, complete_access), type)

    def sdo_write(self, position: int, index: int, subindex: int, value: Any, *,
                  complete_access: bool = False, type: TypeSpec = None) -> None:
        """Write an object while cycling (blocks; steps the Runtime when not threaded)."""
        size = None
        if isinstance(value, (int, float)) and not isinstance(type, str):
            size = len(self._sdo_blocking(position, "upload", index, subindex, None, False))
        self._sdo_blocking(position, "download", index, subindex, encode(value, type, size), complete_access)

    def _future(self, pending, convert) -> "concurrent.futures.Future":
        f: concurrent.futures.Future = concurrent.futures.Future()
        f.set_running_or_notify_cancel()
        self._futures.put((pending, f, convert))
        if self._completer is None:
            self._completer = self._helper(self._complete, "ecat-sdo-futures")
        return f

    def _complete(self) -> None:
        while True:
            item = self._futures.get()
            if item is None:
                return
            pending, f, convert = item
            while True:
                try:
                    f.set_result(convert(pending.wait(0.1)))
                    break
                except _ecat.TimeoutError:
                    if self._helpers_stop:
                        f.set_exception(_ecat.Error("the Runtime was closed before the SDO answer came"))
                        break
                except Exception as e:  # the SDO's own error (SdoAbort, MailboxError, ...)
                    f.set_exception(e)
                    break

    def sdo_read_async(self, position: int, index: int, subindex: int = 0, *,
                       complete_access: bool = False, type: TypeSpec = None) -> "concurrent.futures.Future":
        """Queue a read; the Future completes as the cycle serves it."""
        p = self._submit(position, "upload", index, subindex, None, complete_access)
        return self._future(p, lambda b: decode(b, type))

    def sdo_write_async(self, position: int, index: int, subindex: int, data: bytes, *,
                        complete_access: bool = False) -> "concurrent.futures.Future":
        """Queue a write of ``data`` (bytes); the Future completes with None."""
        p = self._submit(position, "download", index, subindex, bytes(data), complete_access)
        return self._future(p, lambda b: None)

    def __repr__(self) -> str:
        return f"<Runtime cycle {self.cycle_ns / 1e3:.0f} us, {'running' if self.running else 'stepped'}>"


__all__ = ["Runtime", "Event", "Events", "Entry", "ProcessData", "SubDeviceData", "ObjectInfo", "ObjectEntry"]
