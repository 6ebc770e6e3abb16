//! The EtherCAT SubDevice Controller model: one ESC with its 4 KiB register space, its process
//! RAM and its SII EEPROM, answering datagrams the way the chip (and, for devices with a
//! microcontroller, the firmware behind its PDI) does.
//!
//! Design: the memory is one flat byte array (registers 0x0000–0x0FFF, then process RAM from
//! 0x1000). The ECAT side goes through `access` (register map, write protection, SyncManager
//! gating, side effects); the PDI side (firmware, device models) writes memory directly. Each
//! concern lives in its own module: [`regmap`] (what exists), `syncman` (SM registers and
//! mailbox gating), `buffered` (3-buffer process-data SMs), `process` (commands, addressing,
//! WKC), `logical` (FMMUs), `eeprom` (SII interface), `al` (state machine), `mailbox` (the
//! PDI side of the mailbox), `io` (the device side of process data) and `watchdog` (the SM
//! watchdog).
//! Time only enters through `now_ns` arguments, so the model is deterministic.

mod access;
mod al;
mod buffered;
pub mod chips;
pub mod dc;
mod eeprom;
mod io;
mod logical;
mod mailbox;
mod process;
pub(crate) mod route;
pub use mailbox::OUTBOX_LIMIT;
pub mod regmap;
mod smcheck;
mod syncman;
mod watchdog;

use crate::sii_info::SiiInfo;
use ecat_wire::al::{AlState, AlStatus, AlStatusCode};
use ecat_wire::register as reg;
use regmap::MapShape;

pub use al::DEFAULT_SAFEOP_OP_TIMEOUT_MS;
pub use dc::{DcClock, FramePassage};
pub use process::DatagramOutcome;
pub use smcheck::{MailboxLimits, MIN_MAILBOX_SIZE};

/// The controller chip: identification registers and sizes (registers 0x0000–0x0009) and
/// the behaviour that differs between chips. Profiles of real chips are in [`chips`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EscChip {
    /// ESC type (0x0000), e.g. 0x11 for an ET1100, 0x12 for an ET1200.
    pub esc_type: u8,
    /// ESC revision (0x0001).
    pub revision: u8,
    /// Build (0x0002).
    pub build: u16,
    /// FMMUs implemented (0x0004).
    pub fmmus: u8,
    /// SyncManagers implemented (0x0005).
    pub sms: u8,
    /// Process RAM in KiB (0x0006).
    pub ram_kib: u8,
    /// Port descriptor (0x0007), 2 bits per port.
    pub port_descriptor: u8,
    /// Feature register (0x0008).
    pub features: u16,
    /// The DC system-time part (0x0910–0x09FF) exists whatever the SII says; without it, it
    /// exists only when the SII enables the SYNC/latch units (ESC configuration 0x0141 bits
    /// 2/3). Receive times (0x0900–0x090F) follow the feature register alone.
    pub dc_system_time: bool,
    /// EEPROM reads return 8 bytes (0x0502 bit 6) instead of 4.
    pub eeprom_read_8: bool,
    /// Reserved bits of 0x0502 (1–4) the chip shows set, e.g. 0x0010 on the real EL2828.
    pub eeprom_status_extra: u16,
    /// How long a read or write keeps the EEPROM busy bit set (0 = completes at once).
    pub eeprom_busy_ns: u64,
    /// How long a reload (words 0–7) keeps the busy bit set.
    pub eeprom_reload_ns: u64,
    /// Register ranges `[start, end)` this chip does not implement although the register
    /// map has them (older ESCs): reads leave the frame as it is, nothing counts.
    pub absent: &'static [(u16, u16)],
}

/// A per-device behaviour behind the PDI (the firmware or I/O logic of a model). Every method
/// has a default that does nothing; models override what they need. Behaviours are `Clone`
/// (through [`BehaviourClone`]), so a whole network can be copied (the fuzz targets copy a
/// preset instead of building it for every input).
pub trait Behaviour: Send + BehaviourClone {
    /// Called once per processed frame after all datagrams, with the PDI view of the ESC:
    /// [`Esc::outputs`] holds the outputs the device applies now, and the behaviour sets its
    /// inputs with [`Esc::set_device_inputs`].
    fn end_of_frame(&mut self, _esc: &mut Esc, _now_ns: u64) {}

    /// The device was power-cycled: forget any internal state.
    fn power_up(&mut self) {}
}

/// Copies a boxed [`Behaviour`]; implemented for every `Behaviour` that is `Clone`.
pub trait BehaviourClone {
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn Behaviour>;
}

impl<T: Behaviour + Clone + 'static> BehaviourClone for T {
    fn clone_box(&self) -> Box<dyn Behaviour> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Behaviour> {
    fn clone(&self) -> Self {
        self.as_ref().clone_box()
    }
}

/// One simulated ESC with its SII and device behaviour.
#[derive(Clone)]
pub struct Esc {
    mem: Vec<u8>,
    shape: MapShape,
    chip: EscChip,
    sii: Vec<u8>,
    info: SiiInfo,
    eeprom: eeprom::EepromState,
    mbx: mailbox::MailboxState,
    coe: Option<Box<crate::coe::Coe>>,
    /// FoE, SoE, EoE and VoE servers (`crate::mbx`), as the SII's protocol word announces.
    pub(crate) proto: Option<Box<crate::mbx::Protocols>>,
    bufs: [buffered::Triple; 16],
    io: io::IoState,
    wd: watchdog::Watchdog,
    esm: al::Esm,
    links: [bool; 4],
    pub(crate) dc: dc::DcState,
    behaviour: Option<Box<dyn Behaviour>>,
    /// Something the PDI side reacts to happened since it last ran (see
    /// [`Esc::pdi_after_frame`]).
    pdi_kick: bool,
    /// Reused copy of the incoming LRW bytes this ESC's FMMUs write.
    scratch: Vec<u8>,
    /// A register its [`route::Route`] reads beyond the event request and timers (station
    /// address, alias, DL control, FMMUs) may have changed since the network last asked
    /// (see [`Esc::refresh_route`]).
    route_stale: bool,
    /// Bytes `[lo, hi)` covering the areas of every enabled SyncManager (all three buffers):
    /// accesses outside it need no SM check. Kept up to date wherever SM registers change
    /// (see [`Esc::sm_span_refresh`]).
    sm_span: (u32, u32),
    /// The register access table of `shape` (see [`Esc::reg_access`]).
    regs: Option<&'static regmap::RegTable>,
}

impl core::fmt::Debug for Esc {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Esc")
            .field("chip", &self.chip)
            .field("station_address", &self.station_address())
            .field("al_status", &self.al_status())
            .finish_non_exhaustive()
    }
}

impl Esc {
    /// Build an ESC from its chip and SII image and power it up.
    pub fn new(chip: EscChip, sii: Vec<u8>, info: SiiInfo) -> Esc {
        let proto =
            crate::mbx::Protocols::from_sii(info.fixed.mailbox_protocols, info.fixed.serial)
                .map(Box::new);
        let ram_bytes = chip.ram_kib as u32 * 1024;
        let mut esc = Esc {
            mem: vec![0; 0x1000 + ram_bytes as usize],
            shape: MapShape {
                fmmus: chip.fmmus.min(16),
                sms: chip.sms.min(16),
                ram_bytes,
                features: chip.features,
                dc_units: false,
                absent: chip.absent,
            },
            chip,
            sii,
            info,
            eeprom: Default::default(),
            mbx: Default::default(),
            coe: None,
            proto,
            bufs: Default::default(),
            io: Default::default(),
            wd: Default::default(),
            esm: Default::default(),
            links: [true, false, false, false],
            dc: Default::default(),
            behaviour: None,
            pdi_kick: true,
            scratch: Vec::new(),
            route_stale: true,
            sm_span: (u32::MAX, 0),
            regs: None,
        };
        esc.power_up();
        esc
    }

    /// Attach the device behaviour (replaces any previous one).
    pub fn set_behaviour(&mut self, b: Box<dyn Behaviour>) {
        self.behaviour = Some(b);
    }

    /// Reset every register, SyncManager, FMMU, the AL state and the station address as at
    /// power-on, reload the configuration area from the SII (whose content survives, as an
    /// EEPROM does) and reset the device behaviour.
    pub fn power_up(&mut self) {
        self.pdi_kick = true;
        self.route_stale = true;
        self.mem.fill(0);
        self.eeprom = Default::default();
        self.mbx = Default::default();
        self.bufs = Default::default();
        self.wd = Default::default();
        self.esm_power_up();
        self.dc_power_up();
        if let Some(c) = self.coe.as_mut() {
            c.reset();
        }
        if let Some(p) = self.proto.as_mut() {
            p.close();
        }
        self.io = io::IoState::for_esc(self);
        if let Some(b) = self.behaviour.as_mut() {
            b.power_up();
        }
        let c = self.chip;
        self.mem[0] = c.esc_type;
        self.mem[1] = c.revision;
        self.put16(reg::BUILD, c.build);
        self.mem[4] = self.shape.fmmus;
        self.mem[5] = self.shape.sms;
        self.mem[6] = c.ram_kib;
        self.mem[7] = c.port_descriptor;
        self.put16(reg::FEATURES, c.features);
        self.put16(reg::AL_CONTROL, AlState::Init as u16);
        self.put16(reg::AL_STATUS, AlState::Init as u16);
        self.put16(reg::WATCHDOG_DIVIDER, 0x09C2);
        self.put16(reg::WATCHDOG_PDI, 1000);
        self.put16(reg::WATCHDOG_PD, 1000);
        self.mem[reg::WATCHDOG_PD_STATUS as usize] = 1;
        self.put16(reg::DC_SPEED_COUNTER_START, 0x1000);
        self.mem[0x0934] = 0x04;
        self.mem[0x0935] = 0x0C;
        if !self.device_emulation_from_sii() {
            // Firmware keeps every SyncManager deactivated (PDI control bit 0) until its state
            // machine opens them.
            for n in 0..self.shape.sms {
                self.mem[reg::sm(n) as usize + 7] = 1;
            }
        }
        self.eeprom_reload();
        self.refresh_dl_status();
        self.sm_span_refresh();
        self.regs = self.shape.table();
    }

    /// How the ECAT side may access the byte at `a`: [`MapShape::access`], from the shape's
    /// table for registers.
    pub(crate) fn reg_access(&self, a: u32) -> regmap::Access {
        if let Some(&v) = self.regs.and_then(|t| t.get(a as usize)) {
            debug_assert_eq!(v, self.shape.access(a), "register table stale at {a:#06x}");
            return v;
        }
        self.shape.access(a)
    }

    /// The table entries of the register bytes `[addr, end)` (see [`Esc::reg_access`]), if
    /// the range lies in the register space and the shape has a table.
    pub(crate) fn reg_table_range(&self, addr: u32, end: u32) -> Option<&'static [regmap::Access]> {
        let t = self.regs?.get(addr as usize..end as usize)?;
        debug_assert!(t
            .iter()
            .zip(addr..)
            .all(|(&v, a)| v == self.shape.access(a)));
        Some(t)
    }

    /// Make the DC 32 bits wide (feature register 0x0008 bit 3 clear) or 64; powers up.
    pub fn set_dc_64bit(&mut self, wide: bool) {
        let f = ecat_wire::register::features::DC_64BIT;
        if wide {
            self.chip.features |= f;
        } else {
            self.chip.features &= !f;
        }
        self.shape.features = self.chip.features;
        self.power_up();
    }

    /// The chip description.
    pub fn chip(&self) -> &EscChip {
        &self.chip
    }

    /// What the SII says about this device (identity, names, mailbox, PDOs).
    pub fn info(&self) -> &SiiInfo {
        &self.info
    }

    /// The SII EEPROM image (as modified by EEPROM writes).
    pub fn sii(&self) -> &[u8] {
        &self.sii
    }

    /// Configured station address (0x0010).
    pub fn station_address(&self) -> u16 {
        self.get16(reg::STATION_ADDRESS)
    }

    /// Configured station alias (0x0012).
    pub fn station_alias(&self) -> u16 {
        self.get16(reg::STATION_ALIAS)
    }

    /// AL status register (0x0130).
    pub fn al_status(&self) -> AlStatus {
        AlStatus(self.get16(reg::AL_STATUS))
    }

    /// AL status code register (0x0134).
    pub fn al_status_code(&self) -> AlStatusCode {
        AlStatusCode(self.get16(reg::AL_STATUS_CODE))
    }

    /// True if the ESC copies AL control into AL status itself (0x0141 bit 0).
    pub fn device_emulation(&self) -> bool {
        self.mem[reg::ESC_CONFIG as usize] & 1 != 0
    }

    /// Read memory as the PDI sees it (no side effects); bytes past the end read as 0.
    pub fn read(&self, addr: u16, out: &mut [u8]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.mem.get(addr as usize + i).copied().unwrap_or(0);
        }
    }

    /// Read a little-endian `u16` as the PDI sees it.
    pub fn read_u16(&self, addr: u16) -> u16 {
        let mut b = [0; 2];
        self.read(addr, &mut b);
        u16::from_le_bytes(b)
    }

    /// Read a little-endian `u32` as the PDI sees it.
    pub fn read_u32(&self, addr: u16) -> u32 {
        let mut b = [0; 4];
        self.read(addr, &mut b);
        u32::from_le_bytes(b)
    }

    /// Write memory from the PDI side (device models); bytes past the end are ignored.
    pub fn pdi_write(&mut self, addr: u16, data: &[u8]) {
        let end = addr as u32 + data.len() as u32;
        self.route_stale |= route::route_regs(addr as u32, end);
        for (i, d) in data.iter().enumerate() {
            if let Some(m) = self.mem.get_mut(addr as usize + i) {
                *m = *d;
            }
        }
        if (addr as u32) < reg::SM0 as u32 + 128 && end > reg::SM0 as u32 {
            self.sm_span_refresh();
        }
    }

    /// Tell the ESC whether a SubDevice is wired to its port 1 (updates DL status).
    pub fn set_next_link(&mut self, connected: bool) {
        self.links[1] = connected;
        self.refresh_dl_status();
    }

    /// Tell the ESC which of its ports have a link (port 0 faces the MainDevice and has one
    /// unless its cable is cut); updates DL status. Ports the chip does not implement
    /// (port descriptor 0x0007) never have a link.
    pub fn set_port_links(&mut self, links: [bool; 4]) {
        // A port whose link goes down counts in its lost-link counter (0x0310 + port).
        for (p, (&was, &is)) in self.links.iter().zip(&links).enumerate() {
            if was && !is && (p == 0 || self.port_implemented(p)) {
                let c = &mut self.mem[0x0310 + p];
                *c = c.saturating_add(1);
            }
        }
        // Port 0 faces the MainDevice; it loses its link only when its cable is cut.
        self.links = links;
        self.refresh_dl_status();
    }

    /// Whether the chip implements `port` (port descriptor 0x0007 not "not implemented").
    pub fn port_implemented(&self, port: usize) -> bool {
        port < 4 && (self.chip.port_descriptor >> (2 * port)) & 3 != 0
    }

    /// Ports with a link (as last set by the network).
    pub fn port_links(&self) -> [bool; 4] {
        let mut l = self.links;
        for (p, v) in l.iter_mut().enumerate() {
            *v &= self.port_implemented(p) || p == 0;
        }
        l
    }

    /// Increment the invalid-frame counter of port 0 (0x0300), saturating at 255, as an ESC
    /// does when it receives a frame it cannot parse.
    pub fn count_invalid_frame(&mut self) {
        let c = &mut self.mem[reg::RX_ERROR_COUNTER as usize];
        *c = c.saturating_add(1);
    }

    /// Count a frame that arrived at `port` with a bad FCS: in the port's invalid-frame
    /// counter (0x0300 + 2·port) if this ESC is the first to see the error (`first`), else in
    /// its forwarded-error counter (0x0308 + port), as the ESC before marked the frame.
    /// Saturates at 255.
    pub fn count_crc_error(&mut self, port: usize, first: bool) {
        let a = if first {
            0x0300 + 2 * port
        } else {
            0x0308 + port
        };
        if let Some(c) = self.mem.get_mut(a) {
            *c = c.saturating_add(1);
        }
    }

    /// Advance internal timers (EEPROM busy, SM watchdog, a pending OP request) to `now_ns`.
    /// Called before each frame.
    pub fn tick(&mut self, now_ns: u64) {
        self.set_now(now_ns);
        self.eeprom_tick(now_ns);
        self.watchdog_tick(now_ns);
        self.esm_tick(now_ns);
    }

    /// Let the ESC know the time of the frame being processed without running its timers
    /// (what [`Esc::tick`] does when none is due).
    pub(crate) fn set_now(&mut self, now_ns: u64) {
        self.eeprom.now_ns = now_ns;
    }

    /// True time from which [`Esc::tick`] has something to do: an EEPROM command completing,
    /// the SM watchdog expiring, a pending OP request timing out (`u64::MAX`: none).
    pub(crate) fn tick_due(&self) -> u64 {
        let mut due = u64::MAX;
        if let Some((_, done)) = self.eeprom.pending {
            due = due.min(done);
        }
        if let (Some(last), false, Some(timeout)) =
            (self.wd.last, self.wd.expired, self.watchdog_timeout_ns())
        {
            if self.watchdog_sm_active() {
                due = due.min(last.saturating_add(timeout).saturating_add(1));
            }
        }
        if let Some(d) = self.esm.op_deadline {
            due = due.min(d);
        }
        due
    }

    /// [`Esc::end_of_frame`] if anything the PDI side reacts to happened since it last ran:
    /// an ECAT write other than to the DC registers, an access to a SyncManager's buffer, an
    /// AL status change, a timer (watchdog, EEPROM, OP request) firing, power-up. A frame
    /// that only read registers or fed the DC control loop leaves the PDI side idle, as a
    /// firmware driven by the ESC's events is.
    pub(crate) fn pdi_after_frame(&mut self, now_ns: u64) {
        if core::mem::take(&mut self.pdi_kick) {
            self.end_of_frame(now_ns);
        }
    }

    /// Whether the PDI side has something to react to.
    pub(crate) fn pdi_pending(&self) -> bool {
        self.pdi_kick
    }

    /// Note that the PDI side has something to react to after this frame.
    pub(crate) fn kick_pdi(&mut self) {
        self.pdi_kick = true;
    }

    /// Work done when a (good) frame has passed: buffered SMs the MainDevice completed are
    /// swapped in, then the PDI side runs: mailbox handling, outputs, the device behaviour and
    /// inputs (see the `io` module).
    pub fn end_of_frame(&mut self, now_ns: u64) {
        self.pdi_kick = false;
        self.buffered_frame_end(true);
        self.mailbox_service();
        self.process_data_outputs();
        if let Some(mut b) = self.behaviour.take() {
            b.end_of_frame(self, now_ns);
            if self.behaviour.is_none() {
                self.behaviour = Some(b);
            }
        }
        self.process_data_inputs();
    }

    /// Load what processing a frame touches first (the register lines of addressing, the
    /// event request, FMMUs, SyncManagers and DC, the DC state), all at once: on a large
    /// network these are cache misses, and issued together they overlap instead of
    /// following one another through the frame's processing. Returns a value derived from
    /// them only so that the loads are not optimised away.
    pub(crate) fn warm(&self) -> u64 {
        let m = &self.mem;
        let regs = [0x0010, 0x0130, 0x0210, 0x0600, 0x0800, 0x0910, 0x0980]
            .iter()
            .fold(0u64, |a, &i| a ^ m.get(i).copied().unwrap_or(0) as u64);
        regs ^ self.dc_warm() ^ self.eeprom.now_ns
    }

    /// The ECAT event bits the ESC ORs into every passing datagram's IRQ field.
    pub(crate) fn irq(&self) -> u16 {
        self.get16(reg::ECAT_EVENT) & self.get16(reg::ECAT_EVENT_MASK)
    }

    fn device_emulation_from_sii(&self) -> bool {
        self.sii.get(1).is_some_and(|b| b & 1 != 0)
    }

    /// Recompute DL status (0x0110) from the wiring and the EEPROM load result.
    fn refresh_dl_status(&mut self) {
        let loaded = self.eeprom.config_loaded;
        // Port 0 always faces the MainDevice; the others have a link where the network wires
        // a SubDevice to them; ports without link are closed (looped).
        let l = self.port_links();
        let ports = [0, 1, 2, 3].map(|p| (l[p], !l[p], l[p]));
        let mut v = reg::DlStatus::from_ports(loaded, ports).0;
        // A PDI watchdog only runs when there is a PDI (the EK1100 in the capture reports
        // bit 1 clear, its terminals set).
        if self.mem[reg::PDI_CONTROL as usize] == 0 {
            v &= !0x0002;
        }
        if self.get16(reg::DL_STATUS) != v {
            // ECAT event request bit 2: DL status changed (cleared when ECAT reads 0x0110).
            // Also at power-up, when the links come up: the EK1100 of the TwinCAT capture
            // shows it pending in every frame once the event mask enables it.
            let ev = self.get16(reg::ECAT_EVENT) | 0x0004;
            self.put16(reg::ECAT_EVENT, ev);
        }
        self.put16(reg::DL_STATUS, v);
    }

    fn set_al_status(&mut self, status: u16, code: Option<u16>) {
        self.pdi_kick = true;
        let old = self.get16(reg::AL_STATUS);
        self.put16(reg::AL_STATUS, status);
        if let Some(c) = code {
            self.put16(reg::AL_STATUS_CODE, c);
        }
        if old != status {
            // ECAT event request bit 3: AL status changed (cleared when ECAT reads 0x0130).
            let ev = self.get16(reg::ECAT_EVENT) | 0x0008;
            self.put16(reg::ECAT_EVENT, ev);
        }
    }

    fn get16(&self, addr: u16) -> u16 {
        self.read_u16(addr)
    }

    fn put16(&mut self, addr: u16, v: u16) {
        self.pdi_write(addr, &v.to_le_bytes());
    }
}
