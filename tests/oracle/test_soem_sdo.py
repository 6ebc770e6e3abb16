"""SOEM (pysoem) reads and writes SDOs in every form against our simulated servo drives,
lists the object dictionary, remaps a drive's PDOs over CoE and then `config_map` gives the
new sizes; refused accesses come back with the right abort codes."""

from __future__ import annotations

import json
import sys

import pytest

import netns
from helpers import HERE, SimProcess, describe, need, run

pytest.importorskip("pysoem", reason="pysoem missing: ./scripts/test.sh installs it into .venv")


def test_soem_sdo_every_form_and_remap(ecat):
    need(netns.unavailable_reason())
    with netns.VethNs() as v:
        sim = SimProcess(v.exec_argv([str(ecat), "sim", "-i", v.ns_if, "-n", "servo6"]))
        try:
            sim.start()
            p = run([sys.executable, HERE / "soem_sdo_probe.py", v.host_if, "--remap"], timeout=120)
        finally:
            sim.stop()
    assert p.returncode == 0, describe(p)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    print(json.dumps(r, indent=1))
    assert r["count"] == 6
    assert r["vendor_1018"] == 0x00000ECA
    assert len(r["device_name_1008"]) > 4, "a name longer than 4 bytes comes as a normal upload"
    assert r["mode_after_write"] == 3
    assert r["segmented_roundtrip"] is True
    assert r["ca_1c12"].startswith("01") and "0016" in r["ca_1c12"], r["ca_1c12"]
    assert r["ca_1018"][:8] == "ca0e0000", r["ca_1018"]
    assert r["refused_write"] == 0x06010002
    assert r["missing_read"] == 0x06020000
    assert r["od_count"] > 20
    assert r["sizes"] == [[6, 12]] * 6, r["sizes"]
    assert r["iomap_size"] == 6 * 18
    assert r["safeop"] == 4
    assert r["remap_in_safeop"] == 0x08000022
