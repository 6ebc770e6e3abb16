"""The pytest plugin's fixtures (registered through the package's `pytest11` entry point)."""

import pytest

import ecat


def test_default_network_is_io(ecat_network):
    assert len(ecat_network) == 5 and ecat_network.virtual_time


@pytest.mark.ecat_network("servo6")
def test_marker_picks_the_network(ecat_maindevice):
    assert len(ecat_maindevice.subdevices) == 6


def test_control_code_against_the_simulator(ecat_network, ecat_maindevice):
    # "Control code": mirror the EL1018's inputs to the EL2008's outputs every cycle.
    rt = ecat_maindevice.activate(start=False)
    ecat_network.set_inputs(2, b"\x5a")
    for _ in range(3):
        rt.subdevice(1).outputs.raw[:] = rt.subdevice(2).inputs.raw
        rt.step()
    assert ecat_network.outputs(1) == b"\x5a"
    t0 = ecat_network.now_ns
    rt.step(10)
    assert ecat_network.now_ns - t0 == 10 * rt.cycle_ns
    assert isinstance(ecat_maindevice, ecat.MainDevice)
