//! FoE, SoE, VoE and EoE seen from the wire: raw mailbox messages through SM0/SM1 of the
//! `mbx` preset (0x1001 ECAT-SERVO-402 with FoE (no BOOT), 0x1002 EL3102 with CoE and FoE, 0x1003
//! ECAT-SOE-DRIVE with every protocol), built with the `ecat_wire` codecs.

mod common;

use common::coe::{build, Mbx};
use common::{fmmu_bytes, sm_bytes, Bus};
use ecat_sim::mbx::ipstack::{self, checksum, UDP_ECHO_PORT};
use ecat_wire::eoe::{self, EoeFrameType, EoeRepr, EoeResult, IpParams, Reassembler};
use ecat_wire::foe::{self, FoeErrorCode, FoeRepr};
use ecat_wire::mailbox::{parse_message, MailboxErrorCode, MailboxErrorRepr, MailboxType};
use ecat_wire::register as reg;
use ecat_wire::soe::{
    self, Elements, Idn, IdnAttribute, ListHeader, SoeErrorCode, SoeOpcode, SoeRepr,
};
use ecat_wire::voe::{self, VoeRepr};
use std::net::Ipv4Addr;

const SERVO: u16 = 0x1001;
const EL3102: u16 = 0x1002;
const DRIVE: u16 = 0x1003;

fn mbx_preop() -> Bus {
    let mut bus = Bus::preset("mbx");
    assert_eq!(bus.assign_addresses(), 3);
    for s in [SERVO, EL3102, DRIVE] {
        bus.mailbox_preop(&Mbx::standard(s));
    }
    bus
}

/// The mailbox error detail of an answer, if it is a mailbox error reply.
fn mailbox_error(a: &[u8]) -> Option<MailboxErrorCode> {
    let (h, p) = parse_message(a).ok()?;
    (h.kind == MailboxType::Err).then(|| MailboxErrorRepr::parse(p).unwrap().detail)
}

fn foe_request(bus: &mut Bus, m: &mut Mbx, r: &FoeRepr<'_>) -> Vec<u8> {
    let req = build(m, |b, c| foe::emit_foe(b, c, r));
    bus.mbx_request(m, &req)
}

fn foe_answer(a: &[u8]) -> FoeRepr<'_> {
    foe::parse_foe(a).expect("an FoE answer").1
}

/// Write a file the way SOEM does: WRQ, then data packets of SM0 − 12 bytes, each waiting
/// for its acknowledge (resending on BUSY); returns the BUSY replies seen.
fn foe_write(
    bus: &mut Bus,
    m: &mut Mbx,
    name: &str,
    pw: u32,
    data: &[u8],
) -> Result<u32, FoeErrorCode> {
    let a = foe_request(
        bus,
        m,
        &FoeRepr::WriteRequest {
            password: pw,
            name: name.as_bytes(),
        },
    );
    match foe_answer(&a) {
        FoeRepr::Ack { packet: 0 } => {}
        FoeRepr::Error { code, .. } => return Err(code),
        r => panic!("{r:?}"),
    }
    let max = foe::max_data(m.out.1);
    let mut packet = 1u32;
    let mut busy = 0;
    let mut pos = 0;
    loop {
        let end = (pos + max).min(data.len());
        let a = foe_request(
            bus,
            m,
            &FoeRepr::Data {
                packet,
                data: &data[pos..end],
            },
        );
        match foe_answer(&a) {
            FoeRepr::Ack { packet: p } => assert_eq!(p, packet),
            FoeRepr::Busy { .. } => {
                busy += 1;
                continue;
            }
            FoeRepr::Error { code, .. } => return Err(code),
            r => panic!("{r:?}"),
        }
        if end - pos < max {
            return Ok(busy);
        }
        pos = end;
        packet += 1;
    }
}

fn foe_read(
    bus: &mut Bus,
    m: &mut Mbx,
    name: &str,
    pw: u32,
) -> Result<Vec<u8>, (FoeErrorCode, String)> {
    let mut a = foe_request(
        bus,
        m,
        &FoeRepr::ReadRequest {
            password: pw,
            name: name.as_bytes(),
        },
    );
    let max = foe::max_data(m.inp.1);
    let mut out = Vec::new();
    let mut expect = 1;
    loop {
        let (packet, n) = match foe_answer(&a) {
            FoeRepr::Data { packet, data } => {
                out.extend_from_slice(data);
                (packet, data.len())
            }
            r @ FoeRepr::Error { code, .. } => return Err((code, r.text().unwrap().to_string())),
            r => panic!("{r:?}"),
        };
        assert_eq!(packet, expect);
        expect += 1;
        let req = build(m, |b, c| foe::emit_foe(b, c, &FoeRepr::Ack { packet }));
        if n < max {
            assert_eq!(bus.mbx_send(m, &req), 1);
            for _ in 0..3 {
                assert!(
                    bus.mbx_recv(m).is_none(),
                    "nothing after the last acknowledge"
                );
            }
            return Ok(out);
        }
        a = bus.mbx_request(m, &req);
    }
}

#[test]
fn foe_files_round_trip_with_errors_password_and_busy() {
    let mut bus = mbx_preop();
    let mut m = Mbx::standard(SERVO);
    let file: Vec<u8> = (0..1000u32).map(|i| (i * 31 % 251) as u8).collect();
    assert_eq!(foe_write(&mut bus, &mut m, "data.bin", 0, &file), Ok(0));
    assert_eq!(foe_read(&mut bus, &mut m, "data.bin", 0).unwrap(), file);
    // A multiple of the packet size (116) ends with an empty packet both ways.
    let exact = vec![0x5A; 116 * 3];
    foe_write(&mut bus, &mut m, "exact.bin", 0, &exact).unwrap();
    assert_eq!(foe_read(&mut bus, &mut m, "exact.bin", 0).unwrap(), exact);
    assert_eq!(
        bus.net.subdevice(0).unwrap().foe().unwrap().files["exact.bin"],
        exact
    );
    // Not found, with code and text.
    let (code, text) = foe_read(&mut bus, &mut m, "nope.bin", 0).unwrap_err();
    assert_eq!(
        (code, text.as_str()),
        (FoeErrorCode::NOT_FOUND, "file not found")
    );
    // Password.
    bus.net
        .subdevice_mut(0)
        .unwrap()
        .foe_mut()
        .unwrap()
        .password = Some(0xC0DE);
    assert_eq!(
        foe_read(&mut bus, &mut m, "data.bin", 1).unwrap_err().0,
        FoeErrorCode::ACCESS_DENIED
    );
    assert_eq!(
        foe_write(&mut bus, &mut m, "x", 1, b"x"),
        Err(FoeErrorCode::ACCESS_DENIED)
    );
    assert_eq!(
        foe_read(&mut bus, &mut m, "data.bin", 0xC0DE).unwrap(),
        file
    );
    // Busy: the first data packet is answered with BUSY twice, then taken.
    bus.net
        .subdevice_mut(0)
        .unwrap()
        .foe_mut()
        .unwrap()
        .busy_replies = 2;
    assert_eq!(
        foe_write(&mut bus, &mut m, "b.bin", 0xC0DE, &file[..300]),
        Ok(2)
    );
    assert_eq!(
        foe_read(&mut bus, &mut m, "b.bin", 0xC0DE).unwrap(),
        &file[..300]
    );
    // A wrong packet number ends the write with 0x8005.
    bus.net
        .subdevice_mut(0)
        .unwrap()
        .foe_mut()
        .unwrap()
        .busy_replies = 0;
    let a = foe_request(
        &mut bus,
        &mut m,
        &FoeRepr::WriteRequest {
            password: 0xC0DE,
            name: b"c",
        },
    );
    assert_eq!(foe_answer(&a), FoeRepr::Ack { packet: 0 });
    let a = foe_request(
        &mut bus,
        &mut m,
        &FoeRepr::Data {
            packet: 2,
            data: b"zz",
        },
    );
    assert!(matches!(
        foe_answer(&a),
        FoeRepr::Error {
            code: FoeErrorCode::PACKET_NUMBER,
            ..
        }
    ));
    // Data without a transfer: illegal.
    let a = foe_request(
        &mut bus,
        &mut m,
        &FoeRepr::Data {
            packet: 1,
            data: b"zz",
        },
    );
    assert!(matches!(
        foe_answer(&a),
        FoeRepr::Error {
            code: FoeErrorCode::ILLEGAL,
            ..
        }
    ));
    // The EL3102 serves FoE too (its ESI says so).
    let mut m2 = Mbx::standard(EL3102);
    foe_write(&mut bus, &mut m2, "t.txt", 0, b"terminal").unwrap();
    assert_eq!(
        foe_read(&mut bus, &mut m2, "t.txt", 0).unwrap(),
        b"terminal"
    );
}

#[test]
fn firmware_update_through_boot() {
    let mut bus = Bus::preset("mbx");
    bus.assign_addresses();
    // INIT → BOOT with the bootstrap mailbox of SII words 0x14–0x17.
    let sii = bus.read_sii(DRIVE, 0x40);
    let w = |i: usize| u16::from_le_bytes([sii[2 * i], sii[2 * i + 1]]);
    let (rx, rxl, tx, txl) = (w(0x14), w(0x15), w(0x16), w(0x17));
    assert_eq!((rx, rxl, tx, txl), (0x1000, 0x200, 0x1200, 0x200));
    let protocols = w(0x1C);
    assert_ne!(protocols & 0x08, 0, "SII announces FoE");
    let mut m = Mbx {
        station: DRIVE,
        out: (rx, rxl as usize),
        inp: (tx, txl as usize),
        counter: 0,
    };
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&sm_bytes(rx, rxl, 0x26, true));
    b[8..].copy_from_slice(&sm_bytes(tx, txl, 0x22, true));
    assert_eq!(bus.fpwr(DRIVE, reg::SM0, &b), 1);
    assert_eq!(bus.al_request(DRIVE, 0x03), 0x03, "in BOOT");
    let fw: Vec<u8> = (0..5000u32).map(|i| (i % 253) as u8).collect();
    assert_eq!(foe_write(&mut bus, &mut m, "drive_fw.efw", 0, &fw), Ok(0));
    let esc = bus.net.subdevice(2).unwrap();
    let (name, stored) = esc.foe().unwrap().firmware.clone().unwrap();
    assert_eq!((name.as_str(), stored), ("drive_fw.efw", fw.clone()));
    // In BOOT only FoE is served: CoE gets "protocol not supported".
    let req = build(&mut m, |b, c| {
        ecat_wire::coe::sdo::emit_upload_request(b, c, 0x1018, 1, false)
    });
    let a = bus.mbx_request(&m, &req);
    assert_eq!(
        mailbox_error(&a),
        Some(MailboxErrorCode::UNSUPPORTED_PROTOCOL)
    );
    // BOOT → PREOP is refused; back through INIT the firmware stays.
    assert_eq!(bus.al_request(DRIVE, 0x02) & 0x1F, 0x13);
    assert_eq!(bus.al_request(DRIVE, 0x11), 0x01);
    let foe = bus.net.subdevice(2).unwrap().foe().unwrap();
    assert!(foe.firmware.is_some());
    // The servo has FoE but no bootstrap mailbox: BOOT is refused (0x0013).
    assert_eq!(bus.al_request(SERVO, 0x03), 0x11);
}

fn soe_request(bus: &mut Bus, m: &mut Mbx, r: &SoeRepr<'_>) -> Vec<Vec<u8>> {
    let req = build(m, |b, c| soe::emit_soe(b, c, r));
    let mut out = vec![bus.mbx_request(m, &req)];
    while let Some(a) = bus.mbx_recv(m) {
        out.push(a);
    }
    out
}

/// Read `elements` of `idn`: the data of all fragments, or the error code.
fn soe_read(bus: &mut Bus, m: &mut Mbx, idn: Idn, el: Elements) -> Result<Vec<u8>, SoeErrorCode> {
    let answers = soe_request(bus, m, &SoeRepr::new(SoeOpcode::ReadRequest, el, idn, &[]));
    let mut data = Vec::new();
    let n = answers.len();
    for (i, a) in answers.iter().enumerate() {
        let (_, r) = soe::parse_soe(a).unwrap();
        assert_eq!(r.opcode, SoeOpcode::ReadResponse);
        assert_eq!(r.elements, el);
        if let Some(c) = r.error_code() {
            return Err(c);
        }
        assert_eq!(r.fragments_left() as usize, n - 1 - i);
        if i + 1 == n {
            assert_eq!(r.idn(), Some(idn));
        }
        data.extend_from_slice(r.data);
    }
    Ok(data)
}

/// Write the value of `idn`, in fragments of SM0 − 10 bytes as SOEM sends them.
fn soe_write(
    bus: &mut Bus,
    m: &mut Mbx,
    idn: Idn,
    el: Elements,
    data: &[u8],
) -> Result<(), SoeErrorCode> {
    let max = soe::max_data(m.out.1);
    let chunks: Vec<&[u8]> = data.chunks(max).collect();
    let n = chunks.len();
    for (i, c) in chunks.iter().enumerate() {
        let left = (n - 1 - i) as u16;
        let r = SoeRepr {
            incomplete: left > 0,
            idn_or_fragments: if left > 0 { left } else { idn.0 },
            ..SoeRepr::new(SoeOpcode::WriteRequest, el, idn, c)
        };
        let req = build(m, |b, cnt| soe::emit_soe(b, cnt, &r));
        if left > 0 {
            assert_eq!(bus.mbx_send(m, &req), 1);
            assert!(
                bus.mbx_recv(m).is_none(),
                "no answer to an incomplete fragment"
            );
            continue;
        }
        let a = bus.mbx_request(m, &req);
        let (_, r) = soe::parse_soe(&a).unwrap();
        assert_eq!((r.opcode, r.idn()), (SoeOpcode::WriteResponse, Some(idn)));
        return r.error_code().map_or(Ok(()), Err);
    }
    unreachable!()
}

#[test]
fn soe_idns_read_write_fragments_and_errors() {
    let mut bus = mbx_preop();
    let mut m = Mbx::standard(DRIVE);
    let s = |t: &str| t.parse::<Idn>().unwrap();
    let v = Elements::VALUE;
    assert_eq!(
        soe_read(&mut bus, &mut m, s("S-0-0001"), v),
        Ok(1000u16.to_le_bytes().to_vec())
    );
    let name = soe_read(&mut bus, &mut m, s("S-0-0001"), Elements::NAME).unwrap();
    let (h, text) = ListHeader::parse(&name).unwrap();
    assert_eq!(
        (h.current as usize, text),
        (text.len(), &b"Control unit cycle time (tScyc)"[..])
    );
    let attr = soe_read(&mut bus, &mut m, s("S-0-0001"), Elements::ATTRIBUTE).unwrap();
    assert_eq!(
        IdnAttribute(u32::from_le_bytes(attr.try_into().unwrap())).fixed_len(),
        Some(2)
    );
    let unit = soe_read(&mut bus, &mut m, s("S-0-0001"), Elements::UNIT).unwrap();
    assert_eq!(ListHeader::parse(&unit).unwrap().1, b"us");
    // Several elements at once: min, max and value, in bit order.
    let mmv = soe_read(
        &mut bus,
        &mut m,
        s("P-0-0150"),
        Elements(0x10 | 0x20 | 0x40),
    )
    .unwrap();
    assert_eq!(mmv, [0, 0, 0, 0, 0xE8, 3, 0, 0, 0xF4, 1, 0, 0]);
    // Write within and outside the limits.
    soe_write(&mut bus, &mut m, s("P-0-0150"), v, &700u32.to_le_bytes()).unwrap();
    assert_eq!(
        soe_read(&mut bus, &mut m, s("P-0-0150"), v),
        Ok(700u32.to_le_bytes().to_vec())
    );
    assert_eq!(
        bus.net
            .subdevice(2)
            .unwrap()
            .soe()
            .unwrap()
            .number(s("P-0-0150")),
        Some(700)
    );
    assert_eq!(
        soe_write(&mut bus, &mut m, s("P-0-0150"), v, &2000u32.to_le_bytes()),
        Err(SoeErrorCode::DATA_ABOVE_MAX)
    );
    assert_eq!(
        soe_write(&mut bus, &mut m, s("P-0-0150"), v, &[1, 2]),
        Err(SoeErrorCode::DATA_TOO_SHORT)
    );
    assert_eq!(
        soe_write(&mut bus, &mut m, s("S-0-0011"), v, &[1, 0]),
        Err(SoeErrorCode::DATA_READ_ONLY)
    );
    assert_eq!(
        soe_write(&mut bus, &mut m, s("S-0-0001"), Elements::NAME, b"x"),
        Err(SoeErrorCode(0x2004))
    );
    // Errors decode to text.
    let e = soe_read(&mut bus, &mut m, s("S-0-0999"), v).unwrap_err();
    assert_eq!(e.to_string(), "0x1001 (IDN not present)");
    assert_eq!(
        soe_read(&mut bus, &mut m, s("S-0-0011"), Elements::MIN),
        Err(SoeErrorCode::NO_MIN)
    );
    assert_eq!(
        soe_read(&mut bus, &mut m, s("S-0-0011"), Elements(0)),
        Err(SoeErrorCode::NO_ELEMENT)
    );
    let r = SoeRepr {
        drive_no: 3,
        ..SoeRepr::new(SoeOpcode::ReadRequest, v, s("S-0-0001"), &[])
    };
    let a = soe_request(&mut bus, &mut m, &r);
    assert_eq!(
        soe::parse_soe(&a[0]).unwrap().1.error_code(),
        Some(SoeErrorCode::INVALID_DRIVE)
    );
    // A long list in fragments (600 bytes + header over 118-byte fragments), written back
    // in fragments.
    let trace = soe_read(&mut bus, &mut m, s("P-0-0200"), v).unwrap();
    let (h, items) = ListHeader::parse(&trace).unwrap();
    assert_eq!((h.current, h.max, items.len()), (600, 1024, 600));
    assert!(items.iter().enumerate().all(|(i, &b)| b == i as u8));
    let mut new = vec![0u8; 4 + 500];
    ListHeader::emit(&mut new, &[0x77; 500], 1024).unwrap();
    soe_write(&mut bus, &mut m, s("P-0-0200"), v, &new).unwrap();
    assert_eq!(soe_read(&mut bus, &mut m, s("P-0-0200"), v).unwrap(), new);
    // The IDN list names every IDN, itself included.
    let list = soe_read(&mut bus, &mut m, s("S-0-0017"), v).unwrap();
    let (_, ids) = ListHeader::parse(&list).unwrap();
    let ids: Vec<u16> = ids
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert!(ids.contains(&1) && ids.contains(&17) && ids.contains(&s("P-0-0200").0));
    // The feedback IDNs follow the drive model's actual values.
    bus.net
        .subdevice_mut(2)
        .unwrap()
        .od_mut()
        .unwrap()
        .set(0x6064, 0, -4242);
    assert_eq!(
        soe_read(&mut bus, &mut m, s("S-0-0051"), v),
        Ok((-4242i32).to_le_bytes().to_vec())
    );
    // The servo has no SoE: mailbox error "protocol not supported".
    let mut ms = Mbx::standard(SERVO);
    let req = build(&mut ms, |b, c| {
        soe::emit_soe(b, c, &SoeRepr::new(SoeOpcode::ReadRequest, v, Idn(1), &[]))
    });
    assert_eq!(
        mailbox_error(&bus.mbx_request(&ms, &req)),
        Some(MailboxErrorCode::UNSUPPORTED_PROTOCOL)
    );
}

#[test]
fn voe_is_echoed() {
    let mut bus = mbx_preop();
    let mut m = Mbx::standard(DRIVE);
    let r = VoeRepr {
        vendor_id: 0xECA,
        vendor_type: 0x4242,
        data: b"vendor specific",
    };
    let req = build(&mut m, |b, c| voe::emit_voe(b, c, &r));
    let a = bus.mbx_request(&m, &req);
    assert_eq!(voe::parse_voe(&a).unwrap().1, r);
}

fn eoe_send_frame(bus: &mut Bus, m: &mut Mbx, frame: &[u8], frame_no: u8) {
    for (header, data) in eoe::fragments(frame, m.out.1, 0, frame_no).unwrap() {
        let req = build(m, |b, c| eoe::emit_eoe(b, c, &EoeRepr { header, data }));
        assert_eq!(bus.mbx_send(m, &req), 1);
    }
}

/// Collect answers until a whole frame is reassembled.
fn eoe_recv_frame(bus: &mut Bus, m: &mut Mbx) -> Vec<u8> {
    let mut r = Reassembler::new(vec![0u8; 1536]);
    for _ in 0..100 {
        let Some(a) = bus.mbx_recv(m) else { continue };
        let (_, e) = eoe::parse_eoe(&a).unwrap();
        assert!(a.len() <= m.inp.1, "fragment fits SM1");
        if let Some(n) = r.push(&e).unwrap() {
            return r.frame()[..n].to_vec();
        }
    }
    panic!("no complete frame");
}

const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x99];
const PEER_IP: [u8; 4] = [10, 99, 0, 1];
const DRIVE_IP: Ipv4Addr = Ipv4Addr::new(10, 99, 0, 3);

fn ipv4_frame(dst: [u8; 6], proto: u8, payload: &[u8]) -> Vec<u8> {
    ipstack::ipv4_frame(
        (dst, PEER_MAC),
        (PEER_IP, DRIVE_IP.octets()),
        proto,
        7,
        payload,
    )
}

#[test]
fn eoe_set_ip_arp_ping_and_udp_echo() {
    let mut bus = mbx_preop();
    let mut m = Mbx::standard(DRIVE);
    let p = IpParams {
        ip: Some(DRIVE_IP),
        subnet: Some(Ipv4Addr::new(255, 255, 255, 0)),
        dns_name: Some(eoe::DnsName::new("drive3").unwrap()),
        ..Default::default()
    };
    let req = build(&mut m, |b, c| eoe::emit_set_ip_request(b, c, 0, &p));
    let a = bus.mbx_request(&m, &req);
    let (_, e) = eoe::parse_eoe(&a).unwrap();
    assert_eq!(
        (e.header.frame_type, e.header.result()),
        (EoeFrameType::SetIpResponse, EoeResult::SUCCESS)
    );
    let mac = bus.net.subdevice(2).unwrap().eoe().unwrap().mac();
    // ARP.
    let mut arp = vec![0xFF; 6];
    arp.extend_from_slice(&PEER_MAC);
    arp.extend_from_slice(&[8, 6, 0, 1, 8, 0, 6, 4, 0, 1]);
    arp.extend_from_slice(&PEER_MAC);
    arp.extend_from_slice(&PEER_IP);
    arp.extend_from_slice(&[0; 6]);
    arp.extend_from_slice(&DRIVE_IP.octets());
    eoe_send_frame(&mut bus, &mut m, &arp, 0);
    let r = eoe_recv_frame(&mut bus, &mut m);
    assert_eq!(
        (&r[0..6], &r[6..12], &r[20..22]),
        (&PEER_MAC[..], &mac[..], &[0u8, 2][..])
    );
    // A 1000-byte ping: fragmented both ways.
    let mut icmp = vec![8u8, 0, 0, 0, 0, 1, 0, 1];
    icmp.extend((0..992).map(|i| i as u8));
    let c = checksum(&icmp, 0);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    eoe_send_frame(&mut bus, &mut m, &ipv4_frame(mac, 1, &icmp), 1);
    let r = eoe_recv_frame(&mut bus, &mut m);
    assert_eq!(r.len(), 34 + 1000);
    assert_eq!((r[34], &r[38..]), (0, &icmp[4..]));
    // UDP echo on port 7.
    let mut udp = vec![0x9C, 0x40, 0, UDP_ECHO_PORT as u8, 0, 13, 0, 0];
    udp.extend_from_slice(b"hello");
    eoe_send_frame(&mut bus, &mut m, &ipv4_frame(mac, 17, &udp), 2);
    let r = eoe_recv_frame(&mut bus, &mut m);
    assert_eq!(
        (&r[34..38], &r[42..]),
        (&[0, 7, 0x9C, 0x40][..], &b"hello"[..])
    );
    let st = bus.net.subdevice(2).unwrap().eoe().unwrap().stats;
    assert_eq!((st.rx_frames, st.tx_frames, st.errors), (3, 3, 0));
    // Get IP parameters back.
    let req = build(&mut m, |b, c| {
        eoe::emit_eoe(
            b,
            c,
            &EoeRepr {
                header: eoe::EoeHeaderRepr::single(EoeFrameType::GetIpRequest, 0),
                data: &[],
            },
        )
    });
    let a = bus.mbx_request(&m, &req);
    let (_, e) = eoe::parse_eoe(&a).unwrap();
    let got = IpParams::parse(e.data).unwrap();
    assert_eq!(
        (got.ip, got.mac, got.dns_name.unwrap().as_str()),
        (Some(DRIVE_IP), Some(mac), Some("drive3"))
    );
    // The device's own traffic reaches the MainDevice in fragments.
    let own = ipv4_frame(PEER_MAC, 17, &[0xAB; 600]);
    assert!(bus.net.subdevice_mut(2).unwrap().eoe_send(&own));
    assert_eq!(eoe_recv_frame(&mut bus, &mut m), own);
    assert!(
        !bus.net.subdevice_mut(1).unwrap().eoe_send(&own),
        "EL3102: no EoE"
    );
    // The EL3102 has no EoE.
    let mut m2 = Mbx::standard(EL3102);
    let req = build(&mut m2, |b, c| eoe::emit_set_ip_request(b, c, 0, &p));
    assert_eq!(
        mailbox_error(&bus.mbx_request(&m2, &req)),
        Some(MailboxErrorCode::UNSUPPORTED_PROTOCOL)
    );
}

#[test]
fn foe_from_esi_and_network_file_keys() {
    let dir = std::env::temp_dir().join(format!("mbxp-foe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("fw.bin"), b"firmware image").unwrap();
    let esi = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/esi");
    let text = format!(
        "[[subdevice]]\nesi = \"{}\"\ntype = \"EL3101\"\nrevision = 0x00100000\n\
         foe_files = {{ \"fw.bin\" = \"fw.bin\" }}\nfoe_password = 7\nfoe_busy = 1\n",
        esi.join("Beckhoff_EL31xx.xml").display()
    );
    let net = ecat_sim::Network::from_toml_str(&text, "net.toml", &dir).unwrap();
    let foe = net
        .subdevice(0)
        .unwrap()
        .foe()
        .expect("the ESI declares FoE");
    assert_eq!(foe.files["fw.bin"], b"firmware image");
    assert_eq!((foe.password, foe.busy_replies), (Some(7), 1));
    // A device without FoE (EK1100), and a file that is not there.
    let e = ecat_sim::Network::from_toml_str(
        "[[subdevice]]\nmodel = \"EK1100\"\nfoe_password = 1\n",
        "net.toml",
        &dir,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("net.toml:3") && e.contains("does not serve FoE"),
        "{e}"
    );
    let e = ecat_sim::Network::from_toml_str(
        "[[subdevice]]\nmodel = \"ECAT-SERVO-402\"\nfoe_files = { \"a\" = \"missing.bin\" }\n",
        "net.toml",
        &dir,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("cannot read FoE file \"a\""), "{e}");
    // The EoE address from the network file; refused on a device without EoE.
    let net = ecat_sim::Network::from_toml_str(
        "[[subdevice]]\nmodel = \"ECAT-SOE-DRIVE\"\neoe_ip = \"192.168.9.3/20\"\n",
        "net.toml",
        &dir,
    )
    .unwrap();
    let p = net.subdevice(0).unwrap().eoe().unwrap().params;
    assert_eq!(p.ip, Some(Ipv4Addr::new(192, 168, 9, 3)));
    assert_eq!(p.subnet, Some(Ipv4Addr::new(255, 255, 240, 0)));
    for (bad, says) in [
        (
            "model = \"EL3102\"\neoe_ip = \"10.0.0.1\"",
            "does not serve EoE",
        ),
        (
            "model = \"ECAT-SOE-DRIVE\"\neoe_ip = \"10.0.0\"",
            "is not an IPv4 address",
        ),
        (
            "model = \"ECAT-SOE-DRIVE\"\neoe_ip = \"10.0.0.1/33\"",
            "must be 0..32",
        ),
    ] {
        let text = format!("[[subdevice]]\n{bad}\n");
        let e = ecat_sim::Network::from_toml_str(&text, "net.toml", &dir)
            .unwrap_err()
            .to_string();
        assert!(e.contains("net.toml:3") && e.contains(says), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sm1_mailbox_full_reads_through_an_fmmu() {
    // A MainDevice can map SM1's status byte (0x080D, bit 3 "mailbox full") into its cyclic
    // image and learn there that an answer waits, as real ESCs allow.
    let mut bus = mbx_preop();
    let mut m = Mbx::standard(DRIVE);
    let f = fmmu_bytes(0x0001_0000, 1, 0x080D, reg::FmmuRepr::READ);
    assert_eq!(bus.fpwr(DRIVE, reg::fmmu(2), &f), 1);
    let lrd = |bus: &mut Bus| {
        let r = bus.send(
            ecat_wire::DatagramRepr::logical(ecat_wire::Command::Lrd, 1, 0x0001_0000, 1),
            &[0],
        );
        assert_eq!(r.wkc, 1);
        r.data[0] & 0x08 != 0
    };
    assert!(!lrd(&mut bus), "SM1 empty");
    let r = VoeRepr {
        vendor_id: 1,
        vendor_type: 2,
        data: b"x",
    };
    let req = build(&mut m, |b, c| voe::emit_voe(b, c, &r));
    assert_eq!(bus.mbx_send(&m, &req), 1);
    assert!(lrd(&mut bus), "the answer waits in SM1");
    assert!(bus.mbx_recv(&m).is_some());
    assert!(!lrd(&mut bus), "read by the MainDevice");
}
