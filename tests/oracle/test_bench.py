"""`ecat bench --seconds 1`: every row of the table is filled and the JSON parses.

No timing assertions (ARCHITECTURE §8 item 6): the bench reports ratios, this test only
checks that it measured something in every row. The ethercrab row may say "not available"
only when cargo is missing (it builds the bench-only crate bench/ethercrab-peer)."""

from __future__ import annotations

import json
import re
import shutil

import netns
from helpers import describe, need, run

ROWS = [
    "floor echo",
    "floor echo busy",
    "bare timer",
    "ecat raw",
    "ecat raw busy",
    "ecat mmap",
    "ecat mmap busy",
    "ecat xdp",
    "ecat xdp busy",
    "ethercrab",
]


def test_bench_fills_every_row(ecat, tmp_path):
    need(netns.unavailable_reason())
    j = tmp_path / "bench.json"
    # The first run may build ethercrab (release) before measuring.
    p = run([ecat, "bench", "--seconds", "1", "--json", j], timeout=900)
    assert p.returncode == 0, describe(p)
    out = p.stdout
    have_cargo = shutil.which("cargo") is not None
    for name in ROWS:
        m = re.search(rf"^{re.escape(name)} +(\S.*)$", out, re.M)
        assert m, f"no row '{name}':\n{out}"
        line = m[1]
        if name == "ethercrab" and not have_cargo:
            assert "not available" in line, line
            continue
        assert "not available" not in line, f"row '{name}' did not run: {line}"
        # At least one figure of the form p50/p99/max.
        assert re.search(r"\d+\.\d/\d+\.\d/\d+", line), f"row '{name}' has no figures: {line}"
    fig = json.loads(j.read_text())
    names = [r["name"] for r in fig["rows"]]
    assert names == ROWS, names
    for r in fig["rows"]:
        if r["name"] == "ethercrab" and not have_cargo:
            continue
        assert r["available"], r
        assert r["cycles"] > 0, r
        assert r["wake_latency"] is not None, r
    assert fig["best_link"] in ROWS
    assert "PerfMsmt 'Task Duration'" in out, out
