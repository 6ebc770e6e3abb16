//! The master's control socket (see `ecat::control`): master N serves `masterN.sock` from
//! `ecrt_request_master`/`ecrt_open_master` until `ecrt_release_master`, so the `ecat` tool
//! (`ecat slaves -m N`, `upload`, `data`, `config`, `master`, ...) works beside the
//! application, as IgH's `ethercat` tool does. Before activation its bus access runs on the
//! MainDevice the master shares with it (one request at a time, never beside the
//! application's own blocking calls); after activation it rides in the application's acyclic
//! frames.

use crate::log;
use crate::slave_config::SlaveConfig;
use ecat::config::SubDeviceConfig;
use ecat::control::idle::IdleDevice;
use ecat::control::protocol::{config_to_wire, ConfigRecord};
use ecat::control::Server;
use ecat::mailbox::sdo::SdoOp;
use ecat::SubDevice;

/// Start serving master `index` on `spec` in its configuration phase (the bus requests are
/// answered on `md`); `None` (and one log line) if the socket cannot be made: the application
/// runs on without it. `ECAT_CONTROL=off` turns it off.
pub fn start(
    index: u32,
    spec: &str,
    subs: &[SubDevice],
    pdos: &[SubDeviceConfig],
    md: &IdleDevice,
) -> Option<Server> {
    if matches!(std::env::var("ECAT_CONTROL").as_deref(), Ok("off" | "0")) {
        return None;
    }
    match Server::start(index, spec) {
        Ok(s) => {
            s.set_idle(subs, pdos, Some(md.clone()));
            Some(s)
        }
        Err(e) => {
            log!("master {index}: no control socket for the ecat tool: {e}");
            None
        }
    }
}

/// What `ecat config` shows of the application's slave configurations.
pub fn records(scs: &[&SlaveConfig]) -> Vec<ConfigRecord> {
    scs.iter()
        .map(|sc| ConfigRecord {
            alias: sc.alias,
            position: sc.position,
            vendor_id: sc.vendor_id,
            product_code: sc.product_code,
            attached: sc.attached,
            pdos: config_to_wire(&sc.config),
            sdos: sc
                .startup
                .iter()
                .filter_map(|op| match op {
                    SdoOp::Download {
                        index,
                        subindex,
                        complete_access,
                        data,
                    } => Some((*index, *subindex, *complete_access, data.clone())),
                    _ => None,
                })
                .collect(),
            dc: sc
                .dc
                .as_ref()
                .map(|d| (d.assign_activate, d.sync0_cycle, d.sync0_shift)),
        })
        .collect()
}
