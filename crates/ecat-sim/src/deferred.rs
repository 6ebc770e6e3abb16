//! Deferred PDI reactions: frames go back before the firmware work they cause.
//!
//! Design: a real ESC processes a frame in hardware while its firmware (the PDI side:
//! mailbox, process data, the device's behaviour) reacts afterwards, beside the next frames.
//! The simulator runs both on one thread, so normally the reaction runs before the frame
//! moves on. In deferred mode the network only notes, per ESC, the time of the frame that
//! woke the PDI side (`Network::pdi_late`); the reaction runs at that time before the next
//! frame that concerns the ESC (a datagram for it, or a timer due) or when the caller
//! settles, whichever comes first. Every frame then carries what it would carry without
//! deferral, except the IRQ fields of frames that only pass an ESC whose reaction is still
//! pending (they show its event request from before). `ecat sim` settles whenever no frame
//! is waiting, so the frames of one cycle come back after the frame processing alone.

use crate::Network;

impl Network {
    /// Let the PDI side of each ESC (its firmware: mailbox, process data, the device's
    /// behaviour) react to a frame later than at once: before the next frame that concerns
    /// the ESC (a datagram addressing it, or a timer due), or at [`Network::settle`],
    /// whichever comes first. Frames that only pass the ESC meanwhile carry its event request
    /// from before the reaction in their IRQ fields; everything else a frame returns is the
    /// same as without deferral. `ecat sim` uses it to send a frame back before the
    /// firmware work it caused and to do that work while it waits for the next frame, as a
    /// real ESC's firmware runs beside its frame processing. The caller settles before
    /// looking at the ESCs (`subdevice`, `outputs`). The network's own changes settle first:
    /// each reaches the ESCs through [`Network::subdevice_mut`], which settles (inputs,
    /// plugging, power cycles, cables, branches and the ring through its port links, events
    /// through frames). Turning it off settles.
    pub fn set_deferred_pdi(&mut self, on: bool) {
        if !on {
            self.settle();
        }
        self.defer_pdi = on;
    }

    /// Run every PDI reaction still pending (see [`Network::set_deferred_pdi`]); returns how
    /// many ran.
    pub fn settle(&mut self) -> usize {
        let n = self.pdi_late_count;
        if n == 0 {
            return 0;
        }
        for k in 0..self.pdi_late.len() {
            if let Some(t) = self.pdi_late[k].take() {
                let i = self.bus[k];
                if let Some(esc) = self.nodes[i].esc.as_mut() {
                    crate::walk::react_late(esc, &mut self.routes[k], t);
                }
            }
        }
        self.pdi_late_count = 0;
        n
    }
}
