//! Staying up (issue 3): on virtual time, deterministic and seeded, against the simulated `io`
//! network (EK1100, EL2008, EL1018, EL4132, EL3102).

use ecat::clock::VirtualTime;
use ecat::config::Direction;
use ecat::domain::DomainState;
use ecat::link::sim::SimLink;
use ecat::runtime::{Activation, Runtime};
use ecat::supervisor::Event;
use ecat::MainDevice;
use ecat_sim::{Faults, Network};
use ecat_wire::al::AlState;

const MS: u64 = 1_000_000;

fn bring_up(faults: Option<Faults>) -> (Runtime, VirtualTime) {
    let vt = VirtualTime::new();
    let mut net = Network::open("io").unwrap();
    if let Some(f) = faults {
        net.set_faults(f);
    }
    let link = SimLink::with_network(net, "sim:io".into(), "io".into()).on_virtual_time(vt.clone());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, MS, 5_000).unwrap();
    (rt, vt)
}

fn net(rt: &mut Runtime) -> &mut Network {
    rt.link_mut().sim_network().expect("simulated link")
}

#[test]
fn one_percent_frame_drop_over_10000_cycles() {
    let faults = Faults {
        seed: 7,
        drop_rate: 0.01,
        ..Default::default()
    };
    let (mut rt, vt) = bring_up(Some(faults));
    let dropped_before = net(&mut rt).counters().dropped_lost;
    let mut not_complete = 0u64;
    for _ in 0..10_000 {
        vt.advance(MS);
        rt.tx_rx(MS).unwrap();
        if rt.domain(0).state() != DomainState::Complete {
            not_complete += 1;
        }
    }
    let dropped = net(&mut rt).counters().dropped_lost - dropped_before;
    // One more send settles the count of the last cycle's frame.
    rt.send().unwrap();
    let (cy, _, _) = rt.counters();
    println!(
        "dropped by the network: {dropped}; cycles not complete: {not_complete}; counted lost: {}",
        cy.frames_lost
    );
    assert!(
        (50..=200).contains(&dropped),
        "about 1 % of 10,000 frames: {dropped}"
    );
    assert_eq!(
        not_complete, dropped,
        "every lost frame shows in the domain state, nothing else does"
    );
    assert!(cy.frames_lost >= dropped, "every lost frame is counted");
    assert!(
        rt.supervisor().all_running(),
        "a lost frame never takes a SubDevice out of OP"
    );
}

#[test]
fn unplugged_subdevice_is_reported_and_comes_back_power_cycled() {
    let (mut rt, vt) = bring_up(None);
    let d = rt.domain(0).clone();
    let out3 = d.region(3, Direction::Output).unwrap(); // EL4132
    let in2 = d.region(2, Direction::Input).unwrap(); // EL1018
    net(&mut rt).set_inputs(2, &[0xA5]).unwrap();
    // Event cycles count from activation; the loop's cycle 0 is runtime cycle `base + 1`.
    let base = rt.cycle_count();
    let mut lost_reported = None;
    let mut back_at = None;
    let mut others_left_op = Vec::new();
    for cycle in 0..4_000u64 {
        if cycle == 1_000 {
            net(&mut rt).unplug(3).unwrap();
        }
        if cycle == 3_000 {
            net(&mut rt).replug(3, true).unwrap();
        }
        vt.advance(MS);
        // Application: EL4132 gets a value that changes every cycle.
        let v = (cycle as u16).to_le_bytes();
        rt.domain_mut(0).image_mut()[out3.start..out3.start + 2].copy_from_slice(&v);
        rt.tx_rx(MS).unwrap();
        while let Some(e) = rt.next_event() {
            println!("{e}");
            match e {
                Event::Lost { ref who, cycle: c } if who.position == 3 => lost_reported = Some(c),
                Event::Reached {
                    ref who,
                    state: AlState::Op,
                    cycle: c,
                } if who.position == 3 && c > base + 3_000 => back_at = Some(c),
                Event::Lost { who, .. } => others_left_op.push(who.position),
                _ => {}
            }
        }
        // The devices' own AL status register is the truth.
        for pos in [0usize, 1, 2, 4] {
            let st = net(&mut rt)
                .subdevice(pos)
                .map(|e| e.al_status().state_bits());
            if st != Some(0x08) && !others_left_op.contains(&(pos as u16)) {
                others_left_op.push(pos as u16);
            }
        }
        // Inputs of the others keep flowing.
        if rt.domain(0).image()[in2.clone()] != [0xA5] && cycle > 10 {
            panic!(
                "cycle {cycle}: EL1018 input lost: {:?}",
                &rt.domain(0).image()[in2.clone()]
            );
        }
    }
    let lost = lost_reported.expect("the loss of SubDevice 3 is reported") - base;
    assert!(
        (1_000..1_005).contains(&lost),
        "reported at loop cycle {lost}"
    );
    let back = back_at.expect("SubDevice 3 returns to OP") - base;
    println!("unplugged at 1000, reported lost at {lost}; replugged at 3000, back in OP at {back}");
    assert!(
        back < 3_000 + 500,
        "back in OP at loop cycle {back}, more than 500 cycles after replug"
    );
    assert!(
        others_left_op.is_empty(),
        "SubDevices {others_left_op:?} left OP"
    );
    // Its outputs are applied again: the device shows what the MainDevice writes now.
    let applied = net(&mut rt).outputs(3).unwrap().to_vec();
    let written = rt.domain(0).image()[out3.clone()].to_vec();
    assert_eq!(
        &applied[..2],
        &written[..2],
        "EL4132 applies the current outputs"
    );
    assert_eq!(rt.domain(0).state(), DomainState::Complete);
}
