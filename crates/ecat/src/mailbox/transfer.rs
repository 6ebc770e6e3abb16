//! What every mailbox protocol client has in common: a [`Transfer`] turns a request into
//! mailbox messages and answers into the next step, whatever the protocol (CoE SDO, FoE, SoE,
//! VoE). The transport ([`super::exchange`]), the stepping ([`super::job`]) and the carriers
//! (blocking bus, cyclic runtime) know only this trait, so one engine serves every protocol.
//!
//! Mailbox counters (1..7) belong to the transfer while it runs: every request message gets the
//! next one, and [`Transfer::counter`] hands the last one back for the next transfer.

use ecat_wire::coe::SdoAbortCode;

/// Why a transfer failed at its protocol's level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The SubDevice aborted an SDO transfer with this code.
    Abort(SdoAbortCode),
    /// The SubDevice refused the request with a protocol error code, decoded to text
    /// (FoE error, SoE error, SDO Information error ...).
    Refused(String),
    /// The SubDevice answered something that does not fit the transfer.
    Protocol(String),
}

/// What the transfer wants next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Send this mailbox message (header included) and wait for the answer.
    Send(Vec<u8>),
    /// Write this message and go on without waiting for an answer, once SM0 took it
    /// ([`Transfer::on_posted`] says what comes next): a final FoE acknowledge, SoE write
    /// fragments, a VoE message.
    Post(Vec<u8>),
    /// Wait for one more message without sending (e.g. a further fragment).
    Receive,
    /// Finished with these bytes (the read data; empty for a write).
    Done(Vec<u8>),
    /// Failed.
    Failed(Failure),
}

/// One protocol transfer over a mailbox, sans-IO. See the module documentation.
pub trait Transfer: Send + std::fmt::Debug {
    /// The first request message.
    fn start(&mut self) -> Next;
    /// Take an answer message (a whole mailbox message) and say what comes next. Messages of
    /// other protocols than the transfer's are not passed here (see [`Transfer::accepts`]).
    fn on_response(&mut self, msg: &[u8]) -> Next;
    /// What comes after a [`Next::Post`]ed message was taken by the SubDevice.
    fn on_posted(&mut self) -> Next {
        Next::Failed(Failure::Protocol("nothing follows a posted message".into()))
    }
    /// Take back the buffer of a message sent, to build the next one in (no allocation per
    /// message); by default it is dropped.
    fn recycle(&mut self, _buf: Vec<u8>) {}
    /// The last mailbox counter used.
    fn counter(&self) -> u8;
    /// Short description for messages, with the protocol, e.g. `SDO upload 0x1018:01`.
    fn describe(&self) -> String;
    /// True if a received message of mailbox type `kind` (low nibble of header byte 5) is an
    /// answer for this transfer; other messages are unsolicited and handed elsewhere.
    fn accepts(&self, kind: u8) -> bool;
    /// The time one answer may take (ns); FoE busy answers and SoE drives may need longer.
    fn timeout_ns(&self) -> u64 {
        super::job::MAILBOX_TIMEOUT_NS
    }
}

/// Like [`message`], for a message to post (no answer awaited).
pub fn post(
    size: usize,
    counter: &mut u8,
    f: impl FnOnce(&mut [u8], u8) -> ecat_wire::Result<usize>,
) -> Next {
    post_in(&mut Vec::new(), size, counter, f)
}

/// Like [`message_in`], for a message to post (no answer awaited).
pub fn post_in(
    spare: &mut Vec<u8>,
    size: usize,
    counter: &mut u8,
    f: impl FnOnce(&mut [u8], u8) -> ecat_wire::Result<usize>,
) -> Next {
    match message_in(spare, size, counter, f) {
        Next::Send(m) => Next::Post(m),
        other => other,
    }
}

/// Build a message into a fresh buffer of `size` bytes with the next counter after
/// `*counter`: the shared helper of every protocol client.
pub fn message(
    size: usize,
    counter: &mut u8,
    f: impl FnOnce(&mut [u8], u8) -> ecat_wire::Result<usize>,
) -> Next {
    message_in(&mut Vec::new(), size, counter, f)
}

/// Like [`message`], built in `spare` (a buffer given back by [`Transfer::recycle`]), so a
/// transfer of many messages allocates only for its first.
pub fn message_in(
    spare: &mut Vec<u8>,
    size: usize,
    counter: &mut u8,
    f: impl FnOnce(&mut [u8], u8) -> ecat_wire::Result<usize>,
) -> Next {
    *counter = ecat_wire::mailbox::next_counter(*counter);
    let mut buf = std::mem::take(spare);
    buf.clear();
    buf.resize(size.max(16), 0);
    match f(&mut buf, *counter) {
        Ok(n) => {
            buf.truncate(n);
            Next::Send(buf)
        }
        Err(e) => Next::Failed(Failure::Protocol(format!("cannot build the request: {e}"))),
    }
}
