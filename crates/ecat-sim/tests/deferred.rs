//! Deferred PDI reactions (`Network::set_deferred_pdi`): a frame's firmware reactions wait
//! for the next frame that concerns the ESC or for `settle`, and the network's own changes
//! settle them first. (That the frames themselves stay the same is checked frame by frame
//! in `crates/ecat/tests/deferred_pdi_sim.rs`.)

mod common;

use common::Bus;
use ecat_wire::register as reg;
use ecat_wire::Command;

/// Every ESC is asked for PREOP: a register write its firmware reacts to.
fn request_preop(bus: &mut Bus) {
    let r = bus.cmd(Command::Bwr, 0, reg::AL_CONTROL, &[2, 0]);
    assert!(r.wkc > 0, "the ESCs took the AL control write");
}

fn deferred_io() -> Bus {
    let mut bus = Bus::preset("io");
    bus.net.set_deferred_pdi(true);
    bus
}

#[test]
fn reactions_wait_for_settle() {
    let mut bus = deferred_io();
    request_preop(&mut bus);
    let n = bus.net.settle();
    assert!(n >= 5, "every ESC's reaction waited ({n} ran at settle)");
    assert_eq!(bus.net.settle(), 0, "settling twice runs nothing");
}

#[test]
fn without_deferral_nothing_waits() {
    let mut bus = Bus::preset("io");
    request_preop(&mut bus);
    assert_eq!(bus.net.settle(), 0);
}

#[test]
fn the_next_frame_for_an_esc_runs_its_reaction_first() {
    let mut bus = deferred_io();
    request_preop(&mut bus);
    // A broadcast read concerns every ESC: their reactions run before it.
    bus.read(Command::Brd, 0, reg::AL_STATUS, 2);
    assert_eq!(bus.net.settle(), 0);
}

/// A change made through the network's API, named.
type Change = (&'static str, fn(&mut Bus));

#[test]
fn the_networks_own_changes_settle_first() {
    let changes: [Change; 5] = [
        ("unplug", |b| b.net.unplug(3).unwrap()),
        ("disconnect", |b| b.net.disconnect(3).unwrap()),
        ("power cycle", |b| b.net.power_cycle(2).unwrap()),
        ("set inputs", |b| b.net.set_inputs(2, &[0xA5]).unwrap()),
        ("deferral off", |b| b.net.set_deferred_pdi(false)),
    ];
    for (what, change) in changes {
        let mut bus = deferred_io();
        request_preop(&mut bus);
        change(&mut bus);
        assert_eq!(bus.net.settle(), 0, "{what} settled the waiting reactions");
    }
}
