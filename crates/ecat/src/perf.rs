//! Performance measurement: the figures users of EtherCAT masters report.
//!
//! Definitions (ARCHITECTURE §7): cycle time (between consecutive wake-ups), wake-up latency
//! (wake-up minus the scheduled time), task duration (wake-up to end of send) split into jobs
//! (process received frames, application, send cyclic frames, acyclic work), the round trip
//! of the cyclic frames, and wake-up to data back (the whole exchange: wake-up until the
//! cyclic frames are back with their inputs in the images). Each [`Figure`] keeps
//! min/max/sum/sum of squares and an HDR histogram (3 significant digits up to 10 s), so
//! medians and p99 are exact enough and recording never allocates. [`Perf`] keeps every
//! figure twice: for the current report window (reset at each report, printed as `PerfMsmt`
//! lines) and for the whole run, plus the worst case of every minute so that 12-hour runs
//! keep flat memory (60 numbers per hour and figure).

use hdrhistogram::Histogram;
use std::fmt::Write;

/// The figures, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Interval between consecutive wake-ups.
    CycleTime = 0,
    /// Wake-up time minus scheduled time.
    WakeLatency,
    /// Wake-up to end of send.
    TaskDuration,
    /// Processing the frames received (inputs into the images, domain states).
    JobReceive,
    /// The application's work on the process data.
    JobApp,
    /// Sending the cyclic frames.
    JobSendCyclic,
    /// Acyclic work: supervisor step and the acyclic frame.
    JobAcyclic,
    /// Cyclic frames: handed to the link until seen back.
    RoundTrip,
    /// Distributed clocks: upper bound of the largest |system time difference| (sync monitor).
    DcSyncMonitor,
    /// Wake-up until every cyclic frame of the cycle is back and its inputs are in the domain
    /// images: the whole exchange, comparable with a `tx_rx`-style master's cycle.
    DataBack,
}

/// Number of metrics.
pub const METRICS: usize = 10;

impl Metric {
    /// Every metric.
    pub const ALL: [Metric; METRICS] = [
        Metric::CycleTime,
        Metric::WakeLatency,
        Metric::TaskDuration,
        Metric::JobReceive,
        Metric::JobApp,
        Metric::JobSendCyclic,
        Metric::JobAcyclic,
        Metric::RoundTrip,
        Metric::DcSyncMonitor,
        Metric::DataBack,
    ];

    /// The name in `PerfMsmt` lines.
    pub fn label(self) -> &'static str {
        match self {
            Metric::CycleTime => "Cycle Time",
            Metric::WakeLatency => "Wake-up Latency",
            Metric::TaskDuration => "Task Duration",
            Metric::JobReceive => "JOB_ProcessAllRxFrames",
            Metric::JobApp => "App",
            Metric::JobSendCyclic => "JOB_SendAllCycFrames",
            Metric::JobAcyclic => "JOB_SendAcycFrames",
            Metric::RoundTrip => "RoundTrip (TX+RX)",
            Metric::DcSyncMonitor => "DC Sync Monitor (max |system time difference|)",
            Metric::DataBack => "Wake-up to Data Back",
        }
    }

    /// The key in JSON output.
    pub fn key(self) -> &'static str {
        match self {
            Metric::CycleTime => "cycle_time",
            Metric::WakeLatency => "wake_latency",
            Metric::TaskDuration => "task_duration",
            Metric::JobReceive => "job_receive",
            Metric::JobApp => "job_app",
            Metric::JobSendCyclic => "job_send_cyclic",
            Metric::JobAcyclic => "job_acyclic",
            Metric::RoundTrip => "round_trip",
            Metric::DcSyncMonitor => "dc_sync_monitor",
            Metric::DataBack => "wake_to_data_back",
        }
    }
}

/// Summary of one figure, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Summary {
    /// Samples.
    pub count: u64,
    /// Minimum.
    pub min: u64,
    /// Mean.
    pub avg: f64,
    /// Maximum.
    pub max: u64,
    /// Standard deviation.
    pub std: f64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
}

impl Summary {
    /// The seed's line form: `PerfMsmt 'Cycle Time' (min/avg/max) [usec]: 989.4/1000.0/1011.4`,
    /// followed by standard deviation and p99.
    pub fn perfmsmt(&self, label: &str) -> String {
        let us = |ns: f64| ns / 1000.0;
        format!(
            "PerfMsmt '{label}' (min/avg/max) [usec]: {:.1}/{:.1}/{:.1} (std {:.1}, p99 {:.1}, n {})",
            us(self.min as f64),
            us(self.avg),
            us(self.max as f64),
            us(self.std),
            us(self.p99 as f64),
            self.count
        )
    }
}

/// One measured figure.
#[derive(Debug, Clone)]
pub struct Figure {
    hist: Histogram<u64>,
    min: u64,
    max: u64,
    sum: f64,
    sumsq: f64,
}

const HIGHEST_NS: u64 = 10_000_000_000;

impl Default for Figure {
    fn default() -> Self {
        Figure {
            hist: Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("valid histogram bounds"),
            min: u64::MAX,
            max: 0,
            sum: 0.0,
            sumsq: 0.0,
        }
    }
}

impl Figure {
    /// Record one sample (ns). Never allocates.
    pub fn record(&mut self, ns: u64) {
        let v = ns.clamp(1, HIGHEST_NS);
        let _ = self.hist.record(v);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        let f = ns as f64;
        self.sum += f;
        self.sumsq += f * f;
    }

    /// Forget every sample.
    pub fn reset(&mut self) {
        self.hist.reset();
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0.0;
        self.sumsq = 0.0;
    }

    /// Samples so far.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Largest sample.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The summary.
    pub fn summary(&self) -> Summary {
        let n = self.hist.len();
        if n == 0 {
            return Summary::default();
        }
        let avg = self.sum / n as f64;
        let var = (self.sumsq / n as f64 - avg * avg).max(0.0);
        Summary {
            count: n,
            min: self.min,
            avg,
            max: self.max,
            std: var.sqrt(),
            p50: self.hist.value_at_quantile(0.5),
            p99: self.hist.value_at_quantile(0.99),
        }
    }

    /// The value at quantile `q` (0..1).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.hist.is_empty() {
            0
        } else {
            self.hist.value_at_quantile(q)
        }
    }

    /// Histogram buckets for plotting: (upper bound ns, count) with non-empty buckets only.
    pub fn buckets(&self, bucket_ns: u64) -> Vec<(u64, u64)> {
        self.hist
            .iter_linear(bucket_ns.max(1))
            .filter(|v| v.count_since_last_iteration() > 0)
            .map(|v| (v.value_iterated_to(), v.count_since_last_iteration()))
            .collect()
    }
}

/// All figures of a run: the report window, the whole run, and per-minute worst cases.
#[derive(Debug, Clone)]
pub struct Perf {
    window: Vec<Figure>,
    total: Vec<Figure>,
    minute_max: [u64; METRICS],
    minute_start_ns: u64,
    minutes: Vec<[u64; METRICS]>,
}

impl Default for Perf {
    fn default() -> Self {
        Self::new()
    }
}

impl Perf {
    /// Empty measurements.
    pub fn new() -> Perf {
        Perf {
            window: (0..METRICS).map(|_| Figure::default()).collect(),
            total: (0..METRICS).map(|_| Figure::default()).collect(),
            minute_max: [0; METRICS],
            minute_start_ns: 0,
            minutes: Vec::with_capacity(60 * 24),
        }
    }

    /// Record a sample of `m`.
    pub fn record(&mut self, m: Metric, ns: u64) {
        self.window[m as usize].record(ns);
        self.total[m as usize].record(ns);
        let w = &mut self.minute_max[m as usize];
        *w = (*w).max(ns);
    }

    /// Close the minute if `now_ns` is past it (call once per cycle).
    pub fn tick(&mut self, now_ns: u64) {
        if self.minute_start_ns == 0 {
            self.minute_start_ns = now_ns;
        } else if now_ns - self.minute_start_ns >= 60_000_000_000 {
            self.minutes.push(self.minute_max);
            self.minute_max = [0; METRICS];
            self.minute_start_ns = now_ns;
        }
    }

    /// Summaries of the current window, then reset the window.
    pub fn take_window(&mut self) -> [Summary; METRICS] {
        let s = core::array::from_fn(|i| self.window[i].summary());
        self.window.iter_mut().for_each(Figure::reset);
        s
    }

    /// Summary of the whole run for `m`.
    pub fn total(&self, m: Metric) -> Summary {
        self.total[m as usize].summary()
    }

    /// The whole-run figure (for histograms).
    pub fn figure(&self, m: Metric) -> &Figure {
        &self.total[m as usize]
    }

    /// Worst case of every completed minute, per metric.
    pub fn minutes(&self) -> &[[u64; METRICS]] {
        &self.minutes
    }

    /// The `PerfMsmt` lines for a set of summaries (skipping figures without samples).
    pub fn lines(s: &[Summary; METRICS]) -> String {
        let mut o = String::new();
        for m in Metric::ALL {
            let x = &s[m as usize];
            if x.count > 0 && m == Metric::DcSyncMonitor {
                let _ = writeln!(
                    o,
                    "PerfMsmt '{}' (min/avg/max) [nsec]: {}/{:.1}/{}",
                    m.label(),
                    x.min,
                    x.avg,
                    x.max
                );
            } else if x.count > 0 {
                let _ = writeln!(o, "{}", x.perfmsmt(m.label()));
            }
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_and_line() {
        let mut f = Figure::default();
        for v in [989_400u64, 1_000_000, 1_011_400] {
            f.record(v);
        }
        let s = f.summary();
        assert_eq!((s.min, s.max, s.count), (989_400, 1_011_400, 3));
        assert!((s.avg - 1_000_266.7).abs() < 1.0);
        assert!(s.std > 8_000.0 && s.std < 10_000.0, "{}", s.std);
        let line = s.perfmsmt("Cycle Time");
        assert!(
            line.starts_with("PerfMsmt 'Cycle Time' (min/avg/max) [usec]: 989.4/1000.3/1011.4"),
            "{line}"
        );
    }

    #[test]
    fn window_resets_total_keeps() {
        let mut p = Perf::new();
        p.record(Metric::RoundTrip, 50_000);
        let w = p.take_window();
        assert_eq!(w[Metric::RoundTrip as usize].count, 1);
        assert_eq!(p.take_window()[Metric::RoundTrip as usize].count, 0);
        assert_eq!(p.total(Metric::RoundTrip).count, 1);
        assert!(Perf::lines(&w).contains("RoundTrip (TX+RX)"));
    }

    #[test]
    fn minutes_close() {
        let mut p = Perf::new();
        p.tick(1);
        p.record(Metric::TaskDuration, 7);
        p.tick(60_000_000_002);
        p.record(Metric::TaskDuration, 3);
        assert_eq!(p.minutes().len(), 1);
        assert_eq!(p.minutes()[0][Metric::TaskDuration as usize], 7);
    }
}
