"""Scan the bus and print every device, the way pysoem's README shows it.
Only the import differs from a pysoem script."""
import sys

import ecat.pysoem as pysoem


def main(ifname):
    master = pysoem.Master()
    master.open(ifname)
    if master.config_init() > 0:
        for device in master.slaves:
            print(f"Found Device {device.name}")
            print(f"  vendor 0x{device.man:08x} product 0x{device.id:08x} revision 0x{device.rev:08x}")
    else:
        print("no device found")
    master.close()


if __name__ == "__main__":
    main(sys.argv[1])
