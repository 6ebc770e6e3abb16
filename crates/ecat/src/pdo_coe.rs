//! PDO assignment and mapping over CoE (ETG.1000.6 / CiA 301 objects).
//!
//! - Reading ([`read_config`]): for each process data SyncManager n (SII type 3 or 4), the
//!   assignment object 0x1C10+n lists the PDOs (subindex 0 = count), and each PDO mapping
//!   object (0x16xx / 0x1Axx) lists its entries as `index << 16 | subindex << 8 | bits`.
//! - Writing ([`write_ops`]): the order a SubDevice expects in PREOP: assignment count to 0,
//!   each mapping (count 0, entries, count), the assignment entries, the assignment count.
//!   These are plain SDO downloads, so they can run blocking before activation or as startup
//!   SDOs that the supervisor replays whenever it reconfigures the SubDevice.

use crate::config::{Direction, EntryConfig, PdoConfig, SubDeviceConfig, SyncConfig};
use crate::error::{Error, Result};
use crate::mailbox::sdo::SdoOp;
use crate::maindevice::MainDevice;

/// The most entries a mapping object, or PDOs an assignment object, holds (subindex 0 counts
/// them in one byte); `write_ops` writes no more than these.
pub const MAX_SUBINDEX: usize = 255;

/// Assignment object of SyncManager `sm` (0x1C12 for SM2, 0x1C13 for SM3).
pub fn assignment_object(sm: u8) -> u16 {
    0x1C10 + sm as u16
}

fn u8_at(d: &[u8]) -> u8 {
    d.first().copied().unwrap_or(0)
}

fn u16_at(d: &[u8]) -> u16 {
    u16::from_le_bytes([u8_at(d), d.get(1).copied().unwrap_or(0)])
}

fn u32_at(d: &[u8]) -> u32 {
    let mut b = [0u8; 4];
    for (i, x) in d.iter().take(4).enumerate() {
        b[i] = *x;
    }
    u32::from_le_bytes(b)
}

/// Read the PDO assignment and mapping of the SubDevice at `position` over CoE, for every
/// process data SyncManager its SII lists (domain 0).
pub fn read_config(md: &mut MainDevice, position: usize) -> Result<SubDeviceConfig> {
    let sub = md.subdevice(position)?.clone();
    let mut sync = Vec::new();
    for (n, sm) in sub.sync_managers.iter().enumerate() {
        let direction = match sm.kind {
            3 => Direction::Output,
            4 => Direction::Input,
            _ => continue,
        };
        let obj = assignment_object(n as u8);
        let count = u8_at(&md.sdo_upload(position, obj, 0, false)?);
        let mut pdos = Vec::new();
        for i in 1..=count {
            let pdo = u16_at(&md.sdo_upload(position, obj, i, false)?);
            let m = u8_at(&md.sdo_upload(position, pdo, 0, false)?);
            let mut entries = Vec::new();
            for j in 1..=m {
                let e = u32_at(&md.sdo_upload(position, pdo, j, false)?);
                entries.push(EntryConfig {
                    index: (e >> 16) as u16,
                    subindex: (e >> 8) as u8,
                    bits: e as u8,
                });
            }
            pdos.push(PdoConfig {
                index: pdo,
                entries,
            });
        }
        sync.push(SyncConfig {
            index: n as u8,
            direction,
            pdos,
            domain: 0,
        });
    }
    Ok(SubDeviceConfig { sync })
}

/// The SDO downloads that write `config` into a SubDevice (in PREOP).
pub fn write_ops(config: &SubDeviceConfig) -> Vec<SdoOp> {
    let dl = |index: u16, subindex: u8, data: Vec<u8>| SdoOp::Download {
        index,
        subindex,
        complete_access: false,
        data,
    };
    let mut ops = Vec::new();
    for s in &config.sync {
        let obj = assignment_object(s.index);
        ops.push(dl(obj, 0, vec![0]));
        for p in &s.pdos {
            ops.push(dl(p.index, 0, vec![0]));
            for (j, e) in p.entries.iter().take(MAX_SUBINDEX).enumerate() {
                let v = (e.index as u32) << 16 | (e.subindex as u32) << 8 | e.bits as u32;
                ops.push(dl(p.index, j as u8 + 1, v.to_le_bytes().to_vec()));
            }
            ops.push(dl(
                p.index,
                0,
                vec![p.entries.len().min(MAX_SUBINDEX) as u8],
            ));
        }
        for (i, p) in s.pdos.iter().take(MAX_SUBINDEX).enumerate() {
            ops.push(dl(obj, i as u8 + 1, p.index.to_le_bytes().to_vec()));
        }
        ops.push(dl(obj, 0, vec![s.pdos.len().min(MAX_SUBINDEX) as u8]));
    }
    ops
}

/// Write `config` into the SubDevice at `position` now (blocking; brings it to PREOP).
pub fn write_config(md: &mut MainDevice, position: usize, config: &SubDeviceConfig) -> Result<()> {
    for op in write_ops(config) {
        md.sdo(position, op)?;
    }
    Ok(())
}

/// Where a discovered configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Read over CoE (the SubDevice's current assignment and mapping).
    Coe,
    /// From the SII (the SubDevice has no CoE).
    Sii,
    /// From the SII because reading it over CoE failed (the reason).
    SiiAfterCoeFailed(String),
}

/// The process data configuration to use for the SubDevice at `position` when the application
/// gave none: over CoE when it has CoE (the SubDevice's current assignment), else from its SII;
/// if the CoE read fails, from the SII too, saying why.
pub fn discover(md: &mut MainDevice, position: usize) -> Result<(SubDeviceConfig, Source)> {
    let sii = SubDeviceConfig::from_sii(md.subdevice(position)?);
    if md.coe_mailbox(position).is_err() {
        return Ok((sii, Source::Sii));
    }
    match read_config(md, position) {
        Ok(c) => Ok((c, Source::Coe)),
        Err(e @ (Error::SdoAbort { .. } | Error::Mailbox { .. })) => {
            Ok((sii, Source::SiiAfterCoeFailed(e.to_string())))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_order() {
        let c = SubDeviceConfig {
            sync: vec![SyncConfig {
                index: 2,
                direction: Direction::Output,
                pdos: vec![PdoConfig {
                    index: 0x1600,
                    entries: vec![
                        EntryConfig {
                            index: 0x6040,
                            subindex: 0,
                            bits: 16,
                        },
                        EntryConfig {
                            index: 0x60FF,
                            subindex: 0,
                            bits: 32,
                        },
                    ],
                }],
                domain: 0,
            }],
        };
        let ops = write_ops(&c);
        let short: Vec<(u16, u8, Vec<u8>)> = ops
            .iter()
            .map(|o| match o {
                SdoOp::Download {
                    index,
                    subindex,
                    data,
                    ..
                } => (*index, *subindex, data.clone()),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            short,
            vec![
                (0x1C12, 0, vec![0]),
                (0x1600, 0, vec![0]),
                (0x1600, 1, vec![0x10, 0x00, 0x40, 0x60]),
                (0x1600, 2, vec![0x20, 0x00, 0xFF, 0x60]),
                (0x1600, 0, vec![2]),
                (0x1C12, 1, vec![0x00, 0x16]),
                (0x1C12, 0, vec![1]),
            ]
        );
    }
}
