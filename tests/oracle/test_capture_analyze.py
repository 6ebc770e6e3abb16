"""`ecat run --capture` and `ecat analyze`: the wire agrees with the MainDevice.

A 5 s run on the in-process simulated network (sim:io, no root needed) records
every frame to a pcap file. `ecat analyze` on that file alone must find the same
number of cycles and the same frame loss as the run counted itself, and
Wireshark's dissector must decode the file without a malformed packet. A second
run injects seeded faults (dropped, delayed and duplicated returns) so the loss
compared is not just 0 == 0, and writes pcapng (direction recorded per frame).

What is compared: the run's `--json` file is written when the measurement ends
(`cycles` = cycles of the measured loop, `frames.sent/lost` including bring-up);
the capture also holds the bring-up before it and the return to INIT after it,
so the run prints one more line after stopping:
  "whole run incl. bring-up and stop: N cycles; frames sent S received R lost L ..."
`ecat analyze` must report exactly N cycles, S frames sent and L lost; and the
JSON figures must fit inside (the capture holds at least as many cycles, the
difference being the few bring-up and stop cycles).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers import analyze_capture, describe, run

WHOLE = re.compile(
    r"whole run incl\. bring-up and stop: (\d+) cycles; frames sent (\d+) received (\d+) "
    r"lost (\d+) late (\d+) duplicated (\d+) corrupted (\d+)"
)


def run_and_analyze(ecat: Path, tmp_path: Path, name: str, duration: str, extra: list[str]):
    cap = tmp_path / name
    js = tmp_path / "run.json"
    p = run(
        [ecat, "run", "-i", "sim:io", "--duration", duration, "--capture", cap, "--json", js, *extra],
        timeout=120,
    )
    assert p.returncode == 0, describe(p)
    m = WHOLE.search(p.stdout)
    assert m, "no whole-run line\n" + describe(p)
    whole = dict(
        zip(["cycles", "sent", "received", "lost", "late", "duplicated", "corrupted"], map(int, m.groups()))
    )
    runj = json.loads(js.read_text())
    a = run([ecat, "analyze", "--json", cap], timeout=120)
    assert a.returncode == 0, describe(a)
    rep = json.loads(a.stdout)
    t = run([ecat, "analyze", cap], timeout=120)
    assert t.returncode == 0, describe(t)
    return cap, p, whole, runj, rep, t.stdout


def check_agreement(whole, runj, rep, text):
    cyc = rep["cyclic"]
    assert cyc is not None, text
    assert cyc["ours"], text
    # Exactly what the MainDevice counted over the whole run.
    assert cyc["cycles"] == whole["cycles"], text
    assert cyc["frames"]["sent"] == whole["sent"], text
    assert cyc["frames"]["returned"] == whole["received"], text
    assert cyc["frames"]["lost"] == whole["lost"], text
    assert cyc["frames"]["late"] == whole["late"], text
    assert cyc["frames"]["repeated"] == whole["duplicated"], text
    assert cyc["tag_gaps"] == 0, text
    # The --json figures of the measured part fit inside.
    assert runj["cycles"] <= cyc["cycles"] <= runj["cycles"] + 200, (runj["cycles"], text)
    assert runj["frames"]["sent"] <= cyc["frames"]["sent"], text
    assert runj["frames"]["lost"] <= cyc["frames"]["lost"], text
    # The interval of a 1 ms cycle, as the wire saw it.
    iv = cyc["interval"]
    assert iv["count"] == cyc["cycles"] - 1
    assert 900 <= iv["p50_us"] <= 1100, text
    assert "PerfMsmt 'Frame Interval' (min/avg/max) [usec]:" in text
    assert f"cycles {whole['cycles']}" in text


def test_run_capture_matches_run(ecat, tmp_path, tshark):
    cap, p, whole, runj, rep, text = run_and_analyze(ecat, tmp_path, "f.pcap", "5s", [])
    print(text)
    check_agreement(whole, runj, rep, text)
    assert whole["lost"] == 0 and runj["frames"]["lost"] == 0
    assert rep["format"].startswith("pcap (nanosecond")
    assert rep["malformed"] == 0 and rep["other_frames"] == 0
    assert rep["tx_frames"] == rep["rx_frames"]
    # Wireshark reads it: every frame EtherCAT, none malformed.
    w = analyze_capture(tshark, cap)
    print(w.summary())
    assert w.frames == rep["packets"] > 0
    assert w.ecat_frames == w.frames, w.summary()
    assert w.malformed_frames == [], w.summary()


def test_faulty_run_pcapng_matches_run(ecat, tmp_path, tshark):
    faults = "rx-drop=0.01,rx-delay=0.004,delay-time=2500us,rx-dup=0.003,seed=11"
    cap, p, whole, runj, rep, text = run_and_analyze(
        ecat, tmp_path, "g.pcapng", "3s", ["--faults", faults]
    )
    print(text)
    assert "faults injected" in p.stdout, describe(p)
    assert whole["lost"] > 0, "the faults should have cost frames\n" + describe(p)
    check_agreement(whole, runj, rep, text)
    assert rep["direction"] == "recorded in the capture file"
    w = analyze_capture(tshark, cap)
    assert w.ecat_frames == w.frames == rep["packets"], w.summary()
    assert w.malformed_frames == [], w.summary()


@pytest.mark.parametrize(
    "name", ["replay-dc.pcapng", "replay-ek1100-el2828-el2889.pcapng", "wireshark-sample-ethercat.cap"]
)
def test_analyze_foreign_captures(ecat, name):
    from helpers import TESTDATA

    a = run([ecat, "analyze", "--json", TESTDATA / "captures" / name])
    assert a.returncode == 0, describe(a)
    rep = json.loads(a.stdout)
    assert rep["cyclic"] and rep["cyclic"]["cycles"] > 10, a.stdout
    assert rep["cyclic"]["frames"]["lost"] == 0, a.stdout


def test_analyze_refuses_garbage(ecat, tmp_path):
    bad = tmp_path / "x.pcap"
    bad.write_bytes(b"this is not a capture file at all")
    a = run([ecat, "analyze", bad])
    assert a.returncode == 1, describe(a)
    assert a.stderr.startswith("ecat: ") and "not a pcap or pcapng file" in a.stderr, describe(a)
    assert "panicked" not in a.stderr
