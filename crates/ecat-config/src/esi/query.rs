//! Questions the simulator and the master ask of a [`Device`]: which PDOs a SyncManager
//! carries by default and how many bytes that makes, a PDO by index, and the name of an
//! object or PDO entry (from the dictionary, else from the PDO entries).

use super::{Device, Pdo, SmKind};

impl Device {
    /// The PDO with `index`.
    pub fn pdo(&self, index: u16) -> Option<&Pdo> {
        self.pdos.iter().find(|p| p.index == index)
    }

    /// The PDOs assigned to SyncManager `sm` by default, in file order (RxPDOs before
    /// TxPDOs).
    pub fn default_pdos(&self, sm: u8) -> impl Iterator<Item = &Pdo> {
        self.pdos.iter().filter(move |p| p.sm == Some(sm))
    }

    /// Size in bytes of process-data SyncManager `sm` with its default PDO assignment
    /// (the bits of its PDOs rounded up); `DefaultSize` when no PDO names it; `None` for a
    /// SyncManager that does not exist or is a mailbox.
    pub fn default_sm_bytes(&self, sm: u8) -> Option<u16> {
        let s = self.sms.get(sm as usize)?;
        if matches!(s.kind, SmKind::MBoxOut | SmKind::MBoxIn) {
            return None;
        }
        let mut any = false;
        let bits: u32 = self
            .default_pdos(sm)
            .inspect(|_| any = true)
            .map(Pdo::bit_len)
            .sum();
        if !any {
            return Some(s.default_size.unwrap_or(0));
        }
        Some(u16::try_from(bits.div_ceil(8)).unwrap_or(u16::MAX))
    }

    /// The name of object `index` sub-index `subindex`: the dictionary's sub-item (or
    /// object, for sub-index 0 of a Var) name, else the name of a PDO entry mapping it.
    pub fn object_name(&self, index: u16, subindex: u8) -> Option<&str> {
        if let Some(o) = self.dictionary.as_ref().and_then(|d| d.object(index)) {
            if let Some(s) = o.sub_item(subindex) {
                return Some(&s.name);
            }
            if o.sub_items.is_empty() && subindex == 0 {
                return Some(&o.name);
            }
        }
        self.pdos
            .iter()
            .flat_map(|p| p.entries.iter())
            .find(|e| e.index == index && e.subindex == subindex && !e.is_gap())
            .map(|e| e.name.as_str())
    }
}
