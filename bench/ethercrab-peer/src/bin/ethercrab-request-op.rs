//! `ethercrab-request-op IFACE CYCLES_IN_OP [PERIOD_US]`: ethercrab's recommended bring-up,
//! "request OP, then cycle", as a judge of the simulator's state machine (run by
//! `tests/oracle/test_other_masters.py`).
//!
//! The group is configured from the SII and CoE, taken to SAFE-OP, then OP is requested
//! without waiting (`request_into_op`) and process data starts only afterwards. The program
//! cycles until every SubDevice reports OP (at most 10 s), then CYCLES_IN_OP more cycles, and
//! prints one JSON object: `subdevices`, `expected_wkc` (2 per SubDevice with outputs, 1 per
//! SubDevice with inputs, as one LRW over the whole image counts), `op_after_cycles` and
//! `op_after_ms` (from the OP request), `cycles`, `wkc_mismatches` (cycles from the OP request
//! on whose WKC differed), `first_mismatch` and `states` (each SubDevice's state and AL status
//! code at the end). Exits 1 when OP was not reached or a WKC differed.

use ethercrab::std::{ethercat_now, tx_rx_task};
use ethercrab::{MainDevice, MainDeviceConfig, PduStorage, Timeouts};
use futures_lite::future::block_on;
use std::time::{Duration, Instant};

const MAX_SUBDEVICES: usize = 16;
const MAX_PDI: usize = 256;
const MAX_FRAMES: usize = 16;
const MAX_PDU_DATA: usize = PduStorage::element_size(1100);

static PDU_STORAGE: PduStorage<MAX_FRAMES, MAX_PDU_DATA> = PduStorage::new();

fn fail(msg: String) -> ! {
    println!("{{\"error\":{msg:?}}}");
    std::process::exit(1);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: ethercrab-request-op IFACE CYCLES_IN_OP [PERIOD_US]");
        std::process::exit(2);
    }
    let iface = args[1].clone();
    let in_op: usize = args[2]
        .parse()
        .unwrap_or_else(|_| fail("bad CYCLES_IN_OP".into()));
    let period = Duration::from_micros(args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1000));

    let (tx, rx, pdu_loop) = PDU_STORAGE
        .try_split()
        .unwrap_or_else(|_| fail("PDU storage split twice".into()));
    let md = MainDevice::new(pdu_loop, Timeouts::default(), MainDeviceConfig::default());
    let task = tx_rx_task(&iface, tx, rx)
        .unwrap_or_else(|e| fail(format!("cannot open {iface} for ethercrab: {e}")));
    std::thread::spawn(move || {
        let _ = async_io::block_on(task);
    });

    let group = block_on(md.init_single_group::<MAX_SUBDEVICES, MAX_PDI>(ethercat_now))
        .unwrap_or_else(|e| fail(format!("ethercrab init: {e:?}")));
    let group = block_on(group.into_safe_op(&md))
        .unwrap_or_else(|e| fail(format!("ethercrab PRE-OP -> SAFE-OP: {e:?}")));
    let mut expected = 0u16;
    for sd in group.iter(&md) {
        expected += 2 * u16::from(!sd.outputs_raw().is_empty());
        expected += u16::from(!sd.inputs_raw().is_empty());
    }

    // Request OP first, then start process data: the pattern under test.
    let requested = Instant::now();
    let group = block_on(group.request_into_op(&md))
        .unwrap_or_else(|e| fail(format!("ethercrab SAFE-OP -> OP request: {e:?}")));
    let (mut cycles, mut mismatches) = (0usize, 0usize);
    let mut first_mismatch = String::from("null");
    let mut op_at: Option<(usize, f64)> = None;
    let mut left = in_op;
    while left > 0 {
        let t = Instant::now();
        let r = block_on(group.tx_rx(&md))
            .unwrap_or_else(|e| fail(format!("ethercrab tx_rx in cycle {cycles}: {e:?}")));
        if r.working_counter != expected {
            if mismatches == 0 {
                first_mismatch = format!("[{cycles},{}]", r.working_counter);
            }
            mismatches += 1;
        }
        cycles += 1;
        // Change every output byte each cycle, as an application would.
        for sd in group.iter(&md) {
            for b in sd.outputs_raw_mut().iter_mut() {
                *b = b.wrapping_add(1);
            }
        }
        if op_at.is_none() && r.all_op() {
            op_at = Some((cycles, requested.elapsed().as_secs_f64() * 1e3));
        }
        if op_at.is_some() {
            left -= 1;
        } else if requested.elapsed() > Duration::from_secs(10) {
            break;
        }
        std::thread::sleep(period.saturating_sub(t.elapsed()));
    }
    let mut states = Vec::new();
    for sd in group.iter(&md) {
        let s = block_on(sd.status())
            .map(|(s, c)| format!("{s:?} {c:?}"))
            .unwrap_or_else(|e| format!("status read failed: {e:?}"));
        states.push(format!("{:?}", format!("{}: {s}", sd.name())));
    }
    let (op_cycles, op_ms) = op_at.map_or(("null".into(), "null".into()), |(c, ms)| {
        (c.to_string(), format!("{ms:.1}"))
    });
    println!(
        "{{\"subdevices\":{},\"expected_wkc\":{expected},\"op_after_cycles\":{op_cycles},\"op_after_ms\":{op_ms},\"cycles\":{cycles},\"wkc_mismatches\":{mismatches},\"first_mismatch\":{first_mismatch},\"states\":[{}]}}",
        group.len(),
        states.join(",")
    );
    let ok = op_at.is_some() && mismatches == 0;
    let _ = block_on(async {
        let g = group.into_safe_op(&md).await?;
        let g = g.into_pre_op(&md).await?;
        g.into_init(&md).await
    });
    std::process::exit(if ok { 0 } else { 1 });
}
