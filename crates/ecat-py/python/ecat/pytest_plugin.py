"""pytest plugin (registered through the ``pytest11`` entry point): simulated EtherCAT
networks as fixtures, so control code can be tested without hardware.

- ``ecat_network``: an ``ecat.sim.Network`` on virtual time; the preset or TOML file comes
  from ``@pytest.mark.ecat_network("servo6")`` (default ``io``).
- ``ecat_maindevice``: an ``ecat.MainDevice`` on that network, scanned, closed (INIT) after
  the test.
"""

from __future__ import annotations

import pytest


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "ecat_network(spec, virtual_time=True): the simulated network the ecat_network fixture builds",
    )


@pytest.fixture
def ecat_network(request):
    """A simulated EtherCAT network (default preset ``io``, on virtual time)."""
    from .sim import Network

    marker = request.node.get_closest_marker("ecat_network")
    spec = marker.args[0] if marker and marker.args else "io"
    vt = marker.kwargs.get("virtual_time", True) if marker else True
    net = Network(spec, virtual_time=vt)
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
