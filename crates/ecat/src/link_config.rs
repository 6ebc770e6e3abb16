//! Which link master N uses, in IgH's spirit: the environment first (`ECAT_MASTER<N>`, then
//! `ECAT_INTERFACE` for any master), else `MASTER<N>_DEVICE=` in `/etc/ecat.conf` (the same
//! shell-style file as IgH's `ethercat.conf`; `ECAT_CONF` names another file). Any link name
//! ecat accepts works: `eth0`, `raw:eth0`, `mmap:eth0`, `xdp:eth0`, `sim:io`.
//! The backup device for cable redundancy (IgH's `MASTER<N>_BACKUP`) the same way:
//! `ECAT_MASTER<N>_BACKUP`, else `MASTER<N>_BACKUP=` in the file (`sim` for a simulated
//! ring's backup port).
//!
//! Shared by the C API (which link master N opens) and the `ethercat` command (which bus
//! `ethercat -m N` reaches when no application holds master N).

use std::path::Path;

/// Default configuration file.
pub const CONF: &str = "/etc/ecat.conf";

/// The link for master `index`, or the sentence telling the user how to configure one.
pub fn link_for(index: u32) -> Result<String, String> {
    let var = format!("ECAT_MASTER{index}");
    if let Some(v) = env_nonempty(&var) {
        return Ok(v);
    }
    if let Some(v) = env_nonempty("ECAT_INTERFACE") {
        return Ok(v);
    }
    let conf = env_nonempty("ECAT_CONF").unwrap_or_else(|| CONF.to_string());
    let key = format!("MASTER{index}_DEVICE");
    if let Some(v) = conf_value(Path::new(&conf), &key) {
        return Ok(v);
    }
    Err(format!(
        "master {index} has no link configured: set {var}=eth0 (or ECAT_INTERFACE, or {var}=sim:io for the simulated network) or write {key}=eth0 into {conf}"
    ))
}

/// The backup device of master `index` (cable redundancy), if one is configured.
pub fn backup_for(index: u32) -> Option<String> {
    if let Some(v) = env_nonempty(&format!("ECAT_MASTER{index}_BACKUP")) {
        return Some(v);
    }
    let conf = env_nonempty("ECAT_CONF").unwrap_or_else(|| CONF.to_string());
    conf_value(Path::new(&conf), &format!("MASTER{index}_BACKUP"))
}

fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// `KEY=value` from a shell-style file (comments, optional quotes); empty values count as
/// unset.
pub fn conf_value(path: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    parse_value(&text, key)
}

fn parse_value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
        .next_back()
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conf_file_values() {
        let t = "# comment\nMASTER0_DEVICE=\"eth1\"\nMASTER1_DEVICE=\nMASTER0_BACKUP=eth2 # x\n";
        assert_eq!(parse_value(t, "MASTER0_DEVICE").as_deref(), Some("eth1"));
        assert_eq!(parse_value(t, "MASTER1_DEVICE"), None);
        assert_eq!(parse_value(t, "MASTER0_BACKUP").as_deref(), Some("eth2"));
        assert_eq!(parse_value(t, "MASTER2_DEVICE"), None);
    }
}
