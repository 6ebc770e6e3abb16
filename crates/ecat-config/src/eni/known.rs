//! The element paths the ENI reader understands, and the walk that names every other one.
//!
//! Paths are tag names below the root joined by `/` (`Config/Slave/Info/Name`). A subtree
//! under an unknown element is reported once at its top, with how often it occurs.

use roxmltree::Node;

/// Paths read (or deliberately kept raw) by this reader.
const KNOWN: &[&str] = &[
    "Config",
    "Config/Master",
    "Config/Master/Info",
    "Config/Master/Info/Name",
    "Config/Master/Info/Destination",
    "Config/Master/Info/Source",
    "Config/Master/Info/EtherType",
    "Config/Master/MailboxStates",
    "Config/Master/MailboxStates/StartAddr",
    "Config/Master/MailboxStates/Count",
    "Config/Master/EoE",
    "Config/Master/EoE/MaxPorts",
    "Config/Master/EoE/MaxFrames",
    "Config/Master/EoE/MaxMACs",
    "Config/Master/InitCmds",
    "Config/Slave",
    "Config/Slave/Info",
    "Config/Slave/Info/Name",
    "Config/Slave/Info/PhysAddr",
    "Config/Slave/Info/AutoIncAddr",
    "Config/Slave/Info/Physics",
    "Config/Slave/Info/VendorId",
    "Config/Slave/Info/ProductCode",
    "Config/Slave/Info/RevisionNo",
    "Config/Slave/Info/SerialNo",
    "Config/Slave/Info/CheckVendorId",
    "Config/Slave/Info/CheckProductCode",
    "Config/Slave/Info/CheckRevisionNo",
    "Config/Slave/Info/CheckSerialNo",
    "Config/Slave/ProcessData",
    "Config/Slave/ProcessData/Send",
    "Config/Slave/ProcessData/Send/BitStart",
    "Config/Slave/ProcessData/Send/BitLength",
    "Config/Slave/ProcessData/Recv",
    "Config/Slave/ProcessData/Recv/BitStart",
    "Config/Slave/ProcessData/Recv/BitLength",
    "Config/Slave/ProcessData/RxPdo",
    "Config/Slave/ProcessData/TxPdo",
    "Config/Slave/Mailbox",
    "Config/Slave/Mailbox/Send",
    "Config/Slave/Mailbox/Send/Start",
    "Config/Slave/Mailbox/Send/Length",
    "Config/Slave/Mailbox/Recv",
    "Config/Slave/Mailbox/Recv/Start",
    "Config/Slave/Mailbox/Recv/Length",
    "Config/Slave/Mailbox/Recv/PollTime",
    "Config/Slave/Mailbox/Recv/StatusBitAddr",
    "Config/Slave/Mailbox/Receive",
    "Config/Slave/Mailbox/Receive/Start",
    "Config/Slave/Mailbox/Receive/Length",
    "Config/Slave/Mailbox/Receive/PollTime",
    "Config/Slave/Mailbox/Receive/StatusBitAddr",
    "Config/Slave/Mailbox/BootStrap",
    "Config/Slave/Mailbox/BootStrap/Send",
    "Config/Slave/Mailbox/BootStrap/Send/Start",
    "Config/Slave/Mailbox/BootStrap/Send/Length",
    "Config/Slave/Mailbox/BootStrap/Recv",
    "Config/Slave/Mailbox/BootStrap/Recv/Start",
    "Config/Slave/Mailbox/BootStrap/Recv/Length",
    "Config/Slave/Mailbox/Protocol",
    "Config/Slave/Mailbox/CoE",
    "Config/Slave/Mailbox/CoE/InitCmds",
    "Config/Slave/Mailbox/CoE/Profile",
    "Config/Slave/Mailbox/CoE/Profile/ChannelInfo",
    "Config/Slave/Mailbox/CoE/Profile/ChannelInfo/ProfileNo",
    "Config/Slave/Mailbox/CoE/Profile/ChannelInfo/AddInfo",
    "Config/Slave/Mailbox/SoE",
    "Config/Slave/Mailbox/EoE",
    "Config/Slave/InitCmds",
    "Config/Slave/PreviousPort",
    "Config/Slave/PreviousPort/Port",
    "Config/Slave/PreviousPort/PhysAddr",
    "Config/Slave/DC",
    "Config/Slave/DC/PotentialReferenceClock",
    "Config/Slave/DC/ReferenceClock",
    "Config/Slave/DC/CycleTime0",
    "Config/Slave/DC/CycleTime1",
    "Config/Slave/DC/ShiftTime",
    "Config/Cyclic",
    "Config/Cyclic/Comment",
    "Config/Cyclic/CycleTime",
    "Config/Cyclic/Priority",
    "Config/Cyclic/TaskId",
    "Config/Cyclic/Frame",
    "Config/Cyclic/Frame/Comment",
    "Config/Cyclic/Frame/Cmd",
    "Config/ProcessImage",
    "Config/ProcessImage/Inputs",
    "Config/ProcessImage/Inputs/ByteSize",
    "Config/ProcessImage/Inputs/Variable",
    "Config/ProcessImage/Outputs",
    "Config/ProcessImage/Outputs/ByteSize",
    "Config/ProcessImage/Outputs/Variable",
];

/// Children understood under elements whose subtrees have a fixed shape (by last tag).
const LEAVES: &[(&str, &[&str])] = &[
    (
        "InitCmd",
        &[
            "Transition",
            "BeforeSlave",
            "Comment",
            "Requires",
            "Cmd",
            "Adp",
            "Ado",
            "Addr",
            "Data",
            "DataLength",
            "Cnt",
            "Retries",
            "Validate",
            "Timeout",
            "Ccs",
            "Index",
            "SubIndex",
            "Disabled",
        ],
    ),
    ("Validate", &["Data", "DataMask", "Timeout"]),
    ("RxPdo", &["Index", "Name", "Entry", "Exclude"]),
    ("TxPdo", &["Index", "Name", "Entry", "Exclude"]),
    (
        "Entry",
        &["Index", "SubIndex", "BitLen", "Name", "DataType", "Comment"],
    ),
    (
        "Variable",
        &["Name", "Comment", "DataType", "BitSize", "BitOffs"],
    ),
    (
        "Cmd",
        &[
            "State",
            "Comment",
            "Cmd",
            "Adp",
            "Ado",
            "Addr",
            "Data",
            "DataLength",
            "Cnt",
            "InputOffs",
            "OutputOffs",
        ],
    ),
    ("InitCmds", &["InitCmd"]),
];

/// Sync manager fields (`Sm0`..`Sm15`).
const SM_FIELDS: &[&str] = &[
    "Type",
    "StartAddress",
    "ControlByte",
    "Enable",
    "MinSize",
    "MaxSize",
    "DefaultSize",
    "Watchdog",
    "Pdo",
];

fn is_sm(tag: &str) -> bool {
    tag.strip_prefix("Sm")
        .and_then(|i| i.parse::<u8>().ok())
        .is_some_and(|i| i < 16)
}

fn known(path: &str, parent: &str, tag: &str) -> bool {
    if KNOWN.contains(&path) {
        return true;
    }
    if parent == "ProcessData" && is_sm(tag) {
        return true;
    }
    if is_sm(parent) {
        return SM_FIELDS.contains(&tag);
    }
    // Kept raw: nothing below is looked at.
    if path.starts_with("Config/Slave/Mailbox/SoE/")
        || path.starts_with("Config/Slave/Mailbox/EoE/")
    {
        return true;
    }
    LEAVES
        .iter()
        .any(|(p, kids)| *p == parent && kids.contains(&tag))
}

/// Every element path under `root` that is not understood, once each, with its count.
pub(crate) fn unknown_elements(root: Node<'_, '_>) -> Vec<String> {
    let mut found: Vec<(String, usize)> = Vec::new();
    walk(root, "", &mut found);
    found
        .into_iter()
        .map(|(p, n)| {
            if n == 1 {
                format!("element {p} is not handled (ignored)")
            } else {
                format!("element {p} is not handled ({n} occurrences ignored)")
            }
        })
        .collect()
}

fn walk(node: Node<'_, '_>, path: &str, found: &mut Vec<(String, usize)>) {
    let parent = node.tag_name().name();
    for c in node.children().filter(|c| c.is_element()) {
        let tag = c.tag_name().name();
        let p = if path.is_empty() {
            tag.to_string()
        } else {
            format!("{path}/{tag}")
        };
        if known(&p, parent, tag) {
            walk(c, &p, found);
        } else {
            match found.iter_mut().find(|(q, _)| *q == p) {
                Some((_, n)) => *n += 1,
                None => found.push((p, 1)),
            }
        }
    }
}
