"""Drive a network to OP with SOEM (pysoem) and exchange process data; print JSON.

    python soem_pd_probe.py IFACE --cycles N [--out POS=HEX ...] [--dc-sync POS=ACT ...]

POS is SOEM's 0-based index into master.slaves. Each cycle: write the requested outputs
(the pattern byte XOR cycle for EL2008-like 1-byte outputs is the caller's business: we
write exactly the bytes given, with the cycle number in the first byte when --count-pos is
set), send_processdata, receive_processdata; the WKC of every cycle is recorded. Runs in its
own process so a crash in the C library cannot take the test session down.

--dc-sync POS=ACT runs config_dc and activates SYNC0 every period before the process data is
mapped (SOEM's config_map requests SAFEOP), with SYNC1 too when ACT (the AssignActivate high
byte the device asks for, e.g. 0x03 or 0x07) has bit 2.

--amend POS=BOX:START:SIZE moves a mailbox the way SOEM users do (`amend_mbx`, BOX `out` or
`in`): after config_init the SubDevice goes back to INIT, gets the new SM0/SM1 settings,
is requested to PREOP again and must answer an SDO upload of 0x1018:01 (its vendor id,
reported as "amended": {POS: vendor}) before the process data is mapped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import pysoem


def amend(m: pysoem.Master, specs: list[str]) -> dict:
    """Move the mailboxes of `specs` (POS=BOX:START:SIZE) in INIT, back to PREOP, read an SDO."""
    moves: dict[int, list[tuple[str, int, int]]] = {}
    for spec in specs:
        pos, rest = spec.split("=")
        box, start, size = rest.split(":")
        moves.setdefault(int(pos), []).append((box, int(start, 0), int(size, 0)))
    out = {}
    for pos, boxes in moves.items():
        s = m.slaves[pos]
        s.state = pysoem.INIT_STATE
        s.write_state()
        if s.state_check(pysoem.INIT_STATE, 2_000_000) != pysoem.INIT_STATE:
            raise SystemExit(f"SubDevice {pos} did not go back to INIT")
        for box, start, size in boxes:
            s.amend_mbx(box, start, size)
        s.state = pysoem.PREOP_STATE
        s.write_state()
        st = s.state_check(pysoem.PREOP_STATE, 2_000_000)
        if st != pysoem.PREOP_STATE:
            m.read_state()
            code = s.al_status
            raise SystemExit(f"SubDevice {pos}: PREOP refused, state {st:#x}, code {code:#06x}")
        out[pos] = int.from_bytes(s.sdo_read(0x1018, 1), "little")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--out", action="append", default=[], help="POS=HEX outputs to write")
    ap.add_argument("--period-us", type=int, default=1000)
    ap.add_argument("--dc-sync", action="append", default=[], help="POS=ACT: activate SYNC0")
    ap.add_argument("--amend", action="append", default=[], help="POS=BOX:START:SIZE")
    args = ap.parse_args()
    outs = {}
    for o in args.out:
        p, h = o.split("=")
        outs[int(p)] = bytes.fromhex(h)

    m = pysoem.Master()
    m.open(args.iface)
    res: dict = {}
    try:
        res["count"] = m.config_init()
        if args.amend:
            res["amended"] = amend(m, args.amend)
        if args.dc_sync:
            res["dc"] = bool(m.config_dc())
            for d in args.dc_sync:
                pos, act = (int(x, 0) for x in d.split("="))
                s = m.slaves[pos]
                if act & 0x04:
                    s.dc_sync(True, args.period_us * 1000, 0, 0)
                else:
                    s.dc_sync(True, args.period_us * 1000)
        res["iomap_size"] = m.config_map()
        res["expected_wkc"] = m.expected_wkc
        res["sizes"] = [
            {"name": s.name, "out": len(s.output), "in": len(s.input),
             "man": s.man, "id": s.id, "rev": s.rev} for s in m.slaves
        ]
        res["safeop"] = m.state_check(pysoem.SAFEOP_STATE, 2_000_000)
        # Send valid outputs while asking for OP (devices need outputs before OP).
        for pos, data in outs.items():
            m.slaves[pos].output = data
        m.send_processdata()
        m.receive_processdata(2000)
        m.state = pysoem.OP_STATE
        m.write_state()
        for _ in range(400):
            m.send_processdata()
            m.receive_processdata(2000)
            if m.state_check(pysoem.OP_STATE, 1000) == pysoem.OP_STATE:
                break
        res["op"] = m.state_check(pysoem.OP_STATE, 50_000)
        wkcs = []
        inputs = []
        for _ in range(args.cycles):
            for pos, data in outs.items():
                m.slaves[pos].output = data
            m.send_processdata()
            wkcs.append(m.receive_processdata(2000))
            inputs.append([s.input.hex() for s in m.slaves])
            time.sleep(args.period_us / 1e6)
        res["wkc"] = wkcs
        res["inputs_first"] = inputs[0] if inputs else []
        res["inputs_last"] = inputs[-1] if inputs else []
        m.read_state()  # the per-SubDevice states are stale until read
        res["states"] = [s.state for s in m.slaves]
        m.state = pysoem.INIT_STATE
        m.write_state()
    finally:
        m.close()
    json.dump(res, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
