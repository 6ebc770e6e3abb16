"""The Pythonic API end to end on the built-in `io` network (EK1100, EL2008, EL1018, EL4132,
EL3102), in-process on virtual time."""

import pytest

import ecat
import ecat.sim


@pytest.fixture
def io():
    net = ecat.sim.Network("io")
    md = ecat.MainDevice(net)
    yield net, md
    md.close()


def test_scan_names_identity_and_states(io):
    net, md = io
    subs = md.scan()
    assert [s.order for s in subs] == ["EK1100", "EL2008", "EL1018", "EL4132", "EL3102"]
    assert subs[1].identity.vendor_id == 2
    assert subs[1].identity.product_code == 0x07D83052
    assert subs[1].station == 0x1002 and subs[1].position == 1
    assert subs[0].state == "INIT"
    assert len(subs[0].sii) > 64
    assert "EL2008" in repr(subs[1])


def test_outputs_by_name_are_applied_and_pinned_inputs_read(io):
    net, md = io
    md.scan()
    rt = md.activate(cycle="1ms", start=False)
    assert rt.states() == ["OP"] * 5
    w, expected = rt.wkc()
    assert w == expected == rt.expected_wkc
    out = rt.subdevice(3).outputs
    assert out.keys() == ["Channel 1", "Channel 2"]
    out["Channel 1"] = 0x3FFF
    out["Channel 2"] = -2
    rt.subdevice(1).outputs["Channel 3"] = True
    rt.step(2)
    assert net.outputs(3) == (0x3FFF).to_bytes(2, "little") + (-2).to_bytes(2, "little", signed=True)
    assert net.outputs(1) == bytes([0b100])
    assert out["Channel 2"] == -2
    net.set_inputs(2, b"\x81")
    rt.step(2)
    inp = rt.subdevice(2).inputs
    assert bytes(inp.raw) == b"\x81"
    assert inp["Channel 1"] is True and inp["Channel 2"] is False and inp["Channel 8"] is True
    assert inp["0x6000:01"] is True and inp[0x6010, 1] is False


def test_memoryview_writes_reach_the_devices(io):
    net, md = io
    md.scan()
    rt = md.activate(start=False)
    raw = rt.subdevice(1).outputs.raw
    assert isinstance(raw, memoryview) and not raw.readonly
    raw[0] = 0xA5
    rt.step()
    assert net.outputs(1) == b"\xa5"
    with pytest.raises(KeyError, match="entries: 'Channel 1'"):
        rt.subdevice(1).outputs["nope"]


def test_numpy_wraps_the_image_without_copies(io):
    np = pytest.importorskip("numpy")
    net, md = io
    md.scan()
    rt = md.activate(start=False)
    a = np.frombuffer(rt.subdevice(3).outputs.raw, dtype="<i2")
    a[:] = [100, -100]
    rt.step()
    assert net.outputs(3) == np.array([100, -100], dtype="<i2").tobytes()


def test_context_manager_leaves_init_after_an_exception():
    net = ecat.sim.Network("io")
    with pytest.raises(RuntimeError):
        with ecat.MainDevice(net) as md:
            md.scan()
            md.activate(start=False)
            raise RuntimeError("boom")
    assert net.read_register(1, 0x0130, 2)[0] & 0x0F == 1


def test_thread_mode_cycles_with_perf_figures():
    net = ecat.sim.Network("io", virtual_time=False)
    with ecat.MainDevice(net) as md:
        md.scan()
        rt = md.activate(cycle="1ms", realtime=False)
        assert rt.running
        rt.subdevice(1).outputs["Channel 1"] = 1
        import time

        deadline = time.time() + 5
        while net.outputs(1) != b"\x01" and time.time() < deadline:
            time.sleep(0.01)
        assert net.outputs(1) == b"\x01"
        # Wait for 50 cycles' figures (copied out every 100 ms) rather than sleeping 0.3 s: a
        # stall of the shared VM during a fixed sleep leaves fewer cycles run than it assumes.
        deadline = time.time() + 30
        while rt.perf().get("task_duration", {}).get("count", 0) <= 50 and time.time() < deadline:
            time.sleep(0.05)
        p = rt.perf()
        assert p["task_duration"]["count"] > 50
        # The median, not the mean: one cycle stretched by a ~1 s VM stall moves the mean of a
        # few hundred cycles past 2 ms; a thread not cycling at 1 ms moves the median.
        assert 500 < p["cycle_time"]["p50_us"] < 2000, p["cycle_time"]
        assert p["task_duration"]["line"].startswith("PerfMsmt 'Task Duration'")
        assert rt.states() == ["OP"] * 5
        c = rt.counters()
        assert c["frames_sent"] > 50
        rt.stop()
        assert not rt.running
        rt.step()


def test_pysoem_style_string_link_runs_in_process():
    with ecat.MainDevice("sim:io") as md:
        assert len(md.scan()) == 5


def test_errors_are_exceptions_with_our_sentences():
    with pytest.raises(ecat.LinkError, match="does not exist|cannot understand|permission"):
        ecat.MainDevice("nosuchif0")
    with pytest.raises(ecat.LinkError, match="unknown link type"):
        ecat.MainDevice("foo:bar")
    with pytest.raises(ecat.SimError):
        ecat.sim.Network("nosuchpreset")
    net = ecat.sim.Network("io")
    with ecat.MainDevice(net) as md:
        md.scan()
        with pytest.raises(ecat.Error, match="unknown state"):
            md.request_state("RUN")
        with pytest.raises(ValueError, match="cannot understand the duration"):
            md.activate(cycle="fast")
    assert issubclass(ecat.SdoAbort, ecat.Error) and issubclass(ecat.AlStatusError, ecat.Error)


def test_refused_state_raises_al_status_error_with_code():
    # OP straight from the configuration phase: no process data SyncManagers are set, so a
    # SubDevice with outputs refuses SAFEOP with an AL status code.
    net = ecat.sim.Network("io")
    with ecat.MainDevice(net) as md:
        md.scan()
        with pytest.raises(ecat.AlStatusError) as e:
            md.request_state("SAFEOP", timeout=2.0)
        assert e.value.code != 0
        assert e.value.text
        assert f"0x{e.value.code:04X}" in str(e.value)


def _holds_cpu_latency() -> bool:
    """Whether this process has /dev/cpu_dma_latency open (the cycle thread's hold)."""
    import os

    fds = os.listdir("/proc/self/fd")
    return any(os.path.realpath(f"/proc/self/fd/{fd}") == "/dev/cpu_dma_latency" for fd in fds)


def test_the_cycle_thread_holds_the_cpu_latency_while_it_runs():
    import os

    if os.geteuid() != 0 or not os.path.exists("/dev/cpu_dma_latency"):
        pytest.skip("holding /dev/cpu_dma_latency needs root and the file")
    net = ecat.sim.Network("io", virtual_time=False)
    with ecat.MainDevice(net) as md:
        md.scan()
        rt = md.activate(cycle="1ms", start=False)
        # An ordinary thread (as the other tests here), with the hold asked for explicitly.
        notes = rt.start(realtime=False, latency_hold=True)
        assert "idle states held off (cpu_dma_latency 0)" in notes, notes
        assert _holds_cpu_latency()
        rt.stop()
        assert not _holds_cpu_latency(), "the hold ends with the cycle thread"
        notes = rt.start(realtime=False)
        assert not any("cpu_dma_latency" in n for n in notes), notes
        assert not _holds_cpu_latency()
        rt.stop()
