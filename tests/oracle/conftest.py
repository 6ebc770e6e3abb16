"""Fixtures for the oracle tests.

  ecat      path to the release `ecat` binary (ECAT_BIN, else target/release/ecat);
            skips when it has not been built
  veth      a fresh veth pair with one end in a fresh network namespace
            (netns.VethNs); skips when not root or without `ip netns`
  ecat_sim  factory: ecat_sim(network[, veth][, extra=[...]][, realtime=True]) starts
            `ecat sim -i <ns end> -n <network> [extra...]` inside the namespace (under
            SCHED_FIFO when realtime and root), waits for its startup lines and stops it
            at teardown
  tshark    path to tshark; skips when missing
In a CI run (ECAT_TEST_STRICT=1, set by scripts/test.sh when CI=true) missing
root, `ip netns`, tshark or pysoem fail the test instead of skipping it.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

import netns
from helpers import REPO, SimProcess, need, realtime_prefix

# SCHED_FIFO priority of a simulator started with realtime=True: above the judges' (20).
SIM_PRIORITY = 30


def _sigterm_to_interrupt(signum, frame):
    # `timeout` (in scripts/test.sh) sends SIGTERM; turning it into an exception
    # lets fixtures finish: namespaces, veth pairs and simulators are removed.
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _sigterm_to_interrupt)


@pytest.fixture(scope="session")
def ecat() -> Path:
    path = Path(os.environ.get("ECAT_BIN") or REPO / "target" / "release" / "ecat")
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.skip(f"{path} not built (cargo build --release -p ecat-cli)")
    return path


@pytest.fixture(scope="session")
def tshark() -> str:
    path = shutil.which("tshark")
    need(None if path else "tshark not installed (apt-get install tshark)")
    return path


@pytest.fixture
def veth():
    need(netns.unavailable_reason())
    v = netns.VethNs()
    v.create()
    try:
        yield v
    finally:
        problems = v.destroy()
        if problems:
            print(f"cleanup of {v}: {problems}")


@pytest.fixture
def ecat_sim(ecat, veth):
    # Depends on `veth` so the simulator stops before its namespace goes.
    started: list[SimProcess] = []

    def start(
        network: str,
        v: netns.VethNs | None = None,
        expect_lines: int | None = None,
        extra: list[str] | tuple[str, ...] = (),
        realtime: bool = False,
    ):
        v = v or veth
        prefix = realtime_prefix(SIM_PRIORITY) if realtime else []
        argv = [*prefix, str(ecat), "sim", "-i", v.ns_if, "-n", network, *extra]
        sim = SimProcess(v.exec_argv(argv))
        started.append(sim)
        return sim.start(expect_lines=expect_lines)

    yield start
    for sim in reversed(started):
        sim.stop()
