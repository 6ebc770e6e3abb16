"""Distributed clocks over a veth pair against `ecat sim -n dc8` (a line of six DC
SubDevices and a branch of two): SOEM's config_dc computes the same propagation delays as
ours (and as the simulator's truth), and `ecat run` reports its sync monitor in both modes."""

from __future__ import annotations

import json
import re
import sys
import time

import pytest

import netns
from helpers import HERE, SimProcess, describe, need, run


def dumped_delays(lines: list[str]) -> dict[int, tuple[int, int]]:
    out = {}
    for l in lines:
        m = re.match(r"dc (\d+) delay (\d+) offset \d+ true (-?\d+)", l)
        if m:
            out[int(m[1])] = (int(m[2]), int(m[3]))
    return out


def ours(ecat, iface) -> dict[int, int]:
    p = run([ecat, "slaves", "-v", "-i", iface], timeout=60)
    assert p.returncode == 0, describe(p)
    delays, pos = {}, None
    for l in p.stdout.splitlines():
        m = re.match(r"=== SubDevice (\d+)", l)
        if m:
            pos = int(m[1])
        m = re.search(r"DC system time delay: (\d+) ns", l)
        if m:
            delays[pos] = int(m[1])
        if "reference clock" in l and pos is not None and "DC system time delay" in l:
            delays[pos] = 0
    return delays


def test_soem_config_dc_agrees(ecat):
    pytest.importorskip("pysoem", reason="pysoem missing: ./scripts/test.sh installs it into .venv")
    need(netns.unavailable_reason())
    with netns.VethNs() as v:
        sim = SimProcess(v.exec_argv([str(ecat), "sim", "-i", v.ns_if, "-n", "dc8", "--dump-dc"]))
        try:
            sim.start()
            mine = ours(ecat, v.host_if)
            p = run([sys.executable, HERE / "soem_dc_probe.py", v.host_if], timeout=60)
            assert p.returncode == 0, describe(p)
            time.sleep(0.2)
        finally:
            sim.stop()
        soem = dumped_delays(sim.drain_lines())
    print("ours:", mine)
    print("SOEM (0x0928 after config_dc), truth:", soem)
    assert len(mine) == 8 and len(soem) == 8
    for pos, (soem_delay, truth) in soem.items():
        assert abs(mine[pos] - truth) <= 10, f"SubDevice {pos}: ours {mine[pos]}, true {truth}"
        assert abs(soem_delay - mine[pos]) <= 10, f"SubDevice {pos}: SOEM {soem_delay}, ours {mine[pos]}"


@pytest.mark.parametrize("mode", ["master-follows-ref", "ref-follows-master"])
def test_run_with_dc_over_veth_reports_sync(ecat, veth, ecat_sim, tmp_path, mode):
    ecat_sim("dc8")
    j = tmp_path / "run.json"
    p = run([ecat, "run", "-i", veth.host_if, "--duration", "3s", "--dc", mode, "--json", str(j)], timeout=60)
    assert p.returncode == 0, describe(p)
    assert re.search(r"^DC: reference clock SubDevice 0", p.stdout, re.M), p.stdout
    assert "PerfMsmt 'DC Sync Monitor" in p.stdout, p.stdout
    fig = json.loads(j.read_text())
    dc = fig["figures"]["dc_sync_monitor"]
    print(mode, "sync monitor (us):", dc)
    # Sampled in most of the ~3,000 cycles; a stall of the shared VM can cost a second of them
    # (a CI run saw 1,969), so the bound asks for a third: a monitor that is not read gives 0.
    assert dc["count"] > 1000, dc
    # A frame late over veth on a shared VM costs its cycle's WKC, nothing else (see test_run).
    assert fig["frames"]["lost"] - fig["frames"]["late"] == 0, fig["frames"]
    assert fig["domain_incomplete_cycles"] <= fig["frames"]["late"], fig
