//! The command line of IgH's `ethercat` tool, read as IgH reads it: GNU `getopt_long` with
//! permutation (options may stand before or after the command and its arguments; `--` ends
//! them; a lone `-` is an argument), one option set for every command, and a command name
//! that may be abbreviated: an exact name first, else every name starting with the text, else
//! every name holding its letters in order (`sl` is `slaves`, `ul` is `upload`).

/// IgH's commands (stable-1.6) with a line on each, in IgH's order.
pub const COMMANDS: [(&str, &str); 28] = [
    ("alias", "Write the station alias into the SII."),
    ("config", "Show the application's slave configurations."),
    (
        "crc",
        "Show the CRC and link error counters, or reset them.",
    ),
    ("cstruct", "Print the PDO configuration as C arrays."),
    (
        "data",
        "Write the process data of a domain to stdout as binary.",
    ),
    ("debug", "Set the master's debug level."),
    ("domains", "Show the domains and their process data layout."),
    ("download", "Write an SDO entry to a slave."),
    ("eoe", "Show EoE statistics."),
    ("foe_read", "Read a file from a slave over FoE."),
    ("foe_write", "Write a file to a slave over FoE."),
    ("graph", "Print the bus topology as a Graphviz graph."),
    ("ip", "Set a slave's EoE IP parameters."),
    ("master", "Show the master and its link."),
    ("pdos", "List sync managers, PDO assignment and mapping."),
    ("reg_read", "Read a slave's registers."),
    ("reg_write", "Write a slave's registers."),
    ("rescan", "Scan the bus again."),
    ("sdos", "List the SDO dictionary."),
    ("sii_read", "Write a slave's SII contents to stdout."),
    ("sii_write", "Write SII contents to a slave."),
    ("slaves", "List the slaves on the bus."),
    ("soe_read", "Read an SoE IDN from a slave."),
    ("soe_write", "Write an SoE IDN to a slave."),
    ("states", "Request an application-layer state."),
    ("upload", "Read an SDO entry from a slave."),
    ("version", "Show the version."),
    ("xml", "Print an ESI-like XML description of slaves."),
];

/// The options IgH's tool knows (all global: each command uses those it needs).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Options {
    /// `-m`: masters (a list; one is supported).
    pub master: Option<String>,
    /// `-a`: alias.
    pub alias: Option<String>,
    /// `-p`: positions (a list).
    pub position: Option<String>,
    /// `-d`: domain.
    pub domain: Option<String>,
    /// `-t`: data type.
    pub dtype: Option<String>,
    /// `-o`: output file.
    pub output: Option<String>,
    /// `-s`: skin of `pdos`.
    pub skin: Option<String>,
    /// `-e`: emergency register request.
    pub emergency: bool,
    /// `-f`: force.
    pub force: bool,
    /// `-r`: reset.
    pub reset: bool,
    /// `-q`: less output.
    pub quiet: bool,
    /// `-v`: more output.
    pub verbose: bool,
    /// `-h`: help.
    pub help: bool,
}

/// What was typed: the options, the command word (if any) and its arguments.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Invocation {
    /// Options, wherever they stood.
    pub opts: Options,
    /// The (possibly abbreviated) command.
    pub command: Option<String>,
    /// The command's arguments.
    pub args: Vec<String>,
}

/// (long name, short letter, takes a value)
const LONG: [(&str, char, bool); 13] = [
    ("master", 'm', true),
    ("alias", 'a', true),
    ("position", 'p', true),
    ("domain", 'd', true),
    ("type", 't', true),
    ("output-file", 'o', true),
    ("skin", 's', true),
    ("emergency", 'e', false),
    ("force", 'f', false),
    ("reset", 'r', false),
    ("quiet", 'q', false),
    ("verbose", 'v', false),
    ("help", 'h', false),
];

fn set(o: &mut Options, c: char, value: Option<String>) {
    match c {
        'm' => o.master = value,
        'a' => o.alias = value,
        'p' => o.position = value,
        'd' => o.domain = value,
        't' => o.dtype = value,
        'o' => o.output = value,
        's' => o.skin = value,
        'e' => o.emergency = true,
        'f' => o.force = true,
        'r' => o.reset = true,
        'q' => o.quiet = true,
        'v' => o.verbose = true,
        _ => o.help = true,
    }
}

/// Read the words after the program name.
pub fn parse(words: &[String]) -> Result<Invocation, String> {
    let mut opts = Options::default();
    let mut free = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if w == "--" {
            free.extend(words[i..].iter().cloned());
            break;
        }
        if let Some(body) = w.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let exact = LONG.iter().find(|l| l.0 == name);
            let found: Vec<_> = LONG.iter().filter(|l| l.0.starts_with(name)).collect();
            let &(long, c, takes) = match (exact, found.as_slice()) {
                (Some(l), _) => l,
                (None, [one]) => one,
                (None, []) => return Err(format!("unrecognized option '--{name}'")),
                (None, _) => return Err(format!("option '--{name}' is ambiguous")),
            };
            let value = match (takes, inline) {
                (true, Some(v)) => Some(v),
                (true, None) => {
                    let v = words
                        .get(i)
                        .ok_or_else(|| format!("option '--{long}' requires an argument"))?;
                    i += 1;
                    Some(v.clone())
                }
                (false, Some(_)) => {
                    return Err(format!("option '--{long}' doesn't allow an argument"))
                }
                (false, None) => None,
            };
            set(&mut opts, c, value);
            continue;
        }
        match w.strip_prefix('-') {
            Some(cluster) if !cluster.is_empty() => {
                for (k, c) in cluster.char_indices() {
                    let Some(&(_, _, takes)) = LONG.iter().find(|l| l.1 == c) else {
                        return Err(format!("invalid option -- '{c}'"));
                    };
                    if !takes {
                        set(&mut opts, c, None);
                        continue;
                    }
                    let rest = &cluster[k + c.len_utf8()..];
                    let value = if !rest.is_empty() {
                        rest.to_string()
                    } else {
                        let v = words
                            .get(i)
                            .ok_or_else(|| format!("option requires an argument -- '{c}'"))?;
                        i += 1;
                        v.clone()
                    };
                    set(&mut opts, c, Some(value));
                    break;
                }
            }
            _ => free.push(w.clone()),
        }
    }
    let mut free = free.into_iter();
    Ok(Invocation {
        opts,
        command: free.next(),
        args: free.collect(),
    })
}

/// The commands a (possibly abbreviated) name stands for, by IgH's rules.
pub fn matching(name: &str) -> Vec<&'static str> {
    let names = COMMANDS.iter().map(|c| c.0);
    if let Some(n) = names.clone().find(|n| *n == name) {
        return vec![n];
    }
    let prefix: Vec<_> = names.clone().filter(|n| n.starts_with(name)).collect();
    if !prefix.is_empty() {
        return prefix;
    }
    names
        .filter(|n| {
            let mut rest = n.chars();
            name.chars().all(|c| rest.any(|x| x == c))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn abbreviations_follow_igh() {
        assert_eq!(matching("slaves"), ["slaves"]);
        assert_eq!(matching("sl"), ["slaves"]);
        assert_eq!(matching("ul"), ["upload"]);
        assert_eq!(matching("rr"), ["reg_read", "reg_write"]);
        assert_eq!(matching("rrd"), ["reg_read"]);
        assert_eq!(matching("so"), ["soe_read", "soe_write"]);
        assert_eq!(
            matching("s"),
            [
                "sdos",
                "sii_read",
                "sii_write",
                "slaves",
                "soe_read",
                "soe_write",
                "states"
            ]
        );
        // A prefix match hides subsequence matches: `d` is data, debug, domains, download.
        assert_eq!(matching("d"), ["data", "debug", "domains", "download"]);
        assert!(matching("zz").is_empty());
        assert_eq!(matching("x"), ["xml"]);
    }

    #[test]
    fn options_anywhere_as_getopt_permutes() {
        let v = parse(&words("-m0 reg_read -p 0 0x130 -t uint16 2")).unwrap();
        assert_eq!(v.command.as_deref(), Some("reg_read"));
        assert_eq!(v.args, ["0x130", "2"]);
        assert_eq!(v.opts.master.as_deref(), Some("0"));
        assert_eq!(v.opts.position.as_deref(), Some("0"));
        assert_eq!(v.opts.dtype.as_deref(), Some("uint16"));
        let v = parse(&words("sl -vq --pos=3 --alias 7 -- -1")).unwrap();
        assert!(v.opts.verbose && v.opts.quiet);
        assert_eq!(v.opts.position.as_deref(), Some("3"));
        assert_eq!(v.opts.alias.as_deref(), Some("7"));
        assert_eq!(v.args, ["-1"]);
        let v = parse(&words("reg_write 0x120 -")).unwrap();
        assert_eq!(v.args, ["0x120", "-"]);
        assert!(parse(&words("slaves -x")).unwrap_err().contains("'x'"));
        assert!(parse(&words("slaves -p")).unwrap_err().contains("'p'"));
        assert!(parse(&words("slaves --bogus")).is_err());
        assert!(parse(&words("slaves --verbose=1")).is_err());
        assert_eq!(parse(&[]).unwrap().command, None);
    }
}
