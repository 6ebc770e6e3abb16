//! `ethercrab-peer IFACE CYCLE_NS SECONDS [CPU] [PRIORITY]`: bring every SubDevice on IFACE to
//! OP with ethercrab (one group, configured from the SII), then exchange its process data once
//! per cycle for SECONDS and print one JSON object with the figures `ecat bench` compares.
//!
//! Structure (ethercrab's own model): a TX/RX thread runs `ethercrab::std::tx_rx_task` under
//! `async_io::block_on` (so that thread drives the socket's reactor itself); the cycle thread
//! sleeps to each absolute period boundary with `clock_nanosleep(TIMER_ABSTIME)`, then calls
//! `SubDeviceGroup::tx_rx` and waits for it. Both threads get the same CPU and SCHED_FIFO
//! priority as ecat's cycle thread, and memory is locked, so the comparison is like for like.
//!
//! Figures (nanoseconds): `per_cycle` = wake-up to tx_rx completion, `round_trip` = tx_rx
//! call to completion (what ethercrab exposes of the round trip: send, wire, receive, hand-back),
//! `wake_latency` = wake-up minus the scheduled boundary. Counters: `errors` (tx_rx returned an
//! error: timeout, lost frame), `wkc_errors` (WKC differs from the first cycle's in OP),
//! `overruns` (the cycle ended after the next boundary).

use ethercrab::std::{ethercat_now, tx_rx_task};
use ethercrab::{MainDevice, MainDeviceConfig, PduStorage, Timeouts};
use std::time::Duration;

const MAX_SUBDEVICES: usize = 16;
const MAX_PDI: usize = 256;
const MAX_FRAMES: usize = 16;
const MAX_PDU_DATA: usize = PduStorage::element_size(1100);

static PDU_STORAGE: PduStorage<MAX_FRAMES, MAX_PDU_DATA> = PduStorage::new();

fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn sleep_until(t: u64) {
    let ts = libc::timespec {
        tv_sec: (t / 1_000_000_000) as libc::time_t,
        tv_nsec: (t % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
    {}
}

/// Pin the calling thread to `cpu` (when the machine has more than one) and give it SCHED_FIFO
/// `prio` (when > 0). Best effort, like ecat's own setup for the bench.
fn realtime(cpu: usize, prio: i32) {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    // SAFETY: plain data; CPU_SET stays in bounds; both calls affect the calling thread only.
    unsafe {
        if n > 1 {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu % n, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
        if prio > 0 {
            let p = libc::sched_param {
                sched_priority: prio,
            };
            libc::sched_setscheduler(0, libc::SCHED_FIFO, &p);
        }
    }
}

fn stats(v: &mut [u64]) -> String {
    if v.is_empty() {
        return "null".into();
    }
    v.sort_unstable();
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    let sum: u128 = v.iter().map(|&x| x as u128).sum();
    format!(
        "{{\"count\":{},\"min\":{},\"p50\":{},\"p99\":{},\"max\":{},\"avg\":{:.1}}}",
        v.len(),
        v[0],
        q(0.5),
        q(0.99),
        v[v.len() - 1],
        sum as f64 / v.len() as f64
    )
}

/// `PEER_DEBUG=1`: ethercrab's log lines on stderr, with a time stamp.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, r: &log::Record) {
        eprintln!("{:.6} {} {}", mono_ns() as f64 / 1e9, r.level(), r.args());
    }
    fn flush(&self) {}
}

static LOGGER: StderrLog = StderrLog;

fn fail(msg: String) -> ! {
    println!("{{\"error\":{:?}}}", msg);
    std::process::exit(1);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: ethercrab-peer IFACE CYCLE_NS SECONDS [CPU] [PRIORITY]");
        std::process::exit(2);
    }
    let iface = args[1].clone();
    let period: u64 = args[2].parse().expect("CYCLE_NS");
    let seconds: f64 = args[3].parse().expect("SECONDS");
    let cpu: usize = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(0);
    let prio: i32 = args.get(5).and_then(|a| a.parse().ok()).unwrap_or(40);

    if std::env::var_os("PEER_DEBUG").is_some() {
        let _ = log::set_logger(&LOGGER);
        log::set_max_level(log::LevelFilter::Debug);
    }
    // SAFETY: plain syscall.
    unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };

    let (tx, rx, pdu_loop) = PDU_STORAGE
        .try_split()
        .unwrap_or_else(|_| fail("PDU storage split twice".into()));
    let timeouts = Timeouts {
        wait_loop_delay: Duration::from_millis(2),
        mailbox_response: Duration::from_millis(1000),
        ..Default::default()
    };
    let md = MainDevice::new(pdu_loop, timeouts, MainDeviceConfig::default());

    let task = tx_rx_task(&iface, tx, rx)
        .unwrap_or_else(|e| fail(format!("cannot open {iface} for ethercrab: {e}")));
    std::thread::Builder::new()
        .name("ethercrab-txrx".into())
        .spawn(move || {
            realtime(cpu, prio);
            let _ = async_io::block_on(task);
        })
        .expect("spawn TX/RX thread");

    let t_init = mono_ns();
    if std::env::var_os("PEER_DEBUG").is_some() {
        eprintln!("init");
    }
    let group = futures_lite::future::block_on(
        md.init_single_group::<MAX_SUBDEVICES, MAX_PDI>(ethercat_now),
    )
    .unwrap_or_else(|e| fail(format!("ethercrab init: {e:?}")));
    let subdevices = group.len();
    // SAFE-OP, then request OP and keep the process data flowing until every SubDevice is
    // there.
    let group = futures_lite::future::block_on(group.into_safe_op(&md))
        .unwrap_or_else(|e| fail(format!("ethercrab PRE-OP -> SAFE-OP: {e:?}")));
    // Terminals with outputs (here the EL4132) enter OP only once they have received valid
    // outputs in SAFE-OP, so exchange process data a few times before asking for OP (then the
    // request completes at once instead of waiting for the next cycle).
    for _ in 0..10 {
        let _ = futures_lite::future::block_on(group.tx_rx(&md));
        std::thread::sleep(Duration::from_millis(1));
    }
    let group = futures_lite::future::block_on(group.request_into_op(&md))
        .unwrap_or_else(|e| fail(format!("ethercrab SAFE-OP -> OP request: {e:?}")));
    let mut in_op = false;
    let mut last = String::new();
    for _ in 0..5_000 {
        let r = futures_lite::future::block_on(group.tx_rx(&md));
        last = format!("{r:?}");
        if let Ok(r) = r {
            if r.all_op() {
                in_op = true;
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if !in_op {
        let mut why = Vec::new();
        for sd in group.iter(&md) {
            if let Ok((state, code)) = futures_lite::future::block_on(sd.status()) {
                why.push(format!("{} {:?} {:?}", sd.name(), state, code));
            }
        }
        fail(format!(
            "ethercrab: not every SubDevice reached OP within 5000 cycles: {}; last tx_rx {last}",
            why.join("; ")
        ));
    }
    let bringup_ms = (mono_ns() - t_init) as f64 / 1e6;
    if std::env::var_os("PEER_DEBUG").is_some() {
        eprintln!("in OP after {bringup_ms:.1} ms");
    }

    realtime(cpu, prio);
    let cycles = ((seconds * 1e9) as u64 / period.max(1)).max(1) as usize;
    let mut per_cycle = Vec::with_capacity(cycles);
    let mut round_trip = Vec::with_capacity(cycles);
    let mut wake = Vec::with_capacity(cycles);
    let (mut errors, mut wkc_errors, mut overruns) = (0u64, 0u64, 0u64);
    let mut expected_wkc: Option<u16> = None;
    let mut next = mono_ns() + period;
    for c in 0..cycles {
        sleep_until(next);
        let t0 = mono_ns();
        wake.push(t0.saturating_sub(next));
        // The application: read every input, count every output byte up (as ecat's bench does).
        let mut sink = 0u8;
        for sd in group.iter(&md) {
            for b in sd.inputs_raw().iter() {
                sink ^= *b;
            }
            for (i, b) in sd.outputs_raw_mut().iter_mut().enumerate() {
                *b = (c as u8).wrapping_add(i as u8);
            }
        }
        std::hint::black_box(sink);
        let t1 = mono_ns();
        match futures_lite::future::block_on(group.tx_rx(&md)) {
            Ok(r) => {
                let t2 = mono_ns();
                per_cycle.push(t2 - t0);
                round_trip.push(t2 - t1);
                match expected_wkc {
                    None => expected_wkc = Some(r.working_counter),
                    Some(w) if w != r.working_counter => wkc_errors += 1,
                    _ => {}
                }
            }
            Err(_) => errors += 1,
        }
        next += period;
        let now = mono_ns();
        if now >= next {
            overruns += 1;
            next += (now - next) / period * period + period;
        }
    }
    println!(
        "{{\"cycles\":{cycles},\"subdevices\":{subdevices},\"bringup_ms\":{bringup_ms:.1},\"expected_wkc\":{},\"errors\":{errors},\"wkc_errors\":{wkc_errors},\"overruns\":{overruns},\"per_cycle\":{},\"round_trip\":{},\"wake_latency\":{}}}",
        expected_wkc.map_or("null".to_string(), |w| w.to_string()),
        stats(&mut per_cycle),
        stats(&mut round_trip),
        stats(&mut wake)
    );
    // Leave the SubDevices in INIT for whoever comes next; exit regardless of the outcome.
    let _ = futures_lite::future::block_on(async {
        let g = group.into_safe_op(&md).await?;
        let g = g.into_pre_op(&md).await?;
        g.into_init(&md).await
    });
}
