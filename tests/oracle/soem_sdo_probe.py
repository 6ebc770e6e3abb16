"""SOEM (pysoem) SDO access against a network; prints JSON. Runs in its own process.

    python soem_sdo_probe.py IFACE --network servo6|io

Exercises, on the first CoE SubDevice: expedited read/write, segmented upload (0x1008
device name, 0x2001 text) and segmented download (0x2001, 200 bytes), complete access read
of 0x1C12/0x1C13 and of 0x1018, a refused write (read-only 0x1018:01) with its abort code,
a read of a missing object, the object dictionary listing, and a PDO remap of the first drive
(TxPDO 0x1A00: statusword, position, velocity, torque = 12 bytes) followed by config_map.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys

import pysoem


def abort_code(e: Exception):
    return getattr(e, "abort_code", None)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("--remap", action="store_true")
    args = ap.parse_args()
    m = pysoem.Master()
    m.open(args.iface)
    out: dict = {}
    try:
        out["count"] = m.config_init()
        s = m.slaves[0]
        out["name"] = s.name
        out["vendor_1018"] = struct.unpack("<I", s.sdo_read(0x1018, 1))[0]
        out["device_name_1008"] = s.sdo_read(0x1008, 0).decode(errors="replace")
        # Expedited write/read back.
        s.sdo_write(0x6060, 0, struct.pack("<b", 3))
        out["mode_after_write"] = struct.unpack("<b", s.sdo_read(0x6060, 0))[0]
        # Segmented download and upload of 200 bytes.
        text = bytes((ord("a") + i % 26) for i in range(200))
        s.sdo_write(0x2001, 0, text)
        out["segmented_roundtrip"] = s.sdo_read(0x2001, 0, 512) == text
        # Complete access.
        out["ca_1c12"] = s.sdo_read(0x1C12, 0, ca=True).hex()
        out["ca_1018"] = s.sdo_read(0x1018, 1, ca=True).hex()
        # Refused write and missing object.
        try:
            s.sdo_write(0x1018, 1, struct.pack("<I", 5))
            out["refused_write"] = None
        except pysoem.SdoError as e:
            out["refused_write"] = abort_code(e)
        try:
            s.sdo_read(0x5555, 0)
            out["missing_read"] = None
        except pysoem.SdoError as e:
            out["missing_read"] = abort_code(e)
        # Object dictionary.
        od = s.od
        out["od_count"] = len(od)
        out["od_names"] = {f"0x{o.index:04x}": o.name.decode(errors="replace") if isinstance(o.name, bytes) else o.name for o in od[:12]}
        out["sizes_before"] = None
        if args.remap:
            # Remap TxPDO 0x1A00 of every drive: statusword, position, velocity, torque (12 bytes).
            for d in m.slaves:
                d.sdo_write(0x1C13, 0, bytes([0]))
                d.sdo_write(0x1A00, 0, bytes([0]))
                for i, e in enumerate([0x60410010, 0x60640020, 0x606C0020, 0x60770010]):
                    d.sdo_write(0x1A00, i + 1, struct.pack("<I", e))
                d.sdo_write(0x1A00, 0, bytes([4]))
                d.sdo_write(0x1C13, 1, struct.pack("<H", 0x1A00))
                d.sdo_write(0x1C13, 0, bytes([1]))
            out["iomap_size"] = m.config_map()
            out["sizes"] = [[len(d.output), len(d.input)] for d in m.slaves]
            out["safeop"] = m.state_check(pysoem.SAFEOP_STATE, 2_000_000)
            # A mapping change is refused outside PREOP.
            try:
                s.sdo_write(0x1A00, 0, bytes([0]))
                out["remap_in_safeop"] = None
            except pysoem.SdoError as e:
                out["remap_in_safeop"] = abort_code(e)
    finally:
        m.close()
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
