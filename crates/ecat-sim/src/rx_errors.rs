//! Where a corrupted frame is counted, per ESC and port, as real ESCs count it
//! (reference §12, registers 0x0300–0x030B), so that `ecat crc` can locate a bad cable.
//!
//! A frame corrupted on the cable into the `at`-th ESC of its path is detected there: that
//! ESC counts an invalid frame at port 0 (0x0300) and marks the frame. From then on every
//! arrival of the marked frame counts as a forwarded error at the port it arrives on
//! (0x0308 + port): port 0 of every ESC the frame reaches later, the return through every
//! port with a link of those ESCs and of the detecting one, and, going back towards the
//! MainDevice, the port of every ESC above through which the frame returns from the branch
//! holding the fault and from the branches it visits after it. A frame corrupted on the way
//! back (`at` = number of ESCs) is detected by the ESC before the last one on the port the
//! last one hangs on. So the first ESC (in frame order) with invalid frames at port 0 sits
//! right behind the bad cable, and forwarded counts lead to it.

use crate::network::Network;

/// Processing order of the ports after port 0.
const ORDER: [usize; 3] = [3, 1, 2];

impl Network {
    /// Count the corruption of a frame at hop `at` (see the module note).
    pub(crate) fn count_rx_errors(&mut self, at: usize) {
        let path: Vec<usize> = (0..self.bus.len())
            .filter(|&k| self.rel_passages.get(k).is_some_and(|p| p.is_some()))
            .collect();
        let reached = |net: &Network, c: usize| net.rel_passages[c].is_some();
        let (detector, port) = match path.get(at) {
            Some(&k) => (k, 0),
            None => {
                // On the way back from the last ESC: its parent sees it first.
                let Some(&last) = path.last() else {
                    return;
                };
                let Some((p, port)) = self.wiring[last].parent else {
                    return;
                };
                self.count_at(p, port, true);
                self.count_returns_above(p);
                return;
            }
        };
        self.count_at(detector, port, true);
        // Returns into the detector and everything after it in frame order.
        let after = path
            .iter()
            .position(|&k| k == detector)
            .unwrap_or(path.len());
        for (i, &k) in path.iter().enumerate().skip(after) {
            if i > after {
                self.count_at(k, 0, false);
            }
            for p in ORDER {
                if self.children[k][p].is_some_and(|c| reached(self, c)) {
                    self.count_at(k, p, false);
                }
            }
        }
        self.count_returns_above(detector);
    }

    /// The marked frame returns from `k` to every ancestor: each counts it at the port
    /// leading to `k` and at the ports it visits afterwards (their branches come after the
    /// fault in frame order).
    fn count_returns_above(&mut self, mut k: usize) {
        while let Some((p, port)) = self.wiring[k].parent {
            let later = ORDER.iter().skip_while(|&&q| q != port);
            let ports: Vec<usize> = later
                .copied()
                .filter(|&q| self.children[p][q].is_some_and(|c| self.rel_passages[c].is_some()))
                .collect();
            for q in ports {
                self.count_at(p, q, false);
            }
            k = p;
        }
    }

    fn count_at(&mut self, k: usize, port: usize, first: bool) {
        let i = self.bus[k];
        if let Some(esc) = self.nodes[i].esc.as_mut() {
            esc.count_crc_error(port, first);
        }
    }
}
