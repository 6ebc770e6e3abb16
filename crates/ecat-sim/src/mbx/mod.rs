//! The mailbox protocols besides CoE, device side: FoE ([`foe`], a file store with BOOT
//! firmware updates), SoE ([`soe`], a drive's IDNs), EoE ([`eoe`], an endpoint with a small IP
//! stack in [`ipstack`]) and VoE (echo).
//!
//! Design: [`Protocols`] is built from the SII's mailbox protocol word (0x1C), so catalogue
//! models, ESI devices and raw SII images all serve what their SII announces. The mailbox
//! (`esc::mailbox`) hands each message of type 2, 4, 5 or 15 to [`Protocols::handle`] and
//! queues the answers for SM1, exactly as it does for CoE; in BOOT only FoE is served. The
//! codecs are `ecat_wire::{foe, soe, eoe, voe}`; these modules only decide what to answer.

pub mod eoe;
pub mod foe;
pub mod ipstack;
pub mod soe;

use ecat_wire::al::AlState;
use ecat_wire::mailbox::{MailboxErrorCode, MailboxType};
use ecat_wire::sii::MailboxProtocols;

/// What a protocol server knows about the message it answers.
#[derive(Debug, Clone, Copy)]
pub struct MbxCtx {
    /// The device's AL state.
    pub state: AlState,
    /// Receive mailbox (SM0) size: the largest message the MainDevice can send.
    pub rx_size: usize,
    /// Send mailbox (SM1) size: the largest message the device can answer with.
    pub tx_size: usize,
}

/// The protocol servers of one device (each present when the SII announces it).
#[derive(Debug, Clone, Default)]
pub struct Protocols {
    /// FoE server and file store.
    pub foe: Option<foe::FoeServer>,
    /// SoE IDN server.
    pub soe: Option<soe::SoeServer>,
    /// EoE endpoint.
    pub eoe: Option<eoe::EoeEndpoint>,
    /// VoE echo.
    pub voe: bool,
}

/// Answers of one message, or the mailbox error to reply with.
pub type Answers = Result<Vec<Vec<u8>>, MailboxErrorCode>;

impl Protocols {
    /// The servers the SII protocol word `p` announces; `None` if it announces none of them.
    /// `mac_seed` makes the EoE MAC address unique (e.g. the serial number).
    pub fn from_sii(p: MailboxProtocols, mac_seed: u32) -> Option<Protocols> {
        let has = |b: MailboxProtocols| p.contains(b);
        let r = Protocols {
            foe: has(MailboxProtocols::FOE).then(foe::FoeServer::default),
            soe: has(MailboxProtocols::SOE).then(soe::SoeServer::default),
            eoe: has(MailboxProtocols::EOE).then(|| eoe::EoeEndpoint::new(mac_seed)),
            voe: has(MailboxProtocols::VOE),
        };
        (r.foe.is_some() || r.soe.is_some() || r.eoe.is_some() || r.voe).then_some(r)
    }

    /// Whether a message of `kind` is served here.
    pub fn serves(&self, kind: MailboxType) -> bool {
        match kind {
            MailboxType::Foe => self.foe.is_some(),
            MailboxType::Soe => self.soe.is_some(),
            MailboxType::Eoe => self.eoe.is_some(),
            MailboxType::Voe => self.voe,
            _ => false,
        }
    }

    /// Answer one whole message of a served `kind` (checked by the mailbox for a sane
    /// header). In BOOT only FoE is served.
    pub fn handle(&mut self, kind: MailboxType, msg: &[u8], ctx: &MbxCtx) -> Answers {
        if ctx.state == AlState::Boot && kind != MailboxType::Foe {
            return Err(MailboxErrorCode::UNSUPPORTED_PROTOCOL);
        }
        match kind {
            MailboxType::Foe => self.foe.as_mut().map(|s| s.handle(msg, ctx)),
            MailboxType::Soe => self.soe.as_mut().map(|s| s.handle(msg, ctx)),
            MailboxType::Eoe => self.eoe.as_mut().map(|s| s.handle(msg, ctx)),
            MailboxType::Voe if self.voe => Some(voe_echo(msg, ctx)),
            _ => None,
        }
        .unwrap_or(Err(MailboxErrorCode::UNSUPPORTED_PROTOCOL))
    }

    /// The mailbox was closed (INIT) or the device powered up: transfers in progress end.
    /// Files, firmware and IDN values stay (they live in the device's flash).
    pub fn close(&mut self) {
        if let Some(f) = self.foe.as_mut() {
            f.close();
        }
        if let Some(s) = self.soe.as_mut() {
            s.close();
        }
        if let Some(e) = self.eoe.as_mut() {
            e.close();
        }
    }
}

/// VoE: send the message back as it came (vendor id, type and data preserved).
fn voe_echo(msg: &[u8], ctx: &MbxCtx) -> Answers {
    let Ok((_, v)) = ecat_wire::voe::parse_voe(msg) else {
        return Err(MailboxErrorCode::SIZE_TOO_SHORT);
    };
    let mut b = vec![0u8; ctx.tx_size];
    match ecat_wire::voe::emit_voe(&mut b, 0, &v) {
        Ok(n) => {
            b.truncate(n);
            Ok(vec![b])
        }
        Err(_) => Err(MailboxErrorCode::INVALID_SIZE),
    }
}

/// A whole message built by `f` into a buffer of the send mailbox's size (empty if it does
/// not fit, which the servers avoid by sizing their data to the mailbox).
pub(crate) fn reply(
    tx_size: usize,
    f: impl FnOnce(&mut [u8]) -> ecat_wire::Result<usize>,
) -> Vec<u8> {
    let mut b = vec![0u8; tx_size.max(16)];
    let n = f(&mut b).unwrap_or(0);
    b.truncate(n);
    b
}

impl crate::Esc {
    /// The device's FoE server and file store (SII announces FoE).
    pub fn foe(&self) -> Option<&foe::FoeServer> {
        self.proto.as_ref()?.foe.as_ref()
    }
    /// The FoE server, writable (add files, set a password or busy replies).
    pub fn foe_mut(&mut self) -> Option<&mut foe::FoeServer> {
        self.proto.as_mut()?.foe.as_mut()
    }
    /// The device's SoE server (SII announces SoE).
    pub fn soe(&self) -> Option<&soe::SoeServer> {
        self.proto.as_ref()?.soe.as_ref()
    }
    /// The SoE server, writable.
    pub fn soe_mut(&mut self) -> Option<&mut soe::SoeServer> {
        self.proto.as_mut()?.soe.as_mut()
    }
    /// The device's EoE endpoint (SII announces EoE).
    pub fn eoe(&self) -> Option<&eoe::EoeEndpoint> {
        self.proto.as_ref()?.eoe.as_ref()
    }
    /// The EoE endpoint, writable.
    pub fn eoe_mut(&mut self) -> Option<&mut eoe::EoeEndpoint> {
        self.proto.as_mut()?.eoe.as_mut()
    }
    /// Whether the device echoes VoE messages (SII announces VoE).
    pub fn voe(&self) -> bool {
        self.proto.as_ref().is_some_and(|p| p.voe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all() -> Protocols {
        let p = MailboxProtocols(0x3F);
        Protocols::from_sii(p, 1).unwrap()
    }

    proptest! {
        /// Any payload of any of the four types, in any state, with any mailbox sizes, is
        /// answered or refused, never a panic; answers fit the send mailbox.
        #[test]
        fn arbitrary_messages_never_panic(
            kind in prop::sample::select(&[2u8, 4, 5, 15][..]),
            payload in proptest::collection::vec(any::<u8>(), 0..300),
            state in prop::sample::select(&[2u8, 3, 4, 8][..]),
            rx in 0usize..600, tx in 0usize..600,
        ) {
            let mut p = all();
            let mut msg = vec![0u8; 6 + payload.len()];
            let k = MailboxType::from_u8(kind).unwrap();
            ecat_wire::mailbox::emit_message(&mut msg, k, 1, payload.len()).unwrap()
                .copy_from_slice(&payload);
            let ctx = MbxCtx {
                state: AlState::from_bits(state).unwrap(),
                rx_size: rx,
                tx_size: tx,
            };
            for _ in 0..3 {
                if let Ok(answers) = p.handle(k, &msg, &ctx) {
                    for a in answers {
                        prop_assert!(a.len() <= tx.max(16));
                    }
                }
            }
        }
    }

    #[test]
    fn servers_follow_the_sii_word() {
        assert!(Protocols::from_sii(MailboxProtocols::COE, 1).is_none());
        let p = Protocols::from_sii(MailboxProtocols(0x08 | 0x20), 1).unwrap();
        assert!(p.serves(MailboxType::Foe) && p.serves(MailboxType::Voe));
        assert!(!p.serves(MailboxType::Soe) && !p.serves(MailboxType::Eoe));
        let mut p = all();
        let ctx = MbxCtx {
            state: AlState::Boot,
            rx_size: 128,
            tx_size: 128,
        };
        let voe = [6, 0, 0, 0, 0, 0x1F, 1, 0, 0, 0, 2, 0];
        assert_eq!(
            p.handle(MailboxType::Voe, &voe, &ctx),
            Err(MailboxErrorCode::UNSUPPORTED_PROTOCOL),
            "only FoE in BOOT"
        );
    }
}
