#!/usr/bin/env python3
"""Cycle figures of a Runtime started from Python next to `ecat run`'s, on the same network,
in one run (issue 13's benchmark).

    .venv/bin/python bench/python_vs_run.py [--link sim:io] [--cycle 1ms] [--duration 10s]
                                            [--ecat target/release/ecat] [--no-rt]

Runs `ecat run -i LINK --cycle C --duration D --json F` first, then the same cycle from
Python (`ecat.MainDevice(LINK).activate(cycle=C)`, the cycle in ecat's Rust thread, no Python
code in the loop) for the same time, and prints each figure side by side with the ratio of
the averages (target for task duration: within 1.1x). Then, measured separately, a loop
written in Python (`rt.step()` plus one output write per cycle, paced with time.sleep) for
the same time: its cycle time and the duration of each Python iteration.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ecat

REPO = Path(__file__).resolve().parents[1]
METRICS = ["cycle_time", "wake_latency", "task_duration", "job_receive", "job_app",
           "job_send_cyclic", "job_acyclic", "round_trip"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--link", default="sim:io")
    ap.add_argument("--cycle", default="1ms")
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--ecat", default=os.environ.get("ECAT_BIN") or str(REPO / "target/release/ecat"))
    ap.add_argument("--no-rt", action="store_true", help="no SCHED_FIFO / locked memory for either")
    a = ap.parse_args()
    if not os.access(a.ecat, os.X_OK):
        print(f"{a.ecat} not found: build it with `cargo build --release -p ecat-cli` or give --ecat", file=sys.stderr)
        return 2
    seconds = ecat.parse_duration(a.duration) / 1e9

    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "run.json"
        argv = [a.ecat, "run", "-i", a.link, "--cycle", a.cycle, "--duration", a.duration,
                "--profile", "counter", "--json", str(out)] + (["--no-rt"] if a.no_rt else [])
        print("$", " ".join(argv), flush=True)
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stdout[-2000:], p.stderr[-2000:], file=sys.stderr)
            return 1
        cli = json.loads(out.read_text())["figures"]

    print(f"$ python: ecat.MainDevice({a.link!r}).activate(cycle={a.cycle!r}) for {a.duration}", flush=True)
    with ecat.MainDevice(a.link) as md:
        md.scan()
        rt = md.activate(cycle=a.cycle, realtime=not a.no_rt)
        time.sleep(seconds)
        rt.stop()
        py = rt.perf()
        # Python code in the loop: step from Python, paced by time.sleep.
        period = ecat.parse_duration(a.cycle) / 1e9
        out = rt.subdevice(1).outputs.raw if len(rt.subdevice(1).outputs.raw) else None
        wake, work = [], []
        nxt = time.perf_counter() + period
        end = time.perf_counter() + seconds
        i = 0
        while time.perf_counter() < end:
            time.sleep(max(0.0, nxt - time.perf_counter()))
            t0 = time.perf_counter()
            wake.append(t0)
            if out is not None:
                out[0] = i & 0xFF
            rt.step()
            work.append(time.perf_counter() - t0)
            nxt += period
            i += 1

    print(f"\n{'figure [us]':<18} {'ecat run min/avg/max (p99)':>34}   {'Python Runtime min/avg/max (p99)':>34}   avg ratio")
    for m in METRICS:
        c, q = cli.get(m), py.get(m)
        if not c or not q or not c["count"] or not q["count"]:
            continue
        f = lambda s: f"{s['min_us']:.1f}/{s['avg_us']:.1f}/{s['max_us']:.1f} ({s['p99_us']:.1f})"  # noqa: E731
        ratio = q["avg_us"] / c["avg_us"] if c["avg_us"] else float("nan")
        print(f"{m:<18} {f(c):>34}   {f(q):>34}   {ratio:.2f}x")

    def stats(xs):
        xs = sorted(x * 1e6 for x in xs)
        return f"{xs[0]:.1f}/{sum(xs) / len(xs):.1f}/{xs[-1]:.1f} ({xs[int(len(xs) * 0.99) - 1]:.1f})"

    cycles = [b - a for a, b in zip(wake, wake[1:])]
    print(f"\nPython loop (rt.step() per cycle, {len(work)} cycles), min/avg/max (p99) [us]:")
    print(f"  cycle time     {stats(cycles)}")
    print(f"  step duration  {stats(work)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
