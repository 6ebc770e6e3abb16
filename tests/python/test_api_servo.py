"""The Pythonic API on `servo6` (six CiA 402 drives with CoE): SDO in every form, OP,
async SDO while cycling, events on unplug/replug."""

import concurrent.futures
import queue
import struct
import time

import pytest

import ecat
import ecat.sim


@pytest.fixture
def servo():
    net = ecat.sim.Network("servo6")
    md = ecat.MainDevice(net)
    subs = md.scan()
    yield net, md, subs
    md.close()


def test_sdo_read_write_types_and_complete_access(servo):
    net, md, subs = servo
    s = subs[2]
    assert s.has_coe
    assert s.sdo_read(0x1018, 1, type="u32") == s.identity.vendor_id
    assert s.sdo_read(0x1008, type=str) == s.name
    assert s.sdo_read(0x1018, 2, type=int) == s.identity.product_code
    ca = s.sdo_read(0x1018, 0, complete_access=True)
    assert ca[0] == 4 and struct.unpack_from("<I", ca, 2)[0] == s.identity.vendor_id
    s.sdo_write(0x6060, 0, 9, type="i8")
    assert s.sdo_read(0x6060, 0, type="i8") == 9
    s.sdo_write(0x6060, 0, 8)  # size from the current value
    assert s.sdo_read(0x6060, 0) == b"\x08"
    s.sdo_write(0x6060, 0, b"\x03")
    assert s.sdo_read(0x6060, 0, type="u8") == 3


def test_sdo_abort_carries_code_and_text(servo):
    net, md, subs = servo
    with pytest.raises(ecat.SdoAbort) as e:
        subs[0].sdo_read(0x1234, 0)
    assert e.value.code == 0x06020000
    assert e.value.text == "object does not exist in the object dictionary"
    assert e.value.position == 0
    assert "SubDevice 0 (0x1001" in str(e.value) and "upload 0x1234:00" in str(e.value)
    with pytest.raises(ecat.SdoAbort) as e:
        subs[0].sdo_write(0x1018, 1, b"\x01\x00\x00\x00")
    assert e.value.code == 0x06010002


def test_sdo_info_lists_the_dictionary(servo):
    net, md, subs = servo
    od = subs[1].sdo_info()
    by = {o.index: o for o in od}
    assert by[0x1008].name == "Device name"
    assert 0x6040 in by and by[0x6040].entries[0].bit_length == 16
    ident = by[0x1018]
    assert [e.name for e in ident.entries][:2] == ["Number of entries", "Vendor ID"] or len(ident.entries) == 5


def test_op_with_drive_entries_and_async_sdo(servo):
    net, md, subs = servo
    rt = md.activate(cycle="1ms", start=False)
    assert rt.states() == ["OP"] * 6
    d = rt.subdevice(4)
    assert d.outputs.keys() == ["Controlword", "Target velocity"]
    d.outputs["Controlword"] = 0x0006
    d.outputs["Target velocity"] = -1234
    rt.step(3)
    assert net.outputs(4)[:2] == b"\x06\x00"
    assert struct.unpack_from("<i", net.outputs(4), 2)[0] == -1234
    assert d.inputs["Statusword"] & 0x0021 == 0x0021  # ready to switch on, after shutdown
    # Async SDO in step mode: completes as the Runtime cycles.
    f = rt.sdo_read_async(4, 0x1018, 1, type="u32")
    assert isinstance(f, concurrent.futures.Future)
    rt.step(30)
    assert f.result(timeout=2) == subs[4].identity.vendor_id
    bad = rt.sdo_read_async(4, 0x1234, 0)
    rt.step(30)
    with pytest.raises(ecat.SdoAbort):
        bad.result(timeout=2)
    # Blocking SDO through the SubDevice object during OP steps the Runtime itself.
    assert subs[4].sdo_read(0x6041, 0, type="u16") & 0x0021 == 0x0021
    w = rt.sdo_write_async(4, 0x6060, 0, b"\x09")
    rt.step(30)
    assert w.result(timeout=2) is None
    assert subs[4].sdo_read(0x6060, 0, type="i8") == 9
    # ... and in thread mode.
    rt.start(realtime=False)
    futs = [rt.sdo_read_async(p, 0x1018, 2, type="u32") for p in range(6)]
    assert [f.result(timeout=5) for f in futs] == [s.identity.product_code for s in subs]
    assert subs[3].state == "OP"
    rt.stop()


def test_events_on_unplug_and_replug(servo):
    net, md, subs = servo
    rt = md.activate(start=False)
    reached = list(rt.events)
    assert {e.kind for e in reached} == {"reached"} and len(reached) == 6
    with pytest.raises(queue.Empty):
        rt.events.get_nowait()
    net.unplug(2)
    rt.step(50)
    ev = rt.events.get(timeout=1)
    assert (ev.kind, ev.position) == ("lost", 2)
    assert "lost" in ev.message and "SubDevice 2" in ev.message
    assert rt.states()[2] == "lost"
    net.replug(2, power_cycled=True)
    rt.step(2000)
    kinds = [(e.kind, e.position) for e in rt.events]
    assert ("found", 2) in kinds and ("reached", 2) in kinds
    assert rt.states() == ["OP"] * 6


def test_event_callbacks_in_thread_mode():
    import threading

    net = ecat.sim.Network("servo6", virtual_time=False)
    with ecat.MainDevice(net) as md:
        md.scan()
        rt = md.activate(realtime=False)
        list(rt.events)
        seen, lost = [], threading.Event()

        def cb(e):
            seen.append(e)
            if e.kind == "lost":
                lost.set()

        rt.on_event(cb)
        net.unplug(5)
        assert lost.wait(5), seen
        assert seen[-1].position == 5
        net.replug(5)
        rt.wait_state("OP", timeout=10)
        assert rt.states() == ["OP"] * 6


def test_pdo_choice_and_remapping(servo):
    net, md, subs = servo
    rt = md.activate(
        start=False,
        pdo={
            1: {"outputs": [0x1601], "inputs": [0x1A01]},
            2: {"outputs": [(0x1600, [(0x6040, 0, 16), (0x607A, 0, 32), (0x6060, 0, 8)])]},
        },
    )
    assert rt.states() == ["OP"] * 6
    d1 = rt.subdevice(1)
    assert "Target position" in d1.outputs.keys() and "Position actual value" in d1.inputs.keys()
    d2 = rt.subdevice(2)
    assert d2.outputs.keys() == ["Controlword", "Target position", "Modes of operation"]
    d2.outputs["Target position"] = 123456
    d2.outputs["Modes of operation"] = 8
    rt.step(3)
    assert struct.unpack_from("<HiB", net.outputs(2)) == (0, 123456, 8)
    assert subs[2].sdo_read(0x1600, 2, type="u32") == 0x607A0020
    assert rt.subdevice(3).outputs.keys() == ["Controlword", "Target velocity"]


def test_emergency_events(servo):
    net, md, subs = servo
    rt = md.activate(start=False)
    list(rt.events)
    net.send_emergency(3, 0x8611, 0x21)
    subs[3].sdo_read(0x6041, 0)  # emergencies are read while an SDO transfer runs
    ev = [e for e in rt.events if e.kind == "emergency"]
    assert len(ev) == 1 and ev[0].position == 3 and ev[0].code == 0x8611
    assert ev[0].data[0] == 0x21
    assert "SubDevice 3 (0x1004" in ev[0].message and "emergency 0x8611" in ev[0].message


NO_CYCLIC_EMCY = (
    "this runtime reads a SubDevice's mailbox only while an SDO transfer runs, so an emergency "
    "sent on its own waits for the next transfer (cyclic SM1 polling comes with the mailbox work)"
)


def fault_emergency(rt, events, position):
    """Wait up to 2,000 cycles (step mode) or 10 s (thread mode) for an emergency of
    `position` on `events` (a callable returning the events seen so far). If none came, an SDO
    read of the drive must bring it (the runtime then reads mailboxes only during transfers:
    the test is an expected failure)."""
    # Thread mode waits on the clock: 10 s, not 200 sleeps of 10 ms, so a stall of the shared
    # VM (up to ~1 s) cannot use up the wait while the cycle thread makes no progress.
    deadline = time.monotonic() + 10
    for i in range(1_000_000):
        got = [e for e in events() if e.kind == "emergency" and e.position == position]
        if got:
            return got, True
        if rt.running:
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        elif i >= 200:
            break
        else:
            rt.step(10)
    rt.sdo_read(position, 0x6041, 0)
    if rt.running:
        time.sleep(0.2)
    return [e for e in events() if e.kind == "emergency" and e.position == position], False


def test_drive_fault_in_op_reaches_python_as_an_emergency():
    """A drive faults while the cycle thread runs in OP (the simulator's fault injection,
    object 0x2002): its emergency comes out of rt.events with code, error register and data,
    and the drive shows the fault in its status word."""
    net = ecat.sim.Network("servo6", virtual_time=False)
    with ecat.MainDevice(net) as md:
        md.scan()
        rt = md.activate(realtime=False)
        list(rt.events)
        seen = []

        def events():
            seen.extend(rt.events)
            return seen

        rt.sdo_write_async(2, 0x2002, 0, struct.pack("<H", 0x7121)).result(timeout=5)
        got, cyclic = fault_emergency(rt, events, 2)
        assert len(got) == 1, seen
        e = got[0]
        assert (e.code, e.data[0], e.data[1:]) == (0x7121, 0x21, bytes(5)), e
        assert "SubDevice 2 (0x1003" in e.message and "emergency 0x7121" in e.message
        assert rt.subdevice(2).inputs["Statusword"] & 0x0008  # Fault
        assert not [x for x in seen if x.kind == "emergency" and x.position != 2]
        assert cyclic, NO_CYCLIC_EMCY

