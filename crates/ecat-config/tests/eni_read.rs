//! The shipped TwinCAT-style ENI parses, and what we read matches counts taken independently
//! from the text (substring counts over each element's span).

use ecat_config::eni::{Eni, Transition};
use std::path::PathBuf;

fn shipped() -> PathBuf {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    for dir in ["../shared/testdata", "../../shared/testdata", "testdata"] {
        let p = repo.join(dir).join("eni/twincat-style-4xElmoGold-IMU.xml");
        if p.exists() {
            return p;
        }
    }
    repo.join("testdata/eni/twincat-style-4xElmoGold-IMU.xml")
}

/// The text between the first `open` at or after `from` and its matching `close`.
fn span<'a>(text: &'a str, open: &str, close: &str, from: usize) -> Option<(usize, &'a str)> {
    let s = from + text[from..].find(open)?;
    let e = s + text[s..].find(close)? + close.len();
    Some((e, &text[s..e]))
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn shipped_eni_counts_match_the_file() {
    let path = shipped();
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("skipped: {} not found", path.display());
        return;
    };
    let eni = Eni::from_path(&path).unwrap();

    // Slaves.
    let mut slaves = Vec::new();
    let mut at = 0;
    while let Some((end, s)) = span(&text, "<Slave>", "</Slave>", at) {
        slaves.push(s);
        at = end;
    }
    assert_eq!(eni.slaves.len(), slaves.len());
    assert_eq!(eni.slaves.len(), 5);

    // Master init commands.
    let (_, master) = span(&text, "<Master>", "</Master>", 0).unwrap();
    assert_eq!(eni.master.init_cmds.len(), count(master, "<InitCmd>"));
    assert_eq!(eni.master.init_cmds.len(), 12);
    assert_eq!(eni.master.mailbox_states, Some((0x0900_0000, 1)));

    let mut total_init = 0;
    let mut total_coe = 0;
    for (s, t) in eni.slaves.iter().zip(&slaves) {
        // CoE init commands live in Mailbox/CoE/InitCmds; the rest are EtherCAT ones.
        let coe = span(t, "<CoE>", "</CoE>", 0)
            .map_or(0, |(_, c)| count(c, "<InitCmd>") + count(c, "<InitCmd "));
        let all = count(t, "<InitCmd>") + count(t, "<InitCmd ");
        assert_eq!(s.coe_init_cmds().len(), coe, "{}", s.name);
        assert_eq!(s.init_cmds.len(), all - coe, "{}", s.name);
        assert_eq!(
            s.process_data.tx_pdos.len(),
            count(t, "<TxPdo"),
            "{}",
            s.name
        );
        assert_eq!(
            s.process_data.rx_pdos.len(),
            count(t, "<RxPdo"),
            "{}",
            s.name
        );
        total_init += s.init_cmds.len();
        total_coe += coe;
    }
    assert_eq!((total_init, total_coe), (237, 48));
    println!(
        "slaves {} master init {} slave init {} coe init {}",
        eni.slaves.len(),
        eni.master.init_cmds.len(),
        total_init,
        total_coe
    );

    // Identity and addresses.
    let imu = &eni.slaves[0];
    assert_eq!(imu.name, "Imu");
    assert_eq!((imu.identity.vendor, imu.identity.product), (0x21, 1));
    assert_eq!((imu.phys_addr, imu.position()), (1001, 0));
    let drive = &eni.slaves[1];
    assert_eq!(drive.position(), 1);
    assert_eq!(drive.identity.vendor, 0x9a);
    assert_eq!(drive.process_data.sms[0].pdos, vec![0x1601]);
    assert_eq!(drive.process_data.send.unwrap().bit_start, 776);
    assert!(drive.dc.unwrap().reference_clock);
    assert_eq!(drive.dc.unwrap().cycle_time0, Some(10_000_000));
    assert_eq!(drive.dc_init_cmds().count(), 7);
    let mb = drive.mailbox.as_ref().unwrap();
    assert_eq!(
        (mb.send.start, mb.send.len, mb.recv.start),
        (0x1800, 140, 0x1900)
    );
    let c = &drive.coe_init_cmds()[6];
    assert_eq!(
        (c.index, c.subindex, c.data.as_slice()),
        (0x1c12, 1, &[0x01, 0x16][..])
    );
    assert!(c.is_download() && c.transitions == vec![Transition::PS]);
    let v = drive
        .init_cmds
        .iter()
        .find(|c| c.comment == "check device state for SAFEOP" && c.has(Transition::PS))
        .unwrap();
    let val = v.validate.as_ref().unwrap();
    assert_eq!(
        (v.cmd, v.adp, v.ado, val.timeout_ms),
        (4, 1002, 0x130, 10_000)
    );

    // Cyclic frames and commands.
    let (_, cyc) = span(&text, "<Cyclic>", "</Cyclic>", 0).unwrap();
    let frames: usize = eni.cyclic.iter().map(|c| c.frames.len()).sum();
    assert_eq!(frames, count(cyc, "<Frame>"));
    assert_eq!(eni.cyclic_cmds().count(), count(cyc, "<Cmd>") / 2);
    assert_eq!(eni.cyclic_cmds().count(), 6);
    let lrw = eni.cyclic_cmds().find(|c| c.cmd == 12).unwrap();
    assert_eq!(
        (lrw.logical(), lrw.data_len, lrw.cnt),
        (0x0100_0800, 56, Some(12))
    );
    assert_eq!(lrw.image_range(true), Some(97..153));

    // Variables.
    let (_, inputs) = span(&text, "<Inputs>", "</Inputs>", 0).unwrap();
    let (_, outputs) = span(&text, "<Outputs>", "</Outputs>", 0).unwrap();
    let pi = &eni.process_image;
    assert_eq!(pi.inputs.variables.len(), count(inputs, "<Variable>"));
    assert_eq!(pi.outputs.variables.len(), count(outputs, "<Variable>"));
    assert_eq!(
        (pi.inputs.variables.len(), pi.outputs.variables.len()),
        (34, 11)
    );
    assert_eq!(pi.inputs.byte_size, 1536);
    let pos = pi
        .inputs
        .variables
        .iter()
        .find(|v| v.name == "WheelRearLeft.Inputs.Position actual value")
        .unwrap();
    assert_eq!(
        (pos.bit_offs, pos.bit_size, pos.data_type.as_str()),
        (776, 32, "DINT")
    );

    // Every element of the file is read: no notes. The drives' CoE profile is 402.
    for n in eni.notes() {
        println!("note: {n}");
    }
    assert!(eni.notes().is_empty(), "{:?}", eni.notes());
    let profiles: Vec<_> = eni
        .slaves
        .iter()
        .map(|s| s.mailbox.as_ref().map(|m| m.coe_profiles.clone()))
        .collect();
    assert_eq!(profiles[0], Some(vec![]), "the IMU names no profile");
    for p in &profiles[1..] {
        assert_eq!(p, &Some(vec![(402, 0)]));
    }
}

#[test]
fn malformed_xml_gives_file_line_column() {
    let e = Eni::parse_str("<EtherCATConfig>\n  <Config>\n  </Confg>\n", "net.xml")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("net.xml:3:"), "{e}");
    let e = Eni::parse_str("<EtherCATInfo/>", "x.xml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("x.xml:1:1") && e.contains("<EtherCATConfig>"),
        "{e}"
    );
    let bad = "<EtherCATConfig><Config><Slave><Info/><InitCmds><InitCmd>\
               <Transition>IP</Transition><Cmd>#xZZ</Cmd></InitCmd></InitCmds></Slave></Config></EtherCATConfig>";
    let e = Eni::parse_str(bad, "y.xml").unwrap_err().to_string();
    assert!(
        e.starts_with("y.xml:1:") && e.contains("<Cmd>") && e.contains("#xZZ"),
        "{e}"
    );
    let bad = "<EtherCATConfig><Config><Slave><Info/><InitCmds><InitCmd>\
               <Transition>XX</Transition><Cmd>1</Cmd></InitCmd></InitCmds></Slave></Config></EtherCATConfig>";
    let e = Eni::parse_str(bad, "z.xml").unwrap_err().to_string();
    assert!(e.contains("Transition") && e.contains("XX"), "{e}");
}

#[test]
fn receive_is_accepted_for_recv_and_ccs_does_not_decide_direction() {
    let t = "<EtherCATConfig><Config><Slave><Info><Name>a</Name></Info><Mailbox>\
             <Send><Start>0x1000</Start><Length>128</Length></Send>\
             <Receive><Start>0x1080</Start><Length>128</Length></Receive>\
             <CoE><InitCmds><InitCmd CompleteAccess=\"1\"><Transition>PS</Transition><Ccs>2</Ccs>\
             <Index>#x1c12</Index><SubIndex>0</SubIndex><Data>0100</Data></InitCmd>\
             <InitCmd><Transition>PS</Transition><Ccs>1</Ccs><Index>#x1000</Index>\
             <SubIndex>0</SubIndex></InitCmd></InitCmds></CoE>\
             <Mystery/></Mailbox></Slave></Config></EtherCATConfig>";
    let e = Eni::parse_str(t, "m.xml").unwrap();
    let m = e.slaves[0].mailbox.as_ref().unwrap();
    assert_eq!((m.recv.start, m.recv.len), (0x1080, 128));
    let c = &m.coe_init_cmds;
    assert!(c[0].is_download() && c[0].complete_access && c[0].ccs == 2);
    assert!(!c[1].is_download());
    assert_eq!(e.notes().len(), 1);
    assert!(e.notes()[0].contains("Config/Slave/Mailbox/Mystery"));
}

#[test]
fn what_we_write_reads_back_to_the_same_model() {
    let path = shipped();
    if !path.exists() {
        return;
    }
    let eni = Eni::from_path(&path).unwrap();
    let xml = eni.to_xml();
    let back = Eni::parse_str(&xml, "written.xml").unwrap();
    assert_eq!(back.master, eni.master);
    for (a, b) in back.slaves.iter().zip(&eni.slaves) {
        assert_eq!(a.process_data.sms, b.process_data.sms, "{}", a.name);
        for (x, y) in a.process_data.tx_pdos.iter().zip(&b.process_data.tx_pdos) {
            assert_eq!(x, y, "{}", a.name);
        }
        for (x, y) in a.process_data.rx_pdos.iter().zip(&b.process_data.rx_pdos) {
            assert_eq!(x, y, "{}", a.name);
        }
        assert_eq!(a.process_data, b.process_data, "{}", a.name);
        assert_eq!(a.mailbox, b.mailbox, "{}", a.name);
        for (x, y) in a.init_cmds.iter().zip(&b.init_cmds) {
            assert_eq!(x, y, "{}", a.name);
        }
        assert_eq!(a.dc, b.dc, "{}", a.name);
        assert_eq!(a.previous_ports, b.previous_ports, "{}", a.name);
    }
    assert_eq!(back.slaves, eni.slaves);
    assert_eq!(back.cyclic, eni.cyclic);
    assert_eq!(back.process_image, eni.process_image);
    assert!(back.notes().is_empty(), "{:?}", back.notes());
}

#[test]
fn truncated_files_give_errors_not_panics() {
    let Ok(text) = std::fs::read_to_string(shipped()) else {
        return;
    };
    let mut errors = 0;
    for cut in (0..text.len()).step_by(331) {
        let Some(part) = text.get(..cut) else {
            continue;
        };
        if let Err(e) = Eni::parse_str(part, "cut.xml") {
            let m = e.to_string();
            assert!(m.starts_with("cut.xml:"), "{m}");
            errors += 1;
        }
    }
    assert!(errors > 100);
    // Values out of range or of the wrong kind are refused with their place.
    let bad = text.replacen("<Cnt>1</Cnt>", "<Cnt>70000</Cnt>", 1);
    let e = Eni::parse_str(&bad, "cnt.xml").unwrap_err().to_string();
    assert!(
        e.contains("out of range") && e.starts_with("cnt.xml:"),
        "{e}"
    );
}

#[test]
fn identity_checks_follow_the_init_commands() {
    let path = shipped();
    if !path.exists() {
        return;
    }
    let eni = Eni::from_path(&path).unwrap();
    for s in &eni.slaves {
        let c = s.checks;
        assert!(
            c.vendor && c.product && !c.revision && !c.serial,
            "{}: {c:?}",
            s.name
        );
    }
}
