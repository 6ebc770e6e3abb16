//! Startup requests of other mailbox protocols than CoE (SoE IDN writes) through the
//! supervisor, against the simulator's `mbx` network (2: the SoE drive): written in PREOP on
//! every configuration and seen in the drive; one the drive refuses is reported as a failed
//! startup naming the request and the SoE error; one for a SubDevice without SoE says so.

mod common;

use ecat::clock::VirtualTime;
use ecat::mailbox::op::MailboxOp;
use ecat::mailbox::soe::SoeOp;
use ecat::runtime::Activation;
use ecat::supervisor::Event;
use ecat_wire::al::AlState;
use ecat_wire::soe::{Elements, Idn};

fn write(idn: u16, value: u16) -> MailboxOp {
    SoeOp::Write {
        drive: 0,
        idn: Idn(idn),
        elements: Elements::VALUE,
        data: value.to_le_bytes().to_vec(),
    }
    .into()
}

#[test]
fn startup_idns_are_written_in_preop_and_refusals_reported() {
    let vt = VirtualTime::new();
    let md = common::sim::scanned("mbx", Some(&vt));
    let act = Activation {
        // 1: the EL3102 has no SoE; 2: S-0-0001 (writable in PREOP only) then S-0-0009,
        // which the drive does not have.
        startup_ops: vec![
            vec![],
            vec![write(1, 2000)],
            vec![write(1, 2000), write(9, 1)],
        ],
        ..Default::default()
    };
    let mut rt = md.activate(act).unwrap();
    let _ = rt.run_until_state(AlState::Op, 1_000_000, 300);
    let mut failed = Vec::new();
    while let Some(e) = rt.next_event() {
        if let Event::StartupFailed { who, error, .. } = e {
            failed.push((who.position, error));
        }
    }
    let drive = rt
        .link_mut()
        .sim_network()
        .unwrap()
        .subdevice_mut(2)
        .unwrap();
    let cycle = drive.soe().unwrap().number(Idn(1));
    assert_eq!(cycle, Some(2000), "the startup IDN reached the drive");
    let of = |p: u16| {
        failed
            .iter()
            .find(|(q, _)| *q == p)
            .map(|(_, e)| e.as_str())
    };
    let e2 = of(2).expect("the missing IDN is reported");
    assert!(
        e2.contains("startup request failed") && e2.contains("S-0-0009") && e2.contains("0x1001"),
        "{e2}"
    );
    let e1 = of(1).expect("the SubDevice without SoE is reported");
    assert!(e1.contains("cannot serve the startup SoE write"), "{e1}");
}
