//! Branches that leave and join the network as a whole: a hot-connect group (a tool changer,
//! an optional station) unplugged from its junction port and plugged in again.
//!
//! A branch is an ESC (its head) and every ESC wired behind it, through any of its ports:
//! in the depth-first wiring order that is the head's position and the positions right after
//! it. [`Network::disconnect`] takes the whole branch off the frame path at once (the parent's
//! port closes, as an ESC's port does when its link goes down); [`Network::connect`] puts it
//! back after a power loss, so every ESC of the branch starts from power-up values (station
//! address 0, INIT, no SMs or FMMUs, system time offset and delay 0), as a freshly plugged
//! group does. The events `connect` / `disconnect` in a network file and
//! [`crate::EventAction::Connect`] / [`crate::EventAction::Disconnect`] do the same at a time.

use crate::error::SimError;
use crate::network::Network;

impl Network {
    /// The positions (wiring order) of the branch headed by the ESC at `head`: the head and
    /// every ESC behind it.
    pub fn branch(&self, head: usize) -> Result<std::ops::Range<usize>, SimError> {
        if head >= self.bus.len() {
            return Err(SimError::NoSubDevice {
                position: head,
                count: self.bus.len(),
            });
        }
        // Depth-first order: the branch is contiguous, and ends where its size says.
        fn size(children: &[[Option<usize>; 4]], k: usize) -> usize {
            1 + children[k]
                .iter()
                .flatten()
                .map(|&c| size(children, c))
                .sum::<usize>()
        }
        Ok(head..head + size(&self.children, head))
    }

    /// Take the branch headed by the ESC at `head` off the frame path (see the module notes).
    pub fn disconnect(&mut self, head: usize) -> Result<(), SimError> {
        for p in self.branch(head)? {
            self.plugged[p] = false;
        }
        self.refresh_links();
        Ok(())
    }

    /// Plug the branch headed by the ESC at `head` in again, freshly powered.
    pub fn connect(&mut self, head: usize) -> Result<(), SimError> {
        for p in self.branch(head)? {
            if let Some(e) = self.subdevice_mut(p) {
                e.power_up();
            }
            self.plugged[p] = true;
        }
        self.refresh_links();
        Ok(())
    }

    /// True if every ESC of the branch headed at `head` is on the frame path.
    pub fn is_connected(&self, head: usize) -> bool {
        self.branch(head)
            .is_ok_and(|r| r.into_iter().all(|p| self.is_plugged(p)))
    }
}

#[cfg(test)]
mod tests {
    use crate::Network;

    const NET: &str = "[[subdevice]]\nmodel = \"EK1100\"\n[[subdevice]]\nmodel = \"EL2008\"\n\
        [[subdevice]]\nmodel = \"EK1100\"\nparent = 0\nport = 2\n\
        [[subdevice]]\nmodel = \"EL1018\"\n[[subdevice]]\nmodel = \"EL4132\"\n";

    #[test]
    fn a_branch_is_its_head_and_everything_behind() {
        let net = Network::from_toml_str(NET, "test", std::path::Path::new(".")).unwrap();
        assert_eq!(net.branch(2).unwrap(), 2..5);
        assert_eq!(net.branch(1).unwrap(), 1..2);
        assert_eq!(net.branch(0).unwrap(), 0..5);
        assert!(net.branch(5).is_err());
    }

    #[test]
    fn disconnect_and_connect_move_the_whole_branch() {
        let mut net = Network::from_toml_str(NET, "test", std::path::Path::new(".")).unwrap();
        net.disconnect(2).unwrap();
        assert!((2..5).all(|p| !net.is_plugged(p)));
        assert!(net.is_plugged(0) && net.is_plugged(1));
        assert!(!net.is_connected(2));
        net.connect(2).unwrap();
        assert!(net.is_connected(2));
        assert!(net.is_connected(0));
    }
}
