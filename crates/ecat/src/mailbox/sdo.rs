//! The CoE SDO client: which mailbox messages make up an upload, a download, or an SDO
//! Information request, in every form.
//!
//! Sans-IO, one level above [`super::exchange`]: [`SdoTransfer::start`] gives the first
//! request message, [`SdoTransfer::on_response`] takes each answer and says what to do next
//! (send another message, only receive the next fragment, or finished). Forms:
//! - upload: expedited or normal answer, then upload segments with the toggle bit until the
//!   last one;
//! - download: expedited for 1..4 bytes, else normal with as much data as fits in the first
//!   message and download segments for the rest (so objects longer than 4 bytes work);
//! - complete access for both (subindex 0 or 1, as the caller chooses);
//! - SDO Information: OD list (all fragments gathered), object description, entry description.
//!
//! Mailbox counters (1..7) are the caller's; every request message gets the next one.

use super::transfer::{message_in, Failure, Transfer};
use ecat_wire::coe::info::SdoInfoHeaderRepr;
use ecat_wire::coe::info::{
    emit_entry_description_request, emit_object_description_request, emit_od_list_request,
    parse_info, OdListType, SdoInfo,
};
use ecat_wire::coe::sdo::{
    emit_download_segment, emit_expedited_download, emit_normal_download, emit_upload_request,
    emit_upload_segment_request, max_initiate_data, max_segment_data, parse_response, SdoResponse,
};
use ecat_wire::coe::{parse_coe, SdoAbortCode};
use ecat_wire::mailbox::MailboxType;

/// What to do over SDO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SdoOp {
    /// Read an object entry (or the whole object with complete access).
    Upload {
        /// Index.
        index: u16,
        /// Subindex (0 or 1 with complete access).
        subindex: u8,
        /// Complete access.
        complete_access: bool,
    },
    /// Write an object entry (or the whole object with complete access).
    Download {
        /// Index.
        index: u16,
        /// Subindex.
        subindex: u8,
        /// Complete access.
        complete_access: bool,
        /// The value's bytes (little-endian).
        data: Vec<u8>,
    },
    /// SDO Information: list of object indices.
    OdList {
        /// Which list.
        list_type: OdListType,
    },
    /// SDO Information: one object's description.
    ObjectDescription {
        /// Index.
        index: u16,
    },
    /// SDO Information: one entry's description.
    EntryDescription {
        /// Index.
        index: u16,
        /// Subindex.
        subindex: u8,
        /// What to include (value-info bits).
        value_info: u8,
    },
}

impl SdoOp {
    /// Short description for messages, e.g. `upload 0x1018:01`.
    pub fn describe(&self) -> String {
        match self {
            SdoOp::Upload {
                index,
                subindex,
                complete_access,
            } => {
                format!(
                    "upload 0x{index:04X}:{subindex:02X}{}",
                    if *complete_access {
                        " (complete access)"
                    } else {
                        ""
                    }
                )
            }
            SdoOp::Download {
                index,
                subindex,
                complete_access,
                data,
            } => format!(
                "download of {} bytes to 0x{index:04X}:{subindex:02X}{}",
                data.len(),
                if *complete_access {
                    " (complete access)"
                } else {
                    ""
                }
            ),
            SdoOp::OdList { list_type } => format!("object list ({})", list_type.name()),
            SdoOp::ObjectDescription { index } => format!("description of object 0x{index:04X}"),
            SdoOp::EntryDescription {
                index, subindex, ..
            } => {
                format!("description of entry 0x{index:04X}:{subindex:02X}")
            }
        }
    }
}

pub use super::transfer::Next;

/// Why an SDO transfer failed (the protocol-agnostic [`Failure`]).
pub type SdoError = Failure;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Initiate,
    UploadSegments { toggle: bool, total: u32 },
    DownloadSegments { toggle: bool, offset: usize },
    InfoFragments,
    Finished,
}

/// One SDO transfer. For SDO Information the result bytes are: OD list → the indices as
/// little-endian u16s; descriptions → the response body after the info header (parse with
/// `ecat_wire::coe::info::{ObjectDescriptionRepr, EntryDescriptionRepr}`).
#[derive(Debug)]
pub struct SdoTransfer {
    op: SdoOp,
    stage: Stage,
    mailbox_size: usize,
    counter: u8,
    data: Vec<u8>,
    /// The buffer of the last message sent, for the next one.
    spare: Vec<u8>,
}

impl SdoTransfer {
    /// A transfer over a mailbox of `mailbox_size` bytes (SM0 length), continuing the mailbox
    /// counter from `counter` (the last one used; 0 if none yet).
    pub fn new(op: SdoOp, mailbox_size: u16, counter: u8) -> SdoTransfer {
        SdoTransfer {
            op,
            stage: Stage::Initiate,
            mailbox_size: mailbox_size as usize,
            counter,
            data: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// The operation.
    pub fn op(&self) -> &SdoOp {
        &self.op
    }

    /// The last mailbox counter used (store it for the next transfer to this SubDevice).
    pub fn counter(&self) -> u8 {
        self.counter
    }

    fn message(&mut self, f: impl FnOnce(&mut [u8], u8) -> ecat_wire::Result<usize>) -> Next {
        let next = message_in(&mut self.spare, self.mailbox_size, &mut self.counter, f);
        if matches!(next, Next::Failed(_)) {
            self.stage = Stage::Finished;
        }
        next
    }

    /// The first request message.
    pub fn start(&mut self) -> Next {
        match self.op.clone() {
            SdoOp::Upload {
                index,
                subindex,
                complete_access,
            } => self.message(|b, c| emit_upload_request(b, c, index, subindex, complete_access)),
            SdoOp::Download {
                index,
                subindex,
                complete_access,
                data,
            } => {
                if (1..=4).contains(&data.len()) {
                    self.message(|b, c| {
                        emit_expedited_download(b, c, index, subindex, complete_access, &data)
                    })
                } else {
                    let first = data.len().min(max_initiate_data(self.mailbox_size));
                    let next = self.message(|b, c| {
                        emit_normal_download(
                            b,
                            c,
                            index,
                            subindex,
                            complete_access,
                            data.len() as u32,
                            &data[..first],
                        )
                    });
                    if first < data.len() {
                        self.stage = Stage::DownloadSegments {
                            toggle: false,
                            offset: first,
                        };
                    }
                    next
                }
            }
            SdoOp::OdList { list_type } => {
                self.message(|b, c| emit_od_list_request(b, c, list_type))
            }
            SdoOp::ObjectDescription { index } => {
                self.message(|b, c| emit_object_description_request(b, c, index))
            }
            SdoOp::EntryDescription {
                index,
                subindex,
                value_info,
            } => self
                .message(|b, c| emit_entry_description_request(b, c, index, subindex, value_info)),
        }
    }

    fn fail(&mut self, e: SdoError) -> Next {
        self.stage = Stage::Finished;
        Next::Failed(e)
    }

    fn protocol(&mut self, what: &str) -> Next {
        self.fail(SdoError::Protocol(what.to_string()))
    }

    /// Take the answer message and say what comes next.
    pub fn on_response(&mut self, msg: &[u8]) -> Next {
        if matches!(
            self.op,
            SdoOp::OdList { .. } | SdoOp::ObjectDescription { .. } | SdoOp::EntryDescription { .. }
        ) {
            return self.on_info(msg);
        }
        let r = match parse_response(msg) {
            Ok(r) => r,
            Err(e) => return self.protocol(&format!("answer cannot be decoded ({e})")),
        };
        if let SdoResponse::Abort { code, .. } = r {
            return self.fail(SdoError::Abort(code));
        }
        match (self.stage, &self.op.clone(), r) {
            (Stage::Initiate, SdoOp::Upload { .. }, SdoResponse::Expedited { data, len, .. }) => {
                self.stage = Stage::Finished;
                Next::Done(data[..len as usize].to_vec())
            }
            (
                Stage::Initiate,
                SdoOp::Upload { .. },
                SdoResponse::Normal {
                    total_size,
                    first_data,
                    ..
                },
            ) => {
                self.data.extend_from_slice(first_data);
                if self.data.len() >= total_size as usize {
                    self.data.truncate(total_size as usize);
                    self.stage = Stage::Finished;
                    return Next::Done(std::mem::take(&mut self.data));
                }
                self.stage = Stage::UploadSegments {
                    toggle: false,
                    total: total_size,
                };
                self.message(|b, c| emit_upload_segment_request(b, c, false))
            }
            (
                Stage::UploadSegments { toggle, total },
                _,
                SdoResponse::Segment {
                    toggle: t,
                    last,
                    data,
                },
            ) => {
                if t != toggle {
                    return self.protocol("upload segment with the wrong toggle bit");
                }
                self.data.extend_from_slice(data);
                if last || self.data.len() >= total as usize {
                    if self.data.len() != total as usize && !last {
                        return self.protocol("upload longer than announced");
                    }
                    self.stage = Stage::Finished;
                    return Next::Done(std::mem::take(&mut self.data));
                }
                self.stage = Stage::UploadSegments {
                    toggle: !toggle,
                    total,
                };
                self.message(|b, c| emit_upload_segment_request(b, c, !toggle))
            }
            (Stage::Initiate, SdoOp::Download { .. }, SdoResponse::DownloadAck { .. }) => {
                self.stage = Stage::Finished;
                Next::Done(Vec::new())
            }
            (
                Stage::DownloadSegments { toggle, offset },
                SdoOp::Download { data, .. },
                SdoResponse::DownloadAck { .. },
            )
            | (
                Stage::DownloadSegments { toggle, offset },
                SdoOp::Download { data, .. },
                SdoResponse::DownloadSegmentAck { .. },
            ) => {
                if let SdoResponse::DownloadSegmentAck { toggle: t } = r {
                    if t == toggle {
                        return self
                            .protocol("download segment acknowledged with the wrong toggle bit");
                    }
                }
                if offset >= data.len() {
                    self.stage = Stage::Finished;
                    return Next::Done(Vec::new());
                }
                let n = (data.len() - offset).min(max_segment_data(self.mailbox_size));
                let last = offset + n == data.len();
                let chunk = data[offset..offset + n].to_vec();
                self.stage = Stage::DownloadSegments {
                    toggle: !toggle,
                    offset: offset + n,
                };
                self.message(|b, c| emit_download_segment(b, c, toggle, last, &chunk))
            }
            _ => self.protocol("answer does not fit the transfer"),
        }
    }

    fn description_fragment(&mut self, incomplete: bool) -> Next {
        if incomplete {
            self.stage = Stage::InfoFragments;
            Next::Receive
        } else {
            self.stage = Stage::Finished;
            Next::Done(std::mem::take(&mut self.data))
        }
    }

    fn on_info(&mut self, msg: &[u8]) -> Next {
        let describing = matches!(
            self.op,
            SdoOp::ObjectDescription { .. } | SdoOp::EntryDescription { .. }
        );
        if describing && self.stage == Stage::InfoFragments {
            // A further fragment: only the info header is structured.
            return match parse_coe(msg).map(|(_, _, b)| (SdoInfoHeaderRepr::parse(b), b)) {
                Ok((Ok(h), b)) if h.opcode == ecat_wire::coe::info::SdoInfoOpcode::Error => {
                    let code = b
                        .get(4..8)
                        .map_or(0, |c| u32::from_le_bytes(c.try_into().unwrap_or([0; 4])));
                    self.fail(Failure::Abort(SdoAbortCode(code)))
                }
                Ok((Ok(h), b)) => {
                    self.data.extend_from_slice(&b[4..]);
                    self.description_fragment(h.incomplete)
                }
                _ => self.protocol("SDO Information fragment cannot be decoded"),
            };
        }
        let (h, info) = match parse_info(msg) {
            Ok(x) => x,
            Err(e) => {
                return self.protocol(&format!("SDO Information answer cannot be decoded ({e})"))
            }
        };
        match info {
            SdoInfo::Error { code } => self.fail(SdoError::Abort(code)),
            SdoInfo::OdListResponse { words } => {
                let mut it = words.iter();
                if self.stage == Stage::Initiate {
                    it.next(); // the first fragment starts with the list type
                }
                for w in it {
                    self.data.extend_from_slice(&w.to_le_bytes());
                }
                if h.incomplete {
                    self.stage = Stage::InfoFragments;
                    Next::Receive
                } else {
                    self.stage = Stage::Finished;
                    Next::Done(std::mem::take(&mut self.data))
                }
            }
            SdoInfo::ObjectDescriptionResponse(_) | SdoInfo::EntryDescriptionResponse(_) => {
                // The body after the 6 + 2 + 4 header bytes; long descriptions (names) come
                // in fragments, the first one decoded here, the rest taken as they are.
                self.data.extend_from_slice(msg.get(12..).unwrap_or(&[]));
                self.description_fragment(h.incomplete)
            }
            _ => self.protocol("unexpected SDO Information answer"),
        }
    }
}

impl Transfer for SdoTransfer {
    fn start(&mut self) -> Next {
        SdoTransfer::start(self)
    }
    fn on_response(&mut self, msg: &[u8]) -> Next {
        SdoTransfer::on_response(self, msg)
    }
    fn recycle(&mut self, buf: Vec<u8>) {
        self.spare = buf;
    }

    fn counter(&self) -> u8 {
        self.counter
    }
    fn describe(&self) -> String {
        format!("SDO {}", self.op.describe())
    }
    fn accepts(&self, kind: u8) -> bool {
        kind == MailboxType::Coe as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat_wire::coe::sdo::{
        emit_download_ack, emit_download_segment_ack, emit_expedited_upload_response,
        emit_normal_upload_response, emit_upload_segment, parse_request, SdoRequest,
    };

    fn send(n: Next) -> Vec<u8> {
        match n {
            Next::Send(m) => m,
            other => panic!("expected a message, got {other:?}"),
        }
    }

    #[test]
    fn expedited_upload() {
        let mut t = SdoTransfer::new(
            SdoOp::Upload {
                index: 0x1018,
                subindex: 1,
                complete_access: false,
            },
            128,
            1,
        );
        let m = send(t.start());
        assert_eq!(
            &m[..16],
            &[0x0a, 0, 0, 0, 0, 0x23, 0x00, 0x20, 0x40, 0x18, 0x10, 0x01, 0, 0, 0, 0]
        );
        let mut r = [0u8; 128];
        emit_expedited_upload_response(&mut r, 1, 0x1018, 1, false, &[2, 0, 0, 0]).unwrap();
        assert_eq!(t.on_response(&r), Next::Done(vec![2, 0, 0, 0]));
    }

    #[test]
    fn segmented_upload() {
        let text: Vec<u8> = (0..300u16).map(|i| b'a' + (i % 26) as u8).collect();
        let mut t = SdoTransfer::new(
            SdoOp::Upload {
                index: 0x1008,
                subindex: 0,
                complete_access: false,
            },
            128,
            7,
        );
        send(t.start());
        let mut r = [0u8; 128];
        let first = 128 - 16;
        emit_normal_upload_response(&mut r, 1, 0x1008, 0, false, 300, &text[..first]).unwrap();
        let mut off = first;
        let mut next = t.on_response(&r);
        let mut toggle = false;
        loop {
            let m = match next {
                Next::Send(m) => m,
                Next::Done(d) => {
                    assert_eq!(d, text);
                    break;
                }
                other => panic!("{other:?}"),
            };
            assert!(
                matches!(parse_request(&m).unwrap(), SdoRequest::UploadSegment { toggle: t } if t == toggle)
            );
            let n = (300 - off).min(128 - 9);
            emit_upload_segment(&mut r, 1, toggle, off + n == 300, &text[off..off + n]).unwrap();
            off += n;
            toggle = !toggle;
            next = t.on_response(&r);
        }
    }

    #[test]
    fn segmented_download_and_abort() {
        let data: Vec<u8> = (0..200u8).collect();
        let mut t = SdoTransfer::new(
            SdoOp::Download {
                index: 0x2000,
                subindex: 1,
                complete_access: false,
                data: data.clone(),
            },
            64,
            0,
        );
        let mut got = Vec::new();
        let m = send(t.start());
        match parse_request(&m).unwrap() {
            SdoRequest::NormalDownload {
                total_size,
                data: d,
                ..
            } => {
                assert_eq!(total_size, 200);
                got.extend_from_slice(d);
            }
            other => panic!("{other:?}"),
        }
        let mut r = [0u8; 64];
        emit_download_ack(&mut r, 1, 0x2000, 1).unwrap();
        let mut next = t.on_response(&r);
        let mut toggle = false;
        loop {
            match next {
                Next::Send(m) => {
                    match parse_request(&m).unwrap() {
                        SdoRequest::DownloadSegment {
                            toggle: tg,
                            data: d,
                            ..
                        } => {
                            assert_eq!(tg, toggle);
                            got.extend_from_slice(d);
                        }
                        other => panic!("{other:?}"),
                    }
                    emit_download_segment_ack(&mut r, 1, toggle).unwrap();
                    toggle = !toggle;
                    next = t.on_response(&r);
                }
                Next::Done(d) => {
                    assert!(d.is_empty());
                    break;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(got, data);
        // Abort.
        let mut t = SdoTransfer::new(
            SdoOp::Upload {
                index: 0x9999,
                subindex: 0,
                complete_access: false,
            },
            128,
            0,
        );
        send(t.start());
        ecat_wire::coe::sdo::emit_abort(
            &mut r,
            1,
            ecat_wire::coe::sdo::Direction::Response,
            0x9999,
            0,
            SdoAbortCode(0x0602_0000),
        )
        .unwrap();
        assert_eq!(
            t.on_response(&r),
            Next::Failed(SdoError::Abort(SdoAbortCode(0x0602_0000)))
        );
    }

    #[test]
    fn long_descriptions_arrive_in_fragments() {
        use ecat_wire::coe::info::{emit_info, SdoInfoHeaderRepr, SdoInfoOpcode};
        let name: Vec<u8> = (0..150u8).map(|i| b'a' + i % 26).collect();
        // The body as one piece: index, data type, max subindex, object code, name.
        let mut body = vec![0x00, 0x20, 0x09, 0x00, 0x05, 0x09];
        body.extend_from_slice(&name);
        let mut t = SdoTransfer::new(SdoOp::ObjectDescription { index: 0x2000 }, 64, 0);
        send(t.start());
        // Fragments of at most 64 − 12 bytes, fragments-left counting down.
        let chunks: Vec<&[u8]> = body.chunks(52).collect();
        let mut next = Next::Receive;
        for (i, c) in chunks.iter().enumerate() {
            let left = (chunks.len() - 1 - i) as u16;
            let h = SdoInfoHeaderRepr {
                opcode: SdoInfoOpcode::ObjectDescriptionResponse,
                incomplete: left > 0,
                fragments_left: left,
            };
            let mut m = [0u8; 64];
            emit_info(&mut m, 1, &h, c.len())
                .unwrap()
                .copy_from_slice(c);
            assert_eq!(next, Next::Receive, "fragment {i} is awaited");
            next = t.on_response(&m[..12 + c.len()]);
        }
        assert_eq!(next, Next::Done(body.clone()));
        let d = ecat_wire::coe::info::ObjectDescriptionRepr::parse(&body).unwrap();
        assert_eq!((d.index, d.name), (0x2000, &name[..]));
    }

    #[test]
    fn garbage_answers_fail_cleanly() {
        let mut t = SdoTransfer::new(
            SdoOp::Upload {
                index: 1,
                subindex: 0,
                complete_access: false,
            },
            128,
            0,
        );
        send(t.start());
        assert!(matches!(
            t.on_response(&[1, 2, 3]),
            Next::Failed(SdoError::Protocol(_))
        ));
        let mut t = SdoTransfer::new(
            SdoOp::OdList {
                list_type: OdListType(1),
            },
            128,
            0,
        );
        send(t.start());
        assert!(matches!(
            t.on_response(&[0; 40]),
            Next::Failed(SdoError::Protocol(_))
        ));
    }
}
