//! Rounds: every row runs once per round, the rows alternating within a round, so that drift
//! on a shared machine (a build starting, a noisy neighbour) hits every row alike instead of
//! whichever row happened to run at the time.
//!
//! An [`Agg`] is one row over all rounds. Its figure is the median of the rounds' medians
//! (a round that could not run is left out), with the spread of those medians (min–max, and
//! the largest distance from the median in percent); p99 is the median of the rounds' p99s,
//! max the largest sample of any round. Counters are summed. A ratio between two rows is the
//! median of the rounds' ratios, each dividing one row's median by the other's in the same
//! round: both were measured in the same round under the same load, so a build starting
//! between rounds moves both sides of a round's ratio together instead of one side of a ratio
//! of medians of medians taken from different rounds.

use super::row::Row;
use ecat::perf::Summary;

/// One figure of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fig {
    /// Round trip of the cyclic frame(s).
    RoundTrip,
    /// Wake-up latency.
    Wake,
    /// Task duration (wake-up to end of send).
    Task,
    /// Wake-up to data back.
    Back,
    /// Cycle time.
    CycleTime,
    /// Round trip of the row's own echo floor (measured alternating with the row).
    Floor,
}

impl Fig {
    /// The summary of this figure in one round's row.
    pub fn of(self, r: &Row) -> Option<Summary> {
        match self {
            Fig::RoundTrip => r.round_trip,
            Fig::Wake => r.wake,
            Fig::Task => r.task,
            Fig::Back => r.back,
            Fig::CycleTime => r.cycle_time,
            Fig::Floor => r.floor,
        }
    }
}

/// A figure over the rounds (ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// Median of the rounds' medians.
    pub p50: f64,
    /// Smallest round median.
    pub lo: f64,
    /// Largest round median.
    pub hi: f64,
    /// Median of the rounds' p99s.
    pub p99: f64,
    /// Largest sample of any round.
    pub max: u64,
    /// Rounds that had this figure.
    pub rounds: usize,
}

impl Spread {
    /// Largest distance of a round's median from the median of medians, in percent of it.
    pub fn pct(&self) -> f64 {
        if self.p50 <= 0.0 {
            return 0.0;
        }
        (self.hi - self.p50).max(self.p50 - self.lo) / self.p50 * 100.0
    }
}

/// The median of `v` (mean of the middle two for an even count); `None` when empty.
pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// One row over every round.
#[derive(Debug, Clone, Default)]
pub struct Agg {
    /// Row name.
    pub name: String,
    /// One entry per round, in round order (unavailable rows included).
    pub rounds: Vec<Row>,
}

impl Agg {
    /// An empty row named `name`.
    pub fn new(name: &str) -> Agg {
        Agg {
            name: name.into(),
            rounds: Vec::new(),
        }
    }

    /// The rounds in which the row ran.
    pub fn ran(&self) -> impl Iterator<Item = &Row> {
        self.rounds.iter().filter(|r| r.available)
    }

    /// Ran in at least one round.
    pub fn available(&self) -> bool {
        self.ran().next().is_some()
    }

    /// The first round that ran, else the first round (for link, receive mode and notes).
    pub fn first(&self) -> Option<&Row> {
        self.ran().next().or(self.rounds.first())
    }

    /// Why it never ran (the last round's reason).
    pub fn why_not(&self) -> String {
        self.rounds
            .last()
            .map_or("not run".into(), |r| r.note.clone())
    }

    /// Receive in BusyPoll mode.
    pub fn busy(&self) -> bool {
        self.first().is_some_and(|r| r.busy)
    }

    /// The figure over the rounds.
    pub fn fig(&self, f: Fig) -> Option<Spread> {
        let s: Vec<Summary> = self.ran().filter_map(|r| f.of(r)).collect();
        if s.is_empty() {
            return None;
        }
        let mut p50: Vec<f64> = s.iter().map(|x| x.p50 as f64).collect();
        let mut p99: Vec<f64> = s.iter().map(|x| x.p99 as f64).collect();
        let (lo, hi) = p50
            .iter()
            .fold((f64::MAX, 0f64), |(l, h), &v| (l.min(v), h.max(v)));
        Some(Spread {
            p50: median(&mut p50)?,
            lo,
            hi,
            p99: median(&mut p99)?,
            max: s.iter().map(|x| x.max).max().unwrap_or(0),
            rounds: s.len(),
        })
    }

    /// A counter summed over the rounds that ran.
    pub fn sum(&self, c: impl Fn(&Row) -> u64) -> u64 {
        self.ran().map(c).sum()
    }

    /// The round whose median of `f` is the median of medians (or nearest to it), for the
    /// detailed figures of one round.
    pub fn median_round(&self, f: Fig) -> Option<&Row> {
        let m = self.fig(f)?.p50;
        self.ran().filter(|r| f.of(r).is_some()).min_by(|a, b| {
            let d = |r: &Row| (f.of(r).map_or(0, |s| s.p50) as f64 - m).abs();
            d(a).total_cmp(&d(b))
        })
    }
}

/// The median over the rounds of `a`'s median of `fa` over `b`'s median of `fb` in the same
/// round (rounds where either side did not run are left out).
pub fn ratio(a: &Agg, fa: Fig, b: Option<&Agg>, fb: Fig) -> Option<f64> {
    let mut v: Vec<f64> = ratio_per_round(a, fa, b, fb)
        .into_iter()
        .flatten()
        .collect();
    median(&mut v)
}

/// The same ratio round by round (`None` where either side did not run).
pub fn ratio_per_round(a: &Agg, fa: Fig, b: Option<&Agg>, fb: Fig) -> Vec<Option<f64>> {
    let Some(b) = b else {
        return vec![None; a.rounds.len()];
    };
    a.rounds
        .iter()
        .zip(&b.rounds)
        .map(|(x, y)| {
            let x = fa.of(x).filter(|_| x.available)?;
            let y = fb.of(y).filter(|_| y.available)?;
            (y.p50 > 0).then(|| x.p50 as f64 / y.p50 as f64)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(p50: u64, ok: bool) -> Row {
        Row {
            available: ok,
            cycles: 10,
            wake: Some(Summary {
                count: 10,
                p50,
                p99: p50 * 2,
                max: p50 * 3,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn median_of_medians_with_spread_skips_rounds_that_did_not_run() {
        let a = Agg {
            name: "x".into(),
            rounds: vec![row(30, true), row(10, true), row(999, false), row(20, true)],
        };
        let s = a.fig(Fig::Wake).unwrap();
        assert_eq!((s.p50, s.lo, s.hi, s.rounds), (20.0, 10.0, 30.0, 3));
        assert_eq!((s.p99, s.max), (40.0, 90));
        assert!((s.pct() - 50.0).abs() < 1e-9);
        assert_eq!(a.sum(|r| r.cycles), 30);
        assert_eq!(a.median_round(Fig::Wake).unwrap().wake.unwrap().p50, 20);
        assert!(a.fig(Fig::RoundTrip).is_none());
    }

    #[test]
    fn ratios_are_medians_of_the_rounds_ratios() {
        let a = Agg {
            name: "a".into(),
            rounds: vec![row(10, true), row(40, true), row(90, true), row(30, true)],
        };
        let b = Agg {
            name: "b".into(),
            rounds: vec![row(20, true), row(20, false), row(60, true), row(10, true)],
        };
        assert_eq!(
            ratio_per_round(&a, Fig::Wake, Some(&b), Fig::Wake),
            vec![Some(0.5), None, Some(1.5), Some(3.0)]
        );
        // Round 2 is left out (b did not run): the median of 0.5, 1.5 and 3.0, where the
        // ratio of the medians of medians would be 35 / 20.
        assert_eq!(ratio(&a, Fig::Wake, Some(&b), Fig::Wake), Some(1.5));
        let c = Agg {
            name: "c".into(),
            rounds: vec![row(10, true), row(40, true), row(90, true), row(10, true)],
        };
        // 0.5, 1.5, 1.0, where the ratio of the medians of medians would be 25 / 20.
        assert_eq!(ratio(&c, Fig::Wake, Some(&b), Fig::Wake), Some(1.0));
        assert_eq!(ratio(&c, Fig::Wake, None, Fig::Wake), None);
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [3.0, 1.0, 2.0, 4.0]), Some(2.5));
    }
}
