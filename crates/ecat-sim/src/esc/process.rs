//! One datagram passing one ESC in processing direction: addressing, the command's data
//! effect, the working counter and the IRQ field.
//!
//! Auto-increment commands act where ADP is 0 on arrival and increment ADP; broadcasts act
//! everywhere and increment ADP; configured-address commands match the station address, or the
//! alias when DL control 0x0103 bit 0 enables it, and leave ADP alone. Read-write commands
//! return the memory as it was and write the data as it arrived. WKC: +1 for a read, +2 for a
//! write (+1 for the write of LWR/APWR/FPWR/BWR and the write side of ARMW/FRMW), once per
//! ESC, only when a byte was really accessed. Undefined command codes pass untouched.

use super::Esc;
use ecat_wire::datagram::{Addressing, Datagram};
use ecat_wire::register as reg;
use ecat_wire::Command;

/// What one ESC did with one datagram (for tests and counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DatagramOutcome {
    /// This ESC was addressed (or took part, for broadcasts and logical commands).
    pub addressed: bool,
    /// Amount added to the working counter.
    pub wkc_added: u16,
}

/// Largest data field the 11-bit length can describe.
const MAX_LEN: usize = 0x07FF;

impl Esc {
    /// Process one datagram as it passes this ESC.
    pub fn process_datagram(&mut self, dg: &mut Datagram<&mut [u8]>) -> DatagramOutcome {
        let irq = self.irq();
        dg.set_irq(dg.irq() | irq);
        let Some(cmd) = dg.command() else {
            return DatagramOutcome::default();
        };
        let adp = dg.adp();
        let out = match cmd.addressing() {
            Addressing::None => DatagramOutcome::default(),
            Addressing::AutoIncrement => {
                dg.set_adp(adp.wrapping_add(1));
                self.physical(cmd, dg, adp == 0)
            }
            Addressing::Broadcast => {
                dg.set_adp(adp.wrapping_add(1));
                self.physical(cmd, dg, true)
            }
            Addressing::Configured => {
                let hit = adp == self.station_address()
                    || (self.mem[reg::DL_CONTROL_ALIAS as usize] & 1 != 0
                        && adp == self.station_alias());
                self.physical(cmd, dg, hit)
            }
            Addressing::Logical => self.logical(cmd, dg),
        };
        if out.wkc_added != 0 {
            dg.set_wkc(dg.wkc().wrapping_add(out.wkc_added));
        }
        out
    }

    /// Physical commands; `hit` says whether this ESC is the addressed one.
    fn physical(
        &mut self,
        cmd: Command,
        dg: &mut Datagram<&mut [u8]>,
        hit: bool,
    ) -> DatagramOutcome {
        use Command::*;
        let addr = dg.ado() as u32;
        let mut wkc = 0;
        match cmd {
            // Addressed one reads, all others write what arrived.
            Armw | Frmw => {
                if hit {
                    wkc += self.ecat_read(addr, dg.data_mut(), false) as u16;
                } else {
                    wkc += self.ecat_write(addr, dg.data()) as u16;
                }
                return DatagramOutcome {
                    addressed: true,
                    wkc_added: wkc,
                };
            }
            _ if !hit => return DatagramOutcome::default(),
            Aprd | Fprd => wkc += self.ecat_read(addr, dg.data_mut(), false) as u16,
            Brd => wkc += self.ecat_read(addr, dg.data_mut(), true) as u16,
            Apwr | Fpwr | Bwr => wkc += self.ecat_write(addr, dg.data()) as u16,
            Aprw | Fprw | Brw => {
                let mut buf = [0u8; MAX_LEN];
                let n = dg.data_len();
                buf[..n].copy_from_slice(dg.data());
                wkc += self.ecat_read(addr, dg.data_mut(), cmd == Brw) as u16;
                wkc += 2 * self.ecat_write(addr, &buf[..n]) as u16;
            }
            _ => {}
        }
        DatagramOutcome {
            addressed: true,
            wkc_added: wkc,
        }
    }
}
