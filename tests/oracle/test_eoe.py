"""EoE end to end (root): `ecat run --eoe` on the in-process simulated network `mbx` creates
the TAP interface eoe<M>s2 for the EoE SubDevice, sets the device's IP address with the
set-IP-parameter request in OP (`--eoe-ip`), and the host reaches the simulated IP stack
through the TAP: `ping -c 10 -i 0.1` gets 10 of 10 replies and a UDP echo (port 7) throughput
figure is printed, while the process data stays complete in every cycle (WKC and loss
counters of the run). `ecat eoe` shows the running bridge's statistics. The interface goes
away with the process; names and subnet are unique to this test (eoe93s2, 10.231.93.0/24)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import struct
import subprocess
import threading
import time

from helpers import describe, need, run

MASTER = 93
IFACE = f"eoe{MASTER}s2"
HOST_IP, DEV_IP = "10.231.93.1", "10.231.93.2"


def _icmp_checksum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    s = (s & 0xFFFF) + (s >> 16)
    s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def python_ping(dst: str, count: int, interval: float) -> int:
    """ICMP echo over a raw socket (when `ping` is not installed): replies received."""
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(1.0)
    ident, got = os.getpid() & 0xFFFF, 0
    try:
        for seq in range(count):
            body = b"ecat eoe ping"
            hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
            pkt = struct.pack("!BBHHH", 8, 0, _icmp_checksum(hdr + body), ident, seq) + body
            s.sendto(pkt, (dst, 0))
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                try:
                    data, addr = s.recvfrom(2048)
                except socket.timeout:
                    break
                ihl = (data[0] & 0x0F) * 4
                t, _, _, i, q = struct.unpack("!BBHHH", data[ihl : ihl + 8])
                if addr[0] == dst and t == 0 and i == ident and q == seq:
                    got += 1
                    break
            time.sleep(interval)
    finally:
        s.close()
    return got


def udp_echo_rate(dst: str, size: int, seconds: float, window: int = 4) -> tuple[float, int, int]:
    """Echo datagrams of `size` bytes off port 7 for `seconds` with `window` outstanding:
    (echoed bytes per second, sent, echoed)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, IFACE.encode())
    s.settimeout(0.5)
    payload = bytes(i & 0xFF for i in range(size))
    sent = echoed = 0
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < seconds:
            while sent - echoed < window:
                s.sendto(payload, (dst, 7))
                sent += 1
            try:
                data, _ = s.recvfrom(4096)
            except socket.timeout:
                sent = echoed  # lost in flight: open the window again
                continue
            if data == payload:
                echoed += 1
        took = time.monotonic() - t0
    finally:
        s.close()
    return echoed * size / took, sent, echoed


def test_ping_and_udp_echo_through_the_eoe_tap(ecat, tmp_path):
    need(None if os.geteuid() == 0 else "not root: creating a TAP interface needs CAP_NET_ADMIN")
    need(None if os.path.exists("/dev/net/tun") else "no /dev/net/tun (modprobe tun)")
    argv = [
        str(ecat), "run", "-i", "sim:mbx", "--dc", "off", "--profile", "hold",
        "--eoe", "--eoe-master", str(MASTER), "--eoe-ip", f"2={DEV_IP}/24",
        "--duration", "9s", "--report-every", "1s",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    ready = threading.Event()

    def reader():
        for line in proc.stdout:
            lines.append(line)
            if "set IP parameter request" in line:
                ready.set()
        ready.set()

    threading.Thread(target=reader, daemon=True).start()
    try:
        assert ready.wait(30), "".join(lines)
        out = "".join(lines)
        assert f"EoE: TAP interfaces {IFACE} for SubDevice 2" in out, out
        assert re.search(r"EoE: SubDevice 2: EoE set IP parameter request \(IP 10\.231\.93\.2, subnet 255\.255\.255\.0\) done", out), out
        p = run(["ip", "addr", "add", f"{HOST_IP}/24", "dev", IFACE])
        assert p.returncode == 0, describe(p)
        if shutil.which("ping"):
            p = run(["ping", "-c", "10", "-i", "0.1", "-W", "2", "-I", IFACE, DEV_IP], timeout=30)
            m = re.search(r"(\d+) packets transmitted, (\d+) received", p.stdout)
            assert m, describe(p)
            replies = int(m[2])
            print(p.stdout.strip().splitlines()[-1])
        else:
            replies = python_ping(DEV_IP, 10, 0.1)
        assert replies == 10, f"{replies} of 10 ping replies"
        rate, sent, echoed = udp_echo_rate(DEV_IP, 1000, 2.0)
        print(f"UDP echo through EoE (1000-byte datagrams, 4 in flight): {rate / 1e3:.1f} kB/s echoed ({echoed} of {sent})")
        assert echoed > 0
        stats = run([str(ecat), "eoe", "-m", str(MASTER)])
        assert stats.returncode == 0, describe(stats)
        row = next(l for l in stats.stdout.splitlines() if l.startswith(IFACE))
        assert int(row.split()[2]) >= 10 and int(row.split()[5]) >= 10, stats.stdout
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)
    out = "".join(lines)
    assert proc.returncode == 0, out
    assert "domain cycles not complete while all SubDevices were in OP: 0" in out, out
    status = [l for l in out.splitlines() if re.match(r"t=[\d.]+s cycles", l)]
    assert status and all("lost 0" in l and "complete (WKC 7/7)" in l for l in status), "\n".join(status)
    m = re.search(r"EoE eoe\d+s2: tx (\d+) frames .* errors tx (\d+) rx (\d+), dropped (\d+)", out)
    assert m and int(m[2]) == int(m[3]) == int(m[4]) == 0, out
    assert not os.path.exists(f"/sys/class/net/{IFACE}"), "the TAP interface is gone with the run"


def test_without_cap_net_admin_the_run_goes_on_and_names_the_capability(ecat):
    need(None if os.geteuid() == 0 else "not root: cannot drop a capability we do not have")
    need(None if shutil.which("setpriv") else "setpriv (util-linux) not installed")
    argv = [
        "setpriv", "--inh-caps=-net_admin", "--bounding-set=-net_admin", "--",
        str(ecat), "run", "-i", "sim:mbx", "--dc", "off", "--profile", "hold", "--eoe",
        "--eoe-master", str(MASTER + 1), "--duration", "1s",
    ]
    p = run(argv, timeout=60)
    assert p.returncode == 0, describe(p)
    line = next((l for l in p.stdout.splitlines() if l.startswith("EoE:")), "")
    assert "cannot create the TAP interface" in line and "CAP_NET_ADMIN capability is missing" in line, p.stdout
    assert "domain cycles not complete while all SubDevices were in OP: 0" in p.stdout, p.stdout
