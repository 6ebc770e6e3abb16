"""SOEM (pysoem) FoE against a network; prints JSON. Runs in its own process.

    python soem_foe_probe.py IFACE FILE PRELOADED

On SubDevice 0 (no FoE password): write FILE's bytes as "big.bin" with foe_write, read
them back with foe_read, read the file the network file preloaded ("preloaded.bin") and a
file that does not exist. On SubDevice 1 (FoE password 0x1234 in the network file): a
write with a wrong password, then with the right one and a read back.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import pysoem

TIMEOUT_US = 5_000_000


def try_call(f):
    try:
        return {"ok": True, "value": f()}
    except Exception as e:  # pysoem raises FoeError (or a generic error) on a failed transfer
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("file")
    ap.add_argument("preloaded")
    args = ap.parse_args()
    data = open(args.file, "rb").read()
    pre = open(args.preloaded, "rb").read()
    m = pysoem.Master()
    m.open(args.iface)
    out: dict = {}
    try:
        out["count"] = m.config_init()
        out["state"] = m.read_state()
        s0, s1 = m.slaves[0], m.slaves[1]
        t0 = time.monotonic()
        s0.foe_write("big.bin", 0, data, TIMEOUT_US)
        t1 = time.monotonic()
        back = s0.foe_read("big.bin", 0, len(data) + 4096, TIMEOUT_US)
        t2 = time.monotonic()
        out["write_s"] = t1 - t0
        out["read_s"] = t2 - t1
        out["roundtrip_equal"] = bytes(back) == data
        out["read_len"] = len(back)
        r = try_call(lambda: bytes(s0.foe_read("preloaded.bin", 0, 65536, TIMEOUT_US)))
        out["preloaded_equal"] = r["ok"] and r["value"] == pre
        out["missing"] = try_call(lambda: len(s0.foe_read("missing.bin", 0, 1024, 1_000_000)))
        out["wrong_password"] = try_call(lambda: s1.foe_write("p.bin", 0x9999, b"secret", 1_000_000))
        r = try_call(lambda: s1.foe_write("p.bin", 0x1234, b"secret", TIMEOUT_US))
        out["right_password_write"] = r["ok"] and r["value"] > 0
        r = try_call(lambda: bytes(s1.foe_read("p.bin", 0x1234, 1024, TIMEOUT_US)))
        out["right_password_read"] = r["ok"] and r["value"] == b"secret"
    finally:
        m.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
