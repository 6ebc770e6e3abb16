//! A very small IPv4 host for the EoE endpoint: answers ARP requests for its address, ICMP
//! echo requests and UDP datagrams to the echo port ([`UDP_ECHO_PORT`], RFC 862). Frames for
//! other hosts, other protocols, IP fragments and packets with a bad header checksum are
//! dropped. Input and output are whole Ethernet frames (without FCS).

use std::net::Ipv4Addr;

/// UDP port answered with an echo.
pub const UDP_ECHO_PORT: u16 = 7;

const ETH_HDR: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_ARP: u16 = 0x0806;

/// The Internet checksum (RFC 1071) of `data`, starting from `sum`.
pub fn checksum(data: &[u8], mut sum: u32) -> u16 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        sum += (*b as u32) << 8;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

fn be16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}

/// Answer one Ethernet frame sent to a host with `mac` and `ip`; `None` when it needs no
/// answer.
pub fn answer(frame: &[u8], mac: [u8; 6], ip: Ipv4Addr) -> Option<Vec<u8>> {
    if frame.len() < ETH_HDR {
        return None;
    }
    let dst = &frame[0..6];
    if dst != mac && dst != [0xFF; 6] {
        return None;
    }
    match be16(frame, 12) {
        ETHERTYPE_ARP => arp(frame, mac, ip),
        ETHERTYPE_IPV4 => ipv4(frame, mac, ip),
        _ => None,
    }
}

fn arp(frame: &[u8], mac: [u8; 6], ip: Ipv4Addr) -> Option<Vec<u8>> {
    let a = frame.get(ETH_HDR..ETH_HDR + 28)?;
    // Ethernet/IPv4 request for our address.
    if be16(a, 0) != 1 || be16(a, 2) != ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4 {
        return None;
    }
    if be16(a, 6) != 1 || a[24..28] != ip.octets() {
        return None;
    }
    let mut out = vec![0u8; ETH_HDR + 28];
    out[0..6].copy_from_slice(&a[8..14]);
    out[6..12].copy_from_slice(&mac);
    out[12..14].copy_from_slice(&ETHERTYPE_ARP.to_be_bytes());
    let r = &mut out[ETH_HDR..];
    r[0..6].copy_from_slice(&a[0..6]);
    r[6..8].copy_from_slice(&2u16.to_be_bytes());
    r[8..14].copy_from_slice(&mac);
    r[14..18].copy_from_slice(&ip.octets());
    r[18..28].copy_from_slice(&a[8..18]);
    Some(out)
}

fn ipv4(frame: &[u8], mac: [u8; 6], ip: Ipv4Addr) -> Option<Vec<u8>> {
    let p = &frame[ETH_HDR..];
    if p.len() < 20 || p[0] >> 4 != 4 {
        return None;
    }
    let ihl = (p[0] & 0x0F) as usize * 4;
    let total = be16(p, 2) as usize;
    if ihl < 20 || total < ihl || total > p.len() || checksum(&p[..ihl], 0) != 0 {
        return None;
    }
    // Fragments (MF set or an offset) are not reassembled.
    if be16(p, 6) & 0x3FFF != 0 || p[16..20] != ip.octets() {
        return None;
    }
    let src: [u8; 4] = p[12..16].try_into().ok()?;
    let payload = &p[ihl..total];
    let reply_payload = match p[9] {
        1 => icmp_echo(payload)?,
        17 => udp_echo(payload, src, ip.octets())?,
        _ => return None,
    };
    let ends = (
        [frame[6], frame[7], frame[8], frame[9], frame[10], frame[11]],
        mac,
    );
    let id = be16(p, 4);
    Some(ipv4_frame(
        ends,
        (ip.octets(), src),
        p[9],
        id,
        &reply_payload,
    ))
}

/// An Ethernet frame carrying one IPv4 packet (no options, TTL 64, header checksum set):
/// `macs` = (destination, source), `ips` = (source, destination).
pub fn ipv4_frame(
    macs: ([u8; 6], [u8; 6]),
    ips: ([u8; 4], [u8; 4]),
    proto: u8,
    id: u16,
    payload: &[u8],
) -> Vec<u8> {
    let mut out = vec![0u8; ETH_HDR + 20 + payload.len()];
    out[0..6].copy_from_slice(&macs.0);
    out[6..12].copy_from_slice(&macs.1);
    out[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let h = &mut out[ETH_HDR..ETH_HDR + 20];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
    h[4..6].copy_from_slice(&id.to_be_bytes());
    h[8] = 64;
    h[9] = proto;
    h[12..16].copy_from_slice(&ips.0);
    h[16..20].copy_from_slice(&ips.1);
    let c = checksum(h, 0);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    out[ETH_HDR + 20..].copy_from_slice(payload);
    out
}

fn icmp_echo(m: &[u8]) -> Option<Vec<u8>> {
    if m.len() < 8 || m[0] != 8 || checksum(m, 0) != 0 {
        return None;
    }
    let mut r = m.to_vec();
    r[0] = 0;
    r[2..4].fill(0);
    let c = checksum(&r, 0);
    r[2..4].copy_from_slice(&c.to_be_bytes());
    Some(r)
}

fn pseudo_sum(src: [u8; 4], dst: [u8; 4], len: usize) -> u32 {
    let w = |a: [u8; 4]| {
        u16::from_be_bytes([a[0], a[1]]) as u32 + u16::from_be_bytes([a[2], a[3]]) as u32
    };
    w(src) + w(dst) + 17 + len as u32
}

fn udp_echo(u: &[u8], src: [u8; 4], me: [u8; 4]) -> Option<Vec<u8>> {
    if u.len() < 8 {
        return None;
    }
    let len = be16(u, 4) as usize;
    if len < 8 || len > u.len() || be16(u, 2) != UDP_ECHO_PORT {
        return None;
    }
    let u = &u[..len];
    if be16(u, 6) != 0 && checksum(u, pseudo_sum(src, me, len)) != 0 {
        return None;
    }
    let mut r = u.to_vec();
    r[0..2].copy_from_slice(&u[2..4]);
    r[2..4].copy_from_slice(&u[0..2]);
    r[6..8].fill(0);
    let mut c = checksum(&r, pseudo_sum(me, src, len));
    if c == 0 {
        c = 0xFFFF;
    }
    r[6..8].copy_from_slice(&c.to_be_bytes());
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAC: [u8; 6] = [2, 0xEC, 0xA7, 0, 0, 1];
    const PEER: [u8; 6] = [2, 0, 0, 0, 0, 9];
    const IP: Ipv4Addr = Ipv4Addr::new(10, 9, 0, 2);

    /// An IPv4 frame from PEER/10.9.0.1 to us with protocol `proto` and `payload`.
    fn ip_frame(proto: u8, payload: &[u8]) -> Vec<u8> {
        ipv4_frame((MAC, PEER), ([10, 9, 0, 1], IP.octets()), proto, 1, payload)
    }

    #[test]
    fn arp_request_is_answered() {
        let mut f = vec![0xFFu8; 6];
        f.extend_from_slice(&PEER);
        f.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
        f.extend_from_slice(&PEER);
        f.extend_from_slice(&[10, 9, 0, 1]);
        f.extend_from_slice(&[0; 6]);
        f.extend_from_slice(&IP.octets());
        let r = answer(&f, MAC, IP).unwrap();
        assert_eq!(&r[0..6], &PEER);
        assert_eq!(&r[20..22], &[0, 2]);
        assert_eq!(&r[22..28], &MAC);
        assert_eq!(&r[28..32], &IP.octets());
        // Not our address: no answer.
        f[38..42].copy_from_slice(&[10, 9, 0, 3]);
        assert!(answer(&f, MAC, IP).is_none());
    }

    #[test]
    fn ping_and_udp_echo() {
        let mut icmp = vec![8, 0, 0, 0, 0x12, 0x34, 0, 1, b'p', b'i', b'n', b'g'];
        let c = checksum(&icmp, 0);
        icmp[2..4].copy_from_slice(&c.to_be_bytes());
        let r = answer(&ip_frame(1, &icmp), MAC, IP).unwrap();
        assert_eq!(&r[0..6], &PEER);
        assert_eq!(checksum(&r[14..34], 0), 0, "IP header checksum");
        assert_eq!(r[34], 0, "echo reply");
        assert_eq!(checksum(&r[34..], 0), 0, "ICMP checksum");
        assert_eq!(&r[38..], &icmp[4..]);
        // UDP to port 7 with checksum 0 (none).
        let udp = [0x30, 0x39, 0, 7, 0, 12, 0, 0, 1, 2, 3, 4];
        let r = answer(&ip_frame(17, &udp), MAC, IP).unwrap();
        assert_eq!(&r[34..38], &[0, 7, 0x30, 0x39]);
        assert_eq!(&r[42..], &[1, 2, 3, 4]);
        assert_eq!(
            checksum(&r[34..], pseudo_sum([10, 9, 0, 2], [10, 9, 0, 1], 12)),
            0
        );
        // Another port, a bad IP checksum: dropped.
        let mut other = udp;
        other[3] = 9;
        assert!(answer(&ip_frame(17, &other), MAC, IP).is_none());
        let mut bad = ip_frame(1, &icmp);
        bad[24] ^= 1;
        assert!(answer(&bad, MAC, IP).is_none());
        assert!(answer(&bad[..20], MAC, IP).is_none());
    }
}
