//! The SDO server: one transfer at a time, in every form of reference §6.4.
//!
//! * Upload: up to 4 bytes expedited; more → normal (size + as much data as the send mailbox
//!   holds, SM1 size − 16); the rest in upload segments of up to SM1 size − 9 bytes, each
//!   answering an upload segment request whose toggle must alternate from 0.
//! * Download: expedited; normal with all data; or normal + download segments (toggle from
//!   0, last bit ends it). The size, rights and object are checked at the initiate request
//!   (so a segmented download to a read-only object aborts at once); the value checks when
//!   the last segment has arrived.
//! * A wrong toggle → abort 0x05030000 and the transfer ends; a segment request without a
//!   transfer, or an unknown command → 0x05040001. A new initiate request replaces an
//!   unfinished transfer; an abort from the client ends it silently.
//! * Complete access is echoed in the response's command byte (bit 4).

use super::access::{self, Ctx};
use super::od::Od;
use ecat_wire::coe::sdo::{self as wire, Direction, SdoRequest};
use ecat_wire::coe::SdoAbortCode as Abort;

/// An unfinished segmented transfer.
#[derive(Debug, Clone, Default)]
pub(crate) enum Transfer {
    /// Nothing in progress.
    #[default]
    Idle,
    /// Upload: the rest of `data` from `pos`; the next request must carry `toggle`.
    Upload {
        data: Vec<u8>,
        pos: usize,
        toggle: bool,
    },
    /// Download: collecting `total` bytes; the next segment must carry `toggle`.
    Download {
        index: u16,
        sub: u8,
        ca: bool,
        total: usize,
        data: Vec<u8>,
        toggle: bool,
    },
}

/// Size of the reply buffer (larger than any mailbox the catalogue uses).
const BUF: usize = 1024;

/// An abort as real SubDevices send it: CoE service 2 ("SDO request"). SOEM only recognises an
/// abort that does not come as an SDO response (pinned by the SOEM oracle test
/// `tests/oracle/test_soem_sdo.py`).
fn abort(index: u16, sub: u8, code: Abort) -> Vec<u8> {
    let mut b = [0u8; 32];
    let n = wire::emit_abort(&mut b, 0, Direction::Request, index, sub, code).unwrap_or(0);
    b[..n].to_vec()
}

fn msg(f: impl FnOnce(&mut [u8]) -> ecat_wire::Result<usize>) -> Vec<u8> {
    let mut b = vec![0u8; BUF];
    let n = f(&mut b).unwrap_or(0);
    b.truncate(n);
    b
}

/// Index and subindex of a request, as far as the message has them (for aborts).
fn address(m: &[u8]) -> (u16, u8) {
    match m.get(9..12) {
        Some(b) => (u16::from_le_bytes([b[0], b[1]]), b[2]),
        None => (0, 0),
    }
}

/// Answer one SDO request message (`m` is the whole mailbox message). `mbx` is the send
/// mailbox size (SM1). Replies carry counter 0; the mailbox sets the real one.
pub(crate) fn handle(t: &mut Transfer, od: &mut Od, ctx: &Ctx, m: &[u8], mbx: usize) -> Vec<u8> {
    let Ok(req) = wire::parse_request(m) else {
        let (i, s) = address(m);
        *t = Transfer::Idle;
        return abort(i, s, Abort::BAD_COMMAND);
    };
    match req {
        SdoRequest::Upload {
            index,
            subindex,
            complete_access: ca,
        } => {
            *t = Transfer::Idle;
            let mut data = Vec::new();
            if let Err(code) = access::upload(od, ctx, index, subindex, ca, &mut data) {
                return abort(index, subindex, code);
            }
            if (1..=4).contains(&data.len()) {
                return msg(|b| {
                    wire::emit_expedited_upload_response(b, 0, index, subindex, ca, &data)
                });
            }
            let first = data.len().min(wire::max_initiate_data(mbx));
            let total = data.len() as u32;
            let reply = msg(|b| {
                wire::emit_normal_upload_response(b, 0, index, subindex, ca, total, &data[..first])
            });
            if first < data.len() {
                *t = Transfer::Upload {
                    data,
                    pos: first,
                    toggle: false,
                };
            }
            reply
        }
        SdoRequest::UploadSegment { toggle } => {
            let Transfer::Upload {
                data,
                pos,
                toggle: want,
            } = t
            else {
                *t = Transfer::Idle;
                return abort(0, 0, Abort::BAD_COMMAND);
            };
            if toggle != *want {
                *t = Transfer::Idle;
                return abort(0, 0, Abort::TOGGLE);
            }
            let n = (data.len() - *pos).min(wire::max_segment_data(mbx).max(1));
            let last = *pos + n == data.len();
            let chunk = &data[*pos..*pos + n];
            let reply = msg(|b| wire::emit_upload_segment(b, 0, toggle, last, chunk));
            *pos += n;
            *want = !toggle;
            if last {
                *t = Transfer::Idle;
            }
            reply
        }
        SdoRequest::ExpeditedDownload {
            index,
            subindex,
            complete_access: ca,
            data,
            len,
        } => {
            *t = Transfer::Idle;
            let d = &data[..(len as usize).min(4)];
            match access::download(od, ctx, index, subindex, ca, d) {
                Ok(()) => msg(|b| wire::emit_download_ack(b, 0, index, subindex)),
                Err(code) => abort(index, subindex, code),
            }
        }
        SdoRequest::NormalDownload {
            index,
            subindex,
            complete_access: ca,
            total_size,
            data,
        } => {
            *t = Transfer::Idle;
            let total = total_size as usize;
            if data.len() >= total {
                return match access::download(od, ctx, index, subindex, ca, data) {
                    Ok(()) => msg(|b| wire::emit_download_ack(b, 0, index, subindex)),
                    Err(code) => abort(index, subindex, code),
                };
            }
            if let Err(code) = access::check_download(od, ctx, index, subindex, ca, total) {
                return abort(index, subindex, code);
            }
            if total > 0x1_0000 {
                return abort(index, subindex, Abort::OUT_OF_MEMORY);
            }
            *t = Transfer::Download {
                index,
                sub: subindex,
                ca,
                total,
                data: data.to_vec(),
                toggle: false,
            };
            msg(|b| wire::emit_download_ack(b, 0, index, subindex))
        }
        SdoRequest::DownloadSegment { toggle, last, data } => {
            let Transfer::Download {
                index,
                sub,
                ca,
                total,
                data: got,
                toggle: want,
            } = t
            else {
                *t = Transfer::Idle;
                return abort(0, 0, Abort::BAD_COMMAND);
            };
            let (index, sub, ca, total) = (*index, *sub, *ca, *total);
            if toggle != *want {
                *t = Transfer::Idle;
                return abort(index, sub, Abort::TOGGLE);
            }
            got.extend_from_slice(data);
            *want = !toggle;
            if got.len() > total {
                *t = Transfer::Idle;
                return abort(index, sub, Abort::TOO_LONG);
            }
            if !last {
                return msg(|b| wire::emit_download_segment_ack(b, 0, toggle));
            }
            let all = core::mem::take(got);
            *t = Transfer::Idle;
            if all.len() != total {
                return abort(index, sub, Abort::TYPE_MISMATCH);
            }
            match access::download(od, ctx, index, sub, ca, &all) {
                Ok(()) => msg(|b| wire::emit_download_segment_ack(b, 0, toggle)),
                Err(code) => abort(index, sub, code),
            }
        }
        SdoRequest::Abort { .. } => {
            *t = Transfer::Idle;
            Vec::new()
        }
    }
}
