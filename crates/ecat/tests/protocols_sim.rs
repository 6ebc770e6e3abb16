//! FoE, SoE and VoE through our MainDevice against the simulator's `mbx` network (0: servo
//! with FoE and a bootstrap mailbox, 1: EL3102 with CoE and FoE, 2: SoE drive with CoE, FoE,
//! SoE, EoE, VoE): blocking in the configuration phase, through BOOT, and in OP through the
//! same mailbox service as SDOs. Errors are one sentence naming the SubDevice and the request.

mod common;

use ecat::clock::VirtualTime;
use ecat::mailbox::foe::FoeOp;
use ecat::mailbox::soe::SoeOp;
use ecat::mailbox::voe::VoeMessage;
use ecat::runtime::Activation;
use ecat::MainDevice;
use ecat_wire::al::AlState;
use ecat_wire::soe::{Elements, Idn};

fn open() -> MainDevice {
    common::sim::scanned("mbx", None)
}

fn file(n: usize) -> Vec<u8> {
    (0..n as u32).map(|i| (i * 7 % 251) as u8).collect()
}

#[test]
fn foe_round_trip_busy_password_and_errors() {
    let mut md = open();
    let f = file(100 * 1024);
    md.foe_write(0, "data.bin", 0, &f).unwrap();
    assert_eq!(md.foe_read(0, "data.bin", 0).unwrap(), f);
    // A multiple of the packet size (SM size − 12) ends with an empty packet.
    let exact = file(116 * 3);
    md.foe_write(1, "exact.bin", 0, &exact).unwrap();
    assert_eq!(md.foe_read(1, "exact.bin", 0).unwrap(), exact);
    // BUSY replies: the packet goes again.
    let net = md.bus().link_mut().sim_network().unwrap();
    let foe = net.subdevice_mut(0).unwrap().foe_mut().unwrap();
    foe.busy_replies = 3;
    foe.password = Some(0x1234_5678);
    md.foe_write(0, "busy.bin", 0x1234_5678, &f[..1000])
        .unwrap();
    assert_eq!(md.foe_read(0, "busy.bin", 0x1234_5678).unwrap(), &f[..1000]);
    // Wrong password, file not found: one sentence naming who and what.
    let e = md.foe_read(0, "busy.bin", 1).unwrap_err().to_string();
    println!("{e}");
    assert!(
        e.contains("SubDevice 0 (0x1001") && e.contains("FoE read of 'busy.bin'"),
        "{e}"
    );
    assert!(e.contains("0x8002 (access denied)"), "{e}");
    let e = md
        .foe_read(0, "nope.bin", 0x1234_5678)
        .unwrap_err()
        .to_string();
    println!("{e}");
    assert!(
        e.contains("FoE read of 'nope.bin'") && e.contains("0x8001 (file not found)"),
        "{e}"
    );
}

#[test]
fn firmware_update_through_boot_with_the_bootstrap_mailbox() {
    let mut md = open();
    let fw = file(5000);
    md.firmware_update(2, "drive_fw.efw", 0, &fw, AlState::PreOp)
        .unwrap();
    let net = md.bus().link_mut().sim_network().unwrap();
    let esc = net.subdevice(2).unwrap();
    assert_eq!(
        esc.foe().unwrap().firmware.clone(),
        Some(("drive_fw.efw".to_string(), fw))
    );
    md.refresh_states().unwrap();
    assert_eq!(md.subdevices()[2].al_status.state(), Some(AlState::PreOp));
    // A SubDevice whose SII has no bootstrap mailbox: said so, naming it and the request.
    let e = md
        .firmware_update(0, "x.efw", 0, &[1, 2, 3], AlState::PreOp)
        .unwrap_err()
        .to_string();
    println!("{e}");
    assert!(
        e.contains("SubDevice 0") && e.contains("FoE write of 'x.efw'") && e.contains("bootstrap"),
        "{e}"
    );
    // And the bus still reaches OP afterwards.
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
}

#[test]
fn soe_idns_read_write_fragments_and_errors() {
    let mut md = open();
    let s1: Idn = "S-0-0001".parse().unwrap();
    let v = md.soe_read(2, 0, s1, Elements::VALUE).unwrap();
    assert_eq!(v.len(), 2, "S-0-0001 is a 2-byte cycle time");
    let name = md.soe_read(2, 0, s1, Elements::NAME).unwrap();
    assert!(name.len() > 4, "{name:?}");
    // Write and read back a writable IDN (P-0-0150 has limits).
    let p150: Idn = "P-0-0150".parse().unwrap();
    let before = md.soe_read(2, 0, p150, Elements::VALUE).unwrap();
    let mut want = before.clone();
    want[0] ^= 1;
    match md.soe_write(2, 0, p150, Elements::VALUE, &want) {
        Ok(()) => assert_eq!(md.soe_read(2, 0, p150, Elements::VALUE).unwrap(), want),
        Err(e) => panic!("write of P-0-0150: {e}"),
    }
    // The IDN list (S-0-0017) is long: fragments.
    let list = md.soe_read(2, 0, Idn(17), Elements::VALUE).unwrap();
    assert!(list.len() >= 4 + 2 * 10, "{} bytes", list.len());
    // A missing IDN: one sentence with the SubDevice, the request and the decoded code.
    let e = md
        .soe_read(2, 0, "S-0-4000".parse().unwrap(), Elements::VALUE)
        .unwrap_err()
        .to_string();
    println!("{e}");
    assert!(
        e.contains("SubDevice 2") && e.contains("SoE read of S-0-4000"),
        "{e}"
    );
    assert!(e.contains("0x1001 (IDN not present)"), "{e}");
    // SoE on a SubDevice without SoE.
    let e = md
        .soe_read(1, 0, s1, Elements::VALUE)
        .unwrap_err()
        .to_string();
    println!("{e}");
    assert!(
        e.contains("SubDevice 1") && e.contains("SoE read of S-0-0001"),
        "{e}"
    );
    // VoE echo.
    let m = VoeMessage {
        vendor_id: 2,
        vendor_type: 7,
        data: b"hello".to_vec(),
    };
    assert_eq!(md.voe(2, m.clone(), true).unwrap(), Some(m));
}

#[test]
fn foe_and_soe_in_op_through_the_mailbox_service() {
    let vt = VirtualTime::new();
    let md = common::sim::scanned("mbx", Some(&vt));
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    let client = rt.mailbox_client();
    let f = file(20_000);
    let w = client
        .submit(
            1,
            FoeOp::Write {
                name: "op.bin".into(),
                password: 0,
                data: f.clone(),
            },
        )
        .unwrap();
    let s = client
        .submit(
            2,
            SoeOp::Read {
                drive: 0,
                idn: Idn(1),
                elements: Elements::VALUE,
            },
        )
        .unwrap();
    let mut cycles = 0;
    let (mut wr, mut sr) = (None, None);
    while (wr.is_none() || sr.is_none()) && cycles < 10_000 {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
        wr = wr.or_else(|| w.poll());
        sr = sr.or_else(|| s.poll());
        cycles += 1;
        assert!(
            rt.domain(0).state() == ecat::domain::DomainState::Complete || cycles < 3,
            "process data incomplete in cycle {cycles}"
        );
    }
    wr.expect("FoE write answered").unwrap();
    assert_eq!(sr.expect("SoE read answered").unwrap().len(), 2);
    let packets = f.len().div_ceil(116);
    println!(
        "FoE write of {} bytes in OP: {cycles} cycles ({packets} packets)",
        f.len()
    );
    assert!(cycles as usize <= 2 * packets + 6, "{cycles} cycles");
    // FoE to a SubDevice without FoE, while cycling.
    let e = client
        .submit(
            2,
            SoeOp::Read {
                drive: 0,
                idn: "S-0-4000".parse().unwrap(),
                elements: Elements::VALUE,
            },
        )
        .unwrap();
    let r = (0..100).find_map(|_| {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
        e.poll()
    });
    let t = r.unwrap().unwrap_err().to_string();
    assert!(t.contains("IDN not present"), "{t}");
}

#[test]
fn voe_answers_sent_unasked_are_kept_for_the_application() {
    // A VoE message posted without waiting: the simulator's echo arrives unasked, is picked
    // up through the cyclic SM1 status and kept for the application.
    use ecat::mailbox::voe::VoeOp;
    use ecat_wire::mailbox::MailboxType;
    let vt = VirtualTime::new();
    let md = common::sim::scanned("mbx", Some(&vt));
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 5_000).unwrap();
    let m = VoeMessage {
        vendor_id: 0xECA,
        vendor_type: 3,
        data: vec![1, 2, 3],
    };
    let p = rt
        .mailbox_client()
        .submit(2, VoeOp::Send(m.clone()))
        .unwrap();
    let mut got = None;
    for _ in 0..20 {
        vt.advance(1_000_000);
        rt.tx_rx(1_000_000).unwrap();
        got = got.or_else(|| rt.take_mailbox_message(2, MailboxType::Voe));
    }
    p.poll().expect("VoE send done").unwrap();
    let msg = got.expect("the echo was kept");
    assert_eq!(VoeMessage::parse(&msg[6..]), Some(m));
}
