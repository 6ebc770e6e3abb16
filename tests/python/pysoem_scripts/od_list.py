"""List a slave's object dictionary, as pysoem's read_od example does."""
import sys

import ecat.pysoem as pysoem


def main(ifname, position=1):
    master = pysoem.Master()
    master.open(ifname)
    if master.config_init() > 0:
        slave = master.slaves[position]
        try:
            od = slave.od
        except pysoem.SdoInfoError:
            print("no SDO info for {}".format(slave.name))
        else:
            print(slave.name)
            for obj in od:
                print(" Idx: {}; Code: {}; Type: {}; BitSize: {}; Access: {}; Name: \"{}\"".format(
                    hex(obj.index), obj.object_code, obj.data_type, obj.bit_length, hex(obj.obj_access), obj.name))
                for i, entry in enumerate(obj.entries):
                    if entry.data_type > 0 and entry.bit_length > 0:
                        print("  Subindex {}; Type: {}; BitSize: {}; Access: {} Name: \"{}\"".format(
                            i, entry.data_type, entry.bit_length, hex(entry.obj_access), entry.name))
    master.close()


if __name__ == "__main__":
    main(sys.argv[1])
