"""SOEM (through pysoem) as an independent MainDevice against `ecat sim` over a veth pair.

Our simulator must be right, not just agree with our own master: SOEM scans the
simulated network from the host end of a veth pair while `ecat sim` serves the
other end inside a network namespace. What SOEM sees is compared with our own
scan of the same network (`ecat slaves --json -i sim:...`) and, for the real
SII dumps, with the identities and strings read straight from the files.
"""

from __future__ import annotations

import pytest

import netns
from helpers import (
    TESTDATA,
    SimProcess,
    ecat_slaves,
    names_agree,
    need,
    sii_identity,
    sii_strings,
    soem_scan,
)

pysoem = pytest.importorskip("pysoem", reason="pysoem missing: ./scripts/test.sh installs it into .venv")

BECKHOFF = 0x00000002

# The built-in preset "io": EK1100, EL2008, EL1018, EL4132, EL3102, then a passive
# EL9011 end cap, which has no ESC and so is invisible to any MainDevice.
IO_PRESET = [
    ("EK1100", 0x044C2C52),
    ("EL2008", 0x07D83052),
    ("EL1018", 0x03FA3052),
    ("EL4132", 0x10243052),
    ("EL3102", 0x0C1E3052),
]
EK1100_REVISION = 0x00120000

SII_FILES = ["ek1100-eeprom-dump.bin", "el2828.bin", "el2889.bin"]


def scan_with_soem(ecat, network: str, state: str = "preop") -> dict:
    """Start `ecat sim -n network` in a fresh namespace, scan it with SOEM, clean up."""
    need(netns.unavailable_reason())
    with netns.VethNs() as v:
        sim = SimProcess(v.exec_argv([str(ecat), "sim", "-i", v.ns_if, "-n", network]))
        try:
            sim.start()
            result = soem_scan(v.host_if, state)
            result["sim_alive_after_scan"] = sim.alive()
            result["sim_stderr"] = sim.stderr_text()
            return result
        finally:
            sim.stop()


def show(soem: dict) -> str:
    rows = [
        f"  {d['position']}: {d['name']!r} man={d['man']:#010x} id={d['id']:#010x} "
        f"rev={d['rev']:#010x} state={d['state']:#04x} al_status={d['al_status']:#06x}"
        for d in soem.get("subdevices", [])
    ]
    return f"SOEM count={soem.get('count')}\n" + "\n".join(rows)


# --------------------------------------------------------------------------
# The built-in preset "io"
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def io_ours(ecat):
    return ecat_slaves(ecat, "sim:io")


@pytest.fixture(scope="module")
def io_soem(ecat):
    return scan_with_soem(ecat, "io", "preop")


def test_our_scan_of_io_preset(io_ours):
    got = [(s.name, s.vendor, s.product) for s in io_ours]
    assert len(io_ours) == len(IO_PRESET), got
    for s, (model, product) in zip(io_ours, IO_PRESET):
        assert s.name.startswith(model), got
        assert (s.vendor, s.product) == (BECKHOFF, product), got
    assert io_ours[0].revision == EK1100_REVISION


def test_soem_counts_io_preset(io_soem, io_ours):
    print(show(io_soem))
    assert io_soem["count"] == len(IO_PRESET) == len(io_ours), show(io_soem)
    assert io_soem["sim_alive_after_scan"], io_soem["sim_stderr"]


def test_soem_identities_match_our_scan(io_soem, io_ours):
    soem = io_soem["subdevices"]
    assert len(soem) == len(io_ours), show(io_soem)
    for ours, s in zip(io_ours, soem):
        where = f"position {s['position']}: ours {ours} vs SOEM\n{show(io_soem)}"
        assert names_agree(ours.name, s["name"]), where
        assert (s["man"], s["id"], s["rev"]) == ours.ids(), where


def test_soem_brings_io_preset_to_preop(io_soem):
    print(show(io_soem))
    assert io_soem.get("state_check") == pysoem.PREOP_STATE, show(io_soem)
    for s in io_soem["subdevices"]:
        assert s["state"] == pysoem.PREOP_STATE, show(io_soem)  # no error bit either
        assert s["al_status"] == 0, show(io_soem)


# --------------------------------------------------------------------------
# A network built from real SII dumps
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sii_network(tmp_path_factory):
    paths = [TESTDATA / "sii" / f for f in SII_FILES]
    toml = tmp_path_factory.mktemp("sii-net") / "real-sii.toml"
    toml.write_text("".join(f'[[subdevice]]\nsii = "{p.resolve()}"\n\n' for p in paths))
    return toml, paths


@pytest.fixture(scope="module")
def sii_soem(ecat, sii_network):
    toml, _ = sii_network
    return scan_with_soem(ecat, str(toml), "preop")


def test_soem_reads_real_sii_dumps(sii_soem, sii_network):
    _, paths = sii_network
    print(show(sii_soem))
    assert sii_soem["count"] == len(paths), show(sii_soem)
    names = [s["name"] for s in sii_soem["subdevices"]]
    assert names == ["EK1100", "EL2828", "EL2889"], show(sii_soem)
    for s, path in zip(sii_soem["subdevices"], paths):
        assert s["name"] == sii_strings(path)[0]
        assert (s["man"], s["id"], s["rev"]) == sii_identity(path), f"{path.name}\n{show(sii_soem)}"


def test_soem_brings_real_sii_network_to_preop(sii_soem):
    assert sii_soem.get("state_check") == pysoem.PREOP_STATE, show(sii_soem)
    for s in sii_soem["subdevices"]:
        assert s["state"] == pysoem.PREOP_STATE, show(sii_soem)


def test_our_scan_of_real_sii_network(ecat, sii_network):
    toml, paths = sii_network
    ours = ecat_slaves(ecat, f"sim:{toml}")
    assert [s.ids() for s in ours] == [sii_identity(p) for p in paths], ours
    for s, p in zip(ours, paths):
        assert names_agree(s.name, sii_strings(p)[0]), (s, sii_strings(p)[:4])
