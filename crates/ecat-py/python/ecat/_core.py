"""The configuration phase: ``MainDevice`` and the ``SubDevice`` objects its scan returns.

Design: thin Python objects over the native ``ecat._ecat.MainDevice`` (which works by
position and returns plain values). Once activated, SDO calls of a ``SubDevice`` go through
the ``Runtime`` (queued, served in the acyclic part of the cycle), so the same object works
before and during OP.
"""

from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Union

from . import _ecat
from ._types import TypeSpec, decode, encode, parse_duration

STATE_NAMES = {1: "INIT", 2: "PREOP", 3: "BOOT", 4: "SAFEOP", 8: "OP"}


def state_name(al_status: int) -> str:
    """``"OP"``, ``"SAFEOP+ERR"``, ... from an AL status register value."""
    name = STATE_NAMES.get(al_status & 0x0F, f"0x{al_status & 0x0F:02X}")
    return name + ("+ERR" if al_status & 0x10 else "")


class Identity(NamedTuple):
    """Vendor, product, revision and serial number from the SII."""

    vendor_id: int
    product_code: int
    revision: int
    serial: int


class ObjectEntry(NamedTuple):
    """One entry of an object (SDO Information)."""

    subindex: int
    name: str
    data_type: int
    data_type_name: str
    bit_length: int
    access: int


class ObjectInfo(NamedTuple):
    """One object of the dictionary (SDO Information)."""

    index: int
    name: str
    object_code: int
    data_type: int
    max_subindex: int
    entries: List[ObjectEntry]


class SubDevice:
    """A SubDevice found by ``MainDevice.scan()``."""

    def __init__(self, md: "MainDevice", info: Dict[str, Any]):
        self._md = md
        self._info = info
        self.position: int = info["position"]
        self.station: int = info["station"]
        self.alias: int = info["alias"]
        self.name: str = info["name"]
        self.order: str = info["order"]
        self.identity = Identity(
            info["vendor_id"], info["product_code"], info["revision"], info["serial"]
        )
        self.has_coe: bool = info["has_coe"]
        self.dc_supported: bool = info["dc_supported"]
        self.mailbox_protocols: List[str] = list(info["mailbox_protocols"])
        self.input_bits: int = info["input_bits"]
        self.output_bits: int = info["output_bits"]
        self.tx_pdos: List[Dict[str, Any]] = info["tx_pdos"]
        self.rx_pdos: List[Dict[str, Any]] = info["rx_pdos"]

    @property
    def sii(self) -> bytes:
        """The SII EEPROM image as read by the scan."""
        return self._info["sii"]

    def _status(self):
        return self._md._status(self.position)

    @property
    def state(self) -> str:
        """The AL state now (``"OP"``, ``"PREOP+ERR"``, ...)."""
        return state_name(self._status()[0])

    @property
    def al_status(self) -> int:
        """The AL status register now (state bits and error flag)."""
        return self._status()[0]

    @property
    def al_status_code(self) -> int:
        """The AL status code now (0 = no error)."""
        return self._status()[1]

    def sdo_read(
        self, index: int, subindex: int = 0, *, complete_access: bool = False, type: TypeSpec = None
    ) -> Any:
        """Read object ``index:subindex`` (bytes, or decoded as ``type``: "u16", int, str...).

        Raises ``ecat.SdoAbort`` (``code``, ``text``) when the SubDevice aborts."""
        return decode(self._md._sdo(self.position, "upload", index, subindex, None, complete_access), type)

    def sdo_write(
        self,
        index: int,
        subindex: int,
        value: Any,
        *,
        complete_access: bool = False,
        type: TypeSpec = None,
    ) -> None:
        """Write ``value`` (bytes, or an int/float encoded as ``type``; an int without a type
        takes the size of the object's current value)."""
        size = None
        if isinstance(value, (int, float)) and not isinstance(type, str):
            size = len(self._md._sdo(self.position, "upload", index, subindex, None, False))
        data = encode(value, type, size)
        self._md._sdo(self.position, "download", index, subindex, data, complete_access)

    def sdo_info(self, entries: bool = True) -> List[ObjectInfo]:
        """The object dictionary over SDO Information."""
        return [
            ObjectInfo(
                o["index"], o["name"], o["object_code"], o["data_type"], o["max_subindex"],
                [ObjectEntry(**e) for e in o["entries"]],
            )
            for o in self._md._sdo_info(self.position, entries)
        ]

    def __repr__(self) -> str:
        return (
            f"<SubDevice {self.position} 0x{self.station:04X} {self.name!r} "
            f"vendor 0x{self.identity.vendor_id:08X} product 0x{self.identity.product_code:08X}>"
        )


class MainDevice:
    """An EtherCAT MainDevice on one link.

    ``link``: ``"eth0"`` (or ``raw:``/``mmap:``/``xdp:`` + interface), ``"sim:io"``,
    ``"sim:servo6"``, ``"sim:net.toml"``, or an ``ecat.sim.Network`` (in-process, on the
    network's clock). Use it as a context manager: every SubDevice goes to INIT on exit,
    also after an exception or Ctrl-C.
    """

    def __init__(self, link: Union[str, "_ecat.Network"] = "sim:io"):
        if isinstance(link, str) and link.startswith("sim:"):
            from .sim import _published

            link = _published.get(link[4:], link)
        self._md = _ecat.MainDevice(link)
        self._subs: List[SubDevice] = []
        self._rt = None
        self.link: str = self._md.link

    # -- context manager -------------------------------------------------------------
    def __enter__(self) -> "MainDevice":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop cycling, request INIT from every SubDevice and release the link."""
        if self._rt is not None:
            self._rt.close()
        self._md.close()

    # -- configuration phase ---------------------------------------------------------
    def scan(self) -> List[SubDevice]:
        """Find the SubDevices (count, reset, address, read the SII); ring order."""
        self._subs = [SubDevice(self, i) for i in self._md.scan()]
        return list(self._subs)

    @property
    def subdevices(self) -> List[SubDevice]:
        """The SubDevices of the last scan."""
        return list(self._subs)

    def subdevice(self, position: int) -> SubDevice:
        """The SubDevice at ``position``."""
        if not 0 <= position < len(self._subs):
            raise IndexError(
                f"there is no SubDevice at position {position}; the bus has {len(self._subs)}"
            )
        return self._subs[position]

    def request_state(
        self, state: Union[str, int], positions: Optional[Sequence[int]] = None, timeout: float = 5.0
    ) -> None:
        """Request ``state`` ("INIT", "PREOP", "SAFEOP", "OP") and wait for it.

        Before activation this works in the configuration phase (at most SAFEOP makes sense
        without process data); after activation it asks the Runtime's supervisor."""
        if self._rt is not None:
            self._rt.request_state(state)
            self._rt.wait_state(state, timeout)
            return
        self._md.request_state(state, list(positions) if positions else None, timeout)

    def activate(
        self,
        cycle: Union[str, float] = "1ms",
        *,
        dc: Optional[bool] = None,
        pdo: Optional[Dict[int, Dict[str, Sequence[Any]]]] = None,
        target: Union[str, int] = "OP",
        start: bool = True,
        wait: bool = True,
        timeout: float = 10.0,
        **thread_options: Any,
    ) -> "Runtime":
        """Lay out the process data (each SubDevice's PDOs as they are now: over CoE, or from
        its SII), set up distributed clocks (``dc``: None = when a SubDevice asks for SYNC0)
        and return the ``Runtime``.

        ``pdo`` assigns other PDOs: ``{position: {"outputs": [0x1601], "inputs": [0x1A01]}}``
        takes those PDOs as the SubDevice maps them; ``(0x1600, [(0x6040, 0, 16), ...])``
        instead of an index remaps one (CoE SubDevices get both written in PREOP, again after
        every reconfiguration).

        ``wait``: step from here until every SubDevice is in ``target``; ``start``: then
        run the cycle in a Rust real-time thread (``thread_options``: ``cpu``, ``priority``,
        ``busy_wait_ns``, ``realtime``, ``lock_memory``, ``latency_hold``). With
        ``start=False`` drive it with ``rt.step()``."""
        from ._runtime import Runtime

        cycle_ns = parse_duration(cycle)
        choices = []
        for pos, dirs in (pdo or {}).items():
            for key, items in dirs.items():
                if key not in ("outputs", "inputs"):
                    raise ValueError(f"pdo[{pos}] has {key!r}: use 'outputs' and 'inputs'")
                for item in items:
                    if isinstance(item, int):
                        choices.append((pos, key == "outputs", item, None))
                    else:
                        index, entries = item
                        choices.append((pos, key == "outputs", index, [tuple(e) for e in entries]))
        native = self._md.activate(cycle_ns, target, dc, choices)
        self._rt = Runtime(native, self)
        if wait:
            self._rt._native.run_until_state(target, timeout)
        if start:
            self._rt.start(**thread_options)
        return self._rt

    @property
    def runtime(self) -> Optional["Runtime"]:
        """The Runtime after ``activate``."""
        return self._rt

    def configure_dc(self) -> Optional[int]:
        """Set up distributed clocks now; returns the reference clock's position or None."""
        return self._md.configure_dc()

    def read_memory(self, position: int, address: int, length: int) -> bytes:
        """Read ESC registers/memory of the SubDevice at ``position``."""
        return self._md.read_memory(position, address, length)

    def write_memory(self, position: int, address: int, data: bytes) -> None:
        """Write ESC registers/memory of the SubDevice at ``position``."""
        self._md.write_memory(position, address, bytes(data))

    @property
    def notes(self) -> List[str]:
        """Things worth knowing that were not errors."""
        return [] if self._md.closed else self._md.notes()

    # -- routing used by SubDevice -----------------------------------------------------
    def _status(self, position: int):
        if self._rt is not None:
            s = self._rt._native.states()[position]
            return s[0], s[1]
        return self._md.read_states()[position]

    def _sdo(self, position, op, index, subindex, data, ca) -> bytes:
        if self._rt is not None:
            return self._rt._sdo_blocking(position, op, index, subindex, data, ca)
        if op == "upload":
            return self._md.sdo_read(position, index, subindex, ca)
        self._md.sdo_write(position, index, subindex, data, ca)
        return b""

    def _sdo_info(self, position: int, entries: bool):
        if self._rt is not None:
            return self._rt._sdo_info(position, entries)
        return self._md.sdo_info(position, entries)

    def __repr__(self) -> str:
        return f"<MainDevice {self.link!r}, {len(self._subs)} SubDevices>"
