//! EoE (Ethernet over EtherCAT) client: send one Ethernet frame to a SubDevice, cut into the
//! fragments its receive mailbox (SM0) carries, and the set-IP-parameter request.
//!
//! * **Frame**: every fragment is *posted* (no answer awaited, as SOEM's `ecx_EOEsend` and
//!   IgH do); the transfer ends once SM0 took the last one. Fragment 0 carries the frame size
//!   in 32-byte blocks, later ones their offset; the caller numbers frames 0..15.
//! * **Set IP parameter**: one request (MAC, IP, subnet, gateway, DNS server, DNS name, each
//!   only when given) and its response, whose result code is decoded to text when not 0.
//! * **Get IP parameter** (frame type 6): a request of the EoE header alone; the response
//!   (type 7) carries the parameters in the set request's layout, which the transfer returns
//!   as they came ([`IpParams::parse`] reads them).
//!
//! Frames the SubDevice sends (fragments it puts into SM1 on its own) are not answers to any
//! transfer: the mailbox service hands them to its unsolicited-message sink, where
//! [`crate::eoe::EoeHub`] reassembles them.

use super::exchange::MailboxArea;
use super::transfer::{message, post_in, Failure, Next, Transfer};
use ecat_wire::eoe::{
    emit_eoe, emit_set_ip_request, fragments, parse_eoe, EoeFrameType, EoeHeaderRepr, EoeRepr,
    EoeResult, IpParams, MAX_FRAME,
};
use ecat_wire::mailbox::MailboxType;

/// An EoE request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EoeOp {
    /// Send one Ethernet frame (without FCS) on `port` with frame number `frame_no` (0..15).
    Frame {
        /// EoE port (0 for single-port devices).
        port: u8,
        /// Frame number 0..15, counted by the sender.
        frame_no: u8,
        /// The frame: destination MAC, source MAC, type, payload.
        frame: Vec<u8>,
    },
    /// Set the SubDevice's IP parameters (the fields given).
    SetIp {
        /// EoE port.
        port: u8,
        /// The parameters to set.
        params: IpParams,
    },
    /// Read the SubDevice's IP parameters; the result is the response's parameter body
    /// ([`IpParams::parse`]).
    GetIp {
        /// EoE port.
        port: u8,
    },
}

fn addr_list(p: &IpParams) -> String {
    let mut v = Vec::new();
    if let Some(m) = p.mac {
        v.push(format!(
            "MAC {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        ));
    }
    let mut addr = |name: &str, a: Option<std::net::Ipv4Addr>| {
        if let Some(a) = a {
            v.push(format!("{name} {a}"));
        }
    };
    addr("IP", p.ip);
    addr("subnet", p.subnet);
    addr("gateway", p.gateway);
    addr("DNS", p.dns);
    if let Some(n) = p.dns_name.as_ref().and_then(|n| n.as_str()) {
        v.push(format!("name {n}"));
    }
    v.join(", ")
}

impl EoeOp {
    /// Short description, e.g. `EoE frame of 98 bytes` or `EoE set IP parameter request
    /// (IP 10.0.0.2, subnet 255.255.255.0)`.
    pub fn describe(&self) -> String {
        match self {
            EoeOp::Frame { frame, .. } => format!("EoE frame of {} bytes", frame.len()),
            EoeOp::SetIp { params, .. } => {
                format!("EoE set IP parameter request ({})", addr_list(params))
            }
            EoeOp::GetIp { .. } => "EoE get IP parameter request".into(),
        }
    }
}

/// One EoE transfer.
#[derive(Debug)]
pub struct EoeTransfer {
    op: EoeOp,
    out_size: usize,
    counter: u8,
    /// Frame: the next fragment to post.
    next: usize,
    /// The buffer of the last fragment posted, for the next one (no allocation per fragment).
    spare: Vec<u8>,
}

impl EoeTransfer {
    /// A transfer over the mailbox `area`, continuing the mailbox counter from `counter`.
    pub fn new(op: EoeOp, area: MailboxArea, counter: u8) -> EoeTransfer {
        EoeTransfer {
            op,
            out_size: area.out.1 as usize,
            counter,
            next: 0,
            spare: Vec::new(),
        }
    }

    /// Fragment `i` of the frame (recomputed: a frame has at most 63 fragments).
    fn fragment(&self, i: usize) -> Option<EoeRepr<'_>> {
        let EoeOp::Frame {
            port,
            frame_no,
            frame,
        } = &self.op
        else {
            return None;
        };
        let (header, data) = fragments(frame, self.out_size, *port, *frame_no & 0x0F)
            .ok()?
            .nth(i)?;
        Some(EoeRepr { header, data })
    }

    fn post_next(&mut self) -> Next {
        let mut spare = std::mem::take(&mut self.spare);
        let Some(repr) = self.fragment(self.next) else {
            return Next::Done(Vec::new());
        };
        let mut counter = self.counter;
        let next = post_in(&mut spare, self.out_size, &mut counter, |buf, c| {
            emit_eoe(buf, c, &repr)
        });
        self.counter = counter;
        self.next += 1;
        next
    }
}

impl Transfer for EoeTransfer {
    fn start(&mut self) -> Next {
        match &self.op {
            EoeOp::Frame { frame, .. } if self.fragment(0).is_none() => {
                Next::Failed(Failure::Protocol(format!(
                    "a frame of {} bytes cannot be sent: EoE carries frames of 1..{MAX_FRAME} bytes through a mailbox of at least {} bytes (this one has {})",
                    frame.len(),
                    ecat_wire::eoe::DATA_OFFSET + ecat_wire::eoe::BLOCK,
                    self.out_size
                )))
            }
            EoeOp::Frame { .. } => self.post_next(),
            EoeOp::SetIp { port, params } => {
                let (port, params) = (*port, *params);
                message(self.out_size, &mut self.counter, |b, c| {
                    emit_set_ip_request(b, c, port, &params)
                })
            }
            EoeOp::GetIp { port } => {
                let header = EoeHeaderRepr::single(EoeFrameType::GetIpRequest, *port);
                message(self.out_size, &mut self.counter, |b, c| {
                    emit_eoe(b, c, &EoeRepr { header, data: &[] })
                })
            }
        }
    }

    fn on_posted(&mut self) -> Next {
        self.post_next()
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        self.spare = buf;
    }

    fn on_response(&mut self, msg: &[u8]) -> Next {
        let eoe = match parse_eoe(msg) {
            Ok((_, eoe)) => eoe,
            Err(e) => {
                return Next::Failed(Failure::Protocol(format!(
                    "EoE message cannot be decoded ({e})"
                )))
            }
        };
        match eoe.header.frame_type {
            EoeFrameType::SetIpResponse => match eoe.header.result() {
                EoeResult::SUCCESS => Next::Done(Vec::new()),
                r => Next::Failed(Failure::Refused(format!("the SubDevice answered {r}"))),
            },
            EoeFrameType::GetIpResponse if matches!(self.op, EoeOp::GetIp { .. }) => {
                match (eoe.header.result(), IpParams::parse(eoe.data)) {
                    (EoeResult::SUCCESS, Ok(_)) => Next::Done(eoe.data.to_vec()),
                    (EoeResult::SUCCESS, Err(e)) => Next::Failed(Failure::Protocol(format!(
                        "the IP parameters in the answer cannot be decoded ({e})"
                    ))),
                    (r, _) => Next::Failed(Failure::Refused(format!("the SubDevice answered {r}"))),
                }
            }
            // A frame the SubDevice sends meanwhile is not the answer: keep waiting.
            _ => Next::Receive,
        }
    }

    fn counter(&self) -> u8 {
        self.counter
    }

    fn describe(&self) -> String {
        self.op.describe()
    }

    fn accepts(&self, kind: u8) -> bool {
        matches!(self.op, EoeOp::SetIp { .. } | EoeOp::GetIp { .. })
            && kind == MailboxType::Eoe as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat_wire::eoe::{Reassembler, DATA_OFFSET};

    const AREA: MailboxArea = MailboxArea {
        station: 0x1001,
        out: (0x1000, 128),
        inp: (0x1080, 128),
    };

    #[test]
    fn frame_is_posted_in_fragments_that_reassemble() {
        let frame: Vec<u8> = (0..300u32).map(|i| (i * 3) as u8).collect();
        let op = EoeOp::Frame {
            port: 0,
            frame_no: 5,
            frame: frame.clone(),
        };
        let mut t = EoeTransfer::new(op, AREA, 0);
        let mut r = Reassembler::new(vec![0u8; 1536]);
        let mut next = t.start();
        let mut msgs = 0;
        let mut counters = Vec::new();
        loop {
            match next {
                Next::Post(m) => {
                    assert!(m.len() <= 128 && m.len() > DATA_OFFSET);
                    let (h, eoe) = parse_eoe(&m).unwrap();
                    counters.push(h.counter);
                    assert_eq!(eoe.header.frame_no, 5);
                    msgs += 1;
                    if let Some(n) = r.push(&eoe).unwrap() {
                        assert_eq!(&r.frame()[..n], &frame[..]);
                    }
                    next = t.on_posted();
                }
                Next::Done(d) => {
                    assert!(d.is_empty());
                    break;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        // 118 bytes of room: 96 + 96, then the last 108 fit.
        assert_eq!(msgs, 3);
        assert_eq!(counters, vec![1, 2, 3]);
        assert_eq!(t.counter(), 3);
        assert!(!t.accepts(MailboxType::Eoe as u8));
    }

    #[test]
    fn oversized_frame_fails_with_a_sentence() {
        let op = EoeOp::Frame {
            port: 0,
            frame_no: 0,
            frame: vec![0; MAX_FRAME + 1],
        };
        match EoeTransfer::new(op, AREA, 0).start() {
            Next::Failed(Failure::Protocol(s)) => assert!(s.contains("cannot be sent"), "{s}"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn set_ip_result_codes() {
        let params = IpParams {
            ip: Some([10, 0, 0, 2].into()),
            subnet: Some([255, 255, 255, 0].into()),
            ..Default::default()
        };
        let op = EoeOp::SetIp { port: 0, params };
        assert_eq!(
            op.describe(),
            "EoE set IP parameter request (IP 10.0.0.2, subnet 255.255.255.0)"
        );
        let mut t = EoeTransfer::new(op, AREA, 3);
        let Next::Send(m) = t.start() else {
            panic!("a request to send")
        };
        let (_, eoe) = parse_eoe(&m).unwrap();
        assert_eq!(eoe.header.frame_type, EoeFrameType::SetIpRequest);
        assert_eq!(IpParams::parse(eoe.data).unwrap(), params);
        assert!(t.accepts(MailboxType::Eoe as u8));
        let mut resp = [0u8; 32];
        let respond = |b: &mut [u8], r| {
            ecat_wire::eoe::emit_response(b, 1, EoeFrameType::SetIpResponse, 0, r).unwrap()
        };
        let n = respond(&mut resp, EoeResult::NO_IP_SUPPORT);
        match t.on_response(&resp[..n]) {
            Next::Failed(Failure::Refused(s)) => assert!(s.contains("0x0201"), "{s}"),
            other => panic!("unexpected {other:?}"),
        }
        let n = respond(&mut resp, EoeResult::SUCCESS);
        assert_eq!(t.on_response(&resp[..n]), Next::Done(Vec::new()));
    }

    #[test]
    fn get_ip_reads_the_parameters_back() {
        let op = EoeOp::GetIp { port: 0 };
        assert_eq!(op.describe(), "EoE get IP parameter request");
        let mut t = EoeTransfer::new(op, AREA, 6);
        let Next::Send(m) = t.start() else {
            panic!("a request to send")
        };
        let (h, eoe) = parse_eoe(&m).unwrap();
        assert_eq!(h.counter, 7);
        assert_eq!(eoe.header.frame_type, EoeFrameType::GetIpRequest);
        assert!(eoe.data.is_empty());
        let params = IpParams {
            ip: Some([10, 0, 0, 7].into()),
            dns: Some([10, 0, 0, 1].into()),
            ..Default::default()
        };
        let mut body = [0u8; IpParams::LEN];
        params.emit(&mut body).unwrap();
        let mut resp = [0u8; 128];
        let respond = |b: &mut [u8], r| {
            let header = EoeHeaderRepr::response(EoeFrameType::GetIpResponse, 0, r);
            emit_eoe(
                b,
                1,
                &EoeRepr {
                    header,
                    data: &body,
                },
            )
            .unwrap()
        };
        let n = respond(&mut resp, EoeResult::NO_IP_SUPPORT);
        match t.on_response(&resp[..n]) {
            Next::Failed(Failure::Refused(s)) => assert!(s.contains("0x0201"), "{s}"),
            other => panic!("unexpected {other:?}"),
        }
        let n = respond(&mut resp, EoeResult::SUCCESS);
        let Next::Done(d) = t.on_response(&resp[..n]) else {
            panic!("done")
        };
        assert_eq!(IpParams::parse(&d).unwrap(), params);
    }
}
