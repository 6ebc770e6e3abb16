//! The EoE endpoint: a SubDevice with its own Ethernet interface behind the mailbox.
//!
//! * Fragments from the MainDevice are reassembled (`ecat_wire::eoe::Reassembler`); a
//!   complete frame goes to the IP stack ([`super::ipstack`]: ARP, ICMP echo, UDP echo) and
//!   is kept in [`EoeEndpoint::received`] (the last [`KEEP_FRAMES`]). A fragment out of
//!   sequence drops the partial frame (counted in [`EoeStats::errors`]).
//! * Answers are cut into fragments for the send mailbox (SM1 size) with a frame number
//!   counting 0..15 and queued like every mailbox answer.
//! * Set IP parameter: the fields present replace the endpoint's (MAC, IP, subnet, gateway,
//!   DNS, DNS name); answered with result 0. Get IP parameter: answered with all of them.
//!   A set address filter request is accepted and not applied (result 0); a get address filter
//!   request is answered with 0x0401 "no address filter support". Other frame types (responses
//!   and timestamps, which only a SubDevice sends) are ignored.
//! * Without an IP address (none set yet) the stack answers nothing.

use super::{ipstack, reply, Answers, MbxCtx};
use ecat_wire::eoe::{
    self as wire, EoeFrameType, EoeHeaderRepr, EoeRepr, EoeResult, IpParams, Reassembler,
};
use ecat_wire::mailbox::MailboxErrorCode;
use std::collections::VecDeque;

/// Received frames kept for inspection.
pub const KEEP_FRAMES: usize = 16;

/// Counters of one endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EoeStats {
    /// Frames reassembled from the MainDevice.
    pub rx_frames: u64,
    /// Frames sent to the MainDevice.
    pub tx_frames: u64,
    /// Fragments refused (out of sequence, overrun).
    pub errors: u64,
}

/// The EoE endpoint of one device.
#[derive(Debug, Clone)]
pub struct EoeEndpoint {
    /// Current IP parameters (the MAC is always present).
    pub params: IpParams,
    /// The last frames received (oldest first).
    pub received: VecDeque<Vec<u8>>,
    /// Counters.
    pub stats: EoeStats,
    rx: Reassembler<Vec<u8>>,
    frame_no: u8,
}

impl EoeEndpoint {
    /// An endpoint with a locally administered MAC address derived from `seed`
    /// (`02:EC:A7:xx:xx:xx`), no IP address.
    pub fn new(seed: u32) -> EoeEndpoint {
        let s = seed.to_be_bytes();
        EoeEndpoint {
            params: IpParams {
                mac: Some([0x02, 0xEC, 0xA7, s[1], s[2], s[3]]),
                ..Default::default()
            },
            received: VecDeque::new(),
            stats: EoeStats::default(),
            rx: Reassembler::new(vec![0u8; 1536]),
            frame_no: 0,
        }
    }

    /// The mailbox closed: a partly received frame is dropped.
    pub fn close(&mut self) {
        self.rx.reset();
    }

    /// The endpoint's MAC address.
    pub fn mac(&self) -> [u8; 6] {
        self.params.mac.unwrap_or([0x02, 0xEC, 0xA7, 0, 0, 0])
    }

    /// Cut `frame` into EoE messages for a send mailbox of `tx` bytes.
    pub fn send_frame(&mut self, frame: &[u8], tx: usize) -> Vec<Vec<u8>> {
        let Ok(frags) = wire::fragments(frame, tx, 0, self.frame_no) else {
            return vec![];
        };
        self.frame_no = (self.frame_no + 1) & 0x0F;
        self.stats.tx_frames += 1;
        frags
            .map(|(header, data)| reply(tx, |b| wire::emit_eoe(b, 0, &EoeRepr { header, data })))
            .collect()
    }

    /// Answer one EoE message.
    pub fn handle(&mut self, msg: &[u8], ctx: &MbxCtx) -> Answers {
        let Ok((_, e)) = wire::parse_eoe(msg) else {
            return Err(MailboxErrorCode::SERVICE_NOT_SUPPORTED);
        };
        let tx = ctx.tx_size;
        let port = e.header.port;
        let respond = |t: EoeFrameType, r: EoeResult| {
            Ok(vec![reply(tx, |b| wire::emit_response(b, 0, t, port, r))])
        };
        match e.header.frame_type {
            EoeFrameType::FragmentData => match self.rx.push(&e) {
                Ok(Some(_)) => {
                    let frame = self.rx.frame().to_vec();
                    self.stats.rx_frames += 1;
                    let answer = self
                        .params
                        .ip
                        .and_then(|ip| ipstack::answer(&frame, self.mac(), ip));
                    if self.received.len() >= KEEP_FRAMES {
                        self.received.pop_front();
                    }
                    self.received.push_back(frame);
                    Ok(answer.map(|f| self.send_frame(&f, tx)).unwrap_or_default())
                }
                Ok(None) => Ok(vec![]),
                Err(_) => {
                    self.stats.errors += 1;
                    Ok(vec![])
                }
            },
            EoeFrameType::SetIpRequest => {
                let Ok(p) = IpParams::parse(e.data) else {
                    return respond(EoeFrameType::SetIpResponse, EoeResult::UNSPECIFIED);
                };
                let cur = &mut self.params;
                cur.mac = p.mac.or(cur.mac);
                cur.ip = p.ip.or(cur.ip);
                cur.subnet = p.subnet.or(cur.subnet);
                cur.gateway = p.gateway.or(cur.gateway);
                cur.dns = p.dns.or(cur.dns);
                cur.dns_name = p.dns_name.or(cur.dns_name);
                respond(EoeFrameType::SetIpResponse, EoeResult::SUCCESS)
            }
            EoeFrameType::GetIpRequest => {
                let mut body = [0u8; IpParams::LEN];
                let _ = self.params.emit(&mut body);
                let header =
                    EoeHeaderRepr::response(EoeFrameType::GetIpResponse, port, EoeResult::SUCCESS);
                Ok(vec![reply(tx, |b| {
                    wire::emit_eoe(
                        b,
                        0,
                        &EoeRepr {
                            header,
                            data: &body,
                        },
                    )
                })])
            }
            EoeFrameType::SetMacFilterRequest => {
                respond(EoeFrameType::SetMacFilterResponse, EoeResult::SUCCESS)
            }
            EoeFrameType::GetMacFilterRequest => respond(
                EoeFrameType::GetMacFilterResponse,
                EoeResult::NO_FILTER_SUPPORT,
            ),
            _ => Ok(vec![]),
        }
    }
}
