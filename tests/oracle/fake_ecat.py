#!/usr/bin/env python3
"""A stand-in for the `ecat` binary, for testing the test harness only.

It implements just enough of two subcommands for the SOEM oracle tests to run
end to end before (or without) the real simulator:

  fake_ecat.py slaves --json -i sim:NETWORK   print the network's SubDevices
  fake_ecat.py slaves --json -i IFACE         the same, scanned by SOEM
  fake_ecat.py sim -i IFACE -n NETWORK        answer EtherCAT frames on IFACE

NETWORK is "io" (the preset's identities, with small made-up SII images) or a
TOML file of `[[subdevice]] sii = "path"` entries. The "ESC" here is a flat
register array with an EEPROM interface and an AL state that follows AL
control: no FMMUs, SyncManager checks, mailboxes or DC. It proves the harness
(namespaces, startup detection, SOEM probe, assertions), never the product.

    ECAT_BIN=$PWD/tests/oracle/fake_ecat.py PATH=$PWD/.venv/bin:$PATH \
        .venv/bin/python -m pytest tests/oracle/test_soem_scan.py tests/oracle/test_cli_veth.py
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import struct
import sys
import tomllib
from pathlib import Path

ETH_P_ECAT = 0x88A4

IO_PRESET = [  # name, vendor, product, revision
    ("EK1100", 2, 0x044C2C52, 0x00120000),
    ("EL2008", 2, 0x07D83052, 0x00100000),
    ("EL1018", 2, 0x03FA3052, 0x00100000),
    ("EL4132", 2, 0x10243052, 0x00100000),
    ("EL3102", 2, 0x0C1E3052, 0x00100000),
]


def make_sii(name: str, vendor: int, product: int, revision: int) -> bytes:
    words = bytearray(0x80)
    struct.pack_into("<IIII", words, 0x10, vendor, product, revision, 0)
    strings = bytes([1, len(name)]) + name.encode()
    if len(strings) % 2:
        strings += b"\0"
    general = bytearray(32)
    general[3] = 1  # name: string 1
    cat = struct.pack("<HH", 10, len(strings) // 2) + strings
    cat += struct.pack("<HH", 30, len(general) // 2) + general
    return bytes(words) + cat + b"\xff\xff\xff\xff"


def load_network(spec: str) -> list[tuple[str, int, int, int, bytes]]:
    if spec == "io":
        return [(n, v, p, r, make_sii(n, v, p, r)) for n, v, p, r in IO_PRESET]
    doc = tomllib.loads(Path(spec).read_text())
    out = []
    for entry in doc.get("subdevice", []):
        sii = Path(entry["sii"]).read_bytes()
        vendor, product, revision = struct.unpack_from("<III", sii, 0x10)
        off, name = 0x80, "?"
        while off + 4 <= len(sii):
            ctype, words = struct.unpack_from("<HH", sii, off)
            if ctype == 0xFFFF:
                break
            if ctype == 10:
                n = sii[off + 5]
                name = sii[off + 6 : off + 6 + n].decode("latin-1")
                break
            off += 4 + 2 * words
        out.append((name, vendor, product, revision, sii))
    return out


class Esc:
    def __init__(self, sii: bytes, last: bool) -> None:
        self.mem = bytearray(0x1000)
        self.sii = sii + b"\xff" * 8
        self.mem[0x0000] = 0x11  # ESC type
        self.mem[0x0004] = 8  # FMMUs
        self.mem[0x0005] = 8  # SyncManagers
        self.mem[0x0007] = 0x0F  # all ports MII/EBUS-ish
        # DL status: port 0 link + communication; port 1 too unless last in line.
        dl = (1 << 4) | (1 << 9) | (1 << 12) | (1 << 14)
        dl |= (1 << 10) if last else ((1 << 5) | (1 << 11))
        struct.pack_into("<H", self.mem, 0x0110, dl)
        struct.pack_into("<H", self.mem, 0x0130, 1)  # AL status INIT
        struct.pack_into("<H", self.mem, 0x0502, 0x0040)  # EEPROM: 8-byte reads

    def read(self, ado: int, n: int) -> bytes:
        return bytes(self.mem[ado : ado + n])

    def write(self, ado: int, data: bytes) -> None:
        self.mem[ado : ado + len(data)] = data
        end = ado + len(data)
        if ado <= 0x0120 < end:
            state = self.mem[0x0120] & 0x0F
            struct.pack_into("<H", self.mem, 0x0130, state)
        if ado <= 0x0502 < end or ado <= 0x0503 < end:
            cmd = self.mem[0x0503] & 0x07
            if cmd == 1:  # read
                addr = struct.unpack_from("<H", self.mem, 0x0504)[0] * 2
                self.mem[0x0508:0x0510] = self.sii[addr : addr + 8].ljust(8, b"\xff")
            struct.pack_into("<H", self.mem, 0x0502, 0x0040)


def process(escs: list[Esc], frame: bytearray) -> None:
    hdr = struct.unpack_from("<H", frame, 14)[0]
    end = 16 + (hdr & 0x7FF)
    off = 16
    while off + 12 <= min(end, len(frame)):
        cmd, _idx, adp, ado, lenw = struct.unpack_from("<BBHHH", frame, off)
        n = lenw & 0x7FF
        data_off = off + 10
        wkc_off = data_off + n
        if wkc_off + 2 > len(frame):
            return
        wkc = struct.unpack_from("<H", frame, wkc_off)[0]
        for esc in escs:
            if cmd in (1, 2, 3):  # APRD APWR APRW
                hit = adp == 0
                adp = (adp + 1) & 0xFFFF
            elif cmd in (4, 5, 6):  # FPRD FPWR FPRW
                hit = struct.unpack_from("<H", esc.mem, 0x0010)[0] == adp
            elif cmd in (7, 8, 9):  # BRD BWR BRW
                hit = True
                adp = (adp + 1) & 0xFFFF
            else:
                hit = False
            if not hit:
                continue
            kind = (cmd - 1) % 3  # 0 read, 1 write, 2 read-write
            if kind == 0:
                cur = esc.read(ado, n)
                if cmd == 7:
                    cur = bytes(a | b for a, b in zip(cur, frame[data_off:wkc_off]))
                frame[data_off:wkc_off] = cur
                wkc += 1
            elif kind == 1:
                esc.write(ado, bytes(frame[data_off:wkc_off]))
                wkc += 1
            else:
                old = esc.read(ado, n)
                esc.write(ado, bytes(frame[data_off:wkc_off]))
                frame[data_off:wkc_off] = old
                wkc += 3
        struct.pack_into("<HH", frame, off + 2, adp, ado)
        struct.pack_into("<H", frame, wkc_off, wkc)
        if not lenw & 0x8000:
            return
        off = wkc_off + 2


def sim(iface: str, network: str) -> int:
    devices = load_network(network)
    escs = [Esc(d[4], i == len(devices) - 1) for i, d in enumerate(devices)]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ECAT))
    s.bind((iface, ETH_P_ECAT))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    for i, (name, vendor, product, revision, _) in enumerate(devices):
        print(
            f"fake subdevice {i}: {name} vendor={vendor:#x} product={product:#010x} rev={revision:#010x}",
            flush=True,
        )
    while True:
        frame = bytearray(s.recv(2048))
        if len(frame) < 16 or struct.unpack_from(">H", frame, 12)[0] != ETH_P_ECAT:
            continue
        process(escs, frame)
        frame[6] |= 0x02  # a real ESC marks the source address on the way back
        s.send(frame)


def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("slaves")
    a.add_argument("--json", action="store_true")
    a.add_argument("-v", action="store_true")
    a.add_argument("-i", required=True)
    b = sub.add_parser("sim")
    b.add_argument("-i", required=True)
    b.add_argument("-n", required=True)
    args = ap.parse_args()
    if args.cmd == "sim":
        return sim(args.i, args.n)
    if args.i.startswith("sim:"):
        devs = load_network(args.i[4:])
    else:  # a real interface: let SOEM be the master
        import pysoem

        master = pysoem.Master()
        master.open(args.i)
        try:
            master.config_init()
            devs = [(s.name, s.man, s.id, s.rev, b"") for s in master.slaves]
        finally:
            master.close()
    json.dump(
        [
            {"position": i, "name": n, "vendor": v, "product": p, "revision": r}
            for i, (n, v, p, r, _) in enumerate(devs)
        ],
        sys.stdout,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
