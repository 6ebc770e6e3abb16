//! What the catalogue devices do with their process data (the [`Behaviour`] of each model).
//!
//! Every value derives from `now_ns` (or from the outputs), so a run on virtual time is
//! reproducible:
//! * digital inputs (EL1008/EL1018): one walking bit, `1 << (ms % 8)` — bit k is set during
//!   millisecond k of every 8 ms;
//! * EL3102: each channel is a triangle over the whole INT16 range with a 1 s period (channel
//!   2 is channel 1 negated); PDO layout per channel: status (UINT8, 0 = no error) then value
//!   (INT16), as the default TxPDOs 0x1A00/0x1A01 map them;
//! * EL2008/EL4132: no behaviour needed; the applied outputs are observable with
//!   [`Esc::outputs`];
//! * EL3102 writes its values into its object dictionary (0x3101:02, 0x3102:02, 0x6401); the
//!   process data is packed from the objects the current PDO assignment maps;
//! * servo drive: see `drive` (CiA 402 state machine, modes, motor model).

use crate::coe::od::OdHint;
use crate::esc::{Behaviour, Esc};

/// Walking-bit digital inputs.
#[derive(Debug, Clone, Default)]
pub struct DigitalInputs;

/// The input byte a digital input terminal presents at `now_ns`.
pub fn digital_pattern(now_ns: u64) -> u8 {
    1 << ((now_ns / 1_000_000) % 8)
}

impl Behaviour for DigitalInputs {
    fn end_of_frame(&mut self, esc: &mut Esc, now_ns: u64) {
        esc.set_device_inputs(&[digital_pattern(now_ns)]);
    }
}

/// Two analog inputs moving as triangles.
#[derive(Debug, Clone, Default)]
pub struct AnalogInputs {
    /// Where the six written entries are in the dictionary (they are written every frame).
    hints: [OdHint; 6],
}

/// The value of EL3102 channel 1 at `now_ns`: a triangle from −32768 to 32767 and back,
/// period 1 s.
pub fn analog_pattern(now_ns: u64) -> i16 {
    let phase = (now_ns % 1_000_000_000) as i64; // 0..1e9
    let half = 500_000_000i64;
    let up = if phase < half {
        phase
    } else {
        2 * half - phase
    }; // 0..half
    (-32768 + up * 65535 / half) as i16
}

impl Behaviour for AnalogInputs {
    fn end_of_frame(&mut self, esc: &mut Esc, now_ns: u64) {
        let v1 = analog_pattern(now_ns);
        let v2 = v1.saturating_neg();
        if let Some(od) = esc.od_mut() {
            let writes = [
                (0x3101, 1, 0),
                (0x3101, 2, v1),
                (0x3102, 1, 0),
                (0x3102, 2, v2),
                (0x6401, 1, v1),
                (0x6401, 2, v2),
            ];
            for ((index, sub, v), hint) in writes.into_iter().zip(&mut self.hints) {
                od.set_hinted(hint, index, sub, v as i64);
            }
            return;
        }
        let a = v1.to_le_bytes();
        let b = v2.to_le_bytes();
        esc.set_device_inputs(&[0, a[0], a[1], 0, b[0], b[1]]);
    }
}

/// Boxed constructors for the catalogue.
pub(crate) fn digital_inputs() -> Box<dyn Behaviour> {
    Box::new(DigitalInputs)
}

/// EL3102.
pub(crate) fn analog_inputs() -> Box<dyn Behaviour> {
    Box::new(AnalogInputs::default())
}

/// The servo drive.
pub(crate) fn servo() -> Box<dyn Behaviour> {
    Box::new(super::drive::Drive::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert_eq!(digital_pattern(0), 1);
        assert_eq!(digital_pattern(3_500_000), 8);
        assert_eq!(digital_pattern(8_000_000), 1);
        assert_eq!(analog_pattern(0), -32768);
        assert_eq!(analog_pattern(500_000_000), 32767);
        assert_eq!(analog_pattern(250_000_000), -1);
    }
}
