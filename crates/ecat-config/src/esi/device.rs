//! One `Device` element: identity, names, ESC resources (SyncManagers, FMMUs, ports),
//! process data, mailbox, DC operating modes, EEPROM contents and dictionary.
//!
//! The types here are plain data with no tie to the simulator or the master: the simulator
//! builds a SubDevice from them, the master names PDOs and objects with them, and
//! [`crate::build_sii`] lays them out as an SII image.

use super::dictionary::{parse_dictionary, Dictionary};
use super::lenient;
use super::pdo::{parse_pdos, Pdo, PdoDir};
use super::xml::{child, child_text, children, text, Ctx};
use crate::error::Result;
use roxmltree::Node;

/// A text in one language (`LcId` 1033 English, 1031 German, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalText {
    /// Windows language id, 0 when the element had none.
    pub lcid: u32,
    /// The text.
    pub text: String,
}

/// Pick the text for `lcid`, else English (1033), else the first one.
pub fn pick_text(texts: &[LocalText], lcid: u32) -> Option<&str> {
    texts
        .iter()
        .find(|t| t.lcid == lcid)
        .or_else(|| texts.iter().find(|t| t.lcid == 1033))
        .or_else(|| texts.first())
        .map(|t| t.text.as_str())
}

/// A device group (`Groups/Group`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Group {
    /// Group type, referenced by devices' `GroupType`.
    pub type_name: String,
    /// Names per language.
    pub names: Vec<LocalText>,
}

/// Use of a SyncManager (the text of `Sm`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SmKind {
    /// Mailbox MainDevice → SubDevice.
    MBoxOut,
    /// Mailbox SubDevice → MainDevice.
    MBoxIn,
    /// Process data outputs.
    Outputs,
    /// Process data inputs.
    Inputs,
    /// Anything else, as written (often empty for an unused SM).
    Other(String),
}

/// One SyncManager (`Sm`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sm {
    /// Use.
    pub kind: SmKind,
    /// Physical start address.
    pub start: u16,
    /// Control register value (0x0804 + 8·n).
    pub control: u8,
    /// `DefaultSize` in bytes.
    pub default_size: Option<u16>,
    /// `MinSize`.
    pub min_size: Option<u16>,
    /// `MaxSize`.
    pub max_size: Option<u16>,
    /// Enabled by default (`Enable`).
    pub enable: bool,
    /// Enabled only in OP (`OpOnly`).
    pub op_only: bool,
    /// Virtual SyncManager (`Virtual`).
    pub virtual_sm: bool,
    /// Fixed content (`Fixed`).
    pub fixed: bool,
    /// Triggers the process-data watchdog (`Watchdog`).
    pub watchdog: bool,
}

impl Sm {
    /// The SII SYNCM enable byte: bit 0 enable, bit 1 fixed, bit 2 virtual, bit 3 OP only.
    pub fn sii_enable(&self) -> u8 {
        (self.enable as u8)
            | ((self.fixed as u8) << 1)
            | ((self.virtual_sm as u8) << 2)
            | ((self.op_only as u8) << 3)
    }
}

/// Use of an FMMU (the text of `Fmmu`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FmmuKind {
    /// Maps outputs.
    Outputs,
    /// Maps inputs.
    Inputs,
    /// Maps the mailbox state (SM1 status).
    MBoxState,
    /// Anything else, as written (e.g. empty = unused).
    Other(String),
}

/// One FMMU (`Fmmu`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fmmu {
    /// Use.
    pub kind: FmmuKind,
    /// SyncManager it serves (`Sm` attribute), when given.
    pub sm: Option<u8>,
    /// Used in OP only (`OpOnly`).
    pub op_only: bool,
}

/// CoE capabilities (`Mailbox/CoE` attributes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CoeInfo {
    /// SDO information service.
    pub sdo_info: bool,
    /// PDO assignment (0x1C1x) writable.
    pub pdo_assign: bool,
    /// PDO mapping (0x16xx/0x1Axx) writable.
    pub pdo_config: bool,
    /// Upload the PDO configuration at startup.
    pub pdo_upload: bool,
    /// SDO complete access.
    pub complete_access: bool,
}

/// Mailbox protocols (`Mailbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mailbox {
    /// Mailbox data-link layer (`DataLinkLayer`).
    pub data_link_layer: bool,
    /// AoE.
    pub aoe: bool,
    /// EoE.
    pub eoe: bool,
    /// CoE and its details.
    pub coe: Option<CoeInfo>,
    /// FoE.
    pub foe: bool,
    /// SoE.
    pub soe: bool,
    /// VoE.
    pub voe: bool,
}

impl Mailbox {
    /// The SII mailbox protocol word (0x01 AoE, 0x02 EoE, 0x04 CoE, 0x08 FoE, 0x10 SoE,
    /// 0x20 VoE).
    pub fn protocol_word(&self) -> u16 {
        (self.aoe as u16)
            | ((self.eoe as u16) << 1)
            | ((self.coe.is_some() as u16) << 2)
            | ((self.foe as u16) << 3)
            | ((self.soe as u16) << 4)
            | ((self.voe as u16) << 5)
    }
}

/// One DC operating mode (`Dc/OpMode`). Times in ns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DcOpMode {
    /// Name (e.g. "DC").
    pub name: String,
    /// Description.
    pub desc: String,
    /// Value for 0x0980/0x0981 as one word (0x0300 = SYNC0 on).
    pub assign_activate: u16,
    /// `CycleTimeSync0` value (0 = use the bus cycle).
    pub sync0_cycle: u32,
    /// `CycleTimeSync0@Factor`.
    pub sync0_factor: i32,
    /// `ShiftTimeSync0`.
    pub sync0_shift: i32,
    /// `CycleTimeSync1` value.
    pub sync1_cycle: u32,
    /// `CycleTimeSync1@Factor`.
    pub sync1_factor: i32,
    /// `ShiftTimeSync1`.
    pub sync1_shift: i32,
}

/// EEPROM description (`Eeprom`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EepromInfo {
    /// `ByteSize`.
    pub byte_size: Option<u32>,
    /// `ConfigData`: SII words 0.. (0–6 used; word 7 is the CRC).
    pub config_data: Vec<u8>,
    /// `BootStrap`: bootstrap mailbox receive offset/size, send offset/size (4 LE words).
    pub bootstrap: Option<Vec<u8>>,
    /// Hand the EEPROM to the PDI (`AssignToPdi`).
    pub assign_to_pdi: bool,
}

/// Kind of a physical port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortKind {
    /// Not used.
    Unused,
    /// MII / 100BASE-TX (`Y`).
    Mii,
    /// E-Bus / LVDS (`K`).
    Ebus,
    /// Something else (kept as the SII nibble).
    Other(u8),
}

impl PortKind {
    /// The SII GENERAL port nibble (0 unused, 1 MII, 3 EBUS).
    pub fn sii_nibble(self) -> u8 {
        match self {
            PortKind::Unused => 0,
            PortKind::Mii => 1,
            PortKind::Ebus => 3,
            PortKind::Other(n) => n & 0x0F,
        }
    }
}

/// ESC-level information.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EscInfo {
    /// `Device@Physics` as written, one letter per port (`Y` MII, `K` E-Bus, ` ` none).
    pub physics: String,
    /// Ports: from `Info/Port` when given, else from `Physics`.
    pub ports: Vec<PortKind>,
    /// ESC type (`Info/EscType`), where the file names one.
    pub esc_type: Option<String>,
    /// `ESC/Reg0108` (initial value of ESC register 0x0108), when given.
    pub reg0108: Option<u16>,
    /// `ESC/Reg0400`: watchdog divider (register 0x0400), when given.
    pub watchdog_divider: Option<u16>,
    /// `ESC/Reg0410`: PDI watchdog time (register 0x0410), when given.
    pub pdi_watchdog: Option<u16>,
    /// `ESC/Reg0420`: process-data (SyncManager) watchdog time (register 0x0420), when
    /// given. Which SyncManagers trigger it is [`Sm::watchdog`].
    pub sm_watchdog: Option<u16>,
}

/// One sync unit (`Su`): a group of process data a MainDevice may send in its own frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyncUnit {
    /// The unit's process data may be sent again in a repeated frame
    /// (`Su@FrameRepeatSupport`).
    pub frame_repeat_support: bool,
}

/// One device description (one `Device` element: one type at one revision).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Type name, the text of `Type` (order number, e.g. "EL2004").
    pub type_name: String,
    /// Product code, `None` for passive terminals that have none.
    pub product_code: Option<u32>,
    /// Revision number (0 when absent).
    pub revision: u32,
    /// The device cannot take LRW; use LRD and LWR (`Type@UseLrdLwr`).
    pub use_lrd_lwr: bool,
    /// Vendor id of the file.
    pub vendor_id: u32,
    /// Names per language.
    pub names: Vec<LocalText>,
    /// `GroupType`.
    pub group_type: String,
    /// The group, resolved from the file's `Groups`.
    pub group: Option<Group>,
    /// Profile numbers (`Profile/ProfileNo` and `Profile/ChannelInfo/ProfileNo`).
    pub profiles: Vec<u32>,
    /// Current drawn from the E-bus in mA (negative: fed into it).
    pub ebus_current_ma: Option<i32>,
    /// Register holding the device's identification value (`Info/IdentificationAdo`, e.g.
    /// an ID switch), if any.
    pub ident_ado: Option<u16>,
    /// The identification value is mirrored in the AL status code (0x0134) on request
    /// (`Info/IdentificationReg134`).
    pub ident_reg134: bool,
    /// ESC information.
    pub esc: EscInfo,
    /// FMMUs in order.
    pub fmmus: Vec<Fmmu>,
    /// SyncManagers in order (position = SM number).
    pub sms: Vec<Sm>,
    /// Sync units (`Su`), in order.
    pub sync_units: Vec<SyncUnit>,
    /// RxPDOs then TxPDOs, in file order within each.
    pub pdos: Vec<Pdo>,
    /// Mailbox protocols, when the device has a mailbox.
    pub mailbox: Option<Mailbox>,
    /// DC operating modes.
    pub dc: Vec<DcOpMode>,
    /// EEPROM description.
    pub eeprom: Option<EepromInfo>,
    /// The CoE object dictionary, when the file gives one.
    pub dictionary: Option<Dictionary>,
    /// `line:column` of the `Device` element in its file.
    pub position: (u32, u32),
}

impl Device {
    /// The name in language `lcid` (else English, else the first, else the type name).
    pub fn name(&self, lcid: u32) -> &str {
        pick_text(&self.names, lcid).unwrap_or(&self.type_name)
    }

    /// "EL2004 rev 0x00120000".
    pub fn label(&self) -> String {
        format!("{} rev 0x{:08x}", self.type_name, self.revision)
    }

    /// RxPDOs (outputs).
    pub fn rx_pdos(&self) -> impl Iterator<Item = &Pdo> {
        self.pdos.iter().filter(|p| p.dir == PdoDir::Rx)
    }

    /// TxPDOs (inputs).
    pub fn tx_pdos(&self) -> impl Iterator<Item = &Pdo> {
        self.pdos.iter().filter(|p| p.dir == PdoDir::Tx)
    }

    /// The first SyncManager of `kind` and its number.
    pub fn sm_of(&self, kind: &SmKind) -> Option<(usize, &Sm)> {
        self.sms.iter().enumerate().find(|(_, s)| &s.kind == kind)
    }

    /// Standard mailbox (receive offset, receive size, send offset, send size) from the
    /// `MBoxOut`/`MBoxIn` SyncManagers' start and `DefaultSize`; `None` without a mailbox.
    pub fn mailbox_layout(&self) -> Option<(u16, u16, u16, u16)> {
        let (_, out) = self.sm_of(&SmKind::MBoxOut)?;
        let (_, inp) = self.sm_of(&SmKind::MBoxIn)?;
        Some((
            out.start,
            out.default_size.unwrap_or(0),
            inp.start,
            inp.default_size.unwrap_or(0),
        ))
    }
}

fn local_texts(node: Node<'_, '_>, name: &str) -> Vec<LocalText> {
    children(node, name)
        .map(|n| LocalText {
            lcid: n
                .attribute("LcId")
                .and_then(super::xml::parse_int)
                .unwrap_or(0) as u32,
            text: text(n).to_string(),
        })
        .collect()
}

/// Read `Groups/Group`.
pub(crate) fn parse_group(node: Node<'_, '_>) -> Group {
    Group {
        type_name: child_text(node, "Type").unwrap_or("").to_string(),
        names: local_texts(node, "Name"),
    }
}

/// Read one `Device` element.
pub(crate) fn parse_device(
    cx: &Ctx<'_, '_>,
    node: Node<'_, '_>,
    vendor_id: u32,
    groups: &[Group],
) -> Result<Device> {
    let ty =
        child(node, "Type").ok_or_else(|| cx.invalid(node, "<Device>: expected a <Type> child"))?;
    let product_code = cx.int_attr(ty, "ProductCode")?.map(|v| v as u32);
    let revision = cx.int_attr(ty, "RevisionNo")?.unwrap_or(0) as u32;
    let group_type = child_text(node, "GroupType").unwrap_or("").to_string();
    let info = child(node, "Info");

    let mut profiles = Vec::new();
    let mut dictionary = None;
    for p in children(node, "Profile") {
        if let Some(v) = cx.child_int(p, "ProfileNo")? {
            profiles.push(v as u32);
        }
        for ci in children(p, "ChannelInfo") {
            if let Some(v) = cx.child_int(ci, "ProfileNo")? {
                profiles.push(v as u32);
            }
        }
        if let Some(d) = child(p, "Dictionary") {
            dictionary = Some(parse_dictionary(cx, d)?);
        }
    }

    let physics = node.attribute("Physics").unwrap_or("").to_string();
    let mut ports: Vec<PortKind> = Vec::new();
    if let Some(info) = info {
        for p in children(info, "Port") {
            let ty = child(p, "Type").map(|t| use_text(cx, t, &["MII", "EBUS"]));
            ports.push(match ty.as_deref().unwrap_or("") {
                "MII" => PortKind::Mii,
                "EBUS" => PortKind::Ebus,
                _ => PortKind::Other(0),
            });
        }
    }
    if ports.is_empty() {
        ports = physics
            .chars()
            .map(|c| match c {
                'Y' | 'y' => PortKind::Mii,
                'K' | 'k' => PortKind::Ebus,
                _ => PortKind::Unused,
            })
            .collect();
    }
    let esc_type = info
        .and_then(|i| child_text(i, "EscType"))
        .map(str::to_string);
    let esc_reg = |name: &str| -> Result<Option<u16>> {
        match child(node, "ESC") {
            Some(e) => cx.child_fit::<u16>(e, name),
            None => Ok(None),
        }
    };

    let ebus_current_ma = match info.and_then(|i| child(i, "Electrical")) {
        Some(e) => cx.child_int(e, "EBusCurrent")?.map(|v| v as i32),
        None => None,
    };
    let ident_ado = match info {
        Some(i) => cx.child_fit::<u16>(i, "IdentificationAdo")?,
        None => None,
    };
    let ident_reg134 = info
        .and_then(|i| child(i, "IdentificationReg134"))
        .is_some_and(|n| crate::esi::xml::parse_bool(text(n)));

    let mut fmmus = Vec::new();
    for f in children(node, "Fmmu") {
        let sm = cx.attr_fit::<u8>(f, "Sm")?;
        fmmus.push(Fmmu {
            kind: match use_text(cx, f, &["Outputs", "Inputs", "MBoxState"]).as_str() {
                "Outputs" => FmmuKind::Outputs,
                "Inputs" => FmmuKind::Inputs,
                "MBoxState" => FmmuKind::MBoxState,
                o => FmmuKind::Other(o.to_string()),
            },
            sm,
            op_only: cx.bool_attr(f, "OpOnly"),
        });
    }

    let mut sms = Vec::new();
    let mut sm_nodes = Vec::new();
    for s in children(node, "Sm") {
        sms.push(parse_sm(cx, s)?);
        sm_nodes.push(s);
    }

    let sync_units = children(node, "Su")
        .map(|u| SyncUnit {
            frame_repeat_support: cx.bool_attr(u, "FrameRepeatSupport"),
        })
        .collect();

    let pdos = parse_pdos(cx, node)?;
    lenient_sm_starts(cx, &sm_nodes, &mut sms, &pdos);

    let mailbox = child(node, "Mailbox").map(|m| Mailbox {
        data_link_layer: cx.bool_attr(m, "DataLinkLayer"),
        aoe: child(m, "AoE").is_some(),
        eoe: child(m, "EoE").is_some(),
        coe: child(m, "CoE").map(|c| CoeInfo {
            sdo_info: cx.bool_attr(c, "SdoInfo"),
            pdo_assign: cx.bool_attr(c, "PdoAssign"),
            pdo_config: cx.bool_attr(c, "PdoConfig"),
            pdo_upload: cx.bool_attr(c, "PdoUpload"),
            complete_access: cx.bool_attr(c, "CompleteAccess"),
        }),
        foe: child(m, "FoE").is_some(),
        soe: child(m, "SoE").is_some(),
        voe: child(m, "VoE").is_some(),
    });

    let mut dc = Vec::new();
    if let Some(d) = child(node, "Dc") {
        for m in children(d, "OpMode") {
            dc.push(parse_op_mode(cx, m)?);
        }
    }

    let eeprom = match child(node, "Eeprom") {
        Some(e) => Some(EepromInfo {
            byte_size: cx.child_fit::<u32>(e, "ByteSize")?,
            // Unreadable, these are left out with a note: the SII gets the defaults.
            config_data: match child(e, "ConfigData") {
                Some(c) => cx.optional(c, cx.hex(c))?.unwrap_or_default(),
                None => Vec::new(),
            },
            bootstrap: match child(e, "BootStrap") {
                Some(b) => cx.optional(b, cx.hex(b))?,
                None => None,
            },
            assign_to_pdi: cx.bool_attr(e, "AssignToPdi"),
        }),
        None => None,
    };

    Ok(Device {
        type_name: text(ty).to_string(),
        product_code,
        revision,
        use_lrd_lwr: cx.bool_attr(ty, "UseLrdLwr"),
        vendor_id,
        names: local_texts(node, "Name"),
        group: groups.iter().find(|g| g.type_name == group_type).cloned(),
        group_type,
        profiles,
        ebus_current_ma,
        ident_ado,
        ident_reg134,
        esc: EscInfo {
            physics,
            ports,
            esc_type,
            reg0108: esc_reg("Reg0108")?,
            watchdog_divider: esc_reg("Reg0400")?,
            pdi_watchdog: esc_reg("Reg0410")?,
            sm_watchdog: esc_reg("Reg0420")?,
        },
        fmmus,
        sms,
        sync_units,
        pdos,
        mailbox,
        dc,
        eeprom,
        dictionary,
        position: cx.line_col(node),
    })
}

/// The use text of an `Sm`, `Fmmu` or port `Type` in its canonical spelling (another case
/// is noted).
fn use_text(cx: &Ctx<'_, '_>, n: Node<'_, '_>, names: &[&'static str]) -> String {
    let raw = text(n);
    match lenient::canonical(raw, names) {
        Some(c) if c != raw => {
            let tag = n.tag_name().name();
            cx.note(
                n.range().start,
                format!("<{tag}>{raw}</{tag}>: read as {c}"),
            );
            c.to_string()
        }
        _ => raw.to_string(),
    }
}

fn parse_sm(cx: &Ctx<'_, '_>, s: Node<'_, '_>) -> Result<Sm> {
    const USES: [&str; 4] = ["MBoxOut", "MBoxIn", "Outputs", "Inputs"];
    let control = cx.attr_fit::<u8>(s, "ControlByte")?;
    let mut kind = use_text(cx, s, &USES);
    if let (true, Some(c)) = (kind.is_empty(), control) {
        // IgH's `ethercat xml` and generated files give no use text: the control byte says it.
        if let Some(k) = lenient::sm_use_from_control(c).filter(|_| cx.bool_attr(s, "Enable")) {
            cx.note(
                s.range().start,
                format!("<Sm> without its use: read as {k} from ControlByte #x{c:02x}"),
            );
            kind = k.to_string();
        }
    }
    let virtual_sm = cx.bool_attr(s, "Virtual");
    let control = match (control, lenient::default_control(&kind)) {
        (Some(c), _) => c,
        (None, Some(c)) if !virtual_sm => {
            cx.note(
                s.range().start,
                format!(
                    "<Sm>{kind}</Sm> without ControlByte: read as #x{c:02x}, ETG.2000's for {kind}"
                ),
            );
            c
        }
        _ => 0,
    };
    Ok(Sm {
        kind: match kind.as_str() {
            "MBoxOut" => SmKind::MBoxOut,
            "MBoxIn" => SmKind::MBoxIn,
            "Outputs" => SmKind::Outputs,
            "Inputs" => SmKind::Inputs,
            o => SmKind::Other(o.to_string()),
        },
        start: cx.attr_fit::<u16>(s, "StartAddress")?.unwrap_or(0),
        control,
        default_size: cx.attr_fit::<u16>(s, "DefaultSize")?,
        min_size: cx.attr_fit::<u16>(s, "MinSize")?,
        max_size: cx.attr_fit::<u16>(s, "MaxSize")?,
        enable: cx.bool_attr(s, "Enable"),
        op_only: cx.bool_attr(s, "OpOnly"),
        virtual_sm,
        fixed: cx.bool_attr(s, "Fixed"),
        watchdog: cx.bool_attr(s, "Watchdog"),
    })
}

/// A used, non-virtual SyncManager written without `StartAddress` starts where the one before
/// it ends (its `DefaultSize`, else the bytes of its default PDOs, else `MaxSize`), rounded up
/// to 8 bytes; the first at 0x1000, the start of the ESC's process memory.
fn lenient_sm_starts(cx: &Ctx<'_, '_>, nodes: &[Node<'_, '_>], sms: &mut [Sm], pdos: &[Pdo]) {
    let mut end: u32 = 0x1000;
    for (i, (n, sm)) in nodes.iter().zip(sms.iter_mut()).enumerate() {
        let used = !matches!(&sm.kind, SmKind::Other(o) if o.is_empty());
        if n.attribute("StartAddress").is_none() && used && !sm.virtual_sm {
            sm.start = u16::try_from(end.div_ceil(8) * 8).unwrap_or(u16::MAX);
            cx.note(
                n.range().start,
                format!(
                    "<Sm> {i} ({}) without StartAddress: read as #x{:04x}, after the SyncManager before it",
                    text(*n),
                    sm.start
                ),
            );
        }
        let pdo_bits: u32 = pdos
            .iter()
            .filter(|p| p.sm == Some(i as u8))
            .map(Pdo::bit_len)
            .sum();
        let size = sm
            .default_size
            .map(u32::from)
            .filter(|&s| s > 0)
            .or((pdo_bits > 0).then(|| pdo_bits.div_ceil(8)))
            .or(sm.max_size.map(u32::from))
            .unwrap_or(0);
        end = end.max(sm.start as u32 + size);
    }
}

fn parse_op_mode(cx: &Ctx<'_, '_>, m: Node<'_, '_>) -> Result<DcOpMode> {
    let time = |name: &str| -> Result<(i64, i64)> {
        let v = cx.child_int(m, name)?.unwrap_or(0);
        match child(m, name) {
            Some(n) => Ok((v, cx.int_attr(n, "Factor")?.unwrap_or(0))),
            None => Ok((0, 0)),
        }
    };
    let (c0, f0) = time("CycleTimeSync0")?;
    let (s0, _) = time("ShiftTimeSync0")?;
    let (c1, f1) = time("CycleTimeSync1")?;
    let (s1, _) = time("ShiftTimeSync1")?;
    let aa = cx.child_fit::<u16>(m, "AssignActivate")?.unwrap_or(0);
    Ok(DcOpMode {
        name: child_text(m, "Name").unwrap_or("").to_string(),
        desc: child_text(m, "Desc").unwrap_or("").to_string(),
        assign_activate: aa,
        sync0_cycle: c0 as u32,
        sync0_factor: f0 as i32,
        sync0_shift: s0 as i32,
        sync1_cycle: c1 as u32,
        sync1_factor: f1 as i32,
        sync1_shift: s1 as i32,
    })
}
