//! Process data configuration of a SubDevice, in IgH's shape: sync managers → PDOs → entries.
//!
//! A configuration comes from the application (e.g. a PDO configuration file) or from the
//! SubDevice's SII ([`SubDeviceConfig::from_sii`]: every PDO the SII assigns to a process data
//! SyncManager). From it follow the SyncManager register values (start and control from the
//! SII, length from the mapping) that the MainDevice writes before SAFEOP, and the sizes that
//! the domain layout needs. Each SyncManager's data is byte-aligned, as IgH does it.

use crate::subdevice::SubDevice;
use ecat_wire::register::{sm_control, SmRepr};

/// Which way the data of a SyncManager flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// MainDevice → SubDevice (RxPDOs, written by LWR/LRW).
    Output,
    /// SubDevice → MainDevice (TxPDOs, read by LRD/LRW).
    Input,
}

/// One mapped object in a PDO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryConfig {
    /// Object index (0 = gap).
    pub index: u16,
    /// Subindex.
    pub subindex: u8,
    /// Length in bits.
    pub bits: u8,
}

/// A PDO and its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdoConfig {
    /// PDO index (0x16xx outputs, 0x1Axx inputs).
    pub index: u16,
    /// Entries in order.
    pub entries: Vec<EntryConfig>,
}

impl PdoConfig {
    /// Bits of all entries.
    pub fn bits(&self) -> u32 {
        self.entries.iter().map(|e| e.bits as u32).sum()
    }
}

/// A process data SyncManager: its PDOs and the domain its data goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncConfig {
    /// SyncManager index (2 for outputs and 3 for inputs on mailbox devices).
    pub index: u8,
    /// Direction.
    pub direction: Direction,
    /// PDOs assigned, in order.
    pub pdos: Vec<PdoConfig>,
    /// Domain that maps this SyncManager's data.
    pub domain: usize,
}

impl SyncConfig {
    /// Bits mapped by this SyncManager.
    pub fn bits(&self) -> u32 {
        self.pdos.iter().map(PdoConfig::bits).sum()
    }

    /// Bytes of the SyncManager buffer (bits rounded up).
    pub fn bytes(&self) -> u16 {
        self.bits().div_ceil(8) as u16
    }
}

/// The process data configuration of one SubDevice.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubDeviceConfig {
    /// Process data SyncManagers.
    pub sync: Vec<SyncConfig>,
}

impl SubDeviceConfig {
    /// The configuration the SII describes: every PDO assigned to a process data
    /// SyncManager (SII SM type 3 outputs / 4 inputs), all in domain 0.
    pub fn from_sii(sub: &SubDevice) -> SubDeviceConfig {
        let mut sync = Vec::new();
        for (n, sm) in sub.sync_managers.iter().enumerate() {
            let (direction, pdos) = match sm.kind {
                3 => (Direction::Output, &sub.rx_pdos),
                4 => (Direction::Input, &sub.tx_pdos),
                _ => continue,
            };
            let pdos: Vec<PdoConfig> = pdos
                .iter()
                .filter(|p| p.sync_manager as usize == n)
                .map(|p| PdoConfig {
                    index: p.index,
                    entries: p
                        .entries
                        .iter()
                        .map(|e| EntryConfig {
                            index: e.index,
                            subindex: e.subindex,
                            bits: e.bits,
                        })
                        .collect(),
                })
                .collect();
            sync.push(SyncConfig {
                index: n as u8,
                direction,
                pdos,
                domain: 0,
            });
        }
        SubDeviceConfig { sync }
    }

    /// Total output bytes.
    pub fn output_bytes(&self) -> u32 {
        self.bytes_of(Direction::Output)
    }

    /// Total input bytes.
    pub fn input_bytes(&self) -> u32 {
        self.bytes_of(Direction::Input)
    }

    fn bytes_of(&self, d: Direction) -> u32 {
        self.sync
            .iter()
            .filter(|s| s.direction == d)
            .map(|s| s.bytes() as u32)
            .sum()
    }

    /// Where entry `index:subindex` sits: (SyncManager, bit offset in that SM's data, bits).
    pub fn entry_bit_offset(&self, index: u16, subindex: u8) -> Option<(u8, u32, u8)> {
        for sync in &self.sync {
            let mut bit = 0u32;
            for pdo in &sync.pdos {
                for e in &pdo.entries {
                    if e.index == index && e.subindex == subindex && index != 0 {
                        return Some((sync.index, bit, e.bits));
                    }
                    bit += e.bits as u32;
                }
            }
        }
        None
    }

    /// The SyncManager register block for `sync` on `sub`: start and control from the SII
    /// (with the usual defaults when the SII has no entry), length from the mapping, enabled
    /// when there is data.
    pub fn sm_register(sub: &SubDevice, sync: &SyncConfig) -> SmRepr {
        let sii = sub.sync_managers.get(sync.index as usize);
        let default_control = match sync.direction {
            Direction::Output => {
                sm_control::DIR_WRITE | sm_control::PDI_EVENT | sm_control::WATCHDOG
            }
            Direction::Input => sm_control::DIR_READ | sm_control::PDI_EVENT,
        };
        let length = sync.bytes();
        SmRepr {
            start: sii.map(|s| s.start).unwrap_or(0),
            length,
            control: sii
                .map(|s| s.control)
                .filter(|&c| c != 0)
                .unwrap_or(default_control),
            status: 0,
            activate: u8::from(length > 0),
            pdi_control: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subdevice::{Pdo, PdoEntry, SiiSyncManager};

    fn el_like() -> SubDevice {
        SubDevice {
            sync_managers: vec![
                SiiSyncManager {
                    start: 0x1000,
                    length: 128,
                    control: 0x26,
                    enable: 1,
                    kind: 1,
                },
                SiiSyncManager {
                    start: 0x1080,
                    length: 128,
                    control: 0x22,
                    enable: 1,
                    kind: 2,
                },
                SiiSyncManager {
                    start: 0x1100,
                    length: 0,
                    control: 0x64,
                    enable: 1,
                    kind: 3,
                },
                SiiSyncManager {
                    start: 0x1180,
                    length: 0,
                    control: 0x20,
                    enable: 1,
                    kind: 4,
                },
            ],
            rx_pdos: vec![Pdo {
                index: 0x1600,
                sync_manager: 2,
                name: "out".into(),
                entries: vec![
                    PdoEntry {
                        index: 0x7000,
                        subindex: 1,
                        bits: 16,
                        ..Default::default()
                    },
                    PdoEntry {
                        index: 0x7010,
                        subindex: 1,
                        bits: 16,
                        ..Default::default()
                    },
                ],
            }],
            tx_pdos: vec![
                Pdo {
                    index: 0x1A00,
                    sync_manager: 3,
                    name: "in".into(),
                    entries: vec![PdoEntry {
                        index: 0x6000,
                        subindex: 1,
                        bits: 1,
                        ..Default::default()
                    }],
                },
                Pdo {
                    index: 0x1A01,
                    sync_manager: 0xFF,
                    name: "alternative".into(),
                    entries: vec![PdoEntry {
                        index: 0x6010,
                        subindex: 1,
                        bits: 32,
                        ..Default::default()
                    }],
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn from_sii_uses_assigned_pdos_only() {
        let s = el_like();
        let c = SubDeviceConfig::from_sii(&s);
        assert_eq!(c.sync.len(), 2);
        assert_eq!(c.sync[0].index, 2);
        assert_eq!(c.sync[0].direction, Direction::Output);
        assert_eq!(c.output_bytes(), 4);
        assert_eq!(c.sync[1].bits(), 1);
        assert_eq!(c.input_bytes(), 1, "1 bit rounds up to a byte");
        let sm2 = SubDeviceConfig::sm_register(&s, &c.sync[0]);
        assert_eq!(
            (sm2.start, sm2.length, sm2.control, sm2.activate),
            (0x1100, 4, 0x64, 1)
        );
    }

    #[test]
    fn empty_sync_is_disabled() {
        let s = el_like();
        let sc = SyncConfig {
            index: 2,
            direction: Direction::Output,
            pdos: vec![],
            domain: 0,
        };
        let r = SubDeviceConfig::sm_register(&s, &sc);
        assert_eq!((r.length, r.activate), (0, 0));
    }
}
