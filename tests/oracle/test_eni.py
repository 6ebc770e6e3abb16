"""ENI files: the shipped TwinCAT-style ENI (an IMU and four Elmo Gold drives) simulated by
`ecat sim --eni` in a namespace and run by `ecat run --eni` / `ecat data --eni` over a veth
pair. The bus reaches OP, every cycle carries the ENI's logical commands with its expected
working counters (LRD 14 bytes WKC 1 + LRW 56 bytes WKC 12 = 13), the variables are listed by
name, and bad input (malformed XML, a bus that does not match) gets one clear sentence."""

from __future__ import annotations

import json
import re
from pathlib import Path

import esc_regs
from helpers import REPO, SimProcess, describe, run

ENI = next(
    (p.resolve() for p in (REPO / d / "eni" / "twincat-style-4xElmoGold-IMU.xml"
                           for d in ("../shared/testdata", "../../shared/testdata", "testdata")) if p.is_file()),
    REPO / "testdata" / "eni" / "twincat-style-4xElmoGold-IMU.xml",
)


def start_eni_sim(ecat, veth):
    sim = SimProcess(veth.exec_argv([str(ecat), "sim", "-i", veth.ns_if, "--eni", str(ENI)]))
    sim.start(expect_lines=5)
    return sim


def test_run_eni_over_veth_reaches_op_with_the_enis_wkc(ecat, veth, tmp_path):
    assert ENI.is_file(), ENI
    sim = start_eni_sim(ecat, veth)
    try:
        j = tmp_path / "run.json"
        p = run([ecat, "run", "-i", veth.host_if, "--eni", ENI, "--cycle", "1ms", "--duration", "3s", "--json", j], timeout=90)
        assert p.returncode == 0, describe(p)
        out = p.stdout
        print(out[:3000])
        assert "5 slaves match the bus" in out, out
        assert "LRD 14 bytes + LRW 56 bytes, expected WKC 13" in out, out
        assert re.search(r"^all 5 SubDevices in OP", out, re.M), out
        assert "domain 0 complete (WKC 13/13)" in out, out
        assert re.search(r"^\s+in\s+WheelRearLeft\.Inputs\.Position actual value\s+DINT\s+bit\s+776\s", out, re.M), out
        fig = json.loads(j.read_text())
        f = fig["frames"]
        print(json.dumps({k: fig[k] for k in ("cycles", "domain_incomplete_cycles", "frames")}))
        assert fig["cycles"] > 2000
        # Over a socket on a shared VM a frame may come back after its cycle (late; 8 or more
        # cycles late it is taken for a duplicate): only such cycles may lack the ENI's
        # working counter, and no frame may be lost for good.
        assert f["lost"] - f["late"] - f["duplicated"] <= 0, f
        assert fig["domain_incomplete_cycles"] <= f["late"] + f["duplicated"], fig
        # The ENI's other datagrams (NOP, ARMW/FRMW, mailbox-state LRD) travel in its frame;
        # none came back with another working counter than the ENI expects.
        assert f["fixed_wkc_mismatches"] == 0, f
        assert "cyclic frames: 1 per cycle" in out, out
    finally:
        sim.stop()


def test_data_eni_lists_every_variable_by_name(ecat, veth):
    sim = start_eni_sim(ecat, veth)
    try:
        # The image is the last of the 20 cycles over veth: its frame held back past the 1 ms
        # timeout by a stall of the shared VM reads zero or incomplete. Asked again once, with
        # a note; a WKC that is wrong stays so.
        for attempt in (1, 2):
            p = run([ecat, "data", "-i", veth.host_if, "--eni", ENI, "--cycles", "20"], timeout=60)
            assert p.returncode == 0, describe(p)
            out = p.stdout
            if attempt == 2 or not re.search(r"after 20 cycles in OP: (zero|incomplete) \(WKC \d+/13\)", out):
                break
            print(f"ecat data: the last cycle was not complete (run {attempt}); again:\n{out[:2000]}")
        assert "ENI variables after 20 cycles in OP: complete (WKC 13/13)" in out, out
        names = re.findall(r"^\s+(?:in|out)\s+(\S.*?)\s{2,}", out, re.M)
        text = ENI.read_text()
        assert len(names) == text.count("<Variable>") == 45, names
        assert "Imu.Transmit PDO Mapping.Acceleration X" in names
        assert "WheelFrontRight.Outputs.Control word" in names
    finally:
        sim.stop()


def test_malformed_eni_gives_file_line_column(ecat, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<EtherCATConfig>\n  <Config>\n    <Slave>\n  </Config>\n</EtherCATConfig>\n")
    p = run([ecat, "data", "-i", "sim:io", "--eni", bad], timeout=30)
    assert p.returncode != 0
    err = p.stderr.strip()
    assert re.search(rf"{re.escape(str(bad))}:4:\d+: malformed XML", err), err
    assert "Traceback" not in err and "panicked" not in err, err


def test_a_bus_that_does_not_match_the_eni_names_each_position(ecat):
    p = run([ecat, "run", "-i", "sim:servo6", "--eni", ENI, "--duration", "1s"], timeout=60)
    assert p.returncode != 0
    err = p.stderr
    for pos in range(5):
        assert f"position {pos}: the ENI expects" in err, err
    assert "position 5: found" in err, err
    assert "vendor 0x0000009a" in err and "vendor 0x00000eca" in err, err


DOMAIN = re.compile(r"^domain 0: .*logical (0x[0-9a-f]+), (.*), expected WKC (\d+)$", re.M)


def test_eni_writer_round_trip_over_veth(ecat, veth, ecat_sim, tmp_path):
    """`ecat eni` of `io`, `servo6` and `dc8` → `ecat run --eni`: OP with the same logical
    datagrams and expected working counters as the automatic configuration, and the same SM
    and FMMU registers in every SubDevice afterwards (read from outside, by position, without
    a scan: see esc_regs.py) as after the automatic bring-up of the same simulator."""
    for net in ("io", "servo6", "dc8"):
        eni = tmp_path / f"{net}.xml"
        p = run([ecat, "eni", "-i", f"sim:{net}", "-o", eni], timeout=60)
        assert p.returncode == 0, describe(p)
        auto = run([ecat, "run", "-i", f"sim:{net}", "--duration", "1s", "--no-rt", "--profile", "counter"], timeout=60)
        assert auto.returncode == 0, describe(auto)
        a = DOMAIN.search(auto.stdout)
        assert a, auto.stdout
        sim = SimProcess(veth.exec_argv([str(ecat), "sim", "-i", veth.ns_if, "-n", net]))
        sim.start()
        try:
            auto_veth = run([ecat, "run", "-i", veth.host_if, "--duration", "1s"], timeout=60)
            assert auto_veth.returncode == 0, describe(auto_veth)
            auto_regs = esc_regs.sm_fmmu_view(veth.host_if)
            p = run([ecat, "run", "-i", veth.host_if, "--eni", eni, "--duration", "1s"], timeout=60)
            eni_regs = esc_regs.sm_fmmu_view(veth.host_if)
        finally:
            sim.stop()
        assert p.returncode == 0, describe(p)
        e = DOMAIN.search(p.stdout)
        assert e, p.stdout
        print(net, a.groups(), e.groups())
        assert a.groups() == e.groups(), (a.groups(), e.groups())
        assert re.search(r"^all \d+ SubDevices in OP", p.stdout, re.M), p.stdout
        # Something was programmed (an enabled FMMU somewhere), and the ENI left the same.
        assert any(f != "00" * 256 for f, _ in auto_regs), auto_regs
        for pos, (x, y) in enumerate(zip(auto_regs, eni_regs)):
            assert x == y, f"{net} SubDevice {pos}: automatic {x} vs ENI {y}"
        assert len(auto_regs) == len(eni_regs)


def test_run_eni_cycles_at_the_enis_cycle_time_by_default(ecat):
    p = run([ecat, "run", "-i", f"sim:eni:{ENI}", "--eni", ENI, "--duration", "1s", "--no-rt"], timeout=60)
    assert p.returncode == 0, describe(p)
    assert "ENI cycle time 10000 us; cycling at 10000 us" in p.stdout, p.stdout
    assert "SYNC0 every 10000 us" in p.stdout, p.stdout
    assert re.search(r"^t=\S+ cycles \d+: domain 0 complete \(WKC 13/13\)", p.stdout, re.M), p.stdout


def test_sim_eni_uses_esi_devices_from_the_library(ecat, veth, tmp_path):
    """`ecat eni` of an ESI-built network, simulated by `ecat sim --eni --esi-dir`: every
    slave becomes its ESI device (said per slave at startup), and `ecat run --eni` of it
    reaches OP over the veth pair with the ENI's working counter."""
    esi = REPO / "testdata" / "esi"
    net = tmp_path / "cfg-esi.toml"
    types = ["EK1100", "EL1004", "EL2008", "EL3102", "EL4102", "EL2889"]
    net.write_text(f'esi_dirs = ["{esi}"]\n' + "".join(f'\n[[subdevice]]\ntype = "{t}"\n' for t in types))
    eni = tmp_path / "cfg-esi.xml"
    p = run([ecat, "eni", "-i", f"sim:{net}", "-o", eni], timeout=60)
    assert p.returncode == 0, describe(p)
    wkc = re.search(r"expected WKC (\d+)", p.stdout)
    assert wkc, p.stdout
    sim = SimProcess(veth.exec_argv([str(ecat), "sim", "-i", veth.ns_if, "--eni", str(eni), "--esi-dir", str(esi)]))
    sim.start(expect_lines=1 + 2 * len(types))
    try:
        lines = [l for l in sim.lines if re.match(r"\s+slave \d+ ", l)]
        print("\n".join(lines))
        assert len(lines) == len(types), sim.lines
        for t, l in zip(types, lines):
            assert f"ESI device {t} " in l, l
        p = run([ecat, "run", "-i", veth.host_if, "--eni", eni, "--duration", "1s"], timeout=60)
    finally:
        sim.stop()
    assert p.returncode == 0, describe(p)
    assert re.search(rf"^all {len(types)} SubDevices in OP", p.stdout, re.M), p.stdout
    # The status line shows the last cycle of the 1 s run over veth: one frame of it held back
    # by the VM (late) reads incomplete there. So: the ENI's WKC is the one expected, and only
    # cycles with a late frame may lack it (a wrong WKC would be short in every cycle).
    st = ([None] + list(re.finditer(r"domain 0 (\w+) \(WKC (\d+)/(\d+)\);.* lost (\d+) late (\d+)", p.stdout)))[-1]
    assert st and st[3] == wkc.group(1), p.stdout
    assert st[1] == "complete" or int(st[5]) > 0, p.stdout
    nc = re.search(r"domain cycles not complete while all SubDevices were in OP: (\d+)", p.stdout)
    assert nc and int(nc[1]) <= int(st[5]), p.stdout
