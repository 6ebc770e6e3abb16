"""Distributed clocks the pysoem way: config_dc, SYNC0 per slave in config_func, OP, dc_time."""
import sys
import time

import ecat.pysoem as pysoem

CYCLE_NS = 1_000_000


def main(ifname):
    master = pysoem.Master()
    master.open(ifname)
    n = master.config_init()
    print(f"{n} slaves")
    has_dc = master.config_dc()
    print(f"DC: {has_dc}")

    def setup(pos):
        master.slaves[pos].dc_sync(1, CYCLE_NS)

    for slave in master.slaves:
        slave.config_func = setup
    master.config_map()
    master.state_check(pysoem.SAFEOP_STATE, 50000)
    master.state = pysoem.OP_STATE
    master.write_state()
    for _ in range(100):
        master.send_processdata()
        master.receive_processdata(2000)
        if master.state_check(pysoem.OP_STATE, 5000) == pysoem.OP_STATE:
            break
    t0 = master.dc_time
    for _ in range(50):
        master.send_processdata()
        master.receive_processdata(2000)
        time.sleep(0.001)
    t1 = master.dc_time
    print(f"state {master.read_state()}, dc_time advanced {t1 - t0} ns")
    master.state = pysoem.INIT_STATE
    master.write_state()
    master.close()


if __name__ == "__main__":
    main(sys.argv[1])
