//! The device catalogue: each model is data (a [`DeviceSpec`] the SII is built from, and the
//! ESC chip it sits on) plus a behaviour ([`behaviour`]: inputs that move, a servo that answers
//! its controlword).
//!
//! [`find`] looks a model up by its order number (case-insensitive); passive terminals
//! (EL9011 end cap and the other EL9xxx without an ESC) are known too and build no ESC.
//! [`esc_from_sii`] makes a SubDevice from a raw SII image (e.g. a dump of a real device).

pub mod beckhoff;
pub mod behaviour;
pub mod cia402;
pub mod drive;
pub mod esi;
pub mod servo;
pub mod servo_od;
pub mod spec;

use crate::esc::{Behaviour, Esc, EscChip};
use crate::sii_info::{SiiError, SiiInfo};
use ecat_wire::sii::{CoeDetails, MailboxProtocols};
pub use spec::DeviceSpec;

/// What a catalogue entry is.
#[derive(Debug, Clone, Copy)]
pub enum ModelKind {
    /// A device with an ESC.
    Esc {
        /// The SII content.
        spec: &'static DeviceSpec,
        /// The controller chip.
        chip: EscChip,
        /// Creates the device behaviour, if the model has one.
        behaviour: Option<fn() -> Box<dyn Behaviour>>,
    },
    /// A terminal without ESC: present on the rail, invisible on the bus.
    Passive {
        /// ESI device name.
        description: &'static str,
    },
}

/// One entry of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct Model {
    /// Name used in network files, e.g. `EL2008`.
    pub name: &'static str,
    /// What it is.
    pub kind: ModelKind,
}

const fn esc(spec: &'static DeviceSpec, chip: EscChip) -> Model {
    Model {
        name: spec.order,
        kind: ModelKind::Esc {
            spec,
            chip,
            behaviour: None,
        },
    }
}

const fn with(spec: &'static DeviceSpec, chip: EscChip, b: fn() -> Box<dyn Behaviour>) -> Model {
    Model {
        name: spec.order,
        kind: ModelKind::Esc {
            spec,
            chip,
            behaviour: Some(b),
        },
    }
}

const ET1100_MII_EBUS_MII: EscChip = EscChip::et1100(0x3B);
const ET1100_EBUS: EscChip = EscChip::et1100(0x0A);
const ET1100_MII: EscChip = EscChip::et1100(0x0F);
const ET1100_EBUS_EBUS_MII_MII: EscChip = EscChip::et1100(0xFA);

static MODELS: &[Model] = &[
    esc(&beckhoff::EK1100, ET1100_MII_EBUS_MII),
    with(
        &beckhoff::EL1008,
        EscChip::et1200(),
        behaviour::digital_inputs,
    ),
    with(
        &beckhoff::EL1018,
        EscChip::et1200(),
        behaviour::digital_inputs,
    ),
    esc(&beckhoff::EL2008, EscChip::et1200()),
    with(
        &beckhoff::EL3102,
        EscChip::et1200(),
        behaviour::analog_inputs,
    ),
    esc(&beckhoff::EL4132, ET1100_EBUS),
    esc(&beckhoff::EK1122, ET1100_EBUS_EBUS_MII_MII),
    with(&servo::SERVO402, ET1100_MII, behaviour::servo),
    with(&servo::SOE_DRIVE, ET1100_MII, behaviour::servo),
];

/// The models with an ESC.
pub fn catalogue() -> &'static [Model] {
    MODELS
}

/// Look a model up by name (case-insensitive), passive terminals included.
pub fn find(name: &str) -> Option<Model> {
    if let Some(m) = MODELS.iter().find(|m| m.name.eq_ignore_ascii_case(name)) {
        return Some(*m);
    }
    beckhoff::PASSIVE
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(name, description)| Model {
            name,
            kind: ModelKind::Passive { description },
        })
}

/// Every model name a network file may use, ESC models first.
pub fn model_names() -> Vec<&'static str> {
    MODELS
        .iter()
        .map(|m| m.name)
        .chain(beckhoff::PASSIVE.iter().map(|(n, _)| *n))
        .collect()
}

impl Model {
    /// True for terminals without an ESC.
    pub fn is_passive(&self) -> bool {
        matches!(self.kind, ModelKind::Passive { .. })
    }

    /// The human-readable name (ESI device name).
    pub fn description(&self) -> &'static str {
        match self.kind {
            ModelKind::Esc { spec, .. } => spec.name,
            ModelKind::Passive { description } => description,
        }
    }

    /// Build the ESC of this model with the given serial number and, optionally, a station
    /// alias stored in its SII (`None` for passive models).
    pub fn build(&self, serial: u32, alias: Option<u16>) -> Option<Esc> {
        let ModelKind::Esc {
            spec,
            chip,
            behaviour,
        } = self.kind
        else {
            return None;
        };
        let mut image = spec::build_sii(spec, serial);
        if let Some(a) = alias {
            set_alias(&mut image, a);
        }
        // Catalogue images are built by us; the catalogue test parses every one of them.
        let info = SiiInfo::parse(&image).expect("catalogue SII is valid");
        let mut esc = Esc::new(chip, image, info);
        if spec.protocols.0 & MailboxProtocols::COE.0 != 0 && spec.mailbox.is_some() {
            let ca = spec.coe_details & CoeDetails::COMPLETE_ACCESS != 0;
            esc.set_object_dictionary(crate::coe::standard::build(spec, serial), ca);
        }
        if let Some(b) = behaviour {
            esc.set_behaviour(b());
        }
        Some(esc)
    }
}

/// Store `alias` in SII word 4 and recompute the fixed-area CRC (word 7), as writing the
/// alias through the EEPROM interface with a configuration tool does. Images shorter than
/// the checksum word are left alone.
pub fn set_alias(image: &mut [u8], alias: u16) {
    if image.len() < 16 {
        return;
    }
    image[8..10].copy_from_slice(&alias.to_le_bytes());
    image[14] = ecat_wire::sii::crc8(&image[..14]);
    image[15] = 0;
}

/// Port descriptor (0x0007) from the SII GENERAL physical-ports word: MII → 11, E-Bus → 10.
fn port_descriptor(ports: u16) -> u8 {
    let mut d = 0;
    for p in 0..4 {
        let code = match (ports >> (4 * p)) & 0xF {
            1 | 4 => 0b11,
            3 => 0b10,
            _ => 0b00,
        };
        d |= code << (2 * p);
    }
    d
}

/// Build a SubDevice from a raw SII image (validated by [`SiiInfo::parse`]). The chip is an
/// ET1100-like ESC with the ports the SII names.
pub fn esc_from_sii(image: Vec<u8>) -> Result<Esc, SiiError> {
    esc_from_sii_on(image, EscChip::et1100(0))
}

/// Build a SubDevice from a raw SII image on the given chip (its port descriptor is replaced
/// by the ports the SII names), e.g. [`EscChip::et1200`] for terminals whose ESC has the
/// DC system-time unit only when the SII enables the SYNC/latch units.
pub fn esc_from_sii_on(image: Vec<u8>, chip: EscChip) -> Result<Esc, SiiError> {
    let info = SiiInfo::parse(&image)?;
    let ports = ecat_wire::sii::Sii::new(&image)
        .ok()
        .and_then(|s| s.general().ok().flatten())
        .map(|g| g.physical_ports)
        .unwrap_or(0x0033);
    let mut desc = port_descriptor(ports);
    if desc == 0 {
        desc = 0x0A;
    }
    Ok(Esc::new(
        EscChip {
            port_descriptor: desc,
            ..chip
        },
        image,
        info,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalogue_image_parses_with_its_identity() {
        for m in catalogue() {
            let ModelKind::Esc { spec, .. } = m.kind else {
                unreachable!()
            };
            let img = spec::build_sii(spec, 7);
            let info = SiiInfo::parse(&img).unwrap();
            assert_eq!(info.order, spec.order);
            assert_eq!(info.name, spec.name);
            assert_eq!(info.fixed.product_code, spec.product);
            assert_eq!(info.fixed.serial, 7);
            assert!(m.build(1, None).is_some());
        }
    }

    #[test]
    fn lookup_is_case_insensitive_and_knows_passive_terminals() {
        assert_eq!(find("el2008").unwrap().name, "EL2008");
        assert!(find("EL9011").unwrap().is_passive());
        assert!(find("EL9999").is_none());
        assert!(model_names().contains(&"EK1100"));
    }

    #[test]
    fn pdo_sizes_follow_the_esi() {
        let sizes = |spec: &DeviceSpec| -> Vec<u32> {
            SiiInfo::parse(&spec::build_sii(spec, 0))
                .unwrap()
                .sms
                .iter()
                .map(|s| s.pdo_bits)
                .collect()
        };
        assert_eq!(sizes(&beckhoff::EL1008), [8]);
        assert_eq!(sizes(&beckhoff::EL2008), [8]);
        assert_eq!(sizes(&beckhoff::EL3102), [0, 0, 0, 48]);
        assert_eq!(sizes(&beckhoff::EL4132), [0, 0, 32, 0]);
        assert_eq!(sizes(&servo::SERVO402), [0, 0, 48, 80]);
    }

    #[test]
    fn port_descriptor_from_general() {
        assert_eq!(port_descriptor(0x0131), 0x3B);
        assert_eq!(port_descriptor(0x0033), 0x0A);
        assert_eq!(port_descriptor(0x1133), 0xFA);
    }
}
