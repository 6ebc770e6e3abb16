//! The same simulated network (`sim:io`) cycled through the C API and through the Rust API,
//! with an A/A control, and the heap allocations of the C cyclic calls.
//!
//! ```sh
//! cargo run --release -p ecat-capi --example bench [-- --rounds 30 --cycles 100 --hot --no-control --cpu N --no-fifo]
//! ```
//!
//! Three sides, each with its own in-process simulated network: the C API (the library's
//! `extern "C"` functions, the code in `libethercat.so.1`, called as a C program calls them, in
//! IgH's order, with its control socket served as an application's is), the Rust API
//! (`Runtime::receive`, `process`, `send`), and the Rust API again on a third network: the A/A
//! control, whose ratio to the first Rust side shows how far two identical sides differ here.
//! A round runs one block of cycles of each side (1 kHz, or back to back with `--hot`), in an
//! order that rotates from round to round: inside a block a side cycles alone, as an
//! application does, its code and data warm from its own last cycle (cycling the sides in turn
//! each cycle would favour the two Rust sides, which share their code, over the C side, whose
//! code is its own). The first cycles of each block are not counted. The task duration
//! (receive → process → outputs → queue → send) is taken per cycle; each round's block medians
//! give one C/Rust and one A/A ratio, and the medians of those over the rounds are the
//! figures. Many short rounds spread machine load over all three sides alike.
//!
//! The cycling thread (all three sides run on it) is pinned to one CPU (the last, or
//! `--cpu N`) and, when allowed (root), runs SCHED_FIFO, so other work on the machine does not
//! preempt a cycle half-way; the header says what was granted. Every side gets the same.
//! Each ratio is given with a 95 % confidence interval of its median over the rounds
//! (distribution-free: order statistics of the per-round ratios), so a figure can be told
//! from the noise: the A/A interval shows how well two identical sides agree.

use ecat::runtime::{Activation, Runtime};
use ecat::MainDevice;
use ecat_wire::al::AlState;
use ethercat::abi::{DomainState, PdoEntryReg};
use ethercat::domain::{
    ecrt_domain_data, ecrt_domain_process, ecrt_domain_queue, ecrt_domain_reg_pdo_entry_list,
    ecrt_domain_state, Domain,
};
use ethercat::master::{
    ecrt_master_activate, ecrt_master_create_domain, ecrt_master_receive, ecrt_master_send,
    ecrt_release_master, ecrt_request_master, Master,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

struct Counting;
static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Options: `--rounds R`, `--cycles N` (per block: per round and side), `--hot` (no sleep
/// between cycles), `--no-control` (the C master without its control socket), `--cpu N` (the
/// CPU the cycling thread is pinned to; default the last), `--no-fifo` (no SCHED_FIFO).
struct Opts {
    rounds: usize,
    cycles: usize,
    hot: bool,
    control: bool,
    cpu: Option<usize>,
    fifo: bool,
}

fn opts() -> Opts {
    let mut o = Opts {
        rounds: 30,
        cycles: 100,
        hot: false,
        control: true,
        cpu: None,
        fifo: true,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let num = |i: usize| args.get(i + 1).and_then(|v| v.parse().ok());
        match args[i].as_str() {
            "--rounds" => o.rounds = num(i).unwrap_or(o.rounds).max(1),
            "--cycles" => o.cycles = num(i).unwrap_or(o.cycles).max(1),
            "--cpu" => o.cpu = num(i).or(o.cpu),
            "--hot" | "--no-control" | "--no-fifo" => {
                o.hot |= args[i] == "--hot";
                o.control &= args[i] != "--no-control";
                o.fifo &= args[i] != "--no-fifo";
                i += 1;
                continue;
            }
            other => {
                eprintln!(
                    "bench: unknown option '{other}'; use --rounds R --cycles N --hot --no-control --cpu N --no-fifo"
                );
                std::process::exit(2);
            }
        }
        i += 2;
    }
    o
}

/// The C side: IgH's shape, one entry of every process data sync manager registered.
struct CSide {
    m: *mut Master,
    d: *mut Domain,
    pd: *mut u8,
    out: usize,
}

fn c_side() -> CSide {
    let mut off = [0u32; 4];
    let mut bit = [0u32; 4];
    let mut regs: Vec<PdoEntryReg> = Vec::new();
    let entries = [
        (1, 0x07d83052, 0x7000, 1),
        (2, 0x03fa3052, 0x6000, 1),
        (3, 0x10243052, 0x6411, 1),
        (4, 0x0c1e3052, 0x3101, 2),
    ];
    for (k, (position, product, index, subindex)) in entries.into_iter().enumerate() {
        regs.push(PdoEntryReg {
            alias: 0,
            position,
            vendor_id: 2,
            product_code: product,
            index,
            subindex,
            offset: &mut off[k],
            bit_position: &mut bit[k],
        });
    }
    regs.push(PdoEntryReg {
        alias: 0,
        position: 0,
        vendor_id: 0,
        product_code: 0,
        index: 0,
        subindex: 0,
        offset: std::ptr::null_mut(),
        bit_position: std::ptr::null_mut(),
    });
    let m = ecrt_request_master(0);
    assert!(!m.is_null(), "no master");
    // SAFETY: m is a live master; the registration list ends with an index-0 record and its
    // pointers point into `off`/`bit`, alive during the call.
    unsafe {
        let d = ecrt_master_create_domain(m);
        // The coupler too, so both networks run the same states (all in OP).
        assert!(!ethercat::master::ecrt_master_slave_config(m, 0, 0, 2, 0x044c2c52).is_null());
        assert_eq!(ecrt_domain_reg_pdo_entry_list(d, regs.as_ptr()), 0);
        assert_eq!(ecrt_master_activate(m), 0);
        CSide {
            m,
            d,
            pd: ecrt_domain_data(d),
            out: off[0] as usize,
        }
    }
}

fn rust_side() -> Runtime {
    let mut md = MainDevice::open("sim:io").expect("sim:io");
    md.scan().expect("scan");
    let mut rt = md.activate(Activation::default()).expect("activate");
    rt.request_state(AlState::Op);
    rt
}

/// One C cycle; returns its duration and the allocations made in it.
fn c_cycle(c: &CSide, k: u8, count: bool) -> (Duration, u64) {
    ALLOCS.store(0, Ordering::Relaxed);
    COUNTING.store(count, Ordering::Relaxed);
    let t0 = Instant::now();
    // SAFETY: m and d are live; pd is the domain image, larger than `out`.
    unsafe {
        ecrt_master_receive(c.m);
        ecrt_domain_process(c.d);
        *c.pd.add(c.out) = k;
        ecrt_domain_queue(c.d);
        ecrt_master_send(c.m);
    }
    let t = t0.elapsed();
    COUNTING.store(false, Ordering::Relaxed);
    (t, ALLOCS.load(Ordering::Relaxed))
}

/// One Rust cycle.
fn r_cycle(rt: &mut Runtime, k: u8) -> Duration {
    let t0 = Instant::now();
    rt.receive().expect("receive");
    rt.process();
    if let Some(o) = rt.domain(0).regions.first().map(|r| r.offset) {
        rt.domain_mut(0).image_mut()[o] = k;
    }
    rt.send().expect("send");
    t0.elapsed()
}

/// Pin the calling thread to `cpu` (default: the last CPU it may run on) and, if `fifo`, make
/// it SCHED_FIFO; returns what was granted, for the header.
fn pin(cpu: Option<usize>, fifo: bool) -> String {
    // SAFETY: plain syscalls on this thread with a zeroed, then filled, CPU set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let cpus = if libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) == 0 {
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        } else {
            Vec::new()
        };
        let mut what = match cpu.or(cpus.last().copied()) {
            Some(c) => {
                libc::CPU_ZERO(&mut set);
                libc::CPU_SET(c, &mut set);
                if libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0 {
                    format!("pinned to CPU {c}")
                } else {
                    format!("not pinned (CPU {c}: {})", std::io::Error::last_os_error())
                }
            }
            None => "not pinned".to_string(),
        };
        if fifo {
            let p = libc::sched_param { sched_priority: 50 };
            if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0 {
                what += ", SCHED_FIFO 50";
            } else {
                what += &format!(", not SCHED_FIFO ({})", std::io::Error::last_os_error());
            }
        }
        what
    }
}

fn median(v: &mut [u64]) -> f64 {
    v.sort_unstable();
    v[v.len() / 2] as f64
}

/// Print min/median/avg/p99/max of the durations (ns) in µs.
fn summary(name: &str, v: &mut [u64]) {
    v.sort_unstable();
    let n = v.len().max(1);
    let avg = v.iter().sum::<u64>() as f64 / n as f64;
    let pct = |p: f64| v[((n as f64 * p) as usize).min(n - 1)] as f64 / 1e3;
    println!(
        "{name:<16} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>8.2}",
        v[0] as f64 / 1e3,
        pct(0.5),
        avg / 1e3,
        pct(0.99),
        v[n - 1] as f64 / 1e3
    );
}

/// Median, its 95 % confidence interval, quartiles and range of per-round ratios.
fn spread(r: &mut [f64]) -> String {
    r.sort_by(f64::total_cmp);
    let q = |p: f64| r[((r.len() - 1) as f64 * p).round() as usize];
    let (lo, hi) = median_ci(r.len());
    format!(
        "{:.3} (95 % CI {:.3}-{:.3}; quartiles {:.3}-{:.3}, range {:.3}-{:.3})",
        q(0.5),
        r[lo],
        r[hi],
        q(0.25),
        q(0.75),
        r[0],
        r[r.len() - 1]
    )
}

/// Indices (0-based, into the sorted sample of `n`) of the distribution-free 95 % confidence
/// interval of the median: the order statistics n/2 ± 1.96·√n/2 (normal approximation of the
/// binomial; the whole range below 6 samples).
fn median_ci(n: usize) -> (usize, usize) {
    let h = 0.98 * (n as f64).sqrt();
    let lo = ((n as f64 / 2.0 - h).floor().max(1.0) as usize).min(n) - 1;
    let hi = ((n as f64 / 2.0 + h).ceil() as usize).clamp(1, n) - 1;
    (lo, hi)
}

fn main() {
    let o = opts();
    std::env::set_var("ECAT_MASTER0", "sim:io");
    // The C master serves its control socket, as an application's does; a directory of our
    // own, so another process holding master 0 does not turn it off.
    let ctl = std::env::temp_dir().join(format!("ecat-bench-{}", std::process::id()));
    std::env::set_var("ECAT_CONTROL_DIR", &ctl);
    if o.control {
        std::env::remove_var("ECAT_CONTROL");
    } else {
        std::env::set_var("ECAT_CONTROL", "off");
    }

    let c = c_side();
    let mut rt = rust_side();
    let mut aa = rust_side();
    // After the sides are made: their threads (the C master's control server) stay unpinned.
    let sched = pin(o.cpu, o.fifo);

    let period = Duration::from_millis(1);
    let warmup = 2000;
    // Cycles at the start of each block that are not counted (the side's first cycles after
    // the others ran).
    let settle = (o.cycles / 10).max(1);
    let mut next = Instant::now();
    let mut all = [Vec::new(), Vec::new(), Vec::new()];
    let (mut ratio_c, mut ratio_aa) = (Vec::new(), Vec::new());
    let mut c_allocs = 0;
    let mut complete = [0usize; 3];
    let mut ds = DomainState::default();
    let mut k = 0usize;
    for round in 0..=o.rounds {
        // Round 0 is the warm-up (the bus reaches OP), not counted.
        let n = if round == 0 {
            warmup
        } else {
            o.cycles + settle
        };
        let mut t: [Vec<u64>; 3] = [
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        ];
        for b in 0..3 {
            // Rotate the order: each side's block comes first, second and third equally often.
            let side = (b + round) % 3;
            for i in 0..n {
                if !o.hot {
                    next += period;
                    let now = Instant::now();
                    if next > now {
                        std::thread::sleep(next - now);
                    } else {
                        next = now;
                    }
                }
                k += 1;
                let counted = round > 0 && i >= settle;
                let d = match side {
                    0 => {
                        let (d, a) = c_cycle(&c, k as u8, counted);
                        c_allocs += a;
                        // SAFETY: d live, ds writable.
                        unsafe { ecrt_domain_state(c.d, &mut ds) };
                        complete[0] +=
                            usize::from(counted && ds.wc_state == ethercat::abi::wc::COMPLETE);
                        d
                    }
                    1 => r_cycle(&mut rt, k as u8),
                    _ => r_cycle(&mut aa, k as u8),
                };
                if counted {
                    t[side].push(d.as_nanos() as u64);
                    let ok =
                        |r: &Runtime| r.domain(0).state() == ecat::domain::DomainState::Complete;
                    match side {
                        1 => complete[1] += usize::from(ok(&rt)),
                        2 => complete[2] += usize::from(ok(&aa)),
                        _ => {}
                    }
                }
            }
        }
        if round == 0 {
            continue;
        }
        let [mc, mr, ma] = [median(&mut t[0]), median(&mut t[1]), median(&mut t[2])];
        ratio_c.push(mc / mr);
        ratio_aa.push(ma / mr);
        for (a, v) in all.iter_mut().zip(t) {
            a.extend(v);
        }
    }
    let cycles = o.rounds * o.cycles;
    println!(
        "sim:io, {} rounds of a block of {} cycles (+{settle} not counted) per side {}, after {warmup} warm-up cycles; C, Rust and Rust again (A/A), block order rotating; {sched}",
        o.rounds,
        o.cycles,
        if o.hot { "back to back (--hot)" } else { "at 1 kHz" }
    );
    println!("task duration [usec]  min  median     avg     p99      max   (all rounds)");
    summary("C API", &mut all[0]);
    summary("Rust API", &mut all[1]);
    summary("Rust API (A/A)", &mut all[2]);
    println!(
        "C/Rust, median of per-round median ratios: {}   (target <= 1.05)",
        spread(&mut ratio_c)
    );
    println!(
        "A/A Rust/Rust, the same:                   {}   (the noise floor)",
        spread(&mut ratio_aa)
    );
    println!("heap allocations in the C cyclic calls (receive, process, queue, send): {c_allocs}");
    println!(
        "cycles with a complete working counter: C {} / Rust {} / A/A {} of {cycles}",
        complete[0], complete[1], complete[2]
    );
    // SAFETY: m is live; nothing else uses it now.
    if let Some(crt) = unsafe { (*c.m).runtime() } {
        println!(
            "cyclic frames, bytes per cycle: C {:?}, Rust {:?}",
            crt.frame_layout(),
            rt.frame_layout()
        );
    }
    // SAFETY: m is live and released once.
    unsafe { ecrt_release_master(c.m) };
    let _ = std::fs::remove_dir_all(&ctl);
}
