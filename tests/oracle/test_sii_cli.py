"""`ecat sii build` (SII image from an ESI file), `ecat sii write` (image into a
SubDevice's EEPROM, read back and verified) and `ecat alias` (station alias word + CRC),
on the in-process simulator (one invocation: write and verify) and through `ecat sim`
on a veth pair, where the EEPROM outlives the command and a second `ecat sii read` sees
what the first one wrote."""

from __future__ import annotations

import subprocess
import struct

from helpers import TESTDATA, describe, run, sii_identity, sii_strings

ESI = TESTDATA / "esi" / "Beckhoff_EL2xxx.xml"
EL2032 = (0x00000002, 0x07F03052)


def _crc8(data: bytes) -> int:
    crc = 0xFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def _no_panic(p):
    text = p.stdout + p.stderr
    assert "panicked" not in text and "RUST_BACKTRACE" not in text, describe(p)


def _build(ecat, tmp_path, type_name="EL2032", *extra):
    out = tmp_path / f"{type_name.lower()}.bin"
    p = run([ecat, "sii", "build", "--esi", ESI, "--type", type_name, "-o", out, *extra])
    assert p.returncode == 0, describe(p)
    return out, p


def test_build_from_esi(ecat, tmp_path):
    out, p = _build(ecat, tmp_path)
    assert "EL2032" in p.stdout and "0x07f03052" in p.stdout, describe(p)
    data = out.read_bytes()
    vendor, product, revision = sii_identity(out)
    assert (vendor, product) == EL2032
    assert revision == 0x00120000  # the highest revision in the file
    assert data[14] == _crc8(data[:14]), "word 7 holds the CRC of words 0-6"
    strings = sii_strings(out)
    assert strings[0] == "EL2032", strings
    # A named revision.
    r = tmp_path / "r.bin"
    p = run([ecat, "sii", "build", "--esi", ESI, "-t", "EL2032", "--revision", "0x00100000", "-o", r])
    assert p.returncode == 0, describe(p)
    assert sii_identity(r)[2] == 0x00100000


def test_build_full_is_the_real_ek1100_eeprom_but_per_unit_and_undocumented_bytes(ecat, tmp_path):
    """`--full --lcid 1031` writes the whole 2048-byte EEPROM as Beckhoff does; against the
    real EK1100 dump only the factory's production words 0x20-0x22 and GENERAL byte 4
    (undocumented) differ."""
    real = (TESTDATA / "sii" / "ek1100-eeprom-dump.bin").read_bytes()
    out = tmp_path / "ek1100.bin"
    esi = TESTDATA / "esi" / "Beckhoff_EK11xx.xml"
    p = run([ecat, "sii", "build", "--esi", esi, "-t", "EK1100", "-r", "0x00120000",
             "--lcid", "1031", "--full", "-o", out])
    assert p.returncode == 0, describe(p)
    assert "written whole" in p.stdout, describe(p)
    built = out.read_bytes()
    assert len(built) == len(real) == 2048
    differing = [i for i in range(len(real)) if real[i] != built[i]]
    general = 0x80 + 4 + 2 * 34  # after STRINGS (header, 34 words): GENERAL's header
    assert real[general : general + 2] == bytes([30, 0]), "GENERAL header"
    general_byte4 = general + 4 + 4
    assert all(0x40 <= i < 0x46 for i in differing if i != general_byte4), differing
    assert general_byte4 in differing, differing


def test_build_unknown_type_lists_the_types(ecat, tmp_path):
    p = run([ecat, "sii", "build", "--esi", ESI, "--type", "EL9999", "-o", tmp_path / "x.bin"])
    assert p.returncode == 1, describe(p)
    _no_panic(p)
    assert "no device type EL9999" in p.stderr and "EL2032" in p.stderr, describe(p)
    assert not (tmp_path / "x.bin").exists()


def test_build_unknown_product_names_the_directories(ecat, tmp_path):
    p = run([ecat, "sii", "build", "--esi-dir", tmp_path, "--product", "0x0badc0de", "-o", tmp_path / "x.bin"])
    assert p.returncode == 1, describe(p)
    assert "product 0x0badc0de" in p.stderr and str(tmp_path) in p.stderr, describe(p)


def test_malformed_esi_names_line_and_column(ecat, tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<?xml version="1.0"?>\n<EtherCATInfo>\n  <Vendor><Id>2</Vendor>\n</EtherCATInfo>\n')
    p = run([ecat, "sii", "build", "--esi", bad, "--type", "EL2032", "-o", tmp_path / "x.bin"])
    assert p.returncode == 1, describe(p)
    _no_panic(p)
    assert f"{bad}:3:" in p.stderr and "malformed XML" in p.stderr, describe(p)


def test_write_in_process_reads_back(ecat, tmp_path):
    image, _ = _build(ecat, tmp_path)
    p = run([ecat, "sii", "write", "-i", "sim:io", "-p", "2", image])
    assert p.returncode == 0, describe(p)
    assert "read back and verified" in p.stdout, describe(p)


def test_write_refuses_a_bad_image(ecat, tmp_path):
    image, _ = _build(ecat, tmp_path)
    data = bytearray(image.read_bytes())
    data[14] ^= 0xFF
    bad = tmp_path / "badcrc.bin"
    bad.write_bytes(bytes(data))
    p = run([ecat, "sii", "write", "-i", "sim:io", "-p", "2", bad])
    assert p.returncode == 1, describe(p)
    _no_panic(p)
    assert "not a valid SII image" in p.stderr and "checksum" in p.stderr, describe(p)
    p = run([ecat, "sii", "write", "-i", "sim:io", "-p", "2", "--force", bad])
    assert p.returncode == 0, describe(p)


def test_alias_needs_a_position_or_force(ecat):
    p = run([ecat, "alias", "-i", "sim:io", "0x1234"])
    assert p.returncode == 1, describe(p)
    assert "--force" in p.stderr, describe(p)
    p = run([ecat, "alias", "-i", "sim:io", "-p", "1", "0x1234"])
    assert p.returncode == 0, describe(p)
    assert "alias 4660 written" in p.stdout, describe(p)


def test_write_and_alias_persist_in_a_simulator_on_veth(ecat, veth, ecat_sim, tmp_path):
    image, _ = _build(ecat, tmp_path)
    sim = ecat_sim("io")
    iface = veth.host_if
    p = run([ecat, "sii", "write", "-i", iface, "-p", "2", image])
    assert p.returncode == 0, describe(p) + "\nsim stderr:\n" + sim.stderr_text()
    # A second master process reads what the first one wrote.
    back = subprocess.run([str(ecat), "sii", "read", "-i", iface, "-p", "2"], capture_output=True, timeout=60)
    assert back.returncode == 0, back.stderr
    want = image.read_bytes()
    assert back.stdout[: len(want)] == want
    p = run([ecat, "alias", "-i", iface, "-p", "2", "4660"])
    assert p.returncode == 0, describe(p)
    back = subprocess.run([str(ecat), "sii", "read", "-i", iface, "-p", "2"], capture_output=True, timeout=60)
    assert back.returncode == 0, back.stderr
    alias, crc = struct.unpack_from("<HH", back.stdout, 8)[0], back.stdout[14]
    assert alias == 4660 and crc == _crc8(back.stdout[:14])
    # The rest of the image is untouched.
    assert back.stdout[16 : len(want)] == want[16:]
