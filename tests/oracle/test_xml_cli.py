"""`ecat xml` (IgH: `ethercat xml`): one XML document that an XML parser reads as a file, as
IgH prints it: an EtherCATInfoList of EtherCATInfo descriptions for several SubDevices, a bare
EtherCATInfo for one, with the identity, SyncManagers and PDOs the bus reports."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET


def _run(ecat, *args):
    out = subprocess.run([str(ecat), *args], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    return out.stdout.decode("utf-8")


def _infos(text):
    """The EtherCATInfo elements of the one document `text` (a list, or a bare one)."""
    assert text.startswith('<?xml version="1.0" ?>\n'), text[:80]
    assert text.count("<?xml") == 1
    root = ET.fromstring(text.split("?>", 1)[1])
    if root.tag == "EtherCATInfoList":
        return list(root)
    assert root.tag == "EtherCATInfo"
    return [root]


def test_xml_describes_every_subdevice_of_io(ecat):
    text = _run(ecat, "xml", "-i", "sim:io")
    assert ET.fromstring(text.split("?>", 1)[1]).tag == "EtherCATInfoList"
    docs = _infos(text)
    slaves = json.loads(_run(ecat, "slaves", "--json", "-i", "sim:io"))
    assert len(docs) == len(slaves) == 5
    for doc, s in zip(docs, slaves):
        assert int(doc.findtext("Vendor/Id")) == s["vendor_id"]  # decimal, as IgH
        dev = doc.find("Descriptions/Devices/Device")
        t = dev.find("Type")
        assert int(t.get("ProductCode")[2:], 16) == s["product_code"]
        assert int(t.get("RevisionNo")[2:], 16) == s["revision"]
        assert dev.findtext("Name") == s["name"]
        bits = {"RxPdo": 0, "TxPdo": 0}
        for tag in bits:
            for pdo in dev.findall(tag):
                bits[tag] += sum(int(e.findtext("BitLen")) for e in pdo.findall("Entry"))
        assert bits["RxPdo"] == s["output_bits"], (s["name"], bits)
        assert bits["TxPdo"] == s["input_bits"], (s["name"], bits)


def test_xml_of_a_drive_names_its_objects(ecat):
    (doc,) = _infos(_run(ecat, "xml", "-i", "sim:servo6", "-p", "0"))
    dev = doc.find("Descriptions/Devices/Device")
    assert [sm.text for sm in dev.findall("Sm")] == ["MBoxOut", "MBoxIn", "Outputs", "Inputs"]
    names = [e.findtext("Name") for e in dev.iter("Entry")]
    assert "Controlword" in names and "Statusword" in names
