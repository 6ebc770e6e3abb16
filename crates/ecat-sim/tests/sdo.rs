//! The mailbox and the CoE server seen from the wire: SDO uploads and downloads in every
//! form, complete access, abort codes, SDO Information, mailbox counters and error replies.

mod common;

use common::coe::{build, Mbx};
use common::Bus;
use ecat_sim::devices::servo_od::APP_TEXT;
use ecat_wire::coe::info::{self, OdListType, SdoInfo};
use ecat_wire::coe::sdo::{self, SdoResponse};
use ecat_wire::coe::SdoAbortCode as A;

#[test]
fn upload_in_every_form() {
    let (mut bus, mut m) = Bus::servo_preop();
    // Expedited: the exact bytes of reference §6.4's example, with the server's counter 1.
    let req = build(&mut m, |b, c| {
        sdo::emit_upload_request(b, c, 0x1018, 1, false)
    });
    assert_eq!(
        req,
        [0x0a, 0, 0, 0, 0, 0x13, 0, 0x20, 0x40, 0x18, 0x10, 1, 0, 0, 0, 0]
    );
    let a = bus.mbx_request(&m, &req);
    assert_eq!(
        a,
        [0x0a, 0, 0, 0, 0, 0x13, 0, 0x30, 0x43, 0x18, 0x10, 1, 0xCA, 0x0E, 0, 0]
    );
    assert_eq!(bus.sdo_int(&mut m, 0x1018, 2), 0x402);
    assert_eq!(bus.sdo_int(&mut m, 0x1018, 4), 1, "serial = position + 1");
    assert_eq!(bus.sdo_int(&mut m, 0x1018, 0), 4);
    assert_eq!(bus.sdo_int(&mut m, 0x6041, 0) & 0x4F, 0x40);
    // Normal (one message): the device name.
    let req = build(&mut m, |b, c| {
        sdo::emit_upload_request(b, c, 0x1008, 0, false)
    });
    let a = bus.mbx_request(&m, &req);
    let name = b"ecat simulated CiA 402 servo drive";
    match sdo::parse_response(&a).unwrap() {
        SdoResponse::Normal {
            total_size,
            first_data,
            ..
        } => assert_eq!((total_size as usize, first_data), (name.len(), &name[..])),
        r => panic!("{r:?}"),
    }
    // Segmented: 0x2001 is longer than SM1 − 16 = 112 bytes.
    assert!(APP_TEXT.len() > 112);
    let t = bus.sdo_upload(&mut m, 0x2001, 0, false).unwrap();
    assert_eq!(t, APP_TEXT.as_bytes());
}

#[test]
fn download_in_every_form() {
    let (mut bus, mut m) = Bus::servo_preop();
    bus.sdo_download(&mut m, 0x6081, 0, false, &123_456u32.to_le_bytes())
        .unwrap();
    assert_eq!(bus.sdo_int(&mut m, 0x6081, 0), 123_456);
    bus.sdo_download(&mut m, 0x6060, 0, false, &[8]).unwrap();
    assert_eq!(bus.sdo_int(&mut m, 0x6060, 0), 8);
    // Normal, all in the first message.
    bus.sdo_download(&mut m, 0x2001, 0, false, b"hello, drive")
        .unwrap();
    assert_eq!(
        bus.sdo_upload(&mut m, 0x2001, 0, false).unwrap(),
        b"hello, drive"
    );
    // Segmented: 250 bytes = 112 + 119 + 19.
    let long: Vec<u8> = (0..250).map(|i| b'a' + (i % 26) as u8).collect();
    bus.sdo_download(&mut m, 0x2001, 0, false, &long).unwrap();
    assert_eq!(bus.sdo_upload(&mut m, 0x2001, 0, false).unwrap(), long);
    // Too long for the text (256 bytes, our limit): refused at the initiate request.
    let too_long = vec![b'x'; 300];
    assert_eq!(
        bus.sdo_download(&mut m, 0x2001, 0, false, &too_long),
        Err(A::TOO_LONG)
    );
    // Normal download of a 4-byte value (as some masters do) works too.
    let req = build(&mut m, |b, c| {
        sdo::emit_normal_download(b, c, 0x6083, 0, false, 4, &7u32.to_le_bytes())
    });
    let a = bus.mbx_request(&m, &req);
    assert!(matches!(
        sdo::parse_response(&a),
        Ok(SdoResponse::DownloadAck { index: 0x6083, .. })
    ));
    assert_eq!(bus.sdo_int(&mut m, 0x6083, 0), 7);
}

#[test]
fn segment_toggles_are_checked() {
    let (mut bus, mut m) = Bus::servo_preop();
    let req = build(&mut m, |b, c| {
        sdo::emit_upload_request(b, c, 0x2001, 0, false)
    });
    bus.mbx_request(&m, &req);
    // The first segment request must carry toggle 0.
    let req = build(&mut m, |b, c| sdo::emit_upload_segment_request(b, c, true));
    let a = bus.mbx_request(&m, &req);
    match sdo::parse_response(&a).unwrap() {
        SdoResponse::Abort { code, .. } => assert_eq!(code, A::TOGGLE),
        r => panic!("{r:?}"),
    }
    // The transfer is over: another segment request is an unknown command.
    let req = build(&mut m, |b, c| sdo::emit_upload_segment_request(b, c, false));
    let a = bus.mbx_request(&m, &req);
    assert!(matches!(
        sdo::parse_response(&a),
        Ok(SdoResponse::Abort {
            code: A::BAD_COMMAND,
            ..
        })
    ));
    // Download: the second segment repeats toggle 0.
    let data = [b'z'; 200];
    let req = build(&mut m, |b, c| {
        sdo::emit_normal_download(b, c, 0x2001, 0, false, 200, &data[..112])
    });
    bus.mbx_request(&m, &req);
    let req = build(&mut m, |b, c| {
        sdo::emit_download_segment(b, c, false, false, &data[112..150])
    });
    let a = bus.mbx_request(&m, &req);
    assert!(matches!(
        sdo::parse_response(&a),
        Ok(SdoResponse::DownloadSegmentAck { toggle: false })
    ));
    let req = build(&mut m, |b, c| {
        sdo::emit_download_segment(b, c, false, true, &data[150..])
    });
    let a = bus.mbx_request(&m, &req);
    assert!(matches!(
        sdo::parse_response(&a),
        Ok(SdoResponse::Abort {
            code: A::TOGGLE,
            ..
        })
    ));
    assert_eq!(
        bus.sdo_upload(&mut m, 0x2001, 0, false).unwrap(),
        APP_TEXT.as_bytes()
    );
}

#[test]
fn complete_access_reads_and_writes_whole_objects() {
    let (mut bus, mut m) = Bus::servo_preop();
    // Subindex 0: SI0 in 2 bytes, then the entries (reference §6.4).
    let a = bus.sdo_upload(&mut m, 0x1C12, 0, true).unwrap();
    assert_eq!(a, [1, 0, 0x00, 0x16]);
    let a = bus.sdo_upload(&mut m, 0x1A00, 0, true).unwrap();
    assert_eq!(
        a,
        [3, 0, 0x10, 0, 0x41, 0x60, 0x20, 0, 0x64, 0x60, 0x20, 0, 0x6C, 0x60]
    );
    let a = bus.sdo_upload(&mut m, 0x1C00, 0, true).unwrap();
    assert_eq!(a, [4, 0, 1, 2, 3, 4]);
    // Subindex 1: entries only.
    let a = bus.sdo_upload(&mut m, 0x1018, 1, true).unwrap();
    assert_eq!(&a[..4], &[0xCA, 0x0E, 0, 0]);
    assert_eq!(a.len(), 16);
    // Write 0x1C12 = {1, 0x1601} in one transfer, as SOEM's sample ENI does.
    bus.sdo_download(&mut m, 0x1C12, 0, true, &[1, 0, 0x01, 0x16])
        .unwrap();
    assert_eq!(bus.sdo_int(&mut m, 0x1C12, 1), 0x1601);
    // A wrong length, a VAR object, subindex 2: refused.
    assert_eq!(
        bus.sdo_download(&mut m, 0x1C12, 0, true, &[1, 0, 0x01]),
        Err(A::TYPE_MISMATCH)
    );
    assert_eq!(
        bus.sdo_upload(&mut m, 0x6041, 0, true),
        Err(A::COMPLETE_ACCESS_UNSUPPORTED)
    );
    assert_eq!(
        bus.sdo_upload(&mut m, 0x1018, 2, true),
        Err(A::COMPLETE_ACCESS_UNSUPPORTED)
    );
    // The EL3102 does not advertise complete access.
    let mut io = Bus::preset("io");
    io.assign_addresses();
    let mut el = Mbx::standard(0x1005);
    io.mailbox_preop(&el);
    assert_eq!(
        io.sdo_upload(&mut el, 0x1C13, 0, true),
        Err(A::COMPLETE_ACCESS_UNSUPPORTED)
    );
    assert_eq!(io.sdo_int(&mut el, 0x1C13, 0), 2);
    assert_eq!(io.sdo_int(&mut el, 0x1A00, 1), 0x3101_0108);
}

#[test]
fn abort_codes() {
    let (mut bus, mut m) = Bus::servo_preop();
    let cases: &[(u16, u8, &[u8], A)] = &[
        (0x6041, 0, &[0, 0], A::READ_ONLY),
        (0x5555, 0, &[0], A::NO_OBJECT),
        (0x1018, 9, &[0], A::NO_SUBINDEX),
        (0x6040, 0, &[0, 0, 0], A::TOO_LONG),
        (0x6040, 0, &[0], A::TOO_SHORT),
        (0x6060, 0, &[4], A::VALUE_RANGE),
        (0x2000, 4, &[0, 0, 0, 0], A::VALUE_TOO_LOW),
        (0x2000, 4, &[0, 0, 1, 0], A::VALUE_TOO_HIGH),
    ];
    for &(i, s, d, code) in cases {
        assert_eq!(
            bus.sdo_download(&mut m, i, s, false, d),
            Err(code),
            "{i:04X}:{s}"
        );
    }
    assert_eq!(bus.sdo_upload(&mut m, 0x2002, 0, false), Err(A::WRITE_ONLY));
    assert_eq!(bus.sdo_upload(&mut m, 0x5555, 0, false), Err(A::NO_OBJECT));
    assert_eq!(
        bus.sdo_upload(&mut m, 0x6041, 1, false),
        Err(A::NO_SUBINDEX)
    );
    // An undefined command specifier (block download, ccs 6).
    let mut req = build(&mut m, |b, c| {
        sdo::emit_upload_request(b, c, 0x6041, 0, false)
    });
    req[8] = 0xC0;
    let a = bus.mbx_request(&m, &req);
    assert!(matches!(
        sdo::parse_response(&a),
        Ok(SdoResponse::Abort {
            code: A::BAD_COMMAND,
            index: 0x6041,
            ..
        })
    ));
    // State: the motor data are writable in PREOP only.
    bus.sdo_download(&mut m, 0x2000, 1, false, &1000u32.to_le_bytes())
        .unwrap();
    let (mut bus, mut m) = servo_safeop();
    let r = bus.sdo_download(&mut m, 0x2000, 1, false, &1000u32.to_le_bytes());
    assert_eq!(r, Err(A::DEVICE_STATE));
}

/// The servo in SAFEOP with its default process data.
fn servo_safeop() -> (Bus, Mbx) {
    let (mut bus, m) = Bus::servo_preop();
    bus.fpwr(
        0x1001,
        ecat_wire::register::sm(2),
        &common::sm_bytes(0x1100, 6, 0x64, true),
    );
    bus.fpwr(
        0x1001,
        ecat_wire::register::sm(3),
        &common::sm_bytes(0x1180, 10, 0x20, true),
    );
    assert_eq!(bus.al_request(0x1001, 0x04), 0x04);
    (bus, m)
}

#[test]
fn mailbox_counter_duplicates_and_header_errors() {
    let (mut bus, mut m) = Bus::servo_preop();
    let req = build(&mut m, |b, c| {
        sdo::emit_upload_request(b, c, 0x1000, 0, false)
    });
    let a = bus.mbx_request(&m, &req);
    assert_eq!(&a[12..16], &0x0002_0192u32.to_le_bytes());
    // The same counter again: a repeated message, dropped without answer.
    assert_eq!(bus.mbx_send(&m, &req), 1);
    assert_eq!(bus.mbx_recv(&m), None);
    // Counter 0 is "not used": always served, even twice.
    let mut z = req.clone();
    z[5] &= 0x0F;
    for _ in 0..2 {
        let a = bus.mbx_request(&m, &z);
        assert_eq!(a[8], 0x43);
        assert_eq!(a[5] & 0x0F, 3, "CoE");
    }
    // The server's own counter runs 1..7 and wraps to 1.
    let mut seen = vec![];
    for _ in 0..8 {
        let req = build(&mut m, |b, c| {
            sdo::emit_upload_request(b, c, 0x1000, 0, false)
        });
        seen.push(bus.mbx_request(&m, &req)[5] >> 4);
    }
    assert!(seen.windows(2).all(|w| w[1] == w[0] % 7 + 1), "{seen:?}");
    // Header errors → mailbox error replies (type 0, service 1, detail).
    let err = |bus: &mut Bus, m: &Mbx, hdr: &[u8]| {
        let a = bus.mbx_request(m, hdr);
        assert_eq!((a[0], a[5] & 0x0F, a[6]), (4, 0, 1), "{a:?}");
        u16::from_le_bytes([a[8], a[9]])
    };
    assert_eq!(
        err(&mut bus, &m, &[0, 0, 0, 0, 0, 0x23]),
        0x0005,
        "length 0"
    );
    assert_eq!(
        err(&mut bus, &m, &[123, 0, 0, 0, 0, 0x33]),
        0x0005,
        "too long"
    );
    assert_eq!(err(&mut bus, &m, &[10, 0, 0, 0, 0, 0x40]), 0x0005, "type 0");
    assert_eq!(
        err(&mut bus, &m, &[10, 0, 0, 0, 0, 0x55]),
        0x0002,
        "SoE unsupported (the servo serves CoE and FoE)"
    );
    assert_eq!(
        err(&mut bus, &m, &[4, 0, 0, 0, 0, 0x63, 0, 0x20]),
        0x0008,
        "SDO shorter than 10"
    );
    assert_eq!(
        err(&mut bus, &m, &[2, 0, 0, 0, 0, 0x73, 0, 0x90]),
        0x0004,
        "CoE service 9"
    );
}

#[test]
fn sdo_information_lists_and_describes_the_dictionary() {
    let (mut bus, mut m) = Bus::servo_preop();
    // Counts (list type 0): all, RxPDO, TxPDO, backup, settings.
    let req = build(&mut m, |b, c| {
        info::emit_od_list_request(b, c, OdListType::COUNTS)
    });
    let a = bus.mbx_request(&m, &req);
    let SdoInfo::OdListResponse { words } = info::parse_info(&a).unwrap().1 else {
        panic!()
    };
    let w: Vec<u16> = words.iter().collect();
    assert_eq!((w.len(), w[0]), (6, 0));
    let all = w[1] as usize;
    assert!(
        all > 57,
        "more objects than one 128-byte message holds: {all}"
    );
    // All objects, in fragments: incomplete set and fragments-left counting down.
    let req = build(&mut m, |b, c| {
        info::emit_od_list_request(b, c, OdListType::ALL)
    });
    let mut a = bus.mbx_request(&m, &req);
    let mut indices = vec![];
    let mut frags = 0;
    loop {
        let (h, body) = info::parse_info(&a).unwrap();
        let SdoInfo::OdListResponse { words } = body else {
            panic!()
        };
        let words = if frags == 0 {
            let (t, rest) = words.split_first().unwrap();
            assert_eq!(t, 1);
            rest
        } else {
            words
        };
        indices.extend(words.iter());
        frags += 1;
        assert_eq!(h.incomplete, h.fragments_left > 0);
        if h.fragments_left == 0 {
            break;
        }
        a = bus.mbx_recv(&m).expect("next fragment after SM1 was read");
    }
    assert!(frags > 1);
    assert_eq!(indices.len(), all);
    assert!(indices.windows(2).all(|w| w[0] < w[1]));
    for i in [
        0x1000, 0x1008, 0x1018, 0x1C12, 0x1C32, 0x6040, 0x6041, 0x60FF, 0x6502,
    ] {
        assert!(indices.contains(&i), "{i:04X}");
    }
    // RxPDO-mappable objects.
    let req = build(&mut m, |b, c| {
        info::emit_od_list_request(b, c, OdListType::RXPDO_MAPPABLE)
    });
    let a = bus.mbx_request(&m, &req);
    let SdoInfo::OdListResponse { words } = info::parse_info(&a).unwrap().1 else {
        panic!()
    };
    let rx: Vec<u16> = words.iter().skip(1).collect();
    assert!(rx.contains(&0x6040) && rx.contains(&0x60FF) && !rx.contains(&0x6041));
    // Object description.
    let req = build(&mut m, |b, c| {
        info::emit_object_description_request(b, c, 0x1018)
    });
    let a = bus.mbx_request(&m, &req);
    let SdoInfo::ObjectDescriptionResponse(d) = info::parse_info(&a).unwrap().1 else {
        panic!()
    };
    assert_eq!(
        (d.max_subindex, d.object_code.0, d.name),
        (4, 9, &b"Identity"[..])
    );
    assert_eq!(u16::from_le_bytes([a[0], a[1]]) as usize, 12 + d.name.len());
    // Entry description as SOEM asks for it (value info 1+2+4) …
    let req = build(&mut m, |b, c| {
        info::emit_entry_description_request(b, c, 0x6041, 0, 7)
    });
    let a = bus.mbx_request(&m, &req);
    let SdoInfo::EntryDescriptionResponse(e) = info::parse_info(&a).unwrap().1 else {
        panic!()
    };
    assert_eq!((e.data_type.0, e.bit_len, e.access.0), (6, 16, 0x0087));
    assert_eq!(e.fields().unwrap().name, b"Statusword");
    assert_eq!(u16::from_le_bytes([a[0], a[1]]) as usize, 16 + 10);
    // … and with unit, default, minimum and maximum.
    let req = build(&mut m, |b, c| {
        info::emit_entry_description_request(b, c, 0x2000, 4, 0x7F)
    });
    let a = bus.mbx_request(&m, &req);
    let SdoInfo::EntryDescriptionResponse(e) = info::parse_info(&a).unwrap().1 else {
        panic!()
    };
    let f = e.fields().unwrap();
    assert_eq!(f.unit, Some(0));
    assert_eq!(f.default, Some(&500u32.to_le_bytes()[..]));
    assert_eq!(f.min, Some(&1u32.to_le_bytes()[..]));
    assert_eq!(f.max, Some(&10_000u32.to_le_bytes()[..]));
    // Errors.
    for (req, code) in [
        (
            build(&mut m, |b, c| {
                info::emit_object_description_request(b, c, 0x5555)
            }),
            A::NO_OBJECT,
        ),
        (
            build(&mut m, |b, c| {
                info::emit_entry_description_request(b, c, 0x1018, 7, 7)
            }),
            A::NO_SUBINDEX,
        ),
    ] {
        let a = bus.mbx_request(&m, &req);
        assert_eq!(info::parse_info(&a).unwrap().1, SdoInfo::Error { code });
    }
}
