"""SOEM (pysoem) agrees with our FoE server: `foe_write` then `foe_read` round-trip a
100 KiB file through the simulator over a veth pair (the rates are printed), a file named
in the network file can be read, a missing file delivers nothing, a wrong password makes
SOEM report an FoE error, the right password works, and SOEM's firmware-update sequence
(INIT, bootstrap mailbox, BOOT, foe_write, INIT, PREOP) stores the firmware. The veth
pair and namespace names contain `mbxp`."""

from __future__ import annotations

import json
import os
import sys

import pytest

import netns
from helpers import HERE, SimProcess, describe, need, run

pytest.importorskip("pysoem", reason="pysoem missing: ./scripts/test.sh installs it into .venv")


class MbxpVeth(netns.VethNs):
    """A VethNs whose names contain `mbxp` (unique per process and call)."""

    def __init__(self) -> None:
        super().__init__()
        tag = self.ns[3:]
        self.ns, self.host_if, self.ns_if = f"mbxpn{tag}", f"mbxph{tag}", f"mbxps{tag}"
        assert max(len(self.ns), len(self.host_if), len(self.ns_if)) <= 15


def test_soem_foe_roundtrip_100k(ecat, tmp_path):
    need(netns.unavailable_reason())
    big = os.urandom(100 * 1024)
    (tmp_path / "big.bin").write_bytes(big)
    pre = b"preloaded by the network file\n" * 20
    (tmp_path / "preloaded.bin").write_bytes(pre)
    net = tmp_path / "foe.toml"
    net.write_text(
        '[[subdevice]]\nmodel = "ECAT-SERVO-402"\n'
        'foe_files = { "preloaded.bin" = "preloaded.bin" }\n'
        '[[subdevice]]\nmodel = "ECAT-SOE-DRIVE"\nfoe_password = 0x1234\n'
    )
    with MbxpVeth() as v:
        sim = SimProcess(v.exec_argv([str(ecat), "sim", "-i", v.ns_if, "-n", str(net)]))
        try:
            sim.start()
            p = run(
                [sys.executable, HERE / "soem_foe_probe.py", v.host_if, tmp_path / "big.bin",
                 tmp_path / "preloaded.bin"],
                timeout=300,
            )
        finally:
            sim.stop()
    assert p.returncode == 0, describe(p)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    print(json.dumps(r, indent=1))
    assert r["count"] == 2
    assert r["roundtrip_equal"] is True, r
    assert r["read_len"] == len(big)
    print(f"SOEM FoE 100 KiB: write {len(big) / 1024 / r['write_s']:.0f} KiB/s, "
          f"read {len(big) / 1024 / r['read_s']:.0f} KiB/s")
    assert r["preloaded_equal"] is True
    # pysoem's foe_read does not report SOEM's result: a read that ends in an FoE error
    # packet ("not found") delivers nothing.
    assert r["missing"] == {"ok": True, "value": 0}, r["missing"]
    # foe_write returns SOEM's result: -EC_ERR_TYPE_FOE_ERROR (-5) when the SubDevice
    # answered with an FoE error packet ("access denied").
    assert r["wrong_password"] == {"ok": True, "value": -5}, r["wrong_password"]
    assert r["right_password_write"] is True
    assert r["right_password_read"] is True
    b = r["boot"]
    assert b["boot_mailbox"] == [[0x1000, 0x200], [0x1200, 0x200]], b
    assert (b["init"], b["boot"], b["init_after"], b["preop_after"]) == (1, 3, 1, 2), b
    assert b["write"] > 0 and b["read_in_boot"] and b["read_in_preop"], b
    print(f"SOEM FoE firmware 100 KiB in BOOT (512-byte mailbox): "
          f"{len(big) / 1024 / b['write_s']:.0f} KiB/s")
