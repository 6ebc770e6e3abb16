//! The bench's tables: one per simulated peer, each row a median of the rounds' medians with
//! its spread, four ratios (each named exactly in the legend), seed 003's line-up for the best
//! link, and how the figures compare with the targets the project set itself (reported, never
//! asserted). The JSON form is in `json`.

use super::mincycle::MinCycle;
use super::rounds::{ratio, ratio_per_round, Agg, Fig, Spread};
use ecat::perf::{Metric, Summary};

/// The ratios of a row, in table order.
pub const RATIOS: [&str; 4] = ["rtt/floor", "wake/timer", "task/crab", "back/crab"];

/// The legend: what the figures are and, one line per ratio, what is divided by what.
pub fn legend(rounds: usize) -> String {
    format!(
        "figures in µs over {rounds} round(s): p50 = median of the rounds' medians, ±x% = the largest distance of one round's median from it, p99 = median of the rounds' p99s, max = largest sample of any round; lost/cycles, wkc/ovr summed over the rounds
ratios (each is the median over the rounds of one row's median divided by another row's median in the same round):
  rtt/floor  = the row's round trip / the echo floor's (echo frames of the same size, same link, same peer thread, same receive mode): an ecat row's own floor, measured in the same thread in 50 ms windows alternating with its cycle (column 'own floor'; on the xdp rows the echo frames pass ecat's XDP program, which hands them to the kernel, and a veth with an XDP program receives through NAPI: their floor was about 1-2 µs above the raw rows' own floors, flattering the xdp ratios by up to about 10 %); ethercrab's, the floor echo row with its receive mode
  wake/timer = the row's wake-up latency / the bare timer's wake-up latency
  task/crab  = ecat's task duration (wake-up to end of send) / ethercrab's wake-up to data back (wake-up to tx_rx done, which includes the round trip; not like for like)
  back/crab  = ecat's wake-up to data back (wake-up until every cyclic frame is back with its inputs in the images) / ethercrab's wake-up to data back (like for like)
"
    )
}

/// The floor a row's round trip is compared with, by name.
fn floor_of(row: &Agg) -> &'static str {
    if row.busy() {
        "floor echo busy"
    } else {
        "floor echo"
    }
}

/// The row named `name`, if it ran.
pub fn find<'a>(rows: &'a [Agg], name: &str) -> Option<&'a Agg> {
    rows.iter().find(|r| r.name == name && r.available())
}

/// What each ratio divides: (row figure, reference row, reference figure), the reference
/// `None` for the row itself; `None` when the ratio does not apply to the row. An ecat row's
/// round trip is divided by its own floor (measured alternating with it), ethercrab's by the
/// echo floor row with the same receive mode.
pub fn ratio_terms(r: &Agg) -> [Option<(Fig, Option<&'static str>, Fig)>; 4] {
    let is_ecat = r.name.starts_with("ecat ");
    let rtt = if is_ecat {
        Some((Fig::RoundTrip, None, Fig::Floor))
    } else {
        (r.name == "ethercrab").then_some((Fig::RoundTrip, Some(floor_of(r)), Fig::RoundTrip))
    };
    [
        rtt,
        (r.name != "bare timer").then_some((Fig::Wake, Some("bare timer"), Fig::Wake)),
        is_ecat.then_some((Fig::Task, Some("ethercrab"), Fig::Back)),
        is_ecat.then_some((Fig::Back, Some("ethercrab"), Fig::Back)),
    ]
}

/// The reference row of a ratio: the row itself, or the row named so if it ran.
fn reference<'a>(rows: &'a [Agg], r: &'a Agg, name: Option<&str>) -> Option<&'a Agg> {
    match name {
        None => Some(r),
        Some(n) => find(rows, n),
    }
}

/// The four ratios of a row (medians of the rounds' ratios), `None` where they do not apply
/// or a side did not run.
pub fn ratios(rows: &[Agg], r: &Agg) -> [Option<f64>; 4] {
    ratio_terms(r).map(|t| t.and_then(|(fa, b, fb)| ratio(r, fa, reference(rows, r, b), fb)))
}

/// `p50±x% p99/max` in µs.
pub fn cell(s: Option<Spread>) -> String {
    match s {
        Some(s) => format!(
            "{:.1}±{:.0}% {:.1}/{:.0}",
            s.p50 / 1e3,
            s.pct(),
            s.p99 / 1e3,
            s.max as f64 / 1e3
        ),
        None => "-".into(),
    }
}

fn x(r: Option<f64>) -> String {
    r.map_or("-".into(), |v| format!("{v:.2}x"))
}

/// The table, one line per row.
pub fn table(rows: &[Agg]) -> String {
    let mut o = format!(
        "{:<16} {:>22} {:>22} {:>22} {:>22} {:>22} {:>13} {:>9} {:>9} {:>10} {:>9} {:>9}\n",
        "row",
        "round trip µs",
        "own floor µs",
        "wake-up latency µs",
        "task µs",
        "wake-up to data back",
        "lost/cycles",
        "wkc/ovr",
        RATIOS[0],
        RATIOS[1],
        RATIOS[2],
        RATIOS[3]
    );
    let h = "p50±spread p99/max";
    o.push_str(&format!(
        "{:<16} {h:>22} {h:>22} {h:>22} {h:>22} {h:>22}\n",
        ""
    ));
    for r in rows {
        if !r.available() {
            o.push_str(&format!("{:<16} not available ({})\n", r.name, r.why_not()));
            continue;
        }
        let [a, b, c, d] = ratios(rows, r);
        o.push_str(&format!(
            "{:<16} {:>22} {:>22} {:>22} {:>22} {:>22} {:>13} {:>9} {:>9} {:>10} {:>9} {:>9}\n",
            r.name,
            cell(r.fig(Fig::RoundTrip)),
            cell(r.fig(Fig::Floor)),
            cell(r.fig(Fig::Wake)),
            cell(r.fig(Fig::Task)),
            cell(r.fig(Fig::Back)),
            format!("{}/{}", r.sum(|r| r.frames_lost), r.sum(|r| r.cycles)),
            format!("{}/{}", r.sum(|r| r.wkc_errors), r.sum(|r| r.overruns)),
            x(a),
            x(b),
            x(c),
            x(d)
        ));
    }
    o
}

/// One line for each round in which a row that ran elsewhere could not run, with the reason.
pub fn missed_rounds(rows: &[Agg]) -> String {
    let mut o = String::new();
    for r in rows.iter().filter(|r| r.available()) {
        for (i, x) in r.rounds.iter().enumerate().filter(|(_, x)| !x.available) {
            o.push_str(&format!(
                "{}: round {} not run ({})\n",
                r.name,
                i + 1,
                x.note
            ));
        }
    }
    o
}

/// The best ecat row: the lowest round trip over its own echo floor (the median of the
/// rounds' ratios), among the rows that have one; without any, the lowest median of medians
/// of the round trip. Not the fastest raw round trip: the fastest links are within a few per
/// cent of each other, so that choice flipped between links from run to run, and with it the
/// best link's ratio (by up to 20 %), while each link's own ratio held still.
pub fn best(rows: &[Agg]) -> Option<&Agg> {
    let ecat = || {
        rows.iter()
            .filter(|r| r.name.starts_with("ecat ") && r.fig(Fig::RoundTrip).is_some())
    };
    let by_ratio = ecat()
        .filter_map(|r| Some((r, ratios(rows, r)[0]?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(r, _)| r);
    by_ratio.or_else(|| {
        ecat().min_by(|a, b| {
            let p = |r: &Agg| r.fig(Fig::RoundTrip).map_or(f64::MAX, |s| s.p50);
            p(a).total_cmp(&p(b))
        })
    })
}

/// How often the peer threads behind a table's rows were preempted: (involuntary context
/// switches per second of serving, switches, seconds), over every row and round that had a
/// peer; `None` without one.
pub fn peer_preempted(rows: &[Agg]) -> Option<(f64, u64, f64)> {
    let n: u64 = rows.iter().map(|r| r.sum(|x| x.peer_preempted)).sum();
    let ns: u64 = rows.iter().map(|r| r.sum(|x| x.peer_ns)).sum();
    (ns > 0).then(|| {
        let s = ns as f64 / 1e9;
        (n as f64 / s, n, s)
    })
}

/// One line on how often the peer was preempted while it served the table's rows.
pub fn peer_preempted_text(rows: &[Agg]) -> String {
    match peer_preempted(rows) {
        Some((per_s, n, s)) => format!(
            "peer preempted {per_s:.1} times per second ({n} involuntary context switches of its thread in {s:.1} s serving this table's rows; each one can hold a frame back by a scheduler slice)\n"
        ),
        None => String::new(),
    }
}

/// Seed 003's figures for one row (the round whose median round trip is the median of
/// medians), in `PerfMsmt` form with the seed's abbreviations.
pub fn seed003(r: &Agg) -> String {
    let Some(round) = r.median_round(Fig::RoundTrip) else {
        return String::new();
    };
    let Some(p) = &round.perf else {
        return String::new();
    };
    let mut o = format!(
        "seed 003 line-up on {} ({}), its median round:\n",
        r.name, round.link
    );
    for (abbr, m) in [
        ("CRX ", Metric::JobReceive),
        ("CPR ", Metric::JobApp),
        ("CTX ", Metric::JobSendCyclic),
        ("ATSK", Metric::JobAcyclic),
        ("CTSK", Metric::TaskDuration),
        ("RTT ", Metric::RoundTrip),
        ("BACK", Metric::DataBack),
        ("TJ  ", Metric::WakeLatency),
        ("    ", Metric::CycleTime),
    ] {
        o.push_str(&format!("  {abbr} {}\n", p[m as usize].perfmsmt(m.label())));
    }
    o
}

/// One target: what, the measured value, the limit, whether it is met, and the value round
/// by round (ratios only).
#[derive(Debug, Clone)]
pub struct Target {
    /// What is compared.
    pub what: String,
    /// The measured value (a median of the rounds' ratios, or µs).
    pub value: Option<f64>,
    /// The limit it should not exceed.
    pub limit: f64,
    /// `value <= limit`.
    pub met: bool,
    /// The same ratio in each round (`None` where a side did not run).
    pub per_round: Vec<Option<f64>>,
}

fn push(
    t: &mut Vec<Target>,
    what: String,
    value: Option<f64>,
    limit: f64,
    per_round: Vec<Option<f64>>,
) {
    t.push(Target {
        what,
        value,
        limit,
        met: value.is_some_and(|v| v <= limit),
        per_round,
    });
}

/// Ratio `i` of row `r` in each round.
pub fn ratio_rounds(rows: &[Agg], r: &Agg, i: usize) -> Vec<Option<f64>> {
    ratio_terms(r)[i].map_or(vec![None; r.rounds.len()], |(fa, b, fb)| {
        ratio_per_round(r, fa, reference(rows, r, b), fb)
    })
}

/// The targets of one peer's table, each with the measured value and whether it is met.
pub fn targets(rows: &[Agg], min: &[MinCycle]) -> Vec<Target> {
    let mut t = Vec::new();
    let Some(b) = best(rows) else {
        return t;
    };
    let [rtt, wake, task, _] = ratios(rows, b);
    push(
        &mut t,
        format!(
            "round trip on the best link ({}, the lowest ratio) vs its own echo floor",
            b.name
        ),
        rtt,
        1.5,
        ratio_rounds(rows, b, 0),
    );
    // Every link against its own floor, the worst named beside the best.
    if let Some((w, v)) = rows
        .iter()
        .filter(|r| r.name.starts_with("ecat "))
        .filter_map(|r| Some((r, ratios(rows, r)[0]?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
    {
        push(
            &mut t,
            format!("round trip vs its own echo floor, worst link ({})", w.name),
            Some(v),
            1.5,
            ratio_rounds(rows, w, 0),
        );
    }
    push(
        &mut t,
        format!(
            "task duration ({}) vs ethercrab's wake-up to data back",
            b.name
        ),
        task,
        0.5,
        ratio_rounds(rows, b, 2),
    );
    push(
        &mut t,
        format!("wake-up latency ({}) vs the bare timer", b.name),
        wake,
        1.2,
        ratio_rounds(rows, b, 1),
    );
    if let Some(m) = min
        .iter()
        .filter(|m| m.name.starts_with("ecat ") && m.min_stable_ns.is_some())
        .min_by_key(|m| m.min_stable_ns)
    {
        push(
            &mut t,
            format!("smallest stable cycle in µs ({})", m.name),
            m.min_stable_ns.map(|n| n as f64 / 1e3),
            100.0,
            Vec::new(),
        );
    }
    t
}

/// Every ecat row's round trip over its own floor, one line.
pub fn links_text(rows: &[Agg]) -> String {
    let v: Vec<String> = rows
        .iter()
        .filter(|r| r.name.starts_with("ecat "))
        .map(|r| {
            let x = ratios(rows, r)[0];
            format!("{} {}", r.name, x.map_or("-".into(), |v| format!("{v:.2}")))
        })
        .collect();
    format!(
        "  round trip vs its own echo floor, every link: {}\n",
        v.join(", ")
    )
}

/// The targets as text.
pub fn targets_text(title: &str, t: &[Target]) -> String {
    let mut o =
        format!("targets, {title} (medians of the rounds' ratios; reported, not asserted):\n");
    for x in t {
        let rounds: Vec<String> = x
            .per_round
            .iter()
            .map(|v| v.map_or("-".into(), |v| format!("{v:.2}")))
            .collect();
        o.push_str(&format!(
            "  {}: {}{} (target ≤ {}) {}\n",
            x.what,
            x.value.map_or("n/a".into(), |v| format!("{v:.2}")),
            if rounds.is_empty() {
                String::new()
            } else {
                format!(" (rounds {})", rounds.join(", "))
            },
            x.limit,
            if x.met { "met" } else { "NOT met" }
        ));
    }
    o
}

/// A summary in µs for the JSON (`null` without one).
pub fn summary_json(s: &Option<Summary>) -> serde_json::Value {
    match s {
        Some(s) => serde_json::json!({
            "count": s.count,
            "p50_us": s.p50 as f64 / 1e3,
            "p99_us": s.p99 as f64 / 1e3,
            "max_us": s.max as f64 / 1e3,
            "min_us": s.min as f64 / 1e3,
            "avg_us": s.avg / 1e3,
        }),
        None => serde_json::Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::bench::row::Row;

    /// A row figure with every percentile at `p50`; 0: not measured.
    fn summary(p50: u64) -> Option<Summary> {
        (p50 > 0).then_some(Summary {
            count: 100,
            p50,
            p99: p50,
            max: p50,
            ..Default::default()
        })
    }

    fn agg(name: &str, busy: bool, rtt: u64, back: u64) -> Agg {
        let s = summary;
        Agg {
            name: name.into(),
            rounds: vec![Row {
                name: name.into(),
                available: true,
                busy,
                cycles: 100,
                round_trip: s(rtt),
                wake: s(10_000),
                task: s(back / 4),
                back: s(back),
                // An ecat row's own floor: the same as the floor echo busy row here.
                floor: s(if name.starts_with("ecat ") { 40_000 } else { 0 }),
                ..Default::default()
            }],
        }
    }

    /// An ecat row over rounds of (round trip, own floor) medians; floor 0: none measured.
    fn link(name: &str, rounds: &[(u64, u64)]) -> Agg {
        let s = summary;
        Agg {
            name: name.into(),
            rounds: rounds
                .iter()
                .map(|&(rtt, floor)| Row {
                    name: name.into(),
                    available: true,
                    cycles: 100,
                    round_trip: s(rtt),
                    floor: s(floor),
                    ..Default::default()
                })
                .collect(),
        }
    }

    #[test]
    fn the_best_link_has_the_lowest_ratio_to_its_own_floor_not_the_fastest_round_trip() {
        let rows = vec![
            // Fastest round trip, but 1.4x its floor in every round.
            link(
                "ecat raw busy",
                &[(28_000, 20_000), (28_000, 20_000), (28_000, 20_000)],
            ),
            // Slower, but its ratios are 1.2, 1.1 and 1.6: median 1.2.
            link(
                "ecat mmap",
                &[(36_000, 30_000), (33_000, 30_000), (48_000, 30_000)],
            ),
            // A row whose floor never ran has no ratio and is not chosen by it.
            link("ecat xdp", &[(20_000, 0), (20_000, 0), (20_000, 0)]),
            agg("floor echo", false, 10_000, 0),
        ];
        assert_eq!(best(&rows).unwrap().name, "ecat mmap");
        let tg = targets(&rows, &[]);
        assert!(tg[0].what.contains("best link (ecat mmap"), "{tg:?}");
        assert_eq!(tg[0].value, Some(1.2));
        assert!(tg[1].what.contains("worst link (ecat raw busy)"), "{tg:?}");
        // Without any own floor the lowest round trip is the best.
        let bare = vec![
            link("ecat raw", &[(30_000, 0)]),
            link("ecat xdp", &[(20_000, 0)]),
        ];
        assert_eq!(best(&bare).unwrap().name, "ecat xdp");
        assert!(best(&rows[3..]).is_none());
    }

    #[test]
    fn peer_preemption_is_counted_per_second_of_serving_over_every_row_and_round() {
        let mut a = link("ecat raw", &[(30_000, 20_000), (30_000, 20_000)]);
        let mut b = agg("floor echo", false, 10_000, 0);
        assert_eq!(peer_preempted(&[a.clone(), b.clone()]), None);
        assert_eq!(peer_preempted_text(&[a.clone()]), "");
        for (r, n) in a.rounds.iter_mut().zip([30, 10]) {
            (r.peer_preempted, r.peer_ns) = (n, 1_500_000_000);
        }
        (b.rounds[0].peer_preempted, b.rounds[0].peer_ns) = (20, 1_000_000_000);
        // A round that did not run does not count.
        a.rounds.push(Row {
            peer_preempted: 1000,
            peer_ns: 1_000_000_000,
            ..Default::default()
        });
        let rows = [a, b];
        assert_eq!(peer_preempted(&rows), Some((15.0, 60, 4.0)));
        assert!(peer_preempted_text(&rows).starts_with("peer preempted 15.0 times per second (60 "));
    }

    #[test]
    fn ratios_divide_the_named_figures() {
        let rows = vec![
            agg("floor echo", false, 50_000, 0),
            agg("floor echo busy", true, 40_000, 0),
            agg("bare timer", false, 0, 0),
            agg("ecat raw busy", true, 60_000, 80_000),
            agg("ethercrab", false, 100_000, 100_000),
        ];
        let r = ratios(&rows, &rows[3]);
        assert_eq!(r, [Some(1.5), Some(1.0), Some(0.2), Some(0.8)]);
        assert_eq!(ratios(&rows, &rows[4]), [Some(2.0), Some(1.0), None, None]);
        assert_eq!(best(&rows).unwrap().name, "ecat raw busy");
        let t = table(&rows);
        let line = t.lines().find(|l| l.starts_with("ecat raw busy")).unwrap();
        let cells: Vec<&str> = line.split_whitespace().collect();
        // Round trip, then the row's own floor.
        assert_eq!(
            cells[3..7],
            ["60.0±0%", "60.0/60", "40.0±0%", "40.0/40"],
            "{t}"
        );
        assert!(t.contains("0.80x"), "{t}");
        for name in RATIOS {
            assert!(legend(3).contains(&format!("  {name} ")), "{name}");
        }
        let tg = targets(&rows, &[]);
        let worst = tg
            .iter()
            .find(|x| x.what.contains("worst link (ecat raw busy)"));
        assert_eq!(worst.and_then(|x| x.value), Some(1.5), "{tg:?}");
        assert!(links_text(&rows).contains("every link: ecat raw busy 1.50"));
    }
}
