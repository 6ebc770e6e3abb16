//! `--eni FILE` for `ecat run` and `ecat data`: read the ENI, check the scanned bus against it,
//! configure from it (see `ecat::eni`), set up DC when its slaves ask for SYNC0, and activate
//! with the ENI's process image layout. Also `ecat data --eni`'s listing of every variable.

use ecat::dc::DcRuntime;
use ecat::eni::{EniImage, Value};
use ecat::runtime::Runtime;
use ecat::MainDevice;
use ecat_config::eni::Eni;
use std::path::Path;

/// Read an ENI file; the error is one sentence with `file:line:column` where it has one.
pub fn load(path: &Path) -> Result<Eni, Box<dyn std::error::Error>> {
    Ok(Eni::from_path(path)?)
}

/// Configure the scanned bus from `eni` and activate it. `dc` builds the DC runtime once the
/// SubDevices carry the ENI's SYNC0 activation (`None` when DC stays off).
pub fn activate(
    mut md: MainDevice,
    eni: &Eni,
    dc: impl FnOnce(&mut MainDevice) -> Result<Option<DcRuntime>, Box<dyn std::error::Error>>,
) -> Result<(Runtime, EniImage), Box<dyn std::error::Error>> {
    let setup = md.configure_from_eni(eni)?;
    let counts: Vec<String> = setup
        .cmd_counts()
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    println!(
        "ENI {}: {} slaves match the bus; init commands run at transitions: {}; cyclic {}",
        eni.file_name(),
        eni.slaves.len(),
        if counts.is_empty() {
            "none".to_string()
        } else {
            counts.join(", ")
        },
        setup.cycle_ns.map_or("time not given".into(), |c| format!(
            "time {:.0} us",
            c as f64 / 1e3
        ))
    );
    for n in &setup.notes {
        println!("note: {n}");
    }
    let dc = dc(&mut md)?;
    Ok(md.activate_eni(setup, dc)?)
}

/// One line per variable: direction, name, type, its ENI bit offset and value.
pub fn print_vars(rt: &Runtime, image: &EniImage) {
    let outputs_len = rt.domain(0).outputs_len;
    for v in image.vars() {
        let base = if v.input { outputs_len * 8 } else { 0 };
        let value = EniImage::value_of(v, rt.domain(v.location.domain).image());
        let shown = match &value {
            Value::Bytes(b) if b.len() > 16 => format!("{} bytes", b.len()),
            other => other.to_string(),
        };
        println!(
            "  {:<3} {:<56} {:<6} bit {:>6}  {shown}",
            if v.input { "in" } else { "out" },
            v.name,
            v.data_type,
            v.location.byte * 8 + v.location.bit as usize - base,
        );
    }
}
