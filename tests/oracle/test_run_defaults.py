"""`ecat run`'s real-time defaults and input checks.

As root with no options it takes SCHED_FIFO at priority 80, locks memory, cuts the timer
slack and holds /dev/cpu_dma_latency at 0 while cycling (CPUs out of deep idle states), and
says so on one line; `--no-latency-hold` leaves the hold out, `--no-rt` leaves only the timer
slack; as an ordinary user it says which setting is missing (the hold in one sentence on
stderr, not an error). Impossible numbers are refused with one sentence and a
non-zero exit before anything starts (no scan line is printed)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from helpers import describe, run


def _rt_line(out: str) -> str:
    lines = [l for l in out.splitlines() if l.startswith("real-time: ")]
    assert len(lines) == 1, out
    return lines[0]


def test_default_run_is_real_time_when_permitted(ecat):
    if os.geteuid() != 0:
        pytest.skip("needs root to be permitted SCHED_FIFO and mlockall")
    p = run([ecat, "run", "--duration", "1s"], timeout=60)
    assert p.returncode == 0, describe(p)
    assert _rt_line(p.stdout) == (
        "real-time: SCHED_FIFO priority 80, memory locked, timer slack 1 ns, "
        "idle states held off (cpu_dma_latency 0)"
    )


def test_the_latency_hold_is_in_place_while_cycling_and_opts_out(ecat):
    if os.geteuid() != 0 or not os.path.exists("/dev/cpu_dma_latency"):
        pytest.skip("needs root and /dev/cpu_dma_latency to hold the CPU latency")
    p = subprocess.Popen([ecat, "run", "-i", "sim:io", "--duration", "3s"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        held = False
        for line in p.stdout:
            if line.startswith("real-time: "):
                assert "idle states held off (cpu_dma_latency 0)" in line, line
                fds = os.listdir(f"/proc/{p.pid}/fd")
                held = any(os.readlink(f"/proc/{p.pid}/fd/{fd}") == "/dev/cpu_dma_latency"
                           for fd in fds)
                break
        assert held, "ecat run does not hold /dev/cpu_dma_latency open while cycling"
        p.communicate(timeout=60)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0
    q = run([ecat, "run", "-i", "sim:io", "--duration", "1s", "--no-latency-hold"], timeout=60)
    assert q.returncode == 0, describe(q)
    assert _rt_line(q.stdout) == "real-time: SCHED_FIFO priority 80, memory locked, timer slack 1 ns"


def test_no_rt_opts_out_but_keeps_the_timer_slack(ecat):
    p = run([ecat, "run", "--duration", "1s", "--no-rt"], timeout=60)
    assert p.returncode == 0, describe(p)
    assert _rt_line(p.stdout) == "real-time: timer slack 1 ns"


def test_unprivileged_run_says_what_would_help(ecat, tmp_path):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to drop to an ordinary user")
    exe = tmp_path / "ecat"
    shutil.copy(ecat, exe)
    os.chmod(tmp_path, 0o755)
    p = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
         str(exe), "run", "--duration", "1s"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert p.returncode == 0, describe(p)
    line = _rt_line(p.stdout)
    assert "SCHED_OTHER" in line and "CAP_SYS_NICE" in line, line
    assert line.endswith("timer slack 1 ns"), line
    notes = [l for l in p.stderr.splitlines() if "cpu_dma_latency" in l]
    assert len(notes) == 1 and "run as root" in notes[0] and "--no-latency-hold" in notes[0], describe(p)


@pytest.mark.parametrize(
    "args, says",
    [
        (["--cycle", "0"], "smallest accepted cycle is 20 us"),
        (["--cycle", "1ns"], "smallest accepted cycle is 20 us"),
        (["--cycle", "-1ms"], "negative"),
        (["--duration", "-5s"], "negative"),
        (["--duration", "100000h"], "more than a year"),
        (["--duration", "1e999s"], "not a time unit"),
        (["--report-every", "1ms"], "at least 100ms"),
        (["--busy-wait", "2ms"], "does not fit in a cycle"),
        (["--priority", "0"], "out of range"),
        (["--cpu", "4096"], "does not exist"),
    ],
)
def test_impossible_numbers_are_refused_before_anything_starts(ecat, args, says):
    p = run([ecat, "run", *args], timeout=30)
    assert p.returncode != 0, describe(p)
    assert says in p.stderr, describe(p)
    assert "scan:" not in p.stdout and "PerfMsmt" not in p.stdout, describe(p)
    assert len([l for l in p.stderr.splitlines() if l.strip() and not l.startswith(("Usage:", "For more"))]) == 1, describe(p)
