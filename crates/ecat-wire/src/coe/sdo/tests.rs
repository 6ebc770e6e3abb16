//! SDO tests: reference bytes, every command form, builders ↔ parsers.

use super::*;
use proptest::prelude::*;
use std::format;

#[test]
fn upload_request_matches_reference() {
    let mut b = [0xA5u8; 17];
    let n = emit_upload_request(&mut b, 2, 0x1018, 0x01, false).unwrap();
    assert_eq!(n, 16);
    assert_eq!(
        b,
        [
            0x0a, 0x00, 0x00, 0x00, 0x00, 0x23, 0x00, 0x20, 0x40, 0x18, 0x10, 0x01, 0x00, 0x00,
            0x00, 0x00, 0xA5
        ]
    );
    assert_eq!(
        parse_request(&b[..n]).unwrap(),
        SdoRequest::Upload {
            index: 0x1018,
            subindex: 1,
            complete_access: false
        }
    );
}

#[test]
fn expedited_upload_response_from_reference_shape() {
    // `0a 00 00 00 00 X3 | 00 30 | 43 18 10 01 <4 data bytes>` with the SubDevice's counter 1.
    let msg = [
        0x0a, 0x00, 0x00, 0x00, 0x00, 0x13, 0x00, 0x30, 0x43, 0x18, 0x10, 0x01, 0x52, 0x2C, 0x4C,
        0x04,
    ];
    assert_eq!(
        parse_response(&msg).unwrap(),
        SdoResponse::Expedited {
            index: 0x1018,
            subindex: 1,
            data: [0x52, 0x2C, 0x4C, 0x04],
            len: 4
        }
    );
    let mut b = [0xA5u8; 16];
    emit_expedited_upload_response(&mut b, 1, 0x1018, 1, false, &[0x52, 0x2C, 0x4C, 0x04]).unwrap();
    assert_eq!(b, msg);
}

#[test]
fn command_bytes_for_every_form() {
    use SdoCommand::*;
    use TransferSize::*;
    let dl = |size, complete_access| InitiateDownload {
        size,
        complete_access,
    };
    let ul = |size, complete_access| InitiateUploadResponse {
        size,
        complete_access,
    };
    let seg = |toggle, unused, last| Segment {
        toggle,
        unused,
        last,
    };
    let table: &[(SdoCommand, u8)] = &[
        (dl(Normal, false), 0x21),
        (dl(Expedited(4), false), 0x23),
        (dl(Expedited(3), false), 0x27),
        (dl(Expedited(2), false), 0x2B),
        (dl(Expedited(1), false), 0x2F),
        (dl(Normal, true), 0x31),
        (dl(Expedited(4), true), 0x33),
        (dl(Expedited(1), true), 0x3F),
        (dl(ExpeditedUnsized, false), 0x22),
        (dl(NormalUnsized, false), 0x20),
        (InitiateDownloadAck, 0x60),
        (DownloadSegment(seg(false, 0, false)), 0x00),
        (DownloadSegment(seg(true, 0, false)), 0x10),
        (DownloadSegment(seg(false, 4, true)), 0x09),
        (DownloadSegment(seg(true, 7, true)), 0x1F),
        (DownloadSegmentAck { toggle: false }, 0x20),
        (DownloadSegmentAck { toggle: true }, 0x30),
        (
            InitiateUpload {
                complete_access: false,
            },
            0x40,
        ),
        (
            InitiateUpload {
                complete_access: true,
            },
            0x50,
        ),
        (ul(Expedited(4), false), 0x43),
        (ul(Expedited(3), false), 0x47),
        (ul(Expedited(2), false), 0x4B),
        (ul(Expedited(1), false), 0x4F),
        (ul(Normal, false), 0x41),
        (ul(Normal, true), 0x51),
        (ul(Expedited(2), true), 0x5B),
        (UploadSegmentRequest { toggle: false }, 0x60),
        (UploadSegmentRequest { toggle: true }, 0x70),
        (UploadSegment(seg(false, 0, true)), 0x01),
        (UploadSegment(seg(true, 3, false)), 0x16),
        (Abort, 0x80),
    ];
    for &(cmd, byte) in table {
        assert_eq!(cmd.encode(), byte, "{cmd:?}");
        let dir = cmd.direction().unwrap_or(Direction::Request);
        assert_eq!(SdoCommand::decode(byte, dir).unwrap(), cmd, "0x{byte:02X}");
    }
    // The same byte means different things in the two directions.
    assert_eq!(
        SdoCommand::decode(0x60, Direction::Response).unwrap(),
        InitiateDownloadAck
    );
    assert_eq!(
        SdoCommand::decode(0x60, Direction::Request).unwrap(),
        UploadSegmentRequest { toggle: false }
    );
    assert_eq!(
        SdoCommand::decode(0x80, Direction::Response).unwrap(),
        Abort
    );
    for b in [0xA0, 0xC0, 0xE0] {
        assert_eq!(
            SdoCommand::decode(b, Direction::Request),
            Err(Error::BadValue)
        );
        assert_eq!(
            SdoCommand::decode(b, Direction::Response),
            Err(Error::BadValue)
        );
    }
}

#[test]
fn expedited_download_bytes() {
    let mut b = [0xA5u8; 17];
    let n = emit_expedited_download(&mut b, 5, 0x1C12, 0, false, &[0x01]).unwrap();
    assert_eq!(
        &b[..17],
        &[0x0a, 0, 0, 0, 0, 0x53, 0x00, 0x20, 0x2F, 0x12, 0x1C, 0x00, 0x01, 0, 0, 0, 0xA5]
    );
    assert_eq!(
        parse_request(&b[..n]).unwrap(),
        SdoRequest::ExpeditedDownload {
            index: 0x1C12,
            subindex: 0,
            complete_access: false,
            data: [1, 0, 0, 0],
            len: 1
        }
    );
    assert_eq!(
        emit_expedited_download(&mut b, 1, 0, 0, false, &[]),
        Err(Error::BadLength)
    );
    assert_eq!(
        emit_expedited_download(&mut b, 1, 0, 0, false, &[0; 5]),
        Err(Error::BadLength)
    );
}

#[test]
fn complete_access_download_reference_payload() {
    // Writing 0x1C12 = {3, 0x1601, 0x1607, 0x161C} with CA from subindex 0: SI0 takes 2 bytes.
    let payload = [0x03, 0x00, 0x01, 0x16, 0x07, 0x16, 0x1C, 0x16];
    let mut b = [0xA5u8; 40];
    let n = emit_normal_download(&mut b, 1, 0x1C12, 0, true, 8, &payload).unwrap();
    assert_eq!(n, 24);
    assert_eq!(&b[..2], &[18, 0], "mailbox length 10 + 8");
    assert_eq!(&b[8..16], &[0x31, 0x12, 0x1C, 0x00, 8, 0, 0, 0]);
    assert_eq!(&b[16..24], &payload);
    assert_eq!(b[24], 0xA5);
    assert_eq!(
        parse_request(&b[..n]).unwrap(),
        SdoRequest::NormalDownload {
            index: 0x1C12,
            subindex: 0,
            complete_access: true,
            total_size: 8,
            data: &payload
        }
    );
    assert_eq!(
        emit_normal_download(&mut b, 1, 0, 0, false, 2, &[1, 2, 3]),
        Err(Error::BadLength)
    );
}

#[test]
fn segments_are_padded_and_unpadded() {
    let mut b = [0xA5u8; 32];
    let n = emit_download_segment(&mut b, 3, true, true, b"abc").unwrap();
    assert_eq!(n, 16, "3 + 7 data bytes after the mailbox header");
    assert_eq!(&b[..9], &[0x0a, 0, 0, 0, 0, 0x33, 0x00, 0x20, 0x19]);
    assert_eq!(&b[9..16], &[b'a', b'b', b'c', 0, 0, 0, 0]);
    assert_eq!(b[16], 0xA5);
    assert_eq!(
        parse_request(&b[..n]).unwrap(),
        SdoRequest::DownloadSegment {
            toggle: true,
            last: true,
            data: b"abc"
        }
    );
    let long = b"0123456789";
    let n = emit_upload_segment(&mut b, 4, false, false, long).unwrap();
    assert_eq!(n, 6 + 3 + 10);
    assert_eq!(b[8], 0x00);
    assert_eq!(
        parse_response(&b[..n]).unwrap(),
        SdoResponse::Segment {
            toggle: false,
            last: false,
            data: long
        }
    );
    let n = emit_upload_segment(&mut b, 4, true, true, b"").unwrap();
    assert_eq!(b[8], 0x1F);
    assert_eq!(
        parse_response(&b[..n]).unwrap(),
        SdoResponse::Segment {
            toggle: true,
            last: true,
            data: b""
        }
    );
    // An unused count larger than the data is refused, not sliced out of bounds.
    let bad = [0x04, 0, 0, 0, 0, 0x13, 0x00, 0x30, 0x0F, 1];
    assert_eq!(parse_response(&bad), Err(Error::BadLength));
}

#[test]
fn segment_requests_and_acks() {
    let mut b = [0xA5u8; 17];
    let n = emit_upload_segment_request(&mut b, 6, true).unwrap();
    assert_eq!(
        &b[..17],
        &[0x0a, 0, 0, 0, 0, 0x63, 0x00, 0x20, 0x70, 0, 0, 0, 0, 0, 0, 0, 0xA5]
    );
    assert_eq!(
        parse_request(&b[..n]).unwrap(),
        SdoRequest::UploadSegment { toggle: true }
    );
    let n = emit_download_segment_ack(&mut b, 2, true).unwrap();
    assert_eq!(&b[6..9], &[0x00, 0x30, 0x30]);
    assert_eq!(
        parse_response(&b[..n]).unwrap(),
        SdoResponse::DownloadSegmentAck { toggle: true }
    );
    let n = emit_download_ack(&mut b, 2, 0x6040, 0).unwrap();
    assert_eq!(&b[6..12], &[0x00, 0x30, 0x60, 0x40, 0x60, 0x00]);
    assert_eq!(
        parse_response(&b[..n]).unwrap(),
        SdoResponse::DownloadAck {
            index: 0x6040,
            subindex: 0
        }
    );
}

#[test]
fn normal_upload_response_clamps_to_total() {
    let mut b = [0u8; 64];
    let n = emit_normal_upload_response(&mut b, 1, 0x1008, 0, false, 20, b"EL2004").unwrap();
    assert_eq!(
        parse_response(&b[..n]).unwrap(),
        SdoResponse::Normal {
            index: 0x1008,
            subindex: 0,
            total_size: 20,
            first_data: b"EL2004"
        }
    );
    // Padding after a short object is not data.
    let n = emit_normal_upload_response(&mut b, 1, 0x1008, 0, false, 6, b"EL2004").unwrap();
    b[0] += 4; // the SubDevice sent 4 bytes of padding
    match parse_response(&b[..n + 4]).unwrap() {
        SdoResponse::Normal { first_data, .. } => assert_eq!(first_data, b"EL2004"),
        other => panic!("{other:?}"),
    }
    // A normal response without size is refused.
    b[8] = 0x40;
    assert_eq!(parse_response(&b[..n + 4]), Err(Error::BadValue));
}

#[test]
fn aborts() {
    let mut b = [0u8; 16];
    let n = emit_abort(
        &mut b,
        3,
        Direction::Response,
        0x2000,
        1,
        SdoAbortCode::NO_OBJECT,
    )
    .unwrap();
    assert_eq!(
        &b[..n],
        &[0x0a, 0, 0, 0, 0, 0x33, 0x00, 0x30, 0x80, 0x00, 0x20, 0x01, 0x00, 0x00, 0x02, 0x06]
    );
    let r = parse_response(&b[..n]).unwrap();
    assert_eq!(
        r,
        SdoResponse::Abort {
            index: 0x2000,
            subindex: 1,
            code: SdoAbortCode(0x0602_0000)
        }
    );
    assert_eq!(
        format!("{}", SdoAbortCode::NO_OBJECT),
        "0x06020000 (object does not exist in the object dictionary)"
    );
    let n = emit_abort(&mut b, 3, Direction::Request, 1, 2, SdoAbortCode::TIMEOUT).unwrap();
    assert!(matches!(
        parse_request(&b[..n]).unwrap(),
        SdoRequest::Abort {
            code: SdoAbortCode::TIMEOUT,
            ..
        }
    ));
    assert_eq!(SdoAbortCode::ALL.len(), 36);
    for c in SdoAbortCode::ALL {
        assert_ne!(c.description(), "unknown abort code");
    }
    assert_eq!(SdoAbortCode(1).description(), "unknown abort code");
}

#[test]
fn wrong_service_and_truncation() {
    let mut b = [0u8; 16];
    let n = emit_upload_request(&mut b, 1, 0x1000, 0, false).unwrap();
    assert_eq!(parse_response(&b[..n]), Err(Error::BadValue), "a request");
    assert_eq!(parse_request(&b[..n - 1]), Err(Error::Truncated));
    // Mailbox length 3: CoE header + command only.
    let short = [0x03, 0, 0, 0, 0, 0x13, 0x00, 0x30, 0x43];
    assert_eq!(parse_response(&short), Err(Error::Truncated));
    let empty = [0x02, 0, 0, 0, 0, 0x13, 0x00, 0x30];
    assert_eq!(parse_response(&empty), Err(Error::Truncated));
    assert_eq!(max_initiate_data(128), 112);
    assert_eq!(max_segment_data(128), 119);
    let mut small = [0u8; 15];
    assert_eq!(
        emit_upload_request(&mut small, 1, 0, 0, false),
        Err(Error::NoSpace)
    );
}

fn arb_size() -> impl Strategy<Value = TransferSize> {
    prop_oneof![
        Just(TransferSize::Normal),
        Just(TransferSize::NormalUnsized),
        Just(TransferSize::ExpeditedUnsized),
        (1u8..=4).prop_map(TransferSize::Expedited),
    ]
}

fn arb_command() -> impl Strategy<Value = SdoCommand> {
    use SdoCommand::*;
    let seg = (any::<bool>(), 0u8..8, any::<bool>()).prop_map(|(toggle, unused, last)| Segment {
        toggle,
        unused,
        last,
    });
    prop_oneof![
        (arb_size(), any::<bool>()).prop_map(|(size, complete_access)| InitiateDownload {
            size,
            complete_access
        }),
        Just(InitiateDownloadAck),
        seg.clone().prop_map(DownloadSegment),
        any::<bool>().prop_map(|toggle| DownloadSegmentAck { toggle }),
        any::<bool>().prop_map(|complete_access| InitiateUpload { complete_access }),
        (arb_size(), any::<bool>()).prop_map(|(size, complete_access)| {
            InitiateUploadResponse {
                size,
                complete_access,
            }
        }),
        any::<bool>().prop_map(|toggle| UploadSegmentRequest { toggle }),
        seg.prop_map(UploadSegment),
        Just(Abort),
    ]
}

proptest! {
    #[test]
    fn command_round_trip(cmd in arb_command()) {
        let dir = cmd.direction().unwrap_or(Direction::Response);
        prop_assert_eq!(SdoCommand::decode(cmd.encode(), dir).unwrap(), cmd);
    }

    #[test]
    fn upload_round_trip(data in proptest::collection::vec(any::<u8>(), 1..200),
                         index: u16, sub: u8, ca: bool, cnt in 1u8..8) {
        let mut b = [0xA5u8; 256];
        let n = if data.len() <= 4 {
            emit_expedited_upload_response(&mut b, cnt, index, sub, ca, &data).unwrap()
        } else {
            emit_normal_upload_response(&mut b, cnt, index, sub, ca, data.len() as u32, &data)
                .unwrap()
        };
        match parse_response(&b[..n]).unwrap() {
            SdoResponse::Expedited { index: i, subindex: s, data: d, len } => {
                prop_assert_eq!((i, s), (index, sub));
                prop_assert_eq!(&d[..len as usize], &data[..]);
            }
            SdoResponse::Normal { index: i, subindex: s, total_size, first_data } => {
                prop_assert_eq!((i, s), (index, sub));
                prop_assert_eq!(total_size as usize, data.len());
                prop_assert_eq!(first_data, &data[..]);
            }
            other => prop_assert!(false, "{:?}", other),
        }
    }

    #[test]
    fn segment_round_trip(data in proptest::collection::vec(any::<u8>(), 0..40),
                          toggle: bool, last: bool) {
        let mut b = [0xA5u8; 64];
        let n = emit_download_segment(&mut b, 1, toggle, last, &data).unwrap();
        prop_assert_eq!(
            parse_request(&b[..n]).unwrap(),
            SdoRequest::DownloadSegment { toggle, last, data: &data }
        );
        let n = emit_upload_segment(&mut b, 1, toggle, last, &data).unwrap();
        prop_assert_eq!(
            parse_response(&b[..n]).unwrap(),
            SdoResponse::Segment { toggle, last, data: &data }
        );
    }

    #[test]
    fn parsers_never_panic(b in proptest::collection::vec(any::<u8>(), 0..40)) {
        let _ = parse_response(&b);
        let _ = parse_request(&b);
        for dir in [Direction::Request, Direction::Response] {
            if let Some(&c) = b.first() {
                let _ = SdoCommand::decode(c, dir);
            }
        }
    }
}
