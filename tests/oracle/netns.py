"""A veth pair with one end in a private network namespace, for real-socket tests.

    with VethNs() as v:
        v.host_if   # stays in the current namespace (the master's side)
        v.ns_if     # lives in namespace v.ns (where `ecat sim` runs)
        v.exec_argv(["ecat", "sim", "-i", v.ns_if])  # argv to run inside v.ns

Names are unique per process and call: "ec" + role letter (n namespace, h host
end, s namespace end) + pid % 1000 + 4 random hex digits, at most 10
characters (interface names may have 15). Everything created is removed on
exit from the `with` block, on a failed setup, and, as a last resort, at
interpreter exit, so an interrupted run leaves nothing behind.

IPv6 is disabled on both ends before they come up, so the link carries only
what a test sends (no router solicitations, no duplicate address detection).

`unavailable_reason()` says why this cannot work here (not root, no `ip`, no
network namespaces), or None; the pytest fixtures turn that into a skip.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import subprocess

__all__ = ["VethNs", "NetnsError", "unavailable_reason"]

_live: set["VethNs"] = set()


class NetnsError(RuntimeError):
    pass


def _run(argv: list[str], check: bool = True, timeout: float = 20.0) -> subprocess.CompletedProcess:
    p = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and p.returncode != 0:
        raise NetnsError(f"`{' '.join(argv)}` failed (exit {p.returncode}): {p.stderr.strip()}")
    return p


def unavailable_reason() -> str | None:
    """Why veth + netns tests cannot run here, or None when they can."""
    if os.geteuid() != 0:
        return "needs root to create a veth pair and a network namespace (run as root, as CI does)"
    if shutil.which("ip") is None:
        return "`ip` not found (apt-get install iproute2)"
    try:
        p = _run(["ip", "netns", "list"], check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"`ip netns list` did not run: {e}"
    if p.returncode != 0:
        return f"`ip netns` is unavailable: {p.stderr.strip()}"
    return None


def _disable_ipv6_cmd(ifname: str) -> list[str]:
    if shutil.which("sysctl"):
        return ["sysctl", "-q", "-w", f"net.ipv6.conf.{ifname}.disable_ipv6=1"]
    return ["sh", "-c", f"echo 1 > /proc/sys/net/ipv6/conf/{ifname}/disable_ipv6"]


class VethNs:
    def __init__(self) -> None:
        tag = f"{os.getpid() % 1000}{secrets.token_hex(2)}"
        self.ns = f"ecn{tag}"
        self.host_if = f"ech{tag}"
        self.ns_if = f"ecs{tag}"
        assert max(len(self.ns), len(self.host_if), len(self.ns_if)) <= 15
        self._created_ns = False
        self._created_link = False

    def __repr__(self) -> str:
        return f"VethNs(ns={self.ns}, host_if={self.host_if}, ns_if={self.ns_if})"

    def exec_argv(self, argv: list[str]) -> list[str]:
        """argv that runs `argv` inside the namespace."""
        return ["ip", "netns", "exec", self.ns, *argv]

    def create(self) -> "VethNs":
        _live.add(self)
        try:
            _run(["ip", "netns", "add", self.ns])
            self._created_ns = True
            _run(["ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if])
            self._created_link = True
            ipv6 = os.path.isdir("/proc/sys/net/ipv6")
            if ipv6:
                _run(_disable_ipv6_cmd(self.host_if))
            _run(["ip", "link", "set", self.ns_if, "netns", self.ns])
            if ipv6:
                _run(self.exec_argv(_disable_ipv6_cmd(self.ns_if)))
            _run(["ip", "link", "set", self.host_if, "up"])
            _run(["ip", "-n", self.ns, "link", "set", "lo", "up"])
            _run(["ip", "-n", self.ns, "link", "set", self.ns_if, "up"])
        except BaseException:
            self.destroy()
            raise
        return self

    def destroy(self) -> list[str]:
        """Remove the pair and the namespace; never raises. Returns problems seen."""
        problems: list[str] = []

        def attempt(argv: list[str], harmless: str = "\0") -> None:
            try:
                p = _run(argv, check=False)
                if p.returncode != 0 and harmless not in p.stderr:
                    problems.append(f"{' '.join(argv)}: {p.stderr.strip()}")
            except (OSError, subprocess.SubprocessError) as e:
                problems.append(f"{' '.join(argv)}: {e}")

        if self._created_link:
            # Deleting either end deletes both; the host end may already be gone.
            attempt(["ip", "link", "del", self.host_if], harmless="Cannot find device")
            self._created_link = False
        if self._created_ns:
            attempt(["ip", "netns", "del", self.ns])
            self._created_ns = False
        _live.discard(self)
        return problems

    def __enter__(self) -> "VethNs":
        return self.create()

    def __exit__(self, *exc) -> None:
        self.destroy()


@atexit.register
def _cleanup_leftovers() -> None:
    for v in list(_live):
        v.destroy()
