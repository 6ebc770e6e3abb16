//! The bpf(2) side of the AF_XDP link: constants from the kernel headers, the hand-assembled
//! XDP program that steers EtherType 0x88A4 to the socket, and the syscall wrapper.

use super::*;

// linux/bpf.h
pub(super) const BPF_MAP_CREATE: libc::c_long = 0;
pub(super) const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
pub(super) const BPF_MAP_DELETE_ELEM: libc::c_long = 3;
pub(super) const BPF_PROG_LOAD: libc::c_long = 5;
pub(super) const BPF_LINK_CREATE: libc::c_long = 28;
pub(super) const BPF_MAP_TYPE_XSKMAP: u32 = 17;
pub(super) const BPF_PROG_TYPE_XDP: u32 = 6;
pub(super) const BPF_XDP: u32 = 37;
pub(super) const BPF_PSEUDO_MAP_FD: u8 = 1;
pub(super) const BPF_FUNC_REDIRECT_MAP: i32 = 51;
// linux/if_link.h
pub(super) const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
pub(super) const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
/// XDP_PASS action.
pub(super) const XDP_PASS: i32 = 2;

// ---------------------------------------------------------------------------------------------
// The XDP program.

/// One eBPF instruction (`struct bpf_insn`): opcode, registers (dst in the low nibble), offset,
/// immediate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Insn {
    /// Opcode.
    pub code: u8,
    /// Destination register (low nibble) and source register (high nibble).
    pub regs: u8,
    /// Signed offset (jumps: in instructions, relative to the next one).
    pub off: i16,
    /// Signed immediate.
    pub imm: i32,
}

pub(super) const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: (src << 4) | (dst & 0x0f),
        off,
        imm,
    }
}

// Opcodes used (class | size/op | source).
pub(super) const LDX_W: u8 = 0x61; // BPF_LDX | BPF_MEM | BPF_W
pub(super) const LDX_H: u8 = 0x69; // BPF_LDX | BPF_MEM | BPF_H
pub(super) const MOV64_X: u8 = 0xbf; // BPF_ALU64 | BPF_MOV | BPF_X
pub(super) const MOV64_K: u8 = 0xb7; // BPF_ALU64 | BPF_MOV | BPF_K
pub(super) const ADD64_K: u8 = 0x07; // BPF_ALU64 | BPF_ADD | BPF_K
pub(super) const JGT_X: u8 = 0x2d; // BPF_JMP | BPF_JGT | BPF_X
pub(super) const JNE_K: u8 = 0x55; // BPF_JMP | BPF_JNE | BPF_K
pub(super) const LD_IMM64: u8 = 0x18; // BPF_LD | BPF_DW | BPF_IMM (two slots)
pub(super) const CALL: u8 = 0x85; // BPF_JMP | BPF_CALL
pub(super) const EXIT: u8 = 0x95; // BPF_JMP | BPF_EXIT

/// Index of the `pass:` block in [`program`].
pub(super) const PASS: i16 = 14;

/// The XDP program, with the XSKMAP file descriptor `map_fd` in its map load.
///
/// ```text
///  0  r2 = ctx->data               (u32 at ctx+0)
///  1  r3 = ctx->data_end           (u32 at ctx+4)
///  2  r4 = ctx->rx_queue_index     (u32 at ctx+16)
///  3  r5 = r2
///  4  r5 += 14
///  5  if r5 > r3 goto pass         (shorter than an Ethernet header)
///  6  r5 = *(u16 *)(r2 + 12)       (EtherType as stored)
///  7  if r5 != 0x88A4 goto pass
///  8  r2 = r4                      (key)
///  9  r1 = map_fd (ld_imm64, pseudo map fd; two slots)
/// 11  r3 = XDP_PASS                (action if the queue has no socket)
/// 12  call bpf_redirect_map
/// 13  exit
/// 14  pass: r0 = XDP_PASS
/// 15  exit
/// ```
pub fn program(map_fd: i32) -> [Insn; 16] {
    let ethertype = u16::from_ne_bytes(ETHERTYPE_ETHERCAT.to_be_bytes()) as i32;
    [
        insn(LDX_W, 2, 1, 0, 0),
        insn(LDX_W, 3, 1, 4, 0),
        insn(LDX_W, 4, 1, 16, 0),
        insn(MOV64_X, 5, 2, 0, 0),
        insn(ADD64_K, 5, 0, 0, 14),
        insn(JGT_X, 5, 3, PASS - 6, 0),
        insn(LDX_H, 5, 2, 12, 0),
        insn(JNE_K, 5, 0, PASS - 8, ethertype),
        insn(MOV64_X, 2, 4, 0, 0),
        insn(LD_IMM64, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),
        insn(0, 0, 0, 0, 0),
        insn(MOV64_K, 3, 0, 0, XDP_PASS),
        insn(CALL, 0, 0, 0, BPF_FUNC_REDIRECT_MAP),
        insn(EXIT, 0, 0, 0, 0),
        insn(MOV64_K, 0, 0, 0, XDP_PASS),
        insn(EXIT, 0, 0, 0, 0),
    ]
}

// ---------------------------------------------------------------------------------------------
// bpf(2).

/// A `union bpf_attr`, zero-filled, written by byte offset (the kernel accepts a shorter
/// attribute than its own as long as every field it reads is inside).
#[repr(C, align(8))]
pub(super) struct Attr(pub(super) [u8; 128]);

impl Attr {
    pub(super) fn new() -> Attr {
        Attr([0; 128])
    }
    pub(super) fn u32(&mut self, off: usize, v: u32) -> &mut Attr {
        self.0[off..off + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    pub(super) fn u64(&mut self, off: usize, v: u64) -> &mut Attr {
        self.0[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
    pub(super) fn name(&mut self, off: usize, name: &str) -> &mut Attr {
        let n = name.len().min(15);
        self.0[off..off + n].copy_from_slice(&name.as_bytes()[..n]);
        self
    }
}

/// `bpf(cmd, attr)`: a new file descriptor (or 0) on success.
pub(super) fn bpf(cmd: libc::c_long, attr: &mut Attr) -> io::Result<libc::c_int> {
    // SAFETY: `attr` is a valid, writable 128-byte bpf_attr for the duration of the call; every
    // pointer stored in it points to memory that outlives the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.0.as_mut_ptr(),
            std::mem::size_of::<Attr>() as libc::c_uint,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as libc::c_int)
    }
}

pub(super) fn owned(fd: libc::c_int) -> OwnedFd {
    // SAFETY: `fd` was just returned to us by the kernel and is owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}
