//! CiA 402 drives: the power state machine from the statusword, and a non-blocking helper that
//! drives any number of drives to "operation enabled" (or back to "switch on disabled") from the
//! cyclic loop, one controlword per cycle.
//!
//! [`Drive::next_controlword`] looks at the drive's statusword and returns the controlword for
//! this cycle: fault → a fault-reset edge (bit 7 low, then high) and back; switch on disabled →
//! shutdown (0x0006); ready to switch on → switch on (0x0007); switched on → enable operation
//! (0x000F). It never waits and never allocates, so it belongs in the cyclic path. Modes of
//! operation (0x6060) are set over SDO in PREOP (a startup SDO) or through a PDO.

use core::fmt;

/// Statusword bits.
pub mod status {
    /// Ready to switch on.
    pub const READY_TO_SWITCH_ON: u16 = 1 << 0;
    /// Switched on.
    pub const SWITCHED_ON: u16 = 1 << 1;
    /// Operation enabled.
    pub const OPERATION_ENABLED: u16 = 1 << 2;
    /// Fault.
    pub const FAULT: u16 = 1 << 3;
    /// Voltage enabled.
    pub const VOLTAGE_ENABLED: u16 = 1 << 4;
    /// Quick stop (1 = not in quick stop).
    pub const QUICK_STOP: u16 = 1 << 5;
    /// Switch on disabled.
    pub const SWITCH_ON_DISABLED: u16 = 1 << 6;
    /// Warning.
    pub const WARNING: u16 = 1 << 7;
    /// Remote (0 = the drive ignores the controlword).
    pub const REMOTE: u16 = 1 << 9;
    /// Target reached.
    pub const TARGET_REACHED: u16 = 1 << 10;
    /// Internal limit active.
    pub const INTERNAL_LIMIT: u16 = 1 << 11;
}

/// Controlword commands.
pub mod control {
    /// Shutdown (transitions 2, 6, 8).
    pub const SHUTDOWN: u16 = 0x0006;
    /// Switch on (3).
    pub const SWITCH_ON: u16 = 0x0007;
    /// Enable operation (4, 16).
    pub const ENABLE_OPERATION: u16 = 0x000F;
    /// Disable voltage (7, 9, 10, 12).
    pub const DISABLE_VOLTAGE: u16 = 0x0000;
    /// Quick stop (7, 10, 11).
    pub const QUICK_STOP: u16 = 0x0002;
    /// Fault reset bit (acts on its rising edge).
    pub const FAULT_RESET: u16 = 0x0080;
    /// Halt bit.
    pub const HALT: u16 = 0x0100;
}

/// The CiA 402 power state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Not ready to switch on.
    NotReadyToSwitchOn,
    /// Switch on disabled.
    SwitchOnDisabled,
    /// Ready to switch on.
    ReadyToSwitchOn,
    /// Switched on.
    SwitchedOn,
    /// Operation enabled.
    OperationEnabled,
    /// Quick stop active.
    QuickStopActive,
    /// Fault reaction active.
    FaultReactionActive,
    /// Fault.
    Fault,
    /// A bit pattern that is no state.
    Unknown,
}

impl State {
    /// Decode a statusword (masks of CiA 402).
    pub fn from_statusword(sw: u16) -> State {
        match (sw & 0x004F, sw & 0x006F) {
            (0x0000, _) => State::NotReadyToSwitchOn,
            (0x0040, _) => State::SwitchOnDisabled,
            (_, 0x0021) => State::ReadyToSwitchOn,
            (_, 0x0023) => State::SwitchedOn,
            (_, 0x0027) => State::OperationEnabled,
            (_, 0x0007) => State::QuickStopActive,
            (0x000F, _) => State::FaultReactionActive,
            (0x0008, _) => State::Fault,
            _ => State::Unknown,
        }
    }

    /// Human name.
    pub fn name(self) -> &'static str {
        match self {
            State::NotReadyToSwitchOn => "not ready to switch on",
            State::SwitchOnDisabled => "switch on disabled",
            State::ReadyToSwitchOn => "ready to switch on",
            State::SwitchedOn => "switched on",
            State::OperationEnabled => "operation enabled",
            State::QuickStopActive => "quick stop active",
            State::FaultReactionActive => "fault reaction active",
            State::Fault => "fault",
            State::Unknown => "unknown",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Modes of operation (0x6060 / 0x6061).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i8)]
pub enum Mode {
    /// Profile position.
    ProfilePosition = 1,
    /// Velocity (frequency converters).
    Velocity = 2,
    /// Profile velocity.
    ProfileVelocity = 3,
    /// Profile torque.
    ProfileTorque = 4,
    /// Homing.
    Homing = 6,
    /// Interpolated position.
    InterpolatedPosition = 7,
    /// Cyclic synchronous position.
    CyclicPosition = 8,
    /// Cyclic synchronous velocity.
    CyclicVelocity = 9,
    /// Cyclic synchronous torque.
    CyclicTorque = 10,
}

impl Mode {
    /// Decode 0x6061.
    pub fn from_i8(v: i8) -> Option<Mode> {
        use Mode::*;
        Some(match v {
            1 => ProfilePosition,
            2 => Velocity,
            3 => ProfileVelocity,
            4 => ProfileTorque,
            6 => Homing,
            7 => InterpolatedPosition,
            8 => CyclicPosition,
            9 => CyclicVelocity,
            10 => CyclicTorque,
            _ => return None,
        })
    }
}

/// What the helper should make of a drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// Operation enabled.
    Enabled,
    /// Switch on disabled (power off).
    Disabled,
}

/// One drive's enable/disable/fault-reset sequencing. See the module documentation.
#[derive(Debug, Clone, Copy)]
pub struct Drive {
    /// What to reach.
    pub goal: Goal,
    /// Extra controlword bits to keep set (e.g. mode-specific bits 4–6, 9).
    pub extra_bits: u16,
    reset_phase: u8,
    faults_seen: u32,
    last_state: State,
}

impl Default for Drive {
    fn default() -> Self {
        Drive {
            goal: Goal::Enabled,
            extra_bits: 0,
            reset_phase: 0,
            faults_seen: 0,
            last_state: State::Unknown,
        }
    }
}

impl Drive {
    /// A drive to bring to `goal`.
    pub fn new(goal: Goal) -> Drive {
        Drive {
            goal,
            ..Default::default()
        }
    }

    /// The state seen at the last call.
    pub fn state(&self) -> State {
        self.last_state
    }

    /// How many times a fault was seen (and reset).
    pub fn faults_seen(&self) -> u32 {
        self.faults_seen
    }

    /// True when the drive is where the goal says.
    pub fn at_goal(&self) -> bool {
        match self.goal {
            Goal::Enabled => self.last_state == State::OperationEnabled,
            Goal::Disabled => self.last_state == State::SwitchOnDisabled,
        }
    }

    /// The controlword for this cycle, given the drive's statusword.
    pub fn next_controlword(&mut self, statusword: u16) -> u16 {
        let st = State::from_statusword(statusword);
        if st == State::Fault && self.last_state != State::Fault {
            self.faults_seen += 1;
        }
        self.last_state = st;
        let cw = match (st, self.goal) {
            (State::Fault, _) => {
                // Bit 7 low for one cycle, then high (the edge resets), then low again.
                self.reset_phase = (self.reset_phase + 1) % 2;
                if self.reset_phase == 1 {
                    control::DISABLE_VOLTAGE
                } else {
                    control::FAULT_RESET
                }
            }
            (State::FaultReactionActive, _) | (State::NotReadyToSwitchOn, _) => {
                control::DISABLE_VOLTAGE
            }
            (_, Goal::Disabled) => control::DISABLE_VOLTAGE,
            (State::SwitchOnDisabled, Goal::Enabled) => control::SHUTDOWN,
            (State::ReadyToSwitchOn, Goal::Enabled) => control::SWITCH_ON,
            (State::SwitchedOn, Goal::Enabled) | (State::OperationEnabled, Goal::Enabled) => {
                control::ENABLE_OPERATION
            }
            (State::QuickStopActive, Goal::Enabled) => control::DISABLE_VOLTAGE,
            (State::Unknown, _) => control::DISABLE_VOLTAGE,
        };
        if st != State::Fault {
            self.reset_phase = 0;
        }
        if cw == control::ENABLE_OPERATION || cw == control::SWITCH_ON {
            cw | self.extra_bits
        } else {
            cw
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy drive that follows controlwords like CiA 402 (one transition per cycle).
    fn toy(sw: u16, cw: u16) -> u16 {
        match (State::from_statusword(sw), cw & 0x8F) {
            (State::Fault, 0x80) => 0x0040,
            (State::Fault, _) => sw,
            (State::SwitchOnDisabled, 0x06) => 0x0021,
            (State::ReadyToSwitchOn, 0x07) => 0x0023,
            (State::SwitchedOn, 0x0F) => 0x0027,
            (_, 0x00) => 0x0040,
            _ => sw,
        }
    }

    #[test]
    fn states_decode() {
        assert_eq!(State::from_statusword(0x0250), State::SwitchOnDisabled);
        assert_eq!(State::from_statusword(0x0231), State::ReadyToSwitchOn);
        assert_eq!(State::from_statusword(0x0233), State::SwitchedOn);
        assert_eq!(State::from_statusword(0x0237), State::OperationEnabled);
        assert_eq!(State::from_statusword(0x0217), State::QuickStopActive);
        assert_eq!(State::from_statusword(0x0208), State::Fault);
        assert_eq!(State::from_statusword(0x020F), State::FaultReactionActive);
        assert_eq!(State::from_statusword(0x0000), State::NotReadyToSwitchOn);
    }

    #[test]
    fn enables_from_fault_in_a_few_cycles() {
        let mut d = Drive::new(Goal::Enabled);
        let mut sw = 0x0008; // fault
        for _ in 0..10 {
            let cw = d.next_controlword(sw);
            sw = toy(sw, cw);
        }
        d.next_controlword(sw);
        assert_eq!(d.state(), State::OperationEnabled);
        assert!(d.at_goal());
        assert_eq!(d.faults_seen(), 1);
        d.goal = Goal::Disabled;
        let cw = d.next_controlword(sw);
        assert_eq!(cw, control::DISABLE_VOLTAGE);
        d.next_controlword(toy(sw, cw));
        assert!(d.at_goal());
    }

    #[test]
    fn modes() {
        assert_eq!(Mode::from_i8(9), Some(Mode::CyclicVelocity));
        assert_eq!(Mode::from_i8(5), None);
    }
}
