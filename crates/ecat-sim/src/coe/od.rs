//! The object dictionary (OD) of one CoE device: descriptions as static data
//! ([`ObjSpec`], [`SubSpec`]) and the live dictionary built from them ([`Od`]).
//!
//! Design: a device's objects are written down once as `static` tables (see
//! `devices::servo` and `devices::beckhoff`); the standard communication objects (0x1000..,
//! 0x1018, 0x1C00, PDO mapping and assignment, 0x1C32/0x1C33) are generated from the
//! `DeviceSpec` by `coe::standard`. At run time every entry holds its value as little-endian
//! bytes (`ceil(bits / 8)` of them; strings hold their text), so SDO transfers copy bytes and
//! device models use the integer accessors [`Od::get`] / [`Od::set`], which never allocate
//! (the cyclic path must stay allocation-free).
//!
//! Objects are kept sorted by index; entries of an object sorted by subindex. Records may
//! have gaps (0x1C32 has 1..=0x0C and 0x20). Device models look entries up by index every
//! frame (a drive dozens of times), so the dictionary also keeps where each high byte of the
//! index starts in the sorted objects: a lookup searches only the few objects sharing it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ecat_wire::coe::info::{ObjectAccess, ObjectCode};
use ecat_wire::coe::DataType;

/// Access words (SDO Information object access bits, reference §6.6) used by the tables.
pub mod access {
    use super::ObjectAccess as A;
    /// Read-only in PREOP, SAFEOP and OP.
    pub const RO: u16 = A::READ_ALL;
    /// Read and write in PREOP, SAFEOP and OP.
    pub const RW: u16 = A::READ_ALL | A::WRITE_ALL;
    /// Readable always, writable in PREOP only (communication parameters, PDO objects).
    pub const RW_PREOP: u16 = A::READ_ALL | A::WRITE_PREOP;
    /// Write-only in every state.
    pub const WO: u16 = A::WRITE_ALL;
    /// RxPDO-mappable (outputs).
    pub const RX: u16 = A::RXPDO;
    /// TxPDO-mappable (inputs).
    pub const TX: u16 = A::TXPDO;
    /// Stored for device replacement (backup).
    pub const BACKUP: u16 = A::BACKUP;
    /// Startup parameter (settings).
    pub const SETTINGS: u16 = A::SETTINGS;
}

/// Initial value of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    /// An integer (stored in the entry's width, two's complement).
    Int(i64),
    /// A string (VISIBLE_STRING / OCTET_STRING).
    Str(&'static str),
}

/// Static description of one entry (subindex) of an object.
#[derive(Debug, Clone, Copy)]
pub struct SubSpec {
    /// Subindex.
    pub sub: u8,
    /// Name shown by SDO Information.
    pub name: &'static str,
    /// CoE data type.
    pub dtype: DataType,
    /// Length in bits (for strings: of the initial text).
    pub bits: u16,
    /// Access word ([`access`]).
    pub access: u16,
    /// Initial (and default) value.
    pub init: Init,
    /// Smallest value a write may set.
    pub min: Option<i64>,
    /// Largest value a write may set.
    pub max: Option<i64>,
    /// Unit type (SDO Information; 0 = none).
    pub unit: u32,
}

/// Bit size of a fixed-size type (0 for strings and unknown types).
pub const fn bits_of(t: DataType) -> u16 {
    match t.0 {
        0x0001 => 1,
        0x0002 | 0x0005 => 8,
        0x0003 | 0x0006 => 16,
        0x0010 | 0x0016 => 24,
        0x0004 | 0x0007 | 0x0008 => 32,
        0x0011 | 0x0015 | 0x001B => 64,
        0x0030..=0x0037 => t.0 - 0x002F,
        _ => 0,
    }
}

impl SubSpec {
    /// An integer entry with the size of its type.
    pub const fn int(sub: u8, name: &'static str, dtype: DataType, access: u16, v: i64) -> Self {
        SubSpec {
            sub,
            name,
            dtype,
            bits: bits_of(dtype),
            access,
            init: Init::Int(v),
            min: None,
            max: None,
            unit: 0,
        }
    }

    /// A read-only VISIBLE_STRING entry.
    pub const fn text(sub: u8, name: &'static str, v: &'static str) -> Self {
        SubSpec {
            sub,
            name,
            dtype: DataType::VISIBLE_STRING,
            bits: (v.len() * 8) as u16,
            access: access::RO,
            init: Init::Str(v),
            min: None,
            max: None,
            unit: 0,
        }
    }

    /// The same entry with a value range for writes.
    pub const fn range(mut self, min: i64, max: i64) -> Self {
        self.min = Some(min);
        self.max = Some(max);
        self
    }

    /// The same entry with another access word.
    pub const fn with_access(mut self, access: u16) -> Self {
        self.access = access;
        self
    }

    /// The same entry with a unit type.
    pub const fn unit(mut self, unit: u32) -> Self {
        self.unit = unit;
        self
    }
}

/// Static description of one object.
#[derive(Debug, Clone, Copy)]
pub struct ObjSpec {
    /// Index.
    pub index: u16,
    /// Name shown by SDO Information.
    pub name: &'static str,
    /// VAR, ARRAY or RECORD.
    pub code: ObjectCode,
    /// Data type reported by the object description (for a VAR: its entry's type).
    pub dtype: DataType,
    /// The entries; a VAR has exactly one, subindex 0.
    pub subs: &'static [SubSpec],
}

/// A VAR object with one integer entry.
#[macro_export]
#[doc(hidden)]
macro_rules! od_var {
    ($index:expr, $name:expr, $t:ident, $acc:expr, $v:expr) => {
        $crate::coe::od::ObjSpec {
            index: $index,
            name: $name,
            code: ecat_wire::coe::info::ObjectCode::VAR,
            dtype: ecat_wire::coe::DataType::$t,
            subs: &[$crate::coe::od::SubSpec::int(
                0,
                $name,
                ecat_wire::coe::DataType::$t,
                $acc,
                $v,
            )],
        }
    };
}

/// One live entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Subindex.
    pub sub: u8,
    /// Name (shared by the copies of a network).
    pub name: Arc<str>,
    /// CoE data type.
    pub dtype: DataType,
    /// Length in bits.
    pub bits: u16,
    /// Access word.
    pub access: u16,
    /// Current value, little-endian.
    pub value: Vec<u8>,
    /// Default value, little-endian (shared by the copies of a network).
    pub default: Arc<[u8]>,
    /// Write range.
    pub min: Option<i64>,
    /// Write range.
    pub max: Option<i64>,
    /// Unit type.
    pub unit: u32,
}

impl Entry {
    /// True for variable-length types (strings).
    pub fn is_string(&self) -> bool {
        matches!(self.dtype.0, 0x0009..=0x000B)
    }

    /// True for signed integer types.
    pub fn is_signed(&self) -> bool {
        matches!(self.dtype.0, 0x0002..=0x0004 | 0x0010 | 0x0015)
    }

    /// The value as an integer (sign-extended for signed types; strings read as 0).
    pub fn int(&self) -> i64 {
        decode_int(&self.value, self.bits, self.is_signed())
    }

    /// Store an integer, truncated to the entry's width (no checks, no allocation).
    pub fn set_int(&mut self, v: i64) {
        let b = v.to_le_bytes();
        let n = self.value.len().min(8);
        self.value[..n].copy_from_slice(&b[..n]);
        if !self.bits.is_multiple_of(8) {
            if let Some(last) = self.value.last_mut() {
                *last &= (1u8 << (self.bits % 8)) - 1;
            }
        }
    }

    /// Build from a static description.
    pub fn from_spec(s: &SubSpec) -> Entry {
        let value = match s.init {
            Init::Int(v) => {
                let n = (s.bits as usize).div_ceil(8);
                let mut b = vec![0; n];
                let le = v.to_le_bytes();
                let k = n.min(8);
                b[..k].copy_from_slice(&le[..k]);
                b
            }
            Init::Str(t) => t.as_bytes().to_vec(),
        };
        let mut e = Entry {
            sub: s.sub,
            name: s.name.into(),
            dtype: s.dtype,
            bits: s.bits,
            access: s.access,
            default: value.as_slice().into(),
            value,
            min: s.min,
            max: s.max,
            unit: s.unit,
        };
        let v = e.int();
        if !e.is_string() {
            e.set_int(v);
        }
        e
    }

    /// Subindex 0 of a record or array: the number of entries (UNSIGNED8).
    pub fn subindex0(n: u8, access: u16) -> Self {
        Entry::new_int(0, "SubIndex 000", DataType::UNSIGNED8, access, n as i64)
    }

    /// A new integer entry (generated standard objects).
    pub fn new_int(sub: u8, name: impl Into<String>, dtype: DataType, access: u16, v: i64) -> Self {
        let mut e = Entry::from_spec(&SubSpec::int(sub, "", dtype, access, v));
        e.name = Arc::from(name.into());
        e
    }
}

/// Decode `bits` bits of little-endian `b` as an integer.
pub(crate) fn decode_int(b: &[u8], bits: u16, signed: bool) -> i64 {
    let mut le = [0u8; 8];
    let n = b.len().min(8);
    le[..n].copy_from_slice(&b[..n]);
    let v = u64::from_le_bytes(le);
    let bits = (bits as u32).min(64);
    if bits == 0 || bits == 64 {
        return v as i64;
    }
    let v = v & ((1u64 << bits) - 1);
    if signed && v >> (bits - 1) & 1 == 1 {
        (v | !((1u64 << bits) - 1)) as i64
    } else {
        v as i64
    }
}

/// One live object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// Index.
    pub index: u16,
    /// Name (shared by the copies of a network).
    pub name: Arc<str>,
    /// VAR, ARRAY or RECORD.
    pub code: ObjectCode,
    /// Data type reported by the object description.
    pub dtype: DataType,
    /// Entries, sorted by subindex.
    pub entries: Vec<Entry>,
}

impl Object {
    /// An object from its parts (entries sorted by subindex).
    pub fn new(
        index: u16,
        name: &str,
        code: ObjectCode,
        dtype: DataType,
        entries: Vec<Entry>,
    ) -> Object {
        Object {
            index,
            name: name.into(),
            code,
            dtype,
            entries,
        }
    }

    /// Build from a static description.
    pub fn from_spec(s: &ObjSpec) -> Object {
        let mut entries: Vec<Entry> = s.subs.iter().map(Entry::from_spec).collect();
        entries.sort_by_key(|e| e.sub);
        Object {
            index: s.index,
            name: s.name.into(),
            code: s.code,
            dtype: s.dtype,
            entries,
        }
    }

    /// The entry at `sub`.
    pub fn entry(&self, sub: u8) -> Option<&Entry> {
        self.entries
            .binary_search_by_key(&sub, |e| e.sub)
            .ok()
            .map(|i| &self.entries[i])
    }

    /// The entry at `sub`, writable.
    pub fn entry_mut(&mut self, sub: u8) -> Option<&mut Entry> {
        self.entries
            .binary_search_by_key(&sub, |e| e.sub)
            .ok()
            .map(|i| &mut self.entries[i])
    }

    /// Highest subindex defined (0 for a VAR).
    pub fn max_subindex(&self) -> u8 {
        self.entries.last().map_or(0, |e| e.sub)
    }

    /// True for ARRAY and RECORD objects (subindex 0 holds the entry count).
    pub fn is_structured(&self) -> bool {
        self.code != ObjectCode::VAR
    }
}

/// The live object dictionary of one device. Copy on write: the copies of a network share
/// one dictionary until one of them writes an entry (a value that stays the same is no
/// write), so copying a network with drives is cheap.
///
/// Every mutable access gives the dictionary a new [`Od::stamp`], unique in the process: equal
/// stamps mean equal contents, so the device side can skip work whose inputs did not change
/// (see `esc::io`).
#[derive(Debug, Clone, Default, Eq)]
pub struct Od {
    objects: Arc<Vec<Object>>,
    /// `objects[starts[h]..starts[h + 1]]` have indices with high byte `h` (257 bounds once
    /// the first object is in; see the module documentation).
    starts: Vec<u32>,
    /// See [`Od::stamp`] (0: never written, the empty dictionary).
    stamp: u64,
}

impl PartialEq for Od {
    /// Equal contents (the stamp says nothing about another dictionary).
    fn eq(&self, other: &Od) -> bool {
        self.objects == other.objects && self.starts == other.starts
    }
}

/// Where an entry was last found, for [`Od::set_hinted`] (the default finds nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OdHint {
    object: u32,
    entry: u32,
}

impl Default for OdHint {
    fn default() -> OdHint {
        OdHint {
            object: u32::MAX,
            entry: u32::MAX,
        }
    }
}

/// Source of [`Od::stamp`]s: each thread takes a block of [`STAMP_BLOCK`] at a time and
/// hands them out itself, so that dictionaries written on different threads (the simulator's
/// pipeline, `crate::pipeline`) do not contend for one counter.
static STAMPS: AtomicU64 = AtomicU64::new(1);

/// Stamps a thread takes from [`STAMPS`] at once.
const STAMP_BLOCK: u64 = 1 << 20;

thread_local! {
    /// This thread's next stamp and the end of its block.
    static LOCAL_STAMPS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// A stamp no other call in this process returns.
fn next_stamp() -> u64 {
    LOCAL_STAMPS.with(|c| {
        let (mut next, mut end) = c.get();
        if next == end {
            next = STAMPS.fetch_add(STAMP_BLOCK, Ordering::Relaxed);
            end = next + STAMP_BLOCK;
        }
        c.set((next + 1, end));
        next
    })
}

impl Od {
    /// An empty dictionary.
    pub fn new() -> Od {
        Od::default()
    }

    /// Identifies the contents: changes with every mutable access (even one that writes the
    /// same value), never repeats for other contents in this process (copies share it until
    /// one of them is written).
    pub fn stamp(&self) -> u64 {
        self.stamp
    }

    fn touch(&mut self) {
        self.stamp = next_stamp();
    }

    /// Add (or replace) an object.
    pub fn insert(&mut self, obj: Object) {
        self.touch();
        let objects = Arc::make_mut(&mut self.objects);
        match objects.binary_search_by_key(&obj.index, |o| o.index) {
            Ok(i) => objects[i] = obj,
            Err(i) => {
                let h = (obj.index >> 8) as usize;
                objects.insert(i, obj);
                if self.starts.is_empty() {
                    self.starts = vec![0; 257];
                }
                for s in &mut self.starts[h + 1..] {
                    *s += 1;
                }
            }
        }
    }

    /// Position of object `index` in `objects`.
    fn position(&self, index: u16) -> Option<usize> {
        let h = (index >> 8) as usize;
        let (lo, hi) = match self.starts.get(h..h + 2) {
            Some(b) => (b[0] as usize, b[1] as usize),
            None => return None,
        };
        self.objects[lo..hi]
            .binary_search_by_key(&index, |o| o.index)
            .ok()
            .map(|i| lo + i)
    }

    /// Add the objects of a static table.
    pub fn insert_specs(&mut self, specs: &[ObjSpec]) {
        for s in specs {
            self.insert(Object::from_spec(s));
        }
    }

    /// Every object, sorted by index.
    pub fn objects(&self) -> &[Object] {
        &self.objects
    }

    /// The object at `index`.
    pub fn object(&self, index: u16) -> Option<&Object> {
        self.position(index).map(|i| &self.objects[i])
    }

    /// The object at `index`, writable.
    pub fn object_mut(&mut self, index: u16) -> Option<&mut Object> {
        let i = self.position(index)?;
        self.touch();
        Some(&mut Arc::make_mut(&mut self.objects)[i])
    }

    /// The entry `index:sub`.
    pub fn entry(&self, index: u16, sub: u8) -> Option<&Entry> {
        self.object(index)?.entry(sub)
    }

    /// The entry `index:sub`, found through `hint` (see [`Od::set_hinted`]).
    pub fn entry_hinted(&self, hint: &mut OdHint, index: u16, sub: u8) -> Option<&Entry> {
        let (i, k) = self.locate(hint, index, sub)?;
        Some(&self.objects[i].entries[k])
    }

    /// Where `index:sub` is (object and entry position): at `hint` if it still names that
    /// entry, else searched, and `hint` updated.
    fn locate(&self, hint: &mut OdHint, index: u16, sub: u8) -> Option<(usize, usize)> {
        let (i, k) = (hint.object as usize, hint.entry as usize);
        let valid = self
            .objects
            .get(i)
            .filter(|o| o.index == index)
            .and_then(|o| o.entries.get(k))
            .is_some_and(|e| e.sub == sub);
        if valid {
            return Some((i, k));
        }
        let i = self.position(index)?;
        let k = self.objects[i]
            .entries
            .binary_search_by_key(&sub, |e| e.sub)
            .ok()?;
        *hint = OdHint {
            object: i as u32,
            entry: k as u32,
        };
        Some((i, k))
    }

    /// The entry `index:sub`, writable.
    pub fn entry_mut(&mut self, index: u16, sub: u8) -> Option<&mut Entry> {
        self.object_mut(index)?.entry_mut(sub)
    }

    /// The integer value of `index:sub` (device side; `None` if it does not exist).
    pub fn get(&self, index: u16, sub: u8) -> Option<i64> {
        self.entry(index, sub).map(Entry::int)
    }

    /// The integer value of `index:sub`, or `default` if it does not exist.
    pub fn get_or(&self, index: u16, sub: u8, default: i64) -> i64 {
        self.get(index, sub).unwrap_or(default)
    }

    /// Set the integer value of `index:sub` (device side: no access or range checks);
    /// false if the entry does not exist.
    pub fn set(&mut self, index: u16, sub: u8, v: i64) -> bool {
        self.set_hinted(&mut OdHint::default(), index, sub, v)
    }

    /// [`Od::set`] for a device model that writes the same entries again and again: `hint`
    /// remembers where the entry was found and is checked before it is used (a dictionary
    /// that changed shape since is searched again).
    pub fn set_hinted(&mut self, hint: &mut OdHint, index: u16, sub: u8, v: i64) -> bool {
        // One lookup of the object for both the comparison and the write.
        let Some((i, k)) = self.locate(hint, index, sub) else {
            return false;
        };
        if self.objects[i].entries[k].int() != v {
            self.touch();
            Arc::make_mut(&mut self.objects)[i].entries[k].set_int(v);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static T: &[ObjSpec] = &[
        crate::od_var!(0x6041, "Statusword", UNSIGNED16, access::RO, 0x40),
        crate::od_var!(0x6064, "Position", INTEGER32, access::RO, -5),
    ];

    #[test]
    fn integers_keep_width_and_sign() {
        let mut od = Od::new();
        od.insert_specs(T);
        assert_eq!(od.get(0x6064, 0), Some(-5));
        assert_eq!(od.entry(0x6064, 0).unwrap().value, [0xFB, 0xFF, 0xFF, 0xFF]);
        assert!(od.set(0x6041, 0, 0x1_0237));
        assert_eq!(od.get(0x6041, 0), Some(0x0237), "truncated to 16 bits");
        assert!(!od.set(0x6042, 0, 1));
        assert_eq!(decode_int(&[0x0F], 4, true), -1);
        assert_eq!(bits_of(DataType(0x0032)), 3);
    }

    #[test]
    fn lookups_find_every_object_whatever_the_insertion_order() {
        static U: &[ObjSpec] = &[
            crate::od_var!(0xFFFF, "Last", UNSIGNED8, access::RO, 1),
            crate::od_var!(0x0000, "First", UNSIGNED8, access::RO, 2),
            crate::od_var!(0x60FF, "Target velocity", INTEGER32, access::RW, 3),
            crate::od_var!(0x6100, "Next high byte", UNSIGNED8, access::RO, 4),
            crate::od_var!(0x1000, "Device type", UNSIGNED32, access::RO, 5),
        ];
        let mut od = Od::new();
        assert_eq!(od.get(0x6041, 0), None, "empty");
        od.insert_specs(U);
        od.insert_specs(T);
        od.insert_specs(T);
        let found: Vec<i64> = [0xFFFF, 0x0000, 0x60FF, 0x6100, 0x1000, 0x6041, 0x6064]
            .iter()
            .map(|&i| od.get(i, 0).unwrap())
            .collect();
        assert_eq!(found, [1, 2, 3, 4, 5, 0x40, -5]);
        for missing in [0x0001, 0x60FE, 0x6101, 0xFFFE, 0x6000] {
            assert_eq!(od.get(missing, 0), None, "{missing:#06x}");
        }
        assert_eq!(od.objects().len(), 7);
    }
}
