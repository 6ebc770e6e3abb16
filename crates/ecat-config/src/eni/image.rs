//! The cyclic part of an ENI: `Cyclic` tasks with their frames and commands, and the
//! `ProcessImage` with its named variables.
//!
//! TwinCAT-style files place the process image in frame coordinates: a cyclic command's
//! `InputOffs`/`OutputOffs` is the byte offset of its datagram header in the Ethernet frame,
//! so its data sits 10 bytes later, and a variable's `BitOffs` points into that data.
//! [`CyclicCmd::image_range`] gives the bytes of the image a command carries.

use super::xml::{child, child_text, children, text, Ctx};
use crate::error::Result;
use roxmltree::Node;

/// One command of a cyclic frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CyclicCmd {
    /// States it is sent in (`PREOP`, `SAFEOP`, `OP`, ...).
    pub states: Vec<String>,
    /// Comment.
    pub comment: String,
    /// Datagram command code.
    pub cmd: u8,
    /// ADP (or low word of `Addr`).
    pub adp: u16,
    /// ADO (or high word of `Addr`).
    pub ado: u16,
    /// Logical address (`Addr`), when given that way.
    pub addr: Option<u32>,
    /// Data length in bytes.
    pub data_len: usize,
    /// Data, if given.
    pub data: Option<Vec<u8>>,
    /// Expected working counter (`None` = not checked).
    pub cnt: Option<u16>,
    /// Byte offset in the input image (of the datagram header in frame coordinates).
    pub input_offs: Option<u32>,
    /// Byte offset in the output image.
    pub output_offs: Option<u32>,
}

/// Bytes between the datagram header's offset and its data.
pub const DATAGRAM_HEADER: u32 = 10;

impl CyclicCmd {
    /// The 32-bit logical address (`Addr`, or `Ado << 16 | Adp`).
    pub fn logical(&self) -> u32 {
        self.addr
            .unwrap_or((self.ado as u32) << 16 | self.adp as u32)
    }

    /// True for LRD (10), LWR (11) and LRW (12).
    pub fn is_logical(&self) -> bool {
        matches!(self.cmd, 10..=12)
    }

    /// The bytes of the input (`input = true`) or output image this command's data occupies.
    pub fn image_range(&self, input: bool) -> Option<std::ops::Range<usize>> {
        let offs = if input {
            self.input_offs
        } else {
            self.output_offs
        }?;
        let start = offs as usize + DATAGRAM_HEADER as usize;
        Some(start..start.saturating_add(self.data_len))
    }

    /// True if sent in `state` (`OP`, ...).
    pub fn in_state(&self, state: &str) -> bool {
        self.states.iter().any(|s| s.eq_ignore_ascii_case(state))
    }
}

/// A cyclic frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CyclicFrame {
    /// Comment.
    pub comment: String,
    /// Commands in order.
    pub cmds: Vec<CyclicCmd>,
}

/// A cyclic task.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cyclic {
    /// Comment.
    pub comment: String,
    /// Cycle time (µs), if given.
    pub cycle_time_us: Option<u32>,
    /// Priority.
    pub priority: Option<u32>,
    /// Task id.
    pub task_id: Option<u32>,
    /// Frames in order.
    pub frames: Vec<CyclicFrame>,
}

/// A variable of the process image.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Variable {
    /// Name (`Slave.Pdo.Entry`).
    pub name: String,
    /// Comment.
    pub comment: String,
    /// Data type (`INT`, `DINT`, `BOOL`, ...).
    pub data_type: String,
    /// Size in bits.
    pub bit_size: u32,
    /// Offset in bits in its image.
    pub bit_offs: u32,
}

/// The input or output image.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Image {
    /// Size in bytes.
    pub byte_size: u32,
    /// Variables in order.
    pub variables: Vec<Variable>,
}

/// The `ProcessImage`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessImage {
    /// Inputs (SubDevices → MainDevice).
    pub inputs: Image,
    /// Outputs.
    pub outputs: Image,
}

fn num<T: TryFrom<i64>>(cx: &Ctx<'_, '_>, node: Node<'_, '_>, name: &str) -> Result<Option<T>> {
    match child(node, name) {
        None => Ok(None),
        Some(c) => {
            let v = cx.int(c)?;
            cx.fit::<T>(c, v).map(Some)
        }
    }
}

fn parse_cmd(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<CyclicCmd> {
    let cmd: u8 =
        num(cx, node, "Cmd")?.ok_or_else(|| cx.invalid(node, "<Cmd>: expected a <Cmd> child"))?;
    if cmd > 14 {
        return Err(cx.invalid(
            node,
            format!("<Cmd>: the command code must be 0..14, found {cmd}"),
        ));
    }
    let addr: Option<u32> = num(cx, node, "Addr")?;
    let data = child(node, "Data").map(|d| cx.hex(d)).transpose()?;
    let data_len = match num::<u16>(cx, node, "DataLength")? {
        Some(n) => n as usize,
        None => data.as_ref().map_or(0, Vec::len),
    };
    Ok(CyclicCmd {
        states: children(node, "State")
            .map(|s| text(s).to_string())
            .collect(),
        comment: child_text(node, "Comment").unwrap_or("").to_string(),
        cmd,
        adp: num(cx, node, "Adp")?.unwrap_or(addr.unwrap_or(0) as u16),
        ado: num(cx, node, "Ado")?.unwrap_or((addr.unwrap_or(0) >> 16) as u16),
        addr,
        data_len,
        data,
        cnt: num(cx, node, "Cnt")?,
        input_offs: num(cx, node, "InputOffs")?,
        output_offs: num(cx, node, "OutputOffs")?,
    })
}

/// Read a `Cyclic` element.
pub(crate) fn parse_cyclic(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<Cyclic> {
    let mut frames = Vec::new();
    for f in children(node, "Frame") {
        let mut cmds = Vec::new();
        for c in children(f, "Cmd") {
            cmds.push(parse_cmd(cx, c)?);
        }
        frames.push(CyclicFrame {
            comment: child_text(f, "Comment").unwrap_or("").to_string(),
            cmds,
        });
    }
    Ok(Cyclic {
        comment: child_text(node, "Comment").unwrap_or("").to_string(),
        cycle_time_us: num(cx, node, "CycleTime")?,
        priority: num(cx, node, "Priority")?,
        task_id: num(cx, node, "TaskId")?,
        frames,
    })
}

fn parse_image(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<Image> {
    let mut variables = Vec::new();
    for v in children(node, "Variable") {
        let name = child_text(v, "Name").unwrap_or("").to_string();
        if name.is_empty() {
            return Err(cx.invalid(v, "<Variable>: expected a non-empty <Name>"));
        }
        variables.push(Variable {
            name,
            comment: child_text(v, "Comment").unwrap_or("").to_string(),
            data_type: child_text(v, "DataType").unwrap_or("").to_string(),
            bit_size: num(cx, v, "BitSize")?
                .ok_or_else(|| cx.invalid(v, "<Variable>: expected a <BitSize>"))?,
            bit_offs: num(cx, v, "BitOffs")?
                .ok_or_else(|| cx.invalid(v, "<Variable>: expected a <BitOffs>"))?,
        });
    }
    Ok(Image {
        byte_size: num(cx, node, "ByteSize")?.unwrap_or(0),
        variables,
    })
}

/// Read the `ProcessImage` element.
pub(crate) fn parse_process_image(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<ProcessImage> {
    Ok(ProcessImage {
        inputs: child(node, "Inputs")
            .map(|n| parse_image(cx, n))
            .transpose()?
            .unwrap_or_default(),
        outputs: child(node, "Outputs")
            .map(|n| parse_image(cx, n))
            .transpose()?
            .unwrap_or_default(),
    })
}
