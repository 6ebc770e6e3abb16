"""pytest plugin (registered through the ``pytest11`` entry point): simulated EtherCAT
networks as fixtures, so control code can be tested without hardware.

- ``ecat_network``: an ``ecat.sim.Network`` on virtual time; the preset, TOML file or
  ``eni:FILE`` comes from ``@pytest.mark.ecat_network("servo6")`` (default ``io``;
  ``esi_dirs=[...]`` for TOML files with ESI-built subdevices).
- ``ecat_maindevice``: an ``ecat.MainDevice`` on that network, scanned, closed (INIT) after
  the test.
"""

from __future__ import annotations

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "ecat_network(spec, virtual_time=True, esi_dirs=()): the simulated network the ecat_network fixture builds",
    )


@pytest.fixture
def ecat_network(request):
    """A simulated EtherCAT network (default preset ``io``, on virtual time)."""
    from .sim import Network

    marker = request.node.get_closest_marker("ecat_network")
    spec = marker.args[0] if marker and marker.args else "io"
    kwargs = dict(marker.kwargs) if marker else {}
    vt, esi_dirs = kwargs.pop("virtual_time", True), kwargs.pop("esi_dirs", ())
    if kwargs:
        raise TypeError(f"ecat_network marker: unknown argument(s) {', '.join(kwargs)}: use virtual_time, esi_dirs")
    net = Network(spec, virtual_time=vt, esi_dirs=esi_dirs)
    yield net
    net.stop_serving()


@pytest.fixture
def ecat_maindevice(ecat_network):
    """A MainDevice on ``ecat_network``, already scanned; INIT and closed after the test."""
    from . import MainDevice

    md = MainDevice(ecat_network)
    md.scan()
    yield md
    md.close()
