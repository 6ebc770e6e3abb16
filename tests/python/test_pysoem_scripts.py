"""pysoem-style scripts (tests/python/pysoem_scripts/, written the way pysoem's docs show,
only the import changed to `import ecat.pysoem as pysoem`) run unchanged against simulated
networks the test controls, in-process; and the layer's own behaviour."""

import struct
import sys
from pathlib import Path

import pytest

import ecat
import ecat.pysoem as pysoem
import ecat.sim

sys.path.insert(0, str(Path(__file__).parent.parent / "oracle"))


@pytest.fixture
def published(request):
    names = []

    def publish(spec, virtual_time=False):
        net = ecat.sim.Network(spec, virtual_time=virtual_time)
        name = f"pytest-{spec}-{request.node.name}"[:60]
        names.append(name)
        return net, ecat.sim.publish(net, name)

    yield publish
    for n in names:
        ecat.sim.unpublish(n)


def test_scripts_import_only_ecat_pysoem():
    for p in (Path(__file__).parent / "pysoem_scripts").glob("*.py"):
        text = p.read_text()
        assert "import ecat.pysoem as pysoem" in text, p
        assert "import ecat\n" not in text and "ecat.sim" not in text, p


def test_scan_and_print(run_script, published):
    net, link = published("io")
    out = run_script("scan_and_print.py", link)
    assert out.count("Found Device") == 5
    # SOEM names a slave by the SII's first string (the order number on Beckhoff terminals).
    assert "Found Device EL2008\n" in out
    assert "vendor 0x00000002 product 0x07d83052" in out


def test_cyclic_io_with_expected_wkc(run_script, published):
    net, link = published("io")
    net.set_inputs(2, b"\x42")
    out = run_script("cyclic_io.py", link)
    assert "all slaves in OP" in out
    assert "cycles 200, wkc errors 0, expected wkc 6" in out
    assert "last output c7 input 42" in out
    # The script ended with INIT; the EL2008 applied the last output while in OP.
    assert net.read_register(1, 0x0130, 1)[0] & 0x0F == 1


def test_sdo_access_with_abort_handling(run_script, published):
    net, link = published("servo6")
    out = run_script("sdo_access.py", link)
    assert "device name ecat simulated CiA 402 servo drive, vendor 0x00000eca" in out
    assert "identity object with complete access: 18 bytes" in out
    assert "abort 0x06020000: object does not exist in the object dictionary" in out
    assert "write abort 0x06010002: attempt to write a read-only object" in out


def test_foe_round_trip_of_100_kib(run_script, published):
    net, link = published("mbx")
    out = run_script("foe_transfer.py", link, "102400")
    assert "wrote 102400 bytes, read 102400 bytes back, equal True" in out
    assert "FoE error: " in out and "missing.bin" in out and "0x8001" in out
    assert "in SAFEOP: read 102400 bytes, equal True" in out


def test_od_listing(run_script, published):
    net, link = published("servo6")
    out = run_script("od_list.py", link)
    # As pysoem shows them: names are bytes, a VAR has no entries, a RECORD's bit size is its
    # entries' sum and its entries are listed by subindex (0x1C32:20 after the gap).
    assert 'Idx: 0x1008; Code: 7; Type: 9; BitSize: 272; Access: 0x7; Name: "b\'Device name\'"' in out
    assert 'Idx: 0x1c32; Code: 9; Type: 41; BitSize: 313; Access: 0x0; Name: "b\'SM output parameter\'"' in out
    assert 'Subindex 32; Type: 1; BitSize: 1; Access: 0x7 Name: "b\'Sync error\'"' in out
    assert 'Name: "b\'Controlword\'"' in out and "Subindex 0; Type: 6; BitSize: 16; Access: 0x7f" not in out
    assert out.count(" Idx: ") > 20


def test_dc_sync(run_script, published):
    net, link = published("dc8")
    out = run_script("dc_sync.py", link)
    assert "8 slaves" in out and "DC: 1" in out
    line = next(l for l in out.splitlines() if l.startswith("state"))
    assert line.startswith("state 8,")
    advanced = int(line.split("advanced ")[1].split()[0])
    assert advanced > 40_000_000  # 50 cycles of at least 1 ms


def test_process_data_through_slave_output_and_input(published):
    net, link = published("io", virtual_time=True)
    with pysoem.open(link) as m:
        assert m.config_init() == 5
        assert m.config_map() == 12
        assert m.state_check(pysoem.SAFEOP_STATE, 50000) == pysoem.SAFEOP_STATE
        m.state = pysoem.OP_STATE
        m.write_state()
        assert m.state_check(pysoem.OP_STATE, 500000) == pysoem.OP_STATE
        s = m.slaves
        assert (s[1].man, s[1].id) == (2, 0x07D83052)
        with pytest.raises(AttributeError, match="1 output bytes, got 2"):
            s[1].output = b"\x00\x00"
        s[3].output = struct.pack("<hh", 1000, -1000)
        net.set_inputs(2, b"\x0f")
        for _ in range(3):
            m.send_processdata()
            assert m.receive_processdata(2000) == m.expected_wkc == 6
        assert net.outputs(3) == struct.pack("<hh", 1000, -1000)
        assert s[2].input == b"\x0f"
        assert s[1].eeprom_read(0x0008)[:4] == (2).to_bytes(4, "little")
        assert not s[1].is_lost and s[1].recover() == 1
        assert pysoem.al_status_code_to_string(0x001D) == "invalid output configuration"


def test_unsupported_features_name_themselves(published):
    net, link = published("servo6")
    m = pysoem.Master()
    m.open(link)
    m.config_init()
    with pytest.raises(pysoem.FoeError, match="FoE read of 'f'"):
        m.slaves[0].foe_read("f", 0, 100)
    with pytest.raises(pysoem.NotSupportedError, match="cable redundancy"):
        pysoem.Master().open(link, "eth1")
    with pytest.raises(pysoem.NotSupportedError, match="config_overlap_map"):
        m.config_overlap_map()
    with pytest.raises(pysoem.SdoError) as e:
        m.slaves[0].sdo_read(0x1234, 0)
    assert e.value.abort_code == 0x06020000 and isinstance(e.value, ecat.Error)
    m.close()


def test_no_io_map_size_limit():
    # SOEM's IOmap is 4096 bytes; 260 drives map 16 bytes each (6 out, 10 in).
    text = "\n".join(['[[subdevice]]\nmodel = "ECAT-SERVO-402"'] * 260)
    net = ecat.sim.Network.from_toml(text)
    name = ecat.sim.publish(net, "pytest-big")
    try:
        with pysoem.open(name) as m:
            assert m.config_init() == 260
            assert m.config_map() == 260 * 16 > 4096
            assert m.state_check(pysoem.SAFEOP_STATE, 2_000_000) == pysoem.SAFEOP_STATE
            m.send_processdata()
            assert m.receive_processdata(2000) == m.expected_wkc
    finally:
        ecat.sim.unpublish("pytest-big")


def test_emergency_callbacks(published):
    """An emergency the simulated device sends in OP reaches add_emergency_callback's
    callback from receive_processdata; where the runtime reads mailboxes only during SDO
    transfers, from the next sdo_read (and the test is an expected failure)."""
    net, link = published("servo6", virtual_time=True)
    m = pysoem.Master()
    m.open(link)
    m.config_init()
    got = []
    m.slaves[2].add_emergency_callback(got.append)
    m.config_map()
    m.state = pysoem.OP_STATE
    m.write_state()
    assert m.state_check(pysoem.OP_STATE, 500000) == pysoem.OP_STATE
    net.send_emergency(2, 0x8611, 0x21, b"\x01\x02\x03\x04\x05")
    for _ in range(100):
        m.send_processdata()
        m.receive_processdata(2000)
        if got:
            break
    cyclic = bool(got)
    if not cyclic:
        m.slaves[2].sdo_read(0x6041, 0)
    assert len(got) == 1
    e = got[0]
    assert (e.slave_pos, e.error_code, e.error_reg, e.b1, e.w1, e.w2) == (2, 0x8611, 0x21, 1, 0x0302, 0x0504)
    m.close()
    assert cyclic, "the emergency arrived only with an SDO transfer, not through the cyclic SM1 status"


def test_soem_naming_and_errors_of_slaves_without_coe():
    # SOEM names a slave by its SII's first string, and later slaves with the same vendor,
    # product and revision by the first one's (the ENI gives each drive its own SII name).
    eni = Path(__file__).parents[2] / "testdata" / "eni" / "twincat-style-4xElmoGold-IMU.xml"
    name = ecat.sim.publish(ecat.sim.Network.from_eni(eni), "pytest-eni-names")
    try:
        with pysoem.open(name) as m:
            assert m.config_init() == 5
            assert [s.name for s in m.slaves] == ["Imu"] + ["WheelRearLeft"] * 4
    finally:
        ecat.sim.unpublish("pytest-eni-names")
    # No CoE mailbox (the EK1100): SOEM's transfer gets a working counter of 0, pysoem raises
    # WkcError.
    name = ecat.sim.publish(ecat.sim.Network("io"), "pytest-io-wkc")
    try:
        with pysoem.open(name) as m:
            m.config_init()
            with pytest.raises(pysoem.WkcError, match="has no CoE mailbox"):
                m.slaves[0].sdo_read(0x1000, 0)
    finally:
        ecat.sim.unpublish("pytest-io-wkc")
