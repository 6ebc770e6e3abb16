//! Entry points shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and the plain
//! corpus test (`tests/fuzz_corpus.rs`), so CI without nightly still runs every saved input
//! through exactly the code the fuzzer exercises.
//!
//! Each function feeds arbitrary bytes to every parser of one area and checks round-trip
//! invariants (parse → emit → parse gives the same value); a panic here is a bug.

use crate::coe::{self, info, sdo};
use crate::datagram::DatagramRepr;
use crate::mailbox::{self, MailboxErrorRepr, MailboxHeaderRepr};
use crate::sii::{self, Categories, FixedAreaRepr, Sii};
use crate::Datagram;

/// Frames: Ethernet + EtherCAT header, every datagram, header round trip.
pub fn frame(data: &[u8]) {
    let _ = crate::EcatFrame::new_checked(data).map(|f| f.datagrams().count());
    let Ok(f) = crate::frame::parse_ethernet(data) else {
        return;
    };
    for d in f.datagrams() {
        let Ok(d) = d else { break };
        let _ = (d.data(), d.wkc(), d.adp(), d.ado());
        let Ok(r) = DatagramRepr::parse(&d) else {
            continue;
        };
        let mut buf = [0u8; 2048 + 12];
        let out = r.emit(&mut buf).expect("parsed datagram re-emits");
        let again = DatagramRepr::parse(&Datagram::new_checked(out.into_inner()).unwrap());
        assert_eq!(again, Ok(r), "datagram header round trip");
    }
}

/// SII images: fixed area (with round trip) and every category parser.
pub fn sii(data: &[u8]) {
    if let Ok((repr, _crc)) = FixedAreaRepr::parse_any(data) {
        let mut buf = [0u8; sii::FIXED_AREA_LEN];
        repr.emit(&mut buf).expect("fixed area re-emits");
        let (again, crc) = FixedAreaRepr::parse_any(&buf).unwrap();
        assert_eq!(again, repr, "fixed area round trip");
        assert!(crc.ok(), "emitted CRC is valid");
    }
    for start in [sii::CATEGORIES_OFFSET, 0] {
        for c in Categories::starting_at(data, start) {
            let Ok(c) = c else { break };
            let _ = c.kind.name();
            category(c.data);
        }
    }
    if let Ok(s) = Sii::new(data) {
        let _ = s.fixed();
        let _ = s.crc();
        if let (Ok(strings), Ok(Some(g))) = (s.strings(), s.general()) {
            for i in [g.group_index, g.image_index, g.order_index, g.name_index] {
                let _ = strings.get_str(i);
            }
        }
        for kind in [sii::CategoryType::TxPdo, sii::CategoryType::RxPdo] {
            for p in s.pdos(kind) {
                let Ok(p) = p else { break };
                let _ = p.bit_len();
            }
        }
        let _ = s.dc().map(|d| d.count());
        let _ = s.sync_managers().map(|d| d.count());
    }
}

/// Every typed category parser on one payload.
fn category(data: &[u8]) {
    let s = sii::Strings::new(data);
    let _ = s.iter().count();
    let _ = s.get_str(s.count());
    if let Ok(g) = sii::GeneralRepr::parse(data) {
        let mut b = [0u8; sii::GeneralRepr::LEN];
        g.emit(&mut b).unwrap();
        assert_eq!(sii::GeneralRepr::parse(&b), Ok(g), "GENERAL round trip");
        for n in 0..4 {
            let _ = g.port(n);
        }
    }
    let _ = sii::Fmmus::new(data).count();
    let _ = sii::FmmuExs::new(data).count();
    if let Ok(sms) = sii::SyncManagers::new_checked(data) {
        for sm in sms {
            let mut b = [0u8; 8];
            sm.emit(&mut b).unwrap();
            assert_eq!(sii::SyncManagerRepr::parse(&b), Ok(sm), "SYNCM round trip");
        }
    }
    for p in sii::Pdos::new(data) {
        let Ok(p) = p else { break };
        let _ = p.entries().count();
    }
    if let Ok(dc) = sii::DcModes::new_checked(data) {
        for m in dc {
            let mut b = [0u8; 24];
            m.emit(&mut b).unwrap();
            assert_eq!(sii::DcRepr::parse(&b), Ok(m), "DC round trip");
        }
    }
}

/// Mailbox messages: header (with round trip) and the error reply.
pub fn mailbox(data: &[u8]) {
    let Ok((h, payload)) = mailbox::parse_message(data) else {
        return;
    };
    let mut b = [0u8; mailbox::HEADER_LEN];
    h.emit(&mut b).expect("parsed header re-emits");
    let view = mailbox::MailboxHeader::new_checked(&data[..h.length as usize + 6]).unwrap();
    assert_eq!(MailboxHeaderRepr::parse(&view), Ok(h));
    assert_eq!(&b[..5], &data[..5], "header bytes round trip");
    assert_eq!(
        b[5],
        data[5] & 0x7F,
        "header byte 5 round trip (reserved bit 7 dropped)"
    );
    if let Ok(e) = MailboxErrorRepr::parse(payload) {
        let _ = e.detail.description();
    }
}

/// CoE messages: CoE header, SDO request/response, SDO info, emergency, command bytes.
pub fn coe(data: &[u8]) {
    if let Some(&c) = data.get(coe::DATA_OFFSET) {
        for dir in [sdo::Direction::Request, sdo::Direction::Response] {
            if let Ok(cmd) = sdo::SdoCommand::decode(c, dir) {
                let again = sdo::SdoCommand::decode(cmd.encode(), dir);
                assert_eq!(again, Ok(cmd), "SDO command round trip");
            }
        }
    }
    let _ = coe::parse_coe(data);
    if let Ok(sdo::SdoResponse::Abort { code, .. }) = sdo::parse_response(data) {
        let _ = code.description();
    }
    let _ = sdo::parse_request(data);
    if let Ok((_, info::SdoInfo::EntryDescriptionResponse(e))) = info::parse_info(data) {
        let _ = e.fields();
    }
    let _ = coe::parse_emergency(data);
}

/// FoE messages: whole-message parse with round trip, and the bare packet parser.
pub fn foe(data: &[u8]) {
    let _ = crate::foe::FoeRepr::parse_bytes(data);
    let Ok((h, r)) = crate::foe::parse_foe(data) else {
        return;
    };
    let _ = (r.text(), r.opcode().name());
    if let crate::foe::FoeRepr::Error { code, .. } = r {
        let _ = code.description();
    }
    let mut b = [0u8; 1024];
    let Ok(n) = crate::foe::emit_foe(&mut b, h.counter, &r) else {
        return;
    };
    assert_eq!(
        crate::foe::parse_foe(&b[..n]).map(|x| x.1),
        Ok(r),
        "FoE round trip"
    );
}

/// SoE messages: whole-message parse with round trip, error code, list elements, IDN text.
pub fn soe(data: &[u8]) {
    use crate::soe;
    let Ok((h, r)) = soe::parse_soe(data) else {
        return;
    };
    if let Some(c) = r.error_code() {
        let _ = c.description();
    }
    let _ = soe::ListHeader::parse(r.data);
    let _ = soe::value_u64(r.data);
    let idn = soe::Idn(r.idn_or_fragments);
    let mut text = [0u8; 16];
    let s = fmt_into(&mut text, format_args!("{idn}"));
    assert_eq!(s.parse::<soe::Idn>(), Ok(idn), "IDN text round trip");
    if let Ok(t) = core::str::from_utf8(r.data) {
        let _ = t.parse::<soe::Idn>();
    }
    let mut b = [0u8; 1024];
    let Ok(n) = soe::emit_soe(&mut b, h.counter, &r) else {
        return;
    };
    assert_eq!(
        soe::parse_soe(&b[..n]).map(|x| x.1),
        Ok(r),
        "SoE round trip"
    );
}

/// VoE messages: whole-message parse with round trip.
pub fn voe(data: &[u8]) {
    let Ok((h, r)) = crate::voe::parse_voe(data) else {
        return;
    };
    let mut b = [0u8; 1024];
    let Ok(n) = crate::voe::emit_voe(&mut b, h.counter, &r) else {
        return;
    };
    assert_eq!(
        crate::voe::parse_voe(&b[..n]).map(|x| x.1),
        Ok(r),
        "VoE round trip"
    );
}

/// EoE messages: whole-message parse with round trip, IP parameters with round trip, and the
/// reassembler fed the message twice (a repeated fragment must be refused, never panic).
pub fn eoe(data: &[u8]) {
    use crate::eoe::{self, DnsName};
    let Ok((h, r)) = eoe::parse_eoe(data) else {
        return;
    };
    let _ = (
        r.timestamp(),
        r.frame_data(),
        r.header.result().description(),
    );
    if let Ok(p) = eoe::IpParams::parse(r.data) {
        let mut b = [0u8; eoe::IpParams::LEN];
        p.emit(&mut b).expect("IP parameters re-emit");
        assert_eq!(eoe::IpParams::parse(&b), Ok(p), "IP parameters round trip");
        let _ = p.dns_name.as_ref().map(DnsName::as_str);
    }
    let mut re = eoe::Reassembler::new([0u8; 1536]);
    let _ = re.push(&r);
    let _ = re.push(&r);
    let _ = re.frame();
    let mut b = [0u8; 1024];
    let Ok(n) = eoe::emit_eoe(&mut b, h.counter, &r) else {
        return;
    };
    assert_eq!(
        eoe::parse_eoe(&b[..n]).map(|x| x.1),
        Ok(r),
        "EoE round trip"
    );
}

/// Format into a stack buffer (no allocation in `no_std`); text that does not fit is cut.
fn fmt_into<'a>(buf: &'a mut [u8], args: core::fmt::Arguments<'_>) -> &'a str {
    struct W<'b>(&'b mut [u8], usize);
    impl core::fmt::Write for W<'_> {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            let end = (self.1 + s.len()).min(self.0.len());
            let n = end - self.1;
            self.0[self.1..end].copy_from_slice(&s.as_bytes()[..n]);
            self.1 = end;
            Ok(())
        }
    }
    let mut w = W(buf, 0);
    let _ = core::fmt::write(&mut w, args);
    let n = w.1;
    core::str::from_utf8(&buf[..n]).unwrap_or("")
}
