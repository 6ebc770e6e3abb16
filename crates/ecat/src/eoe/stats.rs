//! The EoE statistics file: how `ecat eoe` sees the counters of a running `ecat run --eoe`
//! (another process). The bridge thread rewrites it every second (written aside, then
//! renamed into place) and removes it when it stops.
//!
//! Path: `<temp dir>/ecat-eoe<master>.stats`. Text: a first line `pid <pid>`, then one line per
//! port: `name position tx_frames tx_bytes tx_errors rx_frames rx_bytes rx_errors rx_dropped
//! tx_rate rx_rate who…` (rates in bytes/s over the last second, `who` the rest of the line).

use super::hub::{EoeHub, EoeStats};
use crate::error::{Error, Result};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// Where the statistics of master `master` are.
pub fn path(master: u32) -> PathBuf {
    std::env::temp_dir().join(format!("ecat-eoe{master}.stats"))
}

/// One port's line of the statistics file.
#[derive(Debug, Clone, PartialEq)]
pub struct PortStats {
    /// Interface name.
    pub name: String,
    /// Ring position.
    pub position: usize,
    /// The SubDevice, as `SubDevice 2 (0x1003, name)`.
    pub who: String,
    /// Counters.
    pub stats: EoeStats,
    /// Bytes per second sent to the SubDevice over the last second.
    pub tx_rate: f64,
    /// Bytes per second received from it.
    pub rx_rate: f64,
}

/// Writes the statistics file (bridge thread).
#[derive(Debug)]
pub struct StatsFile {
    path: PathBuf,
    last: Option<(Instant, Vec<EoeStats>)>,
}

impl StatsFile {
    /// The file of master `master` (written at the first [`StatsFile::write`]).
    pub fn new(master: u32) -> StatsFile {
        StatsFile {
            path: path(master),
            last: None,
        }
    }

    /// Write the hub's counters now (errors are ignored: statistics are best effort).
    pub fn write(&mut self, hub: &EoeHub) {
        let now = Instant::now();
        let cur: Vec<EoeStats> = (0..hub.ports().len()).map(|i| hub.stats(i)).collect();
        let mut text = format!("pid {}\n", std::process::id());
        for (i, p) in hub.ports().iter().enumerate() {
            let s = cur[i];
            let (tx_rate, rx_rate) = match &self.last {
                Some((t, prev)) => {
                    let dt = now.duration_since(*t).as_secs_f64().max(1e-3);
                    (
                        (s.tx_bytes - prev[i].tx_bytes) as f64 / dt,
                        (s.rx_bytes - prev[i].rx_bytes) as f64 / dt,
                    )
                }
                None => (0.0, 0.0),
            };
            let _ = writeln!(
                text,
                "{} {} {} {} {} {} {} {} {} {:.0} {:.0} {}",
                p.name,
                p.position,
                s.tx_frames,
                s.tx_bytes,
                s.tx_errors,
                s.rx_frames,
                s.rx_bytes,
                s.rx_errors,
                s.rx_dropped,
                tx_rate,
                rx_rate,
                p.who
            );
        }
        self.last = Some((now, cur));
        let tmp = self.path.with_extension("stats.new");
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, &self.path);
        }
    }

    /// Remove the file (the bridge stopped).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Read the statistics of master `master`'s running `ecat run --eoe`.
pub fn read(master: u32) -> Result<Vec<PortStats>> {
    let p = path(master);
    let none = || {
        Error::NotFound(format!(
            "no `ecat run --eoe` of master {master} is running (no live statistics in {}); start one, e.g. `ecat run -i IFACE --eoe`",
            p.display()
        ))
    };
    let text = std::fs::read_to_string(&p).map_err(|_| none())?;
    let mut lines = text.lines();
    let pid = lines
        .next()
        .and_then(|l| l.strip_prefix("pid "))
        .and_then(|v| v.trim().parse::<u32>().ok())
        .ok_or_else(none)?;
    if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
        return Err(none());
    }
    Ok(lines.filter_map(parse_line).collect())
}

fn parse_line(l: &str) -> Option<PortStats> {
    let mut f = l.splitn(12, ' ');
    let name = f.next()?.to_string();
    let position = f.next()?.parse().ok()?;
    let mut n = || -> Option<u64> { f.next()?.parse().ok() };
    let stats = EoeStats {
        tx_frames: n()?,
        tx_bytes: n()?,
        tx_errors: n()?,
        rx_frames: n()?,
        rx_bytes: n()?,
        rx_errors: n()?,
        rx_dropped: n()?,
    };
    let (tx_rate, rx_rate) = (n()? as f64, n()? as f64);
    Some(PortStats {
        name,
        position,
        who: f.next().unwrap_or("").to_string(),
        stats,
        tx_rate,
        rx_rate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Who;

    #[test]
    fn written_statistics_read_back() {
        let master = 9_000 + std::process::id() % 1000;
        let who = Who {
            position: 2,
            station: 0x1003,
            name: "SoE drive".into(),
        };
        let hub = EoeHub::new([(who, "eoe9s2".to_string())]);
        hub.count_tx(0, 98, true);
        hub.count_tx(0, 98, false);
        let mut f = StatsFile::new(master);
        f.write(&hub);
        let got = read(master).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].name, "eoe9s2");
        assert_eq!(got[0].position, 2);
        assert_eq!(got[0].who, "SubDevice 2 (0x1003, SoE drive)");
        assert_eq!(got[0].stats.tx_frames, 1);
        assert_eq!(got[0].stats.tx_bytes, 98);
        assert_eq!(got[0].stats.tx_errors, 1);
        f.remove();
        let e = read(master).unwrap_err().to_string();
        assert!(e.contains("no `ecat run --eoe`"), "{e}");
    }
}
