"""LinuxCNC's EtherCAT driver (linuxcnc-ethercat, "lcec") built against ecat's libethercat.so.1
and run headless by LinuxCNC's user-space realtime (rtapi_app), for tests/python/test_lcec.py.

Design:
- `build_lcec` installs the C API with scripts/install-capi.sh (--no-build: from the release
  build's libethercat.a) into a private prefix, copies lcec's source (GPL, test data beside the
  clone, never part of the product) into a build directory and runs its own Makefile unchanged
  with Debian's halcompile. lcec's Makefile looks for ecrt.h and -lethercat only in LinuxCNC's
  directories, so gcc is pointed at the prefix from outside, through CPATH and LIBRARY_PATH.
- `HalSession` is one LinuxCNC session driven by halcmd, as `halrun` would, but kept open
  between commands so a test can set and read pins while the HAL thread cycles:
  * rtapi_app loads realtime modules only by name from its compiled-in directory
    (/usr/lib/linuxcnc/modules; a path is refused), so the session's first halcmd runs in a
    private mount namespace where a copy of that directory holding the built lcec.so is
    bind-mounted over it. The machine's own directory is never written.
  * As root, rtapi_app needs RTAPI_UID (a user it runs its file accesses as; it keeps euid 0,
    so ecat's raw socket opens): nobody here. Its socket directory and ecat's control socket
    directory (ECAT_CONTROL_DIR) belong to that user, everything it loads is world-readable.
  * rtapi_app runs on as a daemon holding its stderr: the first halcmd's output goes to a
    log file (a pipe would never reach end of file).
  * The master's link comes from ECAT_MASTER0 or a configuration file in /etc/ecat.conf's
    format named by ECAT_CONF (libethercat's link_config), and rtapi_app
    finds the library through LD_LIBRARY_PATH: a root caller is not a setuid caller to ld.so.
- Only one LinuxCNC realtime can run on a machine (shared memory keys, `ps -C rtapi_app`):
  `unavailable_reason` refuses to start beside one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[2]
RTLIB = Path("/usr/lib/linuxcnc/modules")
NOBODY = 65534

LCEC_SRC = next(
    (p for p in (REPO / d / "clients" / "linuxcnc-ethercat"
                 for d in ("../shared/testdata", "../../shared/testdata", "testdata")) if p.is_dir()),
    REPO / "../shared/testdata/clients/linuxcnc-ethercat",
)


def _run(argv, timeout: float = 60.0, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout, **kw)


def rtapi_running() -> bool:
    """Whether some LinuxCNC realtime (a live rtapi_app, not a zombie) runs on this machine."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # "PID (COMM) STATE ...": the name is between the first "(" and the last ")".
        name = text[text.find("(") + 1:text.rfind(")")]
        if name == "rtapi_app" and text[text.rfind(")") + 2:][:1] != "Z":
            return True
    return False


def unavailable_reason() -> str | None:
    """Why lcec cannot be built and run here, or None."""
    if os.geteuid() != 0:
        return "needs root (rtapi_app runs as root with RTAPI_UID, and a veth pair is made; CI is root)"
    for tool, pkg in (("halcompile", "linuxcnc-uspace-dev"), ("halcmd", "linuxcnc-uspace"),
                      ("rtapi_app", "linuxcnc-uspace"), ("unshare", "util-linux"), ("make", "make")):
        if shutil.which(tool) is None:
            return f"`{tool}` not found: apt-get install {pkg} (scripts/test.sh installs it)"
    if not Path("/usr/include/expat.h").is_file():
        return "expat.h not found: apt-get install libexpat1-dev (scripts/test.sh installs it)"
    if not (LCEC_SRC / "src" / "lcec_main.c").is_file():
        return f"lcec's source is not at {LCEC_SRC} (the shared test data beside the clone)"
    if not (REPO / "target" / "release" / "libethercat.a").is_file():
        return "target/release/libethercat.a is missing: cargo build --release -p ecat-capi"
    if rtapi_running():
        return "a LinuxCNC realtime (rtapi_app) already runs on this machine: stop it with halrun -U"
    return None


class LcecBuild:
    """lcec built against libethercat.so.1 installed in `prefix`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.prefix = root / "prefix"
        self.src = root / "lcec"
        self.modules = root / "modules"

    @property
    def bindir(self) -> Path:
        return self.src / "src"


def build_lcec(root: Path) -> LcecBuild:
    """Install the C API into root/prefix and build lcec in root/lcec; raises with the tail of
    the failing step's output."""
    b = LcecBuild(root)
    p = _run(["sh", REPO / "scripts" / "install-capi.sh", "--no-build", "--prefix", b.prefix,
              "--target-dir", REPO / "target"], timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"scripts/install-capi.sh failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    shutil.copytree(LCEC_SRC, b.src, ignore=shutil.ignore_patterns(".git", "*.o", "*.so", "config.mk"))
    p = _run(["make", "-C", b.src, f"-j{min(os.cpu_count() or 1, 4)}"], timeout=1200, env=make_env(b))
    if p.returncode != 0:
        raise RuntimeError(f"make in lcec's source failed (exit {p.returncode}):\n"
                           f"{p.stdout[-3000:]}{p.stderr[-3000:]}")
    for f in ("lcec.so", "lcec_conf"):
        if not (b.bindir / f).is_file():
            raise RuntimeError(f"lcec's build made no {f}:\n{p.stdout[-2000:]}")
    # rtapi_app's module directory, with lcec.so in it (bind-mounted over the real one per session).
    shutil.copytree(RTLIB, b.modules, symlinks=False)
    shutil.copy2(b.bindir / "lcec.so", b.modules / "lcec.so")
    for d in (root, *root.rglob("*")):
        if d.is_dir():
            d.chmod(0o755)
    return b


def make_env(b: LcecBuild) -> dict:
    """The environment lcec's Makefile runs in: gcc finds ecrt.h and -lethercat in the prefix,
    programs it runs find libethercat.so.1 there."""
    lib = str(b.prefix / "lib")
    return dict(os.environ, CPATH=str(b.prefix / "include"), LIBRARY_PATH=lib, LD_LIBRARY_PATH=lib)


def linked_library(b: LcecBuild, binary: Path) -> str:
    """Where ld.so finds libethercat.so.1 for `binary` (ldd's answer, with the session's path)."""
    p = _run(["ldd", binary], env=dict(os.environ, LD_LIBRARY_PATH=str(b.prefix / "lib")))
    for line in p.stdout.splitlines():
        if "libethercat.so.1" in line:
            return line.split("=>", 1)[-1].split("(")[0].strip()
    return ""


class HalSession:
    """One LinuxCNC session: lcec_conf + lcec + a 1 ms thread, on master 0's `link` (given in
    the environment, or with `conf_file` in an ecat.conf file as /etc/ecat.conf holds it)."""

    def __init__(self, build: LcecBuild, link: str, period_ns: int = 1_000_000,
                 conf_file: bool = False) -> None:
        self.b = build
        self.dir = Path(tempfile.mkdtemp(prefix="ecat-hal-"))
        self.dir.chmod(0o755)
        self.run_dir = self.dir / "run"
        (self.run_dir / "ctl").mkdir(parents=True)
        for d in (self.run_dir, self.run_dir / "ctl"):
            os.chown(d, NOBODY, -1)
        self.log_path = self.dir / "hal.log"
        self.period_ns = period_ns
        self.env = dict(
            os.environ,
            RTAPI_UID=str(NOBODY),
            RTAPI_FIFO_PATH=str(self.run_dir / "rtapi_fifo"),
            HAL_RTMOD_DIR=str(RTLIB),
            PATH=f"{build.bindir}:/usr/bin:{os.environ.get('PATH', '/bin')}",
            LD_LIBRARY_PATH=str(build.prefix / "lib"),
            ECAT_CONTROL_DIR=str(self.run_dir / "ctl"),
        )
        for k in ("ECAT_MASTER0", "ECAT_INTERFACE", "ECAT_CONF"):
            self.env.pop(k, None)
        if conf_file:
            # As /etc/ecat.conf would name it (ECAT_CONF points the library at this copy),
            # read by rtapi_app as RTAPI_UID's user.
            conf = self.dir / "ecat.conf"
            conf.write_text(f"# master 0 of the lcec test\nMASTER0_DEVICE=\"{link}\"\n")
            conf.chmod(0o644)
            self.env["ECAT_CONF"] = str(conf)
        else:
            self.env["ECAT_MASTER0"] = link
        self.started = False

    def halcmd(self, *args: str, timeout: float = 20.0) -> subprocess.CompletedProcess:
        return _run(["halcmd", *args], timeout=timeout, env=self.env, cwd=self.dir)

    def start(self, xml: str, extra_hal: str = "") -> None:
        """Write the lcec configuration and HAL file, load everything and start the thread."""
        (self.dir / "ethercat-conf.xml").write_text(xml)
        hal = (
            "loadusr -W lcec_conf ethercat-conf.xml\n"
            "loadrt lcec\n"
            f"loadrt threads name1=servo-thread period1={self.period_ns}\n"
            "addf lcec.read-all servo-thread\n"
            f"{extra_hal}"
            "addf lcec.write-all servo-thread\n"
            "start\n"
        )
        (self.dir / "setup.hal").write_text(hal)
        mount = f"mount --bind '{self.b.modules}' '{RTLIB}' && exec halcmd -f setup.hal"
        self.started = True
        with open(self.log_path, "w") as log:
            p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", mount],
                               stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                               env=self.env, cwd=self.dir, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"halcmd -f setup.hal failed (exit {p.returncode}):\n{self.log()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def pins(self, prefix: str = "lcec.") -> dict[str, str]:
        """Every pin under `prefix` and its value as halcmd prints it."""
        p = self.halcmd("-s", "show", "pin", prefix)
        out = {}
        for line in p.stdout.splitlines():
            t = line.split()
            if len(t) >= 5 and t[4].startswith(prefix):
                out[t[4]] = t[3]
        return out

    def getp(self, name: str) -> str:
        p = self.halcmd("getp", name)
        if p.returncode != 0:
            raise RuntimeError(f"halcmd getp {name} failed: {p.stderr.strip() or p.stdout.strip()}")
        return p.stdout.strip()

    def getf(self, name: str) -> float:
        return float(self.getp(name))

    def getb(self, name: str) -> bool:
        return self.getp(name) == "TRUE"

    def setp(self, name: str, value) -> None:
        v = ("1" if value else "0") if isinstance(value, bool) else str(value)
        p = self.halcmd("setp", name, v)
        if p.returncode != 0:
            raise RuntimeError(f"halcmd setp {name} {v} failed: {p.stderr.strip() or p.stdout.strip()}")

    def wait_for(self, what: str, cond: Callable[[], bool], timeout: float = 20.0) -> None:
        """Poll `cond` until it holds; fail naming `what`, with the pins and the log."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond():
                return
            time.sleep(0.1)
        if cond():
            return
        pins = "\n".join(f"  {k} = {v}" for k, v in sorted(self.pins().items()))
        raise AssertionError(f"not within {timeout:.0f} s: {what}\nlcec pins:\n{pins}\nHAL log:\n{self.log()}")

    def stop(self) -> None:
        """Unload everything and end rtapi_app (halrun -U); never raises."""
        if self.started:
            try:
                _run(["halrun", "-U"], timeout=60, env=self.env, cwd=self.dir)
            except (OSError, subprocess.SubprocessError):
                pass
            end = time.monotonic() + 10
            while rtapi_running() and time.monotonic() < end:
                time.sleep(0.2)
            self.started = False
        shutil.rmtree(self.dir, ignore_errors=True)
