"""Scan a network with SOEM (through pysoem) and print what it found as JSON.

    python soem_probe.py IFACE [--state preop|safeop|op|none] [--timeout-us N]

Runs in its own process so a crash or hang inside the C library cannot take the
test session (and its namespace cleanup) down with it. Output, one JSON object:

    {"count": <config_init() result>,
     "subdevices": [{"position": 1, "name": ..., "man": ..., "id": ..., "rev": ...,
                     "state": ..., "al_status": ...}, ...],
     "requested_state": ..., "state_check": ..., "lowest_state": ...}

pysoem API used (1.1.x): Master().open(ifname), config_init() -> count (<= 0
when nothing answers), master.slaves[i].{name, man, id, rev, state, al_status},
master.state = X; write_state(); state_check(X, timeout_us); read_state().
"""

from __future__ import annotations

import argparse
import json
import sys

import pysoem

STATES = {
    "none": None,
    "init": pysoem.INIT_STATE,
    "preop": pysoem.PREOP_STATE,
    "safeop": pysoem.SAFEOP_STATE,
    "op": pysoem.OP_STATE,
}


def subdevice_info(pos: int, s) -> dict:
    return {
        "position": pos,
        "name": s.name,
        "man": s.man,
        "id": s.id,
        "rev": s.rev,
        "state": s.state,
        "al_status": s.al_status,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("--state", choices=sorted(STATES), default="none")
    ap.add_argument("--timeout-us", type=int, default=2_000_000)
    args = ap.parse_args()

    out: dict = {"pysoem": pysoem.__version__, "iface": args.iface}
    master = pysoem.Master()
    master.open(args.iface)
    try:
        n = master.config_init()
        out["count"] = n
        want = STATES[args.state]
        if n > 0 and want is not None:
            out["requested_state"] = want
            master.state = want
            master.write_state()
            out["state_check"] = master.state_check(want, args.timeout_us)
        if n > 0:
            out["lowest_state"] = master.read_state()
        out["subdevices"] = [subdevice_info(i + 1, s) for i, s in enumerate(master.slaves)]
    finally:
        master.close()
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
