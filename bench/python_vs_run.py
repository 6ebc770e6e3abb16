#!/usr/bin/env python3
"""Cycle figures of a Runtime started from Python next to `ecat run`'s, on the same network,
in one run (issue 13's benchmark; target: task duration within 1.1x of `ecat run`'s).

    .venv/bin/python bench/python_vs_run.py [--link sim:io] [--cycle 1ms] [--duration 5s]
                                            [--rounds 5] [--ecat target/release/ecat]
                                            [--no-rt] [--cpu N] [--python-loop 5s]

Like for like: the same link, cycle and real-time settings (both take ecat's defaults:
SCHED_FIFO 80, locked memory, 1 ns timer slack when permitted, or neither with --no-rt;
the settings each side reports are printed), DC chosen the same way (auto), and no
application work beyond what each must do (`ecat run --profile hold`; the Python Runtime
copies its process image to and from Python's buffers every cycle). Each round runs
`ecat run -i LINK --cycle C --duration D --json F` and, in the same process as this script,
`ecat.MainDevice(LINK).activate(cycle=C)` (the cycle in ecat's Rust thread, no Python code
in the loop) for the same time; the order alternates from round to round so a drift of the
machine's load hits both alike. Every run prints one row; the summary gives each figure's
median over the rounds with its spread (min..max of the runs' averages) and the ratio of
the medians, then the task duration ratio of every round.

Then, measured separately (not part of the comparison), a loop written in Python
(`rt.step()` plus one output write per cycle, paced with time.sleep): its cycle time and the
duration of each Python iteration.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ecat

REPO = Path(__file__).resolve().parents[1]
METRICS = ["cycle_time", "wake_latency", "task_duration", "job_receive", "job_app",
           "job_send_cyclic", "job_acyclic", "round_trip"]


def run_cli(a) -> tuple:
    """One `ecat run`: (figures, its real-time line)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "run.json"
        argv = [a.ecat, "run", "-i", a.link, "--cycle", a.cycle, "--duration", a.duration,
                "--profile", "hold", "--json", str(out)] + (["--no-rt"] if a.no_rt else [])
        argv += ["--cpu", str(a.cpu)] if a.cpu is not None else []
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"$ {' '.join(argv)}\nfailed (exit {p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
        rt_line = next((l for l in p.stdout.splitlines() if l.startswith("real-time:")), "real-time: ?")
        return json.loads(out.read_text())["figures"], rt_line.split(":", 1)[1].strip()


def run_python(a, seconds: float) -> tuple:
    """One Python-started Runtime: (figures, what its real-time setup did)."""
    with ecat.MainDevice(a.link) as md:
        md.scan()
        rt = md.activate(cycle=a.cycle, start=False)
        notes = rt.start(realtime=not a.no_rt, cpu=a.cpu)
        time.sleep(seconds)
        rt.stop()
        return rt.perf(), ", ".join(notes)


def row(f) -> str:
    s = f["task_duration"]
    c = f["cycle_time"]
    return (f"task avg {s['avg_us']:6.2f} p99 {s['p99_us']:6.1f} max {s['max_us']:7.1f} us | "
            f"cycle p99 {c['p99_us']:7.1f} max {c['max_us']:7.1f} us")


def python_loop(a, seconds: float) -> None:
    """A loop written in Python: rt.step() per cycle, paced by time.sleep."""
    period = ecat.parse_duration(a.cycle) / 1e9
    wake, work = [], []
    with ecat.MainDevice(a.link) as md:
        md.scan()
        rt = md.activate(cycle=a.cycle, start=False)
        out = rt.outputs if len(rt.outputs) else None
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

    def stats(xs):
        xs = sorted(x * 1e6 for x in xs)
        return f"{xs[0]:.1f}/{statistics.fmean(xs):.1f}/{xs[-1]:.1f} ({xs[int(len(xs) * 0.99) - 1]:.1f})"

    cycles = [b - a for a, b in zip(wake, wake[1:])]
    print(f"\nPython loop (rt.step() per cycle, {len(work)} cycles; measured apart), min/avg/max (p99) [us]:")
    print(f"  cycle time     {stats(cycles)}")
    print(f"  step duration  {stats(work)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--link", default="sim:io")
    ap.add_argument("--cycle", default="1ms")
    ap.add_argument("--duration", default="5s", help="per run")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ecat", default=os.environ.get("ECAT_BIN") or str(REPO / "target/release/ecat"))
    ap.add_argument("--no-rt", action="store_true", help="no SCHED_FIFO / locked memory for either")
    ap.add_argument("--cpu", type=int, help="pin both cycle threads to this CPU")
    ap.add_argument("--python-loop", default="5s", help="how long to run the Python loop (0: skip)")
    a = ap.parse_args()
    if not os.access(a.ecat, os.X_OK):
        print(f"{a.ecat} not found: build it with `cargo build --release -p ecat-cli` or give --ecat", file=sys.stderr)
        return 2
    if a.rounds < 1:
        print("--rounds must be at least 1", file=sys.stderr)
        return 2
    seconds = ecat.parse_duration(a.duration) / 1e9
    load0 = os.getloadavg()
    print(f"{a.link}, cycle {a.cycle}, {a.duration} per run, {a.rounds} rounds, order alternating; "
          f"load average {load0[0]:.1f} (this machine is shared: others build and test on it)")
    runs = {"ecat run": [], "Python": []}
    settings = {"ecat run": set(), "Python": set()}
    for r in range(a.rounds):
        order = ["ecat run", "Python"] if r % 2 == 0 else ["Python", "ecat run"]
        for who in order:
            f, rt_notes = run_cli(a) if who == "ecat run" else run_python(a, seconds)
            runs[who].append(f)
            settings[who].add(rt_notes)
            print(f"round {r + 1}  {who:<8}  {row(f)}", flush=True)
    for who, s in settings.items():
        print(f"real-time settings, {who}: {' / '.join(sorted(s))}")

    print(f"\n{'median over rounds [us]':<24} {'ecat run avg (spread)':>26}   {'Python avg (spread)':>26}   ratio")
    for m in METRICS:
        c = [f[m]["avg_us"] for f in runs["ecat run"] if f.get(m) and f[m]["count"]]
        q = [f[m]["avg_us"] for f in runs["Python"] if f.get(m) and f[m]["count"]]
        if not c or not q:
            continue
        mc, mq = statistics.median(c), statistics.median(q)
        cell = lambda med, xs: f"{med:.2f} ({min(xs):.2f}..{max(xs):.2f})"  # noqa: E731
        ratio = f"{mq / mc:.2f}x" if mc else "-"
        print(f"{m:<24} {cell(mc, c):>26}   {cell(mq, q):>26}   {ratio}")
    per_round = [q["task_duration"]["avg_us"] / c["task_duration"]["avg_us"]
                 for c, q in zip(runs["ecat run"], runs["Python"])]
    med = statistics.median(f["task_duration"]["avg_us"] for f in runs["Python"]) / statistics.median(
        f["task_duration"]["avg_us"] for f in runs["ecat run"])
    print(f"\ntask duration, Python Runtime / ecat run: {med:.2f}x (ratio of the medians; per round "
          f"{', '.join(f'{x:.2f}' for x in per_round)}); target within 1.1x: {'met' if med <= 1.1 else 'NOT met'}")
    print(f"load average at the start {load0[0]:.1f}, at the end {os.getloadavg()[0]:.1f}")

    loop = 0.0 if a.python_loop.strip() in ("0", "") else ecat.parse_duration(a.python_loop) / 1e9
    if loop > 0:
        python_loop(a, loop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
