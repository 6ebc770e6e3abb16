"""Tests of the `ecat` Python package (crates/ecat-py), run by scripts/test.sh after it
builds and installs the package into .venv. The `ecat_network` and `ecat_maindevice`
fixtures come from the package's own pytest plugin (entry point `pytest11`)."""

import runpy
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parent / "pysoem_scripts"


@pytest.fixture
def run_script(capsys):
    """Run a pysoem-style script in this process as `python SCRIPT ARG...`; returns stdout."""

    def run(name, *args):
        argv = sys.argv
        sys.argv = [str(SCRIPTS / name), *args]
        try:
            runpy.run_path(str(SCRIPTS / name), run_name="__main__")
        finally:
            sys.argv = argv
        return capsys.readouterr().out

    return run
