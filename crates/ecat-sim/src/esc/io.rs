//! The device side of cyclic process data: what the firmware (or the ESC's digital I/O unit)
//! does with the buffered SyncManagers after each frame.
//!
//! The process-data SMs are the SII's first Outputs SM and first Inputs SM that have PDOs
//! mapped (SM2/SM3, or SM0/SM1 on terminals without mailbox). After every frame:
//! 1. the latest complete output buffer is taken; the device **applies** it only in OP with
//!    valid outputs and no watchdog expiry, otherwise it holds the safe value (all zero);
//! 2. the device behaviour runs (it reads [`Esc::outputs`] and sets its inputs with
//!    [`Esc::set_device_inputs`]);
//! 3. from SAFEOP on, the inputs (or the test's override, [`Esc::set_input_override`]) are
//!    written into the input SM's buffer, so the MainDevice reads them from the next frame.
//!
//! Devices with an object dictionary (CoE) take their process-data layout from the current
//! PDO assignment and mapping instead of the SII: the outputs they apply are unpacked into
//! the mapped objects (skipped when neither the outputs nor the dictionary changed since the
//! last unpacking, by the dictionary's stamp), their inputs packed from the mapped objects
//! (see `coe::pdo`). The
//! layout is computed at power-up and again on PREOP→SAFEOP (after a remap over CoE), and
//! when the device stops applying outputs (leaving OP, watchdog) the mapped output objects
//! get the safe value 0 once.
//!
//! "Valid outputs" means the MainDevice completed an output buffer since the device entered
//! SAFEOP; a SAFEOP→OP request waits for them (see the `al` module) and a watchdog expiry
//! clears them.

use super::Esc;
use crate::coe::od::OdHint;
use crate::coe::pdo::{self, MapEntry};
use crate::sii_info::SmKind;
use ecat_wire::al::AlState;

/// Process data as the device sees it.
#[derive(Debug, Default, Clone)]
pub(crate) struct IoState {
    /// Output SM index and its PDO size in bytes.
    pub out_sm: Option<(u8, usize)>,
    /// Input SM index and its PDO size in bytes.
    pub in_sm: Option<(u8, usize)>,
    /// The latest outputs received from the MainDevice.
    pub received: Vec<u8>,
    /// The outputs the device drives (zero unless in OP with valid outputs).
    pub applied: Vec<u8>,
    /// The inputs the device behaviour produced.
    pub device_inputs: Vec<u8>,
    /// Inputs forced by a test.
    pub forced: Option<Vec<u8>>,
    /// The MainDevice completed an output buffer since SAFEOP was entered.
    pub outputs_valid: bool,
    /// Output layout from the dictionary (CoE devices).
    pub rx_map: Vec<MapEntry>,
    /// Input layout from the dictionary (CoE devices).
    pub tx_map: Vec<MapEntry>,
    /// Where the entries of `tx_map` are in the dictionary (packed every frame).
    pub tx_hints: Vec<OdHint>,
    /// Outputs were applied after the last frame.
    pub applying: bool,
    /// The outputs last unpacked into the dictionary and its stamp right after (`None`:
    /// not yet): unpacking the same outputs into the same contents again changes nothing.
    pub unpacked: Option<(u64, Vec<u8>)>,
}

impl IoState {
    /// Sizes and layouts from the dictionary (CoE devices) or the SII.
    pub fn for_esc(esc: &Esc) -> IoState {
        let od = esc.od();
        let find = |kind: SmKind| {
            esc.info()
                .sms
                .iter()
                .enumerate()
                .take(esc.shape.sms as usize)
                .filter(|(_, s)| s.kind == kind)
                .map(|(i, s)| (i as u8, esc.pdo_bytes(i as u8, s.pdo_bits)))
                .find(|&(_, b)| b > 0)
        };
        let out_sm = find(SmKind::Outputs);
        let in_sm = find(SmKind::Inputs);
        let out_len = out_sm.map_or(0, |s| s.1);
        let in_len = in_sm.map_or(0, |s| s.1);
        let mut rx_map = Vec::new();
        let mut tx_map = Vec::new();
        if let Some(od) = od {
            if let Some((n, _)) = out_sm {
                pdo::layout(od, n, &mut rx_map);
            }
            if let Some((n, _)) = in_sm {
                pdo::layout(od, n, &mut tx_map);
            }
        }
        IoState {
            out_sm,
            in_sm,
            received: vec![0; out_len],
            applied: vec![0; out_len],
            device_inputs: vec![0; in_len],
            forced: None,
            outputs_valid: false,
            rx_map,
            tx_hints: vec![OdHint::default(); tx_map.len()],
            tx_map,
            applying: false,
            unpacked: None,
        }
    }
}

impl Esc {
    /// Process-data bytes of SM `n`: from its PDO assignment in the dictionary if the device
    /// has one, else the SII's `sii_bits`.
    pub(crate) fn pdo_bytes(&self, n: u8, sii_bits: u32) -> usize {
        self.od()
            .and_then(|od| pdo::sm_bits(od, n))
            .unwrap_or(sii_bits)
            .div_ceil(8) as usize
    }

    /// Recompute the process-data layout from the dictionary (PREOP→SAFEOP), keeping a
    /// forced input override (resized).
    pub(crate) fn io_relayout(&mut self) {
        if self.coe.is_none() {
            return;
        }
        let forced = self.io.forced.take();
        self.io = IoState::for_esc(self);
        if let Some(mut f) = forced {
            f.resize(self.io.device_inputs.len(), 0);
            self.io.forced = Some(f);
        }
    }

    /// The outputs the device applies now (empty for devices without outputs). All zero
    /// unless the device is in OP and has received valid outputs.
    pub fn outputs(&self) -> &[u8] {
        &self.io.applied
    }

    /// The inputs the device presents (its own values, or the forced ones).
    pub fn inputs(&self) -> &[u8] {
        self.io.forced.as_deref().unwrap_or(&self.io.device_inputs)
    }

    /// Device behaviour: set the input values (truncated/zero-padded to the PDO size). On a
    /// CoE device the values also go into the objects the current TxPDO mapping names, since
    /// its inputs are packed from them.
    pub fn set_device_inputs(&mut self, data: &[u8]) {
        fill(&mut self.io.device_inputs, data);
        if let Some(c) = self.coe.as_mut() {
            pdo::unpack(&mut c.od, &self.io.tx_map, &self.io.device_inputs);
        }
    }

    /// Force the inputs to `data` (truncated/zero-padded to the PDO size), or with `None`
    /// return to the device's own values.
    pub fn set_input_override(&mut self, data: Option<&[u8]>) {
        self.io.forced = data.map(|d| {
            let mut v = vec![0; self.io.device_inputs.len()];
            fill(&mut v, d);
            v
        });
    }

    /// The MainDevice completed a buffer of SM `n`.
    pub(crate) fn outputs_written(&mut self, n: u8) {
        if self.io.out_sm.is_some_and(|(s, _)| s == n) {
            self.io.outputs_valid = true;
            self.esm_outputs_arrived();
        }
    }

    /// Outputs are no longer valid (entering SAFEOP from below, watchdog expiry).
    pub(crate) fn outputs_lost(&mut self) {
        self.io.outputs_valid = false;
    }

    /// True if the device has outputs and has not received valid ones since SAFEOP.
    pub(crate) fn outputs_missing(&self) -> bool {
        self.io.out_sm.is_some() && !self.io.outputs_valid
    }

    /// Drive the safe value now.
    pub(crate) fn outputs_to_safe(&mut self) {
        // Most devices hold no outputs or zero ones already: skip the fill (a call per frame).
        if self.io.applied.iter().any(|&b| b != 0) {
            self.io.applied.fill(0);
        }
    }

    /// Step 1 and 3 around the behaviour (see the module note).
    pub(crate) fn process_data_outputs(&mut self) {
        if let Some((n, _)) = self.io.out_sm {
            let mut rx = core::mem::take(&mut self.io.received);
            if self.sm_active(n) && !self.sm(n).is_mailbox() {
                self.pdi_read_buffered(n, &mut rx);
            }
            self.io.received = rx;
        }
        let apply = self.al_status().state() == Some(AlState::Op)
            && self.io.outputs_valid
            && !self.wd.expired;
        if apply {
            let IoState {
                received, applied, ..
            } = &mut self.io;
            applied.copy_from_slice(received);
        } else {
            self.outputs_to_safe();
        }
        if apply || self.io.applying {
            if let Some(c) = self.coe.as_mut() {
                let io = &mut self.io;
                let same = io
                    .unpacked
                    .as_ref()
                    .is_some_and(|(st, d)| *st == c.od.stamp() && *d == io.applied);
                if !same {
                    pdo::unpack(&mut c.od, &io.rx_map, &io.applied);
                    let mut d = io.unpacked.take().map(|u| u.1).unwrap_or_default();
                    d.clone_from(&io.applied);
                    io.unpacked = Some((c.od.stamp(), d));
                }
            }
        }
        self.io.applying = apply;
    }

    /// Step 3: publish the inputs from SAFEOP on.
    pub(crate) fn process_data_inputs(&mut self) {
        let Some((n, _)) = self.io.in_sm else {
            return;
        };
        let state = self.al_status().state();
        if !matches!(state, Some(AlState::SafeOp | AlState::Op))
            || !self.sm_active(n)
            || self.sm(n).is_mailbox()
        {
            return;
        }
        let data = match self.io.forced.take() {
            Some(f) => {
                self.pdi_write_buffered(n, &f);
                Some(f)
            }
            None => {
                if let Some(c) = self.coe.as_ref() {
                    pdo::pack_hinted(
                        &c.od,
                        &self.io.tx_map,
                        &mut self.io.tx_hints,
                        &mut self.io.device_inputs,
                    );
                }
                let d = core::mem::take(&mut self.io.device_inputs);
                self.pdi_write_buffered(n, &d);
                self.io.device_inputs = d;
                None
            }
        };
        self.io.forced = data;
    }
}

fn fill(dst: &mut [u8], src: &[u8]) {
    let n = dst.len().min(src.len());
    dst[..n].copy_from_slice(&src[..n]);
    dst[n..].fill(0);
}
