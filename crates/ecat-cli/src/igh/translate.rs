//! From an IgH command line to the `ecat` command line that does the same: every IgH command
//! runs one of ecat's own commands (no second implementation), with IgH's option letters
//! mapped onto ecat's (`-t`, `-p`, `-a`, `-v`, `-q`, `-o`, `-f`, `-d`) and IgH's argument
//! shapes onto ecat's (`upload IDX` is complete access, `reg_write ADDR FILE` reads the
//! bytes from a file without `-t`). Pure text to text, so every mapping is unit-tested; the
//! two commands ecat has no counterpart for (`rescan`, `debug`) come back as [`Plan::Rescan`]
//! and [`Plan::Debug`].

use super::args::Options;

/// What to do for one IgH command.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// Run ecat with these words (after the program name).
    Ecat(Vec<String>),
    /// Scan the bus again (IgH: forget what is known and rescan).
    Rescan,
    /// Set the master's debug level.
    Debug(u8),
}

/// How the bus is reached: the ecat options naming it (`-m N` or `-i LINK`, or none for
/// ecat's default) and the master index.
#[derive(Debug, Default, Clone)]
pub struct Bus {
    /// The master index (IgH's `-m`, default 0).
    pub master: u32,
    /// ecat options that select the bus.
    pub args: Vec<String>,
}

fn s(x: &str) -> String {
    x.to_string()
}

/// IgH's data type names onto ecat's (`-t`).
fn data_type(t: &str) -> Result<&'static str, String> {
    Ok(match t {
        "bool" | "uint8" => "uint8",
        "int8" => "int8",
        "int16" => "int16",
        "int32" => "int32",
        "int64" => "int64",
        "uint16" => "uint16",
        "uint32" => "uint32",
        "uint64" => "uint64",
        "float" => "float",
        "double" => "double",
        "string" | "octet_string" | "unicode_string" => "string",
        "raw" => "raw",
        _ => {
            return Err(format!(
                "invalid data type '{t}': use bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float, double, string, octet_string, unicode_string or raw"
            ))
        }
    })
}

fn count(cmd: &str, args: &[String], allowed: &[usize], shape: &str) -> Result<(), String> {
    if allowed.contains(&args.len()) {
        return Ok(());
    }
    Err(match shape {
        "" => format!("'{cmd}' takes no arguments"),
        _ => format!("'{cmd}' takes {shape}"),
    })
}

/// The ecat words for IgH command `cmd` (a full name) with options `o` and arguments `args`.
pub fn plan(cmd: &str, o: &Options, args: &[String], bus: &Bus) -> Result<Plan, String> {
    let mut w: Vec<String> = Vec::new();
    let sel = |w: &mut Vec<String>| -> Result<(), String> {
        if let Some(p) = o.position.as_deref().filter(|p| *p != "-") {
            w.extend([s("-p"), s(p)]);
        }
        if let Some(a) = o.alias.as_deref().filter(|a| *a != "-") {
            if a.contains([',', '-']) {
                return Err(format!(
                    "'-a {a}' names several aliases; ecat selects by one alias: give one, or use -p"
                ));
            }
            w.extend([s("-a"), s(a)]);
        }
        Ok(())
    };
    let ty = |w: &mut Vec<String>| -> Result<(), String> {
        if let Some(t) = &o.dtype {
            w.extend([s("-t"), s(data_type(t)?)]);
        }
        Ok(())
    };
    let head = |w: &mut Vec<String>, words: &[&str]| {
        w.extend(words.iter().map(|x| s(x)));
        w.extend(bus.args.iter().cloned());
    };
    match cmd {
        "alias" => {
            count(cmd, args, &[1], "one argument: the alias")?;
            head(&mut w, &["alias"]);
            sel(&mut w)?;
            if o.force {
                w.push(s("--force"));
            }
            w.push(args[0].clone());
        }
        "config" => {
            count(cmd, args, &[0], "")?;
            head(&mut w, &["config"]);
            if o.verbose {
                w.push(s("-v"));
            }
        }
        "crc" => {
            count(cmd, args, &[0, 1], "at most one argument: reset")?;
            if args.first().is_some_and(|a| a != "reset") {
                return Err(format!(
                    "'crc' knows one argument, reset, not '{}'",
                    args[0]
                ));
            }
            head(&mut w, &["crc"]);
            sel(&mut w)?;
            if o.reset || !args.is_empty() {
                w.push(s("reset"));
            }
        }
        "cstruct" | "xml" | "slaves" | "pdos" => {
            count(cmd, args, &[0], "")?;
            head(&mut w, &[cmd]);
            sel(&mut w)?;
            if cmd == "slaves" && o.verbose {
                w.push(s("-v"));
            }
            if cmd == "pdos" {
                match o.skin.as_deref() {
                    None | Some("default") => {}
                    Some(k) => {
                        return Err(format!(
                            "skin '{k}' is not available: ecat prints the default skin only"
                        ))
                    }
                }
                if o.quiet {
                    w.push(s("-q"));
                }
            }
        }
        "data" => {
            count(cmd, args, &[0], "")?;
            head(&mut w, &["data", "--binary"]);
            if let Some(d) = &o.domain {
                w.extend([s("-d"), d.clone()]);
            }
        }
        "domains" => {
            count(cmd, args, &[0], "")?;
            head(&mut w, &["domains"]);
            if let Some(d) = &o.domain {
                w.extend([s("-d"), d.clone()]);
            }
            if o.verbose {
                w.push(s("-v"));
            }
        }
        "download" => {
            count(cmd, args, &[2, 3], "<INDEX> [<SUBINDEX>] <VALUE>")?;
            head(&mut w, &["download"]);
            sel(&mut w)?;
            ty(&mut w)?;
            // Without SUBINDEX: the whole object (complete access), as in IgH.
            let (index, sub, value) = if let [i, v] = args {
                w.push(s("-c"));
                (i, s("0"), v)
            } else {
                (&args[0], args[1].clone(), &args[2])
            };
            if value == "-" {
                w.extend([s("--file"), s("-")]);
            }
            w.extend([index.clone(), sub]);
            if value != "-" {
                w.extend([s("--"), value.clone()]);
            }
        }
        "eoe" => {
            count(cmd, args, &[0], "")?;
            w.extend([s("eoe"), s("-m"), bus.master.to_string()]);
        }
        "foe_read" | "foe_write" => {
            count(cmd, args, &[1], "one argument: the file")?;
            head(&mut w, &[cmd]);
            sel(&mut w)?;
            if let Some(f) = &o.output {
                w.extend([s("-o"), f.clone()]);
            }
            w.push(args[0].clone());
        }
        "graph" => {
            count(cmd, args, &[0, 1], "at most one argument: DC")?;
            if let Some(a) = args.first().filter(|a| *a != "DC") {
                return Err(format!(
                    "graph '{a}' is not available: ecat's graph shows the topology with the DC delays (graph or graph DC)"
                ));
            }
            head(&mut w, &["graph"]);
        }
        "ip" => {
            if args.is_empty() {
                return Err(
                    "'ip' takes keyword/value pairs: addr, link, default, dns, name".into(),
                );
            }
            head(&mut w, &["ip"]);
            sel(&mut w)?;
            w.push(s("--"));
            w.extend(args.iter().cloned());
        }
        "master" | "version" => {
            count(cmd, args, &[0], "")?;
            if cmd == "version" {
                w.push(s("version"));
            } else {
                head(&mut w, &["master"]);
            }
        }
        "reg_read" => {
            count(cmd, args, &[1, 2], "<ADDRESS> [<SIZE>]")?;
            head(&mut w, &["reg", "read"]);
            sel(&mut w)?;
            ty(&mut w)?;
            let typed_size = o
                .dtype
                .as_deref()
                .and_then(|t| data_type(t).ok())
                .is_some_and(|t| !matches!(t, "string" | "raw"));
            if args.len() == 1 && !typed_size {
                return Err(
                    "'reg_read' needs a size when no data type (or a type without a size) is given"
                        .into(),
                );
            }
            // A sized type overrides the size argument, as in IgH.
            w.push(args[0].clone());
            if !typed_size {
                w.push(args[1].clone());
            }
        }
        "reg_write" => {
            count(cmd, args, &[2], "<ADDRESS> <DATA>")?;
            head(&mut w, &["reg", "write"]);
            sel(&mut w)?;
            if o.dtype.is_some() {
                ty(&mut w)?;
                w.extend([args[0].clone(), s("--"), args[1].clone()]);
            } else {
                w.extend([s("--file"), args[1].clone(), args[0].clone()]);
            }
        }
        "rescan" => {
            count(cmd, args, &[0], "")?;
            return Ok(Plan::Rescan);
        }
        "debug" => {
            count(cmd, args, &[1], "one argument: the level 0, 1 or 2")?;
            return match crate::select::parse_u64(&args[0]) {
                Ok(l @ 0..=2) => Ok(Plan::Debug(l as u8)),
                _ => Err(format!("invalid debug level '{}': use 0, 1 or 2", args[0])),
            };
        }
        "sdos" => {
            count(cmd, args, &[0], "")?;
            head(&mut w, &["sdos"]);
            sel(&mut w)?;
            if o.quiet {
                w.push(s("-q"));
            }
        }
        "sii_read" => {
            count(cmd, args, &[0], "")?;
            head(&mut w, &["sii", "read"]);
            sel(&mut w)?;
            if o.verbose {
                w.push(s("-v"));
            }
        }
        "sii_write" => {
            count(cmd, args, &[1], "one argument: the file ('-' for stdin)")?;
            head(&mut w, &["sii", "write"]);
            sel(&mut w)?;
            if o.force {
                w.push(s("--force"));
            }
            w.push(args[0].clone());
        }
        "soe_read" | "soe_write" => {
            let (n, shape) = if cmd == "soe_read" {
                (1, "[<DRIVE>] <IDN>")
            } else {
                (2, "[<DRIVE>] <IDN> <VALUE>")
            };
            count(cmd, args, &[n, n + 1], shape)?;
            head(&mut w, &[cmd]);
            sel(&mut w)?;
            ty(&mut w)?;
            let rest = if args.len() > n {
                w.extend([s("-d"), args[0].clone()]);
                &args[1..]
            } else {
                args
            };
            w.push(s("--"));
            w.extend(rest.iter().cloned());
        }
        "states" => {
            count(
                cmd,
                args,
                &[1],
                "one argument: INIT, PREOP, BOOT, SAFEOP or OP",
            )?;
            head(&mut w, &["states"]);
            sel(&mut w)?;
            w.push(args[0].to_uppercase());
        }
        "upload" => {
            count(cmd, args, &[1, 2], "<INDEX> [<SUBINDEX>]")?;
            head(&mut w, &["upload"]);
            sel(&mut w)?;
            ty(&mut w)?;
            match args {
                [i] => w.extend([s("-c"), i.clone(), s("0")]),
                _ => w.extend(args.iter().cloned()),
            }
        }
        other => return Err(format!("'{other}' is not one of IgH's commands")),
    }
    Ok(Plan::Ecat(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cmd: &str, o: Options, args: &[&str]) -> Result<Vec<String>, String> {
        let bus = Bus {
            master: 0,
            args: vec![s("-i"), s("sim:io")],
        };
        let args: Vec<String> = args.iter().map(|x| s(x)).collect();
        match plan(cmd, &o, &args, &bus)? {
            Plan::Ecat(w) => Ok(w),
            p => Ok(vec![format!("{p:?}")]),
        }
    }

    fn pos(p: &str) -> Options {
        Options {
            position: Some(s(p)),
            ..Default::default()
        }
    }

    #[test]
    fn commands_map_onto_ecat() {
        assert_eq!(
            run("reg_read", pos("0"), &["0x130", "2"]).unwrap(),
            ["reg", "read", "-i", "sim:io", "-p", "0", "0x130", "2"]
        );
        let typed = Options {
            dtype: Some(s("uint16")),
            ..pos("0")
        };
        assert_eq!(
            run("reg_read", typed.clone(), &["0x130", "4"]).unwrap(),
            ["reg", "read", "-i", "sim:io", "-p", "0", "-t", "uint16", "0x130"]
        );
        assert!(run("reg_read", pos("0"), &["0x130"]).is_err());
        assert_eq!(
            run("upload", pos("1"), &["0x1018"]).unwrap(),
            ["upload", "-i", "sim:io", "-p", "1", "-c", "0x1018", "0"]
        );
        assert_eq!(
            run("download", typed, &["0x6060", "0", "8"]).unwrap(),
            ["download", "-i", "sim:io", "-p", "0", "-t", "uint16", "0x6060", "0", "--", "8"]
        );
        assert_eq!(
            run("reg_write", pos("0"), &["0x120", "-"]).unwrap(),
            ["reg", "write", "-i", "sim:io", "-p", "0", "--file", "-", "0x120"]
        );
        assert_eq!(
            run("soe_read", pos("0"), &["1", "S-0-0011"]).unwrap(),
            ["soe_read", "-i", "sim:io", "-p", "0", "-d", "1", "--", "S-0-0011"]
        );
        assert_eq!(
            run("states", pos("-"), &["preop"]).unwrap(),
            ["states", "-i", "sim:io", "PREOP"]
        );
        assert_eq!(run("rescan", Options::default(), &[]).unwrap(), ["Rescan"]);
        assert_eq!(
            run("debug", Options::default(), &["02"]).unwrap(),
            ["Debug(2)"]
        );
        assert!(run("debug", Options::default(), &["3"]).is_err());
        assert!(run("slaves", Options::default(), &["x"])
            .unwrap_err()
            .contains("no arguments"));
        assert!(run("upload", Options::default(), &[])
            .unwrap_err()
            .contains("<INDEX>"));
        let t = Options {
            dtype: Some(s("sm8")),
            ..Default::default()
        };
        assert!(run("upload", t, &["0x1000", "0"])
            .unwrap_err()
            .contains("invalid data type"));
    }
}
