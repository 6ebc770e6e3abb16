"""`ecat replay`: the command-line front of the capture replay, on the captures we ship.

The library's figures are asserted in crates/ecat/tests/replay_fidelity.rs; this checks the
binary: the text report, `--json` with the same figures, and one clear sentence (exit 1, no
backtrace) for a file that is no capture and for a network that does not exist.
"""

from __future__ import annotations

import json

from helpers import TESTDATA, describe, run

NET = TESTDATA / "networks" / "replay-ek1100-el2828-el2889.toml"


def test_replay_text_and_json_agree(ecat):
    cap = TESTDATA / "captures" / "replay-ek1100-el2828-el2889.pcapng"
    t = run([ecat, "replay", cap, "-n", NET], timeout=120)
    assert t.returncode == 0, describe(t)
    assert "fidelity: 100.00 %" in t.stdout, t.stdout
    j = run([ecat, "replay", cap, "-n", NET, "--json"], timeout=120)
    assert j.returncode == 0, describe(j)
    rep = json.loads(j.stdout)
    assert rep["answered"] == rep["requests"] > 1000
    assert rep["plain_equal"] == rep["plain"] > 1900
    assert rep["fidelity_percent"] == 100.0
    # What is left are DC time values, each group flagged as such.
    assert rep["groups"] and all(g["dc_time"] for g in rep["groups"])


def test_replay_bad_input_is_one_sentence(ecat, tmp_path):
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"not a capture at all")
    for argv in (
        [ecat, "replay", junk, "-n", NET],
        [ecat, "replay", TESTDATA / "captures" / "replay-dc.pcapng", "-n", tmp_path / "none.toml"],
    ):
        p = run(argv, timeout=60)
        assert p.returncode == 1, describe(p)
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ecat: "), describe(p)
        assert "panicked" not in p.stderr
