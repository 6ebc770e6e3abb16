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
