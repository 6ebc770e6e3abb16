"""`ethercat` (the ecat binary under IgH's tool name) read the way programs read IgH's tool:
`xml` with an ordinary XML parser (one document), `slaves` with the regular expression IgH's
layout allows, `cstruct` compiled against ecrt.h, `pdos` by its IgH header and lines."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from helpers import REPO

SLAVE_LINE = re.compile(r"^ *(\d+)  +(\d+):(\d+) *  (\S+) *  ([+E])  (.*)$")


@pytest.fixture()
def ethercat(ecat, tmp_path):
    link = tmp_path / "ethercat"
    link.symlink_to(ecat)

    def run(*args, network="sim:io"):
        # An empty control directory: no application on this machine answers for master 0.
        env = dict(os.environ, ECAT_INTERFACE=network, ECAT_CONTROL_DIR=str(tmp_path))
        env.pop("ECAT_MASTER0", None)
        out = subprocess.run([str(link), *args], capture_output=True, timeout=60, env=env)
        assert out.returncode == 0, out.stderr.decode(errors="replace")
        return out.stdout

    return run


def test_xml_is_one_document_an_xml_parser_reads(ethercat, tmp_path):
    f = tmp_path / "bus.xml"
    f.write_bytes(ethercat("xml"))
    root = ET.parse(f).getroot()
    assert root.tag == "EtherCATInfoList"
    infos = list(root)
    assert [i.tag for i in infos] == ["EtherCATInfo"] * 5
    assert [i.findtext("Descriptions/Devices/Device/Type") for i in infos] == [
        "EK1100",
        "EL2008",
        "EL1018",
        "EL4132",
        "EL3102",
    ]
    assert all(i.findtext("Vendor/Id") == "2" for i in infos)
    one = ET.fromstring(ethercat("xml", "-p", "4"))
    assert one.tag == "EtherCATInfo"
    pdos = one.findall("Descriptions/Devices/Device/TxPdo")
    assert [p.findtext("Index") for p in pdos] == ["#x1a00", "#x1a01"]


def test_slaves_lines_parse_with_igh_layout(ethercat):
    lines = ethercat("slaves").decode().splitlines()
    rows = [SLAVE_LINE.match(line) for line in lines]
    assert all(rows), lines
    assert [int(r[1]) for r in rows] == [0, 1, 2, 3, 4]
    assert {(r[2], r[4], r[5]) for r in rows} == {("0", "PREOP", "+")}
    assert rows[0][6].startswith("EK1100")


def test_pdos_uses_igh_headers_and_lines(ethercat):
    text = ethercat("pdos", "-p", "3-4").decode()
    assert text.startswith("=== Master 0, Slave 3 ===\nSM0: PhysAddr 0x")
    assert "=== Master 0, Slave 4 ===" in text
    assert '  TxPDO 0x1a00 "' in text
    assert re.search(r"^    PDO entry 0x3101:01,  8 bit, \"", text, re.M)


def test_cstruct_compiles_against_ecrt_h(ethercat, tmp_path):
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    text = ethercat("cstruct", network="sim:servo6").decode()
    assert "    {0, EC_DIR_OUTPUT, 0, NULL, EC_WD_DISABLE},\n" in text
    assert "    {1, EC_DIR_INPUT, 0, NULL, EC_WD_DISABLE},\n" in text
    src = tmp_path / "pdos.c"
    src.write_text('#include "ecrt.h"\n' + text)
    inc = REPO / "crates" / "ecat-capi" / "include"
    out = subprocess.run(
        [cc, "-fsyntax-only", "-Wall", "-Werror", "-Wno-unused-variable", f"-I{inc}", str(src)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
