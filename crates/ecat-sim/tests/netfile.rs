//! Network files and presets: what loads, and the errors (with file:line) for what does not.

use ecat_sim::{Network, SimError};
use std::path::{Path, PathBuf};

fn parse(text: &str) -> Result<Network, SimError> {
    Network::from_toml_str(text, "net.toml", Path::new("."))
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ecat-sim-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn models_names_and_aliases() {
    let n = parse(
        "[[subdevice]]\nmodel = \"EK1100\"\nname = \"coupler\"\n\n\
         [[subdevice]]\nmodel = \"el1008\"\nalias = 12\n\n[[subdevice]]\nmodel = \"EL9011\"\n",
    )
    .unwrap();
    let s = n.summary();
    assert_eq!(s[0].name, "coupler");
    assert_eq!(
        (s[1].order.as_str(), s[1].alias, s[1].product),
        ("EL1008", 12, 0x03F0_3052)
    );
    assert!(s[2].passive);
    assert_eq!(n.subdevice(1).unwrap().station_alias(), 12);
}

#[test]
fn errors_name_file_and_line() {
    let e = err("[[subdevice]]\nmodel = \"EK1100\"\n\n[[subdevice]]\nmodel = \"EL9999\"\n");
    assert!(e.starts_with("net.toml:5: unknown model \"EL9999\""), "{e}");
    assert!(e.contains("EK1100, EL1008"), "lists valid models: {e}");
    let e = err("[[subdevice]]\nmodel = \"EK1100\"\nmodle = 3\n");
    assert!(e.starts_with("net.toml:3:"), "{e}");
    let e = err("[[subdevice]]\nmodel = \"EK1100\n");
    assert!(e.starts_with("net.toml:2:"), "syntax error: {e}");
    let e = err("[[subdevice]]\nname = \"x\"\n");
    assert!(
        e.starts_with("net.toml:") && e.contains("needs `model"),
        "{e}"
    );
    let e = err("[[subdevice]]\nmodel = \"EK1100\"\nsii = \"a.bin\"\n");
    assert!(e.contains("either `model` or `sii`"), "{e}");
    let e = err("[[subdevice]]\nmodel = \"EL9011\"\nalias = 3\n");
    assert!(e.starts_with("net.toml:3:") && e.contains("passive"), "{e}");
    let e = err("# nothing\n");
    assert!(e.contains("no SubDevice"), "{e}");
    let e = err("[[subdevice]]\nmodel = \"EK1100\"\nalias = 70000\n");
    assert!(e.starts_with("net.toml:3:"), "{e}");
}

#[test]
fn sii_files_are_validated() {
    let dir = tmpdir("sii");
    let good = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/sii/el2004-eeprom-dump.bin"),
    )
    .unwrap();
    std::fs::write(dir.join("good.bin"), &good).unwrap();
    std::fs::write(dir.join("short.bin"), &good[..100]).unwrap();
    let mut bad_crc = good.clone();
    bad_crc[14] ^= 0x55;
    std::fs::write(dir.join("crc.bin"), &bad_crc).unwrap();
    std::fs::write(
        dir.join("garbage.bin"),
        (0..2048u32).map(|i| (i * 7919) as u8).collect::<Vec<u8>>(),
    )
    .unwrap();
    // Fixed area only: the category list runs off the end.
    let mut no_end = good[..130].to_vec();
    no_end[128] = 0x0A;
    std::fs::write(dir.join("noend.bin"), &no_end).unwrap();
    let net = |f: &str| {
        let text = format!("[[subdevice]]\nmodel = \"EK1100\"\n[[subdevice]]\nsii = \"{f}\"\n");
        std::fs::write(dir.join("net.toml"), text).unwrap();
        Network::from_file(&dir.join("net.toml"))
    };
    let n = net("good.bin").unwrap();
    assert_eq!(n.summary()[1].order, "EL2004");
    let e = |f: &str| net(f).unwrap_err().to_string();
    assert!(
        e("short.bin").contains("fewer than the 128-byte fixed area"),
        "{}",
        e("short.bin")
    );
    assert!(e("crc.bin").contains("bad CRC"), "{}", e("crc.bin"));
    assert!(e("garbage.bin").contains("bad CRC"), "{}", e("garbage.bin"));
    assert!(e("noend.bin").contains("END marker"), "{}", e("noend.bin"));
    assert!(
        e("missing.bin").contains(":4: cannot use SII image"),
        "{}",
        e("missing.bin")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn open_accepts_presets_and_paths() {
    assert_eq!(Network::open("sim:io").unwrap().subdevice_count(), 5);
    assert_eq!(Network::open("io").unwrap().subdevice_count(), 5);
    let e = Network::open("sim:nope").unwrap_err().to_string();
    assert!(
        e.contains("unknown network preset \"nope\"") && e.contains("io, servo"),
        "{e}"
    );
    let e = Network::open("sim:/no/such/net.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot read /no/such/net.toml"), "{e}");
    let dir = tmpdir("open");
    std::fs::write(dir.join("n.toml"), "[[subdevice]]\nmodel = \"EL2008\"\n").unwrap();
    let spec = format!("sim:{}", dir.join("n.toml").display());
    assert_eq!(Network::open(&spec).unwrap().summary()[0].order, "EL2008");
    let _ = std::fs::remove_dir_all(&dir);
}
