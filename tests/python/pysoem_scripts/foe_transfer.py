"""Firmware-file style FoE transfer, pysoem style: write a file to a slave, read it back and
compare, and show a refused read (on a slave with FoE)."""
import sys

import ecat.pysoem as pysoem


def main(ifname, size):
    master = pysoem.Master()
    master.open(ifname)
    if master.config_init() <= 0:
        print("no slaves found")
        return
    slave = master.slaves[0]
    data = bytes((i * 7 + 3) & 0xFF for i in range(int(size)))
    slave.foe_write("firmware.bin", 0, data)
    back = slave.foe_read("firmware.bin", 0, len(data) + 1024)
    print(f"wrote {len(data)} bytes, read {len(back)} bytes back, equal {back == data}")
    try:
        slave.foe_read("missing.bin", 0, 1024)
    except pysoem.FoeError as e:
        print(f"FoE error: {e}")
    master.config_map()
    master.state_check(pysoem.SAFEOP_STATE, 50000)
    back = slave.foe_read("firmware.bin", 0, len(data))
    print(f"in SAFEOP: read {len(back)} bytes, equal {back == data}")
    master.state = pysoem.INIT_STATE
    master.write_state()
    master.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else 102400)
