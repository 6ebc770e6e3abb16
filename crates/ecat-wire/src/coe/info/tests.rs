//! SDO Information tests.

use super::*;
use proptest::prelude::*;
use std::vec::Vec;

#[test]
fn list_types_follow_soes_not_wireshark() {
    // Reference CONFLICT: Wireshark labels 2 = "PDO map", 3 = "backup" (outdated); we follow
    // SOES/Synapticon: 2 = RxPDO-mappable, 3 = TxPDO-mappable, 4 = backup, 5 = settings.
    assert_eq!(OdListType::RXPDO_MAPPABLE.0, 2);
    assert_eq!(OdListType::TXPDO_MAPPABLE.0, 3);
    assert_eq!(OdListType::BACKUP.0, 4);
    assert_eq!(OdListType::SETTINGS.0, 5);
    assert_eq!(OdListType(3).name(), "TxPDO-mappable");
    assert_eq!(OdListType(9).name(), "unknown list type");
}

#[test]
fn od_list_request_bytes() {
    let mut b = [0xA5u8; 15];
    let n = emit_od_list_request(&mut b, 2, OdListType::ALL).unwrap();
    assert_eq!(n, 14);
    assert_eq!(
        b,
        [0x08, 0, 0, 0, 0, 0x23, 0x00, 0x80, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0xA5]
    );
    let (h, i) = parse_info(&b[..n]).unwrap();
    assert_eq!(h, SdoInfoHeaderRepr::new(SdoInfoOpcode::OdListRequest));
    assert_eq!(
        i,
        SdoInfo::OdListRequest {
            list_type: OdListType::ALL
        }
    );
}

#[test]
fn od_list_fragments() {
    let mut b = [0u8; 64];
    let n = emit_od_list_response(&mut b, 1, 1, Some(OdListType::ALL), &[0x1000, 0x1018]).unwrap();
    let (h, i) = parse_info(&b[..n]).unwrap();
    assert!(h.incomplete);
    assert_eq!(h.fragments_left, 1);
    assert_eq!(b[8], 0x82, "opcode 2 with the incomplete bit");
    let SdoInfo::OdListResponse { words } = i else {
        panic!("{i:?}")
    };
    let (t, rest) = words.split_first().unwrap();
    assert_eq!(t, 1);
    assert_eq!(rest.iter().collect::<Vec<_>>(), [0x1000, 0x1018]);
    let n = emit_od_list_response(&mut b, 2, 0, None, &[0x1C12]).unwrap();
    let (h, i) = parse_info(&b[..n]).unwrap();
    assert!(!h.incomplete);
    assert_eq!(
        i,
        SdoInfo::OdListResponse {
            words: U16List::new(&[0x12, 0x1C])
        }
    );
    assert!(U16List::new(&[1]).is_empty());
    assert_eq!(U16List::new(&[1, 2, 3]).get(1), None);
}

#[test]
fn object_description_length_math() {
    let d = ObjectDescriptionRepr {
        index: 0x1018,
        data_type: DataType(0x0023),
        max_subindex: 4,
        object_code: ObjectCode::RECORD,
        name: b"Identity",
    };
    let mut b = [0xA5u8; 40];
    let n = emit_object_description_response(&mut b, 3, &d).unwrap();
    // Mailbox length = 12 + name length.
    assert_eq!(b[0] as usize, 12 + 8);
    assert_eq!(n, 6 + 20);
    assert_eq!(b[n], 0xA5);
    assert_eq!(&b[12..18], &[0x18, 0x10, 0x23, 0x00, 0x04, 0x09]);
    let (_, i) = parse_info(&b[..n]).unwrap();
    assert_eq!(i, SdoInfo::ObjectDescriptionResponse(d));
    assert_eq!(d.object_code.name(), "RECORD");
    let n = emit_object_description_request(&mut b, 3, 0x6040).unwrap();
    assert_eq!(
        parse_info(&b[..n]).unwrap().1,
        SdoInfo::ObjectDescriptionRequest { index: 0x6040 }
    );
}

#[test]
fn entry_description_fields() {
    let data = [
        0x00, 0x00, 0x00, 0x00, // unit
        0x10, 0x00, // default
        0x00, 0x00, // min
        0xFF, 0xFF, // max
        b'G', b'a', b'i', b'n',
    ];
    let d = EntryDescriptionRepr {
        index: 0x8000,
        subindex: 1,
        value_info: value_info::ACCESS
            | value_info::UNIT
            | value_info::DEFAULT
            | value_info::MIN
            | value_info::MAX,
        data_type: DataType::UNSIGNED16,
        bit_len: 16,
        access: ObjectAccess(ObjectAccess::READ_ALL | ObjectAccess::WRITE_PREOP),
        data: &data,
    };
    let mut b = [0xA5u8; 48];
    let n = emit_entry_description_response(&mut b, 1, &d).unwrap();
    // Mailbox length = 16 + name length (+ the requested values).
    assert_eq!(b[0] as usize, 16 + data.len());
    let (_, i) = parse_info(&b[..n]).unwrap();
    let SdoInfo::EntryDescriptionResponse(e) = i else {
        panic!("{i:?}")
    };
    assert_eq!(e, d);
    let f = e.fields().unwrap();
    assert_eq!(f.unit, Some(0));
    assert_eq!(f.default, Some(&[0x10, 0x00][..]));
    assert_eq!(f.max, Some(&[0xFF, 0xFF][..]));
    assert_eq!(f.name, b"Gain");
    assert!(e.access.has(ObjectAccess::WRITE_PREOP));
    assert!(!e.access.has(ObjectAccess::WRITE_OP));
    let short = EntryDescriptionRepr {
        data: &data[..5],
        ..d
    };
    assert_eq!(short.fields(), Err(Error::Truncated));
    let plain = EntryDescriptionRepr {
        value_info: 0x07,
        data: b"Name",
        ..d
    };
    assert_eq!(plain.fields().unwrap().name, b"Name");
    let n = emit_entry_description_request(&mut b, 1, 0x8000, 1, 0x07).unwrap();
    assert_eq!(
        parse_info(&b[..n]).unwrap().1,
        SdoInfo::EntryDescriptionRequest {
            index: 0x8000,
            subindex: 1,
            value_info: 7
        }
    );
}

#[test]
fn info_error_and_garbage() {
    let mut b = [0u8; 20];
    let n = emit_info_error(&mut b, 1, SdoAbortCode::NO_OBJECT).unwrap();
    assert_eq!(
        parse_info(&b[..n]).unwrap().1,
        SdoInfo::Error {
            code: SdoAbortCode::NO_OBJECT
        }
    );
    b[8] = 0x08; // undefined opcode
    assert_eq!(parse_info(&b[..n]), Err(Error::BadValue));
    b[8] = 0x07;
    assert_eq!(parse_info(&b[..n - 1]), Err(Error::Truncated));
    b[7] = 0x30; // SDO response, not info
    assert_eq!(parse_info(&b[..n]), Err(Error::BadValue));
}

proptest! {
    #[test]
    fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..40)) {
        if let Ok((_, SdoInfo::EntryDescriptionResponse(e))) = parse_info(&b) {
            let _ = e.fields();
        }
    }

    #[test]
    fn header_round_trip(op in 1u8..8, inc: bool, left: u16) {
        let h = SdoInfoHeaderRepr {
            opcode: SdoInfoOpcode::from_u8(op).unwrap(), incomplete: inc, fragments_left: left,
        };
        let mut b = [0u8; 4];
        h.emit(&mut b).unwrap();
        prop_assert_eq!(SdoInfoHeaderRepr::parse(&b).unwrap(), h);
    }
}
