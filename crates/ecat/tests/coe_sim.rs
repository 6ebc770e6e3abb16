//! Our CoE client against the simulated servo drives, in-process: every SDO form, complete
//! access, SDO information, aborts with decoded codes, PDO remapping that changes the process
//! data, and SDO requests from another thread while cycling.

use ecat::config::Direction;
use ecat::link::sim::SimLink;
use ecat::mailbox::sdo::SdoOp;
use ecat::runtime::Activation;
use ecat::{pdo_coe, Error, MainDevice};
use ecat_sim::Network;
use ecat_wire::al::AlState;
use ecat_wire::coe::info::{EntryDescriptionRepr, ObjectDescriptionRepr, OdListType};

fn open(net: &str) -> MainDevice {
    let link = SimLink::with_network(
        Network::open(net).unwrap(),
        format!("sim:{net}"),
        net.into(),
    );
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    md
}

#[test]
fn every_sdo_form() {
    let mut md = open("servo6");
    // Expedited.
    assert_eq!(
        md.sdo_upload(0, 0x1018, 1, false).unwrap(),
        0x0000_0ECAu32.to_le_bytes()
    );
    md.sdo_download(0, 0x6060, 0, false, &[3]).unwrap();
    assert_eq!(md.sdo_upload(0, 0x6060, 0, false).unwrap(), [3]);
    // Normal upload (longer than 4 bytes).
    let name = md.sdo_upload(0, 0x1008, 0, false).unwrap();
    assert!(
        name.len() > 4 && name.starts_with(b"ecat"),
        "{:?}",
        String::from_utf8_lossy(&name)
    );
    // Segmented download and upload (200 bytes through a 128-byte mailbox).
    let text: Vec<u8> = (0..200u8).map(|i| b'a' + i % 26).collect();
    md.sdo_download(0, 0x2001, 0, false, &text).unwrap();
    assert_eq!(md.sdo_upload(0, 0x2001, 0, false).unwrap(), text);
    // Complete access: the PDO assignment with subindex 0 (2 bytes for SI0).
    assert_eq!(
        md.sdo_upload(0, 0x1C12, 0, true).unwrap(),
        [1, 0, 0x00, 0x16]
    );
    // Aborts name the SubDevice, the transfer, and decode the code.
    let e = md.sdo_upload(0, 0x5555, 0, false).unwrap_err();
    assert!(matches!(e, Error::SdoAbort { .. }));
    let t = e.to_string();
    assert!(
        t.contains("SubDevice 0 (0x1001") && t.contains("upload 0x5555:00"),
        "{t}"
    );
    assert!(
        t.contains("0x06020000 (object does not exist in the object dictionary)"),
        "{t}"
    );
    let e = md
        .sdo_download(0, 0x1018, 1, false, &[5, 0, 0, 0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("0x06010002"), "{e}");
    // SDO information: the object list (fragmented), and a description.
    let list = md
        .sdo(
            0,
            SdoOp::OdList {
                list_type: OdListType(1),
            },
        )
        .unwrap();
    let idx: Vec<u16> = list
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert!(
        idx.len() > 57 && idx.contains(&0x6041) && idx.contains(&0x1018),
        "{} objects",
        idx.len()
    );
    let d = md
        .sdo(0, SdoOp::ObjectDescription { index: 0x6041 })
        .unwrap();
    let d = ObjectDescriptionRepr::parse(&d).unwrap();
    assert_eq!(d.index, 0x6041);
    assert!(String::from_utf8_lossy(d.name).contains("Statusword"));
}

#[test]
fn subdevice_without_coe_says_so() {
    let mut md = open("io");
    let e = md.sdo_upload(1, 0x1018, 1, false).unwrap_err().to_string();
    assert!(
        e.contains("SubDevice 1 (0x1002, EL2008") && e.contains("has no CoE mailbox"),
        "{e}"
    );
}

#[test]
fn remap_over_coe_changes_the_process_data() {
    let mut md = open("servo6");
    let mut cfg = pdo_coe::read_config(&mut md, 2).unwrap();
    let tx = cfg
        .sync
        .iter_mut()
        .find(|s| s.direction == Direction::Input)
        .unwrap();
    tx.pdos[0].entries.push(ecat::config::EntryConfig {
        index: 0x6077,
        subindex: 0,
        bits: 16,
    });
    pdo_coe::write_config(&mut md, 2, &cfg).unwrap();
    // Activation reads the assignment back over CoE.
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 3_000).unwrap();
    let d = rt.domain(0);
    assert_eq!(d.inputs_len, 60 + 2, "drive 2 now sends 12 bytes");
    assert!(rt.locate(2, 0x6077, 0).is_some());
    assert!(rt.locate(1, 0x6077, 0).is_none());
}

#[test]
fn sdo_from_another_thread_while_cycling() {
    let md = open("servo6");
    let mut rt = md.activate(Activation::default()).unwrap();
    rt.run_until_state(AlState::Op, 1_000_000, 3_000).unwrap();
    let client = rt.sdo_client();
    let worker = std::thread::spawn(move || {
        let mut ok = 0;
        for i in 0..100u32 {
            let p = client.upload((i % 6) as usize, 0x1018, 1).unwrap();
            let v = p
                .wait(std::time::Duration::from_secs(5))
                .expect("answer in time")
                .unwrap();
            assert_eq!(v, 0x0000_0ECAu32.to_le_bytes());
            ok += 1;
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        ok
    });
    let mut cycles = 0;
    while !worker.is_finished() {
        assert!(
            rt.tx_rx(1_000_000).unwrap(),
            "every cyclic frame comes back"
        );
        let d = rt.domain(0);
        assert_eq!(d.wkc(), d.expected_wkc());
        cycles += 1;
        std::thread::sleep(std::time::Duration::from_micros(900));
    }
    assert_eq!(worker.join().unwrap(), 100);
    let (cy, _, _) = rt.counters();
    println!(
        "{cycles} cycles, cyclic frames lost {} late {}",
        cy.frames_lost, cy.frames_late
    );
    assert_eq!((cy.frames_lost, cy.frames_late), (0, 0));
}

#[test]
fn mailbox_timeout_names_the_subdevice_and_the_request() {
    let mut md = open("servo6");
    md.request_state(&[3], AlState::PreOp, std::time::Duration::from_secs(1))
        .unwrap();
    // The drive leaves the ring after the scan: its mailbox never answers.
    md.bus()
        .link_mut()
        .sim_network()
        .unwrap()
        .unplug(3)
        .unwrap();
    let t = std::time::Instant::now();
    let e = md.sdo_upload(3, 0x1018, 1, false).unwrap_err().to_string();
    println!("{e} ({} ms)", t.elapsed().as_millis());
    assert!(e.contains("SubDevice 3 (0x1004"), "{e}");
    assert!(e.contains("upload 0x1018:01"), "{e}");
}

#[test]
fn long_descriptions_arrive_in_fragments_and_are_reassembled() {
    // Names far longer than any mailbox: the simulator sends them in fragments, as real
    // devices do, and the MainDevice puts them together.
    let mut net = Network::open("servo").unwrap();
    let object: String = (0..1400).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let entry: String = (0..900).map(|i| (b'A' + (i % 26) as u8) as char).collect();
    let od = net.subdevice_mut(0).unwrap().od_mut().unwrap();
    od.object_mut(0x1018).unwrap().name = object.as_str().into();
    od.entry_mut(0x1018, 1).unwrap().name = entry.as_str().into();
    let link = SimLink::with_network(net, "sim:servo".into(), "servo".into());
    let mut md = MainDevice::with_link(Box::new(link));
    md.scan().unwrap();
    let mbx = md.subdevice(0).unwrap().mailbox.tx.size as usize;
    assert!(entry.len() > 2 * mbx, "mailbox of {mbx} bytes");
    let d = md
        .sdo(0, SdoOp::ObjectDescription { index: 0x1018 })
        .unwrap();
    let d = ObjectDescriptionRepr::parse(&d).unwrap();
    assert_eq!((d.index, d.max_subindex), (0x1018, 4));
    assert_eq!(d.name, object.as_bytes());
    let e = md
        .sdo(
            0,
            SdoOp::EntryDescription {
                index: 0x1018,
                subindex: 1,
                value_info: 0,
            },
        )
        .unwrap();
    let e = EntryDescriptionRepr::parse(&e).unwrap();
    assert_eq!((e.index, e.subindex), (0x1018, 1));
    assert_eq!(e.data, entry.as_bytes());
    // And the next request still gets its own answer.
    assert_eq!(
        md.sdo_upload(0, 0x1018, 1, false).unwrap(),
        0x0000_0ECAu32.to_le_bytes()
    );
}
