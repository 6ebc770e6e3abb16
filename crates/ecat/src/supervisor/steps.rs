//! The per-SubDevice step machine of the [`Supervisor`]: which datagram each phase sends
//! (`request`), how its answer moves the phase on (`judge`), and the order of the phases
//! after PREOP (`after_startup`, `after_sync0`, `fmmus_or_safeop`). `step` runs one
//! SubDevice's turn of a cycle: judge the answer in flight, then submit the next request.

use super::*;

impl Supervisor {
    /// After PREOP work (startup SDOs done): process data SMs, FMMUs, or SAFEOP.
    pub(super) fn after_startup(&self, i: usize) -> Phase {
        if self.subs[i].sync0.is_some() && self.sync0.is_some() {
            Phase::Sync0(0)
        } else {
            self.after_sync0(i)
        }
    }

    /// After SYNC0 programming: process data SMs, FMMUs, or SAFEOP.
    pub(super) fn after_sync0(&self, i: usize) -> Phase {
        if !self.subs[i].config.sync.is_empty() {
            Phase::PdSm(0)
        } else {
            self.fmmus_or_safeop(i)
        }
    }

    pub(super) fn step(&mut self, i: usize, engine: &mut FrameEngine, now: u64, cycle: u64) {
        // 1. Judge the answer to the datagram in flight, if it has come.
        if let Some(h) = self.subs[i].pending {
            match engine.status(h) {
                Status::Pending => return,
                Status::Done if matches!(self.subs[i].phase, Phase::Cmd { .. }) => {
                    let (d, w) = engine.response(h).unwrap_or((&[], 0));
                    self.judge_cmd(i, d, w, now, cycle);
                    engine.release(h);
                    self.subs[i].pending = None;
                }
                Status::Done => {
                    let mut buf = [0u8; 24];
                    self.subs[i].sent_at = engine.sent_at(h).unwrap_or(now);
                    let (n, wkc) = match engine.response(h) {
                        Some((d, w)) => {
                            let n = d.len().min(24);
                            buf[..n].copy_from_slice(&d[..n]);
                            (n, w)
                        }
                        None => (0, 0),
                    };
                    engine.release(h);
                    self.subs[i].pending = None;
                    self.judge(i, &buf[..n], wkc, now, cycle);
                }
                Status::Failed | Status::Stale => {
                    engine.release(h);
                    self.subs[i].pending = None;
                    self.lose(i, now, cycle);
                }
            }
        }
        // 2. Submit the datagram of the current phase.
        if matches!(self.subs[i].phase, Phase::Cmd { .. }) {
            if self.subs[i].pending.is_none() {
                self.send_cmd(i, engine, now, cycle);
            }
            return;
        }
        if let Some((cmd, adp, ado, data, len)) = self.request(i, now) {
            let payload = &data[..len];
            if let Ok(h) = engine.submit_with(cmd, adp as u32 | (ado as u32) << 16, payload, 2) {
                self.subs[i].pending = Some(h);
            }
        }
    }

    pub(super) fn lose(&mut self, i: usize, now: u64, cycle: u64) {
        let s = &mut self.subs[i];
        if matches!(s.phase, Phase::Lost { .. } | Phase::Probe) {
            s.phase = Phase::Lost {
                next_probe: now + self.timing.probe_interval,
            };
            return;
        }
        s.phase = Phase::Lost {
            next_probe: now + self.timing.probe_interval,
        };
        s.lost_at_cycle = cycle;
        if !self.group_member_lost(i, cycle) {
            let who = self.subs[i].info.who();
            self.emit(Event::Lost { who, cycle });
        }
        self.update_expected_probe();
    }

    /// The datagram for the current phase: (command, ADP, ADO, data buffer, length).
    pub(super) fn request(
        &mut self,
        i: usize,
        now: u64,
    ) -> Option<(Command, u16, u16, [u8; 256], usize)> {
        // The common case first, before the 256-byte buffer is zeroed: on a large healthy bus
        // this runs for every SubDevice every cycle.
        if matches!(
            self.subs[i].phase,
            Phase::Running | Phase::Probe | Phase::Startup(_) | Phase::Cmd { .. }
        ) {
            return None;
        }
        if !self.recovery && matches!(self.subs[i].phase, Phase::Lost { .. }) {
            return None;
        }
        let bus_position = self.bus_position(i);
        let s = &mut self.subs[i];
        let st = s.info.station;
        let mut d = [0u8; 256];
        let mut put = |bytes: &[u8]| {
            d[..bytes.len()].copy_from_slice(bytes);
            bytes.len()
        };
        let (cmd, adp, ado, len) = match s.phase {
            Phase::Running => return None,
            Phase::Lost { next_probe } => {
                if now < next_probe {
                    return None;
                }
                s.phase = Phase::Probe;
                (
                    Command::Aprd,
                    0u16.wrapping_sub(bus_position),
                    reg::STATION_ADDRESS,
                    put(&[0, 0]),
                )
            }
            Phase::Probe | Phase::Startup(_) | Phase::Cmd { .. } => return None,
            Phase::Backoff { until } => {
                if now < until {
                    return None;
                }
                self.subs[i].phase = self.reset_phase(i);
                return None;
            }
            Phase::Check | Phase::WaitInit | Phase::Wait(_) => {
                (Command::Fprd, st, reg::AL_STATUS, put(&[0; 6]))
            }
            Phase::Readdress => (
                Command::Apwr,
                0u16.wrapping_sub(bus_position),
                reg::STATION_ADDRESS,
                put(&st.to_le_bytes()),
            ),
            Phase::IdentCmd => {
                let mut c = [0u8; 6];
                c[0..2].copy_from_slice(&ee::CMD_READ.to_le_bytes());
                c[2..4].copy_from_slice(&ecat_wire::sii::word::VENDOR_ID.to_le_bytes());
                (Command::Fpwr, st, reg::EEPROM_CONTROL, put(&c))
            }
            Phase::IdentSerialCmd => {
                let mut c = [0u8; 6];
                c[0..2].copy_from_slice(&ee::CMD_READ.to_le_bytes());
                c[2..4].copy_from_slice(&ecat_wire::sii::word::SERIAL.to_le_bytes());
                (Command::Fpwr, st, reg::EEPROM_CONTROL, put(&c))
            }
            Phase::IdentPoll | Phase::IdentSerialPoll => {
                (Command::Fprd, st, reg::EEPROM_CONTROL, put(&[0; 14]))
            }
            Phase::Unclaim => (Command::Fpwr, st, reg::STATION_ADDRESS, put(&[0, 0])),
            Phase::DcJoin(step) => {
                let (cmd, ado, bytes, n) = dc_join::request(&s.info, step, s.dc_offset);
                (cmd, st, ado, put(&bytes[..n]))
            }
            Phase::Reset => {
                s.from = s.status.state();
                let c = AlControl::request(AlState::Init, true).0.to_le_bytes();
                (Command::Fpwr, st, reg::AL_CONTROL, put(&c))
            }
            Phase::ClearFmmus => {
                let n = (s.info.fmmu_count.clamp(1, 16) as usize) * FmmuRepr::LEN;
                (Command::Fpwr, st, reg::FMMU0, put(&[0u8; 256][..n]))
            }
            Phase::ClearSms => {
                let n = (s.info.sm_count.clamp(1, 16) as usize) * SmRepr::LEN;
                (Command::Fpwr, st, reg::SM0, put(&[0u8; 128][..n]))
            }
            Phase::Mailbox => {
                let m = s.info.mailbox;
                let ctrl = |n: usize, def: u8| {
                    s.info
                        .sync_managers
                        .get(n)
                        .map(|x| x.control)
                        .filter(|&c| c != 0)
                        .unwrap_or(def)
                };
                let mut b = [0u8; 16];
                let sm0 = SmRepr {
                    start: m.rx.offset,
                    length: m.rx.size,
                    control: ctrl(0, 0x26),
                    activate: 1,
                    ..Default::default()
                };
                let tx_len = if m.tx.size == 0 { m.rx.size } else { m.tx.size };
                let sm1 = SmRepr {
                    start: m.tx.offset,
                    length: tx_len,
                    control: ctrl(1, 0x22),
                    activate: 1,
                    ..Default::default()
                };
                let _ = sm0.emit(&mut b[..8]);
                let _ = sm1.emit(&mut b[8..]);
                (Command::Fpwr, st, reg::SM0, put(&b))
            }
            Phase::Request(state) => {
                let ack = crate::esm::refused(s.status, s.code);
                s.from = s.status.state();
                let c = AlControl::request(state, ack).0.to_le_bytes();
                s.wait_deadline = now + self.timing.transition_timeout;
                (Command::Fpwr, st, reg::AL_CONTROL, put(&c))
            }
            Phase::Sync0(step) => {
                let (cycle, shift) = self.sync0.unwrap_or((1_000_000, 0));
                let act = s.sync0.unwrap_or(0x03);
                match step {
                    0 => (Command::Fpwr, st, reg::DC_ACTIVATION, put(&[0])),
                    1 => {
                        // Start 50 ms (or 10 cycles) ahead, aligned to the cycle.
                        let now = self.reference_time_at(now)?;
                        let lead = (cycle * 10).max(50_000_000);
                        let start = crate::dc::setup::sync0_start(now, cycle, shift, lead);
                        (
                            Command::Fpwr,
                            st,
                            reg::DC_START_TIME,
                            put(&start.to_le_bytes()),
                        )
                    }
                    2 => {
                        let mut b = [0u8; 8];
                        b[..4].copy_from_slice(&(cycle as u32).to_le_bytes());
                        let n = match s.sync1 {
                            Some(c1) => {
                                b[4..].copy_from_slice(&c1.to_le_bytes());
                                8
                            }
                            None => 4,
                        };
                        (Command::Fpwr, st, reg::DC_SYNC0_CYCLE, put(&b[..n]))
                    }
                    _ => (Command::Fpwr, st, reg::DC_ACTIVATION, put(&[act])),
                }
            }
            Phase::PdSm(k) => {
                let sync = &s.config.sync[k];
                let mut b = [0u8; 8];
                let _ = SubDeviceConfig::sm_register(&s.info, sync).emit(&mut b);
                (Command::Fpwr, st, reg::sm(sync.index), put(&b))
            }
            Phase::Fmmus => {
                let mut b = [0u8; 256];
                for (n, f) in s.fmmus.iter().enumerate().take(16) {
                    let _ = f.emit(&mut b[n * 16..n * 16 + 16]);
                }
                (
                    Command::Fpwr,
                    st,
                    reg::FMMU0,
                    put(&b[..s.fmmus.len().min(16) * 16]),
                )
            }
        };
        Some((cmd, adp, ado, d, len))
    }

    /// The phase after `Mailbox`/`PREOP` work, depending on the target.
    pub(super) fn after(&self, i: usize, reached: AlState) -> Phase {
        let s = &self.subs[i];
        let target = self.target_of(i);
        match reached {
            AlState::Init if target == AlState::Init => Phase::Running,
            AlState::Init => Phase::ClearFmmus,
            AlState::PreOp | AlState::Boot if target <= AlState::PreOp => Phase::Running,
            AlState::PreOp | AlState::Boot if !s.startup.is_empty() => Phase::Startup(0),
            AlState::PreOp | AlState::Boot => self.after_startup(i),
            AlState::SafeOp if target == AlState::Op => self.request_to(i, AlState::Op),
            _ => Phase::Running,
        }
    }

    /// FMMUs next, or straight to SAFEOP when the SubDevice has none (a coupler).
    pub(super) fn fmmus_or_safeop(&self, i: usize) -> Phase {
        if self.subs[i].fmmus.is_empty() {
            self.with_cmds(i, Some(AlState::PreOp), AlState::SafeOp, false)
        } else {
            Phase::Fmmus
        }
    }

    pub(super) fn judge(&mut self, i: usize, d: &[u8], wkc: u16, now: u64, cycle: u64) {
        let phase = self.subs[i].phase;
        if wkc == 0 && phase != Phase::Probe && !dc_join::may_be_unanswered(phase) {
            self.lose(i, now, cycle);
            return;
        }
        let next = match phase {
            Phase::Probe => {
                if wkc == 0 {
                    self.lose(i, now, cycle);
                    return;
                }
                let found = u16::from_le_bytes([d[0], d[1]]);
                let s = &mut self.subs[i];
                if found != 0 && found != s.info.station {
                    // Someone else sits at this position now (the ring is shorter).
                    self.lose(i, now, cycle);
                    return;
                }
                let who = s.info.who();
                let gone = cycle.saturating_sub(s.lost_at_cycle);
                if !self.group_member_found(i, cycle) {
                    self.emit(Event::Found {
                        who,
                        cycle,
                        gone_cycles: gone,
                    });
                }
                // At address 0 it lost power: new address, and its clock set up again.
                let s = &mut self.subs[i];
                if found == 0 {
                    s.dc_join = s.info.dc.is_some_and(|d| d.system_time);
                    s.phase = Phase::Readdress;
                } else {
                    s.phase = Phase::IdentCmd;
                }
                self.update_expected_probe();
                return;
            }
            Phase::Readdress => Phase::IdentCmd,
            Phase::IdentCmd => Phase::IdentPoll,
            Phase::IdentSerialCmd => Phase::IdentSerialPoll,
            Phase::IdentPoll | Phase::IdentSerialPoll => {
                let status = u16::from_le_bytes([d[0], d[1]]);
                let serial_step = phase == Phase::IdentSerialPoll;
                if status & ee::BUSY != 0 {
                    phase
                } else if status & ee::ERR_MASK != 0 {
                    match serial_step {
                        true => Phase::IdentSerialCmd,
                        false => Phase::IdentCmd,
                    }
                } else {
                    let first = u32::from_le_bytes([d[6], d[7], d[8], d[9]]);
                    let eight = status & ee::READ_8_BYTES != 0;
                    let second = u32::from_le_bytes([d[10], d[11], d[12], d[13]]);
                    let id = self.subs[i].info.identity;
                    // Its state is not known (power-cycled, or kept): no `X → INIT`
                    // commands before the reset.
                    self.subs[i].status = AlStatus(0);
                    let found = match serial_step {
                        false => (
                            first,
                            if eight { second } else { id.product_code },
                            id.serial,
                        ),
                        true => (id.vendor_id, id.product_code, first),
                    };
                    if found.0 != id.vendor_id || found.1 != id.product_code || found.2 != id.serial
                    {
                        // Another device sits at this position (e.g. one from behind, moved up
                        // and power-cycled while this one is away): hand its address back and
                        // go on waiting for ours.
                        let who = self.subs[i].info.who();
                        if self.subs[i].wrong_seen != Some(found) {
                            self.subs[i].wrong_seen = Some(found);
                            self.emit(Event::WrongDevice {
                                who,
                                found: (found.0, if eight || serial_step { found.1 } else { 0 }),
                                cycle,
                            });
                        }
                        Phase::Unclaim
                    } else if !serial_step && id.serial != 0 {
                        Phase::IdentSerialCmd
                    } else {
                        self.subs[i].wrong_seen = None;
                        self.after_identity(i)
                    }
                }
            }
            Phase::Unclaim => {
                self.subs[i].phase = Phase::Lost {
                    next_probe: now + self.timing.probe_interval,
                };
                self.update_expected_probe();
                return;
            }
            Phase::DcJoin(step) => self.dc_join_judge(i, step, d, wkc),
            Phase::Reset => Phase::WaitInit,
            Phase::ClearFmmus => Phase::ClearSms,
            Phase::ClearSms if self.target_of(i) >= AlState::PreOp => {
                self.with_cmds(i, Some(AlState::Init), AlState::PreOp, false)
            }
            Phase::ClearSms => Phase::Running,
            Phase::Mailbox => Phase::Request(AlState::PreOp),
            Phase::Sync0(step) if step < 3 => Phase::Sync0(step + 1),
            Phase::Sync0(_) => self.after_sync0(i),
            Phase::Request(s) => Phase::Wait(s),
            Phase::PdSm(k) => {
                if k + 1 < self.subs[i].config.sync.len() {
                    Phase::PdSm(k + 1)
                } else {
                    self.fmmus_or_safeop(i)
                }
            }
            Phase::Fmmus => self.with_cmds(i, Some(AlState::PreOp), AlState::SafeOp, false),
            Phase::Check | Phase::WaitInit | Phase::Wait(_) => {
                let status = AlStatus(u16::from_le_bytes([d[0], d[1]]));
                let code = AlStatusCode(u16::from_le_bytes([d[4], d[5]]));
                let s = &mut self.subs[i];
                let changed = s.status != status;
                s.status = status;
                s.code = code;
                if changed {
                    self.update_expected_probe();
                }
                let target = self.target_of(i);
                let s = &mut self.subs[i];
                let want = match phase {
                    Phase::WaitInit => AlState::Init,
                    Phase::Wait(w) => w,
                    _ => target,
                };
                if crate::esm::settled(status, code, want) {
                    if phase == Phase::Check {
                        Phase::Running
                    } else {
                        if want == target && phase != Phase::WaitInit {
                            let who = s.info.who();
                            self.emit(Event::Reached {
                                who,
                                state: want,
                                cycle,
                            });
                        }
                        let from = self.subs[i].from;
                        self.with_cmds(i, from, want, true)
                    }
                } else if phase == Phase::Check {
                    match status.state() {
                        // Above the target without an error: step down directly.
                        Some(now_in)
                            if !status.error()
                                && now_in > target
                                && target > AlState::Init
                                && now_in != AlState::Boot =>
                        {
                            self.request_to(i, target)
                        }
                        // Below it without an error, mailbox up: go on from there.
                        Some(now_in)
                            if !status.error()
                                && now_in < target
                                && now_in >= AlState::PreOp
                                && now_in != AlState::Boot =>
                        {
                            self.after(i, now_in)
                        }
                        // Else walk it up again from INIT.
                        _ => self.reset_phase(i),
                    }
                } else if (crate::esm::refused(status, code) || now > s.wait_deadline)
                    && phase != Phase::WaitInit
                {
                    let who = s.info.who();
                    self.emit(Event::Refused {
                        who,
                        requested: want,
                        status,
                        code,
                        cycle,
                    });
                    if want == AlState::SafeOp {
                        self.report_pdo_mismatch(i, code, cycle);
                    }
                    Phase::Backoff {
                        until: now + self.timing.backoff,
                    }
                } else {
                    phase
                }
            }
            Phase::Running
            | Phase::Lost { .. }
            | Phase::Backoff { .. }
            | Phase::Startup(_)
            | Phase::Cmd { .. } => phase,
        };
        self.subs[i].phase = next;
    }
}
