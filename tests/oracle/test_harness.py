"""The harness itself, independent of our Rust code: namespaces and veth pairs
come and go cleanly, SOEM's frames cross the pair, tshark captures them inside
the namespace and decodes them, and nothing but EtherCAT is on the wire."""

from __future__ import annotations

import subprocess

import pytest

import netns
from helpers import TsharkCapture, analyze_capture, need, soem_scan


def _exists_link(name: str, ns: str | None = None) -> bool:
    argv = ["ip"] + (["-n", ns] if ns else []) + ["link", "show", name]
    return subprocess.run(argv, capture_output=True).returncode == 0


def _namespaces() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def test_veth_netns_lifecycle():
    need(netns.unavailable_reason())
    v = netns.VethNs()
    assert max(map(len, (v.ns, v.host_if, v.ns_if))) <= 15
    with v:
        assert v.ns in _namespaces()
        assert _exists_link(v.host_if)
        assert not _exists_link(v.ns_if), "the namespace end must have left this namespace"
        assert _exists_link(v.ns_if, v.ns)
        up = subprocess.run(["ip", "-br", "link", "show", v.host_if], capture_output=True, text=True)
        assert " UP " in up.stdout, up.stdout
        with open(f"/proc/sys/net/ipv6/conf/{v.host_if}/disable_ipv6") as f:
            assert f.read().strip() == "1"
        inner = subprocess.run(
            v.exec_argv(["cat", f"/proc/sys/net/ipv6/conf/{v.ns_if}/disable_ipv6"]),
            capture_output=True,
            text=True,
        )
        assert inner.stdout.strip() == "1", inner
    assert v.ns not in _namespaces()
    assert not _exists_link(v.host_if)


def test_failed_setup_leaves_nothing_behind():
    need(netns.unavailable_reason())
    v = netns.VethNs()
    v.ns_if = "x" * 16  # too long for an interface name: `ip link add` fails
    with pytest.raises(netns.NetnsError):
        v.create()
    assert v.ns not in _namespaces()
    assert not _exists_link(v.host_if)


def test_soem_frames_cross_veth_and_decode(tshark, tmp_path):
    """Nothing answers on the far end, so SOEM finds no SubDevice, but its frames
    must arrive in the namespace, decode cleanly, and be the only traffic."""
    need(netns.unavailable_reason())
    pcap = tmp_path / "soem.pcapng"
    with netns.VethNs() as v:
        cap = TsharkCapture(tshark, v.ns_if, pcap, prefix=v.exec_argv([]), capture_filter=None)
        cap.start()
        try:
            result = soem_scan(v.host_if)
        finally:
            cap.stop()
    assert result["count"] <= 0, result
    rep = analyze_capture(tshark, pcap)
    print(rep.summary())
    assert rep.ecat_frames > 0, rep.summary() + "\n" + cap.stderr_text()
    assert rep.frames == rep.ecat_frames, "only EtherCAT on the link (IPv6 is off)\n" + rep.summary()
    assert rep.malformed_frames == [] and rep.ecat_problems() == [], rep.summary()


def test_soem_against_fake_sim(tshark, tmp_path):
    """The whole SOEM path (namespace, simulator startup detection, probe,
    capture) against fake_ecat.py, a minimal Python ESC stand-in loaded with the
    real SII dumps, so a failure against `ecat sim` is about `ecat sim`."""
    import sys

    from helpers import HERE, TESTDATA, SimProcess, sii_identity, sii_strings

    need(netns.unavailable_reason())
    pytest.importorskip("pysoem")
    paths = [TESTDATA / "sii" / f for f in ("ek1100-eeprom-dump.bin", "el2828.bin", "el2889.bin")]
    net = tmp_path / "net.toml"
    net.write_text("".join(f'[[subdevice]]\nsii = "{p}"\n' for p in paths))
    pcap = tmp_path / "fake.pcapng"
    with netns.VethNs() as v:
        sim = SimProcess(
            v.exec_argv([sys.executable, HERE / "fake_ecat.py", "sim", "-i", v.ns_if, "-n", net])
        )
        sim.start(expect_lines=3)
        try:
            cap = TsharkCapture(tshark, v.host_if, pcap).start()
            try:
                result = soem_scan(v.host_if, "preop")
            finally:
                cap.stop()
        finally:
            sim.stop()
    assert result["count"] == 3, result
    for s, p in zip(result["subdevices"], paths):
        assert s["name"] == sii_strings(p)[0]
        assert (s["man"], s["id"], s["rev"]) == sii_identity(p)
        assert s["state"] == 2, result  # PREOP
    rep = analyze_capture(tshark, pcap)
    print(rep.summary())
    assert rep.ecat_frames > 0 and rep.malformed_frames == [] and rep.ecat_problems() == [], rep.summary()
