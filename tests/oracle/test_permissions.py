"""Without the right to open a raw socket, `ecat` says how to get it (run as root or grant
cap_net_raw) instead of failing obscurely. Runs the command as the unprivileged user
`nobody` (needs root to switch; skips otherwise)."""

from __future__ import annotations

import os
import shutil

import pytest

from helpers import describe, run


def test_raw_socket_permission_message(ecat, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root to run the command as the unprivileged user nobody")
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("setpriv (util-linux) is missing")
    exe = tmp_path / "ecat"
    shutil.copy(ecat, exe)
    os.chmod(tmp_path, 0o755)
    os.chmod(exe, 0o755)
    p = run([setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--inh-caps=-all", str(exe), "slaves", "-i", "lo"])
    assert p.returncode != 0, describe(p)
    assert "run as root" in p.stderr and "setcap cap_net_raw+ep" in p.stderr, p.stderr
    assert "panicked" not in p.stderr
