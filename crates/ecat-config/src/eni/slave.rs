//! One ENI `Slave`: identity and addresses, process data (SyncManagers, PDOs, its place in
//! the process image), mailbox (with CoE init commands), init commands and DC settings.

use super::cmd::{parse_coe_cmd, parse_init_cmd, CoeInitCmd, InitCmd};
use super::xml::{child, child_text, children, parse_bool, text, Ctx};
use crate::error::Result;
use crate::esi::pdo::parse_pdo;
use crate::esi::{Pdo, PdoDir};
use roxmltree::Node;

/// Vendor, product, revision and serial number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Identity {
    /// Vendor id.
    pub vendor: u32,
    /// Product code.
    pub product: u32,
    /// Revision number.
    pub revision: u32,
    /// Serial number.
    pub serial: u32,
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "vendor 0x{:08x} product 0x{:08x} revision 0x{:08x} serial {}",
            self.vendor, self.product, self.revision, self.serial
        )
    }
}

/// Which identity fields must match the bus: `Check*` elements under `Info` if the file has
/// them, else the fields its init commands read from the SII to check (TwinCAT-style files),
/// else vendor and product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdentityChecks {
    /// Vendor id.
    pub vendor: bool,
    /// Product code.
    pub product: bool,
    /// Revision number.
    pub revision: bool,
    /// Serial number.
    pub serial: bool,
}

impl Default for IdentityChecks {
    /// Vendor and product, as the identity init commands of TwinCAT-style files check.
    fn default() -> Self {
        IdentityChecks {
            vendor: true,
            product: true,
            revision: false,
            serial: false,
        }
    }
}

/// A bit range in the output or input process image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitRange {
    /// First bit.
    pub bit_start: u32,
    /// Length in bits.
    pub bit_len: u32,
}

/// A SyncManager of a slave (`Sm0`..`Sm15`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EniSm {
    /// SyncManager number.
    pub index: u8,
    /// `MBoxOut`, `MBoxIn`, `Outputs` or `Inputs`.
    pub kind: String,
    /// Physical start address.
    pub start: u16,
    /// Control byte.
    pub control: u8,
    /// Enable.
    pub enable: bool,
    /// Sizes, if given.
    pub min_size: Option<u16>,
    /// Largest size.
    pub max_size: Option<u16>,
    /// Default size.
    pub default_size: Option<u16>,
    /// Watchdog enable, if given.
    pub watchdog: Option<bool>,
    /// PDOs assigned to it (`Pdo` children), in order.
    pub pdos: Vec<u16>,
}

/// The `ProcessData` of a slave.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessData {
    /// Outputs in the output image (`Send`).
    pub send: Option<BitRange>,
    /// Inputs in the input image (`Recv`).
    pub recv: Option<BitRange>,
    /// SyncManagers in order.
    pub sms: Vec<EniSm>,
    /// RxPDOs (outputs) described.
    pub rx_pdos: Vec<Pdo>,
    /// TxPDOs (inputs) described.
    pub tx_pdos: Vec<Pdo>,
}

impl ProcessData {
    /// The PDO with `index` (RxPDO or TxPDO).
    pub fn pdo(&self, index: u16) -> Option<&Pdo> {
        self.rx_pdos
            .iter()
            .chain(&self.tx_pdos)
            .find(|p| p.index == index)
    }
}

/// Start and length of a mailbox SyncManager.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MailboxArea {
    /// Physical start address.
    pub start: u16,
    /// Length in bytes.
    pub len: u16,
}

/// The `Mailbox` of a slave.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Mailbox {
    /// MainDevice → SubDevice (SM0).
    pub send: MailboxArea,
    /// SubDevice → MainDevice (SM1; `Recv` or `Receive`).
    pub recv: MailboxArea,
    /// Poll time (ms), if the master polls SM1.
    pub poll_time: Option<u32>,
    /// Bit in the mailbox-state area (logical), if mapped.
    pub status_bit_addr: Option<u32>,
    /// Bootstrap mailbox (send, recv).
    pub bootstrap: Option<(MailboxArea, MailboxArea)>,
    /// Protocols (`CoE`, `FoE`, `EoE`, ...).
    pub protocols: Vec<String>,
    /// CoE init commands in order.
    pub coe_init_cmds: Vec<CoeInitCmd>,
    /// CoE device profiles (`CoE/Profile/ChannelInfo`: profile number, e.g. 402, and its
    /// `AddInfo`), one per channel.
    pub coe_profiles: Vec<(u32, u32)>,
    /// Blocks kept as they are for later (`SoE`, `EoE`, ...): (element name, XML text).
    pub raw: Vec<(String, String)>,
}

/// DC settings of a slave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SlaveDc {
    /// Can be the reference clock.
    pub potential_reference_clock: bool,
    /// Is the reference clock.
    pub reference_clock: bool,
    /// SYNC0 cycle (ns).
    pub cycle_time0: Option<u32>,
    /// SYNC1 cycle (ns).
    pub cycle_time1: Option<u32>,
    /// Shift (ns).
    pub shift_time: Option<i64>,
}

/// The previous port in the topology (`PreviousPort`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreviousPort {
    /// Port letter (A..D).
    pub port: String,
    /// Physical address of the slave before.
    pub phys_addr: u16,
    /// `Selected` attribute.
    pub selected: bool,
}

/// One `Slave` of an ENI.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Slave {
    /// Name.
    pub name: String,
    /// Configured station address.
    pub phys_addr: u16,
    /// Auto-increment address (0, 0xFFFF, 0xFFFE, ...).
    pub auto_inc_addr: u16,
    /// Physics (`YY`, ...).
    pub physics: String,
    /// Identity.
    pub identity: Identity,
    /// Which identity fields to check.
    pub checks: IdentityChecks,
    /// Process data.
    pub process_data: ProcessData,
    /// Mailbox, if the slave has one.
    pub mailbox: Option<Mailbox>,
    /// EtherCAT init commands in order.
    pub init_cmds: Vec<InitCmd>,
    /// Previous port (topology).
    pub previous_ports: Vec<PreviousPort>,
    /// DC settings.
    pub dc: Option<SlaveDc>,
}

impl Slave {
    /// Its position on the bus from the auto-increment address (0, 0xFFFF → 1, ...).
    pub fn position(&self) -> u16 {
        0u16.wrapping_sub(self.auto_inc_addr)
    }

    /// The init commands that program DC registers (0x0900..0x09FF).
    pub fn dc_init_cmds(&self) -> impl Iterator<Item = &InitCmd> {
        self.init_cmds
            .iter()
            .filter(|c| (0x0900..0x0A00).contains(&c.ado))
    }

    /// CoE init commands, or none.
    pub fn coe_init_cmds(&self) -> &[CoeInitCmd] {
        self.mailbox
            .as_ref()
            .map(|m| m.coe_init_cmds.as_slice())
            .unwrap_or(&[])
    }
}

/// The identity fields the slave's init commands read from the SII to check them (EEPROM
/// read commands at 0x0502 for words 0x08 vendor, 0x0A product, 0x0C revision, 0x0E serial),
/// when it has any.
fn checks_from_init_cmds(cmds: &[InitCmd]) -> Option<IdentityChecks> {
    let words: Vec<u32> = cmds
        .iter()
        .filter(|c| c.ado == 0x0502 && c.data.len() >= 4 && c.data[1] & 0x01 == 0x01)
        .map(|c| u16::from_le_bytes([c.data[2], c.data[3]]) as u32)
        .collect();
    if words.is_empty() {
        return None;
    }
    Some(IdentityChecks {
        vendor: words.contains(&0x08),
        product: words.contains(&0x0A),
        revision: words.contains(&0x0C),
        serial: words.contains(&0x0E),
    })
}

fn num<T: TryFrom<i64>>(cx: &Ctx<'_, '_>, node: Node<'_, '_>, name: &str) -> Result<Option<T>> {
    match child(node, name) {
        None => Ok(None),
        Some(c) => {
            let v = cx.int(c)?;
            cx.fit::<T>(c, v).map(Some)
        }
    }
}

fn area(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<MailboxArea> {
    Ok(MailboxArea {
        start: num(cx, node, "Start")?.unwrap_or(0),
        len: num(cx, node, "Length")?.unwrap_or(0),
    })
}

fn bits(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<BitRange> {
    Ok(BitRange {
        bit_start: num(cx, node, "BitStart")?.unwrap_or(0),
        bit_len: num(cx, node, "BitLength")?.unwrap_or(0),
    })
}

/// Read a `Slave` element.
pub(crate) fn parse_slave(cx: &Ctx<'_, '_>, node: Node<'_, '_>) -> Result<Slave> {
    let info =
        child(node, "Info").ok_or_else(|| cx.invalid(node, "<Slave>: expected an <Info> child"))?;
    let mut checks = IdentityChecks::default();
    for (name, flag) in [
        ("CheckVendorId", &mut checks.vendor),
        ("CheckProductCode", &mut checks.product),
        ("CheckRevisionNo", &mut checks.revision),
        ("CheckSerialNo", &mut checks.serial),
    ] {
        if let Some(t) = child_text(info, name) {
            *flag = parse_bool(t);
        }
    }
    let mut s = Slave {
        name: child_text(info, "Name").unwrap_or("").to_string(),
        phys_addr: num(cx, info, "PhysAddr")?.unwrap_or(0),
        auto_inc_addr: num::<i64>(cx, info, "AutoIncAddr")?.unwrap_or(0) as u16,
        physics: child_text(info, "Physics").unwrap_or("").to_string(),
        identity: Identity {
            vendor: num::<i64>(cx, info, "VendorId")?.unwrap_or(0) as u32,
            product: num::<i64>(cx, info, "ProductCode")?.unwrap_or(0) as u32,
            revision: num::<i64>(cx, info, "RevisionNo")?.unwrap_or(0) as u32,
            serial: num::<i64>(cx, info, "SerialNo")?.unwrap_or(0) as u32,
        },
        checks,
        ..Default::default()
    };
    if let Some(pd) = child(node, "ProcessData") {
        let p = &mut s.process_data;
        p.send = child(pd, "Send").map(|n| bits(cx, n)).transpose()?;
        p.recv = child(pd, "Recv").map(|n| bits(cx, n)).transpose()?;
        for n in pd.children().filter(|c| c.is_element()) {
            let tag = n.tag_name().name();
            if let Some(i) = tag
                .strip_prefix("Sm")
                .and_then(|i| i.parse::<u8>().ok())
                .filter(|&i| i < 16)
            {
                let mut pdos = Vec::new();
                for c in children(n, "Pdo") {
                    let v = cx.int(c)?;
                    pdos.push(cx.fit::<u16>(c, v)?);
                }
                p.sms.push(EniSm {
                    index: i,
                    kind: child_text(n, "Type").unwrap_or("").to_string(),
                    start: num(cx, n, "StartAddress")?.unwrap_or(0),
                    control: num(cx, n, "ControlByte")?.unwrap_or(0),
                    enable: child_text(n, "Enable").is_some_and(parse_bool),
                    min_size: num(cx, n, "MinSize")?,
                    max_size: num(cx, n, "MaxSize")?,
                    default_size: num(cx, n, "DefaultSize")?,
                    watchdog: child_text(n, "Watchdog").map(parse_bool),
                    pdos,
                });
            }
        }
        for n in children(pd, "RxPdo") {
            p.rx_pdos.push(parse_pdo(cx, n, PdoDir::Rx)?);
        }
        for n in children(pd, "TxPdo") {
            p.tx_pdos.push(parse_pdo(cx, n, PdoDir::Tx)?);
        }
    }
    if let Some(mb) = child(node, "Mailbox") {
        let recv = child(mb, "Recv").or_else(|| child(mb, "Receive"));
        let mut m = Mailbox {
            send: child(mb, "Send")
                .map(|n| area(cx, n))
                .transpose()?
                .unwrap_or_default(),
            recv: recv.map(|n| area(cx, n)).transpose()?.unwrap_or_default(),
            poll_time: recv.map(|n| num(cx, n, "PollTime")).transpose()?.flatten(),
            status_bit_addr: recv
                .map(|n| num(cx, n, "StatusBitAddr"))
                .transpose()?
                .flatten(),
            protocols: children(mb, "Protocol")
                .map(|p| text(p).to_string())
                .collect(),
            ..Default::default()
        };
        if let Some(b) = child(mb, "BootStrap") {
            let send = child(b, "Send").map(|n| area(cx, n)).transpose()?;
            let recv = child(b, "Recv")
                .or_else(|| child(b, "Receive"))
                .map(|n| area(cx, n))
                .transpose()?;
            m.bootstrap = Some((send.unwrap_or_default(), recv.unwrap_or_default()));
        }
        if let Some(coe) = child(mb, "CoE") {
            if let Some(cmds) = child(coe, "InitCmds") {
                for c in children(cmds, "InitCmd") {
                    m.coe_init_cmds.push(parse_coe_cmd(cx, c)?);
                }
            }
            for p in child(coe, "Profile")
                .iter()
                .flat_map(|p| children(*p, "ChannelInfo"))
            {
                let no = num::<u32>(cx, p, "ProfileNo")?.unwrap_or(0);
                m.coe_profiles
                    .push((no, num::<u32>(cx, p, "AddInfo")?.unwrap_or(0)));
            }
        }
        for name in ["SoE", "EoE", "FoE", "AoE", "VoE"] {
            if let Some(n) = child(mb, name) {
                let raw = cx.doc.input_text()[n.range()].to_string();
                m.raw.push((name.to_string(), raw));
            }
        }
        s.mailbox = Some(m);
    }
    if let Some(cmds) = child(node, "InitCmds") {
        for c in children(cmds, "InitCmd") {
            s.init_cmds.push(parse_init_cmd(cx, c)?);
        }
    }
    if !info
        .children()
        .any(|c| c.tag_name().name().starts_with("Check"))
    {
        if let Some(c) = checks_from_init_cmds(&s.init_cmds) {
            s.checks = c;
        }
    }
    for n in children(node, "PreviousPort") {
        s.previous_ports.push(PreviousPort {
            port: child_text(n, "Port").unwrap_or("").to_string(),
            phys_addr: num(cx, n, "PhysAddr")?.unwrap_or(0),
            selected: n.attribute("Selected").is_some_and(parse_bool),
        });
    }
    if let Some(dc) = child(node, "DC") {
        s.dc = Some(SlaveDc {
            potential_reference_clock: child_text(dc, "PotentialReferenceClock")
                .is_some_and(parse_bool),
            reference_clock: child_text(dc, "ReferenceClock").is_some_and(parse_bool),
            cycle_time0: num(cx, dc, "CycleTime0")?,
            cycle_time1: num(cx, dc, "CycleTime1")?,
            shift_time: num(cx, dc, "ShiftTime")?,
        });
    }
    Ok(s)
}
