//! Each of IgH's PDO configuration rules pinned (see the module documentation of
//! `pdo_setup`), on an EL-style SubDevice with a mailbox, CoE and SM2/SM3 for process data.

use super::*;
use crate::config::{Direction, EntryConfig};
use crate::subdevice::{MailboxArea, MailboxInfo, Pdo, PdoEntry, SiiSyncManager};

fn sm(start: u16, control: u8, kind: u8) -> SiiSyncManager {
    SiiSyncManager {
        start,
        length: if kind <= 2 { 128 } else { 0 },
        control,
        enable: 1,
        kind,
    }
}

fn entry(index: u16, subindex: u8, bits: u8) -> EntryConfig {
    EntryConfig {
        index,
        subindex,
        bits,
    }
}

fn device(coe_details: u8) -> SubDevice {
    let pdo = |index: u16, sm: u8, e: (u16, u8, u8)| Pdo {
        index,
        sync_manager: sm,
        name: String::new(),
        entries: vec![PdoEntry {
            index: e.0,
            subindex: e.1,
            bits: e.2,
            ..Default::default()
        }],
    };
    SubDevice {
        mailbox: MailboxInfo {
            rx: MailboxArea {
                offset: 0x1000,
                size: 128,
            },
            tx: MailboxArea {
                offset: 0x1080,
                size: 128,
            },
            protocols: 0x04,
            ..Default::default()
        },
        coe_details,
        sync_managers: vec![
            sm(0x1000, 0x26, 1),
            sm(0x1080, 0x22, 2),
            sm(0x1100, 0x64, 3),
            sm(0x1180, 0x20, 4),
        ],
        rx_pdos: vec![
            pdo(0x1600, 2, (0x7000, 1, 16)),
            pdo(0x1601, 0xFF, (0x7010, 1, 16)),
        ],
        tx_pdos: vec![pdo(0x1A00, 3, (0x6000, 1, 16))],
        ..Default::default()
    }
}

fn sync(index: u8, direction: Direction, pdos: Vec<(u16, Vec<EntryConfig>)>) -> SyncConfig {
    SyncConfig {
        index,
        direction,
        pdos: pdos
            .into_iter()
            .map(|(index, entries)| PdoConfig { index, entries })
            .collect(),
        domain: 0,
    }
}

/// What the device has by default: 0x1600 on SM2, 0x1A00 on SM3.
fn defaults() -> SubDeviceConfig {
    SubDeviceConfig {
        sync: vec![
            sync(
                2,
                Direction::Output,
                vec![(0x1600, vec![entry(0x7000, 1, 16)])],
            ),
            sync(
                3,
                Direction::Input,
                vec![(0x1A00, vec![entry(0x6000, 1, 16)])],
            ),
        ],
    }
}

/// `ethercat cstruct`'s shape: SM0/SM1 with no PDOs, then the device's own.
fn cstruct_like() -> SubDeviceConfig {
    let mut c = defaults();
    c.sync.insert(0, sync(1, Direction::Input, vec![]));
    c.sync.insert(0, sync(0, Direction::Output, vec![]));
    c
}

fn objects(p: &PdoPlan) -> Vec<(u16, u8)> {
    p.ops
        .iter()
        .map(|o| match o {
            SdoOp::Download {
                index, subindex, ..
            } => (*index, *subindex),
            _ => (0, 0),
        })
        .collect()
}

const ALL: u8 = COE_PDO_ASSIGN | COE_PDO_CONFIG | 0x01;

#[test]
fn mailbox_sync_managers_are_accepted_and_never_written() {
    let d = device(ALL);
    let (kept, warnings) = process_data_only(&d, &cstruct_like());
    assert_eq!(kept, defaults());
    assert!(warnings.is_empty(), "{warnings:?}");
    let p = plan(&d, Some(&defaults()), &cstruct_like());
    assert!(p.ops.is_empty(), "nothing differs: {:?}", objects(&p));
    // Even when nothing is known, no 0x1C10/0x1C11 is ever written.
    let p = plan(&d, None, &cstruct_like());
    assert!(!objects(&p).iter().any(|o| o.0 == 0x1C10 || o.0 == 0x1C11));
}

#[test]
fn a_sync_manager_the_sii_does_not_describe_is_a_warning_and_skipped() {
    let d = device(ALL);
    let mut c = defaults();
    c.sync.push(sync(
        5,
        Direction::Input,
        vec![(0x1A05, vec![entry(0x6050, 1, 8)])],
    ));
    let (kept, warnings) = process_data_only(&d, &c);
    assert_eq!(kept, defaults());
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("SM5"), "{}", warnings[0]);
    assert!(plan(&d, Some(&defaults()), &c).ops.is_empty());
}

#[test]
fn only_the_differing_pdo_mapping_is_written() {
    let d = device(ALL);
    let mut want = defaults();
    want.sync[0].pdos[0].entries = vec![entry(0x7000, 1, 16), entry(0x7000, 2, 8)];
    let p = plan(&d, Some(&defaults()), &want);
    assert_eq!(
        objects(&p),
        vec![(0x1600, 0), (0x1600, 1), (0x1600, 2), (0x1600, 0)],
        "the assignment is the same: only the mapping of 0x1600"
    );
    assert!(p.steps.iter().all(|s| s.skip_to == 4));
    assert_eq!(p.differences.len(), 1);
    assert!(!p.differences[0].stays);
}

#[test]
fn only_the_differing_assignment_is_written_in_etg_order() {
    let d = device(ALL);
    let mut want = defaults();
    want.sync[0].pdos.push(PdoConfig {
        index: 0x1601,
        entries: vec![entry(0x7010, 1, 16)],
    });
    let p = plan(&d, Some(&defaults()), &want);
    // 0x1601's mapping is known from the SII's PDO list and the same: only the assignment.
    assert_eq!(
        objects(&p),
        vec![(0x1C12, 0), (0x1C12, 1), (0x1C12, 2), (0x1C12, 0)]
    );
    let last = p.ops.last().unwrap();
    assert!(matches!(last, SdoOp::Download { data, .. } if data == &vec![2]));
    assert!(p.steps.iter().all(|s| s.skip_to == p.ops.len()));
}

#[test]
fn assignment_and_mapping_change_together_zero_count_first() {
    let d = device(ALL);
    let want = SubDeviceConfig {
        sync: vec![
            sync(
                2,
                Direction::Output,
                vec![(0x1601, vec![entry(0x7010, 1, 32)])],
            ),
            defaults().sync[1].clone(),
        ],
    };
    let p = plan(&d, Some(&defaults()), &want);
    assert_eq!(
        objects(&p),
        vec![
            (0x1C12, 0),
            (0x1601, 0),
            (0x1601, 1),
            (0x1601, 0),
            (0x1C12, 1),
            (0x1C12, 0)
        ]
    );
    // A refused mapping goes on at the assignment; a refused assignment ends the plan.
    assert_eq!(p.steps[1].skip_to, 4);
    assert_eq!(p.steps[0].skip_to, 6);
    assert_eq!(p.steps[4].skip_to, 6);
}

#[test]
fn nothing_is_written_without_the_sii_coe_details_bits() {
    // An EL4102-like terminal: CoE with SDO info but no PDO assignment/configuration bits.
    let d = device(0x01);
    let mut want = defaults();
    want.sync[0].pdos[0].entries = vec![entry(0x7000, 2, 16)];
    let p = plan(&d, Some(&defaults()), &want);
    assert!(p.ops.is_empty());
    assert_eq!(p.warnings.len(), 1);
    assert!(
        p.warnings[0].contains("does not allow PDO configuration"),
        "{}",
        p.warnings[0]
    );
    assert!(p.differences[0].stays);
    let text = p.differences_text(&[]).unwrap();
    assert!(
        text.contains("SM2") && text.contains("0x7000:02/16"),
        "{text}"
    );
    // Same sizes (another revision's entry names): the layout is the application's, the
    // report says both, and the sizes are equal.
    assert!(
        text.contains("= 2 bytes, the SubDevice has 0x1600 (0x7000:01/16) = 2 bytes"),
        "{text}"
    );
}

#[test]
fn assignment_bit_alone_allows_the_assignment_but_not_the_mapping() {
    let d = device(COE_PDO_ASSIGN);
    let mut want = defaults();
    want.sync[0].pdos = vec![PdoConfig {
        index: 0x1601,
        entries: vec![entry(0x7010, 1, 16)],
    }];
    let p = plan(&d, Some(&defaults()), &want);
    assert_eq!(objects(&p), vec![(0x1C12, 0), (0x1C12, 1), (0x1C12, 0)]);
    assert!(
        p.warnings.is_empty(),
        "0x1601's mapping is the same: {:?}",
        p.warnings
    );
}

#[test]
fn no_coe_means_no_writes_and_a_warning_when_different() {
    let mut d = device(0);
    d.mailbox = MailboxInfo::default();
    let mut want = defaults();
    want.sync[1].pdos[0].entries = vec![entry(0x6000, 1, 8)];
    let p = plan(&d, Some(&defaults()), &want);
    assert!(p.ops.is_empty());
    assert!(p.warnings[0].contains("no CoE"), "{}", p.warnings[0]);
    assert!(plan(&d, Some(&defaults()), &defaults())
        .differences
        .is_empty());
}

#[test]
fn unknown_current_writes_everything_allowed() {
    let d = device(ALL);
    let p = plan(&d, None, &defaults());
    assert_eq!(
        objects(&p),
        vec![
            (0x1C12, 0),
            (0x1600, 0),
            (0x1600, 1),
            (0x1600, 0),
            (0x1C12, 1),
            (0x1C12, 0),
            (0x1C13, 0),
            (0x1A00, 0),
            (0x1A00, 1),
            (0x1A00, 0),
            (0x1C13, 1),
            (0x1C13, 0),
        ]
    );
    assert!(p.warnings.is_empty());
    assert!(p.differences.iter().all(|d| !d.stays));
}

#[test]
fn lists_longer_than_a_subindex_counts_are_not_written() {
    let d = device(ALL);
    let mut want = defaults();
    want.sync[0].pdos[0].entries = vec![entry(0x7000, 1, 1); 256];
    want.sync[1].pdos = (0..256)
        .map(|k| PdoConfig {
            index: 0x1A00 + k,
            entries: vec![entry(0x6000, 1, 1)],
        })
        .collect();
    let p = plan(&d, Some(&defaults()), &want);
    assert!(
        !objects(&p).iter().any(|o| o.0 == 0x1600 || o.0 == 0x1C13),
        "{:?}",
        objects(&p)
    );
    assert!(
        p.warnings.iter().any(|w| w.contains("256 entries")),
        "{:?}",
        p.warnings
    );
    assert!(
        p.warnings.iter().any(|w| w.contains("256 PDOs")),
        "{:?}",
        p.warnings
    );
    // ENI export's writer stops at 255 too.
    let ops = crate::pdo_coe::write_ops(&want);
    assert!(ops.iter().all(|o| matches!(o, SdoOp::Download { .. })));
}
