"""config_map, SAFEOP, OP, then cycles checking the working counter: pysoem's basic example
flow. Writes a counter to the first output slave, prints the first input slave's byte."""
import sys
import time

import ecat.pysoem as pysoem


def main(ifname, cycles=200):
    master = pysoem.Master()
    master.open(ifname)
    if not master.config_init() > 0:
        master.close()
        raise Exception("no slave found")
    io_map_size = master.config_map()
    print(f"IOmap size: {io_map_size}")
    if master.state_check(pysoem.SAFEOP_STATE, 50000) != pysoem.SAFEOP_STATE:
        master.close()
        raise Exception("not all slaves reached SAFEOP state")
    master.state = pysoem.OP_STATE
    master.send_processdata()
    master.receive_processdata(2000)
    master.write_state()
    all_op = False
    attempts = 40
    while not all_op and attempts > 0:
        master.send_processdata()
        master.receive_processdata(2000)
        if master.state_check(pysoem.OP_STATE, 50000) == pysoem.OP_STATE:
            all_op = True
        attempts -= 1
    if not all_op:
        master.read_state()
        for slave in master.slaves:
            if not slave.state == pysoem.OP_STATE:
                print(f"{slave.name} did not reach OP state")
                print(f"al status code {hex(slave.al_status)} ({pysoem.al_status_code_to_string(slave.al_status)})")
        raise Exception("not all slaves reached OP state")
    print("all slaves in OP")
    out_slave = next(s for s in master.slaves if len(s.output) > 0)
    in_slave = next(s for s in master.slaves if len(s.input) > 0)
    wkc_errors = 0
    for i in range(cycles):
        out_slave.output = bytes([i % 256]) + out_slave.output[1:]
        master.send_processdata()
        wkc = master.receive_processdata(2000)
        if wkc != master.expected_wkc:
            wkc_errors += 1
        time.sleep(0.001)
    print(f"cycles {cycles}, wkc errors {wkc_errors}, expected wkc {master.expected_wkc}")
    print(f"last output {out_slave.output.hex()} input {in_slave.input.hex()}")
    master.state = pysoem.INIT_STATE
    master.write_state()
    master.close()


if __name__ == "__main__":
    main(sys.argv[1])
