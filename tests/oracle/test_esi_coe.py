"""The CoE dictionary of ESI-built devices: an EL3102 and an EL4132 built from Beckhoff's
ESI files (testdata/esi) answer SDO uploads with the ESI's identity and default values, list
the ESI's objects through SDO Information, and SOEM reads the same values and object list
through `ecat sim` on a veth pair."""

from __future__ import annotations

import json
import sys

from helpers import TESTDATA, describe, run

NETWORK = f"""esi_dirs = ["{TESTDATA / 'esi'}"]

[[subdevice]]
type = "EK1100"

[[subdevice]]
type = "EL3102"

[[subdevice]]
type = "EL4132"
"""

SOEM = r"""
import json, sys, pysoem
m = pysoem.Master(); m.open(sys.argv[1])
try:
    m.config_init()
    s = m.slaves[1]
    out = {
        "product": int.from_bytes(s.sdo_read(0x1018, 2), "little"),
        "ai_settings": s.sdo_read(0x8000, 0)[0],
        "objects": [o.index for o in s.od],
    }
finally:
    m.close()
print(json.dumps(out))
"""


def _net(tmp_path):
    net = tmp_path / "esi-coe.toml"
    net.write_text(NETWORK)
    return net


def test_esi_dictionary_in_process(ecat, tmp_path):
    i = f"sim:{_net(tmp_path)}"
    p = run([ecat, "upload", "-i", i, "-p", "1", "0x1018", "2"])
    assert p.returncode == 0 and "0x0c1e3052" in p.stdout, describe(p)
    # 0x8000:00 "AI Settings" has DefaultData 18 (hex) = 24 entries in the ESI.
    p = run([ecat, "upload", "-i", i, "-p", "1", "0x8000", "0"])
    assert p.returncode == 0 and "0x18" in p.stdout, describe(p)
    p = run([ecat, "sdos", "-i", i, "-p", "1", "-q"])
    assert p.returncode == 0 and "AI Settings" in p.stdout and "0x1c13" in p.stdout.lower(), describe(p)


def test_esi_dictionary_with_soem(ecat, ecat_sim, veth, tmp_path):
    ecat_sim(str(_net(tmp_path)))
    p = run([sys.executable, "-c", SOEM, veth.host_if], timeout=120)
    assert p.returncode == 0, describe(p)
    res = json.loads(p.stdout.strip().splitlines()[-1])
    assert res["product"] == 0x0C1E3052
    assert res["ai_settings"] == 0x18
    assert {0x1000, 0x1018, 0x1A00, 0x1C12, 0x1C13, 0x6000, 0x8000} <= set(res["objects"]), res
