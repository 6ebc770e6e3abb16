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
//! * servo drive: the CiA 402 power state machine of reference §10.2–10.3 on the controlword
//!   (no faults yet), velocity actual = target velocity while operation is enabled, position
//!   integrated from it (counts, 1 count per count/s × s). Modes and the motor model come with
//!   the CoE server.

use crate::esc::{Behaviour, Esc};

/// Walking-bit digital inputs.
#[derive(Debug, Default)]
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
#[derive(Debug, Default)]
pub struct AnalogInputs;

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
        let a = v1.to_le_bytes();
        let b = v2.to_le_bytes();
        esc.set_device_inputs(&[0, a[0], a[1], 0, b[0], b[1]]);
    }
}

/// A CiA 402 power state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Power {
    #[default]
    SwitchOnDisabled,
    ReadyToSwitchOn,
    SwitchedOn,
    OperationEnabled,
}

/// The servo drive's default PDOs: controlword + target velocity in, statusword + position +
/// velocity out.
#[derive(Debug, Default)]
pub struct Servo {
    power: Power,
    /// Position in counts × 1e9 (counts/s × ns), so slow speeds still move.
    position: i128,
    velocity: i32,
    last_ns: Option<u64>,
}

impl Servo {
    fn step(&mut self, cw: u16) {
        use Power::*;
        let cmd = cw & 0x8F;
        self.power = if cw & 0x02 == 0 || cw & 0x04 == 0 {
            // Disable voltage or quick stop (handled as an immediate stop).
            SwitchOnDisabled
        } else {
            match (self.power, cmd & 0x0F) {
                (_, 0x06) => ReadyToSwitchOn,
                (ReadyToSwitchOn | SwitchedOn | OperationEnabled, 0x07) => SwitchedOn,
                (ReadyToSwitchOn | SwitchedOn | OperationEnabled, 0x0F) => OperationEnabled,
                (s, _) => s,
            }
        };
    }

    fn statusword(&self) -> u16 {
        // Bit 9 remote, bit 5 "not in quick stop" where the state table sets it.
        0x0200
            | match self.power {
                Power::SwitchOnDisabled => 0x0040,
                Power::ReadyToSwitchOn => 0x0021,
                Power::SwitchedOn => 0x0033,
                Power::OperationEnabled => 0x0037,
            }
    }
}

impl Behaviour for Servo {
    fn end_of_frame(&mut self, esc: &mut Esc, now_ns: u64) {
        let o = esc.outputs();
        let cw = o.get(..2).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
        let target = o
            .get(2..6)
            .map_or(0, |b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        self.step(cw);
        let dt = now_ns.saturating_sub(self.last_ns.unwrap_or(now_ns));
        self.last_ns = Some(now_ns);
        self.position += self.velocity as i128 * dt as i128;
        self.velocity = if self.power == Power::OperationEnabled {
            target
        } else {
            0
        };
        let mut inp = [0u8; 10];
        inp[..2].copy_from_slice(&self.statusword().to_le_bytes());
        let counts = (self.position / 1_000_000_000) as i32;
        inp[2..6].copy_from_slice(&counts.to_le_bytes());
        inp[6..].copy_from_slice(&self.velocity.to_le_bytes());
        esc.set_device_inputs(&inp);
    }

    fn power_up(&mut self) {
        *self = Servo::default();
    }
}

/// Boxed constructors for the catalogue.
pub(crate) fn digital_inputs() -> Box<dyn Behaviour> {
    Box::new(DigitalInputs)
}

/// EL3102.
pub(crate) fn analog_inputs() -> Box<dyn Behaviour> {
    Box::new(AnalogInputs)
}

/// The servo drive.
pub(crate) fn servo() -> Box<dyn Behaviour> {
    Box::new(Servo::default())
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

    #[test]
    fn cia402_power_states() {
        let mut s = Servo::default();
        assert_eq!(s.statusword() & 0x4F, 0x40);
        s.step(0x06);
        assert_eq!(s.statusword() & 0x6F, 0x21);
        s.step(0x07);
        assert_eq!(s.statusword() & 0x6F, 0x23);
        s.step(0x0F);
        assert_eq!(s.statusword() & 0x6F, 0x27);
        s.step(0x00);
        assert_eq!(s.statusword() & 0x4F, 0x40);
    }
}
