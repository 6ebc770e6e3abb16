"""`ecat run --hot-connect`: a group absent when the bus is scanned, described by its members'
ESI types, is laid out from the ESI files, and joins when its branch is connected for the
first time while the rest cycles (issue 15). The simulated network disconnects the group's
branch before the scan and connects it two seconds later."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import describe, run

ESI = Path(__file__).resolve().parents[2] / "testdata" / "esi"

NET = """
[[subdevice]]
model = "EK1100"
[[subdevice]]
model = "EL2008"
[[subdevice]]
model = "EL1018"
[[subdevice]]
model = "EL4132"
[[subdevice]]
model = "EK1100"
alias = 8192
parent = 0
port = 2
[[subdevice]]
model = "EL2008"
[[subdevice]]
model = "EL1018"

[[event]]
at_ms = 0
action = "disconnect"
position = 4

[[event]]
at_ms = 2000
action = "connect"
position = 4
"""


# The group in the middle: on port 3 of an EK1122, which the frame passes before port 1,
# so the fixed EL2008 and EL1018 behind port 1 come after it in auto-increment order. It is
# absent at the start, joins at 1.5 s, leaves at 2.5 s and comes back at 3 s.
NET_MIDDLE = """
[[subdevice]]
model = "EK1100"
[[subdevice]]
model = "EK1122"
[[subdevice]]
model = "EK1100"
alias = 8192
parent = 1
port = 3
[[subdevice]]
model = "EL2008"
[[subdevice]]
model = "EL1018"
[[subdevice]]
model = "EL2008"
parent = 1
port = 1
[[subdevice]]
model = "EL1018"
""" + "".join(
    f'\n[[event]]\nat_ms = {t}\naction = "{a}"\nposition = 2\n'
    for t, a in ((0, "disconnect"), (1500, "connect"), (2500, "disconnect"), (3000, "connect"))
)


def hot_file(tmp_path: Path, members: str, position: int = 4) -> Path:
    f = tmp_path / "hc.toml"
    f.write_text(
        f'esi_dir = ["{ESI}"]\n[[group]]\nname = "tool"\nalias = 0x2000\nposition = {position}\n'
        f"subdevices = 3\nmembers = {members}\n"
    )
    return f


def test_a_group_absent_at_the_start_joins_when_connected(ecat, tmp_path):
    net = tmp_path / "net.toml"
    net.write_text(NET)
    hc = hot_file(tmp_path, '["EK1100", "EL2008", "EL1018"]')
    j = tmp_path / "run.json"
    p = run([ecat, "run", "-i", f"sim:{net}", "--dc", "off", "--hot-connect", str(hc),
             "--duration", "4s", "--json", str(j)], timeout=60)
    assert p.returncode == 0, describe(p)
    out = p.stdout
    assert "3 SubDevice(s) of absent groups laid out" in out, out
    assert 'hot-connect group "tool": positions 4-6, absent' in out, out
    assert re.search(r"^all 4 SubDevices in OP .*3 of absent hot-connect groups", out, re.M), out
    connected = re.search(r'^cycle (\d+): hot-connect group "tool" \(positions 4-6\) connected', out, re.M)
    ready = re.search(r'^cycle (\d+): hot-connect group "tool" \(positions 4-6\) is in OP, (\d+) cycles', out, re.M)
    assert connected and ready, out
    assert int(ready[2]) <= 500, out
    assert "disconnected" not in out, out
    assert re.search(r"7/7 SubDevices in OP", out), out
    fig = json.loads(j.read_text())
    assert fig["domain_incomplete_cycles"] == 0, fig
    # Nothing was reported for the fixed part.
    assert not re.search(r"^cycle \d+: SubDevice [0-3] .*(lost|error|fault)", out, re.M | re.I), out


def test_members_that_do_not_fit_the_group_are_one_sentence(ecat, tmp_path):
    net = tmp_path / "net.toml"
    net.write_text(NET)
    hc = hot_file(tmp_path, '["EK1100", "NoSuchTerminal", "EL1018"]')
    p = run([ecat, "run", "-i", f"sim:{net}", "--dc", "off", "--hot-connect", str(hc),
             "--duration", "1s"], timeout=60)
    assert p.returncode != 0
    err = p.stderr.strip().splitlines()[-1]
    assert 'member "NoSuchTerminal"' in err and "group \"tool\"" in err, describe(p)


def test_a_group_absent_at_the_start_in_the_middle_of_the_bus(ecat, tmp_path):
    net = tmp_path / "net.toml"
    net.write_text(NET_MIDDLE)
    hc = hot_file(tmp_path, '["EK1100", "EL2008", "EL1018"]', position=2)
    j = tmp_path / "run.json"
    p = run([ecat, "run", "-i", f"sim:{net}", "--dc", "off", "--hot-connect", str(hc),
             "--duration", "5s", "--json", str(j)], timeout=60)
    assert p.returncode == 0, describe(p)
    out = p.stdout
    assert 'hot-connect group "tool": positions 2-4, absent' in out, out
    assert len(re.findall(r'^cycle \d+: hot-connect group "tool" \(positions 2-4\) is in OP', out, re.M)) == 2, out
    assert len(re.findall(r'^cycle \d+: hot-connect group "tool" \(positions 2-4\) disconnected', out, re.M)) == 1, out
    assert re.search(r"t=5\.0s .*7/7 SubDevices in OP", out), out
    fig = json.loads(j.read_text())
    assert fig["domain_incomplete_cycles"] == 0, fig
    # The fixed SubDevices behind the group keep their station addresses; the group's are new.
    assert re.search(r"^5 +0x1003 .*EL2008", out, re.M) and re.search(r"^2 +0x1005 .*EK1100", out, re.M), out
