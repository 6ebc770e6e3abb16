"""`ecat doctor`: runs anywhere, exits 0, and tells the truth about this host.

This machine runs a PREEMPT_DYNAMIC kernel without PREEMPT_RT: doctor must say
so (MISSING, with the fix). The expectation comes from the kernel itself
(`uname -v`, /sys/kernel/realtime), not from our code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers import describe, run

KEYS = {
    "preempt_rt", "cpuidle", "cpufreq", "isolcpus", "irq_affinity", "rt_throttling",
    "memlock", "sched_fifo", "raw_socket", "timer_slack", "thp", "swap",
}


def kernel_is_rt() -> bool:
    rt = Path("/sys/kernel/realtime")
    if rt.exists() and rt.read_text().strip() == "1":
        return True
    return "PREEMPT_RT" in os.uname().version.split()


def test_doctor_text(ecat):
    p = run([ecat, "doctor"])
    assert p.returncode == 0, describe(p)
    print(p.stdout)
    line = next(l for l in p.stdout.splitlines() if "Kernel preemption model" in l)
    if kernel_is_rt():
        assert line.startswith("OK"), p.stdout
    else:
        assert line.startswith("MISSING"), p.stdout
        assert "not a PREEMPT_RT kernel" in line
        fix = p.stdout.split(line, 1)[1].lstrip("\n").splitlines()[0]
        assert fix.strip().startswith("fix:") and "PREEMPT_RT" in fix, p.stdout
    assert p.stdout.rstrip().splitlines()[-1].startswith("--- ")


def test_doctor_json(ecat):
    iface = next((i for i in os.listdir("/sys/class/net") if i != "lo"), None)
    argv = [ecat, "doctor", "--json"] + (["-i", iface] if iface else [])
    p = run(argv)
    assert p.returncode == 0, describe(p)
    doc = json.loads(p.stdout)
    f = {x["key"]: x for x in doc["findings"]}
    assert KEYS <= set(f), sorted(f)
    assert all(x["status"] in ("OK", "WARN", "MISSING", "INFO") for x in f.values())
    assert all(x["fix"] for x in f.values() if x["status"] in ("WARN", "MISSING"))
    want = "OK" if kernel_is_rt() else "MISSING"
    assert f["preempt_rt"]["status"] == want, f["preempt_rt"]
    # Facts of this host, read independently.
    rt_runtime = Path("/proc/sys/kernel/sched_rt_runtime_us").read_text().strip()
    assert f["rt_throttling"]["status"] == ("OK" if rt_runtime == "-1" else "WARN")
    swaps = Path("/proc/swaps").read_text().strip().splitlines()[1:]
    assert f["swap"]["status"] == ("WARN" if swaps else "OK")
    if os.geteuid() == 0:
        assert f["raw_socket"]["status"] == "OK"
        assert f["sched_fifo"]["status"] == "OK"
    s = doc["summary"]
    assert sum(s.values()) == len(doc["findings"])
