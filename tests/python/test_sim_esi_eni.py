"""`ecat.sim` networks built from ENI files and from ESI device descriptions (TOML `esi`/
`type` subdevices, the `esi_dirs=` argument, `ECAT_ESI_PATH`), driven by the package's
MainDevice. Expectations come from the ENI and ESI files themselves."""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import ecat
import ecat.sim

TESTDATA = Path(__file__).parents[2] / "testdata"
ENI = TESTDATA / "eni" / "twincat-style-4xElmoGold-IMU.xml"
ESI_DIR = TESTDATA / "esi"

# EK1100 found in the ESI directories by type, EL2032 by file and type, EL1004 by type.
ESI_TOML = """
[[subdevice]]
type = "EK1100"

[[subdevice]]
esi = "Beckhoff_EL2xxx.xml"
type = "EL2032"

[[subdevice]]
type = "EL1004"
"""


def eni_slaves():
    """(name, vendor, product, input bits, output bits) of each slave in the ENI."""
    out = []
    for s in ET.parse(ENI).getroot().iter("Slave"):
        info = s.find("Info")
        bits = {d: sum(int(e.text) for e in s.findall(f"ProcessData/{d}/BitLength")) for d in ("Recv", "Send")}
        out.append((info.findtext("Name"), int(info.findtext("VendorId")), int(info.findtext("ProductCode")),
                    bits["Recv"], bits["Send"]))
    return out


def test_network_from_eni_scans_and_runs_as_the_eni_describes():
    want = eni_slaves()
    assert len(want) == 5
    net = ecat.sim.Network.from_eni(ENI)
    assert [s["name"] for s in ecat.sim.Network(f"eni:{ENI}").summary()] == [w[0] for w in want]
    with ecat.MainDevice(net) as md:
        subs = md.scan()
        assert [(s.name, s.identity.vendor_id, s.identity.product_code) for s in subs] == [w[:3] for w in want]
        rt = md.activate("1ms", start=False)
        assert rt.states() == ["OP"] * 5
        for p, w in enumerate(want):
            d = rt.subdevice(p)
            assert (len(d.inputs.raw) * 8, len(d.outputs.raw) * 8) == (w[3], w[4]), w[0]
        # The IMU's inputs carry the ENI's entry names; pinned values reach Python.
        imu = rt.subdevice(0).inputs
        assert "Acceleration X" in imu.keys()
        net.set_inputs(0, bytes(range(1, len(imu.raw) + 1)))
        rt.step(2)
        assert bytes(imu.raw) == bytes(range(1, len(imu.raw) + 1))
        assert imu["Acceleration X"] == 0x0201
        assert rt.wkc()[0] == rt.wkc()[1]


def test_toml_with_esi_subdevices_and_esi_dirs():
    net = ecat.sim.Network.from_toml(ESI_TOML, esi_dirs=[ESI_DIR])
    with ecat.MainDevice(net) as md:
        subs = md.scan()
        assert [s.order for s in subs] == ["EK1100", "EL2032", "EL1004"]
        assert subs[1].name == "EL2032 2Ch. Dig. Output 24V, 2A, Diagnostic"
        assert subs[1].identity.product_code == 0x07F03052
        rt = md.activate("1ms", start=False)
        assert rt.states() == ["OP"] * 3
        rt.subdevice(1).outputs["Channel 2"] = 1
        net.set_inputs(2, b"\x05")
        rt.step(3)
        assert net.outputs(1) == b"\x02"
        assert rt.subdevice(2).inputs.to_dict() == {
            "Channel 1": True, "Channel 2": False, "Channel 3": True, "Channel 4": False
        }


def test_esi_directories_from_ecat_esi_path(monkeypatch, tmp_path):
    monkeypatch.delenv("ECAT_ESI_PATH", raising=False)
    with pytest.raises(ecat.SimError, match="no ESI file describes type EK1100"):
        ecat.sim.Network.from_toml(ESI_TOML)
    monkeypatch.setenv("ECAT_ESI_PATH", str(ESI_DIR))
    net = ecat.sim.Network.from_toml(ESI_TOML)
    assert [s["order"] for s in net.summary()] == ["EK1100", "EL2032", "EL1004"]
    # A network file on disk: `esi` resolves beside it, then in the directories.
    f = tmp_path / "net.toml"
    f.write_text(ESI_TOML)
    assert len(ecat.sim.Network(str(f))) == 3


def test_esi_dirs_are_searched_for_that_build_only(monkeypatch):
    monkeypatch.delenv("ECAT_ESI_PATH", raising=False)
    assert len(ecat.sim.Network.from_toml(ESI_TOML, esi_dirs=[str(ESI_DIR)])) == 3
    with pytest.raises(ecat.SimError, match="searched no directories"):
        ecat.sim.Network.from_toml(ESI_TOML)
    with pytest.raises(ecat.SimError, match="ESI directory /no/such/dir does not exist"):
        ecat.sim.Network.from_toml(ESI_TOML, esi_dirs=["/no/such/dir"])


@pytest.mark.ecat_network(f"eni:{ENI}")
def test_fixture_builds_eni_networks(ecat_maindevice):
    assert [s.name for s in ecat_maindevice.subdevices] == [w[0] for w in eni_slaves()]


@pytest.mark.ecat_network(str(TESTDATA / "networks" / "replay-esi-ek1100-el2828-el2889.toml"))
def test_fixture_builds_esi_networks(ecat_network):
    assert [s["order"] for s in ecat_network.summary()] == ["EK1100", "EL2828", "EL2889"]
