//! The control socket on a Rust runtime: a [`Runtime`] cycling `sim:io` serves master 41
//! (`Runtime::serve_control`) while a client thread asks for the SubDevices, a register, the
//! domains, the master figures, a state change and an SDO upload. The cycling thread must not
//! allocate while it serves the snapshot and register requests (a thread-local counting
//! allocator watches only that thread; SDO transfers and state changes are the mailbox
//! service's and the supervisor's business, not counted here); the answers must be right.

use ecat::clock::VirtualTime;
use ecat::control::Client;
use ecat::link::sim::SimLink;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_sim::Network;
use ecat_wire::al::AlState;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

struct ThreadCounting;

thread_local! {
    static WATCHED: Cell<bool> = const { Cell::new(false) };
}
static ALLOCS: AtomicU64 = AtomicU64::new(0);

fn note() {
    if WATCHED.try_with(Cell::get).unwrap_or(false) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

unsafe impl GlobalAlloc for ThreadCounting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: ThreadCounting = ThreadCounting;

#[test]
fn tool_requests_while_a_rust_runtime_cycles() {
    let dir = std::env::temp_dir().join(format!("ecat-control-test-{}", std::process::id()));
    // Set before any other thread of this test binary reads the environment.
    std::env::set_var("ECAT_CONTROL_DIR", &dir);
    let vt = VirtualTime::new();
    let link = SimLink::with_network(Network::open("io").unwrap(), "sim:io".into(), "io".into())
        .on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 2_000).unwrap();
    let server = rt.serve_control(41).unwrap();
    assert!(dir.join("master41.sock").exists());

    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    let client = std::thread::spawn(move || {
        let r = (|| -> ecat::Result<(u64, Vec<String>)> {
            let mut c = Client::connect(41)?;
            let mut seen = Vec::new();
            seen.push(format!("phase {}", c.hello().phase));
            let before = ALLOCS.load(Ordering::SeqCst);
            let subs = c.subdevices()?;
            seen.push(format!("{} subdevices, 4 is {}", subs.len(), subs[4].order));
            let status = c.read_memory(1, 0x0130, 2)?;
            seen.push(format!("AL status {:02x}", status[0]));
            let doms = c.domains()?;
            seen.push(format!(
                "domain {} wkc {}/{}",
                doms[0].state, doms[0].wkc.0, doms[0].wkc.1
            ));
            let m = c.master()?;
            seen.push(format!("master cycles>0 {}", m.cycles > 0));
            // (A state change makes the supervisor record events, which name the SubDevice:
            // that is the supervisor's, outside this count.)
            let rt_allocs = ALLOCS.load(Ordering::SeqCst) - before;
            c.request_state(&[1], AlState::PreOp)?;
            let mut state = String::new();
            // Up to 10 s (2,000 polls 5 ms apart; 1 s was short of a VM stall of ~1 s).
            for _ in 0..2_000 {
                let s = c.subdevices()?;
                state = s[1].al_status.state().map_or("?", |x| x.name()).to_string();
                if state == "PREOP" {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            seen.push(format!("1 is {state}"));
            let vendor = c.sdo(
                3,
                &ecat::mailbox::sdo::SdoOp::Upload {
                    index: 0x1018,
                    subindex: 1,
                    complete_access: false,
                },
            )?;
            seen.push(format!("vendor {:02x?}", vendor));
            Ok((rt_allocs, seen))
        })();
        d2.store(true, Ordering::SeqCst);
        r
    });
    WATCHED.with(|w| w.set(true));
    let mut cycles = 0u64;
    while !done.load(Ordering::SeqCst) && cycles < 200_000 {
        vt.advance(1_000_000);
        rt.receive().unwrap();
        rt.process();
        rt.send().unwrap();
        rt.wait_return(rt.now() + 1_000_000).unwrap();
        cycles += 1;
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    WATCHED.with(|w| w.set(false));
    let (rt_allocs, seen) = client.join().unwrap().unwrap();
    println!("{seen:#?}\ncycling thread allocations while serving: {rt_allocs}");
    assert_eq!(
        seen,
        [
            "phase Operation",
            "5 subdevices, 4 is EL3102",
            "AL status 08",
            "domain complete wkc 6/6",
            "master cycles>0 true",
            "1 is PREOP",
            "vendor [02, 00, 00, 00]",
        ]
    );
    assert_eq!(
        rt_allocs, 0,
        "the cycling thread allocated while serving requests"
    );
    drop(server);
    assert!(
        !dir.join("master41.sock").exists(),
        "the socket stays after the server"
    );
    let err = Client::connect(41).unwrap_err().to_string();
    assert!(err.contains("no application holds master 41"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
