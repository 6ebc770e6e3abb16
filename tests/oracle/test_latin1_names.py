"""SII strings are ISO 8859-1: a real terminal named "...10µs" stores 'µ' as the byte 0xB5.

The image here is the real EL2004 dump with its name's last four bytes "0.5A" replaced by
"10\\xB5s" (same length, so nothing else moves; the CRC covers only words 0-6). `ecat slaves`,
`-v` and `--json` must show "10µs", not the vendor:product fallback or a replacement character.
"""

from __future__ import annotations

import json
import subprocess

from helpers import TESTDATA


def _latin1_image(tmp_path):
    image = bytearray((TESTDATA / "sii" / "el2004-eeprom-dump.bin").read_bytes())
    at = image.find(b"0.5A")
    assert at > 0, "the EL2004 dump's name ends in 0.5A"
    image[at : at + 4] = b"10\xb5s"
    path = tmp_path / "el2004-latin1.bin"
    path.write_bytes(bytes(image))
    net = tmp_path / "net.toml"
    net.write_text(f'[[subdevice]]\nsii = "{path}"\n')
    return net


def _run(ecat, *args):
    out = subprocess.run([str(ecat), *args], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    return out.stdout.decode("utf-8")  # our output is UTF-8 whatever the EEPROM holds


def test_micro_sign_in_sii_name_shows_in_every_view(ecat, tmp_path):
    link = f"sim:{_latin1_image(tmp_path)}"
    plain = _run(ecat, "slaves", "-i", link)
    assert "10µs" in plain, plain
    assert "0x00000002:" not in plain, "fell back to vendor:product"
    verbose = _run(ecat, "slaves", "-v", "-i", link)
    assert "10µs" in verbose, verbose
    (entry,) = json.loads(_run(ecat, "slaves", "--json", "-i", link))
    assert entry["name"].endswith("24V, 10µs"), entry["name"]
    assert "\ufffd" not in plain + verbose + entry["name"]


def test_simulated_el1018_stores_micro_sign_as_one_byte(ecat, tmp_path):
    net = tmp_path / "net.toml"
    net.write_text('[[subdevice]]\nmodel = "EL1018"\n')
    done = subprocess.run(
        [str(ecat), "sii", "read", "-i", f"sim:{net}", "-p", "0"], capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    image = done.stdout
    assert b"10\xb5s" in image and "10µs".encode() not in image
