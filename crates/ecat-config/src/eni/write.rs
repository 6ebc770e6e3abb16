//! The ENI writer: an [`Eni`] as `EtherCATConfig` XML in the structure TwinCAT-style files
//! use (numbers decimal, PDO and entry indices `#x`, data as hex bytes in wire order). What it
//! writes, [`Eni::parse_str`] reads back to the same model.

use super::{CoeInitCmd, Eni, InitCmd, Variable};
use crate::esi::Pdo;
use std::fmt::Write;

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A tiny indenting writer.
struct W {
    out: String,
    depth: usize,
}

impl W {
    fn open(&mut self, tag: &str) {
        self.line(&format!("<{tag}>"));
        self.depth += 1;
    }
    fn close(&mut self, tag: &str) {
        self.depth -= 1;
        self.line(&format!("</{tag}>"));
    }
    fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.out.push('\t');
        }
        self.out.push_str(s);
        self.out.push('\n');
    }
    fn el(&mut self, tag: &str, v: impl std::fmt::Display) {
        let v = esc(&v.to_string());
        self.line(&format!("<{tag}>{v}</{tag}>"));
    }
}

fn init_cmd(w: &mut W, c: &InitCmd) {
    w.open("InitCmd");
    for t in &c.transitions {
        w.el("Transition", t.code());
    }
    if c.before_slave {
        w.el("BeforeSlave", "true");
    }
    w.el("Comment", &c.comment);
    if let Some(r) = &c.requires {
        w.el("Requires", r);
    }
    w.el("Cmd", c.cmd);
    w.el("Adp", c.adp);
    w.el("Ado", c.ado);
    w.el("Data", hex(&c.data));
    if let Some(n) = c.cnt {
        w.el("Cnt", n);
    }
    w.el("Retries", c.retries);
    if let Some(v) = &c.validate {
        w.open("Validate");
        w.el("Data", hex(&v.data));
        if let Some(m) = &v.mask {
            w.el("DataMask", hex(m));
        }
        w.el("Timeout", v.timeout_ms);
        w.close("Validate");
    }
    if let Some(t) = c.timeout_ms {
        w.el("Timeout", t);
    }
    w.close("InitCmd");
}

fn coe_cmd(w: &mut W, c: &CoeInitCmd) {
    let mut attrs = String::new();
    if c.complete_access {
        attrs.push_str(" CompleteAccess=\"true\"");
    }
    if c.fixed {
        attrs.push_str(" Fixed=\"true\"");
    }
    w.line(&format!("<InitCmd{attrs}>"));
    w.depth += 1;
    for t in &c.transitions {
        w.el("Transition", t.code());
    }
    w.el("Comment", &c.comment);
    w.el("Timeout", c.timeout_ms);
    w.el("Ccs", if c.is_download() { 1 } else { 2 });
    w.el("Index", c.index);
    w.el("SubIndex", c.subindex);
    if !c.data.is_empty() {
        w.el("Data", hex(&c.data));
    }
    if c.disabled {
        w.el("Disabled", "true");
    }
    w.close("InitCmd");
}

fn pdo(w: &mut W, tag: &str, p: &Pdo) {
    let mut attrs = String::new();
    if let Some(sm) = p.sm {
        let _ = write!(attrs, " Sm=\"{sm}\"");
    }
    if p.fixed {
        attrs.push_str(" Fixed=\"true\"");
    }
    if p.mandatory {
        attrs.push_str(" Mandatory=\"true\"");
    }
    w.line(&format!("<{tag}{attrs}>"));
    w.depth += 1;
    w.el("Index", format!("#x{:04x}", p.index));
    w.el("Name", &p.name);
    for x in &p.excludes {
        w.el("Exclude", format!("#x{x:04x}"));
    }
    for e in &p.entries {
        w.open("Entry");
        w.el("Index", format!("#x{:04x}", e.index));
        if e.index != 0 {
            w.el("SubIndex", e.subindex);
        }
        w.el("BitLen", e.bit_len);
        if !e.name.is_empty() {
            w.el("Name", &e.name);
        }
        if let Some(t) = &e.data_type {
            w.el("DataType", t);
        }
        w.close("Entry");
    }
    w.close(tag);
}

fn variables(w: &mut W, vars: &[Variable]) {
    for v in vars {
        w.open("Variable");
        w.el("Name", &v.name);
        if !v.comment.is_empty() {
            w.el("Comment", &v.comment);
        }
        w.el("DataType", &v.data_type);
        w.el("BitSize", v.bit_size);
        w.el("BitOffs", v.bit_offs);
        w.close("Variable");
    }
}

impl Eni {
    /// The ENI as XML text.
    pub fn to_xml(&self) -> String {
        let mut w = W {
            out: String::from("<?xml version=\"1.0\"?>\n"),
            depth: 0,
        };
        w.line(&format!(
            "<EtherCATConfig Version=\"{}\">",
            esc(self.version.as_deref().unwrap_or("1.3"))
        ));
        w.depth += 1;
        w.open("Config");
        w.open("Master");
        w.open("Info");
        w.el("Name", &self.master.name);
        for (tag, v) in [
            ("Destination", &self.master.destination),
            ("Source", &self.master.source),
            ("EtherType", &self.master.ether_type),
        ] {
            if let Some(b) = v {
                w.el(tag, hex(b));
            }
        }
        w.close("Info");
        if let Some((start, count)) = self.master.mailbox_states {
            w.open("MailboxStates");
            w.el("StartAddr", start);
            w.el("Count", count);
            w.close("MailboxStates");
        }
        if let Some((ports, frames, macs)) = self.master.eoe {
            w.open("EoE");
            w.el("MaxPorts", ports);
            w.el("MaxFrames", frames);
            w.el("MaxMACs", macs);
            w.close("EoE");
        }
        if !self.master.init_cmds.is_empty() {
            w.open("InitCmds");
            for c in &self.master.init_cmds {
                init_cmd(&mut w, c);
            }
            w.close("InitCmds");
        }
        w.close("Master");
        for s in &self.slaves {
            w.open("Slave");
            w.open("Info");
            w.el("Name", &s.name);
            w.el("PhysAddr", s.phys_addr);
            w.el("AutoIncAddr", s.auto_inc_addr);
            if !s.physics.is_empty() {
                w.el("Physics", &s.physics);
            }
            w.el("VendorId", s.identity.vendor);
            w.el("ProductCode", s.identity.product);
            w.el("RevisionNo", s.identity.revision);
            w.el("SerialNo", s.identity.serial);
            w.close("Info");
            let pd = &s.process_data;
            w.open("ProcessData");
            for (tag, r) in [("Send", pd.send), ("Recv", pd.recv)] {
                if let Some(r) = r {
                    w.open(tag);
                    w.el("BitStart", r.bit_start);
                    w.el("BitLength", r.bit_len);
                    w.close(tag);
                }
            }
            for sm in &pd.sms {
                let tag = format!("Sm{}", sm.index);
                w.open(&tag);
                w.el("Type", &sm.kind);
                for (t, v) in [
                    ("MinSize", sm.min_size),
                    ("MaxSize", sm.max_size),
                    ("DefaultSize", sm.default_size),
                ] {
                    if let Some(v) = v {
                        w.el(t, v);
                    }
                }
                w.el("StartAddress", sm.start);
                w.el("ControlByte", sm.control);
                w.el("Enable", u8::from(sm.enable));
                for p in &sm.pdos {
                    w.el("Pdo", p);
                }
                w.close(&tag);
            }
            for p in &pd.rx_pdos {
                pdo(&mut w, "RxPdo", p);
            }
            for p in &pd.tx_pdos {
                pdo(&mut w, "TxPdo", p);
            }
            w.close("ProcessData");
            if let Some(m) = &s.mailbox {
                w.open("Mailbox");
                w.open("Send");
                w.el("Start", m.send.start);
                w.el("Length", m.send.len);
                w.close("Send");
                w.open("Recv");
                w.el("Start", m.recv.start);
                w.el("Length", m.recv.len);
                if let Some(p) = m.poll_time {
                    w.el("PollTime", p);
                }
                if let Some(b) = m.status_bit_addr {
                    w.el("StatusBitAddr", b);
                }
                w.close("Recv");
                if let Some((send, recv)) = m.bootstrap {
                    w.open("BootStrap");
                    for (tag, a) in [("Send", send), ("Recv", recv)] {
                        w.open(tag);
                        w.el("Start", a.start);
                        w.el("Length", a.len);
                        w.close(tag);
                    }
                    w.close("BootStrap");
                }
                for p in &m.protocols {
                    w.el("Protocol", p);
                }
                if !m.coe_init_cmds.is_empty() || !m.coe_profiles.is_empty() {
                    w.open("CoE");
                    if !m.coe_init_cmds.is_empty() {
                        w.open("InitCmds");
                        for c in &m.coe_init_cmds {
                            coe_cmd(&mut w, c);
                        }
                        w.close("InitCmds");
                    }
                    if !m.coe_profiles.is_empty() {
                        w.open("Profile");
                        for (no, add) in &m.coe_profiles {
                            w.open("ChannelInfo");
                            w.el("ProfileNo", no);
                            w.el("AddInfo", add);
                            w.close("ChannelInfo");
                        }
                        w.close("Profile");
                    }
                    w.close("CoE");
                }
                for (_, raw) in &m.raw {
                    w.line(raw);
                }
                w.close("Mailbox");
            }
            if !s.init_cmds.is_empty() {
                w.open("InitCmds");
                for c in &s.init_cmds {
                    init_cmd(&mut w, c);
                }
                w.close("InitCmds");
            }
            for p in &s.previous_ports {
                w.line(if p.selected {
                    "<PreviousPort Selected=\"true\">"
                } else {
                    "<PreviousPort>"
                });
                w.depth += 1;
                w.el("Port", &p.port);
                w.el("PhysAddr", p.phys_addr);
                w.close("PreviousPort");
            }
            if let Some(dc) = &s.dc {
                w.open("DC");
                if dc.potential_reference_clock {
                    w.el("PotentialReferenceClock", "true");
                }
                if dc.reference_clock {
                    w.el("ReferenceClock", "true");
                }
                if let Some(c) = dc.cycle_time0 {
                    w.el("CycleTime0", c);
                }
                if let Some(c) = dc.cycle_time1 {
                    w.el("CycleTime1", c);
                }
                if let Some(c) = dc.shift_time {
                    w.el("ShiftTime", c);
                }
                w.close("DC");
            }
            w.close("Slave");
        }
        for c in &self.cyclic {
            w.open("Cyclic");
            if !c.comment.is_empty() {
                w.el("Comment", &c.comment);
            }
            for (tag, v) in [
                ("CycleTime", c.cycle_time_us),
                ("Priority", c.priority),
                ("TaskId", c.task_id),
            ] {
                if let Some(v) = v {
                    w.el(tag, v);
                }
            }
            for f in &c.frames {
                w.open("Frame");
                if !f.comment.is_empty() {
                    w.el("Comment", &f.comment);
                }
                for cmd in &f.cmds {
                    w.open("Cmd");
                    for s in &cmd.states {
                        w.el("State", s);
                    }
                    if !cmd.comment.is_empty() {
                        w.el("Comment", &cmd.comment);
                    }
                    w.el("Cmd", cmd.cmd);
                    match cmd.addr {
                        Some(a) => w.el("Addr", a),
                        None => {
                            w.el("Adp", cmd.adp);
                            w.el("Ado", cmd.ado);
                        }
                    }
                    match &cmd.data {
                        Some(d) => w.el("Data", hex(d)),
                        None => w.el("DataLength", cmd.data_len),
                    }
                    if let Some(n) = cmd.cnt {
                        w.el("Cnt", n);
                    }
                    if let Some(o) = cmd.input_offs {
                        w.el("InputOffs", o);
                    }
                    if let Some(o) = cmd.output_offs {
                        w.el("OutputOffs", o);
                    }
                    w.close("Cmd");
                }
                w.close("Frame");
            }
            w.close("Cyclic");
        }
        let pi = &self.process_image;
        w.open("ProcessImage");
        for (tag, img) in [("Inputs", &pi.inputs), ("Outputs", &pi.outputs)] {
            w.open(tag);
            w.el("ByteSize", img.byte_size);
            variables(&mut w, &img.variables);
            w.close(tag);
        }
        w.close("ProcessImage");
        w.close("Config");
        w.depth -= 1;
        w.line("</EtherCATConfig>");
        w.out
    }
}
