"""pysoem's interface on top of ecat: ``import ecat.pysoem as pysoem`` and a pysoem script
runs on ecat unchanged.

Design: ``Master`` follows SOEM's flow with ecat underneath. ``config_init`` scans and
requests PREOP; ``config_map`` runs each slave's ``config_func``/``setup_func`` (in PREOP,
e.g. PDO assignment over SDO), then activates ecat with the PDOs as they are now and brings
every slave to SAFEOP; from then on ``send_processdata``/``receive_processdata`` step ecat's
Runtime (ecat's frames, recovery and acyclic work ride along), ``write_state`` asks its
supervisor for a state, ``state_check`` cycles until it is reached. The IO map has no size
limit. ``slave.output``/``slave.input`` are the slave's bytes in the process image.
``foe_read``/``foe_write`` run over ecat's FoE (blocking before ``config_map``, through the
cycling runtime's mailbox after it). Things SOEM has and ecat does not (EEPROM writes, overlapped mapping, redundancy, ...)
raise ``NotSupportedError`` naming them. Emergencies reach the callbacks of
``add_emergency_callback`` after ``config_map``, from ``receive_processdata`` or an SDO call,
as soon as ecat's runtime has read them from the slave's mailbox (cyclically where it polls
mailboxes, otherwise during the slave's next SDO transfer); before ``config_map`` they are
not delivered. States are what the slaves report: simple terminals that copy AL control into
AL status show the acknowledge bit of the request they got, and ecat requests PREOP without
it and INIT with it (SOEM's config_init the other way round), so such a slave reads 0x02
after ``config_init`` here (0x12 with pysoem) and 0x11 after INIT (0x01).
"""

from __future__ import annotations

import os
import time
from types import SimpleNamespace
from typing import Any, Callable, List, Optional

from . import _ecat
from ._core import MainDevice

# -- constants -----------------------------------------------------------------------
NONE_STATE = 0x00
INIT_STATE = 0x01
PREOP_STATE = 0x02
BOOT_STATE = 0x03
SAFEOP_STATE = 0x04
OP_STATE = 0x08
STATE_ACK = 0x10
STATE_ERROR = 0x10

ECT_BOOLEAN = 0x0001
ECT_INTEGER8 = 0x0002
ECT_INTEGER16 = 0x0003
ECT_INTEGER32 = 0x0004
ECT_UNSIGNED8 = 0x0005
ECT_UNSIGNED16 = 0x0006
ECT_UNSIGNED32 = 0x0007
ECT_REAL32 = 0x0008
ECT_VISIBLE_STRING = 0x0009
ECT_OCTET_STRING = 0x000A
ECT_UNICODE_STRING = 0x000B
ECT_TIME_OF_DAY = 0x000C
ECT_TIME_DIFFERENCE = 0x000D
ECT_DOMAIN = 0x000F
ECT_INTEGER24 = 0x0010
ECT_REAL64 = 0x0011
ECT_INTEGER64 = 0x0015
ECT_UNSIGNED24 = 0x0016
ECT_UNSIGNED64 = 0x001B
ECT_BIT1, ECT_BIT2, ECT_BIT3, ECT_BIT4 = 0x0030, 0x0031, 0x0032, 0x0033
ECT_BIT5, ECT_BIT6, ECT_BIT7, ECT_BIT8 = 0x0034, 0x0035, 0x0036, 0x0037

EC_TIMEOUTRET = 2000
EC_TIMEOUTSAFE = 20000
EC_TIMEOUTEEP = 20000
EC_TIMEOUTTXM = 20000
EC_TIMEOUTRXM = 700000
EC_TIMEOUTSTATE = 2000000

settings = SimpleNamespace(
    timeouts=SimpleNamespace(
        ret=EC_TIMEOUTRET, safe=EC_TIMEOUTSAFE, eeprom=EC_TIMEOUTEEP,
        tx_mailbox=EC_TIMEOUTTXM, rx_mailbox=EC_TIMEOUTRXM, state=EC_TIMEOUTSTATE,
    ),
    always_release_gil=True,
)

__version__ = "1.1.13+ecat"


# -- exceptions --------------------------------------------------------------------------
class NotSupportedError(_ecat.Error, NotImplementedError):
    """A pysoem feature that ecat.pysoem does not provide."""


def _unsupported(what: str):
    raise NotSupportedError(f"{what} is not supported by ecat.pysoem")


class SdoError(_ecat.Error):
    """The slave aborted an SDO transfer (``abort_code``, ``desc``)."""

    def __init__(self, slave_pos, index, subindex, abort_code, desc):
        super().__init__(f"slave {slave_pos}: SDO 0x{index:04X}:{subindex:02X} aborted: 0x{abort_code:08X} ({desc})")
        self.slave_pos, self.index, self.subindex = slave_pos, index, subindex
        self.abort_code, self.desc = abort_code, desc


class Emergency(_ecat.Error):
    """An emergency message, as passed to the callbacks of ``add_emergency_callback``."""

    def __init__(self, slave_pos, error_code, error_reg, b1, w1, w2):
        super().__init__(f"slave {slave_pos}: emergency 0x{error_code:04X}")
        self.slave_pos, self.error_code, self.error_reg = slave_pos, error_code, error_reg
        self.b1, self.w1, self.w2 = b1, w1, w2


class SdoInfoError(_ecat.Error):
    """SDO Information failed."""


class MailboxError(_ecat.Error):
    """A mailbox transfer failed (``error_code``, ``desc``)."""

    def __init__(self, slave_pos, error_code, desc):
        super().__init__(f"slave {slave_pos}: {desc}")
        self.slave_pos, self.error_code, self.desc = slave_pos, error_code, desc


class PacketError(_ecat.Error):
    """An unexpected mailbox packet."""


class ConfigMapError(_ecat.Error):
    """config_map failed."""


class EepromError(_ecat.Error):
    """EEPROM access failed."""


class FoeError(_ecat.Error):
    """FoE failed."""


class WkcError(_ecat.Error):
    """A datagram got the wrong working counter (``wkc``)."""

    def __init__(self, message="", wkc=None):
        super().__init__(message)
        self.wkc = wkc


class NetworkInterfaceNotOpenError(_ecat.Error):
    """The network interface could not be opened."""


def al_status_code_to_string(code: int) -> str:
    """The meaning of an AL status code."""
    return _ecat.al_status_text(code)


def find_adapters() -> List[SimpleNamespace]:
    """Network interfaces of this machine (objects with ``name`` and ``desc``)."""
    try:
        names = sorted(os.listdir("/sys/class/net"))
    except OSError:
        names = []
    return [SimpleNamespace(name=n, desc=n.encode()) for n in names]


def open(ifname, ifname_red=None) -> "Master":  # noqa: A001 (pysoem's name)
    """A Master opened on ``ifname`` (usable as a context manager)."""
    m = Master()
    m.open(ifname, ifname_red)
    return m


def _convert(e: Exception, pos: int, index: int = 0, subindex: int = 0) -> Exception:
    if isinstance(e, _ecat.SdoAbort):
        return SdoError(pos, index, subindex, e.code, e.text)
    if isinstance(e, _ecat.MailboxError):
        if "no answer" in str(e) or "has no CoE mailbox" in str(e):
            # SOEM sees a working counter of 0 then, and pysoem raises WkcError.
            return WkcError(str(e))
        return MailboxError(pos, 0, str(e))
    if isinstance(e, (_ecat.WkcError, _ecat.TimeoutError)):
        return WkcError(str(e))
    return e


def _sii_first_string(sii: bytes) -> str:
    """The first string of the SII's strings category, which SOEM (and so pysoem) takes as
    a slave's name (at most 40 characters); "" if there is none."""
    at = 0x80  # categories start at word 0x40
    while at + 4 <= len(sii):
        kind = int.from_bytes(sii[at : at + 2], "little")
        words = int.from_bytes(sii[at + 2 : at + 4], "little")
        if kind == 0xFFFF:
            break
        if kind == 10:  # strings: a count, then (length, bytes) each
            body = sii[at + 4 : at + 4 + 2 * words]
            if len(body) >= 2 and body[0] >= 1:
                return bytes(body[2 : 2 + body[1]]).decode("latin-1")[:40]
            return ""
        at += 4 + 2 * words
    return ""


def _soem_name(name: str) -> bytes:
    """An object or entry name as SOEM keeps it: bytes, at most 40 of them."""
    return name.encode("latin-1", "replace")[:40]


class _Entry:
    """One entry of an object (pysoem's names are bytes, as SOEM keeps them)."""

    def __init__(self, d=None):
        d = d or {}
        self.name: bytes = _soem_name(d.get("name", ""))
        self.data_type: int = d.get("data_type", 0)
        self.bit_length: int = d.get("bit_length", 0)
        self.obj_access: int = d.get("access", 0)


class _Object:
    """One object of ``slave.od``, shaped as pysoem's: ``entries`` is empty for a VAR and
    otherwise holds one entry per subindex up to the highest (gaps are blank entries with
    data_type 0); a VAR's bit length and access are its value's, other objects' bit length
    is the sum of their entries'."""

    def __init__(self, d):
        self.index: int = d["index"]
        self.name: bytes = _soem_name(d["name"])
        self.object_code: int = d["object_code"]
        self.data_type: int = d["data_type"]
        by_sub = {e["subindex"]: _Entry(e) for e in d["entries"]}
        if self.object_code == 7:
            value = by_sub.get(0, _Entry())
            self.entries: List[_Entry] = []
            self.bit_length, self.obj_access = value.bit_length, value.obj_access
        else:
            top = max([d.get("max_subindex", 0), *by_sub])
            self.entries = [by_sub.get(i) or _Entry() for i in range(top + 1)]
            self.bit_length = sum(e.bit_length for e in self.entries)
            self.obj_access = 0


class CdefSlave:
    """One slave, as pysoem's ``Master.slaves`` holds them."""

    def __init__(self, master: "Master", position: int, sub):
        self._master = master
        self._pos = position
        self._sub = sub
        self.name: str = _sii_first_string(sub.sii) or f"? M:{sub.identity.vendor_id:08x} I:{sub.identity.product_code:08x}"
        self.man: int = sub.identity.vendor_id
        self.id: int = sub.identity.product_code
        self.rev: int = sub.identity.revision
        self.config_func: Optional[Callable] = None
        self.setup_func: Optional[Callable] = None
        self._state = NONE_STATE
        self._al_code = 0
        self._emcy: List[Callable] = []
        self._sync = None

    # state
    @property
    def state(self) -> int:
        """The state last read (``Master.read_state``) or set for ``write_state``."""
        return self._state

    @state.setter
    def state(self, value: int) -> None:
        self._state = value

    @property
    def al_status(self) -> int:
        """The AL status code last read."""
        return self._al_code

    @property
    def is_lost(self) -> bool:
        """True while ecat's supervisor sees the slave as lost."""
        rt = self._master._rt
        return bool(rt and rt._native.states()[self._pos][2])

    def write_state(self) -> int:
        """Request this slave's ``state`` (before config_map only: afterwards ecat's
        supervisor keeps every slave in the master's state)."""
        if self._master._rt is not None:
            _unsupported("a single slave's write_state after config_map")
        self._master._md._md.request_state(self._state & 0x0F, [self._pos], 5.0)
        return 1

    def state_check(self, expected_state: int, timeout: int = 2000) -> int:
        """Read this slave's state, waiting up to ``timeout`` µs for ``expected_state``."""
        end = time.monotonic() + timeout / 1e6
        while True:
            self._master.read_state()
            if self._state == expected_state or time.monotonic() >= end:
                return self._state
            self._master._pace()

    def reconfig(self, timeout: int = 500) -> int:
        """ecat reconfigures lost slaves by itself; returns the slave's state."""
        self._master.read_state()
        return self._state

    def recover(self, timeout: int = 500) -> int:
        """ecat recovers lost slaves by itself; returns 1 if the slave answers."""
        return 0 if self.is_lost else 1

    # process data
    def _pd(self):
        rt = self._master._rt
        if rt is None:
            raise ConfigMapError("the process image exists after config_map()")
        return rt.subdevice(self._pos)

    @property
    def output(self) -> bytes:
        """The slave's outputs in the IO map."""
        return bytes(self._pd().outputs.raw)

    @output.setter
    def output(self, value: bytes) -> None:
        raw = self._pd().outputs.raw
        if len(value) != len(raw):
            raise AttributeError(
                f"slave {self._pos} ({self.name}) has {len(raw)} output bytes, got {len(value)}"
            )
        raw[:] = bytes(value)

    @property
    def input(self) -> bytes:
        """The slave's inputs from the last receive."""
        return bytes(self._pd().inputs.raw)

    # CoE
    def sdo_read(self, index: int, subindex: int, size: int = 0, ca: bool = False) -> bytes:
        """Read an object (``ca``: complete access); raises ``SdoError`` on abort."""
        try:
            data = self._master._md._sdo(self._pos, "upload", index, subindex, None, ca)
        except _ecat.Error as e:
            raise _convert(e, self._pos, index, subindex) from None
        finally:
            self._master._emergencies()
        return data[:size] if size else data

    def sdo_write(self, index: int, subindex: int, data: bytes, ca: bool = False) -> None:
        """Write an object (``ca``: complete access); raises ``SdoError`` on abort."""
        try:
            self._master._md._sdo(self._pos, "download", index, subindex, bytes(data), ca)
        except _ecat.Error as e:
            raise _convert(e, self._pos, index, subindex) from None
        finally:
            self._master._emergencies()

    @property
    def od(self) -> List[_Object]:
        """The object dictionary over SDO Information."""
        try:
            return [_Object(o) for o in self._master._md._sdo_info(self._pos, True)]
        except _ecat.Error as e:
            raise SdoInfoError(str(e)) from None

    def dc_sync(self, act, sync0_cycle_time, sync0_shift_time=0, sync1_cycle_time=None) -> None:
        """Ask for SYNC0 (ecat programs it while bringing the slave to SAFEOP). Call it before
        or in ``config_map`` (e.g. from ``config_func``)."""
        if sync1_cycle_time:
            _unsupported("SYNC1 (dc_sync with sync1_cycle_time)")
        if self._master._rt is not None:
            _unsupported("dc_sync after config_map (call it before, or from config_func)")
        self._sync = (bool(act), int(sync0_cycle_time), int(sync0_shift_time))

    def add_emergency_callback(self, callback: Callable) -> None:
        """Call ``callback(Emergency)`` for this slave's emergencies (see the module notes)."""
        self._emcy.append(callback)

    def eeprom_read(self, word_address: int, timeout: int = 20000) -> bytes:
        """Four bytes of the SII from ``word_address`` (from the image read at scan)."""
        sii = self._sub.sii
        if word_address * 2 + 4 > len(sii):
            raise EepromError(f"slave {self._pos}: word 0x{word_address:04X} is past the SII's end")
        return bytes(sii[word_address * 2 : word_address * 2 + 4])

    def eeprom_write(self, word_address, data, timeout=20000):
        _unsupported("eeprom_write")

    # FoE
    def _foe(self, name: str, password: int, data: Optional[bytes], timeout: int) -> bytes:
        if not 0 <= int(password) <= 0xFFFFFFFF:
            raise ValueError(f"slave {self._pos}: FoE password {password} is outside 0..2^32-1")
        m = self._master
        try:
            if m._rt is not None:
                wait = 60.0 + timeout / 1e6  # SOEM's timeout is per mailbox step
                return m._rt._foe_blocking(self._pos, str(name), int(password), data, wait)
            md = m._need()._md
            if data is None:
                return md.foe_read(self._pos, str(name), int(password))
            md.foe_write(self._pos, str(name), data, int(password))
            return b""
        except _ecat.Error as e:
            raise FoeError(str(e)) from None
        finally:
            m._emergencies()

    def foe_read(self, filename, password, size, timeout=200000) -> bytes:
        """Read the file ``filename`` over FoE (pysoem's signature; ``timeout`` in µs per
        mailbox step, as SOEM). Raises ``FoeError`` (naming the slave, the file and the FoE error)
        if the slave refuses, or if the file is larger than ``size`` bytes, as SOEM does."""
        data = self._foe(filename, password, None, timeout)
        if len(data) > int(size):
            raise FoeError(
                f"slave {self._pos}: FoE read of '{filename}' got {len(data)} bytes, more than "
                f"the {int(size)} the buffer holds; pass a larger size"
            )
        return data

    def foe_write(self, filename, password, data, timeout=200000) -> int:
        """Write ``data`` as the file ``filename`` over FoE (pysoem's signature); returns 1
        (SOEM's working counter) or raises ``FoeError``."""
        self._foe(filename, password, bytes(data), timeout)
        return 1

    def mbx_receive(self):
        _unsupported("mbx_receive")

    def amend_mbx(self, *args, **kwargs):
        _unsupported("amend_mbx")

    def set_watchdog(self, *args, **kwargs):
        _unsupported("set_watchdog")

    def get_watchdog(self, *args, **kwargs):
        _unsupported("get_watchdog")

    def _fprd(self, address: int, size: int, timeout_us: int = 2000) -> bytes:
        if self._master._rt is not None:
            _unsupported("_fprd after config_map")
        return self._master._md.read_memory(self._pos, address, size)

    def _fpwr(self, address: int, value: bytes, timeout_us: int = 2000) -> int:
        if self._master._rt is not None:
            _unsupported("_fpwr after config_map")
        self._master._md.write_memory(self._pos, address, value)
        return 1

    def __repr__(self) -> str:
        return f"<CdefSlave {self._pos} {self.name!r}>"


class Master:
    """pysoem's ``Master`` (see the module notes)."""

    def __init__(self):
        self._md: Optional[MainDevice] = None
        self._rt = None
        self._slaves: List[CdefSlave] = []
        self._state = NONE_STATE
        self._dc = False
        self._cycle_ns = 1_000_000
        self.manual_state_change = False
        self.sdo_read_timeout = 700000
        self.sdo_write_timeout = 700000
        self.always_release_gil = True

    def __enter__(self) -> "Master":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def open(self, ifname, ifname_red=None) -> None:
        """Open the network interface (``eth0``, ``sim:io``, or an ``ecat.sim.Network``)."""
        if ifname_red is not None:
            _unsupported("cable redundancy (ifname_red)")
        try:
            self._md = MainDevice(ifname)
        except _ecat.LinkError as e:
            raise ConnectionError(str(e)) from None

    def _need(self) -> MainDevice:
        if self._md is None:
            raise NetworkInterfaceNotOpenError("call open() first")
        return self._md

    def config_init(self, usetable: bool = False, *, release_gil=None) -> int:
        """Scan, request PREOP; returns the number of slaves found (0 if none)."""
        if usetable:
            _unsupported("config_init(usetable=True)")
        md = self._need()
        try:
            subs = md.scan()
        except _ecat.TimeoutError:
            self._slaves = []
            return 0
        self._slaves = [CdefSlave(self, i, s) for i, s in enumerate(subs)]
        # SOEM takes what it read from the SII of the first slave with the same vendor,
        # product and revision for the later ones, the name included.
        first = {}
        for s in self._slaves:
            s.name = first.setdefault((s.man, s.id, s.rev), s).name
        md.request_state("PREOP", timeout=5.0)
        self.read_state()
        return len(self._slaves)

    @property
    def slaves(self) -> List[CdefSlave]:
        """The slaves found by ``config_init``."""
        return self._slaves

    def config_dc(self) -> int:
        """Measure delays and set up distributed clocks; 1 if any slave has DC, else 0 (an
        int, as pysoem returns SOEM's boolean)."""
        ref = self._need().configure_dc()
        self._dc = ref is not None
        return int(self._dc)

    def config_map(self) -> int:
        """Run the slaves' config/setup functions, map the process data (as the slaves'
        PDO assignment is now), reach SAFEOP; returns the IO map size in bytes."""
        md = self._need()
        for s in self._slaves:
            for f in (s.config_func, s.setup_func):
                if f is not None:
                    f(s._pos)
        syncs = [s._sync for s in self._slaves if s._sync and s._sync[0]]
        if syncs:
            self._cycle_ns = syncs[0][1]
        dc = True if syncs else (None if self._dc else False)
        try:
            self._rt = md.activate(f"{self._cycle_ns}ns", dc=dc, target="SAFEOP", start=False, wait=False)
        except _ecat.Error as e:
            raise ConfigMapError(str(e)) from None
        # SOEM's config_map requests SAFEOP itself; cycle until the slaves are there (or
        # the state timeout passed: state_check then tells which are behind).
        try:
            self._rt._native.run_until_state("SAFEOP", settings.timeouts.state / 1e6)
        except _ecat.Error:
            pass
        self.read_state()
        return sum(d["size"] for d in self._rt._native.domains())

    def config_overlap_map(self) -> int:
        _unsupported("config_overlap_map")

    # states
    @property
    def state(self) -> int:
        """The lowest state last read, or the state ``write_state`` requests."""
        return self._state

    @state.setter
    def state(self, value: int) -> None:
        self._state = value

    def read_state(self) -> int:
        """Read every slave's state; returns the lowest."""
        md = self._need()
        if self._rt is not None:
            st = [(s[0], s[1]) for s in self._rt._native.states()]
        else:
            st = md._md.read_states()
        for s, (status, code) in zip(self._slaves, st):
            s._state = status & 0x1F
            s._al_code = code
        low = min((s._state & 0x0F for s in self._slaves), default=NONE_STATE)
        self._state = low
        return low

    def write_state(self) -> int:
        """Request ``state`` from every slave."""
        want = self._state & 0x0F
        if self._rt is not None:
            self._rt.request_state(want)
        else:
            self._need()._md.request_state(want, None, 5.0)
        return len(self._slaves)

    def _pace(self) -> None:
        if self._rt is not None:
            self._rt.step(1)
        time.sleep(self._cycle_ns / 1e9)

    def state_check(self, expected_state: int, timeout: int = 50000) -> int:
        """Wait up to ``timeout`` µs (cycling when mapped) until every slave is in
        ``expected_state``; returns the lowest state."""
        end = time.monotonic() + timeout / 1e6
        while True:
            low = self.read_state()
            if all((s._state & 0x0F) == expected_state for s in self._slaves):
                return expected_state
            if time.monotonic() >= end:
                return low
            self._pace()

    # process data
    def send_processdata(self) -> None:
        """Send the outputs (one cycle's frames)."""
        if self._rt is None:
            raise ConfigMapError("send_processdata needs config_map() first")
        self._rt._native.send()

    def receive_processdata(self, timeout: int = 2000) -> int:
        """Receive the frames of the last send (up to ``timeout`` µs); returns the WKC."""
        if self._rt is None:
            raise ConfigMapError("receive_processdata needs config_map() first")
        wkc = self._rt._native.receive(timeout)
        self._emergencies()
        return wkc

    def _emergencies(self) -> None:
        if self._rt is None:
            return
        for e in self._rt.events:
            if e.kind != "emergency" or e.position >= len(self._slaves):
                continue
            d = e.data + bytes(6)
            em = Emergency(e.position, e.code, d[0], d[1], int.from_bytes(d[2:4], "little"),
                           int.from_bytes(d[4:6], "little"))
            for cb in self._slaves[e.position]._emcy:
                cb(em)

    def send_overlap_processdata(self) -> None:
        _unsupported("send_overlap_processdata")

    @property
    def expected_wkc(self) -> int:
        """The working counter a complete cycle returns."""
        return self._rt.expected_wkc if self._rt is not None else 0

    @property
    def dc_time(self) -> int:
        """The reference clock's time at the last receive (ns since 2000; 0 without DC)."""
        return (self._rt.dc_time() or 0) if self._rt is not None else 0

    def close(self) -> None:
        """Release the interface (ecat brings every slave to INIT first)."""
        if self._md is not None:
            self._md.close()
            self._md = None
            self._rt = None
