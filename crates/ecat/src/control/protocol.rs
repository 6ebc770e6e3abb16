//! The control socket's protocol: one JSON object per line each way, versioned.
//!
//! A request is `{"v":1,"req":{...}}`, the answer `{"v":1,"ok":{...}}` or
//! `{"v":1,"err":"one sentence"}`. The records here carry what the `ecat` tool prints, in a
//! shape of their own (so the core's types need no serde): a SubDevice travels as its ESC
//! registers and its SII image and is rebuilt on the other side by the same decoder the scan
//! uses ([`SubDevice::apply_sii`]); a domain as its layout, image and working counters.

use crate::config::{Direction, EntryConfig, PdoConfig, SubDeviceConfig, SyncConfig};
use crate::domain::{DatagramPlan, Domain, Region};
use crate::subdevice::{DcInfo, SubDevice};
use ecat_wire::al::{AlStatus, AlStatusCode};
use ecat_wire::register::{DlStatus, PortType};
use serde::{Deserialize, Serialize};

/// Protocol version; a peer speaking another one is refused with a sentence.
pub const VERSION: u32 = 1;

/// What a client asks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Request {
    /// Who holds the master: index, link, phase.
    Hello,
    /// The SubDevices with their current states.
    Slaves,
    /// An SDO transfer (upload, download, SDO Information) in the application's frames.
    Sdo {
        /// Ring position.
        position: usize,
        /// The operation.
        op: SdoWire,
    },
    /// Read ESC memory.
    RegRead {
        /// Ring position.
        position: usize,
        /// Register address.
        address: u16,
        /// Bytes.
        len: usize,
    },
    /// Write ESC memory.
    RegWrite {
        /// Ring position.
        position: usize,
        /// Register address.
        address: u16,
        /// Bytes to write.
        data: Vec<u8>,
    },
    /// Take SubDevices to a state (the supervisor keeps them there).
    States {
        /// Positions (all if empty).
        positions: Vec<usize>,
        /// AL state code (1 INIT, 2 PREOP, 3 BOOT, 4 SAFEOP, 8 OP).
        state: u8,
    },
    /// The domains with their images.
    Domains,
    /// The process data configuration of every SubDevice.
    Pdos,
    /// Master figures.
    Master,
    /// The application's slave configurations.
    Configs,
    /// EoE IP parameters of a SubDevice, through the application's mailbox: set them (`set`:
    /// the 58-byte body of the set-IP-parameter request, [`ecat_wire::eoe::IpParams`]) or,
    /// with `None`, read them (the get-IP-parameter request; answered with that body).
    EoeIp {
        /// Ring position.
        position: usize,
        /// The parameters to set, or `None` to read them.
        set: Option<Vec<u8>>,
    },
}

/// An SDO operation on the wire (mirrors [`crate::mailbox::sdo::SdoOp`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum SdoWire {
    /// Upload `index:subindex`.
    Upload(u16, u8, bool),
    /// Download `index:subindex` (complete access, data).
    Download(u16, u8, bool, Vec<u8>),
    /// SDO Information object list of this type.
    OdList(u16),
    /// SDO Information object description.
    ObjectDescription(u16),
    /// SDO Information entry description (index, subindex, value info).
    EntryDescription(u16, u8, u8),
}

impl From<&crate::mailbox::sdo::SdoOp> for SdoWire {
    fn from(op: &crate::mailbox::sdo::SdoOp) -> SdoWire {
        use crate::mailbox::sdo::SdoOp as O;
        match op {
            O::Upload {
                index,
                subindex,
                complete_access,
            } => SdoWire::Upload(*index, *subindex, *complete_access),
            O::Download {
                index,
                subindex,
                complete_access,
                data,
            } => SdoWire::Download(*index, *subindex, *complete_access, data.clone()),
            O::OdList { list_type } => SdoWire::OdList(list_type.0),
            O::ObjectDescription { index } => SdoWire::ObjectDescription(*index),
            O::EntryDescription {
                index,
                subindex,
                value_info,
            } => SdoWire::EntryDescription(*index, *subindex, *value_info),
        }
    }
}

impl From<SdoWire> for crate::mailbox::sdo::SdoOp {
    fn from(w: SdoWire) -> Self {
        use crate::mailbox::sdo::SdoOp as O;
        match w {
            SdoWire::Upload(index, subindex, complete_access) => O::Upload {
                index,
                subindex,
                complete_access,
            },
            SdoWire::Download(index, subindex, complete_access, data) => O::Download {
                index,
                subindex,
                complete_access,
                data,
            },
            SdoWire::OdList(t) => O::OdList {
                list_type: ecat_wire::coe::info::OdListType(t),
            },
            SdoWire::ObjectDescription(index) => O::ObjectDescription { index },
            SdoWire::EntryDescription(index, subindex, value_info) => O::EntryDescription {
                index,
                subindex,
                value_info,
            },
        }
    }
}

/// The answer to a request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Reply {
    /// To [`Request::Hello`].
    Hello(HelloRecord),
    /// To [`Request::Slaves`].
    Slaves(Vec<SubDeviceRecord>),
    /// Bytes (SDO upload, register read); empty for writes.
    Data(Vec<u8>),
    /// Done.
    Done,
    /// To [`Request::Domains`].
    Domains(Vec<DomainRecord>),
    /// To [`Request::Pdos`]: per position.
    Pdos(Vec<ConfigWire>),
    /// To [`Request::Master`].
    Master(MasterRecord),
    /// To [`Request::Configs`].
    Configs(Vec<ConfigRecord>),
}

/// A line from the client.
#[derive(Debug, Serialize, Deserialize)]
pub struct RequestLine {
    /// Protocol version.
    pub v: u32,
    /// The request.
    pub req: Request,
}

/// A line from the server.
#[derive(Debug, Serialize, Deserialize)]
pub struct ReplyLine {
    /// Protocol version.
    pub v: u32,
    /// The answer.
    #[serde(default)]
    pub ok: Option<Reply>,
    /// Or why not, in one sentence.
    #[serde(default)]
    pub err: Option<String>,
}

/// Who holds the master.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HelloRecord {
    /// Master index.
    pub master: u32,
    /// Link name (e.g. `eth0`, `sim:io`).
    pub link: String,
    /// Process id of the application.
    pub pid: u32,
    /// `Idle` (configuration phase) or `Operation` (cycling).
    pub phase: String,
}

/// A SubDevice as it travels: registers read at the scan, its SII image, its state now.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SubDeviceRecord {
    /// Position, station address, alias.
    pub address: (u16, u16, u16),
    /// ESC type, revision, build, FMMUs, SMs, RAM KiB, port descriptor, features.
    pub esc: (u8, u8, u16, u8, u8, u8, u8, u16),
    /// DL status at the scan.
    pub dl_status: u16,
    /// AL status and AL status code now.
    pub al: (u16, u16),
    /// Lost (not answering) now.
    pub lost: bool,
    /// SII image.
    pub sii: Vec<u8>,
    /// DC: reference, system time, parent, parent port, entry port, port times, delay, hop,
    /// offset.
    #[allow(clippy::type_complexity)]
    pub dc: Option<(bool, bool, Option<u16>, u8, u8, [u32; 4], u32, u32, u64)>,
}

fn port_descriptor(s: &SubDevice) -> u8 {
    s.ports.iter().enumerate().fold(0u8, |d, (i, p)| {
        let code = match p {
            None | Some(PortType::NotImplemented) => 0,
            Some(PortType::NotConfigured) => 1,
            Some(PortType::Ebus) => 2,
            Some(PortType::Mii) => 3,
        };
        d | code << (2 * i)
    })
}

impl From<&SubDevice> for SubDeviceRecord {
    fn from(s: &SubDevice) -> Self {
        SubDeviceRecord {
            address: (s.position, s.station, s.alias),
            esc: (
                s.esc_type,
                s.esc_revision,
                s.esc_build,
                s.fmmu_count,
                s.sm_count,
                s.ram_kib,
                port_descriptor(s),
                s.features,
            ),
            dl_status: s.dl_status.0,
            al: (s.al_status.0, s.al_status_code.0),
            lost: false,
            sii: s.sii.clone(),
            dc: s.dc.map(|d| {
                (
                    d.reference,
                    d.system_time,
                    d.parent,
                    d.parent_port,
                    d.entry_port,
                    d.port_times,
                    d.delay_ns,
                    d.hop_ns,
                    d.offset_ns,
                )
            }),
        }
    }
}

impl SubDeviceRecord {
    /// The SubDevice again, its SII decoded as the scan decodes it.
    pub fn to_subdevice(&self) -> SubDevice {
        let (position, station, alias) = self.address;
        let (t, rev, build, fmmus, sms, ram, ports, features) = self.esc;
        let mut s = SubDevice {
            position,
            station,
            alias,
            esc_type: t,
            esc_revision: rev,
            esc_build: build,
            fmmu_count: fmmus,
            sm_count: sms,
            ram_kib: ram,
            ports: core::array::from_fn(|i| match PortType::from_descriptor(ports, i) {
                PortType::NotImplemented => None,
                p => Some(p),
            }),
            features,
            dl_status: DlStatus(self.dl_status),
            al_status: AlStatus(self.al.0),
            al_status_code: AlStatusCode(self.al.1),
            ..Default::default()
        };
        // The application decoded this image at its scan; a failure leaves the fields empty.
        let _ = s.apply_sii(&self.sii);
        s.sii = self.sii.clone();
        s.dc = self.dc.map(|d| DcInfo {
            reference: d.0,
            system_time: d.1,
            parent: d.2,
            parent_port: d.3,
            entry_port: d.4,
            port_times: d.5,
            delay_ns: d.6,
            hop_ns: d.7,
            offset_ns: d.8,
        });
        s
    }
}

/// A process data configuration: per SM (index, output?, domain, PDOs (index, entries
/// (index, subindex, bits))).
pub type ConfigWire = Vec<(u8, bool, usize, Vec<(u16, Vec<(u16, u8, u8)>)>)>;

/// The wire form of a configuration.
pub fn config_to_wire(c: &SubDeviceConfig) -> ConfigWire {
    c.sync
        .iter()
        .map(|s| {
            (
                s.index,
                s.direction == Direction::Output,
                s.domain,
                s.pdos
                    .iter()
                    .map(|p| {
                        (
                            p.index,
                            p.entries
                                .iter()
                                .map(|e| (e.index, e.subindex, e.bits))
                                .collect(),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

/// The configuration from its wire form.
pub fn config_from_wire(w: &ConfigWire) -> SubDeviceConfig {
    SubDeviceConfig {
        sync: w
            .iter()
            .map(|(index, out, domain, pdos)| SyncConfig {
                index: *index,
                direction: if *out {
                    Direction::Output
                } else {
                    Direction::Input
                },
                domain: *domain,
                pdos: pdos
                    .iter()
                    .map(|(index, entries)| PdoConfig {
                        index: *index,
                        entries: entries
                            .iter()
                            .map(|&(index, subindex, bits)| EntryConfig {
                                index,
                                subindex,
                                bits,
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// A domain: layout, image, working counter, state. What `ecat domains` and `ecat data`
/// print, whether the domain is local or an application's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DomainRecord {
    /// Domain number.
    pub index: usize,
    /// Logical base address.
    pub logical_base: u32,
    /// Regions: position, SM, output?, offset, length.
    pub regions: Vec<(u16, u8, bool, usize, usize)>,
    /// Datagrams: command code, logical address, image offset, length, expected WKC.
    pub plans: Vec<(u8, u32, usize, usize, u16)>,
    /// The image as of the last cycle.
    pub image: Vec<u8>,
    /// Working counter of the last cycle and the expected one.
    pub wkc: (u32, u32),
    /// `zero`, `incomplete` or `complete`.
    pub state: String,
}

impl From<&Domain> for DomainRecord {
    fn from(d: &Domain) -> Self {
        DomainRecord {
            index: d.index,
            logical_base: d.logical_base,
            regions: d
                .regions
                .iter()
                .map(|r| {
                    (
                        r.position,
                        r.sm,
                        r.direction == Direction::Output,
                        r.offset,
                        r.len,
                    )
                })
                .collect(),
            plans: d
                .plans
                .iter()
                .map(|p| (p.command as u8, p.logical, p.offset, p.len, p.expected_wkc))
                .collect(),
            image: d.image().to_vec(),
            wkc: (d.wkc(), d.expected_wkc()),
            state: d.state().name().to_string(),
        }
    }
}

impl DomainRecord {
    /// The regions as the core describes them.
    pub fn regions(&self) -> Vec<Region> {
        self.regions
            .iter()
            .map(|&(position, sm, out, offset, len)| Region {
                position,
                sm,
                direction: if out {
                    Direction::Output
                } else {
                    Direction::Input
                },
                offset,
                len,
            })
            .collect()
    }

    /// The datagram plans as the core describes them (unknown command codes are left out).
    pub fn plans(&self) -> Vec<DatagramPlan> {
        self.plans
            .iter()
            .filter_map(|&(c, logical, offset, len, expected_wkc)| {
                Some(DatagramPlan {
                    command: ecat_wire::Command::from_u8(c)?,
                    logical,
                    offset,
                    len,
                    expected_wkc,
                })
            })
            .collect()
    }
}

/// The master's figures (IgH's `ethercat master`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MasterRecord {
    /// Master index.
    pub index: u32,
    /// `Idle` or `Operation`.
    pub phase: String,
    /// Link name.
    pub link: String,
    /// Link MAC address.
    pub mac: [u8; 6],
    /// Link up.
    pub link_up: bool,
    /// SubDevices on the bus.
    pub slaves: usize,
    /// Cycles sent.
    pub cycles: u64,
    /// Frames sent and received (cyclic + acyclic), cyclic frames lost, cyclic frames that
    /// came back after their cycle.
    pub frames: (u64, u64, u64, u64),
    /// Bytes sent per cycle by the cyclic frames and frames per cycle.
    pub cyclic_layout: (usize, usize),
    /// Acyclic datagrams timed out.
    pub timeouts: u64,
    /// Rates over the last 1, 10 and 60 s: (window s, sent/s, received/s, lost/s).
    #[serde(default)]
    pub rates: Vec<(u32, f64, f64, f64)>,
    /// Seconds since the application's master started (for rates).
    pub uptime_s: f64,
    /// DC reference clock position, if DC runs.
    pub dc_reference: Option<u16>,
    /// The reference clock's time at the last cycle (ns since 2000).
    pub dc_time_ns: Option<u64>,
    /// Application time last given (ns since 2000; 0 = never).
    pub app_time_ns: u64,
    /// Sync monitor of the last cycle (ns).
    pub sync_monitor_ns: Option<u32>,
}

/// One slave configuration of the application (IgH's `ethercat config`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ConfigRecord {
    /// Alias and position as the application addressed it.
    pub alias: u16,
    /// Position.
    pub position: u16,
    /// Expected vendor ID.
    pub vendor_id: u32,
    /// Expected product code.
    pub product_code: u32,
    /// Ring position of the SubDevice it is attached to.
    pub attached: Option<usize>,
    /// PDO configuration.
    pub pdos: ConfigWire,
    /// Startup SDOs: index, subindex, complete access, data.
    pub sdos: Vec<(u16, u8, bool, Vec<u8>)>,
    /// DC AssignActivate, SYNC0 cycle and shift (ns).
    pub dc: Option<(u16, u32, i32)>,
}
