//! Build the SII image of one device of an ESI file:
//! `cargo run -p ecat-config --example sii_from_esi -- FILE TYPE [REVISION] OUT`.

use ecat_config::{build_sii_detailed, esi::parse_int, EsiFile, SiiOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: sii_from_esi FILE TYPE [REVISION] OUT");
        std::process::exit(2);
    }
    let rev = (args.len() > 3).then(|| parse_int(&args[2]).unwrap_or(0) as u32);
    let run = || -> Result<(), ecat_config::Error> {
        let f = EsiFile::from_path(args[0].as_ref())?;
        let d = f.device(&args[1], rev)?;
        let b = build_sii_detailed(d, &SiiOptions::default())?;
        std::fs::write(args.last().unwrap(), &b.image).map_err(|source| {
            ecat_config::Error::Io {
                path: args.last().unwrap().into(),
                source,
            }
        })?;
        println!(
            "{}: {} bytes, PDOs {:?}, DC names {}",
            d.label(),
            b.image.len(),
            b.pdos,
            b.dc_names
        );
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
