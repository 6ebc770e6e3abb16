//! Parse time and peak memory of the ESI reader on the largest Beckhoff ESI file:
//! `cargo run --release -p ecat-config --example esi_parse_bench [FILE]`.
//!
//! Peak memory is counted by a global allocator that wraps the system one and tracks live
//! bytes; it covers the file text, the XML DOM and the parsed model. Figures only, no limits.

use ecat_config::EsiFile;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn largest_beckhoff_file() -> Option<PathBuf> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dirs = [
        repo.join("../shared/testdata/esi"),
        repo.join("../../shared/testdata/esi"),
        repo.join("testdata/esi"),
    ];
    let dir = dirs.iter().find(|d| d.is_dir())?;
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("Beckhoff_"))
        .max_by_key(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
        .map(|e| e.path())
}

fn mib(b: usize) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn main() {
    let path = match std::env::args().nth(1) {
        Some(p) => PathBuf::from(p),
        None => match largest_beckhoff_file() {
            Some(p) => p,
            None => {
                eprintln!("no Beckhoff ESI file found; pass one as the argument");
                std::process::exit(1);
            }
        },
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            std::process::exit(1);
        }
    };
    let name = path.display().to_string();
    let rounds = 9;
    let mut times = Vec::new();
    let mut devices = 0;
    let mut objects = 0;
    let mut peak = 0;
    let mut model = 0;
    for _ in 0..rounds {
        let base = LIVE.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let t = Instant::now();
        let f = match EsiFile::parse_bytes(&bytes, &name) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        times.push(t.elapsed());
        peak = PEAK.load(Ordering::Relaxed) - base;
        model = LIVE.load(Ordering::Relaxed) - base;
        devices = f.devices.len();
        objects = f
            .devices
            .iter()
            .filter_map(|d| d.dictionary.as_ref())
            .map(|d| d.objects.len())
            .sum();
        drop(f);
    }
    times.sort();
    // The XML DOM alone, for comparison.
    let text = ecat_config::esi::decode(&bytes);
    let mut dom = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let doc = roxmltree::Document::parse(&text).map(|d| d.descendants().count());
        dom.push(t.elapsed());
        drop(doc);
    }
    dom.sort();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "{}: {:.2} MiB, {devices} devices, {objects} dictionary objects",
        path.file_name().unwrap_or_default().to_string_lossy(),
        mib(bytes.len())
    );
    println!(
        "parse time over {rounds} rounds: median {:.1} ms (min {:.1}, max {:.1})",
        ms(times[rounds / 2]),
        ms(times[0]),
        ms(times[rounds - 1])
    );
    println!(
        "  of which building the XML DOM (roxmltree): median {:.1} ms",
        ms(dom[rounds / 2])
    );
    println!(
        "peak heap during a parse: {:.1} MiB ({:.1}x the file); parsed model kept: {:.1} MiB",
        mib(peak),
        peak as f64 / bytes.len() as f64,
        mib(model)
    );
}
