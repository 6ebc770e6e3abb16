//! The same simulated network (`sim:io`) cycled through the C API and through the Rust API,
//! interleaved cycle by cycle in one run, with the task duration (receive → process →
//! outputs → queue → send) of each side by side and the heap allocations of the C cyclic
//! calls.
//!
//! ```sh
//! cargo run --release -p ecat-capi --example bench [-- CYCLES]
//! ```
//!
//! The C side calls the library's `extern "C"` functions (the code in `libethercat.so.1`)
//! exactly as a C program does, in IgH's order; the Rust side calls `Runtime::receive`,
//! `process` and `send`. Each side has its own in-process simulated network; both run at
//! 1 kHz, alternating, so machine load hits both alike.

use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_wire::al::AlState;
use ethercat::abi::{DomainState, PdoEntryReg};
use ethercat::domain::{
    ecrt_domain_data, ecrt_domain_process, ecrt_domain_queue, ecrt_domain_reg_pdo_entry_list,
    ecrt_domain_state,
};
use ethercat::master::{
    ecrt_master_activate, ecrt_master_create_domain, ecrt_master_receive, ecrt_master_send,
    ecrt_release_master, ecrt_request_master,
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

/// Print min/median/avg/p99/max (µs); returns (median, avg) in ns.
fn summary(name: &str, v: &mut [u64]) -> (f64, f64) {
    v.sort_unstable();
    let n = v.len().max(1);
    let avg = v.iter().sum::<u64>() as f64 / n as f64;
    let pct = |p: f64| v[((n as f64 * p) as usize).min(n - 1)] as f64;
    println!(
        "{name:<9} task duration [usec] min/median/avg/p99/max: {:>6.2} / {:>6.2} / {:>6.2} / {:>6.2} / {:>7.2}",
        v[0] as f64 / 1e3,
        pct(0.5) / 1e3,
        avg / 1e3,
        pct(0.99) / 1e3,
        v[n - 1] as f64 / 1e3
    );
    (pct(0.5), avg)
}

fn main() {
    let cycles: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5000);
    std::env::set_var("ECAT_MASTER0", "sim:io");

    // C API: IgH's shape, one entry of every process data sync manager registered.
    let mut off = [0u32; 4];
    let mut bit = [0u32; 4];
    let reg = |position: u16,
               product: u32,
               index: u16,
               subindex: u8,
               i: usize,
               o: &mut [u32; 4],
               b: &mut [u32; 4]| PdoEntryReg {
        alias: 0,
        position,
        vendor_id: 2,
        product_code: product,
        index,
        subindex,
        offset: &mut o[i],
        bit_position: &mut b[i],
    };
    let regs = [
        reg(1, 0x07d83052, 0x7000, 1, 0, &mut off, &mut bit),
        reg(2, 0x03fa3052, 0x6000, 1, 1, &mut off, &mut bit),
        reg(3, 0x10243052, 0x6411, 1, 2, &mut off, &mut bit),
        reg(4, 0x0c1e3052, 0x3101, 2, 3, &mut off, &mut bit),
        PdoEntryReg {
            alias: 0,
            position: 0,
            vendor_id: 0,
            product_code: 0,
            index: 0,
            subindex: 0,
            offset: std::ptr::null_mut(),
            bit_position: std::ptr::null_mut(),
        },
    ];
    let m = ecrt_request_master(0);
    assert!(!m.is_null(), "no master");
    // SAFETY: m is a live master from ecrt_request_master; the registration list ends with an
    // index-0 record and its pointers point into `off`/`bit`, alive for the whole run.
    let (d, pd) = unsafe {
        let d = ecrt_master_create_domain(m);
        // The coupler too, so both networks run the same states (all in OP).
        assert!(!ethercat::master::ecrt_master_slave_config(m, 0, 0, 2, 0x044c2c52).is_null());
        assert_eq!(ecrt_domain_reg_pdo_entry_list(d, regs.as_ptr()), 0);
        assert_eq!(ecrt_master_activate(m), 0);
        (d, ecrt_domain_data(d))
    };

    // Rust API: the same network, configured from the SubDevices (the same PDOs).
    let mut md = MainDevice::open("sim:io").expect("sim:io");
    md.scan().expect("scan");
    let mut rt = md.activate(Activation::default()).expect("activate");
    rt.request_state(AlState::Op);

    let period = Duration::from_millis(1);
    let mut next = Instant::now();
    let mut c_times = Vec::with_capacity(cycles);
    let mut r_times = Vec::with_capacity(cycles);
    let warmup = 2000;
    let mut c_allocs = 0;
    let (mut c_start, mut r_start) = ((0u64, 0u64), (0u64, 0u64));
    let mut ds = DomainState::default();
    let mut complete = (0usize, 0usize);
    for k in 0..warmup + cycles {
        next += period;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        let measuring = k >= warmup;
        if k == warmup {
            // SAFETY: m is live; this thread is the only user.
            if let Some(crt) = unsafe { (*m).runtime() } {
                let (_, e, l) = crt.counters();
                c_start = (l.tx_frames, e.frames_sent);
            }
            let (_, e, l) = rt.counters();
            r_start = (l.tx_frames, e.frames_sent);
        }
        // Alternate which side runs first after the wake-up (caches are colder for the first).
        let c_cycle = || {
            ALLOCS.store(0, Ordering::Relaxed);
            COUNTING.store(measuring, Ordering::Relaxed);
            let t0 = Instant::now();
            // SAFETY: m and d are live; pd is the domain image of size > off[0].
            unsafe {
                ecrt_master_receive(m);
                ecrt_domain_process(d);
                *pd.add(off[0] as usize) = k as u8;
                ecrt_domain_queue(d);
                ecrt_master_send(m);
            }
            let t = t0.elapsed();
            COUNTING.store(false, Ordering::Relaxed);
            (t, ALLOCS.load(Ordering::Relaxed))
        };
        let mut r_cycle = || {
            let t0 = Instant::now();
            rt.receive().expect("receive");
            rt.process();
            if let Some(o) = rt.domain(0).regions.first().map(|r| r.offset) {
                rt.domain_mut(0).image_mut()[o] = k as u8;
            }
            rt.send().expect("send");
            t0.elapsed()
        };
        let ((ct, ca), rtime) = if k % 2 == 0 {
            let c = c_cycle();
            (c, r_cycle())
        } else {
            let r = r_cycle();
            (c_cycle(), r)
        };
        c_allocs += ca;
        if measuring {
            c_times.push(ct.as_nanos() as u64);
            r_times.push(rtime.as_nanos() as u64);
            // SAFETY: d live, ds writable.
            unsafe { ecrt_domain_state(d, &mut ds) };
            complete.0 += usize::from(ds.wc_state == ethercat::abi::wc::COMPLETE);
            complete.1 += usize::from(rt.domain(0).state() == ecat::domain::DomainState::Complete);
        }
    }
    println!(
        "sim:io, {cycles} cycles at 1 kHz after {warmup} warm-up cycles, C and Rust interleaved"
    );
    let c = summary("C API", &mut c_times);
    let r = summary("Rust API", &mut r_times);
    println!(
        "ratio C/Rust: median {:.3}, average {:.3} (target <= 1.05)",
        c.0 / r.0,
        c.1 / r.1
    );
    println!("heap allocations in the C cyclic calls (receive, process, queue, send): {c_allocs}");
    println!(
        "cycles with a complete working counter: C {} / Rust {} of {cycles}",
        complete.0, complete.1
    );
    // SAFETY: m is live; nothing else uses it now.
    if let Some(crt) = unsafe { (*m).runtime() } {
        let frames = |rt: &ecat::runtime::Runtime, start: (u64, u64)| {
            let (_, e, l) = rt.counters();
            (
                (l.tx_frames - start.0) as f64 / cycles as f64,
                (e.frames_sent - start.1) as f64 / cycles as f64,
            )
        };
        let (c, r) = (frames(crt, c_start), frames(&rt, r_start));
        println!(
            "frames per measured cycle (all / acyclic): C {:.3} / {:.3}, Rust {:.3} / {:.3}",
            c.0, c.1, r.0, r.1
        );
    }
    // SAFETY: m is live and released once.
    unsafe { ecrt_release_master(m) };
}
