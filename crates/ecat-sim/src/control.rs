//! The test-facing controls of a [`Network`]: device I/O, faults, and SubDevices leaving and
//! coming back.
//!
//! Every `position` here is an ESC's fixed index in wiring order (passive terminals do not
//! count), the same as [`Network::subdevice`]; it does not shift when a SubDevice in front
//! is unplugged, while the auto-increment positions the MainDevice sees do.
//! Unplugging takes a SubDevice off the frame path as an open junction port would: the others
//! keep working and the one unplugged keeps its state (its SM watchdog expires on the first
//! frame after it is back if it missed its outputs). Replugging after a power loss, or
//! [`Network::power_cycle`], resets it to power-up values (registers, SMs, FMMUs, AL state
//! INIT, station address 0) and reloads its configuration from the SII.

use crate::error::SimError;
use crate::faults::{EventAction, FaultEvent, Faults, Rng};
use crate::network::Network;

impl Network {
    fn esc_index(&self, position: usize) -> Result<usize, SimError> {
        if position < self.bus.len() {
            Ok(position)
        } else {
            Err(SimError::NoSubDevice {
                position,
                count: self.bus.len(),
            })
        }
    }

    /// The outputs the SubDevice at `position` applies now (zero unless it is in OP with valid
    /// outputs; empty for devices without outputs). `None` if there is no such SubDevice.
    pub fn outputs(&self, position: usize) -> Option<&[u8]> {
        self.subdevice(position).map(|e| e.outputs())
    }

    /// Force the inputs of the SubDevice at `position` to `data` (zero-padded or truncated
    /// to its input size) until [`Network::clear_inputs`]. They reach the MainDevice from
    /// SAFEOP on, like the device's own values.
    pub fn set_inputs(&mut self, position: usize, data: &[u8]) -> Result<(), SimError> {
        let p = self.esc_index(position)?;
        if let Some(e) = self.subdevice_mut(p) {
            e.set_input_override(Some(data));
        }
        Ok(())
    }

    /// Return the SubDevice at `position` to its own input values.
    pub fn clear_inputs(&mut self, position: usize) -> Result<(), SimError> {
        let p = self.esc_index(position)?;
        if let Some(e) = self.subdevice_mut(p) {
            e.set_input_override(None);
        }
        Ok(())
    }

    /// The current fault settings.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Replace the fault settings and reseed the PRNG from `faults.seed`.
    pub fn set_faults(&mut self, faults: Faults) {
        self.faults = faults;
        self.rng = Rng::new(faults.seed);
    }

    /// Schedule `event` (events at the same time keep their order).
    pub fn schedule(&mut self, event: FaultEvent) {
        let at = self.events.partition_point(|e| e.at_ns <= event.at_ns);
        self.events.insert(at, event);
    }

    /// Events still to come.
    pub fn pending_events(&self) -> &[FaultEvent] {
        &self.events
    }

    /// Apply every event due at `now_ns` (invalid positions are ignored).
    pub(crate) fn run_events(&mut self, now_ns: u64) {
        while self.events.first().is_some_and(|e| e.at_ns <= now_ns) {
            let e = self.events.remove(0);
            let _ = match e.action {
                EventAction::Unplug => self.unplug(e.position),
                EventAction::Replug { power_cycled } => self.replug(e.position, power_cycled),
                EventAction::PowerCycle => self.power_cycle(e.position),
                EventAction::Break { with } => self.break_cable(e.position, with),
                EventAction::Heal { with } => self.heal_cable(e.position, with),
                EventAction::Disconnect => self.disconnect(e.position),
                EventAction::Connect => self.connect(e.position),
            };
        }
    }

    /// Take the SubDevice at `position` off the frame path.
    pub fn unplug(&mut self, position: usize) -> Result<(), SimError> {
        let p = self.esc_index(position)?;
        self.plugged[p] = false;
        self.refresh_links();
        Ok(())
    }

    /// Put the SubDevice at `position` back on the frame path; with `power_cycled` it lost
    /// power meanwhile and starts from power-up values.
    pub fn replug(&mut self, position: usize, power_cycled: bool) -> Result<(), SimError> {
        let p = self.esc_index(position)?;
        if power_cycled {
            self.power_cycle(p)?;
        }
        self.plugged[p] = true;
        self.refresh_links();
        Ok(())
    }

    /// True if the SubDevice at `position` is on the frame path.
    pub fn is_plugged(&self, position: usize) -> bool {
        self.plugged.get(position).copied().unwrap_or(false)
    }

    /// Power-cycle the SubDevice at `position` in place.
    pub fn power_cycle(&mut self, position: usize) -> Result<(), SimError> {
        let p = self.esc_index(position)?;
        if let Some(e) = self.subdevice_mut(p) {
            e.power_up();
        }
        self.refresh_links();
        Ok(())
    }
}
