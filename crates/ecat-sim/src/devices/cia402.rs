//! The CiA 402 drive state machine (reference §10.2–10.4): states, the transitions the
//! controlword commands, and the statusword bits of each state.
//!
//! Transition numbers as in CiA 402: 0/1 power-on → Not ready → Switch on disabled
//! (automatic, on the first frame); 2 Shutdown; 3 Switch on; 4 Enable operation (0x000F from
//! Ready to switch on does 3 + 4 at once); 5 Disable operation; 6/8 Shutdown; 7/9/10/12
//! Disable voltage; 7/10 Quick stop from Ready/Switched on; 11 Quick stop from Operation
//! enabled → Quick stop active, which ends in Switch on disabled once stopped (quick stop
//! option codes 0..4) or stays (5..8, from where Enable operation returns: 16);
//! 13 fault → Fault reaction active, 14 stopped → Fault; 15 fault reset (rising edge of
//! controlword bit 7) → Switch on disabled. Bit 7 is ignored outside Fault.
//!
//! Statusword state bits (mask 0x006F): Switch on disabled 0x0040, Ready 0x0021, Switched on
//! 0x0023, Operation enabled 0x0027, Quick stop active 0x0007, Fault reaction 0x000F,
//! Fault 0x0008, Not ready 0x0000; bit 4 "voltage enabled" is set while the power stage is
//! on (Switched on, Operation enabled, Quick stop, Fault reaction — our reading).

/// A state of the drive state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DriveState {
    /// Not ready to switch on (just powered).
    #[default]
    NotReady,
    /// Switch on disabled.
    SwitchOnDisabled,
    /// Ready to switch on.
    ReadyToSwitchOn,
    /// Switched on.
    SwitchedOn,
    /// Operation enabled (the motor follows the commands).
    OperationEnabled,
    /// Quick stop active (braking on the quick stop ramp).
    QuickStopActive,
    /// Fault reaction active (braking after a fault).
    FaultReactionActive,
    /// Fault.
    Fault,
}

impl DriveState {
    /// Statusword bits 0–6 of the state.
    pub fn statusword_bits(self) -> u16 {
        use DriveState::*;
        match self {
            NotReady => 0x0000,
            SwitchOnDisabled => 0x0040,
            ReadyToSwitchOn => 0x0021,
            SwitchedOn => 0x0033,
            OperationEnabled => 0x0037,
            QuickStopActive => 0x0017,
            FaultReactionActive => 0x001F,
            Fault => 0x0008,
        }
    }

    /// The power stage drives the motor (torque available).
    pub fn powered(self) -> bool {
        use DriveState::*;
        matches!(
            self,
            OperationEnabled | QuickStopActive | FaultReactionActive
        )
    }

    /// The next state on controlword `cw` (previous controlword `prev` for the fault-reset
    /// edge). `qs_option` is the quick stop option code (0x605A). Faults are entered
    /// elsewhere ([`DriveState::FaultReactionActive`]).
    pub fn on_controlword(self, cw: u16, prev: u16, qs_option: i64) -> DriveState {
        use DriveState::*;
        let (so, ev, qs, eo) = (cw & 1 != 0, cw & 2 != 0, cw & 4 != 0, cw & 8 != 0);
        match self {
            NotReady => SwitchOnDisabled,
            FaultReactionActive => self,
            Fault => {
                if cw & 0x80 != 0 && prev & 0x80 == 0 {
                    SwitchOnDisabled
                } else {
                    Fault
                }
            }
            _ if !ev => SwitchOnDisabled,
            QuickStopActive if qs && so && eo && (5..=8).contains(&qs_option) => OperationEnabled,
            QuickStopActive => self,
            OperationEnabled if !qs => QuickStopActive,
            _ if !qs => SwitchOnDisabled,
            SwitchOnDisabled if !so => ReadyToSwitchOn,
            SwitchOnDisabled => self,
            _ if !so => ReadyToSwitchOn,
            ReadyToSwitchOn | SwitchedOn | OperationEnabled if eo => OperationEnabled,
            ReadyToSwitchOn | SwitchedOn | OperationEnabled => SwitchedOn,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::DriveState::{self, *};

    fn run(cws: &[u16]) -> DriveState {
        let mut s = SwitchOnDisabled;
        let mut prev = 0;
        for &c in cws {
            s = s.on_controlword(c, prev, 2);
            prev = c;
        }
        s
    }

    #[test]
    fn enable_sequence_and_back() {
        assert_eq!(NotReady.on_controlword(0, 0, 2), SwitchOnDisabled);
        assert_eq!(run(&[0x06]), ReadyToSwitchOn);
        assert_eq!(run(&[0x06, 0x07]), SwitchedOn);
        assert_eq!(run(&[0x06, 0x07, 0x0F]), OperationEnabled);
        assert_eq!(run(&[0x06, 0x0F]), OperationEnabled, "3 + 4 at once");
        assert_eq!(run(&[0x0F]), SwitchOnDisabled, "needs Shutdown first");
        assert_eq!(run(&[0x06, 0x0F, 0x07]), SwitchedOn, "5 disable operation");
        assert_eq!(run(&[0x06, 0x0F, 0x06]), ReadyToSwitchOn, "8 shutdown");
        assert_eq!(
            run(&[0x06, 0x0F, 0x00]),
            SwitchOnDisabled,
            "9 disable voltage"
        );
        assert_eq!(run(&[0x06, 0x0F, 0x02]), QuickStopActive, "11 quick stop");
        assert_eq!(run(&[0x06, 0x07, 0x02]), SwitchOnDisabled, "10 quick stop");
        assert_eq!(
            run(&[0x06, 0x0F, 0x02, 0x0F]),
            QuickStopActive,
            "option 2: no way back"
        );
        let back = QuickStopActive.on_controlword(0x0F, 0x02, 6);
        assert_eq!(back, OperationEnabled, "16 with option 6");
    }

    #[test]
    fn fault_reset_needs_a_rising_edge() {
        assert_eq!(Fault.on_controlword(0x80, 0x80, 2), Fault);
        assert_eq!(Fault.on_controlword(0x0F, 0x00, 2), Fault);
        assert_eq!(Fault.on_controlword(0x80, 0x00, 2), SwitchOnDisabled);
        assert_eq!(
            FaultReactionActive.on_controlword(0x80, 0, 2),
            FaultReactionActive
        );
    }

    #[test]
    fn statusword_patterns_match_the_reference_masks() {
        let cases = [
            (NotReady, 0x4F, 0x00),
            (SwitchOnDisabled, 0x4F, 0x40),
            (ReadyToSwitchOn, 0x6F, 0x21),
            (SwitchedOn, 0x6F, 0x23),
            (OperationEnabled, 0x6F, 0x27),
            (QuickStopActive, 0x6F, 0x07),
            (FaultReactionActive, 0x4F, 0x0F),
            (Fault, 0x4F, 0x08),
        ];
        for (s, mask, v) in cases {
            assert_eq!(s.statusword_bits() & mask, v, "{s:?}");
        }
    }
}
