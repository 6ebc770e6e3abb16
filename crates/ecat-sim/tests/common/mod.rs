//! A minimal test MainDevice: one datagram per frame, built with `ecat_wire::FrameBuilder`,
//! on virtual time (each frame advances the clock by 10 µs).
#![allow(dead_code)]

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
        for _ in 0..100 {
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
