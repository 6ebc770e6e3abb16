//! `ecat ip` (IgH: `ethercat ip`): set a SubDevice's EoE IP parameters with the
//! set-IP-parameter request, and `ecat eoe` (IgH: `ethercat eoe`): the EoE statistics of a
//! running `ecat run --eoe`.
//!
//! `ecat ip` takes options (`--ip 10.0.0.2/24 --mac .. --gateway .. --dns .. --name ..`) or
//! IgH's keyword arguments (`addr 10.0.0.2/24 link 02:00:00:00:00:01 default 10.0.0.1 dns
//! 10.0.0.1 name drive1`); without any it reads them (the get-IP-parameter request). It goes
//! through a running application's master with `-m N` (its control socket; the request rides
//! in that application's frames), else on its own link (scan, then the request over the
//! mailbox in whatever state the SubDevice is in). `ecat eoe` reads the statistics file a
//! run's EoE bridge writes.

use super::{CmdResult, Target};
use crate::select::Select;
use crate::BusArgs;
use ecat::mailbox::eoe::EoeOp;
use ecat_wire::eoe::{DnsName, IpParams};
use std::net::Ipv4Addr;

/// Options of `ecat ip`.
#[derive(clap::Args, Debug)]
pub struct IpArgs {
    #[command(flatten)]
    bus: BusArgs,
    #[command(flatten)]
    select: Select,
    /// MAC address of the SubDevice's EoE interface (aa:bb:cc:dd:ee:ff)
    #[arg(long, value_parser = parse_mac)]
    mac: Option<[u8; 6]>,
    /// IP address with prefix length (A.B.C.D/len; without /len only the address)
    #[arg(long)]
    ip: Option<String>,
    /// Default gateway
    #[arg(long)]
    gateway: Option<Ipv4Addr>,
    /// DNS server
    #[arg(long)]
    dns: Option<Ipv4Addr>,
    /// Host name (at most 32 bytes)
    #[arg(long)]
    name: Option<String>,
    /// IgH's form: `addr A.B.C.D/len`, `link MAC`, `default GW`, `dns DNS`, `name HOST`
    #[arg(value_name = "KEYWORD VALUE")]
    words: Vec<String>,
}

/// Options of `ecat eoe`.
#[derive(clap::Args, Debug)]
pub struct EoeArgs {
    /// Master index of the `ecat run --eoe` to show (its interfaces are eoe<MASTER>s<POS>)
    #[arg(short = 'm', long, default_value = "0")]
    master: u32,
}

fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let bad = || format!("'{s}' is not a MAC address; write it like 02:00:00:00:00:01");
    let v: Vec<u8> = s
        .split([':', '-'])
        .map(|p| u8::from_str_radix(p, 16).map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    v.try_into().map_err(|_| bad())
}

fn parse_addr(s: &str, what: &str) -> Result<Ipv4Addr, String> {
    s.parse().map_err(|_| {
        format!("'{s}' is not an IPv4 address for the {what}; write it like 192.168.0.1")
    })
}

/// `A.B.C.D[/len]` → address and subnet mask.
fn parse_ip(s: &str) -> Result<(Ipv4Addr, Option<Ipv4Addr>), String> {
    let (a, len) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l)),
        None => (s, None),
    };
    let addr = parse_addr(a, "IP address")?;
    let mask = match len {
        None => None,
        Some(l) => {
            let n: u32 = l
                .parse()
                .ok()
                .filter(|&n| n <= 32)
                .ok_or_else(|| format!("the prefix length in '{s}' must be 0..32"))?;
            Some(Ipv4Addr::from(u32::MAX.checked_shl(32 - n).unwrap_or(0)))
        }
    };
    Ok((addr, mask))
}

impl IpArgs {
    /// The parameters asked for, from the options and IgH's keyword arguments (`None`: none
    /// given, read them).
    fn params(&self) -> Result<Option<IpParams>, String> {
        let mut p = IpParams {
            mac: self.mac,
            gateway: self.gateway,
            dns: self.dns,
            ..Default::default()
        };
        let mut ip = self.ip.clone();
        let mut name = self.name.clone();
        let mut w = self.words.iter();
        while let Some(k) = w.next() {
            let v = w.next().ok_or_else(|| {
                format!("the keyword '{k}' needs a value, e.g. `addr 192.168.0.2/24`")
            })?;
            match k.as_str() {
                "addr" => ip = Some(v.clone()),
                "link" => p.mac = Some(parse_mac(v)?),
                "default" => p.gateway = Some(parse_addr(v, "default gateway")?),
                "dns" => p.dns = Some(parse_addr(v, "DNS server")?),
                "name" => name = Some(v.clone()),
                _ => {
                    return Err(format!(
                        "unknown keyword '{k}'; use addr, link, default, dns or name"
                    ))
                }
            }
        }
        if let Some(ip) = ip {
            let (a, mask) = parse_ip(&ip)?;
            p.ip = Some(a);
            p.subnet = mask;
        }
        if let Some(n) = name {
            p.dns_name = Some(DnsName::new(&n).map_err(|_| {
                format!("the host name '{n}' is longer than 32 bytes; give a shorter one")
            })?);
        }
        Ok((p.flags() != 0).then_some(p))
    }
}

/// Run `ecat ip`: set the parameters given, or show the SubDevice's when none are.
pub fn ip(a: IpArgs) -> CmdResult {
    let params = a.params()?;
    let mut t = Target::open(&a.bus)?;
    let pos = a.select.resolve_one(t.subdevices())?;
    let who = t.subdevices()[pos].who();
    match params {
        Some(params) => {
            let what = EoeOp::SetIp { port: 0, params }.describe();
            t.eoe_ip(pos, Some(params))?;
            println!("{who}: {what} done");
        }
        None => {
            let p = t.eoe_ip(pos, None)?.unwrap_or_default();
            println!("{who}: EoE IP parameters");
            print!("{}", show(&p));
        }
    }
    Ok(())
}

/// The parameters one per line (IgH's keywords), `-` for those the SubDevice did not give.
fn show(p: &IpParams) -> String {
    let opt = |a: Option<Ipv4Addr>| a.map_or("-".to_string(), |a| a.to_string());
    let mac = p.mac.map_or("-".to_string(), |m| {
        m.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    });
    let name = p.dns_name.as_ref().and_then(|n| n.as_str()).unwrap_or("-");
    format!(
        "  link     {mac}\n  addr     {}\n  subnet   {}\n  default  {}\n  dns      {}\n  name     {name}\n",
        opt(p.ip),
        opt(p.subnet),
        opt(p.gateway),
        opt(p.dns)
    )
}

fn rate(bytes_per_s: f64) -> String {
    if bytes_per_s >= 1e6 {
        format!("{:.2}MB/s", bytes_per_s / 1e6)
    } else {
        format!("{:.1}kB/s", bytes_per_s / 1e3)
    }
}

/// Run `ecat eoe`.
pub fn eoe(a: EoeArgs) -> CmdResult {
    let ports = ecat::eoe::stats::read(a.master)?;
    println!(
        "{:<10} {:>4} {:>10} {:>12} {:>10} {:>10} {:>12} {:>10} {:>7} {:>7}  SubDevice",
        "interface",
        "pos",
        "tx frames",
        "tx bytes",
        "tx rate",
        "rx frames",
        "rx bytes",
        "rx rate",
        "errors",
        "dropped"
    );
    for p in ports {
        let s = p.stats;
        println!(
            "{:<10} {:>4} {:>10} {:>12} {:>10} {:>10} {:>12} {:>10} {:>7} {:>7}  {}",
            p.name,
            p.position,
            s.tx_frames,
            s.tx_bytes,
            rate(p.tx_rate),
            s.rx_frames,
            s.rx_bytes,
            rate(p.rx_rate),
            s.tx_errors + s.rx_errors,
            s.rx_dropped,
            p.who
        );
    }
    Ok(())
}

/// `--eoe-ip POS=A.B.C.D/LEN`.
pub fn parse_pos_ip(s: &str) -> Result<(usize, IpParams), String> {
    let (pos, ip) = s.split_once('=').ok_or_else(|| {
        format!("'{s}' is not POSITION=ADDRESS/LEN; write it like 2=192.168.9.3/24")
    })?;
    let pos = pos
        .trim()
        .parse()
        .map_err(|_| format!("'{pos}' in '{s}' is not a SubDevice position"))?;
    let (ip, subnet) = parse_ip(ip.trim())?;
    Ok((
        pos,
        IpParams {
            ip: Some(ip),
            subnet,
            ..Default::default()
        },
    ))
}

/// `ecat run --eoe`: start the bridge and say in one line what was created, or why not
/// (the run goes on without EoE).
pub fn start_bridge(rt: &mut ecat::runtime::Runtime, master: u32) -> Option<ecat::eoe::EoeBridge> {
    match ecat::eoe::EoeBridge::start(rt, master) {
        Ok(b) => {
            println!("{}", b.describe());
            Some(b)
        }
        Err(e) => {
            println!("EoE: not bridged: {e}; the run goes on without EoE");
            None
        }
    }
}

/// `ecat run --eoe-ip`: send the set-IP requests through the runtime's mailbox client (in OP);
/// a helper thread waits for each and prints its outcome.
pub fn set_ips(rt: &ecat::runtime::Runtime, ips: &[(usize, IpParams)]) {
    let client = rt.mailbox_client();
    for &(pos, params) in ips {
        let op = EoeOp::SetIp { port: 0, params };
        let what = op.describe();
        let pending = client.submit(pos, op);
        std::thread::spawn(move || {
            let r = pending.and_then(|p| {
                p.wait(std::time::Duration::from_secs(10))
                    .unwrap_or_else(|| {
                        Err(ecat::error::Error::Invalid(format!(
                            "SubDevice {pos}: no answer to the {what} within 10 s"
                        )))
                    })
            });
            match r {
                Ok(_) => println!("EoE: SubDevice {pos}: {what} done"),
                Err(e) => println!("EoE: {e}"),
            }
        });
    }
}

/// The EoE totals at the end of `ecat run --eoe`, one line per interface.
pub fn print_totals(b: &ecat::eoe::EoeBridge) {
    let hub = b.hub();
    for (i, p) in hub.ports().iter().enumerate() {
        let s = hub.stats(i);
        println!(
            "EoE {}: tx {} frames {} bytes, rx {} frames {} bytes, errors tx {} rx {}, dropped {}",
            p.name,
            s.tx_frames,
            s.tx_bytes,
            s.rx_frames,
            s.rx_bytes,
            s.tx_errors,
            s.rx_errors,
            s.rx_dropped
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct T {
        #[command(flatten)]
        a: IpArgs,
    }

    fn params(args: &[&str]) -> Result<IpParams, String> {
        let mut v = vec!["ip"];
        v.extend_from_slice(args);
        T::try_parse_from(v)
            .map_err(|e| e.to_string())?
            .a
            .params()?
            .ok_or_else(|| "none given".to_string())
    }

    #[test]
    fn options_and_igh_keywords_give_the_same_request() {
        let a = params(&[
            "--ip",
            "10.1.2.3/24",
            "--mac",
            "02:00:00:00:00:01",
            "--gateway",
            "10.1.2.1",
            "--dns",
            "10.1.2.9",
            "--name",
            "drive1",
        ])
        .unwrap();
        let b = params(&[
            "addr",
            "10.1.2.3/24",
            "link",
            "02:00:00:00:00:01",
            "default",
            "10.1.2.1",
            "dns",
            "10.1.2.9",
            "name",
            "drive1",
        ])
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.subnet, Some(Ipv4Addr::new(255, 255, 255, 0)));
        assert_eq!(a.flags(), 0x3F);
        assert_eq!(params(&["--ip", "10.0.0.1"]).unwrap().subnet, None);
        assert_eq!(
            params(&["--ip", "10.0.0.1/0"]).unwrap().subnet,
            Some(Ipv4Addr::UNSPECIFIED)
        );
    }

    #[test]
    fn bad_input_is_one_sentence() {
        assert!(params(&[]).unwrap_err().contains("none given"), "a read");
        assert!(params(&["--ip", "10.0.0/24"])
            .unwrap_err()
            .contains("not an IPv4 address"));
        assert!(params(&["--ip", "10.0.0.1/33"])
            .unwrap_err()
            .contains("0..32"));
        assert!(params(&["addr"]).unwrap_err().contains("needs a value"));
        assert!(params(&["via", "x"])
            .unwrap_err()
            .contains("unknown keyword"));
        assert!(params(&["--mac", "02:00"]).unwrap_err().contains("MAC"));
    }

    #[test]
    fn shown_parameters_use_igh_keywords() {
        let p = params(&["addr", "10.1.2.3/24", "name", "drive1"]).unwrap();
        let s = show(&p);
        assert!(s.contains("addr     10.1.2.3\n"), "{s}");
        assert!(s.contains("subnet   255.255.255.0\n"), "{s}");
        assert!(s.contains("default  -\n"), "{s}");
        assert!(s.contains("name     drive1\n"), "{s}");
    }
}
