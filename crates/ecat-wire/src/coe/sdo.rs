//! SDO transfers: the command byte in every form, the 8-byte SDO header, the segment header,
//! builders for whole request/response messages, parsers of whole messages into enums, and
//! the SDO abort codes.
//!
//! The command byte's meaning depends on the direction (a client's 0x60 is an upload segment
//! request, a server's 0x60 acknowledges a download), so [`SdoCommand::decode`] takes a
//! [`Direction`]; on the wire the direction is the CoE service (2 = request, 3 = response).
//! Expedited transfers carry up to 4 bytes in the header's data field; normal transfers carry
//! the complete size there and data after it; segments have a 1-byte header and at least 7
//! data bytes (short ones padded, with the unused count in the command byte).

use super::{emit_coe, parse_coe, CoeService, DATA_OFFSET};
use crate::{le16, le32, put16, Error, Result};

pub use super::abort::SdoAbortCode;

/// Bytes of the SDO header after the CoE header (command, index, subindex, data field).
pub const HEADER_LEN: usize = 8;
/// Bytes of the segment header after the CoE header (the command byte).
pub const SEGMENT_HEADER_LEN: usize = 1;
/// Minimum data bytes of a segment (shorter segments are padded).
pub const MIN_SEGMENT_DATA: usize = 7;
/// Mailbox length of an SDO message without extra data (2 CoE + 8 SDO).
pub const MIN_MAILBOX_LEN: usize = 10;

/// Who sent an SDO message: the client (master, CoE service 2) or the server (SubDevice,
/// service 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client → server (SDO request).
    Request,
    /// Server → client (SDO response).
    Response,
}

/// How an initiate message describes its size (command bits 0, 1 and 3:2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransferSize {
    /// Normal transfer, size indicated: the data field holds the complete size.
    Normal,
    /// Normal transfer, size not indicated.
    NormalUnsized,
    /// Expedited, size indicated: 1..=4 bytes in the data field.
    Expedited(u8),
    /// Expedited, size not indicated (4 bytes, some maybe unused).
    ExpeditedUnsized,
}

impl TransferSize {
    fn bits(self) -> u8 {
        match self {
            TransferSize::Normal => 0x01,
            TransferSize::NormalUnsized => 0x00,
            TransferSize::Expedited(n) => 0x03 | ((4 - n.clamp(1, 4)) << 2),
            TransferSize::ExpeditedUnsized => 0x02,
        }
    }
    fn from_bits(b: u8) -> TransferSize {
        match (b & 0x02 != 0, b & 0x01 != 0) {
            (false, true) => TransferSize::Normal,
            (false, false) => TransferSize::NormalUnsized,
            (true, true) => TransferSize::Expedited(4 - ((b >> 2) & 3)),
            (true, false) => TransferSize::ExpeditedUnsized,
        }
    }
}

/// Segment flags (download segment request, upload segment response).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Segment {
    /// Toggle bit (bit 4), alternating from 0.
    pub toggle: bool,
    /// Unused bytes of the 7-byte minimum (bits 3:1), 0..7.
    pub unused: u8,
    /// No more segments follow (bit 0).
    pub last: bool,
}

impl Segment {
    fn bits(self) -> u8 {
        (self.toggle as u8) << 4 | (self.unused & 7) << 1 | self.last as u8
    }
    fn from_bits(b: u8) -> Segment {
        Segment {
            toggle: b & 0x10 != 0,
            unused: (b >> 1) & 7,
            last: b & 1 != 0,
        }
    }
}

/// An SDO command byte, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdoCommand {
    /// Request, ccs 1 (0x21, 0x23..0x2F, +0x10 complete access).
    InitiateDownload {
        /// Size form.
        size: TransferSize,
        /// Complete access (bit 4).
        complete_access: bool,
    },
    /// Response, scs 3 (0x60).
    InitiateDownloadAck,
    /// Request, ccs 0.
    DownloadSegment(Segment),
    /// Response, scs 1 (0x20 / 0x30).
    DownloadSegmentAck {
        /// Toggle echoed.
        toggle: bool,
    },
    /// Request, ccs 2 (0x40, 0x50 with complete access).
    InitiateUpload {
        /// Complete access (bit 4).
        complete_access: bool,
    },
    /// Response, scs 2 (0x41, 0x43..0x4F, +0x10 complete access).
    InitiateUploadResponse {
        /// Size form.
        size: TransferSize,
        /// Complete access (bit 4).
        complete_access: bool,
    },
    /// Request, ccs 3 (0x60 / 0x70).
    UploadSegmentRequest {
        /// Toggle bit.
        toggle: bool,
    },
    /// Response, scs 0.
    UploadSegment(Segment),
    /// Either direction, cs 4 (0x80).
    Abort,
}

impl SdoCommand {
    /// Encode the command byte.
    pub fn encode(self) -> u8 {
        use SdoCommand::*;
        let ca = |c: bool| (c as u8) << 4;
        match self {
            InitiateDownload {
                size,
                complete_access,
            } => 0x20 | ca(complete_access) | size.bits(),
            InitiateDownloadAck => 0x60,
            DownloadSegment(s) => s.bits(),
            DownloadSegmentAck { toggle } => 0x20 | (toggle as u8) << 4,
            InitiateUpload { complete_access } => 0x40 | ca(complete_access),
            InitiateUploadResponse {
                size,
                complete_access,
            } => 0x40 | ca(complete_access) | size.bits(),
            UploadSegmentRequest { toggle } => 0x60 | (toggle as u8) << 4,
            UploadSegment(s) => s.bits(),
            Abort => 0x80,
        }
    }

    /// Decode a command byte sent in `dir`; [`Error::BadValue`] for command specifiers
    /// 5..7 (block transfers, not used by CoE) and, for requests, 4 is abort in both.
    pub fn decode(b: u8, dir: Direction) -> Result<SdoCommand> {
        use SdoCommand::*;
        let ca = b & 0x10 != 0;
        let toggle = b & 0x10 != 0;
        Ok(match (dir, b >> 5) {
            (_, 4) => Abort,
            (Direction::Request, 0) => DownloadSegment(Segment::from_bits(b)),
            (Direction::Request, 1) => InitiateDownload {
                size: TransferSize::from_bits(b),
                complete_access: ca,
            },
            (Direction::Request, 2) => InitiateUpload {
                complete_access: ca,
            },
            (Direction::Request, 3) => UploadSegmentRequest { toggle },
            (Direction::Response, 0) => UploadSegment(Segment::from_bits(b)),
            (Direction::Response, 1) => DownloadSegmentAck { toggle },
            (Direction::Response, 2) => InitiateUploadResponse {
                size: TransferSize::from_bits(b),
                complete_access: ca,
            },
            (Direction::Response, 3) => InitiateDownloadAck,
            _ => return Err(Error::BadValue),
        })
    }

    /// The direction this command is sent in; `None` for abort (both).
    pub fn direction(self) -> Option<Direction> {
        use SdoCommand::*;
        match self {
            InitiateDownload { .. }
            | DownloadSegment(_)
            | InitiateUpload { .. }
            | UploadSegmentRequest { .. } => Some(Direction::Request),
            InitiateDownloadAck
            | DownloadSegmentAck { .. }
            | InitiateUploadResponse { .. }
            | UploadSegment(_) => Some(Direction::Response),
            Abort => None,
        }
    }
}

/// The decoded 8-byte SDO header (after the CoE header) of initiate, ack and abort messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SdoHeaderRepr {
    /// Raw command byte (decode with [`SdoCommand::decode`]).
    pub command: u8,
    /// Object index.
    pub index: u16,
    /// Subindex.
    pub subindex: u8,
    /// Data field: expedited data, complete size, or abort code.
    pub data: [u8; 4],
}

impl SdoHeaderRepr {
    /// Decode 8 bytes.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        Ok(SdoHeaderRepr {
            command: b[0],
            index: le16(b, 1),
            subindex: b[3],
            data: [b[4], b[5], b[6], b[7]],
        })
    }
    /// Encode 8 bytes.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        if b.len() < HEADER_LEN {
            return Err(Error::NoSpace);
        }
        b[0] = self.command;
        put16(b, 1, self.index);
        b[3] = self.subindex;
        b[4..8].copy_from_slice(&self.data);
        Ok(())
    }
    /// The data field as a little-endian u32 (complete size, abort code).
    pub fn data_u32(&self) -> u32 {
        le32(&self.data, 0)
    }
}

/// Data bytes carried by a segment message whose service data (after the CoE header) is
/// `body`, given its unused count `n`.
fn segment_data(body: &[u8], unused: u8) -> Result<&[u8]> {
    let data = body.get(SEGMENT_HEADER_LEN..).ok_or(Error::Truncated)?;
    if unused == 0 {
        return Ok(data);
    }
    // A short segment is padded to 7 bytes; `unused` of them are padding.
    let len = data
        .len()
        .min(MIN_SEGMENT_DATA)
        .checked_sub(unused as usize)
        .ok_or(Error::BadLength)?;
    Ok(&data[..len])
}

/// A whole SDO response (CoE service 3, or an abort) as the client sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdoResponse<'a> {
    /// Expedited upload response: `len` (1..=4) valid bytes of `data`.
    Expedited {
        /// Object index.
        index: u16,
        /// Subindex.
        subindex: u8,
        /// The data field.
        data: [u8; 4],
        /// Valid bytes in `data`.
        len: u8,
    },
    /// Normal upload response: the complete size and the data in this message (at most
    /// `total_size` bytes; more follow in segments if shorter).
    Normal {
        /// Object index.
        index: u16,
        /// Subindex.
        subindex: u8,
        /// Complete size of the object in bytes.
        total_size: u32,
        /// The first data bytes.
        first_data: &'a [u8],
    },
    /// Upload segment response.
    Segment {
        /// Toggle bit.
        toggle: bool,
        /// Last segment.
        last: bool,
        /// The segment's data (padding removed).
        data: &'a [u8],
    },
    /// Initiate download response.
    DownloadAck {
        /// Object index.
        index: u16,
        /// Subindex.
        subindex: u8,
    },
    /// Download segment response.
    DownloadSegmentAck {
        /// Toggle echoed.
        toggle: bool,
    },
    /// Abort from the server.
    Abort {
        /// Object index.
        index: u16,
        /// Subindex.
        subindex: u8,
        /// Why.
        code: SdoAbortCode,
    },
}

/// A whole SDO request (CoE service 2) as the server sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdoRequest<'a> {
    /// Initiate upload.
    Upload {
        /// Object index.
        index: u16,
        /// Subindex.
        subindex: u8,
        /// Complete access.
        complete_access: bool,
    },
    /// Expedited download of `len` (1..=4) bytes of `data`.
    ExpeditedDownload {
        /// Object index.
        index: u16,
        /// Subindex.
        subindex: u8,
        /// Complete access.
        complete_access: bool,
        /// The data field.
        data: [u8; 4],
        /// Valid bytes in `data`.
        len: u8,
    },
    /// Normal download: complete size and the first data bytes (at most `total_size`).
    NormalDownload {
        /// Object index.
        index: u16,
        /// Subindex.
        subindex: u8,
        /// Complete access.
        complete_access: bool,
        /// Complete size in bytes.
        total_size: u32,
        /// The data in this message.
        data: &'a [u8],
    },
    /// Download segment.
    DownloadSegment {
        /// Toggle bit.
        toggle: bool,
        /// Last segment.
        last: bool,
        /// The segment's data (padding removed).
        data: &'a [u8],
    },
    /// Upload segment request.
    UploadSegment {
        /// Toggle bit.
        toggle: bool,
    },
    /// Abort from the client.
    Abort {
        /// Object index.
        index: u16,
        /// Subindex.
        subindex: u8,
        /// Why.
        code: SdoAbortCode,
    },
}

/// Split an SDO message into its command and service data, checking the CoE service is
/// `service`.
fn sdo_body(msg: &[u8], service: CoeService, dir: Direction) -> Result<(SdoCommand, &[u8])> {
    let (_, coe, body) = parse_coe(msg)?;
    if coe.service != service {
        return Err(Error::BadValue);
    }
    let cmd = SdoCommand::decode(*body.first().ok_or(Error::Truncated)?, dir)?;
    Ok((cmd, body))
}

/// The size and data of an expedited transfer.
fn expedited(h: &SdoHeaderRepr, size: TransferSize) -> ([u8; 4], u8) {
    let len = match size {
        TransferSize::Expedited(n) => n,
        _ => 4,
    };
    (h.data, len)
}

/// The data after the 8-byte header of a normal transfer, at most `total` bytes.
fn normal_data(body: &[u8], total: u32) -> &[u8] {
    let d = &body[HEADER_LEN..];
    &d[..d.len().min(total as usize)]
}

/// Parse a whole mailbox message as an SDO response (CoE service 3).
///
/// Errors: [`Error::BadValue`] if it is not CoE service 3, carries a request-only command, or
/// is a normal upload response without a size; [`Error::Truncated`] if the mailbox length is
/// below what the command needs.
pub fn parse_response(msg: &[u8]) -> Result<SdoResponse<'_>> {
    // A server's abort may come as CoE service 2 (SDO request) — the way SOEM expects
    // SubDevices to send it — or as service 3; accept both.
    if let Ok((SdoCommand::Abort, body)) = sdo_body(msg, CoeService::SdoRequest, Direction::Request)
    {
        let h = SdoHeaderRepr::parse(body)?;
        return Ok(SdoResponse::Abort {
            index: h.index,
            subindex: h.subindex,
            code: SdoAbortCode(h.data_u32()),
        });
    }
    let (cmd, body) = sdo_body(msg, CoeService::SdoResponse, Direction::Response)?;
    match cmd {
        SdoCommand::UploadSegment(s) => {
            return Ok(SdoResponse::Segment {
                toggle: s.toggle,
                last: s.last,
                data: segment_data(body, s.unused)?,
            })
        }
        SdoCommand::DownloadSegmentAck { toggle } => {
            return Ok(SdoResponse::DownloadSegmentAck { toggle })
        }
        _ => {}
    }
    let h = SdoHeaderRepr::parse(body)?;
    let (index, subindex) = (h.index, h.subindex);
    Ok(match cmd {
        SdoCommand::InitiateDownloadAck => SdoResponse::DownloadAck { index, subindex },
        SdoCommand::Abort => SdoResponse::Abort {
            index,
            subindex,
            code: SdoAbortCode(h.data_u32()),
        },
        SdoCommand::InitiateUploadResponse { size, .. } => match size {
            TransferSize::Normal => SdoResponse::Normal {
                index,
                subindex,
                total_size: h.data_u32(),
                first_data: normal_data(body, h.data_u32()),
            },
            TransferSize::NormalUnsized => return Err(Error::BadValue),
            _ => {
                let (data, len) = expedited(&h, size);
                SdoResponse::Expedited {
                    index,
                    subindex,
                    data,
                    len,
                }
            }
        },
        _ => return Err(Error::BadValue),
    })
}

/// Parse a whole mailbox message as an SDO request (CoE service 2), for the server side.
///
/// Errors as [`parse_response`]; a normal download without a size is refused with
/// [`Error::BadValue`].
pub fn parse_request(msg: &[u8]) -> Result<SdoRequest<'_>> {
    let (cmd, body) = sdo_body(msg, CoeService::SdoRequest, Direction::Request)?;
    match cmd {
        SdoCommand::DownloadSegment(s) => {
            return Ok(SdoRequest::DownloadSegment {
                toggle: s.toggle,
                last: s.last,
                data: segment_data(body, s.unused)?,
            })
        }
        SdoCommand::UploadSegmentRequest { toggle } => {
            return Ok(SdoRequest::UploadSegment { toggle })
        }
        _ => {}
    }
    let h = SdoHeaderRepr::parse(body)?;
    let (index, subindex) = (h.index, h.subindex);
    Ok(match cmd {
        SdoCommand::InitiateUpload { complete_access } => SdoRequest::Upload {
            index,
            subindex,
            complete_access,
        },
        SdoCommand::Abort => SdoRequest::Abort {
            index,
            subindex,
            code: SdoAbortCode(h.data_u32()),
        },
        SdoCommand::InitiateDownload {
            size,
            complete_access,
        } => match size {
            TransferSize::Normal => SdoRequest::NormalDownload {
                index,
                subindex,
                complete_access,
                total_size: h.data_u32(),
                data: normal_data(body, h.data_u32()),
            },
            TransferSize::NormalUnsized => return Err(Error::BadValue),
            _ => {
                let (data, len) = expedited(&h, size);
                SdoRequest::ExpeditedDownload {
                    index,
                    subindex,
                    complete_access,
                    data,
                    len,
                }
            }
        },
        _ => return Err(Error::BadValue),
    })
}

/// Write a whole SDO message with an 8-byte header and `extra` bytes after it; returns the
/// message length.
fn emit_header_msg(
    buf: &mut [u8],
    counter: u8,
    service: CoeService,
    h: &SdoHeaderRepr,
    extra: &[u8],
) -> Result<usize> {
    let body = emit_coe(buf, counter, service, HEADER_LEN + extra.len())?;
    h.emit(body)?;
    body[HEADER_LEN..].copy_from_slice(extra);
    Ok(DATA_OFFSET + HEADER_LEN + extra.len())
}

/// Write a whole segment message (padded to 7 data bytes); returns the message length.
fn emit_segment_msg(
    buf: &mut [u8],
    counter: u8,
    service: CoeService,
    cmd: impl Fn(u8) -> SdoCommand,
    data: &[u8],
) -> Result<usize> {
    let unused = MIN_SEGMENT_DATA.saturating_sub(data.len()) as u8;
    let len = SEGMENT_HEADER_LEN + data.len().max(MIN_SEGMENT_DATA);
    let body = emit_coe(buf, counter, service, len)?;
    body[0] = cmd(unused).encode();
    body[1..1 + data.len()].copy_from_slice(data);
    Ok(DATA_OFFSET + len)
}

fn expedited_header(cmd: SdoCommand, index: u16, subindex: u8, data: &[u8]) -> SdoHeaderRepr {
    let mut d = [0; 4];
    d[..data.len()].copy_from_slice(data);
    SdoHeaderRepr {
        command: cmd.encode(),
        index,
        subindex,
        data: d,
    }
}

/// Client: initiate upload request (16 bytes). Returns the message length.
///
/// `emit_upload_request(buf, 2, 0x1018, 1, false)` writes
/// `0a 00 00 00 00 23 00 20 40 18 10 01 00 00 00 00`.
pub fn emit_upload_request(
    buf: &mut [u8],
    counter: u8,
    index: u16,
    subindex: u8,
    complete_access: bool,
) -> Result<usize> {
    let cmd = SdoCommand::InitiateUpload { complete_access };
    let h = expedited_header(cmd, index, subindex, &[]);
    emit_header_msg(buf, counter, CoeService::SdoRequest, &h, &[])
}

/// Client: expedited download of 1..=4 bytes ([`Error::BadLength`] otherwise).
pub fn emit_expedited_download(
    buf: &mut [u8],
    counter: u8,
    index: u16,
    subindex: u8,
    complete_access: bool,
    data: &[u8],
) -> Result<usize> {
    if !(1..=4).contains(&data.len()) {
        return Err(Error::BadLength);
    }
    let cmd = SdoCommand::InitiateDownload {
        size: TransferSize::Expedited(data.len() as u8),
        complete_access,
    };
    let h = expedited_header(cmd, index, subindex, data);
    emit_header_msg(buf, counter, CoeService::SdoRequest, &h, &[])
}

/// Client: normal download request announcing `total_size` bytes and carrying the first
/// `first` of them (the rest follow in segments).
pub fn emit_normal_download(
    buf: &mut [u8],
    counter: u8,
    index: u16,
    subindex: u8,
    complete_access: bool,
    total_size: u32,
    first: &[u8],
) -> Result<usize> {
    if first.len() as u64 > total_size as u64 {
        return Err(Error::BadLength);
    }
    let cmd = SdoCommand::InitiateDownload {
        size: TransferSize::Normal,
        complete_access,
    };
    let h = expedited_header(cmd, index, subindex, &total_size.to_le_bytes());
    emit_header_msg(buf, counter, CoeService::SdoRequest, &h, first)
}

/// Client: download segment carrying `data` (padded to 7 bytes when shorter).
pub fn emit_download_segment(
    buf: &mut [u8],
    counter: u8,
    toggle: bool,
    last: bool,
    data: &[u8],
) -> Result<usize> {
    let cmd = |unused| {
        SdoCommand::DownloadSegment(Segment {
            toggle,
            unused,
            last,
        })
    };
    emit_segment_msg(buf, counter, CoeService::SdoRequest, cmd, data)
}

/// Client: upload segment request (mailbox length 10, 7 reserved zero bytes).
pub fn emit_upload_segment_request(buf: &mut [u8], counter: u8, toggle: bool) -> Result<usize> {
    let body = emit_coe(buf, counter, CoeService::SdoRequest, HEADER_LEN)?;
    body[0] = SdoCommand::UploadSegmentRequest { toggle }.encode();
    Ok(DATA_OFFSET + HEADER_LEN)
}

/// Either side: abort transfer. `dir` picks the CoE service: 2 (SDO request) or 3 (SDO
/// response). SubDevices should abort with service 2: SOEM takes an abort only when it does not
/// arrive as an SDO response (see the simulator's CoE server); [`parse_response`] accepts both.
pub fn emit_abort(
    buf: &mut [u8],
    counter: u8,
    dir: Direction,
    index: u16,
    subindex: u8,
    code: SdoAbortCode,
) -> Result<usize> {
    let service = match dir {
        Direction::Request => CoeService::SdoRequest,
        Direction::Response => CoeService::SdoResponse,
    };
    let h = expedited_header(SdoCommand::Abort, index, subindex, &code.0.to_le_bytes());
    emit_header_msg(buf, counter, service, &h, &[])
}

/// Server: expedited upload response with 1..=4 bytes.
pub fn emit_expedited_upload_response(
    buf: &mut [u8],
    counter: u8,
    index: u16,
    subindex: u8,
    complete_access: bool,
    data: &[u8],
) -> Result<usize> {
    if !(1..=4).contains(&data.len()) {
        return Err(Error::BadLength);
    }
    let cmd = SdoCommand::InitiateUploadResponse {
        size: TransferSize::Expedited(data.len() as u8),
        complete_access,
    };
    let h = expedited_header(cmd, index, subindex, data);
    emit_header_msg(buf, counter, CoeService::SdoResponse, &h, &[])
}

/// Server: normal upload response announcing `total_size` and carrying `first`.
pub fn emit_normal_upload_response(
    buf: &mut [u8],
    counter: u8,
    index: u16,
    subindex: u8,
    complete_access: bool,
    total_size: u32,
    first: &[u8],
) -> Result<usize> {
    if first.len() as u64 > total_size as u64 {
        return Err(Error::BadLength);
    }
    let cmd = SdoCommand::InitiateUploadResponse {
        size: TransferSize::Normal,
        complete_access,
    };
    let h = expedited_header(cmd, index, subindex, &total_size.to_le_bytes());
    emit_header_msg(buf, counter, CoeService::SdoResponse, &h, first)
}

/// Server: upload segment response carrying `data` (padded to 7 bytes when shorter).
pub fn emit_upload_segment(
    buf: &mut [u8],
    counter: u8,
    toggle: bool,
    last: bool,
    data: &[u8],
) -> Result<usize> {
    let cmd = |unused| {
        SdoCommand::UploadSegment(Segment {
            toggle,
            unused,
            last,
        })
    };
    emit_segment_msg(buf, counter, CoeService::SdoResponse, cmd, data)
}

/// Server: initiate download response (0x60) echoing index and subindex.
pub fn emit_download_ack(buf: &mut [u8], counter: u8, index: u16, subindex: u8) -> Result<usize> {
    let h = expedited_header(SdoCommand::InitiateDownloadAck, index, subindex, &[]);
    emit_header_msg(buf, counter, CoeService::SdoResponse, &h, &[])
}

/// Server: download segment response echoing the toggle (mailbox length 10).
pub fn emit_download_segment_ack(buf: &mut [u8], counter: u8, toggle: bool) -> Result<usize> {
    let body = emit_coe(buf, counter, CoeService::SdoResponse, HEADER_LEN)?;
    body[0] = SdoCommand::DownloadSegmentAck { toggle }.encode();
    Ok(DATA_OFFSET + HEADER_LEN)
}

/// The most data bytes a normal download/upload initiate message can carry in a mailbox of
/// `mailbox_size` bytes (SM size − 16).
pub fn max_initiate_data(mailbox_size: usize) -> usize {
    mailbox_size.saturating_sub(DATA_OFFSET + HEADER_LEN)
}

/// The most data bytes a segment can carry in a mailbox of `mailbox_size` bytes (SM size − 9).
pub fn max_segment_data(mailbox_size: usize) -> usize {
    mailbox_size.saturating_sub(DATA_OFFSET + SEGMENT_HEADER_LEN)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod abort_service_tests {
    use super::*;

    #[test]
    fn abort_is_accepted_in_both_services() {
        for dir in [Direction::Request, Direction::Response] {
            let mut b = [0u8; 32];
            let n = emit_abort(&mut b, 1, dir, 0x6060, 0, SdoAbortCode(0x0602_0000)).unwrap();
            assert_eq!(
                parse_response(&b[..n]).unwrap(),
                SdoResponse::Abort {
                    index: 0x6060,
                    subindex: 0,
                    code: SdoAbortCode(0x0602_0000)
                }
            );
        }
    }
}
