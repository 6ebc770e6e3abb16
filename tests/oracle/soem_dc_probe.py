"""SOEM (pysoem) scans a network and runs config_dc (topology, propagation delays, offsets);
prints JSON. Runs in its own process. The delays SOEM computed are written into each
SubDevice's 0x0928, where `ecat sim --dump-dc` reads them."""

from __future__ import annotations

import json
import sys

import pysoem


def main() -> int:
    m = pysoem.Master()
    m.open(sys.argv[1])
    out: dict = {}
    try:
        out["count"] = m.config_init()
        out["dc"] = bool(m.config_dc())
        out["dc_sync"] = [bool(getattr(s, "dc_sync", False)) for s in m.slaves]
    finally:
        m.close()
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
