//! `ecat graph`: the bus topology as Graphviz DOT (IgH: `ethercat graph`), with the measured
//! DC propagation delay of each hop on the edges (`ecat graph | dot -Tsvg > bus.svg`).

use super::{open_and_scan, CmdResult};
use crate::BusArgs;
use ecat::dc::setup::DcOptions;
use ecat::SubDevice;
use std::fmt::Write;

/// Options of `ecat graph`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bus: BusArgs,
}

/// Run `ecat graph`.
pub fn run(a: Args) -> CmdResult {
    let mut md = open_and_scan(&a.bus)?;
    md.configure_dc(DcOptions {
        static_datagrams: 0,
        per_frame: 1,
        ..Default::default()
    })?;
    print!("{}", dot(md.subdevices()));
    Ok(())
}

/// The DOT text. Parents come from the DC measurement where available, else the ring order.
pub fn dot(subs: &[SubDevice]) -> String {
    let mut o =
        String::from("digraph bus {\n    rankdir=LR;\n    node [shape=box, fontname=\"sans\"];\n");
    let _ = writeln!(o, "    master [label=\"MainDevice\", shape=ellipse];");
    for s in subs {
        let _ = writeln!(
            o,
            "    sd{} [label=\"{}\\n{}\\n0x{:04x}{}\"];",
            s.position,
            s.position,
            s.order.replace('"', "'"),
            s.station,
            if s.dc.is_some_and(|d| d.reference) {
                "\\nreference clock"
            } else {
                ""
            }
        );
    }
    for s in subs {
        let (from, label) = match (s.position, s.dc) {
            (0, _) => ("master".to_string(), String::new()),
            (_, Some(d)) => match d.parent {
                Some(p) => (
                    format!("sd{p}"),
                    format!("port {}: {} ns", d.parent_port, d.hop_ns),
                ),
                None => ("master".to_string(), String::new()),
            },
            (p, None) => (format!("sd{}", p - 1), String::new()),
        };
        let _ = writeln!(o, "    {from} -> sd{} [label=\"{label}\"];", s.position);
    }
    o.push_str("}\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use ecat::subdevice::DcInfo;

    #[test]
    fn edges_follow_dc_parents() {
        let subs: Vec<SubDevice> = (0..3)
            .map(|p| SubDevice {
                position: p,
                station: 0x1001 + p,
                order: format!("T{p}"),
                dc: Some(DcInfo {
                    reference: p == 0,
                    parent: if p == 0 { None } else { Some(0) },
                    parent_port: if p == 1 { 1 } else { 3 },
                    hop_ns: 100 * p as u32,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect();
        let d = dot(&subs);
        assert!(d.contains("master -> sd0"), "{d}");
        assert!(d.contains("sd0 -> sd2 [label=\"port 3: 200 ns\"]"), "{d}");
        assert!(d.contains("reference clock"), "{d}");
    }
}
