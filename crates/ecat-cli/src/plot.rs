//! SVG histograms of the measured figures (`ecat run --plot DIR`): one file per figure, bars
//! over linear buckets between the minimum and 1.2 × the 99th percentile (the slower samples
//! are counted in the title), log-free and self-contained so any browser shows them.

use ecat::perf::{Figure, Metric};
use std::fmt::Write;
use std::path::Path;

/// Write one SVG per figure that has samples into `dir` (created if needed). Returns the files.
pub fn write_all(
    dir: &Path,
    figures: &[(Metric, &Figure)],
    title: &str,
) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for (m, f) in figures {
        if f.count() == 0 {
            continue;
        }
        let path = dir.join(format!("{}.svg", m.key()));
        std::fs::write(&path, svg(*m, f, title))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        files.push(path.display().to_string());
    }
    Ok(files)
}

/// The SVG text for one figure.
pub fn svg(m: Metric, f: &Figure, title: &str) -> String {
    let s = f.summary();
    let lo = s.min;
    let hi = (f.quantile(0.99) * 6 / 5).max(lo + 1);
    let nbins = 60u64;
    let width = (hi - lo).div_ceil(nbins).max(1);
    let mut bins = vec![0u64; nbins as usize];
    let mut above = 0u64;
    for (upper, count) in f.buckets(1.max(width / 4)) {
        if upper > hi {
            above += count;
            continue;
        }
        let b = ((upper.saturating_sub(lo)) / width).min(nbins - 1) as usize;
        bins[b] += count;
    }
    let peak = bins.iter().copied().max().unwrap_or(1).max(1);
    let (w, h, left, bottom) = (720.0, 360.0, 60.0, 40.0);
    let plot_w = w - left - 20.0;
    let plot_h = h - bottom - 50.0;
    let bw = plot_w / nbins as f64;
    let unit = |ns: u64| format!("{:.1}", ns as f64 / 1000.0);
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"18\" font-size=\"14\">{} — {title}</text>\n\
         <text x=\"{left}\" y=\"34\">n {} · min {} · median {} · p99 {} · max {} µs{}</text>\n",
        m.label(),
        s.count,
        unit(s.min),
        unit(s.p50),
        unit(s.p99),
        unit(s.max),
        if above > 0 { format!(" · {above} above the plot") } else { String::new() }
    );
    for (i, &c) in bins.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let bh = plot_h * c as f64 / peak as f64;
        let x = left + i as f64 * bw;
        let y = h - bottom - bh;
        let _ = writeln!(
            o,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"#3b6ea8\"><title>{} µs: {c}</title></rect>",
            (bw - 1.0).max(1.0),
            unit(lo + i as u64 * width)
        );
    }
    let axis_y = h - bottom;
    let _ = writeln!(
        o,
        "<line x1=\"{left}\" y1=\"{axis_y}\" x2=\"{}\" y2=\"{axis_y}\" stroke=\"black\"/>",
        w - 20.0
    );
    for k in 0..=4u64 {
        let x = left + plot_w * k as f64 / 4.0;
        let v = lo + (hi - lo) * k / 4;
        let _ = writeln!(
            o,
            "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            axis_y + 16.0,
            unit(v)
        );
    }
    let _ = writeln!(
        o,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">µs</text>",
        left + plot_w / 2.0,
        axis_y + 32.0
    );
    let _ = writeln!(
        o,
        "<text x=\"12\" y=\"{}\" transform=\"rotate(-90 12 {})\">cycles (peak {peak})</text>",
        h / 2.0,
        h / 2.0
    );
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_has_bars_and_labels() {
        let mut f = Figure::default();
        for i in 0..1000u64 {
            f.record(990_000 + (i % 20) * 1000);
        }
        let t = svg(Metric::CycleTime, &f, "test");
        assert!(t.starts_with("<svg") && t.trim_end().ends_with("</svg>"));
        assert!(t.contains("<rect x="), "{t}");
        assert!(t.contains("Cycle Time"));
        assert!(t.contains("n 1000"));
    }
}
