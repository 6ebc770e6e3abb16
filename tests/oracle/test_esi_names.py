"""The tool names SubDevices from ESI files when their SII does not (`--esi-dir`,
`ECAT_ESI_PATH`): a real EL2004 EEPROM cut down to its fixed area (identity only, no strings,
no PDOs) shows as vendor:product without ESI, and with its ESI name, order number and default
PDOs with them; what an SII does say is never overwritten."""

from __future__ import annotations

import json
import os
import subprocess

from helpers import TESTDATA

ESI_DIR = TESTDATA / "esi"


def _thin_el2004(tmp_path):
    image = bytearray((TESTDATA / "sii" / "el2004-eeprom-dump.bin").read_bytes()[:128])
    image += b"\xff\xff"  # END right after the fixed area: no category at all
    path = tmp_path / "el2004-thin.bin"
    path.write_bytes(bytes(image))
    net = tmp_path / "net.toml"
    net.write_text(f'[[subdevice]]\nsii = "{path}"\n[[subdevice]]\nmodel = "EL2008"\n')
    return f"sim:{net}"


def _slaves(ecat, link, *extra, env=None):
    out = subprocess.run(
        [str(ecat), "slaves", "--json", "-i", link, *extra],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_without_esi_a_bare_sii_shows_its_numbers(ecat, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "ECAT_ESI_PATH"}
    first = _slaves(ecat, _thin_el2004(tmp_path), env=env)[0]
    assert first["name"] == "0x00000002:0x07D43052", first


def test_esi_dir_names_the_subdevice_and_its_pdos(ecat, tmp_path):
    link = _thin_el2004(tmp_path)
    first, second = _slaves(ecat, link, "--esi-dir", str(ESI_DIR))
    assert first["name"].startswith("EL2004 4"), first
    assert first["order"] == "EL2004", first
    assert first["output_bits"] == 4, first
    # The simulated EL2008 has its own SII strings: they are kept.
    assert second["name"] == "EL2008 8Ch. Dig. Output 24V, 0.5A", second
    verbose = subprocess.run(
        [str(ecat), "slaves", "-v", "-p", "0", "-i", link, "--esi-dir", str(ESI_DIR)],
        capture_output=True, text=True, timeout=60,
    )
    assert verbose.returncode == 0, verbose.stderr
    assert "Channel 1" in verbose.stdout and "Output" in verbose.stdout, verbose.stdout


def test_ecat_esi_path_works_like_esi_dir(ecat, tmp_path):
    env = dict(os.environ, ECAT_ESI_PATH=str(ESI_DIR))
    first = _slaves(ecat, _thin_el2004(tmp_path), env=env)[0]
    assert first["order"] == "EL2004", first
