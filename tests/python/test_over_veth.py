"""The package over a real socket: pysoem-style scripts against `ecat sim` in a network
namespace (a veth pair), and a simulated network served from Python on one end of a veth
pair with the MainDevice on the other. Needs root; skips cleanly otherwise. Names are
unique per run and everything is removed afterwards."""

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ecat
import ecat.sim

ORACLE = Path(__file__).parents[1] / "oracle"
sys.path.insert(0, str(ORACLE))
import netns  # noqa: E402  (tests/oracle's veth + namespace helper)
from helpers import SimProcess  # noqa: E402

REPO = Path(__file__).parents[2]


def ecat_bin() -> Path:
    p = Path(os.environ.get("ECAT_BIN") or REPO / "target" / "release" / "ecat")
    if not (p.is_file() and os.access(p, os.X_OK)):
        pytest.skip(f"{p} not built (cargo build --release -p ecat-cli)")
    return p


@pytest.fixture
def veth_ns():
    why = netns.unavailable_reason()
    if why:
        pytest.skip(why)
    v = netns.VethNs()
    v.create()
    try:
        yield v
    finally:
        v.destroy()


@pytest.fixture
def veth_pair():
    """A veth pair in this namespace: (served end, MainDevice end)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create a veth pair (run as root, as CI does)")
    tag = f"{os.getpid() % 1000}{secrets.token_hex(2)}"
    a, b = f"epa{tag}", f"epb{tag}"
    ip = lambda *args: subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)  # noqa: E731
    try:
        ip("link", "add", a, "type", "veth", "peer", "name", b)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"cannot create a veth pair: {e}")
    try:
        for i in (a, b):
            subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{i}.disable_ipv6=1"], capture_output=True)
            ip("link", "set", i, "up")
        yield a, b
    finally:
        subprocess.run(["ip", "link", "del", a], capture_output=True)


def test_pysoem_scripts_against_ecat_sim_over_veth(veth_ns, run_script):
    sim = SimProcess(veth_ns.exec_argv([str(ecat_bin()), "sim", "-i", veth_ns.ns_if, "-n", "io"]))
    sim.start()
    try:
        out = run_script("scan_and_print.py", veth_ns.host_if)
        assert out.count("Found Device") == 5
        out = run_script("cyclic_io.py", veth_ns.host_if)
        assert "all slaves in OP" in out and "wkc errors 0" in out
    finally:
        sim.stop()


def test_network_served_from_python_over_veth(veth_pair):
    served, master = veth_pair
    net = ecat.sim.Network("io", virtual_time=False)
    net.serve(served)
    try:
        with ecat.MainDevice(master) as md:
            assert [s.order for s in md.scan()] == ["EK1100", "EL2008", "EL1018", "EL4132", "EL3102"]
            rt = md.activate(cycle="1ms", realtime=False)
            rt.subdevice(1).outputs["Channel 2"] = 1
            net.set_inputs(2, b"\x07")
            deadline = time.time() + 5
            while (net.outputs(1) != b"\x02" or bytes(rt.subdevice(2).inputs.raw) != b"\x07") and time.time() < deadline:
                time.sleep(0.01)
            assert net.outputs(1) == b"\x02"
            assert bytes(rt.subdevice(2).inputs.raw) == b"\x07"
            time.sleep(0.3)  # figures are copied out every 100 ms
            assert rt.perf()["round_trip"]["count"] > 0
    finally:
        net.stop_serving()
