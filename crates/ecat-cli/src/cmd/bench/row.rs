//! One row of the bench table: what was measured, how, and the figures (ns).

use ecat::perf::Summary;

/// The figures of one row in one round. `task` is ecat's task duration (wake-up to end of
/// send); `back` is wake-up to data back (ecat: until every cyclic frame is back with its
/// inputs in the images; ethercrab: until `tx_rx` completes, its per-cycle time).
#[derive(Debug, Clone, Default)]
pub struct Row {
    /// Row name in the table (`floor echo`, `ecat raw busy`, `ethercrab`, ...).
    pub name: String,
    /// The link specification used, or a short description.
    pub link: String,
    /// Receive in BusyPoll mode (else Block).
    pub busy: bool,
    /// False when the row could not run (`note` says why).
    pub available: bool,
    /// Why it did not run, or anything worth saying about it.
    pub note: String,
    /// Cycles measured.
    pub cycles: u64,
    /// Round trip.
    pub round_trip: Option<Summary>,
    /// Wake-up latency.
    pub wake: Option<Summary>,
    /// Task duration: wake-up to end of send (ecat rows only).
    pub task: Option<Summary>,
    /// Wake-up to data back (ecat rows and ethercrab).
    pub back: Option<Summary>,
    /// Cycle time (interval between wake-ups).
    pub cycle_time: Option<Summary>,
    /// The row's own echo floor: the round trip of echo frames measured in windows that
    /// alternated with the row's (ecat rows).
    pub floor: Option<Summary>,
    /// Echo frames of the row's own floor that did not come back in their cycle.
    pub floor_lost: u64,
    /// Frames sent.
    pub frames_sent: u64,
    /// Frames that did not come back in their cycle.
    pub frames_lost: u64,
    /// Cycles with a wrong working counter (ethercrab: tx_rx errors are counted as lost).
    pub wkc_errors: u64,
    /// Cycles that ended after the next boundary.
    pub overruns: u64,
    /// Every `Perf` figure of an ecat row (seed 003's line-up).
    pub perf: Option<[Summary; ecat::perf::METRICS]>,
    /// Times the peer thread behind the row was preempted (involuntary context switches).
    pub peer_preempted: u64,
    /// How long that peer served the row, ns (0: no peer behind it).
    pub peer_ns: u64,
}

impl Row {
    /// A row that could not run.
    pub fn unavailable(name: &str, link: &str, why: String) -> Row {
        Row {
            name: name.into(),
            link: link.into(),
            note: why,
            ..Default::default()
        }
    }

    /// Cycles with an error, at most: a lost frame also shows as a WKC error in its cycle, so
    /// the larger of the two counts, plus overruns.
    pub fn errors(&self) -> u64 {
        self.frames_lost.max(self.wkc_errors) + self.overruns
    }

    /// Stable: at most 0.1 % of the cycles had an error, and it ran at all.
    pub fn stable(&self) -> bool {
        self.available && self.cycles > 0 && self.errors() * 1000 <= self.cycles
    }
}

/// A summary from a figure, `None` without samples.
pub fn some(s: Summary) -> Option<Summary> {
    (s.count > 0).then_some(s)
}
