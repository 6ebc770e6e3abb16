"""`ecat` from the outside: the same scan through the in-process simulator and
through a real socket, Wireshark's verdict on the frames we put on the wire, and
what a user sees after a mistake (one clear sentence, never a panic)."""

from __future__ import annotations

import json
import os
import random
import re

from helpers import (
    TsharkCapture,
    analyze_capture,
    describe,
    run,
    subdevices_from_json,
)

# Fields of `ecat slaves --json` that may differ between the in-process link
# and a veth pair (timings, link names); everything else must be identical.
VOLATILE = re.compile(r"time|delay|rtt|round_?trip|latency|duration|link|iface|interface|clock|dc_", re.I)


def _stable(entry):
    if isinstance(entry, dict):
        return {k: _stable(v) for k, v in entry.items() if not VOLATILE.search(k)}
    if isinstance(entry, list):
        return [_stable(v) for v in entry]
    return entry


def _no_panic(p):
    text = p.stdout + p.stderr
    assert "panicked" not in text and "RUST_BACKTRACE" not in text, describe(p)


# --------------------------------------------------------------------------
# Same answers through the in-process link and through a veth pair
# --------------------------------------------------------------------------


def test_slaves_same_through_sim_and_veth(ecat, veth, ecat_sim):
    via_sim = run([ecat, "slaves", "--json", "-i", "sim:io"])
    assert via_sim.returncode == 0, describe(via_sim)
    sim = ecat_sim("io")
    via_veth = run([ecat, "slaves", "--json", "-i", veth.host_if])
    assert via_veth.returncode == 0, describe(via_veth) + "\nsim stderr:\n" + sim.stderr_text()

    a, b = subdevices_from_json(via_sim.stdout), subdevices_from_json(via_veth.stdout)
    assert len(a) == 5, a
    assert a == b, f"in-process:\n{a}\nveth:\n{b}"
    # And the whole document, less fields that legitimately differ.
    assert _stable(json.loads(via_sim.stdout)) == _stable(json.loads(via_veth.stdout))


def test_tshark_decodes_our_frames(ecat, veth, ecat_sim, tshark, tmp_path):
    sim = ecat_sim("io")
    pcap = tmp_path / "ecat-slaves.pcapng"
    # Captured on the master's end. Frames sent with PACKET_QDISC_BYPASS skip the
    # capture taps on the way out, but their returns from the simulator are seen.
    cap = TsharkCapture(tshark, veth.host_if, pcap).start()
    try:
        p = run([ecat, "slaves", "-v", "-i", veth.host_if])
    finally:
        cap.stop()
    assert p.returncode == 0, describe(p) + "\nsim stderr:\n" + sim.stderr_text()
    rep = analyze_capture(tshark, pcap)
    print(rep.summary())
    assert rep.ecat_frames > 0, rep.summary() + "\n" + cap.stderr_text()
    assert rep.malformed_frames == [], rep.summary()
    assert rep.ecat_problems() == [], rep.summary()


def test_sim_on_two_threads_serves_the_same_network_in_op(ecat, veth, ecat_sim, tmp_path):
    """`ecat sim --threads 2` runs the second half of the line on a second thread; a
    MainDevice over the veth pair sees the same SubDevices as in-process, brings them to OP
    and cycles with complete process data, and the simulator says how it split the line."""
    pin = ["--cpus", "0,1"] if (os.cpu_count() or 1) >= 2 else []
    sim = ecat_sim("io20", extra=["--threads", "2", *pin])
    split = "ecat sim: two threads, SubDevices 0-9 on this one, 10-19 on the second"
    assert split + (" (CPUs 0 and 1)" if pin else "") in sim.lines, sim.lines
    via_sim = run([ecat, "slaves", "--json", "-i", "sim:io20"])
    via_veth = run([ecat, "slaves", "--json", "-i", veth.host_if])
    assert via_veth.returncode == 0, describe(via_veth) + "\nsim stderr:\n" + sim.stderr_text()
    assert _stable(json.loads(via_sim.stdout)) == _stable(json.loads(via_veth.stdout))
    j = tmp_path / "run.json"
    p = run([ecat, "run", "-i", veth.host_if, "--cycle", "1ms", "--duration", "3s", "--json", j], timeout=90)
    assert p.returncode == 0, describe(p) + "\nsim stderr:\n" + sim.stderr_text()
    _no_panic(p)
    assert re.search(r"^all 20 SubDevices in OP", p.stdout, re.M), p.stdout
    fig = json.loads(j.read_text())
    f = fig["frames"]
    print(json.dumps({k: fig[k] for k in ("cycles", "domain_incomplete_cycles", "frames")}))
    assert fig["cycles"] > 2000, fig["cycles"]
    # As over one thread: only frames that came back late may leave a cycle incomplete.
    assert f["lost"] - f["late"] - f["duplicated"] <= 0, f
    assert fig["domain_incomplete_cycles"] <= f["late"] + f["duplicated"], fig
    sim.stop()
    tail = sim.drain_lines()
    assert any("frames answered, 0 dropped" in line for line in tail), tail


def test_sim_refuses_a_cpu_that_does_not_exist(ecat):
    p = run([ecat, "sim", "-i", "lo", "-n", "io", "--cpus", "0,4095"])
    assert p.returncode != 0
    _no_panic(p)
    assert "CPU 4095 does not exist" in p.stderr, describe(p)


def test_sim_refuses_two_threads_with_a_backup_port(ecat):
    p = run([ecat, "sim", "-i", "lo", "-n", "ring8", "--backup", "lo2", "--threads", "2"])
    assert p.returncode != 0
    _no_panic(p)
    assert "--threads" in p.stderr and "--backup" in p.stderr, describe(p)


# --------------------------------------------------------------------------
# Bad input (no root needed)
# --------------------------------------------------------------------------


def test_unknown_interface_is_named_with_alternatives(ecat):
    p = run([ecat, "slaves", "-i", "nosuchif0"], timeout=30)
    assert p.returncode != 0, describe(p)
    _no_panic(p)
    text = p.stdout + p.stderr
    assert "nosuchif0" in text, describe(p)
    assert re.search(r"\blo\b", text), "should list the interfaces that exist\n" + describe(p)


def test_missing_network_file(ecat):
    p = run([ecat, "slaves", "-i", "sim:/nonexistent.toml"], timeout=30)
    assert p.returncode != 0, describe(p)
    _no_panic(p)
    assert "nonexistent.toml" in p.stdout + p.stderr, describe(p)


def test_broken_network_file_names_the_line(ecat, tmp_path):
    net = tmp_path / "broken.toml"
    net.write_text('# a network with a typo\n[[subdevice]]\nmodel = "EL9999X"\n')
    p = run([ecat, "slaves", "-i", f"sim:{net}"], timeout=30)
    assert p.returncode != 0, describe(p)
    _no_panic(p)
    text = p.stdout + p.stderr
    assert re.search(r"broken\.toml:3\b|line 3\b", text), "should point at broken.toml:3\n" + describe(p)
    assert "EL9999X" in text, describe(p)


def test_garbage_sii_file_is_refused(ecat, tmp_path):
    sii = tmp_path / "garbage.bin"
    sii.write_bytes(random.Random(4242).randbytes(512))
    net = tmp_path / "garbage.toml"
    net.write_text(f'[[subdevice]]\nsii = "{sii}"\n')
    p = run([ecat, "slaves", "-i", f"sim:{net}"], timeout=30)
    assert p.returncode != 0, describe(p)
    _no_panic(p)
    text = p.stdout + p.stderr
    assert "garbage.bin" in text or "garbage.toml" in text, describe(p)
    # A reason, not just a failure: more than the file name on stderr.
    assert len(p.stderr.strip()) > len(str(sii)), describe(p)
