"""SOEM (pysoem) FoE against a network; prints JSON. Runs in its own process.

    python soem_foe_probe.py IFACE FILE PRELOADED

On SubDevice 0 (no FoE password): write FILE's bytes as "big.bin" with foe_write, read
them back with foe_read, read the file the network file preloaded ("preloaded.bin") and a
file that does not exist. On SubDevice 1 (FoE password 0x1234 in the network file): a
write with a wrong password, then with the right one and a read back, then the firmware
update of SOEM's firm_update example: INIT, bootstrap mailbox, BOOT, foe_write of FILE, read
back, INIT, standard mailbox, PREOP, read back.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import time

import pysoem

TIMEOUT_US = 5_000_000


def try_call(f):
    try:
        return {"ok": True, "value": f()}
    except Exception as e:  # pysoem raises FoeError (or a generic error) on a failed transfer
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}


def sm_bytes(start: int, length: int, control: int) -> bytes:
    return struct.pack("<HHBBBB", start, length, control, 0, 1, 0)


def set_mailbox(s, rx: tuple[int, int], tx: tuple[int, int]) -> None:
    """Point SOEM's mailbox of `s` and SM0/SM1 at the given (start, size) areas (in INIT)."""
    s.amend_mbx("out", rx[0], rx[1])
    s.amend_mbx("in", tx[0], tx[1])
    s._fpwr(0x0800, sm_bytes(rx[0], rx[1], 0x26))
    s._fpwr(0x0808, sm_bytes(tx[0], tx[1], 0x22))


def go(s, state: int) -> int:
    s.state = state
    s.write_state()
    return s.state_check(state, 5_000_000)


def boot_update(s, firmware: bytes) -> dict:
    """SOEM's firm_update sequence: INIT, SMs to the bootstrap mailbox of SII words
    0x14-0x17, BOOT, foe_write, read back, INIT, standard mailbox again, PREOP, read back."""
    r: dict = {}
    r["init"] = go(s, pysoem.INIT_STATE)
    boot_rx = struct.unpack("<HH", s.eeprom_read(0x14))
    boot_tx = struct.unpack("<HH", s.eeprom_read(0x16))
    std_rx = struct.unpack("<HH", s.eeprom_read(0x18))
    std_tx = struct.unpack("<HH", s.eeprom_read(0x1A))
    r["boot_mailbox"] = [list(boot_rx), list(boot_tx)]
    set_mailbox(s, boot_rx, boot_tx)
    r["boot"] = go(s, pysoem.BOOT_STATE)
    t0 = time.monotonic()
    r["write"] = s.foe_write("firmware.efw", 0x1234, firmware, TIMEOUT_US)
    r["write_s"] = time.monotonic() - t0
    r["read_in_boot"] = bytes(s.foe_read("firmware.efw", 0x1234, len(firmware) + 4096, TIMEOUT_US)) == firmware
    r["init_after"] = go(s, pysoem.INIT_STATE)
    set_mailbox(s, std_rx, std_tx)
    r["preop_after"] = go(s, pysoem.PREOP_STATE)
    r["read_in_preop"] = bytes(s.foe_read("firmware.efw", 0x1234, len(firmware) + 4096, TIMEOUT_US)) == firmware
    return r


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("file")
    ap.add_argument("preloaded")
    args = ap.parse_args()
    data = open(args.file, "rb").read()
    pre = open(args.preloaded, "rb").read()
    # SOEM gives up on a frame after EC_TIMEOUTRET (2 ms) and an FoE transfer then ends with
    # "no frame" (-1); on a loaded CI machine the simulator may take longer, so allow 50 ms.
    pysoem.settings.timeouts.ret = 50_000
    m = pysoem.Master()
    m.open(args.iface)
    out: dict = {}
    try:
        out["count"] = m.config_init()
        out["state"] = m.read_state()
        s0, s1 = m.slaves[0], m.slaves[1]
        t0 = time.monotonic()
        out["write_result"] = s0.foe_write("big.bin", 0, data, TIMEOUT_US)
        t1 = time.monotonic()
        back = s0.foe_read("big.bin", 0, len(data) + 4096, TIMEOUT_US)
        t2 = time.monotonic()
        out["write_s"] = t1 - t0
        out["read_s"] = t2 - t1
        out["roundtrip_equal"] = bytes(back) == data
        out["read_len"] = len(back)
        out["first_difference"] = next(
            (i for i, (a, b) in enumerate(zip(bytes(back), data)) if a != b), None
        )
        r = try_call(lambda: bytes(s0.foe_read("preloaded.bin", 0, 65536, TIMEOUT_US)))
        out["preloaded_equal"] = r["ok"] and r["value"] == pre
        out["missing"] = try_call(lambda: len(s0.foe_read("missing.bin", 0, 1024, 1_000_000)))
        out["wrong_password"] = try_call(lambda: s1.foe_write("p.bin", 0x9999, b"secret", 1_000_000))
        r = try_call(lambda: s1.foe_write("p.bin", 0x1234, b"secret", TIMEOUT_US))
        out["right_password_write"] = r["ok"] and r["value"] > 0
        r = try_call(lambda: bytes(s1.foe_read("p.bin", 0x1234, 1024, TIMEOUT_US)))
        out["right_password_read"] = r["ok"] and r["value"] == b"secret"
        out["boot"] = boot_update(s1, data)
    finally:
        m.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
