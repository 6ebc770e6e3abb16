//! The scanned bus with its configuration as an ENI (the writer's model side): slaves with
//! identity, SMs, the PDOs in use, mailbox and startup SDOs as CoE init commands; init
//! commands for the mailbox and process data SMs, the FMMUs and every state change (with
//! `Validate` of AL status); one cyclic frame per layout with its logical commands and
//! expected working counters plus the AL-status BRD; and the process image with one variable
//! per mapped entry. Offsets are TwinCAT's frame coordinates: the first datagram header at 16
//! (after the Ethernet and EtherCAT headers), each command's data 10 bytes after its header.

use crate::config::{Direction, SubDeviceConfig};
use crate::domain::Layout;
use crate::mailbox::sdo::SdoOp;
use crate::subdevice::SubDevice;
use ecat_config::eni::{
    BitRange, CoeInitCmd, Cyclic, CyclicCmd, CyclicFrame, Eni, EniSm, Identity, Image, InitCmd,
    Mailbox, MailboxArea, Master, ProcessImage, Slave, SlaveDc, Transition, Validate, Variable,
};
use ecat_config::esi::{Pdo, PdoDir, PdoEntry};
use ecat_wire::register::{sm as sm_reg, FMMU0};
use ecat_wire::Command;

/// IEC 61131 type name of a CoE data type code, else by size.
fn iec(code: u8, bits: u8) -> String {
    match code {
        0x01 => "BOOL".into(),
        0x02 => "SINT".into(),
        0x03 => "INT".into(),
        0x04 => "DINT".into(),
        0x05 => "USINT".into(),
        0x06 => "UINT".into(),
        0x07 => "UDINT".into(),
        0x08 => "REAL".into(),
        0x11 => "LREAL".into(),
        0x15 => "LINT".into(),
        0x1B => "ULINT".into(),
        _ => match bits {
            1 => "BOOL".into(),
            8 => "USINT".into(),
            16 => "UINT".into(),
            32 => "UDINT".into(),
            64 => "ULINT".into(),
            n => format!("BIT{n}"),
        },
    }
}

fn cmd(t: &[Transition], comment: &str, c: Command, adp: u16, ado: u16, data: Vec<u8>) -> InitCmd {
    InitCmd {
        transitions: t.to_vec(),
        before_slave: false,
        comment: comment.into(),
        requires: None,
        cmd: c as u8,
        adp,
        ado,
        data,
        cnt: Some(1),
        retries: 3,
        validate: None,
        timeout_ms: None,
    }
}

fn state_cmds(out: &mut Vec<InitCmd>, station: u16, t: Transition, state: u8, name: &str) {
    out.push(cmd(
        &[t],
        &format!("set device state to {name}"),
        Command::Fpwr,
        station,
        0x0120,
        vec![state, 0],
    ));
    let mut check = cmd(
        &[t],
        &format!("check device state for {name}"),
        Command::Fprd,
        station,
        0x0130,
        vec![0; 2],
    );
    check.validate = Some(Validate {
        data: vec![state, 0],
        mask: Some(vec![0x1f, 0]),
        timeout_ms: 10_000,
    });
    out.push(check);
}

/// Where domain image byte `o` of `domain` travels in frame coordinates.
fn frame_pos(
    places: &[(usize, usize, usize, usize, Command)],
    domain: usize,
    o: usize,
    input: bool,
) -> Option<usize> {
    places.iter().find_map(|&(d, off, len, x, c)| {
        let carries = match c {
            Command::Lrd => input,
            Command::Lwr => !input,
            _ => true,
        };
        (d == domain && carries && o >= off && o < off + len).then(|| x + 10 + (o - off))
    })
}

/// The ENI of the bus `subs` configured with `configs`, `startup` SDOs and layout `lay`, for
/// a cycle of `cycle_ns`.
pub fn eni_from_layout(
    subs: &[SubDevice],
    configs: &[SubDeviceConfig],
    startup: &[Vec<SdoOp>],
    lay: &Layout,
    cycle_ns: u64,
) -> Eni {
    // Cyclic commands in frame coordinates.
    let mut x = 16usize;
    let mut cmds = Vec::new();
    let mut places = Vec::new();
    for d in &lay.domains {
        for p in &d.plans {
            places.push((d.index, p.offset, p.len, x, p.command));
            cmds.push(CyclicCmd {
                states: vec!["SAFEOP".into(), "OP".into()],
                comment: format!("domain {}", d.index),
                cmd: p.command as u8,
                addr: Some(p.logical),
                adp: p.logical as u16,
                ado: (p.logical >> 16) as u16,
                data_len: p.len,
                cnt: Some(p.expected_wkc),
                input_offs: Some(x as u32),
                output_offs: Some(x as u32),
                ..Default::default()
            });
            x += 12 + p.len;
        }
    }
    cmds.push(CyclicCmd {
        states: vec!["PREOP".into(), "SAFEOP".into(), "OP".into()],
        comment: "AL status".into(),
        cmd: Command::Brd as u8,
        ado: 0x0130,
        data_len: 2,
        cnt: Some(subs.len() as u16),
        input_offs: Some(x as u32),
        output_offs: Some(x as u32),
        ..Default::default()
    });
    x += 14;
    let image_size = x as u32;
    let names: Vec<String> = subs
        .iter()
        .map(|s| {
            if s.name.is_empty() {
                s.order.clone()
            } else {
                s.name.clone()
            }
        })
        .collect();
    let unique = |p: usize| {
        if names.iter().filter(|n| **n == names[p]).count() > 1 {
            format!("{} {}", names[p], p + 1)
        } else {
            names[p].clone()
        }
    };
    let mut slaves = Vec::new();
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut reference = true;
    for (p, (s, cfg)) in subs.iter().zip(configs).enumerate() {
        let name = unique(p);
        let mut sl = Slave {
            name: name.clone(),
            phys_addr: s.station,
            auto_inc_addr: 0u16.wrapping_sub(p as u16),
            physics: "YY".into(),
            identity: Identity {
                vendor: s.identity.vendor_id,
                product: s.identity.product_code,
                revision: s.identity.revision,
                serial: s.identity.serial,
            },
            ..Default::default()
        };
        let st = s.station;
        let mut ic = Vec::new();
        if s.mailbox.present() {
            let mb = s.mailbox;
            for (n, (a, ctl)) in [(mb.rx, 0x26u8), (mb.tx, 0x22)].into_iter().enumerate() {
                let ctl = s
                    .sync_managers
                    .get(n)
                    .map(|x| x.control)
                    .filter(|&c| c != 0)
                    .unwrap_or(ctl);
                let mut b = vec![0u8; 8];
                b[0..2].copy_from_slice(&a.offset.to_le_bytes());
                b[2..4].copy_from_slice(&a.size.to_le_bytes());
                b[4] = ctl;
                b[6] = 1;
                ic.push(cmd(
                    &[Transition::IP],
                    &format!("set sm {n} (mailbox)"),
                    Command::Fpwr,
                    st,
                    sm_reg(n as u8),
                    b,
                ));
            }
            sl.mailbox = Some(Mailbox {
                send: MailboxArea {
                    start: mb.rx.offset,
                    len: mb.rx.size,
                },
                recv: MailboxArea {
                    start: mb.tx.offset,
                    len: mb.tx.size,
                },
                protocols: mb.protocol_names().iter().map(|x| x.to_string()).collect(),
                coe_init_cmds: startup
                    .get(p)
                    .into_iter()
                    .flatten()
                    .filter_map(|op| match op {
                        SdoOp::Download {
                            index,
                            subindex,
                            complete_access,
                            data,
                        } => Some(CoeInitCmd {
                            transitions: vec![Transition::PS],
                            comment: format!("download 0x{index:04x}:{subindex:02x}"),
                            timeout_ms: 0,
                            ccs: 1,
                            complete_access: *complete_access,
                            fixed: false,
                            index: *index,
                            subindex: *subindex,
                            data: data.clone(),
                            disabled: false,
                        }),
                        _ => None,
                    })
                    .collect(),
                ..Default::default()
            });
        }
        state_cmds(&mut ic, st, Transition::IP, 2, "PREOP");
        // Process data SMs, PDOs, variables.
        let mut send: Option<(usize, u32)> = None;
        let mut recv: Option<(usize, u32)> = None;
        for (n, ssm) in s.sync_managers.iter().enumerate() {
            let dir = match ssm.kind {
                3 => Direction::Output,
                4 => Direction::Input,
                _ => continue,
            };
            let sync = cfg.sync.iter().find(|y| y.index as usize == n);
            let mut esm = EniSm {
                index: n as u8,
                kind: if dir == Direction::Output {
                    "Outputs"
                } else {
                    "Inputs"
                }
                .into(),
                start: ssm.start,
                control: ssm.control,
                enable: ssm.enable & 1 == 1,
                ..Default::default()
            };
            let Some(sync) = sync else {
                sl.process_data.sms.push(esm);
                continue;
            };
            let region = lay
                .domains
                .iter()
                .find_map(|d| d.region_of(p as u16, n as u8).map(|r| (d.index, r.offset)));
            let mut bit = 0u32;
            for pdo in &sync.pdos {
                esm.pdos.push(pdo.index);
                let sii = s
                    .rx_pdos
                    .iter()
                    .chain(&s.tx_pdos)
                    .find(|q| q.index == pdo.index);
                let pdo_name = sii
                    .map(|q| q.name.clone())
                    .filter(|n| !n.is_empty())
                    .unwrap_or(format!("0x{:04X}", pdo.index));
                let mut entries = Vec::new();
                for e in &pdo.entries {
                    let se = sii.and_then(|q| {
                        q.entries
                            .iter()
                            .find(|y| y.index == e.index && y.subindex == e.subindex)
                    });
                    let ename = se
                        .map(|y| y.name.clone())
                        .filter(|n| !n.is_empty())
                        .unwrap_or(format!("0x{:04X}:{:02X}", e.index, e.subindex));
                    let dt = iec(se.map_or(0, |y| y.data_type), e.bits);
                    entries.push(PdoEntry {
                        index: e.index,
                        subindex: e.subindex,
                        bit_len: e.bits as u16,
                        name: if e.index == 0 {
                            String::new()
                        } else {
                            ename.clone()
                        },
                        data_type: (e.index != 0).then(|| dt.clone()),
                    });
                    if let (Some((d, off)), true) = (region, e.index != 0) {
                        let input = dir == Direction::Input;
                        if let Some(fp) = frame_pos(&places, d, off + (bit / 8) as usize, input) {
                            let v = Variable {
                                name: format!("{name}.{pdo_name}.{ename}"),
                                comment: String::new(),
                                data_type: dt,
                                bit_size: e.bits as u32,
                                bit_offs: fp as u32 * 8 + bit % 8,
                            };
                            if input {
                                inputs.push(v)
                            } else {
                                outputs.push(v)
                            }
                        }
                    }
                    bit += e.bits as u32;
                }
                let q = Pdo {
                    dir: if dir == Direction::Output {
                        PdoDir::Rx
                    } else {
                        PdoDir::Tx
                    },
                    index: pdo.index,
                    name: pdo_name,
                    sm: Some(n as u8),
                    fixed: false,
                    mandatory: false,
                    virtual_pdo: false,
                    excludes: Vec::new(),
                    entries,
                };
                if dir == Direction::Output {
                    sl.process_data.rx_pdos.push(q);
                } else {
                    sl.process_data.tx_pdos.push(q);
                }
            }
            let reg = SubDeviceConfig::sm_register(s, sync);
            let mut b = vec![0u8; 8];
            let _ = reg.emit(&mut b);
            ic.push(cmd(
                &[Transition::PS],
                &format!("set sm {n}"),
                Command::Fpwr,
                st,
                sm_reg(n as u8),
                b,
            ));
            if let Some((d, off)) = region {
                let input = dir == Direction::Input;
                if let Some(fp) = frame_pos(&places, d, off, input) {
                    let slot = if input { &mut recv } else { &mut send };
                    let bits = sync.bytes() as u32 * 8;
                    *slot = Some(match *slot {
                        Some((start, b)) => (start, b + bits),
                        None => (fp, bits),
                    });
                }
            }
            sl.process_data.sms.push(esm);
        }
        sl.process_data.send = send.map(|(s, b)| BitRange {
            bit_start: s as u32 * 8,
            bit_len: b,
        });
        sl.process_data.recv = recv.map(|(s, b)| BitRange {
            bit_start: s as u32 * 8,
            bit_len: b,
        });
        for (n, f) in lay
            .mappings
            .get(p)
            .map(|m| m.fmmus.as_slice())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let mut b = vec![0u8; 16];
            let _ = f.emit(&mut b);
            ic.push(cmd(
                &[Transition::PS],
                &format!("set fmmu {n}"),
                Command::Fpwr,
                st,
                FMMU0 + 16 * n as u16,
                b,
            ));
        }
        if s.dc_assign_activate & 0x0300 != 0 && s.dc_supported() {
            ic.push(cmd(
                &[Transition::PS],
                "set DC activation",
                Command::Fpwr,
                st,
                0x0980,
                vec![0, (s.dc_assign_activate >> 8) as u8],
            ));
            sl.dc = Some(SlaveDc {
                reference_clock: std::mem::take(&mut reference),
                cycle_time0: Some(cycle_ns as u32),
                cycle_time1: Some(0),
                shift_time: Some(0),
                ..Default::default()
            });
        }
        state_cmds(&mut ic, st, Transition::PS, 4, "SAFEOP");
        state_cmds(&mut ic, st, Transition::SO, 8, "OP");
        sl.init_cmds = ic;
        slaves.push(sl);
    }
    let mut eni = Eni::default();
    eni.version = Some("1.3".into());
    eni.master = Master {
        name: "ecat".into(),
        ether_type: Some(vec![0xa4, 0x88]),
        ..Default::default()
    };
    eni.slaves = slaves;
    eni.cyclic = vec![Cyclic {
        comment: "ecat cyclic task".into(),
        cycle_time_us: Some((cycle_ns / 1000) as u32),
        frames: vec![CyclicFrame {
            comment: String::new(),
            cmds,
        }],
        ..Default::default()
    }];
    eni.process_image = ProcessImage {
        inputs: Image {
            byte_size: image_size,
            variables: inputs,
        },
        outputs: Image {
            byte_size: image_size,
            variables: outputs,
        },
    };
    eni
}
