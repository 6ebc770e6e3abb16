//! Topology and propagation delays from the port receive times (reference §8.3).
//!
//! Input: for every DC SubDevice in ring (auto-increment) order, which ports are open and the
//! local time at which the latch frame reached each of them. A frame enters a SubDevice at its
//! entry port (the open port with the earliest time), leaves through each other open port in
//! processing order 0 → 3 → 1 → 2 and comes back through the same port; the time it comes back
//! is latched there. Hence, at a parent p, the round trip of the branch behind port q is
//! `t_p[q] − t_p[prev(q)]` (prev = the open port before q in processing order), and a child's
//! own round trip is `t_c[prev(entry)] − t_c[entry]`. The one-way hop is half the difference,
//! and a SubDevice's delay from the reference (the first, delay 0) accumulates the hops plus the
//! time its parent spent on earlier branches. Forwarding and processing delays inside an ESC are
//! taken as equal (the ESC-specific tDiff is ignored, as SOEM, ethercrab and KickCAT do).
//!
//! Pure arithmetic on wrapping 32-bit local times; unit tests build trees with known delays.

/// Processing order of ports after a given one: 0 → 3 → 1 → 2 → 0.
const ORDER: [usize; 4] = [0, 3, 1, 2];

/// What the MainDevice read from one DC SubDevice after the latch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortTimes {
    /// Local receive time at ports 0..3 (0x0900..0x090C), ns (low 32 bits).
    pub times: [u32; 4],
    /// Which ports are open with communication (from DL status).
    pub open: [bool; 4],
}

/// The result for one SubDevice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Placement {
    /// Index (in the input) of the parent; `None` for the first SubDevice.
    pub parent: Option<usize>,
    /// Port of the parent this SubDevice hangs on.
    pub parent_port: usize,
    /// Entry port of this SubDevice.
    pub entry_port: usize,
    /// Propagation delay from the reference clock (the first SubDevice), ns.
    pub delay_ns: u32,
    /// One-way delay of the hop from the parent, ns.
    pub hop_ns: u32,
}

fn rank(port: usize) -> usize {
    ORDER.iter().position(|&p| p == port).unwrap_or(0)
}

/// The open port before `port` in processing order (wrapping), or `port` if it is the only one.
fn prev_open(t: &PortTimes, port: usize) -> usize {
    let r = rank(port);
    for k in 1..4 {
        let p = ORDER[(r + 4 - k) % 4];
        if t.open[p] {
            return p;
        }
    }
    port
}

/// Open ports after `entry` in processing order: where the children hang (up to three; the
/// unused tail of the array is ignored).
#[derive(Debug, Clone, Copy, Default)]
pub struct ChildPorts {
    ports: [u8; 3],
    len: u8,
    next: u8,
}

impl ChildPorts {
    fn of(t: &PortTimes, entry: usize) -> ChildPorts {
        let r = rank(entry);
        let mut c = ChildPorts::default();
        for k in 1..4 {
            let p = ORDER[(r + k) % 4];
            if t.open[p] {
                c.ports[c.len as usize] = p as u8;
                c.len += 1;
            }
        }
        c
    }

    fn is_empty(&self) -> bool {
        self.next >= self.len
    }

    fn take(&mut self) -> usize {
        let p = self.ports[self.next as usize] as usize;
        self.next += 1;
        p
    }
}

fn entry_port(t: &PortTimes) -> usize {
    (0..4)
        .filter(|&p| t.open[p])
        .min_by_key(|&p| (t.times[p], rank(p)))
        .unwrap_or(0)
}

/// Place every SubDevice in the tree and compute its delay from the first.
pub fn place(subs: &[PortTimes]) -> Vec<Placement> {
    let mut out = Vec::with_capacity(subs.len());
    place_into(subs, &mut out, &mut Vec::with_capacity(subs.len()));
    out
}

/// [`place`] into `out`, with `stack` as working space: allocates nothing once both have
/// room for `subs.len()` entries (the runtime measures again while cycling).
pub fn place_into(
    subs: &[PortTimes],
    out: &mut Vec<Placement>,
    stack: &mut Vec<(usize, ChildPorts)>,
) {
    out.clear();
    out.resize(subs.len(), Placement::default());
    stack.clear();
    for (i, t) in subs.iter().enumerate() {
        let entry = entry_port(t);
        out[i].entry_port = entry;
        while stack.last().is_some_and(|(_, ports)| ports.is_empty()) {
            stack.pop();
        }
        if let Some((p, ports)) = stack.last_mut() {
            let p = *p;
            let q = ports.take();
            let tp = &subs[p];
            let branch_rt = tp.times[q].wrapping_sub(tp.times[prev_open(tp, q)]);
            let inner_rt = if ChildPorts::of(t, entry).is_empty() {
                0
            } else {
                t.times[prev_open(t, entry)].wrapping_sub(t.times[entry])
            };
            let hop = (branch_rt.wrapping_sub(inner_rt) as i32 / 2).max(0) as u32;
            // Time the parent spent between its entry and sending into port q.
            let before = tp.times[prev_open(tp, q)].wrapping_sub(tp.times[out[p].entry_port]);
            out[i].parent = Some(p);
            out[i].parent_port = q;
            out[i].hop_ns = hop;
            out[i].delay_ns = out[p].delay_ns.wrapping_add(before).wrapping_add(hop);
        }
        stack.push((i, ChildPorts::of(t, entry)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulated tree: nodes with children on ports, hop delays; returns port times as a real
    /// latch would produce them (no processing delay inside ESCs).
    struct Node {
        children: Vec<(usize, usize, u32)>, // (port, child, hop delay)
    }

    fn latch(nodes: &[Node], entry_time: u32) -> (Vec<PortTimes>, Vec<u32>) {
        let mut pt = vec![PortTimes::default(); nodes.len()];
        let mut truth = vec![0u32; nodes.len()];
        fn visit(
            n: usize,
            t_in: u32,
            nodes: &[Node],
            pt: &mut [PortTimes],
            truth: &mut [u32],
            t0: u32,
        ) -> u32 {
            pt[n].open[0] = true;
            pt[n].times[0] = t_in;
            truth[n] = t_in - t0;
            let mut t = t_in;
            let mut ports: Vec<_> = nodes[n].children.clone();
            ports.sort_by_key(|(p, _, _)| rank(*p));
            for (port, child, hop) in ports {
                pt[n].open[port] = true;
                let back = visit(child, t + hop, nodes, pt, truth, t0);
                t = back + hop;
                pt[n].times[port] = t;
            }
            t
        }
        visit(0, entry_time, nodes, &mut pt, &mut truth, entry_time);
        (pt, truth)
    }

    #[test]
    fn line() {
        let nodes: Vec<Node> = (0..5)
            .map(|i| Node {
                children: if i < 4 {
                    vec![(1, i + 1, 100 + 10 * i as u32)]
                } else {
                    vec![]
                },
            })
            .collect();
        let (pt, truth) = latch(&nodes, 1_000_000);
        let pl = place(&pt);
        for i in 0..5 {
            assert_eq!(pl[i].delay_ns, truth[i], "SubDevice {i}");
        }
        assert_eq!(pl[3].parent, Some(2));
    }

    #[test]
    fn line_of_six_with_a_branch_of_two() {
        // 0 (coupler with port 1 main line and port 2 branch... processing order 3,1,2:
        // main line on port 1 (1..5), branch on port 2 (6, 7).
        let mut nodes: Vec<Node> = (0..8).map(|_| Node { children: vec![] }).collect();
        nodes[0].children = vec![(1, 1, 120), (2, 6, 300)];
        for (i, n) in nodes.iter_mut().enumerate().take(5).skip(1) {
            n.children = vec![(1, i + 1, 110)];
        }
        nodes[6].children = vec![(1, 7, 150)];
        let (pt, truth) = latch(&nodes, 0xFFFF_F000); // wraps during the latch
        let pl = place(&pt);
        for i in 0..8 {
            assert_eq!(pl[i].delay_ns, truth[i], "SubDevice {i}");
        }
        assert_eq!((pl[6].parent, pl[6].parent_port), (Some(0), 2));
        assert_eq!(pl[7].parent, Some(6));
    }

    #[test]
    fn junction_on_port_3() {
        // Ports are used in the order 3, 1, 2: a device on port 3 comes right after the parent.
        let mut nodes: Vec<Node> = (0..4).map(|_| Node { children: vec![] }).collect();
        nodes[0].children = vec![(3, 1, 200), (1, 2, 100)];
        nodes[2].children = vec![(1, 3, 90)];
        let (pt, truth) = latch(&nodes, 5_000);
        let pl = place(&pt);
        for i in 0..4 {
            assert_eq!(pl[i].delay_ns, truth[i], "SubDevice {i}");
        }
        assert_eq!((pl[1].parent_port, pl[2].parent_port), (3, 1));
    }
}
