//! `ecat crc [reset]`: the ESC error counters of every SubDevice, per port (IgH: `ethercat
//! crc`), to locate a bad cable or connector.
//!
//! Per SubDevice one FPRD of 0x0300–0x0313 (all in one batch of frames): per port the invalid
//! frame counter (CRC errors of frames received there, 0x0300 + 2·port), the RX error counter
//! (PHY symbol errors, 0x0301 + 2·port), the forwarded RX error counter (frames an ESC before
//! already marked as bad, 0x0308 + port) and the lost-link counter (0x0310 + port); then the
//! processing unit (0x030C) and PDI (0x030D) error counters. Counters saturate at 255.
//!
//! Reading the table: a frame damaged on a cable is *detected* (invalid frame or RX error) by
//! the ESC port at the end of that cable and then *forwarded* as marked by every later port;
//! so the ports with their own (not forwarded) errors are the suspects, and the summary line
//! names them. `reset` writes every counter group (writing any value clears a group).

use super::{open_and_scan, CmdResult};
use crate::select::Select;
use crate::BusArgs;
use ecat::bus::Pdu;
use ecat::SubDevice;
use ecat_wire::Command;

/// First error counter register.
const BASE: u16 = 0x0300;
/// Bytes from 0x0300 to the end of the lost-link counters (0x0313).
const LEN: usize = 0x14;

/// Options of `ecat crc`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// `reset`: clear the counters instead of showing them
    #[arg(value_parser = ["reset"])]
    action: Option<String>,
}

/// One SubDevice's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Invalid frames (CRC errors) per port.
    pub invalid: [u8; 4],
    /// RX (PHY) errors per port.
    pub rx: [u8; 4],
    /// Forwarded RX errors per port.
    pub forwarded: [u8; 4],
    /// Processing unit errors.
    pub epu: u8,
    /// PDI errors.
    pub pdi: u8,
    /// Lost links per port.
    pub lost_link: [u8; 4],
}

impl Counters {
    /// Decode the 20 bytes from 0x0300.
    pub fn parse(b: &[u8]) -> Counters {
        let at = |i: usize| b.get(i).copied().unwrap_or(0);
        Counters {
            invalid: [0, 1, 2, 3].map(|p| at(2 * p)),
            rx: [0, 1, 2, 3].map(|p| at(2 * p + 1)),
            forwarded: [0, 1, 2, 3].map(|p| at(8 + p)),
            epu: at(0x0C),
            pdi: at(0x0D),
            lost_link: [0, 1, 2, 3].map(|p| at(0x10 + p)),
        }
    }
}

/// Run `ecat crc [reset]`.
pub fn run(a: Args) -> CmdResult {
    let mut md = open_and_scan(&a.bus)?;
    let subs = md.subdevices().to_vec();
    let which = a.select.resolve(&subs)?;
    if a.action.is_some() {
        let n = reset(&mut md, &subs, &which)?;
        println!("cleared the error counters of {n} SubDevice(s)");
        return Ok(());
    }
    let counters = read(&mut md, &subs, &which)?;
    print!("{}", table(&subs, &which, &counters));
    Ok(())
}

/// Read the counters of the SubDevices at `which` (positions), in one batch.
pub fn read(
    md: &mut ecat::MainDevice,
    subs: &[SubDevice],
    which: &[usize],
) -> Result<Vec<Option<Counters>>, Box<dyn std::error::Error>> {
    let mut batch: Vec<Pdu> = which
        .iter()
        .map(|&p| Pdu::physical(Command::Fprd, subs[p].station, BASE, vec![0; LEN]))
        .collect();
    md.bus().exchange(&mut batch)?;
    Ok(batch
        .iter()
        .map(|p| (p.wkc == 1).then(|| Counters::parse(&p.data)))
        .collect())
}

/// Clear the counters of the SubDevices at `which`; returns how many answered.
pub fn reset(
    md: &mut ecat::MainDevice,
    subs: &[SubDevice],
    which: &[usize],
) -> Result<usize, Box<dyn std::error::Error>> {
    let mut batch: Vec<Pdu> = which
        .iter()
        .map(|&p| Pdu::physical(Command::Fpwr, subs[p].station, BASE, vec![0; LEN]))
        .collect();
    md.bus().exchange(&mut batch)?;
    Ok(batch.iter().filter(|p| p.wkc == 1).count())
}

/// The table (IgH's layout: per port CRC/PHY/forwarded/lost link, then EPU and PDI) and the
/// suspects.
pub fn table(subs: &[SubDevice], which: &[usize], counters: &[Option<Counters>]) -> String {
    let mut out = String::from(
        "    |  Port 0          |  Port 1          |  Port 2          |  Port 3          |\n",
    );
    out += "  # | CRC PHY FWD LNK  | CRC PHY FWD LNK  | CRC PHY FWD LNK  | CRC PHY FWD LNK  | EPU PDI | Name\n";
    let mut suspects = Vec::new();
    for (&p, c) in which.iter().zip(counters) {
        let s = &subs[p];
        let name = if s.name.is_empty() { &s.order } else { &s.name };
        let Some(c) = c else {
            out += &format!("{p:>3} | (no answer){:>62}| {name}\n", "");
            continue;
        };
        out += &format!("{p:>3} |");
        for port in 0..4 {
            out += &format!(
                " {:>3} {:>3} {:>3} {:>3}  |",
                c.invalid[port], c.rx[port], c.forwarded[port], c.lost_link[port]
            );
            let own = c.invalid[port] as u32 + c.rx[port] as u32;
            if own > 0 {
                suspects.push(format!(
                    "SubDevice {p} port {port} ({own} error(s) seen first there: check the cable into it)"
                ));
            }
        }
        out += &format!(" {:>3} {:>3} | {name}\n", c.epu, c.pdi);
    }
    if suspects.is_empty() {
        out += "no CRC or PHY errors detected\n";
    } else {
        out += &format!("errors detected at: {}\n", suspects.join("; "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat::link::sim::SimLink;
    use ecat::MainDevice;
    use ecat_sim::{Faults, Network};

    #[test]
    fn counters_parse_per_port() {
        let mut b = [0u8; LEN];
        b[2] = 5; // invalid frames, port 1
        b[3] = 6; // RX errors, port 1
        b[8] = 7; // forwarded, port 0
        b[0x0C] = 1;
        b[0x0D] = 2;
        b[0x13] = 9; // lost link, port 3
        let c = Counters::parse(&b);
        assert_eq!(c.invalid, [0, 5, 0, 0]);
        assert_eq!(c.rx, [0, 6, 0, 0]);
        assert_eq!(c.forwarded, [7, 0, 0, 0]);
        assert_eq!((c.epu, c.pdi), (1, 2));
        assert_eq!(c.lost_link, [0, 0, 0, 9]);
    }

    #[test]
    fn a_bad_cable_on_the_simulated_line_is_located_and_reset_clears_it() {
        let mut md = MainDevice::with_link(Box::new(SimLink::with_network(
            Network::open("io").unwrap(),
            "sim:io".into(),
            "io".into(),
        )));
        md.scan().unwrap();
        let subs = md.subdevices().to_vec();
        let all: Vec<usize> = (0..subs.len()).collect();
        let clean = read(&mut md, &subs, &all).unwrap();
        assert!(clean.iter().all(|c| *c == Some(Counters::default())));
        assert!(table(&subs, &all, &clean).contains("no CRC or PHY errors"));
        // Now the cable into SubDevice 3 damages one frame in ten.
        md.bus()
            .link_mut()
            .sim_network()
            .unwrap()
            .set_faults(Faults {
                seed: 3,
                corrupt_rate: 0.1,
                bad_cable: Some(3),
                ..Default::default()
            });
        for _ in 0..100 {
            let _ = md.bus().read(Command::Brd, 0, 0x0130, 2);
        }
        md.bus()
            .link_mut()
            .sim_network()
            .unwrap()
            .set_faults(Faults::default());
        let c = read(&mut md, &subs, &all).unwrap();
        let c: Vec<Counters> = c.into_iter().map(|c| c.unwrap()).collect();
        assert!(c[3].invalid[0] > 0, "{:?}", c[3]);
        for (p, x) in c.iter().enumerate() {
            if p != 3 {
                assert_eq!(x.invalid, [0; 4], "SubDevice {p}");
            }
        }
        assert!(c[4].forwarded[0] > 0 && c[2].forwarded[1] > 0);
        let t = table(&subs, &all, &c.iter().map(|&x| Some(x)).collect::<Vec<_>>());
        assert!(t.contains("errors detected at: SubDevice 3 port 0"), "{t}");
        assert_eq!(reset(&mut md, &subs, &all).unwrap(), subs.len());
        let after = read(&mut md, &subs, &all).unwrap();
        assert!(after.iter().all(|c| *c == Some(Counters::default())));
    }
}
