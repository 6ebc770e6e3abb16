"""Bring a network to OP with SOEM (pysoem) in one of the usual bring-up patterns; print JSON.

    python soem_esm_probe.py IFACE MODE [--cycles N] [--watch SECONDS]

MODE:
  cycle-first    SAFE-OP, start process data, request OP while cycling (what SOEM's
                 simple_test does with its first outputs)
  request-first  SAFE-OP, request OP, then loop send/receive/state_check until OP (SOEM's
                 other common loop: outputs only start after the request)
  no-outputs     SAFE-OP, request OP and never send process data; poll AL status and code
                 of every SubDevice every 20 ms for --watch seconds and record when each
                 changed

After OP (the first two modes) N more cycles run. The WKC of every cycle from the OP request
on is recorded against SOEM's expected WKC (-1: no frame back within 10 ms). Runs in its own process so a crash in the C
library cannot take the test session down.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import pysoem


def cycle(m: pysoem.Master) -> int:
    for s in m.slaves:
        if len(s.output):
            s.output = bytes((b + 1) & 0xFF for b in s.output)
    m.send_processdata()
    # A generous receive timeout: on a busy machine a frame can take milliseconds.
    return m.receive_processdata(10_000)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("mode", choices=["cycle-first", "request-first", "no-outputs"])
    ap.add_argument("--cycles", type=int, default=500)
    ap.add_argument("--watch", type=float, default=2.0)
    args = ap.parse_args()

    m = pysoem.Master()
    m.open(args.iface)
    res: dict = {"mode": args.mode}
    try:
        res["count"] = m.config_init()
        m.config_map()
        res["expected_wkc"] = m.expected_wkc
        res["safeop"] = m.state_check(pysoem.SAFEOP_STATE, 2_000_000)
        wkcs: list[int] = []
        if args.mode == "cycle-first":
            for _ in range(10):
                cycle(m)
                time.sleep(0.001)
        t0 = time.monotonic()
        if args.mode == "no-outputs":
            m.state = pysoem.OP_STATE
            m.write_state()
            seen: list[list] = []
            last = None
            while time.monotonic() - t0 < args.watch:
                m.read_state()
                now = [(s.state, s.al_status) for s in m.slaves]
                if now != last:
                    seen.append([round(time.monotonic() - t0, 4), now])
                    last = now
                time.sleep(0.02)
            res["changes"] = seen
        else:
            m.state = pysoem.OP_STATE
            m.write_state()
            op = 0
            for _ in range(5000):
                wkcs.append(cycle(m))
                op = m.state_check(pysoem.OP_STATE, 1000)
                if op == pysoem.OP_STATE:
                    break
                time.sleep(0.001)
            res["op"] = op
            res["op_after_cycles"] = len(wkcs)
            res["op_after_ms"] = round((time.monotonic() - t0) * 1e3, 1)
            if op == pysoem.OP_STATE:
                for _ in range(args.cycles):
                    wkcs.append(cycle(m))
                    time.sleep(0.001)
        res["wkc"] = wkcs
        m.read_state()
        res["states"] = [[s.name, s.state, s.al_status] for s in m.slaves]
        m.state = pysoem.INIT_STATE
        m.write_state()
    finally:
        m.close()
    json.dump(res, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
