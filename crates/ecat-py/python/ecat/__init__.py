"""ecat: an EtherCAT MainDevice whose real-time cycle runs in Rust, with a simulated network.

Quick start (runs as is, on the built-in simulated network)::

    import ecat

    with ecat.MainDevice("sim:io") as md:
        for s in md.scan():
            print(s.position, s.name, s.state)
        rt = md.activate(cycle="1ms")              # OP, cycling in a Rust thread
        rt.subdevice(3).outputs["Channel 1"] = 0x3fff
        print(rt.perf()["task_duration"]["line"])

Modules: ``ecat.sim`` (simulated networks, on virtual time for deterministic tests),
``ecat.pysoem`` (pysoem's interface on top of ecat), ``ecat.pytest_plugin`` (the
``ecat_network`` fixture). Errors derive from ``ecat.Error`` and carry ecat's one-sentence
messages: ``LinkError``, ``TimeoutError``, ``WkcError``, ``AlStatusError`` (``code``,
``text``), ``SdoAbort`` (``code``, ``text``), ``MailboxError``, ``SimError``.
"""

from ._ecat import (
    AlStatusError,
    Error,
    LinkError,
    MailboxError,
    SdoAbort,
    SimError,
    TimeoutError,
    WkcError,
    __version__,
)
from ._core import Identity, MainDevice, ObjectEntry, ObjectInfo, SubDevice, state_name
from ._runtime import Entry, Event, Events, ProcessData, Runtime, SubDeviceData
from ._types import parse_duration

__all__ = [
    "MainDevice",
    "SubDevice",
    "Runtime",
    "SubDeviceData",
    "ProcessData",
    "Entry",
    "Event",
    "Events",
    "Identity",
    "ObjectInfo",
    "ObjectEntry",
    "Error",
    "LinkError",
    "TimeoutError",
    "WkcError",
    "AlStatusError",
    "SdoAbort",
    "MailboxError",
    "SimError",
    "parse_duration",
    "state_name",
    "__version__",
]
