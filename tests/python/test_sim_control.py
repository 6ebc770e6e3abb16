"""ecat.sim from Python: presets, TOML, faults, scheduled events, power-cycle, and the value
conversions the API uses."""

import pytest

import ecat
import ecat.sim
from ecat._types import decode, encode, parse_duration


def test_presets_and_toml():
    assert {"io", "servo6", "dc8"} <= set(ecat.sim.presets())
    net = ecat.sim.Network.from_toml('[[subdevice]]\nmodel = "EK1100"\n[[subdevice]]\nmodel = "EL2008"\n')
    assert [d["order"] for d in net.summary()] == ["EK1100", "EL2008"]
    with pytest.raises(ecat.SimError, match="unknown field"):
        ecat.sim.Network.from_toml("[[nothing]]\n")
    with pytest.raises(ecat.SimError, match="not a probability"):
        net.set_faults(drop_rate=2.0)
    with pytest.raises(ecat.SimError, match="unknown action"):
        net.schedule(0, "explode", 1)


def test_dropped_frames_are_counted_and_cycling_goes_on():
    net = ecat.sim.Network("io")
    with ecat.MainDevice(net) as md:
        md.scan()
        rt = md.activate(start=False)
        net.set_faults(drop_rate=0.05, seed=7)
        rt.step(1000)
        c = rt.counters()
        assert 20 < c["frames_lost"] < 100
        net.set_faults()
        rt.step(200)
        assert rt.wkc() == (6, 6)
        assert rt.states() == ["OP"] * 5


def test_scheduled_power_cycle_is_recovered():
    net = ecat.sim.Network("io")
    with ecat.MainDevice(net) as md:
        md.scan()
        rt = md.activate(start=False)
        list(rt.events)
        net.schedule(net.now_ns + 10_000_000, "power_cycle", 4)
        rt.step(3000)
        kinds = {(e.kind, e.position) for e in rt.events}
        assert ("reached", 4) in kinds
        assert rt.states() == ["OP"] * 5


def test_conversions():
    assert parse_duration("1ms") == 1_000_000
    assert parse_duration("250us") == 250_000
    assert parse_duration(0.002) == 2_000_000
    assert decode(b"\xff\xff", "i16") == -1
    assert decode(b"ab\0c", str) == "ab"
    assert encode(-2, size=2) == b"\xfe\xff"
    assert encode(1.5, "f32") == b"\x00\x00\xc0\x3f"
    with pytest.raises(ValueError, match="needs its size"):
        encode(5)
