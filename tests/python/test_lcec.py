"""LinuxCNC's EtherCAT driver (linuxcnc-ethercat, "lcec", the largest group of IgH-API users)
on ecat: built unchanged from ../shared/testdata/clients/linuxcnc-ethercat against the installed
libethercat.so.1 and ecrt.h, and run headless by LinuxCNC's user-space realtime (halcmd,
rtapi_app) on simulated networks.

Each configuration is an lcec XML file and the usual HAL file (`loadusr -W lcec_conf`, `loadrt
lcec`, a 1 ms thread with `lcec.read-all`/`lcec.write-all`, `start`); the master's link is one
end of a veth pair (ECAT_MASTER0=raw:...), the simulated network is served from this process on
the other end, so a test sets the devices' inputs and reads the outputs they apply while lcec
runs. Configurations: (a) digital terminals, (b) analog terminals, (c) lcec's generic PDO
configuration in two sync units, (d) CiA 402 drives with DC, (e) the XML lcec_configgen writes
from our `ethercat` tool. Checked for each: every slave in OP (lcec's slave-oper,
slave-state-op and all-op pins, every domain's working counter complete, the simulated
devices' AL status), HAL pins following the simulated inputs, outputs set with `halcmd setp`
reaching the devices; for the drives the statusword following the controlword, the actual
velocity following the commanded one and SYNC0 programmed.

Needs root (rtapi_app as root with RTAPI_UID, the veth pair; CI is root), Debian's
linuxcnc-uspace-dev and libexpat1-dev (scripts/test.sh installs them) and the release build's
libethercat.a; see lcec_rig.py for how the session is run.
"""

import os
import secrets
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import ecat.sim
import lcec_rig
from lcec_rig import HalSession, build_lcec, linked_library

sys.path.insert(0, str(Path(__file__).parents[1] / "oracle"))
from helpers import need  # noqa: E402  (tests/oracle: skip, or fail in a strict CI run)

ESI_DIR = lcec_rig.LCEC_SRC.parents[1] / "esi"
BECKHOFF = 0x00000002
PERIOD_NS = 1_000_000

# Building lcec (first test) takes minutes on a busy machine.
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def lcec():
    need(lcec_rig.unavailable_reason())
    root = Path(tempfile.mkdtemp(prefix="ecat-lcec-"))
    try:
        yield build_lcec(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def serve_realtime(net, iface: str) -> None:
    """Serve `net` on `iface` from a SCHED_FIFO thread (it inherits this thread's policy, set
    for the call only): under SCHED_OTHER on a loaded two-core machine the serving thread
    missed the 1 ms cycle often enough that lcec counted some 700 working counter changes
    in 5 s; on FIFO none. It blocks in recv between frames, so it takes no CPU from others."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(40))
    except OSError:
        pass
    try:
        net.serve(iface)
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


@pytest.fixture
def served():
    """start(toml) serves a network on one end of a fresh veth pair; returns (net, link)."""
    tag = f"{os.getpid() % 1000}{secrets.token_hex(2)}"
    a, b = f"lca{tag}", f"lcb{tag}"
    nets = []

    def ip(*args):
        subprocess.run(["ip", *args], check=True, capture_output=True, timeout=20)

    def start(toml: str):
        ip("link", "add", a, "type", "veth", "peer", "name", b)
        for i in (a, b):
            subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{i}.disable_ipv6=1"], capture_output=True)
            ip("link", "set", i, "up")
        net = ecat.sim.Network.from_toml(toml, virtual_time=False, esi_dirs=[str(ESI_DIR)])
        serve_realtime(net, a)
        nets.append(net)
        return net, f"raw:{b}"

    try:
        yield start
    finally:
        for n in nets:
            n.stop_serving()
        subprocess.run(["ip", "link", "del", a], capture_output=True)


@pytest.fixture
def hal(lcec):
    """start(link, xml) runs one LinuxCNC session with lcec; stopped at the end."""
    sessions = []

    def start(link: str, xml: str, conf_file: bool = False) -> HalSession:
        s = HalSession(lcec, link, PERIOD_NS, conf_file)
        sessions.append(s)
        s.start(xml)
        return s

    try:
        yield start
    finally:
        for s in sessions:
            s.stop()


def network(*models: str) -> str:
    """A network file: catalogue models by name, ESI types as "esi:FILE:TYPE"."""
    out = []
    for m in models:
        if m.startswith("esi:"):
            _, f, t = m.split(":")
            out.append(f'[[subdevice]]\nesi = "{f}"\ntype = "{t}"\n')
        else:
            out.append(f'[[subdevice]]\nmodel = "{m}"\n')
    return "\n".join(out)


def masters(*slaves: str) -> str:
    body = "\n".join(slaves)
    return (f'<masters>\n<master idx="0" appTimePeriod="{PERIOD_NS}" refClockSyncCycles="1000">\n'
            f"{body}\n</master>\n</masters>\n")


def bit_pdos(sm: int, direction: str, pdo_base: int, obj_base: int, pin: str) -> str:
    """A generic slave's sync manager with eight one-bit PDOs (Beckhoff's digital layout)."""
    pdos = "".join(
        f'<pdo idx="{pdo_base + k:04x}"><pdoEntry idx="{obj_base + 0x10 * k:04x}" subIdx="01" '
        f'bitLen="1" halPin="{pin}-{k}" halType="bit"/></pdo>'
        for k in range(8))
    return f'<syncManager idx="{sm}" dir="{direction}">{pdos}</syncManager>'


def wait_op(s: HalSession, net, names: list[str], timeout: float = 30.0) -> None:
    """Every named slave in OP as lcec sees it (slave-oper, slave-state-op, all-op, every
    domain's working counter complete: wkc-state 2) and as the simulated devices say (AL
    status 0x0130 of positions 0.., in the order named)."""
    def ok():
        p = s.pins()
        return p.get("lcec.0.all-op") == "TRUE" and p.get("lcec.0.wkc-state") == "2" and all(
            p.get(f"lcec.0.{n}.slave-oper") == "TRUE" and p.get(f"lcec.0.{n}.slave-state-op") == "TRUE"
            for n in names)
    s.wait_for(f"slaves {', '.join(names)} in OP (slave-oper, slave-state-op, all-op, wkc-state)", ok, timeout)
    states = [net.read_register(pos, 0x0130, 2)[0] for pos in range(len(names))]
    assert states == [0x08] * len(names), f"AL status of the simulated devices: {states}"


def bits_of(s: HalSession, prefix: str) -> int:
    p = s.pins(prefix)
    return sum(1 << k for k in range(8) if p.get(f"{prefix}-{k}") == "TRUE")


def set_bits(s: HalSession, prefix: str, value: int) -> None:
    for k in range(8):
        s.setp(f"{prefix}-{k}", bool(value >> k & 1))


def test_lcec_builds_against_libethercat(lcec):
    """lcec's own Makefile, unchanged, builds lcec.so and lcec_conf against our ecrt.h, every
    ecrt_ function lcec.so needs is one libethercat.so.1 defines, and lcec's unit tests pass."""
    lib = lcec.prefix / "lib" / "libethercat.so.1"
    for binary in (lcec.bindir / "lcec.so", lcec.bindir / "lcec_conf"):
        assert linked_library(lcec, binary) == str(lib), f"{binary.name} does not load {lib}"
    nm = lambda *a: subprocess.run(["nm", "-D", *a], capture_output=True, text=True, check=True).stdout  # noqa: E731
    needed = {ln.split()[-1].split("@")[0] for ln in nm("--undefined-only", lcec.bindir / "lcec.so").splitlines()
              if "ecrt_" in ln}
    defined = {ln.split()[-1].split("@")[0] for ln in nm("--defined-only", lib).splitlines()}
    assert len(needed) >= 30, needed
    assert needed <= defined, f"lcec needs ecrt functions libethercat lacks: {sorted(needed - defined)}"
    # lcec's own unit tests (`make test`: CiA 402 options, lookups, module parameters), linked
    # against libethercat.so.1 like lcec itself.
    p = subprocess.run(["make", "-C", lcec.src, "test"], env=lcec_rig.make_env(lcec), capture_output=True,
                       text=True, timeout=600, stdin=subprocess.DEVNULL)
    out = p.stdout + p.stderr  # lcec's test programs report on stderr
    assert p.returncode == 0 and out.count("All tests pass.") == 3 and "FAIL" not in out, \
        f"lcec's make test (exit {p.returncode}):\n{out[-4000:]}"


def test_digital_terminals(lcec, served, hal):
    """(a) EK1100, EL2008, EL1018, EL1008 with lcec's own drivers; the EL2008 unplugged and
    plugged back in while lcec runs."""
    net, link = served(network("EK1100", "EL2008", "EL1018", "EL1008"))
    s = hal(link, masters('<slave idx="0" type="EK1100" name="ek"/>',
                          '<slave idx="1" type="EL2008" name="dout"/>',
                          '<slave idx="2" type="EL1018" name="din"/>',
                          '<slave idx="3" type="EL1008" name="din8"/>'))
    wait_op(s, net, ["ek", "dout", "din", "din8"])
    assert s.getp("lcec.0.slaves-responding") == "4"
    for value in (0xA5, 0x3C):
        net.set_inputs(2, bytes([value]))
        net.set_inputs(3, bytes([value ^ 0xFF]))
        s.wait_for(f"EL1018 inputs 0x{value:02x} on din-0..7, EL1008 0x{value ^ 0xFF:02x}",
                   lambda: bits_of(s, "lcec.0.din.din") == value and bits_of(s, "lcec.0.din8.din") == value ^ 0xFF)
        assert s.getb("lcec.0.din.din-1-not") == (not value & 2)
    for value in (0x96, 0x41):
        set_bits(s, "lcec.0.dout.dout", value)
        s.wait_for(f"EL2008 applies 0x{value:02x}", lambda: net.outputs(1) == bytes([value]))
    # A terminal pulled out and put back powered down: lcec sees it go and come back, and it
    # is configured again to OP without restarting LinuxCNC.
    net.unplug(1)
    s.wait_for("EL2008 unplugged: slave-online FALSE, 3 responding",
               lambda: not s.getb("lcec.0.dout.slave-online") and s.getp("lcec.0.slaves-responding") == "3")
    net.replug(1, True)
    wait_op(s, net, ["ek", "dout", "din", "din8"])
    set_bits(s, "lcec.0.dout.dout", 0x18)
    s.wait_for("EL2008 back: applies 0x18", lambda: net.outputs(1) == b"\x18")
    # IgH's tool path: the ecat tool asks the running lcec through master 0's control socket.
    tool = Path(os.environ.get("ECAT_BIN") or lcec_rig.REPO / "target" / "release" / "ecat")
    need(None if tool.is_file() else f"{tool} is not built (cargo build --release -p ecat-cli)")
    env = dict(os.environ, ECAT_CONTROL_DIR=s.env["ECAT_CONTROL_DIR"])
    for cmd, rows in ((["slaves", "-m", "0"], 4), (["config", "-m", "0"], 4)):
        p = subprocess.run([tool, *cmd], env=env, capture_output=True, text=True, timeout=60)
        lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
        assert p.returncode == 0 and len(lines) == rows and all(" OP" in ln for ln in lines), \
            f"ecat {' '.join(cmd)} beside lcec (exit {p.returncode}):\n{p.stdout}{p.stderr}"


def test_analog_terminals(lcec, served, hal):
    """(b) EL3102 and EL4132 (the simulator's catalogue) and an EL4102 built from Beckhoff's
    ESI, whose fixed mapping has other entry names than the ones lcec asks for. The link is
    named in an ecat.conf file (MASTER0_DEVICE=, as in /etc/ecat.conf), not the environment."""
    net, link = served(network("EK1100", "EL3102", "EL4132", "esi:Beckhoff_EL4xxx.xml:EL4102"))
    s = hal(link, masters('<slave idx="0" type="EK1100" name="ek"/>',
                          '<slave idx="1" type="EL3102" name="ain"/>',
                          '<slave idx="2" type="EL4132" name="aout"/>',
                          '<slave idx="3" type="EL4102" name="aout2"/>'), conf_file=True)
    wait_op(s, net, ["ek", "ain", "aout", "aout2"])
    for raw0, raw1 in ((16383, -8192), (-32767, 1000)):
        net.set_inputs(1, struct.pack("<BhBh", 0, raw0, 0, raw1))
        s.wait_for(f"EL3102 raw values {raw0}, {raw1} on ain-0/1-raw",
                   lambda: (s.getp("lcec.0.ain.ain-0-raw"), s.getp("lcec.0.ain.ain-1-raw")) == (str(raw0), str(raw1)))
        assert s.getf("lcec.0.ain.ain-0-val") == pytest.approx(raw0 / 0x7FFF, abs=1e-4)
    net.set_inputs(1, struct.pack("<BhBh", 0x02, 0, 0x41, 0))
    s.wait_for("EL3102 status bits on ain-0-overrange and ain-1-error/underrange",
               lambda: s.getb("lcec.0.ain.ain-0-overrange") and s.getb("lcec.0.ain.ain-1-error")
               and s.getb("lcec.0.ain.ain-1-underrange"))
    for name, pos in (("aout", 2), ("aout2", 3)):
        for ch, value in ((0, 0.5), (1, -0.25)):
            s.setp(f"lcec.0.{name}.aout-{ch}-enable", True)
            s.setp(f"lcec.0.{name}.aout-{ch}-value", value)
        want = struct.pack("<hh", int(0x7FFF * 0.5), int(0x7FFF * -0.25))
        s.wait_for(f"{name} applies 0.5 and -0.25 of full scale ({want.hex()})",
                   lambda: net.outputs(pos) == want)


def test_generic_pdo_configuration(lcec, served, hal):
    """(c) lcec's generic driver: sync managers, PDOs and entries from the XML (configPdos),
    with the mailbox sync managers listed empty as IgH's cstruct output does, in two sync
    units (one domain each, exchanged every cycle and every second cycle)."""
    net, link = served(network("EK1100", "EL1008", "EL2008", "EL3102", "EL4132"))
    analog_in = (
        '<syncManager idx="0" dir="out"/><syncManager idx="1" dir="in"/>'
        '<syncManager idx="2" dir="out"/><syncManager idx="3" dir="in">'
        '<pdo idx="1a00"><pdoEntry idx="3101" subIdx="01" bitLen="8" halPin="status-0" halType="u32"/>'
        '<pdoEntry idx="3101" subIdx="02" bitLen="16" halPin="value-0" halType="s32"/></pdo>'
        '<pdo idx="1a01"><pdoEntry idx="3102" subIdx="01" bitLen="8" halPin="status-1" halType="u32"/>'
        '<pdoEntry idx="3102" subIdx="02" bitLen="16" halPin="volts-1" halType="float" scale="0.001"/>'
        '</pdo></syncManager>')
    analog_out = (
        '<syncManager idx="0" dir="out"/><syncManager idx="1" dir="in"/><syncManager idx="2" dir="out">'
        '<pdo idx="1600"><pdoEntry idx="6411" subIdx="01" bitLen="16" halPin="out-0" halType="s32"/></pdo>'
        '<pdo idx="1601"><pdoEntry idx="6411" subIdx="02" bitLen="16" halPin="out-1" halType="float" '
        'scale="100"/></pdo></syncManager>')

    def generic(idx, pid, name, body, unit):
        return (f'<slave idx="{idx}" type="generic" vid="{BECKHOFF:08x}" pid="{pid:08x}" name="{name}" '
                f'configPdos="true" {unit}>{body}</slave>')

    # Two sync units (lcec's multi-rate domains): outputs every cycle, inputs every second.
    fast, slow = 'syncUnit="fast" syncUnitCycle="*1"', 'syncUnit="slow" syncUnitCycle="*2"'
    s = hal(link, masters(f'<slave idx="0" type="EK1100" name="ek" {fast}/>',
                          generic(1, 0x03F03052, "gin", bit_pdos(0, "in", 0x1A00, 0x6000, "in"), slow),
                          generic(2, 0x07D83052, "gout", bit_pdos(0, "out", 0x1600, 0x7000, "out"), fast),
                          generic(3, 0x0C1E3052, "gain", analog_in, slow),
                          generic(4, 0x10243052, "gaout", analog_out, fast)))
    wait_op(s, net, ["ek", "gin", "gout", "gain", "gaout"])
    net.set_inputs(1, b"\x5a")
    net.set_inputs(3, struct.pack("<BhBh", 7, -1234, 0, 2500))
    s.wait_for("generic inputs: bits 0x5a, status 7, value -1234, 2.5 (2500 x 0.001)",
               lambda: bits_of(s, "lcec.0.gin.in") == 0x5A and s.getp("lcec.0.gain.status-0") == "7"
               and s.getp("lcec.0.gain.value-0") == "-1234"
               and abs(s.getf("lcec.0.gain.volts-1") - 2.5) < 1e-9)
    set_bits(s, "lcec.0.gout.out", 0xC3)
    s.setp("lcec.0.gaout.out-0", -300)
    s.setp("lcec.0.gaout.out-1", 12.5)
    s.wait_for("generic outputs: EL2008 0xc3, EL4132 -300 and 1250 (12.5 x 100)",
               lambda: net.outputs(2) == b"\xc3" and net.outputs(4) == struct.pack("<hh", -300, 1250))


def drive_follows(s: HalSession, pos: int, cw: str, sw: str, target: str, actual: str) -> None:
    """Walk the CiA 402 state machine to Operation enabled by the controlword pin, then
    command velocities and see the actual velocity pin follow."""
    for word, state, mask in ((0x06, 0x21, 0x6F), (0x07, 0x23, 0x6F), (0x0F, 0x27, 0x6F)):
        s.setp(cw, word)
        s.wait_for(f"drive {pos}: controlword 0x{word:04x} gives statusword & 0x{mask:02x} == 0x{state:02x}",
                   lambda: int(s.getp(sw), 0) & mask == state)
    for v in (2_000_000, -500_000):  # increments/s (2^20 per revolution)
        s.setp(target, v)
        s.wait_for(f"drive {pos}: actual velocity follows {v}",
                   lambda: abs(float(s.getp(actual)) - v) <= max(abs(v) // 100, 1))


def test_cia402_drives_with_dc(lcec, served, hal):
    """(d) Two CiA 402 drives with DC (SYNC0 every cycle): one with lcec's basic_cia402
    driver (it maps its own PDOs), one generic with the drive's CSV mapping and a startup
    SDO for the mode of operation."""
    net, link = served(network("ECAT-SERVO-402", "ECAT-SERVO-402"))
    dc = '<dcConf assignActivate="300" sync0Cycle="*1" sync0Shift="0"/>'
    generic = (
        '<slave idx="1" type="generic" vid="00000eca" pid="00000402" name="gdrv" configPdos="true">'
        f'{dc}<sdoConfig idx="6060" subIdx="0"><sdoDataRaw data="09"/></sdoConfig>'
        '<syncManager idx="0" dir="out"/><syncManager idx="1" dir="in"/>'
        '<syncManager idx="2" dir="out"><pdo idx="1600">'
        '<pdoEntry idx="6040" subIdx="00" bitLen="16" halPin="controlword" halType="u32"/>'
        '<pdoEntry idx="60ff" subIdx="00" bitLen="32" halPin="target-velocity" halType="s32"/>'
        '</pdo></syncManager>'
        '<syncManager idx="3" dir="in"><pdo idx="1a00">'
        '<pdoEntry idx="6041" subIdx="00" bitLen="16" halPin="statusword" halType="u32"/>'
        '<pdoEntry idx="6064" subIdx="00" bitLen="32" halPin="position" halType="s32"/>'
        '<pdoEntry idx="606c" subIdx="00" bitLen="32" halPin="velocity" halType="s32"/>'
        '</pdo></syncManager></slave>')
    s = hal(link, masters(
        f'<slave idx="0" type="basic_cia402" vid="0x00000eca" pid="0x00000402" name="drv">{dc}</slave>',
        generic))
    wait_op(s, net, ["drv", "gdrv"])
    for pos in (0, 1):
        # assignActivate 0x300: SYNC0 on (0x0981 = 0x03), its cycle the HAL thread's period.
        assert net.read_register(pos, 0x0981, 1) == b"\x03", f"drive {pos}: SYNC0 not activated"
        assert net.read_register(pos, 0x09A0, 4) == struct.pack("<I", PERIOD_NS), f"drive {pos}: SYNC0 cycle"
    assert s.getp("lcec.0.drv.srv-opmode-display") == "9", "basic_cia402 did not put the drive in CSV"
    drive_follows(s, 0, "lcec.0.drv.srv-cia-controlword", "lcec.0.drv.srv-cia-statusword",
                  "lcec.0.drv.srv-target-velocity", "lcec.0.drv.srv-actual-velocity")
    drive_follows(s, 1, "lcec.0.gdrv.controlword", "lcec.0.gdrv.statusword",
                  "lcec.0.gdrv.target-velocity", "lcec.0.gdrv.velocity")


@pytest.mark.xfail(
    reason="lcec's basic_cia402 with every mode of the simulated drive maps more TxPDO data than "
    "the drive's 0x1A00 holds (8 entries, 32 bytes: the simulator's SM2/SM3 buffer spacing); the "
    "drive refuses the mapping write and, rightly, SAFEOP (passed before the simulator checked "
    "SM sizes by the SSC's rules); needs a drive model with room for it",
    strict=False,
)
def test_configgen_output_runs(lcec, served, hal):
    """(e) lcec's own configuration generator, lcec_configgen, which runs IgH's `ethercat`
    tool (`slaves`, `sdos`, `pdos`, `upload`) and parses its output: here the `ethercat`
    that install-capi.sh installs beside libethercat.so.1, on the bus without an application.
    Its XML, unchanged, brings terminals and a CiA 402 drive (basic_cia402 with every mode
    the drive lists) to OP under lcec."""
    ethercat = lcec.prefix / "bin" / "ethercat"
    need(None if ethercat.exists() else f"{ethercat} is not installed (cargo build --release -p ecat-cli)")
    net, link = served(network("EK1100", "EL2008", "EL1018", "EL4132", "EL3102", "ECAT-SERVO-402"))
    env = dict(os.environ, PATH=f"{ethercat.parent}:{os.environ.get('PATH', '/usr/bin')}",
               LD_LIBRARY_PATH=str(lcec.prefix / "lib"), ECAT_MASTER0=link,
               ECAT_CONTROL_DIR=tempfile.mkdtemp(prefix="ecat-noapp-"))
    try:
        p = subprocess.run([lcec.bindir / "lcec_configgen"], env=env, capture_output=True, text=True,
                           timeout=300, stdin=subprocess.DEVNULL)
    finally:
        shutil.rmtree(env["ECAT_CONTROL_DIR"], ignore_errors=True)
    assert p.returncode == 0, f"lcec_configgen failed (exit {p.returncode}):\n{p.stdout}{p.stderr[-3000:]}"
    xml = p.stdout
    types = [ln.split('type="')[1].split('"')[0] for ln in xml.splitlines() if "<slave " in ln]
    assert types == ["EK1100", "EL2008", "EL1018", "EL4132", "EL3102", "basic_cia402"], xml
    s = hal(link, xml)
    names = [f"D{k}" for k in range(1, 7)]
    wait_op(s, net, names)
    net.set_inputs(2, b"\x66")
    s.wait_for("EL1018 inputs 0x66 on D3's din pins", lambda: bits_of(s, "lcec.0.D3.din") == 0x66)
    set_bits(s, "lcec.0.D2.dout", 0x99)
    s.wait_for("EL2008 applies 0x99 set on D2's dout pins", lambda: net.outputs(1) == b"\x99")
