"""`ecat bench --seconds 0.3 --rounds 2`: every row of both peers' tables is filled (every
ecat row with its own echo floor), the wake-up comparison of `ecat run`'s settings is printed
with a bare timer under each setting, and the JSON holds the medians of medians with every
round's own figures; the best link is the one with the lowest round trip over its own floor,
and each table says how often its peer was preempted.

No timing assertions (ARCHITECTURE §8 item 6): the bench reports ratios, this test only
checks that it measured something in every row, in every round. The ethercrab row may say
"not available" only when cargo is missing (it builds the bench-only crate
bench/ethercrab-peer)."""

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
ECAT_ROWS = [r for r in ROWS if r.startswith("ecat ")]
WAKE_ROWS = ["ecat run (default)", "ecat run --no-rt", "plain SCHED_OTHER"]
RATIOS = ["rtt/floor", "wake/timer", "task/crab", "back/crab"]
ROUNDS = 2
# p50±spread p99/max, in µs.
FIGURE = r"\d+\.\d±\d+% \d+\.\d/\d+"


def _section(out: str, start: str, end: str | None) -> str:
    i = out.index(start)
    j = out.index(end, i) if end else len(out)
    return out[i:j]


def test_bench_fills_every_row_in_every_round(ecat, tmp_path):
    need(netns.unavailable_reason())
    j = tmp_path / "bench.json"
    # The first run may build ethercrab (release) before measuring.
    p = run(
        [ecat, "bench", "--seconds", "0.3", "--rounds", str(ROUNDS), "--json", j],
        timeout=900,
    )
    assert p.returncode == 0, describe(p)
    out = p.stdout
    have_crab = shutil.which("cargo") is not None

    # Rounds and the load average with each.
    for n in range(1, ROUNDS + 1):
        assert re.search(rf"^round {n}/{ROUNDS}: \d+ rows in .* load average \d", out, re.M), out
    # The legend names every ratio, one line each.
    for name in RATIOS:
        assert re.search(rf"^  {re.escape(name)} += \S.* / \S", out, re.M), f"{name}:\n{out}"

    # One table per peer, every row filled.
    blocking = _section(out, "== blocking peer", "== busy peer")
    busy = _section(out, "== busy peer", "wake-up latency of ecat run's settings")
    for table in (blocking, busy):
        assert "wake-up to data back" in table and "back/crab" in table, table
        for name in ROWS:
            m = re.search(rf"^{re.escape(name)} +(\S.*)$", table, re.M)
            assert m, f"no row '{name}':\n{table}"
            line = m[1]
            if name == "ethercrab" and not have_crab:
                assert "not available" in line, line
                continue
            assert "not available" not in line, f"row '{name}' did not run: {line}"
            assert re.search(FIGURE, line), f"row '{name}' has no figures: {line}"
            if name.startswith("ecat "):
                # round trip, its own floor, wake-up, task and data back all filled
                assert len(re.findall(FIGURE, line)) == 5, line
                if have_crab:
                    assert re.search(r"\d\.\d\dx +\d\.\d\dx$", line), f"no */crab ratios: {line}"
        # How often the peer behind the table was preempted while it served the rows.
        assert re.search(r"^peer preempted \d+\.\d times per second \(\d+ ", table, re.M), table
    assert "PerfMsmt 'Wake-up to Data Back'" in out, out
    assert "PerfMsmt 'Task Duration'" in out, out

    # The wake-up comparison of ecat run's settings: every setting's cycle, its bare timer
    # and their ratio round by round.
    wake = _section(out, "wake-up latency of ecat run's settings", "targets,")
    rounds = r"\d+\.\d\d \(" + ", ".join([r"\d+\.\d\d"] * ROUNDS) + r"\)"
    for name in WAKE_ROWS:
        m = re.search(rf"^  {re.escape(name)} +{FIGURE} +{FIGURE} +{rounds}", wake, re.M)
        assert m, f"no wake-up row '{name}':\n{wake}"
    assert "SCHED_FIFO priority 80" in wake, wake
    assert re.search(r"^  against the default's bare timer .*plain SCHED_OTHER \d", wake, re.M), wake
    assert re.search(rf"^  the bench's bare timer \(.*\): {FIGURE}", wake, re.M), wake
    assert re.search(
        r"wake-up latency of ecat run's defaults vs a bare timer with the same settings: \d", out
    ), out

    fig = json.loads(j.read_text())
    assert fig["rounds"] == ROUNDS
    assert fig["load_average"]["start"] is not None
    assert len(fig["load_average"]["after_each_round"]) == ROUNDS
    assert [p["peer"] for p in fig["peers"]] == ["block", "busy"]
    for peer in fig["peers"]:
        names = [r["name"] for r in peer["rows"]]
        assert names == ROWS, names
        assert peer["best_link"] in ECAT_ROWS
        # The best link is the one with the lowest round trip over its own floor.
        by_name = {r["name"]: r for r in peer["rows"]}
        best = by_name[peer["best_link"]]["ratios"]["round_trip_vs_floor"]
        assert best == min(by_name[n]["ratios"]["round_trip_vs_floor"] for n in ECAT_ROWS), peer
        assert peer["peer_preempted_per_s"] >= 0, peer
        for r in peer["rows"]:
            if r["name"] == "ethercrab" and not have_crab:
                continue
            assert r["available"], r
            assert r["rounds_ran"] >= 1 and r["cycles"] > 0, r
            w = r["wake_latency"]
            assert w["p50_us"] > 0 and w["p50_min_us"] <= w["p50_us"] <= w["p50_max_us"], w
            assert len(w["per_round"]) == ROUNDS, w
            assert set(r["ratios"]["per_round"]) == {
                "round_trip_vs_floor",
                "wake_vs_bare_timer",
                "task_vs_ethercrab_data_back",
                "data_back_vs_ethercrab_data_back",
            }, r["ratios"]
            if r["name"].startswith("ecat "):
                for k in ("round_trip", "task_duration", "wake_to_data_back"):
                    assert r[k] is not None and r[k]["p50_us"] > 0, (k, r)
                    assert len(r[k]["per_round"]) == ROUNDS, (k, r)
                assert "wake_to_data_back" in r["perf"], r["perf"].keys()
                assert r["ratios"]["round_trip_vs_floor"] is not None, r
                assert r["own_floor_round_trip"]["p50_us"] > 0, r
                if have_crab:
                    assert r["ratios"]["data_back_vs_ethercrab_data_back"] is not None, r
                    assert r["ratios"]["task_vs_ethercrab_data_back"] is not None, r
            if r["name"] == "ethercrab":
                assert r["wake_to_data_back"]["p50_us"] > 0, r
    # The first peer's table stays where readers of the one-table form look.
    assert [r["name"] for r in fig["rows"]] == ROWS

    wake = fig["wake"]
    assert [s["name"] for s in wake["settings"]] == WAKE_ROWS
    for s in wake["settings"]:
        for r in (s["cycle"], s["bare_timer_same_settings"]):
            assert r["available"] and r["wake_latency"]["p50_us"] > 0, r
            assert len(r["wake_latency"]["per_round"]) == ROUNDS, r
            assert r["note"], r
        assert len(s["cycle_vs_timer_per_round"]) == ROUNDS, s
        assert s["cycle_vs_timer"] is not None, s
    assert wake["bench_bare_timer"]["wake_latency"]["p50_us"] > 0
    assert wake["default_vs_bare_timer"] == wake["settings"][0]["cycle_vs_timer"]
    assert wake["target"] == 1.1
