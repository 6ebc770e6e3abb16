//! `ethercat`: IgH's command-line tool on ecat, so scripts written for IgH's tool run
//! unchanged. The `ecat` binary becomes this dialect when it is started under the name
//! `ethercat` (a symlink or copy; `scripts/install-capi.sh` installs one beside `ecat`).
//!
//! Design: [`args`] reads the command line as IgH does (getopt permutation, IgH's option
//! letters, abbreviated command names), [`translate`] turns it into the `ecat` command line
//! that does the same, and the ordinary `ecat` parser and commands run it: one
//! implementation of each command. Where IgH's output differs from ecat's own (the `slaves`
//! table, `reg_read` values, the `pdos` and `cstruct` headers), the commands ask [`active`]
//! and print IgH's shape. Errors end the process with status 1, as IgH's do.
//!
//! The bus: `-m N` (default 0) is the application holding master N if one runs (its control
//! socket), else master N's link (`ECAT_MASTER<N>`, `ECAT_INTERFACE`, `MASTER<N>_DEVICE` in
//! `/etc/ecat.conf`), else, without `-m`, ecat's built-in simulated network.

pub mod args;
pub mod print;
pub mod translate;

use std::ffi::OsStr;
use std::process::ExitCode;
use std::sync::OnceLock;
use translate::{Bus, Plan};

/// What the commands need to know when they print for `ethercat`.
#[derive(Debug, Clone, Copy)]
pub struct Dialect {
    /// The master index shown in headers (`=== Master 0, Slave 3 ===`).
    pub master: u32,
}

static DIALECT: OnceLock<Dialect> = OnceLock::new();

/// `Some` when this process runs as `ethercat`: print as IgH's tool does.
pub fn active() -> Option<Dialect> {
    DIALECT.get().copied()
}

/// As IgH's idle master does after a scan, bring the SubDevices to PREOP when running as
/// `ethercat` on a link of its own (a failure is a note: the command goes on, as IgH's does).
pub fn idle_preop(md: &mut ecat::MainDevice) {
    if active().is_none() || md.subdevices().is_empty() {
        return;
    }
    let preop = ecat_wire::al::AlState::PreOp;
    if let Err(e) = md.request_state(&[], preop, std::time::Duration::from_secs(5)) {
        eprintln!("ethercat: bringing the bus to PREOP: {e}");
    }
    let _ = md.refresh_states();
}

/// True if the program was started under the name `ethercat`.
pub fn invoked_as_ethercat(argv0: &OsStr) -> bool {
    std::path::Path::new(argv0)
        .file_name()
        .is_some_and(|n| n == "ethercat")
}

const NUMBERS: &str = "Numerical values can be specified either with decimal (no prefix),\n\
                       octal (prefix '0') or hexadecimal (prefix '0x') base.\n";

/// The overall usage text.
pub fn usage() -> String {
    let width = args::COMMANDS.iter().map(|c| c.0.len()).max().unwrap_or(0);
    let mut o = String::from(
        "Usage: ethercat <COMMAND> [OPTIONS] [ARGUMENTS]\n\nCommands (can be abbreviated):\n",
    );
    for (name, what) in args::COMMANDS {
        o += &format!("  {name:<width$}  {what}\n");
    }
    o += "\nGlobal options:\n\
          \x20 --master  -m <master>  Master to use (default 0): the application holding it,\n\
          \x20                        else its link (ECAT_MASTER<N>, ECAT_INTERFACE,\n\
          \x20                        MASTER<N>_DEVICE in /etc/ecat.conf).\n\
          \x20 --force   -f           Force a command.\n\
          \x20 --quiet   -q           Output less information.\n\
          \x20 --verbose -v           Output more information.\n\
          \x20 --help    -h           Show this help.\n\n";
    o += NUMBERS;
    o += "\nCall 'ethercat <COMMAND> --help' for command-specific help.\n\
          This is ecat's IgH-compatible front end; `ecat --help` lists ecat's own commands.\n";
    o
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("{msg}");
    ExitCode::FAILURE
}

/// The master index from `-m` (IgH takes a list; ecat's tool talks to one master).
fn master_index(spec: Option<&str>) -> Result<Option<u32>, String> {
    let Some(spec) = spec.filter(|m| *m != "-") else {
        return Ok(None);
    };
    let bad = || {
        format!("'-m {spec}' is not one master index: ecat's ethercat talks to one master at a time (e.g. -m 0)")
    };
    let n: u32 = spec.trim().parse().map_err(|_| bad())?;
    Ok(Some(n))
}

/// Where master `n` is: a running application, else its configured link.
fn find_bus(explicit: Option<u32>) -> Result<Bus, String> {
    let n = explicit.unwrap_or(0);
    let on = |args: Vec<String>| Bus { master: n, args };
    match ecat::control::Client::connect(n) {
        Ok(_) => return Ok(on(vec!["-m".into(), n.to_string()])),
        Err(ecat::Error::NotFound(_)) => {}
        Err(e) => return Err(e.to_string()),
    }
    match ecat::link_config::link_for(n) {
        Ok(link) => Ok(on(vec!["-i".into(), link])),
        Err(why) if explicit.is_some() => {
            Err(format!("no application holds master {n}, and {why}"))
        }
        // No -m and nothing configured: ecat's default (the simulated network, with a note).
        Err(_) => Ok(on(Vec::new())),
    }
}

/// The `ecat` words a command's help comes from.
fn ecat_words(cmd: &str) -> Option<Vec<&str>> {
    Some(match cmd {
        "reg_read" => vec!["reg", "read"],
        "reg_write" => vec!["reg", "write"],
        "sii_read" => vec!["sii", "read"],
        "sii_write" => vec!["sii", "write"],
        "rescan" | "debug" => return None,
        c => vec![c],
    })
}

fn help(cmd: &str) -> ExitCode {
    let what = args::COMMANDS
        .iter()
        .find(|c| c.0 == cmd)
        .map_or("", |c| c.1);
    println!("ethercat {cmd} [OPTIONS]\n\n{what}\n");
    match cmd {
        "rescan" => println!("Scans the bus again. Each ethercat command scans the bus itself, and an application's master rescans when SubDevices come or go."),
        "debug" => println!("Takes the level 0, 1 or 2. ecat's master has no debug level to set: it logs warnings and errors always; record frames with `ecat slaves --capture FILE` or tcpdump."),
        _ => {}
    }
    println!("IgH's options -m, -a, -p, -t, -d, -o, -f, -q, -v apply.\n{NUMBERS}");
    if let Some(words) = ecat_words(cmd) {
        println!("It runs `ecat {}`:\n", words.join(" "));
        let argv = std::iter::once("ecat").chain(words).chain(["--help"]);
        if let Err(e) = <crate::Cli as clap::Parser>::try_parse_from(argv) {
            let _ = e.print();
        }
    }
    ExitCode::SUCCESS
}

fn rescan(bus: &Bus) -> ExitCode {
    if bus.args.first().is_some_and(|a| a == "-m") {
        eprintln!(
            "ethercat: master {}'s application rescans by itself when SubDevices come or go",
            bus.master
        );
        return ExitCode::SUCCESS;
    }
    let b = crate::BusArgs {
        interface: bus.args.get(1).cloned(),
        master: None,
        esi_dir: Vec::new(),
    };
    match crate::cmd::open_and_scan(&b) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => fail(&format!("ethercat: {e}")),
    }
}

/// Run as IgH's tool; `words` are the arguments after the program name.
pub fn main(words: Vec<String>) -> ExitCode {
    let inv = match args::parse(&words) {
        Ok(i) => i,
        Err(e) => return fail(&format!("ethercat: {e}\n\n{}", usage())),
    };
    let Some(name) = inv.command else {
        if inv.opts.help {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        return fail(&format!("Please specify a command!\n\n{}", usage()));
    };
    let cmd = match args::matching(&name).as_slice() {
        [one] => *one,
        [] => return fail(&format!("Unknown command {name}!\n\n{}", usage())),
        many => {
            return fail(&format!(
                "Ambiguous command abbreviation! Matching:\n{}\n\n{}",
                many.join("\n"),
                usage()
            ))
        }
    };
    if inv.opts.help {
        return help(cmd);
    }
    let bus = match master_index(inv.opts.master.as_deref()).and_then(find_bus) {
        Ok(b) => b,
        Err(e) => return fail(&format!("ethercat: {e}")),
    };
    let plan = match translate::plan(cmd, &inv.opts, &inv.args, &bus) {
        Ok(p) => p,
        Err(e) => return fail(&format!("ethercat: {e}; see 'ethercat {cmd} --help'")),
    };
    let _ = DIALECT.set(Dialect { master: bus.master });
    match plan {
        Plan::Rescan => rescan(&bus),
        Plan::Debug(level) => {
            eprintln!(
                "ethercat: debug level {level} not applied: ecat's master has no debug level (it logs warnings and errors always; record frames with `ecat slaves --capture FILE` or tcpdump)"
            );
            ExitCode::SUCCESS
        }
        Plan::Ecat(words) => {
            let argv = std::iter::once("ethercat".to_string()).chain(words);
            match <crate::Cli as clap::Parser>::try_parse_from(argv) {
                Ok(cli) => crate::finish("ethercat", crate::dispatch(cli.command)),
                Err(e) => {
                    let _ = e.print();
                    ExitCode::FAILURE
                }
            }
        }
    }
}
