"""`ecat sii build` images (SII from Beckhoff's ESI files) of an EK1100, EL2004, EL2828 and
EL2889 load in the simulator as `sii = "..."` entries and scan with the right identities,
in-process (`ecat slaves`) and through `ecat sim` on a veth pair with SOEM; and the network
brings them to OP."""

from __future__ import annotations

import re

from helpers import TESTDATA, describe, ecat_slaves, names_agree, run, sii_identity, soem_scan

ESI_DIR = TESTDATA / "esi"
TYPES = ["EK1100", "EL2004", "EL2828", "EL2889"]


def _network(ecat, tmp_path):
    entries = []
    for t in TYPES:
        out = tmp_path / f"{t.lower()}.bin"
        p = run([ecat, "sii", "build", "--esi-dir", ESI_DIR, "--type", t, "-o", out])
        assert p.returncode == 0, describe(p)
        entries.append((t, sii_identity(out), out))
    net = tmp_path / "net.toml"
    net.write_text("".join(f'[[subdevice]]\nsii = "{out}"\n\n' for _, _, out in entries))
    return net, entries


def test_sii_build_images_scan_in_process_and_reach_op(ecat, tmp_path):
    net, entries = _network(ecat, tmp_path)
    found = ecat_slaves(ecat, f"sim:{net}")
    assert [(s.vendor, s.product, s.revision) for s in found] == [e[1] for e in entries]
    for s, (t, _, _) in zip(found, entries):
        assert s.name.startswith(t), (s.name, t)
    p = run([ecat, "run", "-i", f"sim:{net}", "--duration", "0.5s"], timeout=120)
    assert p.returncode == 0, describe(p)
    assert f"all {len(TYPES)} SubDevices in OP" in p.stdout, describe(p)
    m = re.findall(r"domain 0 complete \(WKC (\d+)/(\d+)\)", p.stdout)
    assert m and m[-1][0] == m[-1][1], describe(p)


def test_sii_build_images_scan_with_soem(ecat, ecat_sim, veth, tmp_path):
    net, entries = _network(ecat, tmp_path)
    ecat_sim(str(net))
    res = soem_scan(veth.host_if)
    assert res["count"] == len(TYPES), res
    for s, (t, (vendor, product, revision), _) in zip(res["subdevices"], entries):
        assert (s["man"], s["id"], s["rev"]) == (vendor, product, revision), s
        assert names_agree(t, s["name"][: len(t)]), (s["name"], t)
