//! How the incomplete cycles of `ecat run` spread over the seconds of the run.
//!
//! Design: a total alone cannot tell two causes apart. Cycles that miss their inputs evenly,
//! a few every second, say the cycle is too short for the line; cycles that miss them in
//! bursts, most of a second at once and then none for a while, say something stalled (the
//! machine's host, the other side, a cable). So the cycle loop marks each cycle's second
//! and whether it was incomplete, and [`Seconds`] folds every finished second into a few
//! figures on the spot: nothing is stored per second and nothing allocates on the cycle.

/// The per-second spread of incomplete cycles, folded as the run goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seconds {
    /// The second being counted and its cycles so far (all, incomplete).
    current: Option<(u64, u64, u64)>,
    /// Finished seconds.
    seconds: u64,
    /// Finished seconds without an incomplete cycle.
    clean: u64,
    /// Finished seconds in which more than a tenth of the cycles were incomplete.
    bursts: u64,
    /// The finished second with the most incomplete cycles: (second, incomplete, cycles).
    worst: Option<(u64, u64, u64)>,
    /// Incomplete cycles in the finished seconds.
    incomplete: u64,
}

impl Seconds {
    /// One cycle in second `second` of the run (counted from 0), incomplete or not.
    pub fn record(&mut self, second: u64, incomplete: bool) {
        match &mut self.current {
            Some((s, all, bad)) if *s == second => {
                *all += 1;
                *bad += incomplete as u64;
            }
            _ => {
                self.fold();
                self.current = Some((second, 1, incomplete as u64));
            }
        }
    }

    /// Count the second being counted as finished (at a new second, or at the end).
    pub fn fold(&mut self) {
        let Some((s, all, bad)) = self.current.take() else {
            return;
        };
        self.seconds += 1;
        self.clean += (bad == 0) as u64;
        self.bursts += (bad * 10 > all) as u64;
        self.incomplete += bad;
        if bad > 0 && self.worst.is_none_or(|(_, w, _)| bad > w) {
            self.worst = Some((s, bad, all));
        }
    }

    /// One line on the spread (after [`Seconds::fold`]), or `None` if no cycle was
    /// incomplete.
    pub fn line(&self) -> Option<String> {
        let (at, bad, all) = self.worst?;
        // One second holding most of them is a burst too, even below a tenth of its cycles.
        let concentrated = bad * 2 > self.incomplete && self.seconds > 1;
        let pattern = if self.bursts == 0 && !concentrated {
            "spread thinly over the run"
        } else if self.bursts * 2 < self.seconds {
            "in bursts: look for a stall (the machine's host, the other side, a cable) rather than a cycle too short for the line"
        } else {
            "in most seconds: the cycle may be too short for the line"
        };
        Some(format!(
            "incomplete cycles by second: {} of {} seconds had none, {} had more than 10 %, the worst (second {}) {} of {} cycles; {pattern}",
            self.clean, self.seconds, self.bursts, at + 1, bad, all
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `per_second[i]` = (cycles, incomplete) of second i.
    fn run(per_second: &[(u64, u64)]) -> Seconds {
        let mut s = Seconds::default();
        for (sec, &(all, bad)) in per_second.iter().enumerate() {
            for c in 0..all {
                s.record(sec as u64, c < bad);
            }
        }
        s.fold();
        s
    }

    #[test]
    fn a_run_without_incomplete_cycles_says_nothing() {
        assert_eq!(run(&[(1000, 0), (1000, 0)]).line(), None);
    }

    #[test]
    fn a_burst_between_clean_seconds_is_called_a_stall() {
        let s = run(&[(1000, 0), (1000, 4), (1000, 0), (1000, 566), (1000, 3)]);
        let line = s.line().unwrap();
        assert!(
            line.contains("2 of 5 seconds had none, 1 had more than 10 %"),
            "{line}"
        );
        assert!(
            line.contains("the worst (second 4) 566 of 1000 cycles"),
            "{line}"
        );
        assert!(line.contains("in bursts"), "{line}");
    }

    #[test]
    fn a_steady_loss_is_told_from_a_burst() {
        let thin = run(&[(1000, 2), (1000, 1), (1000, 3)]).line().unwrap();
        assert!(thin.contains("spread thinly"), "{thin}");
        // 77 of 1000 is below a tenth, but it is most of the run's.
        let one = run(&[(1000, 2), (1000, 77), (1000, 3), (1000, 0)])
            .line()
            .unwrap();
        assert!(
            one.contains("0 had more than 10 %") && one.contains("in bursts"),
            "{one}"
        );
        let most = run(&[(1000, 200), (1000, 300), (1000, 0)]).line().unwrap();
        assert!(most.contains("in most seconds"), "{most}");
    }

    #[test]
    fn the_last_second_counts_once_folded() {
        let mut s = Seconds::default();
        s.record(0, true);
        assert_eq!(s.line(), None, "nothing finished yet");
        s.fold();
        s.fold();
        assert!(s.line().unwrap().contains("0 of 1 seconds had none"));
    }
}
