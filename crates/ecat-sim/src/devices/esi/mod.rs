//! Simulated devices from ESI files (ETG.2000 device descriptions, read by `ecat-config`).
//!
//! A [`Template`] is built once per device description (file, type, revision): the SII image
//! (`ecat_config::build_sii_detailed`, serial 0, names in the language the network asks for:
//! English unless `sii_lcid` says otherwise; Beckhoff programs German, 1031), the ESC chip ([`chip::choose`]), the object
//! dictionary when the device has a CoE mailbox ([`od::build`]) and which behaviour it gets.
//! [`Template::build`] then makes one SubDevice cheaply: it copies the image and patches the
//! serial number (SII words 0x0E–0x0F, outside the CRC) and the alias, and copies the
//! dictionary with the serial in 0x1018:04. [`EsiDevices`] resolves network-file entries to
//! templates through a [`DeviceLibrary`] (which parses each file once) and keeps the
//! templates, so a network of a thousand devices of one type builds one template.
//!
//! Passive terminals (ESI devices without a product code, such as the EL9011 end cap) have
//! no ESC: their template builds nothing and the network keeps them off the frame path, as
//! the catalogue's passive terminals.
//!
//! Behaviour: devices whose ESI names CiA 402 (`ProfileNo` 402) get the catalogue's drive
//! model (`devices::drive`); the dictionary gets the catalogue servo's objects the ESI lacks,
//! and for the objects the drive uses that the ESI does describe, the catalogue's data type
//! where the sizes agree (CiA 402 makes positions, velocities and torques signed; an ESI
//! that calls them UDINT would turn a negative command into a huge one) and the union of
//! both access words (the drive must be commandable where a sloppy ESI says "ro"). Every
//! other device gets [`WalkingInputs`]: one input bit set at a time, bit `ms % bits` of the
//! input image, deterministic from time; a test pins inputs with `Esc::set_input_override`
//! and reads the applied outputs with `Esc::outputs`.

pub mod chip;
pub mod od;

use crate::coe::od::Object;
use crate::coe::Od;
use crate::esc::{Behaviour, Esc, EscChip, MailboxLimits};
use crate::sii_info::SiiError;
use ecat_config::{
    build_sii_detailed, esi::SmKind, Device, DeviceLibrary, DeviceRef, PdoContent, SiiOptions,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What an ESI-built device does behind its PDI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BehaviourKind {
    /// Inputs walk ([`WalkingInputs`]), outputs are recorded.
    Walking,
    /// The CiA 402 drive model.
    Drive,
}

/// One device description made ready to build SubDevices from.
#[derive(Debug, Clone)]
pub struct Template {
    /// Type name (order number), e.g. "EL2032".
    pub order: String,
    /// Device name (English).
    pub name: String,
    /// Vendor, product code, revision.
    pub identity: (u32, u32, u32),
    /// The chip chosen for it (before any `chip =` of the network file).
    pub chip: EscChip,
    /// The behaviour it gets.
    pub behaviour: BehaviourKind,
    /// A terminal without ESC (no product code in the ESI).
    pub passive: bool,
    /// Which PDOs the SII describes (all, the default ones, or none when the EEPROM is too
    /// small: a MainDevice then reads them over CoE).
    pub sii_pdos: PdoContent,
    sii: Vec<u8>,
    od: Option<(Od, bool)>,
    mbx_limits: MailboxLimits,
}

impl Template {
    /// Build the template of `dev` with English names in its SII. Fails (one sentence) when
    /// the SII image cannot be built.
    pub fn new(dev: &Device) -> Result<Template, String> {
        Template::with_sii_lcid(dev, SiiOptions::default().lcid)
    }

    /// [`Template::new`] with the SII's group and device names in language `lcid` (1031
    /// German, as in Beckhoff's EEPROMs; falls back to English).
    pub fn with_sii_lcid(dev: &Device, lcid: u32) -> Result<Template, String> {
        if dev.product_code.is_none() {
            return Ok(Template {
                order: dev.type_name.clone(),
                name: dev.name(1033).to_string(),
                identity: (dev.vendor_id, 0, dev.revision),
                chip: EscChip::et1200(),
                behaviour: BehaviourKind::Walking,
                passive: true,
                sii_pdos: PdoContent::None,
                sii: Vec::new(),
                od: None,
                mbx_limits: MailboxLimits::default(),
            });
        }
        let opts = SiiOptions {
            lcid,
            ..SiiOptions::default()
        };
        let built = build_sii_detailed(dev, &opts).map_err(|e| e.to_string())?;
        // Check the image with the simulator's own parser now, not once per SubDevice.
        crate::sii_info::SiiInfo::parse(&built.image).map_err(|e| {
            format!(
                "{}: the SII built from the ESI is not valid: {e}",
                dev.label()
            )
        })?;
        let drive = dev.profiles.contains(&402);
        let coe = dev.mailbox.as_ref().and_then(|m| m.coe);
        let od = coe.map(|c| {
            let mut od = od::build(dev, 0);
            if drive {
                add_drive_objects(&mut od);
            }
            (od, c.complete_access)
        });
        Ok(Template {
            order: dev.type_name.clone(),
            name: dev.name(1033).to_string(),
            identity: (dev.vendor_id, dev.product_code.unwrap_or(0), dev.revision),
            chip: chip::choose(dev),
            behaviour: if drive && od.is_some() {
                BehaviourKind::Drive
            } else {
                BehaviourKind::Walking
            },
            passive: false,
            sii_pdos: built.pdos,
            sii: built.image,
            od,
            mbx_limits: mailbox_limits(dev),
        })
    }

    /// The SII image with serial number 0 and no alias.
    pub fn sii(&self) -> &[u8] {
        &self.sii
    }

    /// The object dictionary with serial number 0 (`None` without CoE).
    pub fn od(&self) -> Option<&Od> {
        self.od.as_ref().map(|(od, _)| od)
    }

    /// Build one SubDevice with `serial` (SII and 0x1018:04), `alias` stored in its SII, on
    /// `chip` (default: [`Template::chip`]). A passive template has no SII and fails.
    pub fn build(
        &self,
        serial: u32,
        alias: Option<u16>,
        chip: Option<EscChip>,
    ) -> Result<Esc, SiiError> {
        let mut image = self.sii.clone();
        if image.len() >= 0x20 {
            image[0x1C..0x20].copy_from_slice(&serial.to_le_bytes());
        }
        if let Some(a) = alias {
            super::set_alias(&mut image, a);
        }
        let mut esc = super::esc_from_sii_on(image, chip.unwrap_or(self.chip))?;
        if let Some((od, ca)) = &self.od {
            let mut od = od.clone();
            od.set(0x1018, 4, serial as i64);
            if let Some(e) = od.entry_mut(0x1018, 4) {
                e.default = e.value.as_slice().into();
            }
            esc.set_object_dictionary(od, *ca);
        }
        esc.set_mailbox_limits(self.mbx_limits);
        esc.set_behaviour(match self.behaviour {
            BehaviourKind::Walking => Box::new(WalkingInputs::default()),
            BehaviourKind::Drive => Box::new(super::drive::Drive::default()),
        });
        Ok(esc)
    }
}

/// The mailbox sizes the device accepts: its ESI's `MinSize`/`MaxSize` of the mailbox SMs.
fn mailbox_limits(dev: &Device) -> MailboxLimits {
    let of = |kind| {
        dev.sm_of(&kind)
            .map_or((None, None), |(_, sm)| (sm.min_size, sm.max_size))
    };
    MailboxLimits {
        rx: of(SmKind::MBoxOut),
        tx: of(SmKind::MBoxIn),
    }
}

/// Fill the drive model's needs (see the module note).
pub(crate) fn add_drive_objects(od: &mut Od) {
    for spec in super::servo_od::OBJECTS {
        let cat = Object::from_spec(spec);
        let Some(have) = od.object_mut(spec.index) else {
            od.insert(cat);
            continue;
        };
        for c in &cat.entries {
            if let Some(e) = have.entry_mut(c.sub) {
                if e.bits == c.bits && !e.is_string() {
                    e.dtype = c.dtype;
                }
                e.access |= c.access;
            }
        }
        if have.code == ecat_wire::coe::info::ObjectCode::VAR {
            have.dtype = have.entries.first().map_or(have.dtype, |e| e.dtype);
        }
    }
}

/// Walking-bit inputs: bit `ms % bits` of the input image is set, the others clear.
#[derive(Debug, Clone, Default)]
pub struct WalkingInputs {
    buf: Vec<u8>,
}

/// The input image an ESI-built device presents at `now_ns` (`out` is overwritten).
pub fn walking_pattern(now_ns: u64, out: &mut [u8]) {
    out.fill(0);
    let bits = out.len() as u64 * 8;
    if bits == 0 {
        return;
    }
    let k = (now_ns / 1_000_000) % bits;
    out[(k / 8) as usize] = 1 << (k % 8);
}

impl Behaviour for WalkingInputs {
    fn end_of_frame(&mut self, esc: &mut Esc, now_ns: u64) {
        let n = esc.inputs().len();
        if n == 0 {
            return;
        }
        if self.buf.len() != n {
            self.buf.resize(n, 0);
        }
        walking_pattern(now_ns, &mut self.buf);
        esc.set_device_inputs(&self.buf);
    }
}

/// Which device of a file or of the library an entry asks for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Wanted {
    /// By type name (case-insensitive).
    Type(String),
    /// By product code.
    Product(u32),
    /// The only device of the file.
    Only,
}

/// ESI-built devices of one network build: the library and the templates made so far.
#[derive(Debug)]
pub struct EsiDevices {
    lib: DeviceLibrary,
    templates: HashMap<(PathBuf, usize), Arc<Template>>,
    sii_lcid: u32,
}

impl EsiDevices {
    /// Over the directories of `ECAT_ESI_PATH` followed by `dirs`.
    pub fn new(dirs: Vec<PathBuf>) -> EsiDevices {
        EsiDevices {
            lib: DeviceLibrary::from_env_and(dirs),
            templates: HashMap::new(),
            sii_lcid: SiiOptions::default().lcid,
        }
    }

    /// Write the names of the SII images in language `lcid` (default 1033 English; 1031
    /// German as Beckhoff's own EEPROMs). Applies to the templates built from now on.
    pub fn with_sii_lcid(mut self, lcid: u32) -> EsiDevices {
        self.sii_lcid = lcid;
        self.templates.clear();
        self
    }

    /// The library.
    pub fn library(&self) -> &DeviceLibrary {
        &self.lib
    }

    /// Templates built so far (one per distinct device description).
    pub fn template_count(&self) -> usize {
        self.templates.len()
    }

    fn template(&mut self, d: DeviceRef) -> Result<Arc<Template>, String> {
        let key = (d.file.path.clone().unwrap_or_default(), d.index);
        if let Some(t) = self.templates.get(&key) {
            return Ok(t.clone());
        }
        let t = Arc::new(Template::with_sii_lcid(&d, self.sii_lcid)?);
        self.templates.insert(key, t.clone());
        Ok(t)
    }

    /// The template of `wanted` (at `revision`, else the highest) in the ESI file `file`.
    /// `file` is tried as given, then by its name in the library's directories.
    pub fn from_file(
        &mut self,
        file: &Path,
        wanted: &Wanted,
        revision: Option<u32>,
    ) -> Result<Arc<Template>, String> {
        let path = if file.is_file() {
            file.to_path_buf()
        } else {
            let name = file.file_name().unwrap_or_default();
            match self
                .lib
                .files()
                .iter()
                .find(|p| p.file_name() == Some(name))
            {
                Some(p) => p.clone(),
                None => {
                    return Err(format!(
                        "no ESI file {} (nor {} in the ESI directories: {})",
                        file.display(),
                        name.to_string_lossy(),
                        dirs_text(self.lib.dirs())
                    ))
                }
            }
        };
        let f = self.lib.file(&path).map_err(|e| e.to_string())?;
        let index = match wanted {
            Wanted::Type(t) => {
                let d = f.device(t, revision).map_err(|e| e.to_string())?;
                f.devices.iter().position(|x| std::ptr::eq(x, d))
            }
            Wanted::Product(p) => match f.device_by_product(*p, revision) {
                Ok(d) => f.devices.iter().position(|x| std::ptr::eq(x, d)),
                Err(e @ ecat_config::Error::Invalid { .. }) => return Err(e.to_string()),
                Err(_) => None,
            },
            Wanted::Only => match (f.devices.len(), f.broken.first()) {
                (0, Some(b)) => return Err(b.to_error().to_string()),
                (1, _) => Some(0),
                _ => {
                    return Err(format!(
                        "{} describes {} devices; say which with `type = \"...\"` or `product = 0x...`: {}",
                        path.display(),
                        f.devices.len(),
                        f.type_list().join(", ")
                    ))
                }
            },
        };
        let Some(index) = index else {
            let what = match (wanted, revision) {
                (Wanted::Product(p), Some(r)) => format!("product 0x{p:08x} revision 0x{r:08x}"),
                (Wanted::Product(p), None) => format!("product 0x{p:08x}"),
                _ => "the requested device".into(),
            };
            return Err(format!(
                "{}: no device with {what}; the file has {}",
                path.display(),
                f.type_list().join(", ")
            ));
        };
        self.template(DeviceRef { file: f, index })
    }

    /// The template of the device with exactly this identity in the library; `None` when no
    /// ESI describes it (an error when one does but cannot be read or built).
    pub fn from_identity(
        &mut self,
        vendor: u32,
        product: u32,
        revision: u32,
    ) -> Option<Result<Arc<Template>, String>> {
        match self.lib.find_product(Some(vendor), product, Some(revision)) {
            Ok(d) => Some(self.template(d)),
            Err(ecat_config::Error::UnknownDevice { .. }) => None,
            Err(e) => Some(Err(e.to_string())),
        }
    }

    /// The template of `wanted` found anywhere in the library.
    pub fn from_library(
        &mut self,
        wanted: &Wanted,
        revision: Option<u32>,
    ) -> Result<Arc<Template>, String> {
        let found = match wanted {
            Wanted::Type(t) => self.lib.find_type(t, revision),
            Wanted::Product(p) => self.lib.find_product(None, *p, revision),
            Wanted::Only => {
                return Err(
                    "say which device with `type = \"EL2032\"` or `product = 0x07f03052`".into(),
                )
            }
        };
        match found {
            Ok(d) => self.template(d),
            Err(ecat_config::Error::UnknownDevice { wanted, dirs }) => Err(format!(
                "no ESI file describes {wanted}; searched {}",
                dirs_text(&dirs)
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}

fn dirs_text(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        "no directories (set ECAT_ESI_PATH or list them in the network file: esi_dirs = [\"...\"])"
            .into()
    } else {
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
