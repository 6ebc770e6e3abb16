"""Simulated EtherCAT networks, built and controlled from Python.

``Network("io")`` (presets: ``Network.presets()``: io, servo, servo6, dc8), ``Network("net.toml")``,
``Network.from_toml(text)`` or ``Network.from_eni("eni.xml")`` (also ``Network("eni:eni.xml")``).
TOML subdevices may be built from ESI files (``esi = "Beckhoff_EL2xxx.xml"``, ``type =
"EL2032"``), found beside the file, in the file's ``esi_dirs``, in ``ECAT_ESI_PATH`` or in the
``esi_dirs=[...]`` given to ``Network``/``from_toml`` (searched first). On virtual time (the default) nothing moves unless a MainDevice
steps it (``rt.step()`` advances the shared clock by one cycle), so tests are deterministic
and fast; ``virtual_time=False`` runs on real time. Hand it to ``ecat.MainDevice(net)`` and
keep controlling it while the MainDevice runs:

- ``net.set_inputs(pos, b"...")`` / ``net.clear_inputs(pos)``: pin a SubDevice's inputs;
- ``net.outputs(pos)``: the outputs the SubDevice applies now;
- ``net.set_faults(drop_rate=..., corrupt_rate=..., delay_ns=..., jitter_ns=...,
  duplicate_rate=..., seed=...)``: per-frame faults;
- ``net.unplug(pos)``, ``net.replug(pos, power_cycled=False)``, ``net.power_cycle(pos)``,
  ``net.schedule(at_ns, "unplug", pos)``;
- ``net.serve("veth0")`` / ``net.stop_serving()``: answer on a network interface instead.

Positions are the network's own (wiring order), which do not shift when one is unplugged.
"""

from typing import Dict

from ._ecat import Network, SimError

presets = Network.presets

_published: Dict[str, Network] = {}


def publish(net: Network, name: str) -> str:
    """Make ``net`` reachable as the link ``"sim:NAME"`` for ``ecat.MainDevice`` and
    ``ecat.pysoem`` in this process (so a script that takes its interface name from its
    arguments runs against a network the test controls). Returns the link name."""
    if name in Network.presets():
        raise SimError(f"'{name}' is a preset's name: publish the network under another name")
    _published[name] = net
    return f"sim:{name}"


def unpublish(name: str) -> None:
    """Forget a network published under ``name``."""
    _published.pop(name, None)


__all__ = ["Network", "SimError", "presets", "publish", "unpublish"]
