"""SDO reads and writes with abort handling, pysoem style (on a CoE slave)."""
import struct
import sys

import ecat.pysoem as pysoem


def main(ifname):
    master = pysoem.Master()
    master.open(ifname)
    master.config_init()
    slave = next(s for s in master.slaves if s.man != 0 and s.id != 0x044C2C52)
    device_name = slave.sdo_read(0x1008, 0).decode("latin-1")
    vendor = struct.unpack("<I", slave.sdo_read(0x1018, 1))[0]
    print(f"device name {device_name}, vendor 0x{vendor:08x}")
    identity = slave.sdo_read(0x1018, 0, ca=True)
    print(f"identity object with complete access: {len(identity)} bytes")
    try:
        slave.sdo_read(0x1234, 0)
    except pysoem.SdoError as e:
        print(f"abort 0x{e.abort_code:08x}: {e.desc}")
    try:
        slave.sdo_write(0x1018, 1, struct.pack("<I", 1))
    except pysoem.SdoError as e:
        print(f"write abort 0x{e.abort_code:08x}: {e.desc}")
    master.close()


if __name__ == "__main__":
    main(sys.argv[1])
