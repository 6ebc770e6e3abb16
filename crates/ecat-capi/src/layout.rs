//! Activation: turn the application's slave configurations and domains into ecat's
//! [`Activation`] and start the [`Runtime`].
//!
//! - Every SubDevice with an attached configuration gets that configuration's PDOs; each of
//!   its sync managers goes into the ecat domain of the same number as the C domain where it
//!   was first registered, or into one extra hidden domain when nothing of it was registered
//!   (IgH still configures such a sync manager; its data simply is not in any image).
//! - A SubDevice without an attached configuration gets no process data and is kept in PREOP,
//!   as IgH does.
//! - Startup SDOs are the configuration's own, followed by the PDO assignment and mapping
//!   writes when the application changed them from what the SubDevice had.
//! - Startup IDNs given for PREOP follow the startup SDOs; those given for SAFEOP become
//!   commands of the SAFEOP → OP transition, made in SAFEOP before OP is requested (IgH).
//! - EoE parameters become one set-IP-parameter request after the PREOP IDNs (IgH's order),
//!   an optional one: a SubDevice that refuses it (or has no EoE) is reported once and goes on
//!   to OP, as with IgH.
//! - Distributed clocks are set up when any configuration activates SYNC0
//!   (`ecrt_slave_config_dc`), with the reference clock as the time master (see [`crate::dc`]);
//!   SYNC0 runs on exactly the SubDevices whose configuration asked for it (IgH), with the
//!   cycle and shift of the first such configuration.
//! - SYNC1: a configuration whose AssignActivate activates SYNC1 (0x0400) gets its
//!   `sync1_cycle` written into 0x09A4 with the SYNC0 cycle (IgH ignores `sync1_shift`).
//! - Watchdog: `ecrt_slave_config_watchdog`'s non-zero divider and intervals are written to
//!   0x0400 and 0x0420 in INIT, every time the SubDevice is configured.
//! - Each C domain that can be is laid out by ecat at its own offsets and shares ecat's image
//!   ([`crate::share`]); the others' regions are matched to ecat's regions to build copy
//!   lists.

use crate::domain::{Copy, Domain};
use crate::master::{Inner, Master, Phase};
use crate::slave_config::SlaveConfig;
use ecat::config::{Direction, SubDeviceConfig};
use ecat::dc::setup::DcOptions;
use ecat::dc::{DcMode, DcRuntime};
use ecat::mailbox::op::MailboxOp;
use ecat::mailbox::sdo::SdoOp;
use ecat::runtime::Activation;
use ecat::supervisor::TransitionCmd;
use ecat_wire::al::AlState;

/// Activate `m` (idle): see the module documentation.
pub fn activate(m: &Master, inner: &mut Inner) -> Result<(), String> {
    let n = inner.subdevices.len();
    let n_domains = inner.domains.len();
    let hidden = n_domains;
    let mut configs = vec![SubDeviceConfig::default(); n];
    let mut startup: Vec<Vec<SdoOp>> = vec![Vec::new(); n];
    let mut idns: Vec<Vec<MailboxOp>> = vec![Vec::new(); n];
    let mut safeop_idns: Vec<Vec<TransitionCmd>> = vec![Vec::new(); n];
    let mut optional: Vec<Vec<MailboxOp>> = vec![Vec::new(); n];
    let mut limited = vec![true; n];
    let mut hidden_used = false;
    let mut sync0: Option<(u64, u64)> = None;
    let mut assign = vec![0u16; n];
    // SAFETY: configs and domains are owned by the master and alive; one thread (IgH's rule).
    let scs: Vec<&SlaveConfig> = inner.configs.iter().map(|&p| unsafe { &*p }).collect();
    // SAFETY: as above.
    let doms: Vec<&Domain> = inner.domains.iter().map(|&p| unsafe { &*p }).collect();
    for sc in &scs {
        let Some(p) = sc.attached else { continue };
        let mut c = sc.config.clone();
        for sync in &mut c.sync {
            let scp: *const SlaveConfig = *sc;
            let owner = doms
                .iter()
                .position(|d| d.regions.iter().any(|r| r.sc == scp && r.sm == sync.index));
            sync.domain = owner.unwrap_or_else(|| {
                if sync.bytes() > 0 {
                    hidden_used = true;
                }
                hidden
            });
        }
        // PDO assignment and mapping are written by the core after these, by IgH's rules
        // (only what differs from the scan, only where the SII allows, refusals are warnings).
        startup[p] = sc.startup.clone();
        for idn in &sc.idns {
            match idn.state {
                AlState::SafeOp => safeop_idns[p].push(idn.safeop_cmd()),
                _ => idns[p].push(idn.op.clone().into()),
            }
        }
        optional[p].extend(crate::eoe::startup_op(&sc.eoe));
        configs[p] = c;
        limited[p] = false;
        if let Some(dc) = sc.dc {
            assign[p] = dc.assign_activate;
            if dc.assign_activate & 0x0300 != 0 && sync0.is_none() {
                sync0 = Some((dc.sync0_cycle.max(1) as u64, dc.sync0_shift.max(0) as u64));
            }
        }
    }
    let Phase::Idle(dev) = std::mem::replace(&mut inner.phase, Phase::Orphaned) else {
        return Err("the master is not idle".into());
    };
    // Waits for a request of the `ecat` tool the control server may be running on it.
    let Some(mut md) = ecat::control::idle::lock(&dev).take() else {
        return Err("the master has no link (a re-scan failed)".into());
    };
    let mut dc = None;
    if let Some((cycle_ns, shift_ns)) = sync0 {
        match md.configure_dc(DcOptions::default()) {
            Ok(Some(setup)) => {
                dc = Some(DcRuntime {
                    setup,
                    mode: DcMode::MasterFollowsReference,
                    cycle_ns,
                    shift_ns,
                })
            }
            Ok(None) => crate::log!(
                "distributed clocks were asked for, but no slave on '{}' supports them",
                m.spec
            ),
            Err(e) => crate::log!(
                "setting up distributed clocks on '{}': {e}; going on without",
                m.spec
            ),
        }
    }
    inner.dc = dc.is_some();
    inner.startup_errors = vec![None; n].into_boxed_slice();
    let domains = n_domains + usize::from(hidden_used);
    let mut lay = match ecat::domain::layout(md.subdevices(), &configs, domains, 0) {
        Ok(lay) => lay,
        Err(e) => {
            // Nothing was sent yet: the master stays idle with its link.
            *ecat::control::idle::lock(&dev) = Some(md);
            inner.phase = Phase::Idle(dev);
            return Err(format!("activation failed: {e}"));
        }
    };
    for &dp in &inner.domains {
        // SAFETY: owned by the master, alive, and no other reference to it exists now.
        let d = unsafe { &mut *dp };
        d.shared = crate::share::relocate(&mut lay, d, md.subdevices());
    }
    let act = Activation {
        configs: Some(configs),
        startup_sdos: startup,
        startup_ops: idns,
        domains,
        target: AlState::Op,
        dc,
        sync0_assign: Some(assign),
        ..Default::default()
    };
    let mut rt = match md.activate_with_layout(act, lay) {
        Ok(rt) => rt,
        Err(e) => {
            // The MainDevice was consumed: the link is gone. Report and stay orphaned.
            return Err(format!("activation failed: {e}"));
        }
    };
    // First (it replaces a SubDevice's transition commands; the register writes below are
    // put in front of them).
    for (p, cmds) in safeop_idns.into_iter().enumerate() {
        if !cmds.is_empty() {
            rt.set_transition_cmds(p, cmds);
        }
    }
    for (p, ops) in optional.into_iter().enumerate() {
        if !ops.is_empty() {
            rt.set_optional_startup(p, ops);
        }
    }
    for (p, &l) in limited.iter().enumerate() {
        if l {
            rt.limit_state(p, AlState::PreOp);
        }
    }
    for sc in &scs {
        let Some(p) = sc.attached else { continue };
        let writes = watchdog_writes(sc.watchdog);
        if !writes.is_empty() {
            rt.set_register_writes(p, writes);
        }
        if let Some(dc) = sc.dc.filter(|d| d.assign_activate & 0x0400 != 0) {
            rt.set_sync1(p, dc.sync1_cycle);
        }
    }
    // Copy lists per C domain.
    for &dp in &inner.domains {
        // SAFETY: owned by the master, alive, and no other reference to it exists now.
        let d = unsafe { &mut *dp };
        d.outputs.clear();
        d.inputs.clear();
        d.missing_wkc = 0;
        if d.shared {
            d.image = Vec::new();
            continue;
        }
        d.image = vec![0; d.size];
        let ed = rt.domain(d.index);
        for r in &d.regions {
            let there = r.position.and_then(|p| ed.region_of(p as u16, r.sm));
            match there {
                Some(e) => {
                    let c = Copy {
                        here: r.offset,
                        there: e.offset,
                        len: r.len.min(e.len),
                    };
                    match r.dir {
                        Direction::Output => d.outputs.push(c),
                        Direction::Input => d.inputs.push(c),
                    }
                }
                None => {
                    d.missing_wkc += match r.dir {
                        Direction::Output => 2,
                        Direction::Input => 1,
                    }
                }
            }
        }
    }
    // Register requests of every configuration are served by send/receive.
    inner.reg_requests = scs
        .iter()
        .flat_map(|sc| sc.reg_requests.iter().copied())
        .collect();
    if let Ok(mut c) = m.sdo_client.lock() {
        *c = Some(rt.sdo_client());
    }
    let mut rt = Box::new(rt);
    if let Some(c) = &m.control {
        c.attach(&mut rt);
        c.set_configs(crate::control::records(&scs));
    }
    inner.phase = Phase::Active(rt);
    Ok(())
}

/// IgH's `ecrt_slave_config_watchdog`: a non-zero divider goes to 0x0400, non-zero intervals
/// to the process data watchdog 0x0420 (0 keeps the SubDevice's default).
pub fn watchdog_writes((divider, intervals): (u16, u16)) -> Vec<(u16, Vec<u8>)> {
    let mut w = Vec::new();
    if divider != 0 {
        w.push((
            ecat_wire::register::WATCHDOG_DIVIDER,
            divider.to_le_bytes().to_vec(),
        ));
    }
    if intervals != 0 {
        w.push((
            ecat_wire::register::WATCHDOG_PD,
            intervals.to_le_bytes().to_vec(),
        ));
    }
    w
}
