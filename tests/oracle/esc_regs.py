"""Read ESC registers as the bus holds them, without a MainDevice's scan (which resets FMMUs
and SMs): one APRD per SubDevice over a raw socket, addressed by position. Used to compare
what two bring-ups left in the SubDevices' SM (0x0800..) and FMMU (0x0600..) registers.

    regs = read_positions("ech123", count=3, address=0x0600, length=256)
"""

from __future__ import annotations

import select
import socket
import struct
import time

ETHERTYPE = 0x88A4
APRD = 0x01
BRD = 0x07


def _frame(cmd: int, index: int, adp: int, ado: int, length: int) -> bytes:
    datagram = struct.pack("<BBHHHH", cmd, index, adp & 0xFFFF, ado, length & 0x7FF, 0)
    datagram += bytes(length) + b"\x00\x00"  # data, WKC
    ecat = struct.pack("<H", len(datagram) | 0x1000) + datagram
    eth = b"\xff" * 6 + b"\x02\x00\x00\x00\x0c\xf6" + struct.pack(">H", ETHERTYPE)
    frame = eth + ecat
    return frame + bytes(max(0, 60 - len(frame)))


def _exchange(sock: socket.socket, cmd: int, index: int, adp: int, ado: int, length: int,
              timeout: float = 1.0) -> tuple[bytes, int]:
    """Send one datagram and return (data, wkc) of its answer."""
    sock.send(_frame(cmd, index, adp, ado, length))
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([sock], [], [], left)[0]:
            break
        frame, addr = sock.recvfrom(2048)
        if addr[2] == socket.PACKET_OUTGOING or len(frame) < 16 + 10 + length + 2:
            continue
        if frame[16] != cmd or frame[17] != index:
            continue
        data = frame[26:26 + length]
        wkc = struct.unpack_from("<H", frame, 26 + length)[0]
        return data, wkc
    raise TimeoutError(f"no answer to command {cmd} ADO 0x{ado:04x} on the raw socket")


def count(iface: str) -> int:
    """SubDevices answering a BRD of the type register."""
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE)) as s:
        s.bind((iface, ETHERTYPE))
        return _exchange(s, BRD, 0x51, 0, 0x0000, 1)[1]


def read_positions(iface: str, n: int, address: int, length: int) -> list[bytes]:
    """`length` bytes at `address` of SubDevices 0..n-1 (APRD by position)."""
    out = []
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE)) as s:
        s.bind((iface, ETHERTYPE))
        for p in range(n):
            data, wkc = _exchange(s, APRD, 0x52 + p % 64, -p, address, length)
            if wkc != 1:
                raise AssertionError(f"APRD of position {p} 0x{address:04x}: WKC {wkc}")
            out.append(data)
    return out


def sm_fmmu_view(iface: str) -> list[tuple[str, str]]:
    """Per SubDevice: (its 16 FMMUs, its 16 SMs with the status and PDI-control bytes
    cleared, as they change with traffic), hex."""
    n = count(iface)
    fmmus = read_positions(iface, n, 0x0600, 256)
    sms = read_positions(iface, n, 0x0800, 128)
    view = []
    for f, s in zip(fmmus, sms):
        s = bytearray(s)
        for k in range(16):
            s[8 * k + 5] = 0
            s[8 * k + 7] = 0
        view.append((f.hex(), bytes(s).hex()))
    return view
