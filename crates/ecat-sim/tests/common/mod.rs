//! A minimal test MainDevice: one datagram per frame, built with `ecat_wire::FrameBuilder`,
//! on virtual time (each frame advances the clock by 10 µs).
#![allow(dead_code)]

pub mod coe;

use ecat_sim::Network;
use ecat_wire::datagram::DatagramRepr;
use ecat_wire::frame::{parse_ethernet, FrameBuilder};
use ecat_wire::register as reg;
use ecat_wire::Command;

pub const MAC: [u8; 6] = [0x10, 0x22, 0x33, 0x44, 0x55, 0x66];

/// What came back for one datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub data: Vec<u8>,
    pub wkc: u16,
    pub adp: u16,
    pub irq: u16,
}

pub struct Bus {
    pub net: Network,
    pub now: u64,
}

impl Bus {
    pub fn new(net: Network) -> Bus {
        Bus {
            net,
            now: 1_000_000,
        }
    }

    pub fn preset(name: &str) -> Bus {
        Bus::new(Network::preset(name).unwrap())
    }

    /// Send one datagram; panics if the frame is not returned.
    pub fn send(&mut self, repr: DatagramRepr, data: &[u8]) -> Reply {
        let mut buf = [0u8; 1514];
        let mut fb = FrameBuilder::new(&mut buf, MAC).unwrap();
        {
            let (_, mut d) = fb.push(repr).unwrap();
            d.data_mut()[..data.len()].copy_from_slice(data);
        }
        let n = fb.finish();
        self.now += 10_000;
        assert!(
            self.net.process_frame(&mut buf[..n], self.now),
            "frame dropped"
        );
        assert_eq!(
            buf[6],
            MAC[0] | 0x02,
            "returned frame has the locally administered bit"
        );
        let f = parse_ethernet(&buf[..n]).unwrap();
        let d = f.datagrams().next().unwrap().unwrap();
        Reply {
            data: d.data().to_vec(),
            wkc: d.wkc(),
            adp: d.adp(),
            irq: d.irq(),
        }
    }

    pub fn cmd(&mut self, cmd: Command, adp: u16, ado: u16, data: &[u8]) -> Reply {
        self.send(
            DatagramRepr::physical(cmd, 0x42, adp, ado, data.len() as u16),
            data,
        )
    }

    pub fn read(&mut self, cmd: Command, adp: u16, ado: u16, len: usize) -> Reply {
        self.cmd(cmd, adp, ado, &vec![0; len])
    }

    pub fn fprd(&mut self, station: u16, ado: u16, len: usize) -> Reply {
        self.read(Command::Fprd, station, ado, len)
    }

    pub fn fpwr(&mut self, station: u16, ado: u16, data: &[u8]) -> u16 {
        self.cmd(Command::Fpwr, station, ado, data).wkc
    }

    pub fn fprd16(&mut self, station: u16, ado: u16) -> u16 {
        let r = self.fprd(station, ado, 2);
        assert_eq!(r.wkc, 1, "FPRD 0x{ado:04X} of 0x{station:04X}");
        u16::from_le_bytes([r.data[0], r.data[1]])
    }

    /// Assign 0x1001, 0x1002, … by position, as SOEM does; returns the ESC count.
    pub fn assign_addresses(&mut self) -> u16 {
        let n = self.read(Command::Brd, 0, reg::TYPE, 2).wkc;
        for i in 0..n {
            let r = self.cmd(
                Command::Apwr,
                0u16.wrapping_sub(i),
                reg::STATION_ADDRESS,
                &(0x1001 + i).to_le_bytes(),
            );
            assert_eq!(r.wkc, 1);
        }
        n
    }

    /// Wait until the EEPROM interface is idle; returns the status word.
    pub fn eeprom_idle(&mut self, station: u16) -> u16 {
        // 10 ms of polls: real chips stay busy for most of a millisecond per command.
        for _ in 0..1000 {
            let s = self.fprd16(station, reg::EEPROM_CONTROL);
            if s & reg::eeprom::BUSY == 0 {
                return s;
            }
        }
        panic!("EEPROM stays busy");
    }

    /// Read `len` bytes of SII from word 0 like a master: wait idle, command, wait, read data.
    pub fn read_sii(&mut self, station: u16, len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut word = 0u32;
        while out.len() < len {
            let st = self.eeprom_idle(station);
            if st & reg::eeprom::ERR_MASK != 0 {
                self.fpwr(station, reg::EEPROM_CONTROL, &[0, 0]);
            }
            let mut cmd = [0u8; 6];
            cmd[..2].copy_from_slice(&reg::eeprom::CMD_READ.to_le_bytes());
            cmd[2..].copy_from_slice(&word.to_le_bytes());
            assert_eq!(self.fpwr(station, reg::EEPROM_CONTROL, &cmd), 1);
            let st = self.eeprom_idle(station);
            let chunk = if st & reg::eeprom::READ_8_BYTES != 0 {
                8
            } else {
                4
            };
            let r = self.fprd(station, reg::EEPROM_DATA, chunk);
            assert_eq!(r.wkc, 1);
            out.extend_from_slice(&r.data);
            word += chunk as u32 / 2;
        }
        out.truncate(len);
        out
    }

    pub fn al_request(&mut self, station: u16, value: u16) -> u16 {
        assert_eq!(self.fpwr(station, reg::AL_CONTROL, &value.to_le_bytes()), 1);
        self.fprd16(station, reg::AL_STATUS)
    }
}

/// An SM register block.
pub fn sm_bytes(start: u16, length: u16, control: u8, enable: bool) -> [u8; 8] {
    let mut b = [0u8; 8];
    reg::SmRepr {
        start,
        length,
        control,
        activate: enable as u8,
        ..Default::default()
    }
    .emit(&mut b)
    .unwrap();
    b
}

/// A byte-aligned, enabled FMMU register block (`kind` 1 = read/inputs, 2 = write/outputs).
pub fn fmmu_bytes(logical: u32, len: u16, phys: u16, kind: u8) -> [u8; 16] {
    let mut b = [0u8; 16];
    reg::FmmuRepr {
        logical_start: logical,
        length: len,
        logical_start_bit: 0,
        logical_stop_bit: 7,
        physical_start: phys,
        physical_start_bit: 0,
        kind,
        enable: 1,
    }
    .emit(&mut b)
    .unwrap();
    b
}

/// Size of the `io` preset's process image as [`Bus::configure_io`] lays it out: outputs
/// EL2008 (1) and EL4132 (4) at 0..5, inputs EL1018 (1) at 5 and EL3102 (6) at 6..12.
pub const IO_IMAGE: usize = 12;

impl Bus {
    /// Send one LRW at logical 0 with `data`.
    pub fn lrw(&mut self, data: &[u8]) -> Reply {
        self.send(
            DatagramRepr::logical(Command::Lrw, 0x80, 0, data.len() as u16),
            data,
        )
    }

    /// Request `state` from every SubDevice (BWR AL control); returns the OR of AL status.
    pub fn request_all(&mut self, state: u16) -> u16 {
        self.cmd(Command::Bwr, 0, reg::AL_CONTROL, &state.to_le_bytes());
        let r = self.read(Command::Brd, 0, reg::AL_STATUS, 2);
        u16::from_le_bytes([r.data[0], r.data[1]])
    }

    /// Addresses, mailboxes, process-data SMs and FMMUs of the `io` preset, as a MainDevice
    /// configures them (see [`IO_IMAGE`]); leaves everything in PREOP.
    pub fn configure_io(&mut self) {
        self.assign_addresses();
        let mut m = [0u8; 16];
        m[..8].copy_from_slice(&sm_bytes(0x1800, 246, 0x26, true));
        m[8..].copy_from_slice(&sm_bytes(0x18F6, 246, 0x22, true));
        assert_eq!(self.fpwr(0x1004, reg::SM0, &m), 1);
        m[..8].copy_from_slice(&sm_bytes(0x1000, 128, 0x26, true));
        m[8..].copy_from_slice(&sm_bytes(0x1080, 128, 0x22, true));
        assert_eq!(self.fpwr(0x1005, reg::SM0, &m), 1);
        assert_eq!(self.request_all(0x02), 0x02);
        let w = FmmuWrite;
        let r = FmmuRead;
        self.fpwr(0x1002, reg::SM0, &sm_bytes(0x0F00, 1, 0x44, true));
        self.fpwr(0x1002, reg::FMMU0, &fmmu_bytes(0, 1, 0x0F00, w));
        self.fpwr(0x1004, reg::sm(2), &sm_bytes(0x1000, 4, 0x24, true));
        self.fpwr(0x1004, reg::FMMU0, &fmmu_bytes(1, 4, 0x1000, w));
        self.fpwr(0x1003, reg::SM0, &sm_bytes(0x1000, 1, 0x00, true));
        self.fpwr(0x1003, reg::FMMU0, &fmmu_bytes(5, 1, 0x1000, r));
        self.fpwr(0x1005, reg::sm(3), &sm_bytes(0x1180, 6, 0x20, true));
        self.fpwr(0x1005, reg::FMMU0, &fmmu_bytes(6, 6, 0x1180, r));
    }
}

#[allow(non_upper_case_globals)]
const FmmuWrite: u8 = reg::FmmuRepr::WRITE;
#[allow(non_upper_case_globals)]
const FmmuRead: u8 = reg::FmmuRepr::READ;
