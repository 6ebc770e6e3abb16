//! Round trip of one 60-byte EtherCAT frame over a veth pair, per link and receive mode.
//!
//! `sudo cargo run --release -p ecat --example link_rtt [ROUND_TRIPS] [busy-echo]`
//!
//! Makes a network namespace with a veth pair; a thread in the namespace echoes every EtherCAT
//! frame with a raw socket (pinned to the second CPU, SCHED_FIFO), the link under test sends
//! from the root namespace end (pinned to the first CPU, SCHED_FIFO) and waits for the echo.
//! Prints median and 99th percentile per link/mode and the ratio of each median to the
//! raw/Block one. On a shared VM, read the ratios, not the absolute figures. The echo's own
//! wake-up is part of every round trip; `busy-echo` makes the echo spin (BusyPoll, not
//! SCHED_FIFO) so that the link under test accounts for more of the difference.

use ecat::link::raw::RawSocket;
use ecat::link::xdp::XdpMode;
use ecat::link::{Link, LinkOptions, RecvMode};
use ecat::netns::{fifo, pin_thread, VethNs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    if !ecat::netns::is_root() {
        eprintln!("link_rtt needs root (veth pair, namespace, raw and AF_XDP sockets)");
        std::process::exit(2);
    }
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let busy_echo = std::env::args().any(|a| a == "busy-echo");
    let v = VethNs::create(&format!("eclrtt{}", std::process::id() % 1000))
        .unwrap_or_else(|e| panic!("{e}"));
    let (ns, far) = (v.ns.clone(), v.far.clone());

    // The echo.
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let echo = {
        let (ns, stop) = (ns.clone(), stop.clone());
        std::thread::spawn(move || {
            ecat::netns::enter(&ns).unwrap();
            let echo_mode = if busy_echo {
                pin_thread(1);
                RecvMode::BusyPoll
            } else {
                pin_thread(1);
                fifo(50);
                RecvMode::Block
            };
            let opts = LinkOptions {
                recv_mode: echo_mode,
                ..Default::default()
            };
            let mut link = RawSocket::open_with(&far, opts).unwrap();
            ready_tx.send(()).unwrap();
            let mut buf = [0u8; 2048];
            while !stop.load(Ordering::Relaxed) {
                let deadline = Instant::now() + Duration::from_millis(20);
                if let Some(n) = link.recv(&mut buf, Some(deadline)).unwrap() {
                    link.send(&buf[..n]).unwrap();
                }
            }
        })
    };
    ready_rx.recv().unwrap();
    pin_thread(0);
    fifo(40);

    // A 60-byte frame: broadcast, EtherType 0x88A4, one BRD datagram of 2 bytes.
    let mut frame = [0u8; 60];
    frame[..6].fill(0xff);
    frame[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
    frame[12..14].copy_from_slice(&[0x88, 0xa4]);
    let dlen: u16 = 10 + 2 + 2;
    frame[14..16].copy_from_slice(&(dlen | 0x1000).to_le_bytes());
    frame[16] = 7; // BRD
    frame[22..24].copy_from_slice(&2u16.to_le_bytes());

    let cases: [(&str, RecvMode, XdpMode); 7] = [
        ("raw", RecvMode::Block, XdpMode::Auto),
        ("raw", RecvMode::BusyPoll, XdpMode::Auto),
        ("mmap", RecvMode::Block, XdpMode::Auto),
        ("mmap", RecvMode::BusyPoll, XdpMode::Auto),
        ("xdp", RecvMode::Block, XdpMode::Auto),
        ("xdp", RecvMode::BusyPoll, XdpMode::Auto),
        ("xdp", RecvMode::Block, XdpMode::Generic),
    ];
    println!(
        "{count} round trips of a 60-byte frame over veth {}",
        v.near
    );
    println!(
        "{:<6} {:<9} {:<8} {:>10} {:>10} {:>8} {:>6}  link",
        "link", "recv", "xdp", "median µs", "p99 µs", "ratio", "lost"
    );
    let mut base = None;
    let mut samples = Vec::with_capacity(count);
    for (kind, recv_mode, xdp_mode) in cases {
        let spec = format!("{kind}:{}", v.near);
        let mut link = match ecat::link::open_with(
            &spec,
            LinkOptions {
                recv_mode,
                xdp_mode,
            },
        ) {
            Ok(l) => l,
            Err(e) => {
                println!("{kind:<6} {recv_mode:<9?} skipped: {e}");
                continue;
            }
        };
        let mut buf = [0u8; 2048];
        let mut lost = 0;
        samples.clear();
        for i in 0..count + 500 {
            let t = Instant::now();
            link.send(&frame).unwrap();
            match link
                .recv(&mut buf, Some(t + Duration::from_millis(10)))
                .unwrap()
            {
                Some(_) if i >= 500 => samples.push(t.elapsed().as_nanos() as u64),
                Some(_) => {}
                None => lost += 1,
            }
        }
        samples.sort_unstable();
        let pct = |p: f64| samples[((samples.len() - 1) as f64 * p) as usize] as f64 / 1000.0;
        let (med, p99) = (pct(0.5), pct(0.99));
        let b = *base.get_or_insert(med);
        let xdp = if kind == "xdp" {
            format!("{xdp_mode:?}")
        } else {
            "-".into()
        };
        println!(
            "{kind:<6} {:<9} {xdp:<8} {med:>10.1} {p99:>10.1} {:>8.2} {lost:>6}  {}",
            format!("{recv_mode:?}"),
            med / b,
            link.describe()
        );
    }
    stop.store(true, Ordering::Relaxed);
    echo.join().unwrap();
}
