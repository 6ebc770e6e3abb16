//! A minimal mailbox/SDO client for the tests: messages built with ecat-wire's client-side
//! emitters, written through SM0 with FPWR (full SM length), answers read from SM1 with
//! FPRD (full SM length), as SOEM does.
#![allow(dead_code)]

use super::{sm_bytes, Bus};
use ecat_wire::coe::sdo::{self, SdoResponse};
use ecat_wire::coe::SdoAbortCode;
use ecat_wire::mailbox::next_counter;
use ecat_wire::register as reg;

/// One SubDevice's mailbox as the client sees it.
#[derive(Debug, Clone)]
pub struct Mbx {
    pub station: u16,
    pub out: (u16, usize),
    pub inp: (u16, usize),
    pub counter: u8,
}

impl Mbx {
    /// The standard 128-byte mailboxes at 0x1000/0x1080 (servo, EL3102).
    pub fn standard(station: u16) -> Mbx {
        Mbx {
            station,
            out: (0x1000, 128),
            inp: (0x1080, 128),
            counter: 0,
        }
    }

    /// The next counter (1..7).
    pub fn next(&mut self) -> u8 {
        self.counter = next_counter(self.counter);
        self.counter
    }
}

/// Emit into a fresh buffer with the next counter.
pub fn build(m: &mut Mbx, f: impl FnOnce(&mut [u8], u8) -> ecat_wire::Result<usize>) -> Vec<u8> {
    let mut b = vec![0u8; 1024];
    let c = m.next();
    let n = f(&mut b, c).unwrap();
    b.truncate(n);
    b
}

impl Bus {
    /// Configure SM0/SM1 of `m` and request PREOP.
    pub fn mailbox_preop(&mut self, m: &Mbx) {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&sm_bytes(m.out.0, m.out.1 as u16, 0x26, true));
        b[8..].copy_from_slice(&sm_bytes(m.inp.0, m.inp.1 as u16, 0x22, true));
        assert_eq!(self.fpwr(m.station, reg::SM0, &b), 1);
        assert_eq!(self.al_request(m.station, 0x02), 0x02);
    }

    /// The servo preset, addressed and in PREOP with its mailbox configured.
    pub fn servo_preop() -> (Bus, Mbx) {
        let mut bus = Bus::preset("servo");
        bus.assign_addresses();
        let m = Mbx::standard(0x1001);
        bus.mailbox_preop(&m);
        (bus, m)
    }

    /// Write one message into SM0 (padded to the SM length); returns the WKC.
    pub fn mbx_send(&mut self, m: &Mbx, msg: &[u8]) -> u16 {
        let mut b = vec![0u8; m.out.1];
        b[..msg.len()].copy_from_slice(msg);
        self.fpwr(m.station, m.out.0, &b)
    }

    /// Read SM1 once; `None` if it was empty. The message is cut to its length field.
    pub fn mbx_recv(&mut self, m: &Mbx) -> Option<Vec<u8>> {
        let r = self.fprd(m.station, m.inp.0, m.inp.1);
        if r.wkc == 0 {
            return None;
        }
        let len = u16::from_le_bytes([r.data[0], r.data[1]]) as usize;
        Some(r.data[..(6 + len).min(r.data.len())].to_vec())
    }

    /// Send and wait (a few frames) for the answer.
    pub fn mbx_request(&mut self, m: &Mbx, msg: &[u8]) -> Vec<u8> {
        assert_eq!(self.mbx_send(m, msg), 1, "SM0 accepted the message");
        for _ in 0..5 {
            if let Some(a) = self.mbx_recv(m) {
                return a;
            }
        }
        panic!("no answer in SM1");
    }

    /// Read the next answer that is not an emergency.
    fn sdo_answer(&mut self, m: &Mbx, msg: &[u8]) -> Vec<u8> {
        let mut a = self.mbx_request(m, msg);
        while ecat_wire::coe::parse_emergency(&a).is_ok() {
            a = self.mbx_recv(m).expect("answer after the emergency");
        }
        a
    }

    /// SDO upload in whatever form the server answers (expedited, normal, segmented).
    pub fn sdo_upload(
        &mut self,
        m: &mut Mbx,
        index: u16,
        sub: u8,
        ca: bool,
    ) -> Result<Vec<u8>, SdoAbortCode> {
        let req = build(m, |b, c| sdo::emit_upload_request(b, c, index, sub, ca));
        let a = self.sdo_answer(m, &req);
        match sdo::parse_response(&a).unwrap() {
            SdoResponse::Expedited { data, len, .. } => Ok(data[..len as usize].to_vec()),
            SdoResponse::Abort { code, .. } => Err(code),
            SdoResponse::Normal {
                total_size,
                first_data,
                ..
            } => {
                let mut out = first_data.to_vec();
                let mut toggle = false;
                while out.len() < total_size as usize {
                    let req = build(m, |b, c| sdo::emit_upload_segment_request(b, c, toggle));
                    let a = self.sdo_answer(m, &req);
                    match sdo::parse_response(&a).unwrap() {
                        SdoResponse::Segment {
                            toggle: t,
                            last,
                            data,
                        } => {
                            assert_eq!(t, toggle, "toggle echoed");
                            out.extend_from_slice(data);
                            assert_eq!(last, out.len() >= total_size as usize, "last flag");
                        }
                        SdoResponse::Abort { code, .. } => return Err(code),
                        r => panic!("unexpected {r:?}"),
                    }
                    toggle = !toggle;
                }
                Ok(out)
            }
            r => panic!("unexpected {r:?}"),
        }
    }

    /// SDO download: expedited for 1..=4 bytes without CA, else normal, with segments when
    /// the data does not fit SM0 − 16.
    pub fn sdo_download(
        &mut self,
        m: &mut Mbx,
        index: u16,
        sub: u8,
        ca: bool,
        data: &[u8],
    ) -> Result<(), SdoAbortCode> {
        let req = if data.len() <= 4 && !data.is_empty() && !ca {
            build(m, |b, c| {
                sdo::emit_expedited_download(b, c, index, sub, false, data)
            })
        } else {
            let first = data.len().min(sdo::max_initiate_data(m.out.1));
            build(m, |b, c| {
                sdo::emit_normal_download(b, c, index, sub, ca, data.len() as u32, &data[..first])
            })
        };
        let a = self.sdo_answer(m, &req);
        match sdo::parse_response(&a).unwrap() {
            SdoResponse::DownloadAck { .. } => {}
            SdoResponse::Abort { code, .. } => return Err(code),
            r => panic!("unexpected {r:?}"),
        }
        let mut pos = data.len().min(sdo::max_initiate_data(m.out.1));
        let mut toggle = false;
        while pos < data.len() {
            let n = (data.len() - pos).min(sdo::max_segment_data(m.out.1));
            let last = pos + n == data.len();
            let chunk = &data[pos..pos + n];
            let req = build(m, |b, c| {
                sdo::emit_download_segment(b, c, toggle, last, chunk)
            });
            let a = self.sdo_answer(m, &req);
            match sdo::parse_response(&a).unwrap() {
                SdoResponse::DownloadSegmentAck { toggle: t } => assert_eq!(t, toggle),
                SdoResponse::Abort { code, .. } => return Err(code),
                r => panic!("unexpected {r:?}"),
            }
            pos += n;
            toggle = !toggle;
        }
        Ok(())
    }

    /// Read an integer object (little-endian, sign-extended from its width).
    pub fn sdo_int(&mut self, m: &mut Mbx, index: u16, sub: u8) -> i64 {
        let d = self.sdo_upload(m, index, sub, false).unwrap();
        let mut b = [0u8; 8];
        b[..d.len()].copy_from_slice(&d);
        let v = i64::from_le_bytes(b);
        let bits = d.len() * 8;
        (v << (64 - bits)) >> (64 - bits)
    }
}
