//! Where a network comes from: the built-in presets, generated lines of N SubDevices
//! (`ioN`), TOML network files (`crate::netfile`) and the `sim:` specs that name them.
//!
//! Design: every source ends in the same place, a network file's text parsed by `netfile`
//! into nodes for `Network::from_nodes`, so a preset, a generated line and a file behave
//! alike; ring closure, cable events and faults from the file are checked and applied
//! here, after the wiring exists.

use crate::error::SimError;
use crate::netfile;
use crate::network::Network;
use std::path::Path;

const PRESETS: &[(&str, &str)] = &[
    (
        "io",
        "[[subdevice]]\nmodel = \"EK1100\"\n[[subdevice]]\nmodel = \"EL2008\"\n\
         [[subdevice]]\nmodel = \"EL1018\"\n[[subdevice]]\nmodel = \"EL4132\"\n\
         [[subdevice]]\nmodel = \"EL3102\"\n[[subdevice]]\nmodel = \"EL9011\"\n",
    ),
    ("servo", "[[subdevice]]\nmodel = \"ECAT-SERVO-402\"\n"),
    (
        "servo6",
        "[[subdevice]]\nmodel = \"ECAT-SERVO-402\"\n[[subdevice]]\nmodel = \"ECAT-SERVO-402\"\n\
         [[subdevice]]\nmodel = \"ECAT-SERVO-402\"\n[[subdevice]]\nmodel = \"ECAT-SERVO-402\"\n\
         [[subdevice]]\nmodel = \"ECAT-SERVO-402\"\n[[subdevice]]\nmodel = \"ECAT-SERVO-402\"\n",
    ),
    ("dc8", include_str!("presets/dc8.toml")),
    ("ring8", include_str!("presets/ring8.toml")),
    (
        "mbx",
        "[[subdevice]]\nmodel = \"ECAT-SERVO-402\"\n[[subdevice]]\nmodel = \"EL3102\"\n\
         [[subdevice]]\nmodel = \"ECAT-SOE-DRIVE\"\n",
    ),
];

/// Largest generated line (`ioN`): 16-bit station addresses start at 0x1000.
pub const MAX_GENERATED: usize = 4096;

/// N of a generated line name `ioN` (1..=[`MAX_GENERATED`]).
fn generated_line_len(name: &str) -> Option<usize> {
    let n: usize = name.strip_prefix("io")?.parse().ok()?;
    (1..=MAX_GENERATED).contains(&n).then_some(n)
}

/// The network file of a generated line of `n` SubDevices (see [`Network::preset`]).
pub fn generated_line(n: usize) -> String {
    const MODELS: [&str; 4] = ["EL2008", "EL1018", "EL4132", "EL3102"];
    let mut t = String::from("[[subdevice]]\nmodel = \"EK1100\"\n");
    for i in 1..n {
        t += &format!("[[subdevice]]\nmodel = \"{}\"\n", MODELS[(i - 1) % 4]);
    }
    t
}

impl Network {
    /// A built-in network by name (see [`Network::preset_names`]), or `ioN` (e.g. `io1000`):
    /// a generated line of N SubDevices for large-network tests, an EK1100 followed by
    /// EL2008, EL1018, EL4132 and EL3102 in turn.
    pub fn preset(name: &str) -> Result<Network, SimError> {
        if let Some(n) = generated_line_len(name) {
            return Self::from_toml_str(
                &generated_line(n),
                &format!("preset {name}"),
                Path::new("."),
            );
        }
        let Some((_, text)) = PRESETS.iter().find(|(n, _)| *n == name) else {
            return Err(SimError::UnknownPreset {
                name: name.to_string(),
                presets: Self::preset_names().join(", "),
            });
        };
        Self::from_toml_str(text, &format!("preset {name}"), Path::new("."))
    }

    /// Names of the built-in networks: `io` (seed 003's line-up: EK1100, EL2008, EL1018,
    /// EL4132, EL3102, EL9011), `servo` (one CiA 402 drive), `servo6` (six drives in a
    /// line with their default CSV mapping: 6 bytes out and 10 bytes in each, 96 in all) and
    /// `dc8` (the DC acceptance network: EK1100, EL3102, EL4132, EL3102, EL4132, EK1122 on the
    /// E-Bus, and two drives on an Ethernet branch from the EK1122's port 3; drifts within
    /// ±100 ppm; `src/presets/dc8.toml`). Clocks not given drift randomly (seeded) within
    /// ±100 ppm. `mbx`: the mailbox protocols network (ECAT-SERVO-402 with FoE, EL3102 with
    /// CoE and FoE, ECAT-SOE-DRIVE with CoE, FoE, SoE, EoE and VoE). `ring8`: eight
    /// SubDevices in a ring back to the backup port (`src/presets/ring8.toml`).
    pub fn preset_names() -> &'static [&'static str] {
        &["io", "servo", "servo6", "dc8", "mbx", "ring8"]
    }

    /// Read a TOML network file.
    pub fn from_file(path: &Path) -> Result<Network, SimError> {
        let text = std::fs::read_to_string(path).map_err(|source| SimError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::from_toml_str(&text, &path.display().to_string(), base)
    }

    /// Parse a TOML network description; `origin` names it in errors, `base_dir` resolves
    /// relative `sii` paths.
    pub fn from_toml_str(text: &str, origin: &str, base_dir: &Path) -> Result<Network, SimError> {
        let file = netfile::parse(text, origin, base_dir)?;
        let mut net = Network::from_nodes(file.nodes, file.dc_seed);
        if file.ring {
            net.set_ring(true).map_err(|e| match e {
                SimError::Invalid { message, .. } => SimError::Invalid {
                    location: format!("{origin}: ring"),
                    message,
                },
                e => e,
            })?;
        }
        for e in &file.events {
            if let crate::faults::EventAction::Break { with }
            | crate::faults::EventAction::Heal { with } = e.action
            {
                net.check_cable(e.position, with).map_err(|e| match e {
                    SimError::Invalid { location, message } => SimError::Invalid {
                        location: format!("{origin}: {location}"),
                        message,
                    },
                    e => e,
                })?;
            }
        }
        if let Some(f) = file.faults {
            net.set_faults(f);
        }
        for e in file.events {
            net.schedule(e);
        }
        Ok(net)
    }

    /// Open `sim:<preset>`, `sim:<path>` or `sim:eni:<ENI file>` (the `sim:` prefix is
    /// optional).
    pub fn open(spec: &str) -> Result<Network, SimError> {
        let what = spec.strip_prefix("sim:").unwrap_or(spec);
        if let Some(file) = what.strip_prefix("eni:") {
            return crate::eni::network_from_file(Path::new(file));
        }
        if Self::preset_names().contains(&what) || generated_line_len(what).is_some() {
            return Self::preset(what);
        }
        let path = Path::new(what);
        if path.exists() || what.contains('/') || what.ends_with(".toml") {
            return Self::from_file(path);
        }
        Self::preset(what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_build_and_list() {
        for p in Network::preset_names() {
            let n = Network::preset(p).unwrap();
            assert!(n.subdevice_count() > 0);
        }
        let io = Network::preset("io").unwrap();
        assert_eq!(io.subdevice_count(), 5);
        assert_eq!(Network::preset("dc8").unwrap().subdevice_count(), 8);
        let s = io.summary();
        assert_eq!(s.len(), 6);
        assert!(s[5].passive && s[5].bus_position.is_none());
        assert_eq!(s[4].order, "EL3102");
        let err = Network::preset("nope").unwrap_err().to_string();
        assert!(err.contains("io, servo"), "{err}");
    }
}
